/*
 * cct_sort_merge.h - sort an array and fold the items with equal keys into one: how the
 * recordings are reduced (the import's points, the audit's lines, the job's size
 * profile), so that any number of rows costs O(n log n); and the three-way comparisons
 * their comparators are built from.
 */
#ifndef CCT_SORT_MERGE_H
#define CCT_SORT_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* Three-way comparisons for the comparators: -1, 0 or 1 as a is below, equal to or above b. */
static inline int cct_cmp_int(long long a, long long b)
{
    return (a > b) - (a < b);
}
static inline int cct_cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

/* Sort base[0..n) (items of size bytes) by cmp, then fold each run of items that cmp calls
 * equal into the first of the run with merge(first, other) and close the gaps.  qsort is
 * not stable: merge must not care which of the equal items survives.  Returns how many
 * items are left at the front of base; the rest are stale. */
size_t cct_sort_merge(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                      void (*merge)(void *dst, const void *src));

#endif
