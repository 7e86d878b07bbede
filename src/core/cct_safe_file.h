/*
 * cct_safe_file.h - open and read a file that configures other people's jobs, refusing one
 * someone else could have planted or one that could hang or swamp the reader.
 *
 * A table decides which algorithms NCCL runs in every job that loads it.  The rules, by the
 * short names used in messages (docs/plugin.md, "Safe loading"):
 *   regular-file  after following links: no directory, FIFO, device or socket
 *   filesystem    not on a kernel interface (procfs, sysfs, ...; fstatfs), and not size 0
 *                 by fstat yet non-empty when read
 *   size          at most max_bytes (CCT_TABLE_MAX_FILE_BYTES for tables)
 *   mode          not writable by group or others
 *   owner         owned by root or by the effective user of this process
 *   directory     its folder is not writable by others unless it has the sticky bit
 * The rules that count are judged on fstat() of the opened descriptor, so the file cannot be
 * swapped between check and read.  CCLTUNE_TABLE_UNSAFE_OK=1 waives mode, owner and
 * directory (never regular-file, filesystem or size).  Nothing here prints; the only allocation is
 * the buffer cct_safe_read() returns.
 */
#ifndef CCT_SAFE_FILE_H
#define CCT_SAFE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"

typedef struct cct_safe_rules {
    uint64_t max_bytes;
    bool check_access; /* mode, owner and directory; false: waived (CCLTUNE_TABLE_UNSAFE_OK) */
} cct_safe_rules;

/* max_bytes as given; check_access unless CCLTUNE_TABLE_UNSAFE_OK is set to 1/true/yes/on. */
cct_safe_rules cct_safe_rules_default(uint64_t max_bytes);

/* Open path for reading under the rules.  On success *fd is an open descriptor (the
 * caller closes it).  On refusal CCT_EPERM and err = "PATH: unsafe file (rule NAME): ...";
 * CCT_EIO when it cannot be opened at all.  waived (may be NULL) receives the message of an
 * access rule that failed but was waived, and is cleared otherwise. */
cct_status cct_safe_open(const char *path, const cct_safe_rules *rules, int *fd, cct_error *err,
                         cct_error *waived);

/* cct_safe_open() and read the whole file: *data is malloc'ed (owned by the caller), NUL
 * terminated after *len bytes.  A file that grows past max_bytes while being read is refused
 * like one that was too large to begin with. */
cct_status cct_safe_read(const char *path, const cct_safe_rules *rules, char **data, size_t *len,
                         cct_error *err, cct_error *waived);

#endif
