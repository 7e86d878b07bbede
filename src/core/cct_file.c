/*
 * cct_file.c - read a whole input file into memory, bounded.
 *
 * Importers, the NCCL log reader and the search's model capture read foreign files whole
 * and parse them from memory; this is the one place that reads them, with one size cap and
 * one wording of the errors.  (Tables go through cct_safe_file.c instead, which adds the
 * plugin's ownership and permission rules.)
 */
#include "cct_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cct_status cct_read_file(const char *path, char **data, size_t *len, cct_error *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cct_error_set(err, CCT_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 0, n = 0;
    char *buf = NULL;
    cct_status rc = CCT_OK;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 65536 + 1;
            if (ncap > CCT_READ_MAX_BYTES + 65536 + 1)
                ncap = CCT_READ_MAX_BYTES + 65536 + 1;
            char *p = realloc(buf, ncap);
            if (!p) {
                rc = cct_error_set(err, CCT_ENOMEM, "%s: out of memory reading it", path);
                break;
            }
            buf = p;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (n > CCT_READ_MAX_BYTES) {
            rc = cct_error_set(err, CCT_EINVAL, "%s: larger than %zu MiB: too large to read", path,
                               CCT_READ_MAX_BYTES >> 20);
            break;
        }
        if (got == 0) {
            if (ferror(f))
                rc = cct_error_set(err, CCT_EIO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc != CCT_OK) {
        free(buf);
        return rc;
    }
    if (!buf && !(buf = malloc(1)))
        return cct_error_set(err, CCT_ENOMEM, "%s: out of memory", path);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return CCT_OK;
}
