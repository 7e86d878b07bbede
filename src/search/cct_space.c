/*
 * cct_space.c - parsing the search dimensions and expanding them into a plan of sessions,
 * configurations and sizes (see cct_space.h for the design).
 *
 * Expansion is deterministic: dimensions keep the order the user gave, sizes are sorted
 * and deduplicated, and the plan's identity is an FNV-1a hash of a canonical text
 * rendering, so every rank process builds the same plan and a resumed run can check it
 * is continuing the one it started.
 */
#include "cct_space.h"
#include "cct_facts.h"

#include "cct_parse.h"
#include "cct_pat.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cct_space_defaults(cct_space *s)
{
    memset(s, 0, sizeof *s);
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        s->colls[s->n_colls++] = c;
    s->algos[s->n_algos++] = CCT_ALGO_RING;
    s->algos[s->n_algos++] = CCT_ALGO_TREE;
    s->algos[s->n_algos++] = CCT_ALGO_PAT; /* where NCCL offers it (cct_space_forces) */
    for (int p = 0; p < CCT_NUM_PROTOS; p++)
        s->protos[s->n_protos++] = p;
    s->baseline = true;
    static const int default_channels[] = {0, 1, 2, 4, CCT_CHANNELS_MAX};
    for (size_t i = 0; i < sizeof default_channels / sizeof default_channels[0]; i++)
        s->channels[s->n_channels++] = default_channels[i];
    s->buffsizes[s->n_buffsizes++] = 0;
    s->ll_buffsizes[s->n_ll_buffsizes++] = 0;
    s->ll128_buffsizes[s->n_ll128_buffsizes++] = 0;
    s->aligns[s->n_aligns++] = 0;
    s->dtypes[s->n_dtypes++] = CCT_DTYPE_FLOAT;
    s->pipe_ops[s->n_pipe_ops++] = 1;
    s->reg_buffs[s->n_reg_buffs++] = false;
    s->chunks[s->n_chunks++] = 0;
    s->min_bytes = 1024;
    s->max_bytes = 256u << 20;
    s->factor = 2.0;
    s->off_grid = true;
    s->cross = CCT_CROSS_FACTORIAL;
    s->ranks = 0; /* filled by the launcher */
    s->nodes = 0;
}

/* One item of a dimension's comma list (cct_parse_list), with its index in the list. */
typedef cct_status (*item_fn)(cct_space *s, const char *flag, const char *item, size_t index,
                              cct_error *err);

typedef struct item_ctx {
    cct_space *space;
    item_fn fn;
} item_ctx;

static cct_status call_item(void *ctx, const char *flag, const char *item, size_t index,
                            cct_error *err)
{
    item_ctx *c = ctx;
    return c->fn(c->space, flag, item, index, err);
}

static cct_status for_each_item(cct_space *s, const char *flag, const char *value, item_fn fn,
                                cct_error *err)
{
    item_ctx ctx = {s, fn};
    return cct_parse_list(flag, value, CCT_SPACE_MAX_VALUES, call_item, &ctx, err);
}

static bool contains_int(const int *a, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] == v)
            return true;
    return false;
}

static cct_status add_coll(cct_space *s, const char *flag, const char *item, size_t i,
                           cct_error *err)
{
    if (i == 0)
        s->n_colls = 0;
    if (strcasecmp(item, "all") == 0) {
        s->n_colls = 0;
        for (int c = 0; c < CCT_NUM_COLLS; c++)
            s->colls[s->n_colls++] = c;
        return CCT_OK;
    }
    int c = cct_coll_from_name(item);
    if (c < 0)
        return cct_error_set(err, CCT_EINVAL,
                             "%s: unknown collective '%s' (expected allreduce, allgather, "
                             "reducescatter, broadcast, reduce or all)",
                             flag, item);
    if (!contains_int(s->colls, s->n_colls, c))
        s->colls[s->n_colls++] = c;
    return CCT_OK;
}

static cct_status add_algo(cct_space *s, const char *flag, const char *item, size_t i,
                           cct_error *err)
{
    if (i == 0)
        s->n_algos = 0;
    s->algos_given = true;
    if (strcasecmp(item, "all") == 0) {
        s->n_algos = 0;
        for (int a = 0; a < CCT_NUM_ALGOS; a++)
            s->algos[s->n_algos++] = a;
        return CCT_OK;
    }
    int a = cct_algo_from_name(item);
    if (a < 0)
        return cct_error_set(err, CCT_EINVAL,
                             "%s: unknown algorithm '%s' (expected tree, ring, collnet_direct, "
                             "collnet_chain, nvls, nvls_tree, pat or all)",
                             flag, item);
    if (!contains_int(s->algos, s->n_algos, a) && s->n_algos < CCT_NUM_ALGOS)
        s->algos[s->n_algos++] = a;
    return CCT_OK;
}

static cct_status add_proto(cct_space *s, const char *flag, const char *item, size_t i,
                            cct_error *err)
{
    if (i == 0)
        s->n_protos = 0;
    if (strcasecmp(item, "all") == 0) {
        s->n_protos = 0;
        for (int p = 0; p < CCT_NUM_PROTOS; p++)
            s->protos[s->n_protos++] = p;
        return CCT_OK;
    }
    int p = cct_proto_from_name(item);
    if (p < 0)
        return cct_error_set(err, CCT_EINVAL,
                             "%s: unknown protocol '%s' (expected ll, ll128, simple or all)", flag,
                             item);
    if (!contains_int(s->protos, s->n_protos, p) && s->n_protos < CCT_NUM_PROTOS)
        s->protos[s->n_protos++] = p;
    return CCT_OK;
}

static cct_status add_channels(cct_space *s, const char *flag, const char *item, size_t i,
                               cct_error *err)
{
    if (i == 0)
        s->n_channels = 0;
    int ch;
    if (strcasecmp(item, "max") == 0) {
        ch = CCT_CHANNELS_MAX;
    } else if (strcasecmp(item, "nccl") == 0 || strcasecmp(item, "default") == 0) {
        ch = 0;
    } else {
        long v;
        if (!cct_parse_long(item, 1, CCT_CHANNELS_MAX, &v))
            return cct_error_set(err, CCT_EINVAL,
                                 "%s: '%s' is not a channel count (1..%d, max, or nccl)", flag,
                                 item, CCT_CHANNELS_MAX);
        ch = (int)v;
    }
    if (!contains_int(s->channels, s->n_channels, ch))
        s->channels[s->n_channels++] = ch;
    return CCT_OK;
}

static cct_status parse_buffsize(const char *flag, const char *item, uint64_t *out, cct_error *err)
{
    if (strcasecmp(item, "default") == 0) {
        *out = 0;
        return CCT_OK;
    }
    cct_error sub;
    if (cct_parse_bytes(item, out, &sub) != CCT_OK || *out == CCT_BYTES_INF)
        return cct_error_set(err, CCT_EINVAL,
                             "%s: '%s' is not a buffer size (bytes, e.g. 4M, "
                             "or default)",
                             flag, item);
    if (*out < 4096 || *out > (1ull << 32))
        return cct_error_set(err, CCT_EINVAL, "%s: buffer size '%s' must be 4 KiB..4 GiB", flag,
                             item);
    return CCT_OK;
}

static cct_status add_u64(uint64_t *a, size_t *n, uint64_t v)
{
    for (size_t k = 0; k < *n; k++)
        if (a[k] == v)
            return CCT_OK;
    a[(*n)++] = v;
    return CCT_OK;
}

static cct_status add_buffsize(cct_space *s, const char *flag, const char *item, size_t i,
                               cct_error *err)
{
    uint64_t v;
    cct_status st = parse_buffsize(flag, item, &v, err);
    if (st != CCT_OK)
        return st;
    uint64_t *a = s->buffsizes;
    size_t *n = &s->n_buffsizes;
    if (strstr(flag, "ll128")) {
        a = s->ll128_buffsizes;
        n = &s->n_ll128_buffsizes;
    } else if (strstr(flag, "ll-")) {
        a = s->ll_buffsizes;
        n = &s->n_ll_buffsizes;
    }
    if (i == 0)
        *n = 0;
    return add_u64(a, n, v);
}

/* --chunk: sizes (NCCL clamps and rounds them, cct_chunk.h) or nccl (NCCL's own). */
static cct_status add_chunk(cct_space *s, const char *flag, const char *item, size_t i,
                            cct_error *err)
{
    if (i == 0)
        s->n_chunks = 0;
    uint64_t v = 0;
    if (strcasecmp(item, "nccl") != 0 && strcasecmp(item, "default") != 0 &&
        (cct_parse_bytes(item, &v, NULL) != CCT_OK || v < 1024 || v > (1ull << 30)))
        return cct_error_set(err, CCT_EINVAL,
                             "%s: '%s' is not a chunk size (1K..1G, e.g. 128K) or nccl", flag,
                             item);
    return add_u64(s->chunks, &s->n_chunks, v);
}

bool cct_space_forces_chunk(const cct_space *s)
{
    for (size_t i = 0; i < s->n_chunks; i++)
        if (s->chunks[i] != 0)
            return true;
    return false;
}

static cct_status add_align(cct_space *s, const char *flag, const char *item, size_t i,
                            cct_error *err)
{
    if (i == 0)
        s->n_aligns = 0;
    long v;
    if (!cct_parse_long(item, 0, 4095, &v))
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a byte offset (0..4095)", flag,
                             item);
    for (size_t k = 0; k < s->n_aligns; k++)
        if (s->aligns[k] == (unsigned)v)
            return CCT_OK;
    s->aligns[s->n_aligns++] = (unsigned)v;
    return CCT_OK;
}

static cct_status add_dtype(cct_space *s, const char *flag, const char *item, size_t i,
                            cct_error *err)
{
    if (i == 0)
        s->n_dtypes = 0;
    int d = cct_dtype_from_name(item);
    if (d < 0)
        return cct_error_set(err, CCT_EINVAL, "%s: unknown data type '%s' (float or bf16)", flag,
                             item);
    if (!contains_int(s->dtypes, s->n_dtypes, d))
        s->dtypes[s->n_dtypes++] = d;
    return CCT_OK;
}

static cct_status add_pipe_ops(cct_space *s, const char *flag, const char *item, size_t i,
                               cct_error *err)
{
    if (i == 0)
        s->n_pipe_ops = 0;
    long v;
    if (!cct_parse_long(item, 1, CCT_PIPE_OPS_MAX, &v))
        return cct_error_set(err, CCT_EINVAL,
                             "%s: '%s' is not a group size (1..%d collectives per "
                             "ncclGroupStart/End)",
                             flag, item, CCT_PIPE_OPS_MAX);
    if (!contains_int(s->pipe_ops, s->n_pipe_ops, (int)v))
        s->pipe_ops[s->n_pipe_ops++] = (int)v;
    return CCT_OK;
}

static cct_status add_regbuff(cct_space *s, const char *flag, const char *item, size_t i,
                              cct_error *err)
{
    if (i == 0)
        s->n_reg_buffs = 0;
    static const cct_enum_name no_yes[] = {{"no", 0}, {"yes", 1}, {NULL, 0}};
    int yes;
    cct_status st = cct_parse_enum(flag, item, no_yes, &yes, err);
    if (st != CCT_OK)
        return st;
    bool v = yes != 0;
    for (size_t k = 0; k < s->n_reg_buffs; k++)
        if (s->reg_buffs[k] == v)
            return CCT_OK;
    s->reg_buffs[s->n_reg_buffs++] = v;
    return CCT_OK;
}

static cct_status add_extra(cct_space *s, const char *flag, const char *item, size_t i,
                            cct_error *err)
{
    if (i == 0)
        s->n_extra_sizes = 0;
    uint64_t v;
    if (cct_parse_bytes(item, &v, NULL) != CCT_OK || v == 0 || v == CCT_BYTES_INF)
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a message size", flag, item);
    return add_u64(s->extra_sizes, &s->n_extra_sizes, v);
}

cct_status cct_space_parse(cct_space *s, const char *flag, const char *value, cct_error *err)
{
    if (strcmp(flag, "--colls") == 0)
        return for_each_item(s, flag, value, add_coll, err);
    if (strcmp(flag, "--algos") == 0)
        return for_each_item(s, flag, value, add_algo, err);
    if (strcmp(flag, "--protos") == 0)
        return for_each_item(s, flag, value, add_proto, err);
    if (strcmp(flag, "--channels") == 0)
        return for_each_item(s, flag, value, add_channels, err);
    if (strcmp(flag, "--buffsize") == 0 || strcmp(flag, "--ll-buffsize") == 0 ||
        strcmp(flag, "--ll128-buffsize") == 0)
        return for_each_item(s, flag, value, add_buffsize, err);
    if (strcmp(flag, "--align") == 0)
        return for_each_item(s, flag, value, add_align, err);
    if (strcmp(flag, "--chunk") == 0)
        return for_each_item(s, flag, value, add_chunk, err);
    if (strcmp(flag, "--dtype") == 0)
        return for_each_item(s, flag, value, add_dtype, err);
    if (strcmp(flag, "--extra-sizes") == 0)
        return for_each_item(s, flag, value, add_extra, err);
    if (strcmp(flag, "--pipe-ops") == 0)
        return for_each_item(s, flag, value, add_pipe_ops, err);
    if (strcmp(flag, "--regbuff") == 0)
        return for_each_item(s, flag, value, add_regbuff, err);
    if (strcmp(flag, "--min-bytes") == 0 || strcmp(flag, "--max-bytes") == 0) {
        uint64_t v;
        if (!value || cct_parse_bytes(value, &v, NULL) != CCT_OK || v == 0 || v == CCT_BYTES_INF)
            return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a message size (e.g. 1K, 256M)",
                                 flag, value ? value : "");
        if (v > (16ull << 30))
            return cct_error_set(err, CCT_EINVAL, "%s: '%s' is above the 16 GiB limit", flag,
                                 value);
        if (flag[2] == 'm' && flag[3] == 'i')
            s->min_bytes = v;
        else
            s->max_bytes = v;
        return CCT_OK;
    }
    if (strcmp(flag, "--factor") == 0) {
        double f = 0.0;
        if (!value || *value == '+' || !cct_parse_double(value, &f) || !(f >= 1.05 && f <= 16.0))
            return cct_error_set(err, CCT_EINVAL, "%s: '%s' is not a step factor (1.05..16)", flag,
                                 value ? value : "");
        s->factor = f;
        return CCT_OK;
    }
    if (strcmp(flag, "--cross") == 0) {
        static const cct_enum_name modes[] = {
            {"factorial", CCT_CROSS_FACTORIAL}, {"full", CCT_CROSS_FULL}, {NULL, 0}};
        int mode;
        cct_status st = cct_parse_enum(flag, value, modes, &mode, err);
        if (st == CCT_OK)
            s->cross = (cct_cross)mode;
        return st;
    }
    return cct_error_set(err, CCT_EINVAL, "unknown dimension flag %s", flag);
}

cct_status cct_space_check(const cct_space *s, cct_error *err)
{
    if (s->n_colls == 0 || s->n_algos == 0 || s->n_protos == 0 || s->n_channels == 0 ||
        s->n_aligns == 0 || s->n_dtypes == 0 || s->n_buffsizes == 0 || s->n_ll_buffsizes == 0 ||
        s->n_ll128_buffsizes == 0 || s->n_pipe_ops == 0 || s->n_reg_buffs == 0 || s->n_chunks == 0)
        return cct_error_set(err, CCT_EINVAL, "every dimension needs at least one value");
    if (s->min_bytes > s->max_bytes)
        return cct_error_set(err, CCT_EINVAL,
                             "--min-bytes (%llu) is larger than --max-bytes (%llu)",
                             (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes);
    for (size_t i = 0; i < s->n_aligns; i++)
        for (size_t d = 0; d < s->n_dtypes; d++)
            if (s->aligns[i] % cct_dtype_size(s->dtypes[d]) != 0)
                return cct_error_set(err, CCT_EINVAL,
                                     "--align: offset %u is not a multiple of the %s element size "
                                     "(%u bytes)",
                                     s->aligns[i], cct_dtype_name(s->dtypes[d]),
                                     cct_dtype_size(s->dtypes[d]));
    for (size_t d = 0; d < s->n_dtypes; d++)
        if (s->dtypes[d] == CCT_DTYPE_BF16 && s->ranks > 64)
            return cct_error_set(err, CCT_EINVAL,
                                 "--dtype bf16 is verified exactly up to 64 ranks only");
    return CCT_OK;
}

/* ---- plan expansion ---- */

bool cct_space_forces(const cct_space *s, int coll, int algo, int proto)
{
    if (algo != CCT_ALGO_PAT || s->algos_given)
        return true;
    return cct_pat_offered(coll, proto, s->ranks, s->nodes, 0);
}

typedef struct config_list {
    cct_config *items;
    size_t n, cap;
} config_list;

static bool same_config(const cct_config *a, const cct_config *b)
{
    return a->coll == b->coll && a->algo == b->algo && a->proto == b->proto &&
           a->channels == b->channels && a->buffsize == b->buffsize &&
           a->ll_buffsize == b->ll_buffsize && a->ll128_buffsize == b->ll128_buffsize &&
           a->align == b->align && a->dtype == b->dtype && a->chunk == b->chunk &&
           cct_config_same_mode(a, b);
}

static cct_status push_config(config_list *l, const cct_config *c, size_t from)
{
    for (size_t i = from; i < l->n; i++)
        if (same_config(&l->items[i], c))
            return CCT_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        cct_config *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return CCT_ENOMEM;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = *c;
    return CCT_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static cct_status build_sizes(const cct_space *s, cct_plan *plan)
{
    size_t cap = 64, n = 0;
    uint64_t *sizes = malloc(cap * sizeof *sizes);
    if (!sizes)
        return CCT_ENOMEM;
    double v = (double)s->min_bytes;
    int octave = s->grid_octave;
    while (v <= (double)s->max_bytes * (1.0 + 1e-9)) {
        if (n + 2 >= cap) {
            cap *= 2;
            uint64_t *p = realloc(sizes, cap * sizeof *p);
            if (!p) {
                free(sizes);
                return CCT_ENOMEM;
            }
            sizes = p;
        }
        sizes[n++] = (uint64_t)llround(v);
        double mid = v * 1.5;
        if (s->off_grid && (octave & 1) && s->factor >= 1.99 && mid < (double)s->max_bytes)
            sizes[n++] = (uint64_t)llround(mid);
        v *= s->factor;
        octave++;
    }
    for (size_t i = 0; i < s->n_extra_sizes; i++) {
        uint64_t *p = realloc(sizes, (n + 1) * sizeof *p);
        if (!p) {
            free(sizes);
            return CCT_ENOMEM;
        }
        sizes = p;
        sizes[n++] = s->extra_sizes[i];
    }
    qsort(sizes, n, sizeof *sizes, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || sizes[i] != sizes[k - 1])
            sizes[k++] = sizes[i];
    plan->sizes = sizes;
    plan->n_sizes = k;
    return CCT_OK;
}

static bool in_full(const cct_space *s)
{
    return s->cross == CCT_CROSS_FULL;
}

static bool space_has_sides(const cct_space *s)
{
    return s->n_aligns > 1 || s->n_dtypes > 1 || s->n_buffsizes > 1 || s->n_ll_buffsizes > 1 ||
           s->n_ll128_buffsizes > 1;
}

/* Configurations of one forced session (buffer sizes fixed), collective by collective.
 * Full: channels x alignments x data types.  Factorial: at default buffers the channel sweep
 * (aligned, first data type), each further alignment and data type at NCCL's channel count,
 * and that aligned NCCL-channel reference whenever a side measurement needs it; at other
 * buffers only the reference point. */
static cct_status expand_forced(const cct_space *s, uint64_t buf, uint64_t llbuf, uint64_t ll128buf,
                                bool default_buffers, config_list *l)
{
    for (size_t ci = 0; ci < s->n_colls; ci++) {
        size_t group_start = l->n;
        for (size_t ai = 0; ai < s->n_algos; ai++) {
            for (size_t pi = 0; pi < s->n_protos; pi++) {
                if (!cct_space_forces(s, s->colls[ci], s->algos[ai], s->protos[pi]))
                    continue;
                cct_config c;
                memset(&c, 0, sizeof c);
                c.coll = s->colls[ci];
                c.algo = s->algos[ai];
                c.proto = s->protos[pi];
                c.buffsize = buf;
                c.ll_buffsize = llbuf;
                c.ll128_buffsize = ll128buf;
                c.ranks = s->ranks;
                c.nodes = s->nodes;
                cct_status st;
                if (in_full(s)) {
                    for (size_t hi = 0; hi < s->n_channels; hi++)
                        for (size_t gi = 0; gi < s->n_aligns; gi++)
                            for (size_t di = 0; di < s->n_dtypes; di++)
                                for (size_t ki = 0; ki < s->n_chunks; ki++) {
                                    c.channels = s->channels[hi];
                                    c.align = s->aligns[gi];
                                    c.dtype = s->dtypes[di];
                                    c.chunk = s->chunks[ki];
                                    if ((st = push_config(l, &c, group_start)) != CCT_OK)
                                        return st;
                                }
                    c.chunk = 0;
                    continue;
                }
                c.align = s->aligns[0];
                c.dtype = s->dtypes[0];
                if (default_buffers) {
                    /* chunk sizes at default buffers only: the buffers NCCL caps them by are
                     * the ones a job runs with */
                    for (size_t hi = 0; hi < s->n_channels; hi++)
                        for (size_t ki = 0; ki < s->n_chunks; ki++) {
                            c.channels = s->channels[hi];
                            c.chunk = s->chunks[ki];
                            if ((st = push_config(l, &c, group_start)) != CCT_OK)
                                return st;
                        }
                    c.chunk = 0;
                }
                c.channels = 0;
                if (!default_buffers || space_has_sides(s))
                    if ((st = push_config(l, &c, group_start)) != CCT_OK)
                        return st;
                if (!default_buffers)
                    continue;
                for (size_t gi = 1; gi < s->n_aligns; gi++) {
                    c.align = s->aligns[gi];
                    if ((st = push_config(l, &c, group_start)) != CCT_OK)
                        return st;
                }
                c.align = s->aligns[0];
                for (size_t di = 1; di < s->n_dtypes; di++) {
                    c.dtype = s->dtypes[di];
                    if ((st = push_config(l, &c, group_start)) != CCT_OK)
                        return st;
                }
            }
        }
    }
    return CCT_OK;
}

static cct_status add_session(cct_plan *plan, const cct_session *proto_session, size_t first,
                              size_t n)
{
    if (n == 0)
        return CCT_OK;
    cct_session *p = realloc(plan->sessions, (plan->n_sessions + 1) * sizeof *p);
    if (!p)
        return CCT_ENOMEM;
    plan->sessions = p;
    cct_session *s = &plan->sessions[plan->n_sessions++];
    *s = *proto_session;
    s->first_config = first;
    s->n_configs = n;
    return CCT_OK;
}

static void hash_bytes(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= p[i];
        *h *= 1099511628211ull;
    }
}

static void hash_text(uint64_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hash_text(uint64_t *h, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        hash_bytes(h, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void plan_hash_tagged(cct_plan *plan, const char *tag)
{
    uint64_t h = 14695981039346656037ull;
    hash_text(&h, "ccltune-plan-1 ranks=%d nodes=%d\n", plan->space.ranks, plan->space.nodes);
    if (tag)
        hash_text(&h, "%s\n", tag);
    for (size_t i = 0; i < plan->n_sizes; i++)
        hash_text(&h, "size %llu\n", (unsigned long long)plan->sizes[i]);
    for (size_t si = 0; si < plan->n_sessions; si++) {
        const cct_session *s = &plan->sessions[si];
        hash_text(&h, "session %d %d %llu %llu %llu\n", s->baseline, s->unlock,
                  (unsigned long long)s->buffsize, (unsigned long long)s->ll_buffsize,
                  (unsigned long long)s->ll128_buffsize);
        for (size_t k = 0; k < s->n_configs; k++) {
            char line[256];
            cct_config_describe(&plan->configs[s->first_config + k], line, sizeof line);
            hash_text(&h, "%s\n", line);
        }
    }
    snprintf(plan->hash, sizeof plan->hash, "%016llx", (unsigned long long)h);
}

static void plan_hash(cct_plan *plan)
{
    plan_hash_tagged(plan, NULL);
}

void cct_plan_rehash(cct_plan *plan, const char *tag)
{
    plan_hash_tagged(plan, tag);
}

/* NCCL's own choice, once per collective (and per alignment/data type in a full cross). */
static cct_status push_baseline(const cct_space *space, config_list *l)
{
    for (size_t ci = 0; ci < space->n_colls; ci++) {
        size_t group = l->n;
        for (size_t gi = 0; gi < space->n_aligns; gi++) {
            for (size_t di = 0; di < space->n_dtypes; di++) {
                if (!in_full(space) && (gi != 0 || di != 0))
                    continue;
                cct_config c;
                memset(&c, 0, sizeof c);
                c.coll = space->colls[ci];
                c.algo = CCT_DEFAULT;
                c.proto = CCT_DEFAULT;
                c.align = space->aligns[gi];
                c.dtype = space->dtypes[di];
                c.ranks = space->ranks;
                c.nodes = space->nodes;
                cct_status st = push_config(l, &c, group);
                if (st != CCT_OK)
                    return st;
            }
        }
    }
    return CCT_OK;
}

/* Every call mode other than the plain one: NCCL's default and each algorithm x protocol at
 * NCCL's channel count, aligned, in the first data type (the factorial reference point), so
 * the fit compares a mode's choices with the plain calls' at the same sizes. */
static cct_status expand_modes(const cct_space *space, config_list *l)
{
    for (size_t mi = 0; mi < space->n_pipe_ops; mi++) {
        for (size_t ri = 0; ri < space->n_reg_buffs; ri++) {
            int ops = space->pipe_ops[mi];
            bool reg = space->reg_buffs[ri];
            if (ops == 1 && !reg)
                continue;
            for (size_t ci = 0; ci < space->n_colls; ci++) {
                size_t group = l->n;
                cct_config c;
                memset(&c, 0, sizeof c);
                c.coll = space->colls[ci];
                c.align = space->aligns[0];
                c.dtype = space->dtypes[0];
                c.ranks = space->ranks;
                c.nodes = space->nodes;
                c.pipe_ops = ops;
                c.reg_buff = reg;
                cct_status st;
                if (space->baseline) {
                    c.algo = CCT_DEFAULT;
                    c.proto = CCT_DEFAULT;
                    if ((st = push_config(l, &c, group)) != CCT_OK)
                        return st;
                }
                for (size_t ai = 0; ai < space->n_algos; ai++)
                    for (size_t pi = 0; pi < space->n_protos; pi++) {
                        if (!cct_space_forces(space, c.coll, space->algos[ai], space->protos[pi]))
                            continue;
                        c.algo = space->algos[ai];
                        c.proto = space->protos[pi];
                        if ((st = push_config(l, &c, group)) != CCT_OK)
                            return st;
                    }
            }
        }
    }
    return CCT_OK;
}

/* Stable partition: LL128 configurations to the end; returns how many there are. */
static size_t partition_ll128(cct_config *c, size_t n)
{
    size_t k = 0, moved = 0;
    cct_config *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp) {
        /* in place, O(n^2) but allocation-free */
        for (size_t i = 0; i < n - moved;) {
            if (c[i].proto == CCT_PROTO_LL128) {
                cct_config x = c[i];
                memmove(&c[i], &c[i + 1], (n - i - 1) * sizeof *c);
                c[n - 1] = x;
                moved++;
            } else {
                i++;
            }
        }
        return moved;
    }
    for (size_t i = 0; i < n; i++)
        if (c[i].proto != CCT_PROTO_LL128)
            tmp[k++] = c[i];
    for (size_t i = 0; i < n; i++)
        if (c[i].proto == CCT_PROTO_LL128)
            tmp[k++] = c[i], moved++;
    memcpy(c, tmp, n * sizeof *c);
    free(tmp);
    return moved;
}

cct_status cct_plan_build(const cct_space *space, cct_plan *plan, cct_error *err)
{
    memset(plan, 0, sizeof *plan);
    cct_status st = cct_space_check(space, err);
    if (st != CCT_OK)
        return st;
    plan->space = *space;
    config_list l = {0};
    if ((st = build_sizes(space, plan)) != CCT_OK)
        goto oom;

    for (size_t bi = 0; bi < space->n_buffsizes; bi++) {
        for (size_t li = 0; li < space->n_ll_buffsizes; li++) {
            for (size_t ki = 0; ki < space->n_ll128_buffsizes; ki++) {
                int non_default = (bi > 0) + (li > 0) + (ki > 0);
                /* factorial: vary one buffer size at a time from the first (default) values */
                if (!in_full(space) && non_default > 1)
                    continue;
                cct_session sess = {.buffsize = space->buffsizes[bi],
                                    .ll_buffsize = space->ll_buffsizes[li],
                                    .ll128_buffsize = space->ll128_buffsizes[ki]};
                size_t first = l.n;
                /* NCCL's default is measured in the same session, interleaved with the
                 * forced configurations, so both see the same process and environment */
                if (non_default == 0 && space->baseline) {
                    sess.baseline = true;
                    if ((st = push_baseline(space, &l)) != CCT_OK)
                        goto oom;
                }
                size_t forced = l.n;
                st = expand_forced(space, sess.buffsize, sess.ll_buffsize, sess.ll128_buffsize,
                                   non_default == 0, &l);
                if (st == CCT_OK && non_default == 0)
                    st = expand_modes(space, &l);
                if (st != CCT_OK)
                    goto oom;
                /* LL128 needs NCCL_PROTO to unlock it where NCCL would not enable it, and
                 * that environment changes NCCL's defaults: it gets a session of its own;
                 * where NCCL enables LL128 by itself, the plugin forces it like LL/Simple */
                size_t n_ll128 =
                    space->ll128_default ? 0 : partition_ll128(l.items + forced, l.n - forced);
                if ((st = add_session(plan, &sess, first, l.n - first - n_ll128)) != CCT_OK)
                    goto oom;
                cct_session unlocked = sess;
                unlocked.baseline = false;
                unlocked.unlock = true;
                if ((st = add_session(plan, &unlocked, l.n - n_ll128, n_ll128)) != CCT_OK)
                    goto oom;
            }
        }
    }
    plan->configs = l.items;
    plan->n_configs = l.n;
    plan_hash(plan);
    return CCT_OK;
oom:
    free(l.items);
    cct_plan_destroy(plan);
    return cct_error_set(err, CCT_ENOMEM, "out of memory while building the plan");
}

void cct_plan_destroy(cct_plan *plan)
{
    free(plan->sessions);
    free(plan->configs);
    free(plan->sizes);
    memset(plan, 0, sizeof *plan);
}

static uint64_t split_unit(const cct_config *cfg)
{
    uint64_t unit = cct_dtype_size(cfg->dtype);
    if (cct_coll_per_rank(cfg->coll) && cfg->ranks > 0)
        unit *= (uint64_t)cfg->ranks;
    return unit;
}

uint64_t cct_plan_effective_bytes(const cct_config *cfg, uint64_t requested)
{
    uint64_t unit = split_unit(cfg);
    uint64_t b = requested / unit * unit;
    return b < unit ? unit : b;
}

size_t cct_plan_nccl_count(const cct_config *cfg, uint64_t bytes)
{
    return (size_t)(bytes / split_unit(cfg));
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void cct_cycle_order(size_t *order, size_t n, int cycle, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = seed ^ (0x5851f42d4c957f2dull * (uint64_t)(cycle / 2 + 1));
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)(splitmix64(&state) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    if (cycle % 2 == 1)
        for (size_t i = 0; i < n / 2; i++) {
            size_t t = order[i];
            order[i] = order[n - 1 - i];
            order[n - 1 - i] = t;
        }
}

cct_estimate cct_plan_estimate(const cct_plan *plan, int warmup, int cycles, double cycle_us,
                               double alpha_us, double beta_gbps)
{
    cct_estimate e = {0, 0, 0.0};
    for (size_t k = 0; k < plan->n_configs; k++) {
        /* a grouped configuration's call is a group of ops collectives of this size: counted
         * as ops calls of one collective's time each (an upper bound: NCCL pipelines them) */
        int ops = cct_config_pipe_ops(&plan->configs[k]);
        if (ops < 1)
            ops = 1;
        for (size_t i = 0; i < plan->n_sizes; i++) {
            double t = (alpha_us + (double)plan->sizes[i] / (beta_gbps * 1e3)) * ops;
            /* iterations per cycle: enough to fill cycle_us, at least one */
            double iters = ceil(cycle_us / t);
            if (iters < 1.0)
                iters = 1.0;
            double calls =
                2.0 /* verification, out of place and in place */ + warmup + (double)cycles * iters;
            e.points++;
            e.calls += (size_t)calls * (size_t)ops;
            e.seconds += calls * t * 1e-6;
        }
    }
    return e;
}

const char *cct_config_describe(const cct_config *c, char *buf, size_t len)
{
    char b1[32], b2[32], b3[32];
    const char *algo = c->algo == CCT_DEFAULT ? "nccl" : cct_algo_name(c->algo);
    const char *proto = c->proto == CCT_DEFAULT ? "nccl" : cct_proto_name(c->proto);
    char ch[16];
    if (c->channels == 0)
        snprintf(ch, sizeof ch, "nccl");
    else if (c->channels == CCT_CHANNELS_MAX)
        snprintf(ch, sizeof ch, "max");
    else
        snprintf(ch, sizeof ch, "%d", c->channels);
    char mode[64] = "";
    if (cct_config_pipe_ops(c) > 1)
        snprintf(mode, sizeof mode, " ops=%d", cct_config_pipe_ops(c));
    if (c->reg_buff)
        strcat(mode, " reg");
    if (c->chunk) { /* absent for NCCL's own chunk: plans without --chunk hash as before */
        char cb[32];
        size_t used = strlen(mode);
        snprintf(mode + used, sizeof mode - used, " chunk=%s",
                 cct_format_bytes(c->chunk, cb, sizeof cb));
    }
    snprintf(buf, len, "%s %s/%s ch=%s buf=%s ll=%s ll128=%s align=%u %s%s", cct_coll_name(c->coll),
             algo, proto, ch,
             c->buffsize ? cct_format_bytes(c->buffsize, b1, sizeof b1) : "default",
             c->ll_buffsize ? cct_format_bytes(c->ll_buffsize, b2, sizeof b2) : "default",
             c->ll128_buffsize ? cct_format_bytes(c->ll128_buffsize, b3, sizeof b3) : "default",
             c->align, cct_dtype_name(c->dtype), mode);
    return buf;
}
