/*
 * cct_grow.c - growing a heap array by doubling, without overflow (see cct_grow.h).
 */
#include "cct_grow.h"

#include <stdint.h>
#include <stdlib.h>

bool cct_grow(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return false;
        ncap *= 2;
    }
    if (elem == 0 || ncap > SIZE_MAX / elem)
        return false;
    void *p = realloc(*array, ncap * elem);
    if (!p)
        return false;
    *array = p;
    *cap = ncap;
    return true;
}
