/*
 * cct_parse.h - strict number parsing shared by every reader of text (cct_parse.c).
 *
 * Each function reads the whole NUL-terminated text or fails (returns false, *out untouched).
 */
#ifndef CCT_PARSE_H
#define CCT_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Decimal digits only (no sign, no spaces), no overflow. */
bool cct_parse_u64(const char *text, uint64_t *out);
/* Optional '-', decimal digits, within [min, max]. */
bool cct_parse_long(const char *text, long min, long max, long *out);
/* [+-]digits[.digits][e[+-]digits] or .digits...; finite.  No hex, inf or nan. */
bool cct_parse_double(const char *text, double *out);

#endif
