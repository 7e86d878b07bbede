/*
 * plugin_index.c - the size-band index the plugin searches on every getCollInfo.
 *
 * cct_section_lookup (src/cct_table.c) is the reference: a binary search over the rules
 * array.  Inside a training job the plugin answers millions of calls, so it searches a
 * compact copy instead, built once per process when the table loads: the rules' upper
 * bounds as a dense uint64_t array (8 bytes per rule instead of a whole rule, so 10,000
 * rules fit in L2), plus, for each size bucket (a quarter of a power of two; see
 * cct_band_bucket), the first rule that can hold a size of that bucket.  A lookup finds
 * the bucket with one count-leading-zeros and a shift, then does a branch-free
 * lower-bound search among the few rules of that bucket: fitted tables have about one
 * rule per octave, which leaves nothing to search, and the worst case is still O(log n).
 * test_plugin_property checks the answers against cct_section_lookup on random tables.
 *
 * Ownership: cct_band_index_build allocates keys; cct_band_index_free releases them.
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

cct_status cct_band_index_build(const cct_section *s, cct_band_index *ix)
{
    ix->sec = s;
    ix->keys = NULL;
    ix->n = 0;
    if (s->n_rules == 0 || s->n_rules > UINT32_MAX ||
        s->rules[s->n_rules - 1].max_bytes != CCT_BYTES_INF)
        return CCT_OK; /* not a valid section: lookups answer NULL */
    uint64_t *keys = malloc(s->n_rules * sizeof *keys);
    if (!keys)
        return CCT_ENOMEM;
    uint32_t n = (uint32_t)s->n_rules;
    for (uint32_t i = 0; i < n; i++)
        keys[i] = s->rules[i].max_bytes;
    for (unsigned k = 0; k < CCT_BAND_BUCKETS; k++) {
        /* smallest size of bucket k: the inverse of cct_band_bucket */
        uint64_t low;
        if (k < 4) {
            low = k;
        } else {
            unsigned len = k / 4 + 2, sub = k % 4;
            low = (uint64_t)(4 + sub) << (len - 3);
        }
        ix->first[k] = first_above(keys, n, low);
    }
    ix->first[CCT_BAND_BUCKETS] = n - 1; /* the last rule ends at inf */
    ix->keys = keys;
    ix->n = n;
    return CCT_OK;
}

void cct_band_index_free(cct_band_index *ix)
{
    free((void *)ix->keys);
    ix->keys = NULL;
    ix->n = 0;
}
