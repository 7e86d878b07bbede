/*
 * cct_error.c - formatting of error values (see cct_error.h).
 *
 * Messages are bounded (CCT_ERROR_MSG_MAX) and truncated rather than allocated, so an
 * error can be reported even when memory is exhausted, and so the plugin can format an
 * error on any thread without touching the heap.
 */
#include "cct_error.h"

#include <stdio.h>
#include <string.h>

const char *cct_strerror(cct_status code)
{
    switch (code) {
    case CCT_OK:
        return "success";
    case CCT_EINVAL:
        return "invalid input";
    case CCT_ENOMEM:
        return "out of memory";
    case CCT_EIO:
        return "I/O error";
    case CCT_EPARSE:
        return "parse error";
    case CCT_ENOTFOUND:
        return "not found";
    case CCT_EUNSUPPORTED:
        return "unsupported";
    case CCT_ECUDA:
        return "CUDA error";
    case CCT_ENCCL:
        return "NCCL error";
    case CCT_ESTORE:
        return "measurement store error";
    case CCT_ETIMEOUT:
        return "timed out";
    case CCT_ECORRUPT:
        return "wrong results";
    case CCT_ENOGPU:
        return "no GPU";
    case CCT_EPERM:
        return "refused";
    }
    return "unknown error";
}

void cct_error_clear(cct_error *err)
{
    if (err) {
        err->code = CCT_OK;
        err->msg[0] = '\0';
    }
}

cct_status cct_error_vat(cct_error *err, cct_status code, const char *file, unsigned line,
                         unsigned col, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    size_t used = 0;
    int n = 0;
    if (file && line && col)
        n = snprintf(err->msg, sizeof err->msg, "%s:%u:%u: ", file, line, col);
    else if (file && line)
        n = snprintf(err->msg, sizeof err->msg, "%s:%u: ", file, line);
    else if (file)
        n = snprintf(err->msg, sizeof err->msg, "%s: ", file);
    else
        err->msg[0] = '\0';
    if (n > 0)
        used = (size_t)n < sizeof err->msg ? (size_t)n : sizeof err->msg - 1;
    vsnprintf(err->msg + used, sizeof err->msg - used, fmt, ap);
    return code;
}

cct_status cct_error_set(cct_error *err, cct_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cct_error_vat(err, code, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

cct_status cct_error_at(cct_error *err, cct_status code, const char *file, unsigned line,
                        unsigned col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cct_error_vat(err, code, file, line, col, fmt, ap);
    va_end(ap);
    return code;
}

void cct_error_prefix(cct_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* shift the old message right and put the prefix in front, truncating at the end */
    size_t plen = strnlen(prefix, sizeof prefix);
    size_t cap = sizeof err->msg - 1;
    if (plen + 2 > cap)
        return;
    size_t olen = strnlen(err->msg, cap);
    if (olen > cap - plen - 2)
        olen = cap - plen - 2;
    memmove(err->msg + plen + 2, err->msg, olen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen] = ':';
    err->msg[plen + 1] = ' ';
    err->msg[plen + 2 + olen] = '\0';
}
