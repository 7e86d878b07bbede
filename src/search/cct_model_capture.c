/*
 * cct_model_capture.c - the CPU half of capturing NCCL's model printout during a search
 * (see cct_model_capture.h): the probe's folder, its NCCL_DEBUG environment and collecting
 * its files into one log that cct_nccl_log_parse reads.  The probe communicator itself is
 * cct_nccl_probe_comm (cct_backend_nccl.c).
 */
#include "cct_model_capture.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_import.h"
#include "cct_nccl_log.h"

#define RANK_FILE "%s/rank-%d.log"

cct_status cct_model_capture_mkdir(char *dir, size_t len, cct_error *err)
{
    const char *base = getenv("TMPDIR");
    int n = snprintf(dir, len, "%s/ccltune-nccl-model-XXXXXX", base && *base ? base : "/tmp");
    if (n < 0 || (size_t)n >= len)
        return cct_error_set(err, CCT_EINVAL, "TMPDIR is too long for the NCCL log folder");
    if (!mkdtemp(dir))
        return cct_error_set(err, CCT_EIO, "cannot create a folder for NCCL's log in %s: %s",
                             base && *base ? base : "/tmp", strerror(errno));
    return CCT_OK;
}

void cct_model_capture_setenv(const char *dir, int rank)
{
    /* NCCL_DEBUG_FILE expands %h and %p: escape every '%' of the folder */
    char path[4200];
    size_t k = 0;
    for (const char *p = dir; *p && k + 3 < sizeof path; p++) {
        if (*p == '%')
            path[k++] = '%';
        path[k++] = *p;
    }
    snprintf(path + k, sizeof path - k, "/rank-%d.log", rank);
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TUNING", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    unsetenv("NCCL_DEBUG_TIMESTAMP_LEVELS");
    unsetenv("NCCL_DEBUG_TIMESTAMP_FORMAT");
}

void cct_model_capture_remove(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        int r;
        char tail[8];
        if (sscanf(e->d_name, "rank-%d.lo%7s", &r, tail) != 2 || strcmp(tail, "g") != 0)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Append rank r's file to *buf (absent files of ranks other than 0 are skipped). */
static cct_status append_rank(const char *dir, int r, char **buf, size_t *len, cct_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, RANK_FILE, dir, r);
    if (r != 0 && access(path, F_OK) != 0)
        return CCT_OK;
    char *data = NULL;
    size_t n = 0;
    cct_status st = cct_read_file(path, &data, &n, err);
    if (st != CCT_OK)
        return r == 0 ? cct_error_set(err, CCT_ENOTFOUND,
                                      "NCCL wrote no log for rank 0 (%s): was NCCL_DEBUG_FILE "
                                      "honoured?",
                                      path)
                      : st;
    char *grown = realloc(*buf, *len + n + 2);
    if (!grown) {
        free(data);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    memcpy(grown + *len, data, n);
    *len += n;
    if (n && grown[*len - 1] != '\n')
        grown[(*len)++] = '\n';
    grown[*len] = '\0';
    *buf = grown;
    free(data);
    return CCT_OK;
}

cct_status cct_model_capture_collect(const char *dir, int ranks, char **text, cct_error *err)
{
    *text = NULL;
    char *buf = NULL;
    size_t len = 0;
    cct_status st = CCT_OK;
    for (int r = 1; st == CCT_OK && r < ranks; r++)
        st = append_rank(dir, r, &buf, &len, err);
    if (st == CCT_OK)
        st = append_rank(dir, 0, &buf, &len, err);
    cct_model_capture_remove(dir);
    if (st == CCT_OK) {
        cct_nccl_log *log = malloc(sizeof *log);
        st = log ? cct_nccl_log_parse(buf, "NCCL's printout at init", log, err)
                 : cct_error_set(err, CCT_ENOMEM, "out of memory");
        if (st == CCT_OK && log->topo.n_ranks != ranks)
            st = cct_error_set(err, CCT_EPARSE,
                               "NCCL's printout at init describes %d ranks, the run has %d",
                               log->topo.n_ranks, ranks);
        free(log);
    }
    if (st != CCT_OK) {
        free(buf);
        return st;
    }
    *text = buf;
    return CCT_OK;
}
