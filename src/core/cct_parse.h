/*
 * cct_parse.h - the one strict parser for text: numbers, byte sizes, comma lists and
 * enumerations (cct_parse.c), NCCL versions and version specs (cct_parse_versions.c).  Every flag,
 * log, CSV and environment reader uses it.
 *
 * The rules: the whole text or nothing (no spaces, no trailing text), decimal digits only
 * where an integer is expected (no '+', no hex, no overflow), plain decimal or exponent
 * form for reals (finite: no hex floats, inf or nan).  The bool functions leave *out
 * untouched on failure; the cct_status ones fill err with a sentence that names the flag.
 */
#ifndef CCT_PARSE_H
#define CCT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"

/* Decimal digits only (no sign, no spaces), no overflow. */
bool cct_parse_u64(const char *text, uint64_t *out);
/* Optional '-', decimal digits, within [min, max]. */
bool cct_parse_long(const char *text, long min, long max, long *out);
/* [+-]digits[.digits][e[+-]digits] or .digits...; finite.  No hex, inf or nan. */
bool cct_parse_double(const char *text, double *out);

/* A byte count: digits with an optional unit B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, in
 * any case, all powers of 1024 ("KB" is 1024, as nccl-tests reads it), or "inf"
 * (CCT_BYTES_INF).  No sign, no spaces, no fraction, no overflow. */
cct_status cct_parse_bytes(const char *text, uint64_t *out, cct_error *err);

/* Flag values.  flag is the name as the user typed it ("--cycles"); the errors read
 * "--cycles: '0' is not an integer in 2..1000". */
cct_status cct_parse_flag_long(const char *flag, const char *text, long min, long max, long *out,
                               cct_error *err);
/* A real in [min, max]; a leading '+' is refused, '-' only where min < 0. */
cct_status cct_parse_flag_double(const char *flag, const char *text, double min, double max,
                                 double *out, cct_error *err);
/* A fraction in [0, 1): "--tie: '1' is not a fraction in [0, 1)". */
cct_status cct_parse_flag_fraction(const char *flag, const char *text, double *out, cct_error *err);
/* A byte size (cct_parse_bytes, "inf" refused) in [min, max]. */
cct_status cct_parse_flag_size(const char *flag, const char *text, uint64_t min, uint64_t max,
                               uint64_t *out, cct_error *err);

/* One spelling of an enumeration; a table ends with {NULL, 0}. */
typedef struct cct_enum_name {
    const char *name;
    int value;
} cct_enum_name;

/* text as one of names (case-insensitive); the error lists them: "--rules: 'maybe' is not
 * on or off". */
cct_status cct_parse_enum(const char *flag, const char *text, const cct_enum_name *names, int *out,
                          cct_error *err);

/* A comma-separated list: fn is called on each item, in order, with its index; it returns
 * a status and fills err.  Empty text, empty items ("a,,b", "a,") and more than max_items
 * items are refused. */
typedef cct_status (*cct_list_item_fn)(void *ctx, const char *flag, const char *item, size_t index,
                                       cct_error *err);
cct_status cct_parse_list(const char *flag, const char *text, size_t max_items, cct_list_item_fn fn,
                          void *ctx, cct_error *err);

/* The error for getopt_long's ':' (a flag without its value; optstring must start with ':')
 * or '?' (an unknown flag, or a value given to a flag that takes none) return c, from the
 * getopt globals: "--store needs a value", "unknown flag '--bogus'". */
cct_status cct_parse_flag_error(int c, char *const *argv, cct_error *err);

/* An NCCL version "MAJOR.MINOR[.PATCH]" as NCCL_VERSION_CODE ("2.28.9" -> 22809, "2.28" ->
 * 22800); -1 when malformed (major 1..99, minor and patch 0..99, digits only). */
int cct_parse_nccl_version(const char *text);

/* The NCCL releases a table applies to beyond its own (`--nccl-versions`,
 * fingerprint.nccl_versions): a comma list of versions and LOW..HIGH ranges, each an
 * inclusive range of NCCL_VERSION_CODEs ("2.28" is 22800..22899; cct_parse_versions.c). */
#define CCT_NCCL_VERSIONS_MAX 8
typedef struct cct_nccl_versions {
    size_t n;
    int lo[CCT_NCCL_VERSIONS_MAX], hi[CCT_NCCL_VERSIONS_MAX];
} cct_nccl_versions;
/* Parse a spec; what names it in errors ("--nccl-versions: '2.x' is not an NCCL version
 * ...").  out may be NULL (validation only). */
cct_status cct_parse_nccl_versions(const char *what, const char *text, cct_nccl_versions *out,
                                   cct_error *err);
/* True when code (NCCL_VERSION_CODE) is in one of v's ranges. */
bool cct_nccl_versions_contain(const cct_nccl_versions *v, int code);

#endif
