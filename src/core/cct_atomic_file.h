/*
 * cct_atomic_file.h - replace a file atomically: write a temporary file beside it, then
 * rename it over the target, so readers see the old content or the new, never a part.
 *
 * What a crash leaves is bounded.  Where the file system offers O_TMPFILE the temporary file
 * has no name while it is written (kill -9 leaves nothing) and gets one ("." NAME ".tmp" and
 * six characters, beside NAME) only for the instant before the rename.  Elsewhere it is made
 * with that name by mkostemp.  Either way the writer holds an flock on it, and every open
 * first removes the temporary files of that name pattern that no live writer holds: what a
 * killed writer left does not outlive the next write.
 *
 * Usage: cct_atomic_open, write to a.f, then cct_atomic_commit (or cct_atomic_abort).  Both
 * end the object: they close a.f and free what open allocated.
 */
#ifndef CCT_ATOMIC_FILE_H
#define CCT_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cct_error.h"

typedef struct cct_atomic_file {
    FILE *f;      /* write the new content here */
    char *path;   /* the target */
    char *dir;    /* its folder */
    char *tmp;    /* the temporary file's name; with O_TMPFILE set only at commit */
    bool unnamed; /* O_TMPFILE: linked to tmp at commit */
} cct_atomic_file;

/* Start replacing path; the new file gets permission bits mode (not masked by umask).
 * Errors (CCT_EIO, CCT_ENOMEM) name path. */
cct_status cct_atomic_open(cct_atomic_file *a, const char *path, mode_t mode, cct_error *err);
/* Flush, fsync, rename over the target, fsync the folder.  On failure the target is as it
 * was and the temporary file is gone. */
cct_status cct_atomic_commit(cct_atomic_file *a, cct_error *err);
/* Give up: the target is as it was and the temporary file is gone. */
void cct_atomic_abort(cct_atomic_file *a);

/* Remove the temporary files of path's name pattern that no live writer holds; returns how
 * many.  cct_atomic_open calls it. */
int cct_atomic_remove_stale(const char *path);

#endif
