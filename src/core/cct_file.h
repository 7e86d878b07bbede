/*
 * cct_file.h - read a whole file into memory (at most CCT_READ_MAX_BYTES).
 *
 * Ownership: *data is malloc'ed by cct_read_file, NUL terminated after len bytes, and owned
 * by the caller; on failure *data is NULL and err says why, naming the path.
 */
#ifndef CCT_FILE_H
#define CCT_FILE_H

#include <stddef.h>

#include "cct_error.h"

/* Inputs larger than this are refused before parsing. */
#define CCT_READ_MAX_BYTES ((size_t)256 << 20)

cct_status cct_read_file(const char *path, char **data, size_t *len, cct_error *err);

#endif
