/*
 * plugin_index.c - the indexes the plugin searches, built once per process when the table
 * loads: which sections serve a communicator shape (at every init), and which rule holds a
 * size (at every getCollInfo).
 *
 * Sections by shape: one cct_band_index per section, sorted by (ranks, nodes, collective,
 * specificity descending, pipe_ops, reg_buff, file order), so a communicator's sections are
 * one contiguous range found by binary search, and within it each collective's candidates
 * are grouped by specificity in the order cct_table_find_section prefers them.  Prefix sums
 * of the rule counts give the init line's totals without visiting the range.  A context
 * init is therefore O(log n) whatever the table holds, with nothing allocated per context.
 *
 * Rules by size: cct_section_lookup (src/core/cct_table.c) is the reference, a binary search
 * over the rules array.  The index searches a compact copy instead: the rules' upper bounds
 * as a dense uint64_t array (8 bytes per rule), and, for sections of more than
 * CCT_BAND_SMALL rules, for each size bucket (a quarter of a power of two; see
 * cct_band_bucket) the first rule that can hold a size of that bucket.  A lookup finds the
 * bucket with one count-leading-zeros and a shift, then does a branch-free lower-bound
 * search among the few rules of that bucket; small sections search all their keys.  Every
 * section's keys and bucket table live in two arrays shared by the whole table, so memory
 * is proportional to the table: 48 bytes per section, 8 per rule, ~1 KB per large section.
 * test_plugin_select checks the answers against cct_section_lookup on random sections.
 *
 * Ownership: cct_band_index_build allocates a standalone index's keys (tests);
 * cct_table_index_build allocates the shared arrays; the matching *_free releases them.
 */
#include <stdlib.h>

#include "plugin_internal.h"

/* Reference search at build time: the first rule whose band ends above `bytes`. */
static uint32_t first_above(const uint64_t *keys, uint32_t n, uint64_t bytes)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (keys[mid] > bytes)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static bool section_usable(const cct_section *s)
{
    return s->n_rules > 0 && s->n_rules <= UINT32_MAX &&
           s->rules[s->n_rules - 1].max_bytes == CCT_BYTES_INF;
}

/* Fill ix for s from caller-provided storage: keys (n_rules entries) and, when the section
 * is large, first (CCT_BAND_BUCKETS + 1 entries). */
static void band_fill(const cct_section *s, uint64_t *keys, uint32_t *first, cct_band_index *ix)
{
    ix->sec = s;
    ix->keys = NULL;
    ix->first = NULL;
    ix->n = 0;
    ix->pipe_ops = s->pipe_ops;
    ix->reg_buff = s->reg_buff;
    if (!section_usable(s))
        return; /* lookups answer NULL */
    uint32_t n = (uint32_t)s->n_rules;
    for (uint32_t i = 0; i < n; i++)
        keys[i] = s->rules[i].max_bytes;
    if (first) {
        for (unsigned k = 0; k < CCT_BAND_BUCKETS; k++) {
            /* smallest size of bucket k: the inverse of cct_band_bucket */
            uint64_t low;
            if (k < 4) {
                low = k;
            } else {
                unsigned len = k / 4 + 2, sub = k % 4;
                low = (uint64_t)(4 + sub) << (len - 3);
            }
            first[k] = first_above(keys, n, low);
        }
        first[CCT_BAND_BUCKETS] = n - 1; /* the last rule ends at inf */
    }
    ix->keys = keys;
    ix->first = first;
    ix->n = n;
}

static bool wants_buckets(const cct_section *s)
{
    return section_usable(s) && s->n_rules > CCT_BAND_SMALL;
}

cct_status cct_band_index_build(const cct_section *s, cct_band_index *ix)
{
    *ix = (cct_band_index){s, NULL, NULL, 0, s->pipe_ops, s->reg_buff}; /* answers NULL */
    if (!section_usable(s))
        return CCT_OK;
    uint64_t *keys = malloc(s->n_rules * sizeof *keys);
    uint32_t *first = wants_buckets(s) ? malloc((CCT_BAND_BUCKETS + 1) * sizeof *first) : NULL;
    if (!keys || (wants_buckets(s) && !first)) {
        free(keys);
        free(first);
        return CCT_ENOMEM;
    }
    band_fill(s, keys, first, ix);
    return CCT_OK;
}

void cct_band_index_free(cct_band_index *ix)
{
    free((void *)ix->keys);
    free((void *)ix->first);
    ix->keys = NULL;
    ix->first = NULL;
    ix->n = 0;
}

/* ---------- sections by shape ---------- */

static int cmp_int(int a, int b)
{
    return (a > b) - (a < b);
}

/* The order of cct_table_index.ix (see the file comment). */
static int shape_cmp(const void *pa, const void *pb)
{
    const cct_section *a = ((const cct_band_index *)pa)->sec;
    const cct_section *b = ((const cct_band_index *)pb)->sec;
    int c = cmp_int(a->ranks, b->ranks);
    if (!c)
        c = cmp_int(a->nodes, b->nodes);
    if (!c)
        c = cmp_int(a->coll, b->coll);
    if (!c)
        c = cmp_int(cct_section_score(b), cct_section_score(a));
    if (!c)
        c = cmp_int(a->pipe_ops, b->pipe_ops);
    if (!c)
        c = cmp_int(a->reg_buff, b->reg_buff);
    if (!c) /* file order: sections are one array */
        c = (a > b) - (a < b);
    return c;
}

void cct_table_index_free(cct_table_index *x)
{
    free(x->ix);
    free(x->rules_before);
    free(x->keys);
    free(x->buckets);
    *x = (cct_table_index){0};
}

cct_status cct_table_index_build(const cct_table *t, cct_table_index *x)
{
    *x = (cct_table_index){0};
    size_t n = t->n_sections, n_keys = 0, n_large = 0;
    for (size_t i = 0; i < n; i++) {
        if (section_usable(&t->sections[i]))
            n_keys += t->sections[i].n_rules;
        n_large += wants_buckets(&t->sections[i]);
    }
    x->ix = malloc((n ? n : 1) * sizeof *x->ix);
    x->rules_before = malloc((n + 1) * sizeof *x->rules_before);
    x->keys = malloc((n_keys ? n_keys : 1) * sizeof *x->keys);
    x->buckets = malloc((n_large ? n_large : 1) * (CCT_BAND_BUCKETS + 1) * sizeof *x->buckets);
    if (!x->ix || !x->rules_before || !x->keys || !x->buckets) {
        cct_table_index_free(x);
        return CCT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        x->ix[i].sec = &t->sections[i];
    qsort(x->ix, n, sizeof *x->ix, shape_cmp);
    uint64_t *keys = x->keys;
    uint32_t *buckets = x->buckets;
    x->rules_before[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_section *s = x->ix[i].sec;
        bool large = wants_buckets(s);
        band_fill(s, keys, large ? buckets : NULL, &x->ix[i]);
        keys += x->ix[i].n;
        buckets += large ? CCT_BAND_BUCKETS + 1 : 0;
        x->rules_before[i + 1] = x->rules_before[i] + s->n_rules;
    }
    x->n = n;
    return CCT_OK;
}

/* First position in [lo, hi) whose (ranks, nodes[, coll[, specificity]]) is not less than
 * the key; depth says how many of the four fields to compare. */
static size_t lower_bound(const cct_table_index *x, size_t lo, size_t hi, const int key[4],
                          int depth)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const cct_section *s = x->ix[mid].sec;
        int f[4] = {s->ranks, s->nodes, s->coll, -cct_section_score(s)};
        int c = 0;
        for (int i = 0; i < depth && !c; i++)
            c = cmp_int(f[i], key[i]);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void cct_table_index_shape(const cct_table_index *x, int ranks, int nodes, size_t *lo, size_t *hi)
{
    int key[4] = {ranks, nodes, 0, 0}, next[4] = {ranks, nodes, CCT_NUM_COLLS, 0};
    *lo = lower_bound(x, 0, x->n, key, 2);
    *hi = lower_bound(x, *lo, x->n, next, 3); /* every section's coll is < CCT_NUM_COLLS */
}

void cct_table_index_groups(const cct_table_index *x, size_t lo, size_t hi, int ranks, int nodes,
                            int coll, size_t out[5])
{
    for (int g = 0; g < 5; g++) {
        /* group g holds specificity 3 - g; out[4] ends the collective */
        int key[4] = {ranks, nodes, coll, g - 3};
        out[g] = g < 4 ? lower_bound(x, lo, hi, key, 4) : 0;
    }
    int end[4] = {ranks, nodes, coll + 1, 0};
    out[4] = lower_bound(x, out[0], hi, end, 3);
}
