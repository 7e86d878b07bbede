/*
 * cct_error.h - status codes and error messages shared by every ccltune module.
 *
 * Library code never prints: it returns a cct_status and, when the caller passed a
 * cct_error, fills it with one human-readable sentence.  Where the error comes from an
 * input file the message starts with "FILE:LINE:COLUMN: " (1-based, like a compiler), so
 * editors and CI logs can jump to it.  Only main() (or the plugin's logger) decides what
 * to do with the message.
 *
 * Ownership: a cct_error is a plain value owned by the caller; it holds no heap memory.
 */
#ifndef CCT_ERROR_H
#define CCT_ERROR_H

#include <stdarg.h>

typedef enum cct_status {
    CCT_OK = 0,
    CCT_EINVAL = -1,       /* bad argument or malformed input */
    CCT_ENOMEM = -2,       /* allocation failed */
    CCT_EIO = -3,          /* read/write/open failed */
    CCT_EPARSE = -4,       /* input could not be parsed (syntax) */
    CCT_ENOTFOUND = -5,    /* no such item (section, rule, run, file) */
    CCT_EUNSUPPORTED = -6, /* valid but not supported (format version, NCCL version) */
    CCT_ECUDA = -7,        /* CUDA runtime/driver error */
    CCT_ENCCL = -8,        /* NCCL returned an error */
    CCT_ESTORE = -9,       /* measurement store (SQLite) error */
    CCT_ETIMEOUT = -10,    /* watchdog fired */
    CCT_ECORRUPT = -11,    /* a collective produced wrong results */
    CCT_ENOGPU = -12,      /* no GPU present where one is needed */
    CCT_EPERM = -13,       /* refused for safety (permissions, ownership, size) */
} cct_status;

#define CCT_ERROR_MSG_MAX 1024

typedef struct cct_error {
    cct_status code;
    char msg[CCT_ERROR_MSG_MAX];
} cct_error;

/* Short name of a status ("invalid input", "I/O error", ...). Never NULL. */
const char *cct_strerror(cct_status code);

/* Reset err to CCT_OK with an empty message. err may be NULL. */
void cct_error_clear(cct_error *err);

/* Fill err (may be NULL) with code and a printf-style message; returns code so callers
 * can write `return cct_error_set(err, CCT_EINVAL, "...")`. */
cct_status cct_error_set(cct_error *err, cct_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, prefixed with "file:line:col: ". line and col are 1-based; 0 omits them. */
cct_status cct_error_at(cct_error *err, cct_status code, const char *file, unsigned line,
                        unsigned col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

cct_status cct_error_vat(cct_error *err, cct_status code, const char *file, unsigned line,
                         unsigned col, const char *fmt, va_list ap);

/* Prepend "prefix: " to an existing message (used to add context on the way up). */
void cct_error_prefix(cct_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
