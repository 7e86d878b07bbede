/*
 * cct_search_sizes.c - `search --sizes-from RECORDING`: the collectives, rank count and
 * message sizes a recorded job used become the search's space.
 *
 * The rank count: with --ranks, the communicators of that many ranks (none is an error
 * naming the counts recorded); without, the one count the recordings have (several is an
 * error: one search per rank count).  Communicators of one rank are ignored.  The
 * collectives: those recorded at that count.  The sizes: the search's own grid (--factor
 * steps from 1 KiB, the 1.5x midpoints, the same absolute sizes an ordinary search measures)
 * from one grid step below the smallest recorded size to one step above the largest, so
 * every recorded size has measured neighbours on both sides
 * for the models and the decision bands, plus every recorded size off that grid exactly.
 * The space holds CCT_SPACE_MAX_VALUES exact sizes; beyond that the sizes with the most
 * GPU time (then calls) are kept and the rest counted in sizes_dropped (their grid
 * neighbours are still measured).  For `bench --sizes-from` the sizes are the recorded
 * ones only (the bench's own size list, 64 at most, the heaviest), with the same rank-count
 * rule and collectives.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_recording_set.h"
#include "cct_search.h"

static void ranks_list(const cct_rec_size *v, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    int last = 0;
    buf[0] = '\0';
    int seen[64] = {0};
    size_t n_seen = 0;
    for (size_t i = 0; i < n && n_seen < 64; i++) {
        bool dup = false;
        for (size_t k = 0; k < n_seen; k++)
            dup = dup || seen[k] == v[i].ranks;
        if (dup || v[i].ranks < 2)
            continue;
        seen[n_seen++] = last = v[i].ranks;
        int w = snprintf(buf + used, len - used, "%s%d", used ? ", " : "", last);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
}

/* The rank count to search; 0 with err filled when there is none or no single one. */
static int pick_ranks(const cct_rec_size *v, size_t n, int asked, cct_error *err)
{
    int only = 0;
    bool several = false, found = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i].ranks < 2)
            continue;
        found = found || v[i].ranks == asked;
        if (only && v[i].ranks != only)
            several = true;
        only = only ? only : v[i].ranks;
    }
    char list[256];
    ranks_list(v, n, list, sizeof list);
    if (!only) {
        cct_error_set(err, CCT_EINVAL,
                      "--sizes-from: the recordings have no collective on 2 or more ranks");
        return 0;
    }
    if (asked && !found) {
        cct_error_set(err, CCT_EINVAL,
                      "--sizes-from: the recordings have communicators of %s ranks, none of "
                      "--ranks %d: pass --ranks with one of those",
                      list, asked);
        return 0;
    }
    if (!asked && several) {
        cct_error_set(err, CCT_EINVAL,
                      "--sizes-from: the recordings have communicators of %s ranks: pass "
                      "--ranks N to search one of them (one search per rank count)",
                      list);
        return 0;
    }
    return asked ? asked : only;
}

static bool on_grid(const cct_space *s, uint64_t bytes)
{
    double v = (double)s->min_bytes;
    for (int octave = s->grid_octave; v <= (double)s->max_bytes * (1.0 + 1e-9);
         octave++, v *= s->factor) {
        double mid = v * 1.5;
        if ((uint64_t)llround(v) == bytes ||
            (s->off_grid && (octave & 1) && s->factor >= 1.99 && mid < (double)s->max_bytes &&
             (uint64_t)llround(mid) == bytes))
            return true;
    }
    return false;
}

/* From one step below the smallest size to one above the largest, on the points (and so
 * the midpoints) of an ordinary search's default grid, whatever the lower bound. */
static void set_range(cct_space *s, uint64_t lo, uint64_t hi)
{
    cct_space d;
    cct_space_defaults(&d);
    lo = lo ? lo : 1;
    double anchor = (double)d.min_bytes;
    int k = (int)floor(log((double)lo / anchor) / log(s->factor) + 1e-9);
    if ((uint64_t)llround(anchor * pow(s->factor, k)) >= lo)
        k--;
    while (anchor * pow(s->factor, k) < 1.0 - 1e-9)
        k++;
    s->min_bytes = (uint64_t)llround(anchor * pow(s->factor, k));
    s->grid_octave = k;
    double v = (double)s->min_bytes;
    while (v <= (double)hi * (1.0 + 1e-9))
        v *= s->factor;
    s->max_bytes = (uint64_t)llround(v);
}

typedef struct weighted {
    uint64_t bytes, ns, calls;
} weighted;

static int cmp_weight(const void *pa, const void *pb)
{
    const weighted *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns < b->ns ? 1 : -1;
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* The exact sizes off the grid, merged over collectives, the heaviest first. */
static cct_status set_exact(cct_search_opts *o, const cct_rec_size *v, size_t n, int ranks,
                            cct_error *err)
{
    weighted *w = calloc(n, sizeof *w);
    if (!w)
        return cct_error_set(err, CCT_ENOMEM, "--sizes-from: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].ranks != ranks || on_grid(&o->space, v[i].bytes))
            continue;
        size_t j = 0;
        while (j < k && w[j].bytes != v[i].bytes)
            j++;
        if (j == k)
            w[k++].bytes = v[i].bytes;
        w[j].ns += v[i].total_ns;
        w[j].calls += v[i].calls;
    }
    qsort(w, k, sizeof *w, cmp_weight);
    o->space.n_extra_sizes = 0;
    for (size_t j = 0; j < k && j < CCT_SPACE_MAX_VALUES; j++)
        o->space.extra_sizes[o->space.n_extra_sizes++] = w[j].bytes;
    o->sizes_dropped = k > CCT_SPACE_MAX_VALUES ? k - CCT_SPACE_MAX_VALUES : 0;
    free(w);
    return CCT_OK;
}

static cct_status apply_profile(cct_search_opts *o, const cct_rec_size *v, size_t n, cct_error *err)
{
    int ranks = pick_ranks(v, n, o->ranks, err);
    if (!ranks)
        return CCT_EINVAL;
    o->ranks = ranks;
    o->space.n_colls = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].ranks != ranks)
            continue;
        bool have = false;
        for (size_t c = 0; c < o->space.n_colls; c++)
            have = have || o->space.colls[c] == v[i].coll;
        if (!have)
            o->space.colls[o->space.n_colls++] = v[i].coll;
        lo = v[i].bytes < lo ? v[i].bytes : lo;
        hi = v[i].bytes > hi ? v[i].bytes : hi;
        distinct++;
    }
    set_range(&o->space, lo, hi);
    o->sizes_recorded = distinct;
    return set_exact(o, v, n, ranks, err);
}

/* The size profile of opts->sizes_from; *v malloc'ed. */
static cct_status load_profile(const cct_search_opts *o, cct_rec_size **v, size_t *n,
                               cct_error *err)
{
    cct_recording_set set;
    cct_status st = cct_recording_set_load(o->sizes_from, o->n_sizes_from, &set, err);
    if (st != CCT_OK)
        return st;
    st = cct_recording_sizes(set.recs, set.n, v, n, err);
    cct_recording_set_destroy(&set);
    return st;
}

cct_status cct_search_apply_sizes_from(cct_search_opts *o, bool sizes_given, cct_error *err)
{
    if (!o->n_sizes_from)
        return CCT_OK;
    if (sizes_given)
        return cct_error_set(err, CCT_EINVAL,
                             "--sizes-from sets the collectives and sizes from the recordings: "
                             "leave out --colls, --min-bytes, --max-bytes and --extra-sizes");
    cct_rec_size *v;
    size_t n;
    cct_status st = load_profile(o, &v, &n, err);
    if (st == CCT_OK) {
        st = apply_profile(o, v, n, err);
        free(v);
    }
    return st;
}

/* The bench's sizes: every recorded size at the rank count, the heaviest 64. */
static void bench_sizes(cct_search_opts *o, const cct_rec_size *v, size_t n, int ranks, weighted *w)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].ranks != ranks)
            continue;
        size_t j = 0;
        while (j < k && w[j].bytes != v[i].bytes)
            j++;
        if (j == k)
            w[k++] = (weighted){v[i].bytes, 0, 0};
        w[j].ns += v[i].total_ns;
        w[j].calls += v[i].calls;
    }
    qsort(w, k, sizeof *w, cmp_weight);
    size_t cap = sizeof o->bench_sizes / sizeof o->bench_sizes[0];
    o->n_bench_sizes = 0;
    for (size_t j = 0; j < k && j < cap; j++)
        o->bench_sizes[o->n_bench_sizes++] = w[j].bytes;
    o->sizes_dropped = k > cap ? k - cap : 0;
    o->sizes_recorded = k;
}

cct_status cct_search_bench_sizes_from(cct_search_opts *o, cct_error *err)
{
    cct_rec_size *v;
    size_t n;
    cct_status st = load_profile(o, &v, &n, err);
    if (st != CCT_OK)
        return st;
    int ranks = pick_ranks(v, n, o->ranks, err);
    weighted *w = n ? calloc(n, sizeof *w) : NULL;
    if (ranks && n && !w)
        st = cct_error_set(err, CCT_ENOMEM, "--sizes-from: out of memory");
    else if (!ranks)
        st = CCT_EINVAL;
    if (st == CCT_OK) {
        o->ranks = ranks;
        o->space.n_colls = 0;
        for (size_t i = 0; i < n; i++) {
            bool have = false;
            for (size_t c = 0; c < o->space.n_colls; c++)
                have = have || o->space.colls[c] == v[i].coll;
            if (v[i].ranks == ranks && !have)
                o->space.colls[o->space.n_colls++] = v[i].coll;
        }
        bench_sizes(o, v, n, ranks, w);
    }
    free(w);
    free(v);
    return st;
}
