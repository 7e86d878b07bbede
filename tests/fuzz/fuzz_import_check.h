/*
 * fuzz_import_check.h - what every importer fuzz target asserts about one input, so the
 * three targets (nccl-tests text, nccl-tests JSON, CSV) differ only in the format they ask for.
 *
 * Each input is imported twice through cct_import_buffer(): once with nothing given on the
 * command line (every dimension from the input) and once with the flags a user adds to an
 * anonymous log (--coll allreduce --ranks 2 --nodes 1), so both branches of every "from
 * the input or from opts" rule are explored.  A refusal must carry a message starting with
 * "fuzz:LINE:COL: " (the promise of docs/bad-input.md; out of memory excepted) and leave
 * the result exactly as it was; an accepted input must yield points whose fields are in
 * range (names, sizes, finite non-negative times), so no garbage reaches the store.
 * Violations abort(), which libFuzzer reports as a crash with the input saved.
 */
#ifndef FUZZ_IMPORT_CHECK_H
#define FUZZ_IMPORT_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import.h"

static void fuzz_check_point(const cct_import_result *r, size_t i)
{
    const cct_point *p = &r->points[i];
    const cct_config *c = &p->cfg;
    if (c->coll < 0 || c->coll >= CCT_NUM_COLLS || c->ranks < 1 || c->nodes < 1 ||
        c->nodes > c->ranks || c->dtype < 0 || c->dtype >= CCT_NUM_DTYPES)
        abort();
    if (c->algo != CCT_DEFAULT && (c->algo < 0 || c->algo >= CCT_NUM_ALGOS))
        abort();
    if (c->proto != CCT_DEFAULT && (c->proto < 0 || c->proto >= CCT_NUM_PROTOS))
        abort();
    if (c->channels < 0 || c->channels > 64)
        abort();
    /* nccl-tests reports one time per row; the other statistics are NaN unless the input
     * had per-iteration timings, but whatever is present must be a real time */
    double t = p->stats.median_us;
    if (p->status == CCT_POINT_OK && !(isfinite(t) && t >= 0))
        abort();
    /* what the store can hold, and no time beyond any measurement (cct_import_check.h) */
    if (p->bytes > (uint64_t)INT64_MAX || (isfinite(t) && t > 1e12))
        abort();
    if (r->meta[i].line == 0 || r->meta[i].first_sample + r->meta[i].n_samples > r->n_samples)
        abort();
    for (size_t s = 0; s < r->meta[i].n_samples; s++) {
        double v = r->samples[r->meta[i].first_sample + s];
        if (!isfinite(v) || v < 0)
            abort();
    }
}

static void fuzz_check_message(const cct_error *err, cct_status rc)
{
    if (rc == CCT_ENOMEM)
        return;
    unsigned line = 0, col = 0;
    if (strncmp(err->msg, "fuzz:", 5) != 0 || sscanf(err->msg + 5, "%u:%u: ", &line, &col) != 2 ||
        line == 0 || col == 0) {
        fprintf(stderr, "message without NAME:LINE:COL: '%s'\n", err->msg);
        abort();
    }
}

static void fuzz_import_one(const uint8_t *data, size_t size, int format,
                            const cct_import_opts *opts)
{
    cct_import_result r;
    cct_import_result_init(&r);
    cct_error err;
    cct_status rc = cct_import_buffer((const char *)data, size, "fuzz", format, opts, &r, &err);
    if (rc != CCT_OK) {
        fuzz_check_message(&err, rc);
        if (r.n_points != 0 || r.n_samples != 0 || r.runs != 0 || r.name != NULL)
            abort(); /* a refused input must leave the result untouched */
    } else {
        if (r.n_points == 0 || r.format != format)
            abort(); /* accepting an input that yields nothing would hide a bad file */
        for (size_t i = 0; i < r.n_points; i++)
            fuzz_check_point(&r, i);
        /* the duplicate check across two copies of one input: every point of the second
         * is identical to one of the first, so it must succeed and mark them all */
        size_t dups = 0;
        cct_import_result two[2] = {r, r};
        rc = cct_import_check_duplicates(two, 2, &dups, &err);
        if ((rc != CCT_OK && rc != CCT_ENOMEM) || (rc == CCT_OK && dups < r.n_points))
            abort();
        for (size_t i = 0; i < r.n_points; i++)
            r.meta[i].duplicate = false;
    }
    cct_import_result_destroy(&r);
}

/* Both option sets described above. */
static inline void fuzz_import(const uint8_t *data, size_t size, int format)
{
    cct_import_opts opts;
    cct_import_opts_init(&opts);
    fuzz_import_one(data, size, format, &opts);
    if (format != CCT_IMPORT_CSV) {
        /* --coll is refused for CSV (each row names its collective) */
        opts.coll = CCT_COLL_ALLREDUCE;
    }
    opts.ranks = 2;
    opts.nodes = 1;
    fuzz_import_one(data, size, format, &opts);
}

#endif
