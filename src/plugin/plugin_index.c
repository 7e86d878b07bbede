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
 * cct_band_bucket) the first rule that can hold a size of that bucket -- one byte per
 * bucket up to 256 rules, four beyond.  A lookup finds the bucket with one
 * count-leading-zeros and a shift, then does a branch-free lower-bound search among the few
 * rules of that bucket; small sections search all their keys.  Every section's keys and
 * bucket table live in arrays shared by the whole table, so memory is proportional to the
 * table: 56 bytes per section, 8 per rule, 253 bytes per section of 5..256 rules (a few
 * hundred bytes of YAML at least), 1 KB per larger one.
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

/* Which bucket table a section gets: none (searched whole), one byte per bucket (rule
 * numbers < 256), or four. */
typedef enum width { WIDTH_NONE, WIDTH_8, WIDTH_32 } width;

static width bucket_width(const cct_section *s)
{
    if (!section_usable(s) || s->n_rules <= CCT_BAND_SMALL)
        return WIDTH_NONE;
    return s->n_rules <= 256 ? WIDTH_8 : WIDTH_32;
}

/* Fill ix for s from caller-provided storage: keys (n_rules entries) and the bucket table
 * bucket_width() asks for (CCT_BAND_BUCKETS + 1 entries; the other pointer NULL). */
static void band_fill(const cct_section *s, uint64_t *keys, uint8_t *first8, uint32_t *first32,
                      cct_band_index *ix)
{
    *ix = (cct_band_index){s, NULL, NULL, NULL, 0, s->pipe_ops, s->reg_buff};
    if (!section_usable(s))
        return; /* lookups answer NULL */
    uint32_t n = (uint32_t)s->n_rules;
    for (uint32_t i = 0; i < n; i++)
        keys[i] = s->rules[i].max_bytes;
    for (unsigned k = 0; (first8 || first32) && k <= CCT_BAND_BUCKETS; k++) {
        /* smallest size of bucket k: the inverse of cct_band_bucket */
        uint64_t low;
        if (k < 4) {
            low = k;
        } else {
            unsigned len = k / 4 + 2, sub = k % 4;
            low = (uint64_t)(4 + sub) << (len - 3);
        }
        /* the last entry ends the table: the last rule, which ends at inf */
        uint32_t v = k == CCT_BAND_BUCKETS ? n - 1 : first_above(keys, n, low);
        if (first8)
            first8[k] = (uint8_t)v;
        else
            first32[k] = v;
    }
    ix->keys = keys;
    ix->first8 = first8;
    ix->first32 = first32;
    ix->n = n;
}

cct_status cct_band_index_build(const cct_section *s, cct_band_index *ix)
{
    *ix = (cct_band_index){s, NULL, NULL, NULL, 0, s->pipe_ops, s->reg_buff}; /* answers NULL */
    if (!section_usable(s))
        return CCT_OK;
    width w = bucket_width(s);
    uint64_t *keys = malloc(s->n_rules * sizeof *keys);
    uint8_t *f8 = w == WIDTH_8 ? malloc(CCT_BAND_BUCKETS + 1) : NULL;
    uint32_t *f32 = w == WIDTH_32 ? malloc((CCT_BAND_BUCKETS + 1) * sizeof *f32) : NULL;
    if (!keys || (w == WIDTH_8 && !f8) || (w == WIDTH_32 && !f32)) {
        free(keys);
        free(f8);
        free(f32);
        return CCT_ENOMEM;
    }
    band_fill(s, keys, f8, f32, ix);
    return CCT_OK;
}

void cct_band_index_free(cct_band_index *ix)
{
    free((void *)ix->keys);
    free((void *)ix->first8);
    free((void *)ix->first32);
    ix->keys = NULL;
    ix->first8 = NULL;
    ix->first32 = NULL;
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
    free(x->buckets8);
    free(x->buckets32);
    *x = (cct_table_index){0};
}

cct_status cct_table_index_build(const cct_table *t, cct_table_index *x)
{
    *x = (cct_table_index){0};
    size_t n = t->n_sections, n_keys = 0, n8 = 0, n32 = 0;
    for (size_t i = 0; i < n; i++) {
        if (section_usable(&t->sections[i]))
            n_keys += t->sections[i].n_rules;
        n8 += bucket_width(&t->sections[i]) == WIDTH_8;
        n32 += bucket_width(&t->sections[i]) == WIDTH_32;
    }
    x->ix = malloc((n ? n : 1) * sizeof *x->ix);
    x->rules_before = malloc((n + 1) * sizeof *x->rules_before);
    x->keys = malloc((n_keys ? n_keys : 1) * sizeof *x->keys);
    x->buckets8 = malloc((n8 ? n8 : 1) * (CCT_BAND_BUCKETS + 1));
    x->buckets32 = malloc((n32 ? n32 : 1) * (CCT_BAND_BUCKETS + 1) * sizeof *x->buckets32);
    if (!x->ix || !x->rules_before || !x->keys || !x->buckets8 || !x->buckets32) {
        cct_table_index_free(x);
        return CCT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        x->ix[i].sec = &t->sections[i];
    qsort(x->ix, n, sizeof *x->ix, shape_cmp);
    uint64_t *keys = x->keys;
    uint8_t *b8 = x->buckets8;
    uint32_t *b32 = x->buckets32;
    x->rules_before[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_section *s = x->ix[i].sec;
        width w = bucket_width(s);
        band_fill(s, keys, w == WIDTH_8 ? b8 : NULL, w == WIDTH_32 ? b32 : NULL, &x->ix[i]);
        keys += x->ix[i].n;
        b8 += w == WIDTH_8 ? CCT_BAND_BUCKETS + 1 : 0;
        b32 += w == WIDTH_32 ? CCT_BAND_BUCKETS + 1 : 0;
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
