/*
 * cct_fleet.h - a folder of tables for a fleet of boxes: which table serves a process.
 *
 * One container image often serves several kinds of box (H100 and H200 nodes, two NCCL
 * releases during an upgrade).  CCLTUNE_TABLE may then name a folder holding one table per
 * kind; every table whose fingerprint matches the process (cct_fingerprint_check) is a
 * candidate, and the most specific one wins, by this precedence:
 *   1. GPU: a table naming the GPU model and compute capability, over one naming only
 *      the model, over one naming only the capability, over one naming neither;
 *   2. NCCL: the exact release, over another patch release of the same major.minor
 *      (nearest patch first, then the newer), over "major.minor" only, over none stated;
 *   3. shared GPU: where NCCL_HOSTID is set, a shared-GPU table over a plain one;
 *   4. file name, bytewise: the first wins.
 * Two tables that tie on 1-3 and share a communicator shape are a configuration error
 * (cct_fleet_conflict; `ccltune validate DIR`).  Pure code, no logging; the folder listing
 * is the one function that touches the file system.
 */
#ifndef CCT_FLEET_H
#define CCT_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_error.h"
#include "cct_fingerprint.h"
#include "cct_table.h"

/* At most this many tables in a folder; further files are refused by cct_fleet_list. */
#define CCT_FLEET_MAX_FILES 256

/* Whether path names a folder of tables: a directory (links followed) whose own name does
 * not end in .yaml/.yml -- such a path is meant as one table, and is refused as one. */
bool cct_fleet_is_folder(const char *path);

/* The names (not paths) of dir's *.yaml and *.yml entries, hidden ones skipped, sorted
 * bytewise; *names is malloc'ed (cct_fleet_list_free).  Fails when dir cannot be read or
 * holds more than CCT_FLEET_MAX_FILES tables. */
cct_status cct_fleet_list(const char *dir, char ***names, size_t *n, cct_error *err);
void cct_fleet_list_free(char **names, size_t n);

/* How specific a table that matches a process is; compare with cct_fleet_rank_cmp. */
typedef struct cct_fleet_rank {
    int gpu;        /* 3 model and cc named, 2 model only, 1 cc only, 0 neither */
    int nccl;       /* 4 exact release, 3 other patch, 2 "major.minor" only, 1 another release
                     * the table was widened to (nccl_versions), 0 none */
    int patch_dist; /* |table's patch - running patch| when nccl == 3 */
    int patch;      /* the table's patch release when nccl == 3 */
    int shared;     /* 1: a shared-GPU table where NCCL_HOSTID is set */
} cct_fleet_rank;

cct_fleet_rank cct_fleet_rank_of(const cct_table *t, const cct_runtime *rt);
/* > 0 when a is preferred, < 0 when b is, 0 for a tie. */
int cct_fleet_rank_cmp(const cct_fleet_rank *a, const cct_fleet_rank *b);
/* "GPU and cc named, NCCL exact" and the like; returns buf. */
const char *cct_fleet_rank_text(const cct_fleet_rank *r, char *buf, size_t len);

#define CCT_FLEET_CLOSEST 3
typedef struct cct_fleet_choice {
    long chosen;                     /* index of the table to use; -1: none matches */
    long runner_up;                  /* the next matching table in precedence; -1: none */
    bool tie;                        /* runner_up ties with chosen: only file order decided */
    long closest[CCT_FLEET_CLOSEST]; /* when none matches: the nearest misses, nearest first */
    cct_fp_verdict closest_verdict[CCT_FLEET_CLOSEST];
    int n_closest;
} cct_fleet_choice;

/* Choose among n tables (in file-name order) for rt; has_shape[i]: table i has a section
 * for (rt->nranks, rt->nnodes).  A miss is nearer the further the fingerprint check got:
 * no section for the shape, then shared GPU, NCCL, compute capability, GPU model. */
void cct_fleet_choose(const cct_table *const *tables, const bool *has_shape, size_t n,
                      const cct_runtime *rt, cct_fleet_choice *out);

/* True when some process could match a and b with equal precedence at one communicator
 * shape, returned in *ranks, *nodes (the configuration error `validate DIR` reports). */
bool cct_fleet_conflict(const cct_table *a, const cct_table *b, int *ranks, int *nodes);

#endif
