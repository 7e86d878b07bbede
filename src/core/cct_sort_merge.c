/*
 * cct_sort_merge.c - sort, then fold equal keys (cct_sort_merge.h).
 *
 * qsort, then one pass that keeps a write position: an item equal to the last one kept is
 * merged into it, any other is moved down to the next free place.
 */
#include <stdlib.h>
#include <string.h>

#include "cct_sort_merge.h"

size_t cct_sort_merge(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                      void (*merge)(void *dst, const void *src))
{
    if (n == 0)
        return 0;
    char *v = base;
    qsort(v, n, size, cmp);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && cmp(v + (w - 1) * size, v + i * size) == 0)
            merge(v + (w - 1) * size, v + i * size);
        else {
            if (w != i)
                memcpy(v + w * size, v + i * size, size);
            w++;
        }
    }
    return w;
}
