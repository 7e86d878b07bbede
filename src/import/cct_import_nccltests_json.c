/*
 * cct_import_nccltests_json.c - the importer for nccl-tests' JSON output (-J FILE), file
 * versions 1 (nccl-tests 2.17) to 3 (2.19), see cct_import_nccltests.h.
 *
 * The file records what the text log only hints at: the command line ("args", whose
 * first word names the program and so the collective, and whose -u gives the buffer
 * misalignment), rank 0's environment ("env": NCCL_ALGO=..., NCCL_PROTO=...), the NCCL
 * version, the device list (one entry per process: its first rank), and per-row results
 * with optional per-iteration statistics and times.  Everything is filled into a
 * cct_nt_run and resolved by the rules the text importer uses, so the same run imports to
 * the same points in either format; per-iteration times become the points' raw samples.
 * Members ccltune does not use are ignored; a member it uses with the wrong type or value
 * is an error at its position.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_nccltests.h"
#include "cct_json.h"
#include "cct_import_check.h"
#include "cct_nccltests_run.h"
#include "cct_table.h"

typedef struct jctx {
    const cct_json_doc *doc;
    const char *name;
    cct_error *err;
} jctx;

static cct_status bad(jctx *c, const cct_json_node *n, const char *what, const char *expected)
{
    return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col, "%s: expected %s, found %s",
                        what, expected, cct_json_type_name(n->type));
}

static cct_status missing(jctx *c, const cct_json_node *n, const char *what, const char *key)
{
    return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col, "%s has no \"%s\"", what,
                        key);
}

static cct_status get_double(jctx *c, const cct_json_node *n, const char *what, double *out)
{
    if (n->type != CCT_JSON_NUMBER && n->type != CCT_JSON_STRING)
        return bad(c, n, what, "a number");
    const char *t = cct_json_text(c->doc, n);
    if (!cct_parse_double(t, out))
        return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col,
                            "%s: '%.32s' is not a finite number", what, t);
    if (*out < 0)
        return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col, "%s: negative (%.32s)",
                            what, t);
    return CCT_OK;
}

static cct_status get_long(jctx *c, const cct_json_node *n, const char *what, long min, long max,
                           long *out)
{
    if (n->type != CCT_JSON_NUMBER)
        return bad(c, n, what, "a whole number");
    const char *t = cct_json_text(c->doc, n);
    if (!cct_parse_long(t, min, max, out))
        return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col,
                            "%s: '%.32s' is not a whole number from %ld to %ld", what, t, min, max);
    return CCT_OK;
}

static cct_status get_u64(jctx *c, const cct_json_node *n, const char *what, uint64_t *out)
{
    if (n->type != CCT_JSON_NUMBER)
        return bad(c, n, what, "a whole number");
    const char *t = cct_json_text(c->doc, n);
    if (cct_parse_u64(t, out))
        return CCT_OK;
    return cct_error_at(c->err, CCT_EINVAL, c->name, n->line, n->col,
                        t[0] == '-' ? "%s: negative (%.32s)" : "%s: '%.32s' is not a whole number",
                        what, t);
}

/* "args": the program (collective) and -u/--unalign. */
static cct_status read_args(jctx *c, const cct_json_node *args, cct_nt_run *run)
{
    if (args->type != CCT_JSON_ARRAY)
        return bad(c, args, "args", "an array");
    const cct_json_node *a = cct_json_first(c->doc, args);
    if (!a)
        return CCT_OK;
    if (a->type != CCT_JSON_STRING)
        return bad(c, a, "args[0]", "a string");
    cct_status rc =
        cct_nt_run_set_program(run, cct_json_text(c->doc, a), c->name, a->line, a->col, c->err);
    for (a = cct_json_next(c->doc, a); a && rc == CCT_OK; a = cct_json_next(c->doc, a)) {
        if (a->type != CCT_JSON_STRING)
            return bad(c, a, "args", "strings");
        const char *t = cct_json_text(c->doc, a), *v = NULL;
        const cct_json_node *at = a;
        if (strcmp(t, "-u") == 0 || strcmp(t, "--unalign") == 0) {
            at = cct_json_next(c->doc, a);
            if (!at || at->type != CCT_JSON_STRING)
                return cct_error_at(c->err, CCT_EINVAL, c->name, a->line, a->col,
                                    "%s without a value", t);
            v = cct_json_text(c->doc, at);
            a = at;
        } else if (strncmp(t, "--unalign=", 10) == 0) {
            v = t + 10;
        } else if (strncmp(t, "-u", 2) == 0) {
            v = t + 2;
        }
        if (v && !cct_parse_long(v, 0, INT32_MAX, &run->unalign))
            return cct_error_at(c->err, CCT_EINVAL, c->name, at->line, at->col,
                                "unalign '%.32s' is not a non-negative number", v);
    }
    return rc;
}

static cct_status read_env(jctx *c, const cct_json_node *env, cct_nt_run *run)
{
    if (env->type != CCT_JSON_ARRAY)
        return bad(c, env, "env", "an array");
    for (const cct_json_node *e = cct_json_first(c->doc, env); e; e = cct_json_next(c->doc, e)) {
        if (e->type != CCT_JSON_STRING)
            return bad(c, e, "env", "strings");
        const char *t = cct_json_text(c->doc, e);
        const char *eq = strchr(t, '=');
        char key[64];
        size_t n = eq ? (size_t)(eq - t) : 0;
        if (!eq || n >= sizeof key || strncmp(t, "NCCL_", 5) != 0)
            continue;
        memcpy(key, t, n);
        key[n] = '\0';
        cct_status rc =
            cct_nccl_env_record(&run->env, key, eq + 1, c->name, e->line, e->col, c->err);
        if (rc != CCT_OK)
            return rc;
    }
    return CCT_OK;
}

/* "config": threads, GPUs, iterations, and "devices" (one entry per process). */
static cct_status read_config(jctx *c, const cct_json_node *cfg, cct_nt_run *run)
{
    if (cfg->type != CCT_JSON_OBJECT)
        return bad(c, cfg, "config", "an object");
    const cct_json_node *n;
    long v;
    cct_status rc = CCT_OK;
    if ((n = cct_json_member(c->doc, cfg, "nthreads")) &&
        (rc = get_long(c, n, "config.nthreads", 1, 4096, &v)) == CCT_OK)
        run->threads = (int)v;
    if (rc == CCT_OK && (n = cct_json_member(c->doc, cfg, "ngpus")) &&
        (rc = get_long(c, n, "config.ngpus", 1, 4096, &v)) == CCT_OK)
        run->gpus = (int)v;
    if (rc == CCT_OK && (n = cct_json_member(c->doc, cfg, "iterations")) &&
        (rc = get_long(c, n, "config.iterations", 0, INT32_MAX, &v)) == CCT_OK)
        run->iters = (int)v;
    const cct_json_node *devs = rc == CCT_OK ? cct_json_member(c->doc, cfg, "devices") : NULL;
    if (!devs)
        return rc;
    if (devs->type != CCT_JSON_ARRAY)
        return bad(c, devs, "config.devices", "an array");
    if (!run->threads || !run->gpus)
        return missing(c, cfg, "config with devices", run->threads ? "ngpus" : "nthreads");
    long per_process = (long)run->threads * run->gpus;
    if (per_process > 65536)
        return cct_error_at(c->err, CCT_EINVAL, c->name, cfg->line, cfg->col,
                            "%ld ranks per process (nthreads x ngpus) is not a real run",
                            per_process);
    run->ranks_line = devs->line;
    run->ranks_col = devs->col;
    for (const cct_json_node *d = cct_json_first(c->doc, devs); d && rc == CCT_OK;
         d = cct_json_next(c->doc, d)) {
        if (d->type != CCT_JSON_OBJECT)
            return bad(c, d, "config.devices", "objects");
        const cct_json_node *r = cct_json_member(c->doc, d, "rank");
        const cct_json_node *h = cct_json_member(c->doc, d, "hostname");
        const cct_json_node *g = cct_json_member(c->doc, d, "device_info");
        const cct_json_node *bus = cct_json_member(c->doc, d, "device_hex");
        /* one entry stands for all ranks of its process, so a bus id says nothing about
         * ranks sharing a GPU unless each process has one GPU */
        const char *bus_id = per_process == 1 && bus && bus->type == CCT_JSON_STRING
                                 ? cct_json_text(c->doc, bus)
                                 : "";
        if (!r || !h)
            return missing(c, d, "a device", r ? "hostname" : "rank");
        if (h->type != CCT_JSON_STRING)
            return bad(c, h, "hostname", "a string");
        long first;
        rc = get_long(c, r, "rank", 0, CCT_TABLE_MAX_RANKS - per_process, &first);
        /* nccl-tests records each process's first device: its ranks follow it */
        for (long k = 0; k < per_process && rc == CCT_OK; k++)
            rc = cct_nt_run_add_rank(run, (int)(first + k), cct_json_text(c->doc, h), bus_id,
                                     c->err);
        if (rc == CCT_OK && g && g->type == CCT_JSON_STRING && !run->gpu[0])
            snprintf(run->gpu, sizeof run->gpu, "%s", cct_json_text(c->doc, g));
        if (run->n_rank_ids > CCT_TABLE_MAX_RANKS)
            return cct_error_at(c->err, CCT_EINVAL, c->name, d->line, d->col, "too many ranks");
    }
    return rc;
}

/* "out_of_place"/"in_place" and their "_per_iter" statistics. */
static cct_status read_side(jctx *c, const cct_json_node *res, const char *key, cct_nt_side *s)
{
    *s = (cct_nt_side){
        .algbw = NAN, .busbw = NAN, .min_us = NAN, .max_us = NAN, .p95_us = NAN, .cv = NAN};
    const cct_json_node *o = cct_json_member(c->doc, res, key);
    if (!o)
        return missing(c, res, "a result", key);
    if (o->type == CCT_JSON_NULL)
        return CCT_OK; /* nccl-tests' trace replay times in-place only */
    if (o->type != CCT_JSON_OBJECT)
        return bad(c, o, key, "an object or null");
    s->present = true;
    const cct_json_node *t = cct_json_member(c->doc, o, "time");
    if (!t && cct_json_member(c->doc, o, "cpu_time"))
        return cct_error_at(c->err, CCT_EUNSUPPORTED, c->name, o->line, o->col,
                            "this log reports CPU time (nccl-tests -C 1), not the time of the "
                            "collective: rerun without -C");
    if (!t)
        return missing(c, o, key, "time");
    cct_status rc = get_double(c, t, "time", &s->time_us);
    s->time_line = t->line;
    s->time_col = t->col;
    s->time_res = cct_import_resolution(cct_json_text(c->doc, t));
    if (rc == CCT_OK && s->time_us == 0)
        return cct_error_at(c->err, CCT_EINVAL, c->name, t->line, t->col,
                            "time is 0: nothing was timed");
    static const char *const bw_keys[] = {"alg_bw", "bus_bw"};
    double *bw[] = {&s->algbw, &s->busbw};
    for (int k = 0; k < 2 && rc == CCT_OK; k++) {
        const cct_json_node *b = cct_json_member(c->doc, o, bw_keys[k]);
        if (b)
            rc = get_double(c, b, bw_keys[k], bw[k]);
        if (b && k == 0)
            s->algbw_res = cct_import_resolution(cct_json_text(c->doc, b));
    }
    const cct_json_node *w = cct_json_member(c->doc, o, "nwrong");
    double wrong;
    if (rc == CCT_OK && w && w->type != CCT_JSON_NULL &&
        (rc = get_double(c, w, "nwrong", &wrong)) == CCT_OK) {
        if (wrong != floor(wrong) || wrong >= 9.2e18)
            return cct_error_at(c->err, CCT_EINVAL, c->name, w->line, w->col,
                                "nwrong is not a count of elements");
        s->checked = true;
        s->wrong = (uint64_t)wrong;
    }
    return rc;
}

static cct_status read_per_iter(jctx *c, const cct_json_node *res, const char *key, cct_nt_side *s)
{
    const cct_json_node *o = cct_json_member(c->doc, res, key);
    if (!o || o->type == CCT_JSON_NULL || !s->present)
        return CCT_OK;
    if (o->type != CCT_JSON_OBJECT)
        return bad(c, o, key, "an object");
    static const char *const keys[] = {"min_us", "max_us", "p95_us", "cv_pct"};
    double *dst[] = {&s->min_us, &s->max_us, &s->p95_us, &s->cv};
    cct_status rc = CCT_OK;
    for (int k = 0; k < 4 && rc == CCT_OK; k++) {
        const cct_json_node *n = cct_json_member(c->doc, o, keys[k]);
        if (n)
            rc = get_double(c, n, keys[k], dst[k]);
    }
    if (rc == CCT_OK && !isnan(s->cv))
        s->cv /= 100.0;
    long skip = 0;
    const cct_json_node *n = cct_json_member(c->doc, o, "skipped_iterations");
    if (rc == CCT_OK && n)
        rc = get_long(c, n, "skipped_iterations", 0, INT32_MAX, &skip);
    const cct_json_node *times = cct_json_member(c->doc, o, "times_us");
    if (rc != CCT_OK || !times)
        return rc;
    if (times->type != CCT_JSON_ARRAY)
        return bad(c, times, "times_us", "an array");
    if (times->count > (size_t)INT32_MAX)
        return cct_error_at(c->err, CCT_EINVAL, c->name, times->line, times->col, "too many times");
    size_t keep = times->count > (size_t)skip ? times->count - (size_t)skip : 0;
    if (keep == 0)
        return CCT_OK;
    s->samples = malloc(keep * sizeof *s->samples);
    if (!s->samples)
        return cct_error_set(c->err, CCT_ENOMEM, "out of memory");
    size_t i = 0, k = 0;
    for (const cct_json_node *t = cct_json_first(c->doc, times); t && rc == CCT_OK;
         t = cct_json_next(c->doc, t), i++) {
        double v;
        rc = get_double(c, t, "times_us", &v);
        if (rc == CCT_OK && i >= (size_t)skip)
            s->samples[k++] = v;
    }
    s->n_samples = k;
    return rc;
}

static cct_status read_result(jctx *c, const cct_json_node *res, cct_nt_run *run, char *redop,
                              unsigned *redop_line)
{
    if (res->type != CCT_JSON_OBJECT)
        return bad(c, res, "results", "objects");
    cct_nt_row row = {.line = res->line, .col = res->col};
    const cct_json_node *size = cct_json_member(c->doc, res, "size");
    const cct_json_node *type = cct_json_member(c->doc, res, "type");
    if (!size || !type)
        return missing(c, res, "a result", size ? "type" : "size");
    cct_status rc = get_u64(c, size, "size", &row.size);
    if (rc != CCT_OK)
        return rc;
    row.size_line = size->line;
    row.size_col = size->col;
    const cct_json_node *count = cct_json_member(c->doc, res, "count");
    if (count && (rc = get_u64(c, count, "count", &row.count)) != CCT_OK)
        return rc;
    if (count) {
        row.has_count = true;
        row.count_line = count->line;
        row.count_col = count->col;
    }
    if (type->type != CCT_JSON_STRING)
        return bad(c, type, "type", "a string");
    row.dtype = cct_dtype_from_name(cct_json_text(c->doc, type));
    if (row.dtype < 0)
        return cct_error_at(c->err, CCT_EINVAL, c->name, type->line, type->col,
                            "data type '%.32s' is not one ccltune records (float, bfloat16)",
                            cct_json_text(c->doc, type));
    const cct_json_node *op = cct_json_member(c->doc, res, "redop");
    if (op && op->type == CCT_JSON_STRING) {
        const char *t = cct_json_text(c->doc, op);
        if (!redop[0]) {
            snprintf(redop, 16, "%.15s", t);
            *redop_line = op->line;
        } else if (strncmp(redop, t, 15) != 0) {
            return cct_error_at(c->err, CCT_EINVAL, c->name, op->line, op->col,
                                "this run mixes reduction operations ('%s' at line %u, '%.15s' "
                                "here); ccltune does not record the operation, so their points "
                                "would collide",
                                redop, *redop_line, t);
        }
    }
    const cct_json_node *it = cct_json_member(c->doc, res, "actual_iterations");
    long iters = 0;
    if (it && (rc = get_long(c, it, "actual_iterations", 0, INT32_MAX, &iters)) != CCT_OK)
        return rc;
    row.iters = (int)iters;
    rc = read_side(c, res, "out_of_place", &row.side[0]);
    if (rc == CCT_OK)
        rc = read_side(c, res, "in_place", &row.side[1]);
    if (rc == CCT_OK)
        rc = read_per_iter(c, res, "out_of_place_per_iter", &row.side[0]);
    if (rc == CCT_OK)
        rc = read_per_iter(c, res, "in_place_per_iter", &row.side[1]);
    if (rc == CCT_OK && !row.side[0].present && !row.side[1].present)
        rc = cct_error_at(c->err, CCT_EINVAL, c->name, res->line, res->col,
                          "a result with neither out-of-place nor in-place timing");
    if (rc != CCT_OK) {
        free(row.side[0].samples);
        free(row.side[1].samples);
        return rc;
    }
    return cct_nt_run_add_row(run, &row, c->err);
}

static cct_status read_doc(jctx *c, const cct_json_node *root, cct_nt_run *run)
{
    if (root->type != CCT_JSON_OBJECT)
        return cct_error_at(c->err, CCT_EINVAL, c->name, root->line, root->col,
                            "not an nccl-tests JSON log: the top level is not an object");
    const cct_json_node *ver = cct_json_member(c->doc, root, "version");
    const cct_json_node *results = cct_json_member(c->doc, root, "results");
    if (!ver || !results)
        return cct_error_at(c->err, CCT_EINVAL, c->name, root->line, root->col,
                            "not an nccl-tests JSON log: no \"%s\"", ver ? "results" : "version");
    long version, code;
    cct_status rc = get_long(c, ver, "version", 0, 1000000, &version);
    if (rc == CCT_OK && (version < 1 || version > 3))
        return cct_error_at(c->err, CCT_EUNSUPPORTED, c->name, ver->line, ver->col,
                            "nccl-tests JSON version %ld; ccltune reads versions 1 to 3", version);
    const cct_json_node *n;
    if (rc == CCT_OK && (n = cct_json_member(c->doc, root, "args")))
        rc = read_args(c, n, run);
    if (rc == CCT_OK && (n = cct_json_member(c->doc, root, "env")))
        rc = read_env(c, n, run);
    if (rc == CCT_OK && (n = cct_json_member(c->doc, root, "nccl_version")) &&
        (rc = get_long(c, n, "nccl_version", 0, 99999999, &code)) == CCT_OK)
        cct_nt_version_from_code(code, run->nccl_version, sizeof run->nccl_version);
    if (rc == CCT_OK && (n = cct_json_member(c->doc, root, "config")))
        rc = read_config(c, n, run);
    if (rc != CCT_OK)
        return rc;
    if (results->type != CCT_JSON_ARRAY)
        return bad(c, results, "results", "an array");
    run->line = results->line;
    run->col = results->col;
    char redop[16] = "";
    unsigned redop_line = 0;
    for (const cct_json_node *r = cct_json_first(c->doc, results); r && rc == CCT_OK;
         r = cct_json_next(c->doc, r))
        rc = read_result(c, r, run, redop, &redop_line);
    return rc;
}

cct_status cct_import_nccltests_json(const char *data, size_t len, const char *name,
                                     const cct_import_opts *opts, cct_import_result *result,
                                     cct_error *err)
{
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_status rc = cct_json_parse(&doc, data, len, name, err);
    if (rc != CCT_OK)
        return rc;
    cct_nt_run run;
    cct_nt_run_init(&run, 1);
    jctx c = {&doc, name, err};
    rc = read_doc(&c, cct_json_root(&doc), &run);
    if (rc == CCT_OK)
        rc = cct_nt_run_finish(&run, name, opts, result, err);
    cct_nt_run_destroy(&run);
    cct_json_destroy(&doc);
    return rc;
}
