/*
 * cct_ll128.h - NCCL's rule for enabling the LL128 protocol by default, per NCCL release.
 *
 * LL128 relies on 128-byte stores arriving whole; NCCL enables it by default only on the
 * GPU generations and link types it has validated, because elsewhere it can corrupt data
 * silently.  The rule lives in NCCL's src/graph/tuning.cc and changed over time (which
 * compute capabilities, how far over PCIe/PXN/C2C, mixed GPU generations).  ccltune must
 * never select LL128 where the running NCCL would not have enabled it by itself, so the
 * rule is restated here as a pure function of the facts it depends on.  `ccltune probe`
 * evaluates it with the real link paths and records the verdict in the table; the plugin
 * evaluates the parts it can know at run time (NCCL version, this GPU) and also obeys the
 * table's verdict.  docs/plugin.md lists the rule per release.
 *
 * Path types: NCCL's numeric PATH_* values changed between releases (C2C was inserted in
 * 2.26, P2C in 2.27, and P2C moved before PXN in 2.27.5), so cct_path is our own enum in
 * the order of the newest releases; cct_path_from_nccl() converts a release's number.
 */
#ifndef CCT_LL128_H
#define CCT_LL128_H

#include <stdbool.h>
#include <stddef.h>

/* Link path kinds between two devices, best first (the order of NCCL >= 2.27.5). */
typedef enum cct_path {
    CCT_PATH_UNKNOWN = -1, /* not known to the caller: that part of the rule is not checked */
    CCT_PATH_LOC = 0,      /* the device itself */
    CCT_PATH_NVL = 1,      /* NVLink */
    CCT_PATH_NVB = 2,      /* NVLink through an intermediate GPU */
    CCT_PATH_C2C = 3,      /* chip-to-chip link to the CPU (Grace); NCCL >= 2.26 */
    CCT_PATH_PIX = 4,      /* at most one PCIe bridge */
    CCT_PATH_PXB = 5,      /* several PCIe bridges, no host bridge */
    CCT_PATH_P2C = 6,      /* GPU to NIC over C2C then PCIe; NCCL >= 2.27 */
    CCT_PATH_PXN = 7,      /* GPU to NIC through an intermediate GPU */
    CCT_PATH_PHB = 8,      /* through a PCIe host bridge (the CPU) */
    CCT_PATH_SYS = 9,      /* across the CPU interconnect between NUMA nodes */
    CCT_PATH_NET = 10,     /* over the network */
    CCT_PATH_DIS = 11,     /* disconnected */
    CCT_NUM_PATHS = 12
} cct_path;

/* NCCL's spelling ("NVL", "PXB", ...), "?" out of range. */
const char *cct_path_name(int path);
/* Reverse of cct_path_name, case-insensitive; CCT_PATH_UNKNOWN when unknown. */
int cct_path_from_name(const char *name);
/* Convert NCCL's numeric PATH_* value of release `nccl_version` (NCCL_VERSION_CODE, e.g.
 * 22809) to cct_path; CCT_PATH_UNKNOWN for values that release does not define. */
int cct_path_from_nccl(int nccl_version, int nccl_path);
/* Whether release nccl_version has that path kind at all (C2C from 2.26, P2C from 2.27). */
bool cct_path_exists(int nccl_version, int path);

/* Everything NCCL's rule looks at.  Fields marked "unknown" let a caller that cannot know
 * a fact skip that check (and take responsibility for it elsewhere). */
typedef struct cct_ll128_query {
    int nccl_version;   /* NCCL_VERSION_CODE of the running NCCL: 22809 for 2.28.9 */
    int min_cc, max_cc; /* lowest/highest compute capability * 10 over the communicator */
    int intra_path;     /* cct_path of the algorithm's intra-node graph, or CCT_PATH_UNKNOWN */
    int inter_path;     /* cct_path of the algorithm's inter-node graph, or CCT_PATH_UNKNOWN */
    int ll128_c2c;      /* NCCL_LL128_C2C (NCCL >= 2.27): 0 or 1; -1 = the release's default */
    int cudart_version; /* CUDART_VERSION NCCL was built with (11080); 0 = unknown */
    int coll;           /* cct_coll */
    int algo;           /* cct_algo */
    int nranks;
} cct_ll128_query;

/* A query with every fact unknown (paths unknown, C2C default, CUDA version unknown). */
cct_ll128_query cct_ll128_query_blank(void);

typedef enum cct_ll128_verdict {
    CCT_LL128_BLOCKED = 0, /* NCCL would not enable LL128 here by default */
    CCT_LL128_ALLOWED = 1, /* NCCL would enable it (for the facts that were checked) */
    /* Allowed unless NCCL was built with CUDA 11.8: its one exception (compute capability 9.0,
     * ring allreduce on 2 ranks) depends on a fact the caller said it does not know. */
    CCT_LL128_UNLESS_CUDA_11_8 = 2
} cct_ll128_verdict;

/* Apply the rule of the release q->nccl_version.  reason (may be NULL) receives one
 * sentence saying why ("NCCL 2.22 enables LL128 only on compute capability 7.0, 8.0 and 9.0;
 * this is 8.6").  Releases before 2.19 are blocked; releases newer than the newest known
 * (2.30) get the newest known rule, and the reason says so. */
cct_ll128_verdict cct_ll128_check(const cct_ll128_query *q, char *reason, size_t len);

#endif
