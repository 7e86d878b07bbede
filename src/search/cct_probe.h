/*
 * cct_probe.h - the hardware fingerprint of this machine: GPUs, how they are linked, NICs,
 * NCCL and CUDA versions, and NCCL's LL128 verdict for the topology being measured.
 *
 * GPUs and peer access come from the CUDA runtime; NVLink state from NVML, opened at run
 * time (a box without NVML still probes); PCIe paths between GPUs and from GPUs to NICs
 * from hwloc's I/O topology, classified the way NCCL names paths (PIX, PXB, PHB, SYS).
 * The LL128 verdict applies cct_ll128_check() to the paths the measured communicator will
 * use: the worst GPU-to-GPU path inside a node and, with several nodes, the GPU-to-NIC path
 * (NET when ranks are joined over sockets, which is how shared-GPU ranks talk).
 */
#ifndef CCT_PROBE_H
#define CCT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cct_error.h"
#include "cct_store.h"

#define CCT_PROBE_MAX_GPUS 64
#define CCT_PROBE_MAX_NICS 32

typedef struct cct_probe_gpu {
    char name[256];
    int cc;          /* 90 for 9.0 */
    char bus_id[32]; /* "0000:19:00.0" */
    size_t mem_bytes;
    int sms;
    int nvlinks;  /* active NVLinks (NVML); -1 when NVML is unavailable */
    int numa;     /* NUMA node of the GPU's PCIe root; -1 unknown */
    int nic_path; /* cct_path to the closest NIC; CCT_PATH_UNKNOWN without NICs */
} cct_probe_gpu;

typedef struct cct_probe_info {
    int n_gpus;
    cct_probe_gpu gpus[CCT_PROBE_MAX_GPUS];
    int path[CCT_PROBE_MAX_GPUS][CCT_PROBE_MAX_GPUS]; /* cct_path between GPUs */
    int n_nics;
    char nics[CCT_PROBE_MAX_NICS][64];
    char nccl[32];
    int nccl_code; /* NCCL_VERSION_CODE of the library linked: 22809 */
    int nccl_cuda; /* CUDA version NCCL was built with (13000); 0 unknown */
    char cuda_driver[32];
    char cuda_runtime[32];
    char host[128];
    bool nvml; /* NVML answered */
} cct_probe_info;

/* The CUDA version the linked NCCL was built with (13000 for "+cuda13.0"), read from the
 * version string inside the library file; 0 when it cannot be found.  Needs no GPU. */
int cct_probe_nccl_cuda(void);

/* Collect everything.  CCT_ENOGPU (with a message saying so) where no GPU is visible. */
cct_status cct_probe_collect(cct_probe_info *info, cct_error *err);

/* The verdict NCCL would reach for a communicator of `ranks` ranks on `nodes` nodes with
 * `ranks_per_gpu` processes per GPU; reason explains it in one sentence. */
bool cct_probe_ll128(const cct_probe_info *info, int ranks, int nodes, int ranks_per_gpu,
                     char *reason, size_t len);

/* Link kind label of the measured topology: "socket" (shared GPU), "nvlink", "pcie", "net". */
const char *cct_probe_links(const cct_probe_info *info, int nodes, int ranks_per_gpu);

/* The store's fingerprint record for that topology. */
void cct_probe_fingerprint(const cct_probe_info *info, int ranks, int nodes, int ranks_per_gpu,
                           cct_store_fingerprint *fp);

/* Human report (the default output of `ccltune probe`) and JSON (--json). */
void cct_probe_print(FILE *out, const cct_probe_info *info, int ranks, int nodes,
                     int ranks_per_gpu);
void cct_probe_print_json(FILE *out, const cct_probe_info *info, int ranks, int nodes,
                          int ranks_per_gpu);
/* The same JSON object with the measured link matrix (cct_probe_links.h) as "link_matrix";
 * links NULL: exactly cct_probe_print_json's. */
struct cct_links;
void cct_probe_print_json_links(FILE *out, const cct_probe_info *info, int ranks, int nodes,
                                int ranks_per_gpu, const struct cct_links *links);

#endif
