/*
 * cct_import.c - what every importer shares (see cct_import.h): the result container,
 * format detection and dispatch, reading a file with a size limit, strict number parsing,
 * and the duplicate check across files.
 *
 * The duplicate check sorts references to all points by their store key (configuration,
 * size, placement) and compares neighbours, so it costs O(n log n) however many files an
 * invocation names.  Identical duplicates are tolerated (the same file given twice) and
 * marked so they are stored once; differing ones are an error, because the store keeps one
 * value per key and picking one would hide a measurement.
 */
#include "cct_import.h"
#include "cct_grow.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_csv.h"
#include "cct_import_nccltests.h"

void cct_import_opts_init(cct_import_opts *opts)
{
    opts->coll = CCT_IMPORT_FROM_INPUT;
    opts->algo = CCT_IMPORT_FROM_INPUT;
    opts->proto = CCT_IMPORT_FROM_INPUT;
    opts->ranks = CCT_IMPORT_FROM_INPUT;
    opts->nodes = CCT_IMPORT_FROM_INPUT;
}

void cct_import_result_init(cct_import_result *r)
{
    memset(r, 0, sizeof *r);
}

void cct_import_result_destroy(cct_import_result *r)
{
    if (!r)
        return;
    free(r->name);
    free(r->points);
    free(r->meta);
    free(r->samples);
    cct_import_result_init(r);
}

cct_status cct_import_add_point(cct_import_result *r, const cct_point *point, unsigned line,
                                unsigned col, const double *samples, size_t n_samples,
                                cct_error *err)
{
    size_t cap = r->cap_points;
    if (r->n_points == SIZE_MAX ||
        !cct_grow((void **)&r->points, &cap, r->n_points + 1, sizeof *r->points))
        return cct_error_set(err, CCT_ENOMEM, "out of memory after %zu points", r->n_points);
    size_t mcap = r->cap_points;
    if (!cct_grow((void **)&r->meta, &mcap, r->n_points + 1, sizeof *r->meta))
        return cct_error_set(err, CCT_ENOMEM, "out of memory after %zu points", r->n_points);
    r->cap_points = cap < mcap ? cap : mcap;
    if (n_samples > SIZE_MAX - r->n_samples ||
        !cct_grow((void **)&r->samples, &r->cap_samples, r->n_samples + n_samples, sizeof(double)))
        return cct_error_set(err, CCT_ENOMEM, "out of memory after %zu samples", r->n_samples);
    if (n_samples)
        memcpy(r->samples + r->n_samples, samples, n_samples * sizeof(double));
    r->points[r->n_points] = *point;
    r->meta[r->n_points] = (cct_import_meta){.line = line,
                                             .col = col,
                                             .duplicate = false,
                                             .first_sample = r->n_samples,
                                             .n_samples = n_samples};
    r->n_points++;
    r->n_samples += n_samples;
    return CCT_OK;
}

void cct_import_truncate(cct_import_result *r, size_t n_points, size_t n_samples)
{
    if (n_points < r->n_points)
        r->n_points = n_points;
    if (n_samples < r->n_samples)
        r->n_samples = n_samples;
}

static const char *const format_names[] = {"auto", "nccl-tests", "nccl-tests-json", "csv",
                                           "recording"};

const char *cct_import_format_name(int format)
{
    if (format < 0 || format >= (int)(sizeof format_names / sizeof format_names[0]))
        return "?";
    return format_names[format];
}

int cct_import_format_from_name(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof format_names / sizeof format_names[0]); i++)
        if (strcmp(name, format_names[i]) == 0)
            return i;
    return -1;
}

int cct_import_detect(const char *data, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* UTF-8 byte order mark, as spreadsheets write it */
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n'))
        i++;
    if (i < len && data[i] == '{')
        return CCT_IMPORT_NCCLTESTS_JSON;
    /* the first line of a CSV names its columns; nccl-tests never prints these words
     * separated by commas */
    size_t end = i;
    while (end < len && data[end] != '\n' && end - i < 4096)
        end++;
    bool comma = memchr(data + i, ',', end - i) != NULL;
    bool coll = memmem(data + i, end - i, "collective", 10) != NULL;
    bool size = memmem(data + i, end - i, "size_bytes", 10) != NULL;
    if (comma && coll && size)
        return CCT_IMPORT_CSV;
    return CCT_IMPORT_NCCLTESTS;
}

cct_status cct_import_buffer(const char *data, size_t len, const char *name, int format,
                             const cct_import_opts *opts, cct_import_result *result, cct_error *err)
{
    cct_import_opts defaults;
    if (!opts) {
        cct_import_opts_init(&defaults);
        opts = &defaults;
    }
    if (!name)
        name = "<input>";
    if (len > CCT_READ_MAX_BYTES)
        return cct_error_at(err, CCT_EINVAL, name, 0, 0, "larger than %zu MiB",
                            CCT_READ_MAX_BYTES >> 20);
    char *copy = strdup(name);
    if (!copy)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    /* on failure the result goes back to what it was: keep a copy of its scalars */
    cct_import_result before = *result;
    result->name = copy;
    if (format == CCT_IMPORT_AUTO)
        format = cct_import_detect(data, len);
    cct_status rc;
    switch (format) {
    case CCT_IMPORT_NCCLTESTS:
        rc = cct_import_nccltests_text(data, len, name, opts, result, err);
        break;
    case CCT_IMPORT_NCCLTESTS_JSON:
        rc = cct_import_nccltests_json(data, len, name, opts, result, err);
        break;
    case CCT_IMPORT_CSV:
        rc = cct_import_csv(data, len, name, opts, result, err);
        break;
    case CCT_IMPORT_RECORDING: /* merged over every rank's file: cct_import_recordings */
        rc = cct_error_set(err, CCT_EINVAL,
                           "%s: recordings are imported together "
                           "(cct_import_recordings), not one by one",
                           name);
        break;
    default:
        rc = cct_error_set(err, CCT_EINVAL, "unknown import format %d", format);
    }
    if (rc == CCT_OK) {
        result->format = format;
        rc = cct_import_check_duplicates(result, 1, NULL, err);
    }
    if (rc != CCT_OK) {
        cct_import_truncate(result, before.n_points, before.n_samples);
        free(result->name);
        result->name = before.name;
        result->format = before.format;
        result->runs = before.runs;
        result->ranks_per_gpu = before.ranks_per_gpu;
        memcpy(result->gpu, before.gpu, sizeof result->gpu);
        memcpy(result->host, before.host, sizeof result->host);
        memcpy(result->nccl_version, before.nccl_version, sizeof result->nccl_version);
    } else {
        free(before.name);
    }
    return rc;
}

cct_status cct_import_file(const char *path, int format, const cct_import_opts *opts,
                           cct_import_result *result, cct_error *err)
{
    char *data;
    size_t len;
    cct_status rc = cct_read_file(path, &data, &len, err);
    if (rc != CCT_OK)
        return rc;
    rc = cct_import_buffer(data, len, path, format, opts, result, err);
    free(data);
    return rc;
}

/* ---- duplicates ---- */

typedef struct point_ref {
    const cct_point *p;
    size_t result, index;
} point_ref;

static int cmp_int(long long a, long long b)
{
    return (a > b) - (a < b);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* Order by the store's key; ties by input order so the earliest point comes first. */
static int cmp_ref(const void *va, const void *vb)
{
    const point_ref *ra = va, *rb = vb;
    const cct_config *a = &ra->p->cfg, *b = &rb->p->cfg;
    int c;
    if ((c = cmp_int(a->coll, b->coll)) || (c = cmp_int(a->algo, b->algo)) ||
        (c = cmp_int(a->proto, b->proto)) || (c = cmp_int(a->channels, b->channels)) ||
        (c = cmp_u64(a->buffsize, b->buffsize)) || (c = cmp_u64(a->ll_buffsize, b->ll_buffsize)) ||
        (c = cmp_u64(a->ll128_buffsize, b->ll128_buffsize)) || (c = cmp_int(a->align, b->align)) ||
        (c = cmp_int(a->ranks, b->ranks)) || (c = cmp_int(a->nodes, b->nodes)) ||
        (c = cmp_int(a->dtype, b->dtype)) || (c = cmp_u64(ra->p->bytes, rb->p->bytes)) ||
        (c = cmp_int(ra->p->in_place, rb->p->in_place)))
        return c;
    if ((c = cmp_u64(ra->result, rb->result)))
        return c;
    return cmp_u64(ra->index, rb->index);
}

static bool same_key(const point_ref *ra, const point_ref *rb)
{
    point_ref a = *ra, b = *rb;
    a.result = b.result = 0;
    a.index = b.index = 0;
    return cmp_ref(&a, &b) == 0;
}

static bool same_real(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_values(const cct_import_result *ra, const cct_point *a, size_t ia,
                        const cct_import_result *rb, const cct_point *b, size_t ib)
{
    const cct_stats *x = &a->stats, *y = &b->stats;
    if (x->n != y->n || !same_real(x->median_us, y->median_us) ||
        !same_real(x->p95_us, y->p95_us) || !same_real(x->min_us, y->min_us) ||
        !same_real(x->max_us, y->max_us) || !same_real(x->mean_us, y->mean_us) ||
        !same_real(x->cv, y->cv) || a->wrong != b->wrong || a->status != b->status ||
        a->noisy != b->noisy || a->nccl_algo != b->nccl_algo || a->nccl_proto != b->nccl_proto)
        return false;
    const cct_import_meta *ma = &ra->meta[ia], *mb = &rb->meta[ib];
    if (ma->n_samples != mb->n_samples)
        return false;
    for (size_t i = 0; i < ma->n_samples; i++)
        if (ra->samples[ma->first_sample + i] != rb->samples[mb->first_sample + i])
            return false;
    return true;
}

cct_status cct_import_check_duplicates(cct_import_result *results, size_t n_results,
                                       size_t *n_duplicates, cct_error *err)
{
    size_t total = 0;
    for (size_t r = 0; r < n_results; r++) {
        if (results[r].n_points > SIZE_MAX / sizeof(point_ref) - total)
            return cct_error_set(err, CCT_ENOMEM, "too many points");
        total += results[r].n_points;
    }
    if (n_duplicates)
        *n_duplicates = 0;
    if (total == 0)
        return CCT_OK;
    point_ref *refs = malloc(total * sizeof *refs);
    if (!refs)
        return cct_error_set(err, CCT_ENOMEM, "out of memory checking %zu points", total);
    size_t k = 0;
    for (size_t r = 0; r < n_results; r++)
        for (size_t i = 0; i < results[r].n_points; i++) {
            results[r].meta[i].duplicate = false;
            refs[k++] = (point_ref){&results[r].points[i], r, i};
        }
    qsort(refs, total, sizeof *refs, cmp_ref);
    cct_status rc = CCT_OK;
    size_t dups = 0;
    /* compare each point with the first of its run of equal keys, the earliest in input
     * order (the sort breaks ties by file, then by position) */
    size_t first = 0;
    for (size_t i = 1; i < total && rc == CCT_OK; i++) {
        if (!same_key(&refs[first], &refs[i])) {
            first = i;
            continue;
        }
        const point_ref *a = &refs[first], *b = &refs[i];
        cct_import_result *ra = &results[a->result], *rb = &results[b->result];
        if (same_values(ra, a->p, a->index, rb, b->p, b->index)) {
            rb->meta[b->index].duplicate = true;
            dups++;
            continue;
        }
        char size[32];
        snprintf(size, sizeof size, "%" PRIu64, b->p->bytes);
        rc =
            cct_error_at(err, CCT_EINVAL, rb->name, rb->meta[b->index].line, rb->meta[b->index].col,
                         "size %s %s (%s, %s, %d ranks) was already imported from %s:%u with "
                         "different results (%.6g us vs %.6g us here, %" PRIu64 " vs %" PRIu64
                         " wrong); one size may appear once per configuration (a log of "
                         "nccl-tests -N repeats sizes: import one cycle)",
                         size, b->p->in_place ? "in-place" : "out-of-place",
                         cct_coll_name(b->p->cfg.coll), cct_dtype_name(b->p->cfg.dtype),
                         b->p->cfg.ranks, ra->name ? ra->name : "<input>", ra->meta[a->index].line,
                         a->p->stats.median_us, b->p->stats.median_us, a->p->wrong, b->p->wrong);
    }
    free(refs);
    if (rc == CCT_OK && n_duplicates)
        *n_duplicates = dups;
    return rc;
}
