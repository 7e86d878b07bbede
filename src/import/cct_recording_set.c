/*
 * cct_recording_set.c - load the recordings a command line names (files, or folders of
 * *.rec files) and merge their rows into the job's size profile (cct_recording_set.h).
 *
 * Folders are listed with readdir and their *.rec names sorted, so the same folder gives
 * the same order (and the same search plan in every rank process).  The profile is built
 * like the audit's lines: one entry per row, sorted, equal keys merged.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cct_grow.h"
#include "cct_names.h"
#include "cct_recording_set.h"
#include "cct_sort_merge.h"

typedef struct name_list {
    char **items;
    size_t n, cap;
} name_list;

static bool push(name_list *l, char *s)
{
    if (!s || !cct_grow((void **)&l->items, &l->cap, l->n + 1, sizeof *l->items)) {
        free(s);
        return false;
    }
    l->items[l->n++] = s;
    return true;
}

static void free_names(name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_rec_name(const char *name)
{
    size_t len = strlen(name);
    return len > 4 && name[0] != '.' && strcmp(name + len - 4, ".rec") == 0;
}

/* A folder's *.rec files, sorted, appended to l. */
static cct_status list_folder(const char *path, name_list *l, cct_error *err)
{
    DIR *d = opendir(path);
    if (!d)
        return cct_error_set(err, CCT_EIO, "%s: cannot open the folder: %s", path, strerror(errno));
    size_t first = l->n;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d))) {
        if (!is_rec_name(e->d_name))
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *full = malloc(len);
        if (full)
            snprintf(full, len, "%s/%s", path, e->d_name);
        ok = push(l, full);
    }
    closedir(d);
    if (!ok)
        return cct_error_set(err, CCT_ENOMEM, "recordings: out of memory");
    if (l->n == first)
        return cct_error_set(err, CCT_EIO, "%s: no recordings (*.rec) in this folder", path);
    qsort(l->items + first, l->n - first, sizeof *l->items, cmp_str);
    return CCT_OK;
}

static cct_status expand(const char *const *paths, size_t n, name_list *l, cct_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            cct_status s = list_folder(paths[i], l, err);
            if (s != CCT_OK)
                return s;
        } else if (!push(l, strdup(paths[i])))
            return cct_error_set(err, CCT_ENOMEM, "recordings: out of memory");
    }
    return CCT_OK;
}

cct_status cct_recording_set_load(const char *const *paths, size_t n, cct_recording_set *out,
                                  cct_error *err)
{
    memset(out, 0, sizeof *out);
    name_list l = {0};
    cct_status st = expand(paths, n, &l, err);
    if (st == CCT_OK && l.n && !(out->recs = calloc(l.n, sizeof *out->recs)))
        st = cct_error_set(err, CCT_ENOMEM, "recordings: out of memory");
    for (size_t i = 0; st == CCT_OK && i < l.n; i++)
        if ((st = cct_recording_load_file(l.items[i], &out->recs[i], err)) == CCT_OK)
            out->n++;
    free_names(&l);
    if (st != CCT_OK)
        cct_recording_set_destroy(out);
    return st;
}

void cct_recording_set_destroy(cct_recording_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        cct_recording_destroy(&set->recs[i]);
    free(set->recs);
    memset(set, 0, sizeof *set);
}

static int cmp_size(const void *pa, const void *pb)
{
    const cct_rec_size *a = pa, *b = pb;
    int c;
    if ((c = cct_cmp_int(a->coll, b->coll)) || (c = cct_cmp_int(a->ranks, b->ranks)) ||
        (c = cct_cmp_int(a->nodes, b->nodes)))
        return c;
    return cct_cmp_u64(a->bytes, b->bytes);
}

static void add_size(void *pd, const void *ps)
{
    cct_rec_size *dst = pd;
    const cct_rec_size *src = ps;
    dst->calls += src->calls;
    dst->timed += src->timed;
    dst->total_ns += src->total_ns;
}

cct_status cct_recording_sizes(const cct_recording *recs, size_t n, cct_rec_size **out,
                               size_t *n_out, cct_error *err)
{
    *out = NULL;
    *n_out = 0;
    size_t total = cct_recording_row_count(recs, n);
    cct_rec_size *v = total ? calloc(total, sizeof *v) : NULL;
    if (total && !v)
        return cct_error_set(err, CCT_ENOMEM, "recordings: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < recs[i].n_comms; c++) {
            const cct_rec_comm *m = &recs[i].comms[c];
            for (size_t r = 0; r < m->n_rows; r++) {
                const cct_rec_row *row = &m->rows[r];
                if (row->coll < 0 || row->coll >= CCT_NUM_COLLS || row->bytes == 0)
                    continue;
                v[k++] = (cct_rec_size){row->coll,  m->ranks,   m->nodes,     row->bytes,
                                        row->calls, row->timed, row->total_ns};
            }
        }
    size_t w = cct_sort_merge(v, k, sizeof *v, cmp_size, add_size);
    if (!w) {
        free(v);
        return CCT_OK;
    }
    *out = v;
    *n_out = w;
    return CCT_OK;
}
