/*
 * cct_fingerprint.h - does a table belong on this machine?  Pure matching of a table's
 * recorded fingerprint against the facts of the running process.
 *
 * A table is only valid where it was measured: the same GPU model and compute capability,
 * the same NCCL major.minor (NCCL's algorithms and cost model change between minor
 * releases; a different patch release is accepted and reported) or a release the table was
 * knowingly widened to (fingerprint.nccl_versions, `--nccl-versions`), and a communicator shape
 * (ranks, nodes) the table has a section for.  Tables measured with several rank processes
 * sharing one GPU (fingerprint ranks_per_gpu > 1: NCCL_HOSTID per rank, ranks joined by
 * sockets) describe a topology no real deployment has, so they match only in a process
 * that has NCCL_HOSTID set -- the one way that topology is created.
 *
 * The plugin gathers the runtime facts (plugin_device.c) and calls this; `ccltune explain`
 * and the tests call it with facts of their own.  Nothing here allocates or logs.
 */
#ifndef CCT_FINGERPRINT_H
#define CCT_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_table.h"

/* Facts about the running process.  The strings are borrowed for the call. */
typedef struct cct_runtime {
    const char *gpu;  /* "NVIDIA H200" as the CUDA driver names it; NULL when unknown */
    int cc;           /* compute capability * 10; <= 0 when unknown */
    int nccl_version; /* NCCL_VERSION_CODE (22809); <= 0 when unknown */
    int nranks, nnodes;
    bool hostid_set; /* NCCL_HOSTID is set in the environment */
} cct_runtime;

typedef enum cct_fp_verdict {
    CCT_FP_MATCH = 0,
    CCT_FP_MATCH_OTHER_PATCH = 1, /* matches; the NCCL patch release differs, or the running
                                   * NCCL is one the table was widened to (nccl_versions) */
    CCT_FP_NO_GPU = 2,            /* the GPU of this process could not be identified */
    CCT_FP_GPU = 3,               /* different GPU model */
    CCT_FP_CC = 4,                /* different compute capability */
    CCT_FP_NO_NCCL = 5,           /* the running NCCL's version could not be found */
    CCT_FP_NCCL = 6,              /* different NCCL major.minor (or unreadable in the table) */
    CCT_FP_SHARED_GPU = 7,        /* measured with ranks sharing a GPU; NCCL_HOSTID not set */
    CCT_FP_TOPOLOGY = 8,          /* no section for this (ranks, nodes) */
    CCT_FP_NUM_VERDICTS = 9
} cct_fp_verdict;

/* True for the verdicts under which the table may be applied. */
bool cct_fp_usable(cct_fp_verdict verdict);
/* Short machine-greppable name: "match", "gpu-mismatch", "shared-gpu", ... */
const char *cct_fp_verdict_name(cct_fp_verdict verdict);

/* Compare; msg (may be NULL) receives one sentence naming both sides of a difference.
 * Fingerprint fields the table leaves unset (gpu NULL, cc 0) are not checked. */
cct_fp_verdict cct_fingerprint_check(const cct_table *table, const cct_runtime *rt, char *msg,
                                     size_t len);
/* The same, with whether the table has a section for (rt->nranks, rt->nnodes) given by the
 * caller (the plugin's index knows in O(log n); cct_fingerprint_check scans the sections). */
cct_fp_verdict cct_fingerprint_check_shape(const cct_table *table, const cct_runtime *rt,
                                           bool has_shape, char *msg, size_t len);

/* True when the table's nccl_versions (NULL: none) contains nccl_version (NCCL_VERSION_CODE). */
bool cct_fp_widened(const cct_fingerprint *fp, int nccl_version);

/* "2.28.9" -> 22809, "2.28" -> 22800 (NCCL_VERSION_CODE); -1 when malformed. */
int cct_nccl_version_parse(const char *text);
/* 22809 -> "2.28.9"; returns buf. */
const char *cct_nccl_version_format(int code, char *buf, size_t len);

#endif
