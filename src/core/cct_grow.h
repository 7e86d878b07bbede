/*
 * cct_grow.h - growing a heap array by doubling, without overflow: the one helper the
 * importers (nccl-tests text, JSON) and the nccl-tests run model share.
 */
#ifndef CCT_GROW_H
#define CCT_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Make *array (of *cap items of elem bytes) hold at least need items: capacity doubles from
 * 16 until it does.  false (and *array, *cap untouched) when the size would overflow or
 * realloc fails. */
bool cct_grow(void **array, size_t *cap, size_t need, size_t elem);

#endif
