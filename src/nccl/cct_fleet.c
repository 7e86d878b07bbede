/*
 * cct_fleet.c - choosing the table of a folder that serves a process (see cct_fleet.h).
 *
 * The precedence is a tuple compared field by field (cct_fleet_rank_cmp); the candidates
 * arrive in file-name order and a later one replaces the current choice only when strictly
 * preferred, so file order breaks ties.  Misses are ordered by how far the fingerprint
 * check got before it failed, so the WARN for "no table matches" lists the near misses an
 * operator most likely meant.
 */
#include "cct_fleet.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static bool is_table_name(const char *name)
{
    if (name[0] == '.')
        return false;
    const char *dot = strrchr(name, '.');
    return dot && (strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0);
}

bool cct_fleet_is_folder(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    return !(len >= 5 && strncasecmp(path + len - 5, ".yaml", 5) == 0) &&
           !(len >= 4 && strncasecmp(path + len - 4, ".yml", 4) == 0);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cct_fleet_list_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

cct_status cct_fleet_list(const char *dir, char ***names, size_t *n, cct_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return cct_error_set(err, CCT_EIO, "%s: cannot read the folder", dir);
    char **out = calloc(CCT_FLEET_MAX_FILES, sizeof *out);
    size_t k = 0;
    cct_status st = out ? CCT_OK : CCT_ENOMEM;
    struct dirent *e;
    while (st == CCT_OK && (e = readdir(d)) != NULL) {
        if (!is_table_name(e->d_name))
            continue;
        if (k == CCT_FLEET_MAX_FILES)
            st = cct_error_set(err, CCT_EINVAL, "%s: more than %d tables in the folder", dir,
                               CCT_FLEET_MAX_FILES);
        else if (!(out[k++] = strdup(e->d_name)))
            st = CCT_ENOMEM;
    }
    closedir(d);
    if (st != CCT_OK) {
        if (st == CCT_ENOMEM)
            cct_error_set(err, st, "%s: out of memory listing the folder", dir);
        cct_fleet_list_free(out, k);
        return st;
    }
    qsort(out, k, sizeof *out, by_name);
    *names = out;
    *n = k;
    return CCT_OK;
}

/* "2.28.9" states a patch release, "2.28" does not. */
static bool states_patch(const char *nccl)
{
    const char *dot = strchr(nccl, '.');
    return dot && strchr(dot + 1, '.');
}

cct_fleet_rank cct_fleet_rank_of(const cct_table *t, const cct_runtime *rt)
{
    const cct_fingerprint *fp = &t->fingerprint;
    cct_fleet_rank r = {0, 0, 0, 0, 0};
    r.gpu = (fp->gpu ? 2 : 0) + (fp->cc > 0 ? 1 : 0);
    int want = fp->nccl ? cct_nccl_version_parse(fp->nccl) : -1;
    if (want > 0 && want / 100 != rt->nccl_version / 100 && cct_fp_widened(fp, rt->nccl_version)) {
        r.nccl = 1; /* another release, which the table was only widened to */
    } else if (want > 0 && !states_patch(fp->nccl)) {
        r.nccl = 2;
    } else if (want > 0 && want == rt->nccl_version) {
        r.nccl = 4;
    } else if (want > 0) {
        r.nccl = 3;
        r.patch = want % 100;
        r.patch_dist = abs(r.patch - rt->nccl_version % 100);
    }
    r.shared = fp->ranks_per_gpu > 1 && rt->hostid_set;
    return r;
}

int cct_fleet_rank_cmp(const cct_fleet_rank *a, const cct_fleet_rank *b)
{
    if (a->gpu != b->gpu)
        return a->gpu - b->gpu;
    if (a->nccl != b->nccl)
        return a->nccl - b->nccl;
    if (a->patch_dist != b->patch_dist)
        return b->patch_dist - a->patch_dist; /* nearer is better */
    if (a->patch != b->patch)
        return a->patch - b->patch; /* then the newer */
    return a->shared - b->shared;
}

const char *cct_fleet_rank_text(const cct_fleet_rank *r, char *buf, size_t len)
{
    static const char *const gpu[] = {"any GPU", "cc named", "GPU named", "GPU and cc named"};
    static const char *const nccl[] = {"any NCCL", "NCCL widened to", "NCCL major.minor",
                                       "NCCL other patch", "NCCL exact"};
    snprintf(buf, len, "%s, %s%s", gpu[r->gpu & 3],
             nccl[r->nccl >= 0 && r->nccl <= 4 ? r->nccl : 0], r->shared ? ", shared-GPU" : "");
    return buf;
}

/* Smaller is nearer: how far the fingerprint check got before it failed. */
static int miss_distance(cct_fp_verdict v)
{
    switch (v) {
    case CCT_FP_TOPOLOGY:
        return 0;
    case CCT_FP_SHARED_GPU:
        return 1;
    case CCT_FP_NCCL:
    case CCT_FP_NO_NCCL:
        return 2;
    case CCT_FP_CC:
        return 3;
    case CCT_FP_GPU:
        return 4;
    default:
        return 5;
    }
}

static void add_closest(cct_fleet_choice *out, long i, cct_fp_verdict v)
{
    int k = out->n_closest;
    while (k > 0 && miss_distance(out->closest_verdict[k - 1]) > miss_distance(v)) {
        if (k < CCT_FLEET_CLOSEST) {
            out->closest[k] = out->closest[k - 1];
            out->closest_verdict[k] = out->closest_verdict[k - 1];
        }
        k--;
    }
    if (k >= CCT_FLEET_CLOSEST)
        return;
    out->closest[k] = i;
    out->closest_verdict[k] = v;
    if (out->n_closest < CCT_FLEET_CLOSEST)
        out->n_closest++;
}

void cct_fleet_choose(const cct_table *const *tables, const bool *has_shape, size_t n,
                      const cct_runtime *rt, cct_fleet_choice *out)
{
    memset(out, 0, sizeof *out);
    out->chosen = out->runner_up = -1;
    cct_fleet_rank best = {0, 0, 0, 0, 0}, second = best;
    for (size_t i = 0; i < n; i++) {
        cct_fp_verdict v = cct_fingerprint_check_shape(tables[i], rt, has_shape[i], NULL, 0);
        if (!cct_fp_usable(v)) {
            add_closest(out, (long)i, v);
            continue;
        }
        cct_fleet_rank r = cct_fleet_rank_of(tables[i], rt);
        if (out->chosen < 0 || cct_fleet_rank_cmp(&r, &best) > 0) {
            out->runner_up = out->chosen;
            second = best;
            out->chosen = (long)i;
            best = r;
        } else if (out->runner_up < 0 || cct_fleet_rank_cmp(&r, &second) > 0) {
            out->runner_up = (long)i;
            second = r;
        }
    }
    out->tie = out->runner_up >= 0 && cct_fleet_rank_cmp(&best, &second) == 0;
}

static bool common_shape(const cct_table *a, const cct_table *b, int *ranks, int *nodes)
{
    for (size_t i = 0; i < a->n_sections; i++)
        for (size_t j = 0; j < b->n_sections; j++)
            if (a->sections[i].ranks == b->sections[j].ranks &&
                a->sections[i].nodes == b->sections[j].nodes) {
                *ranks = a->sections[i].ranks;
                *nodes = a->sections[i].nodes;
                return true;
            }
    return false;
}

bool cct_fleet_conflict(const cct_table *a, const cct_table *b, int *ranks, int *nodes)
{
    /* Ranks tie only between identical fingerprints (GPU names compared as the check does),
     * so the process a's fingerprint describes is the one to try. */
    const cct_fingerprint *fa = &a->fingerprint;
    int r = 0, nd = 0;
    if (!common_shape(a, b, &r, &nd))
        return false;
    cct_runtime rt = {fa->gpu, fa->cc, fa->nccl ? cct_nccl_version_parse(fa->nccl) : 0,
                      r,       nd,     fa->ranks_per_gpu > 1};
    if (fa->nccl && rt.nccl_version <= 0)
        return false; /* a matches no process */
    if (!cct_fp_usable(cct_fingerprint_check(a, &rt, NULL, 0)) ||
        !cct_fp_usable(cct_fingerprint_check(b, &rt, NULL, 0)))
        return false;
    cct_fleet_rank ra = cct_fleet_rank_of(a, &rt), rb = cct_fleet_rank_of(b, &rt);
    if (cct_fleet_rank_cmp(&ra, &rb) != 0)
        return false;
    *ranks = r;
    *nodes = nd;
    return true;
}
