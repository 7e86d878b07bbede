/*
 * cct_probe_links.h - the measured link matrix of `ccltune probe --links`: what the links
 * of this box deliver, next to what NCCL's topology says they are (cct_probe.h).
 *
 * Measured (cct_probe_links_measure, GPU): every ordered GPU pair's copy bandwidth
 * (cudaMemcpyPeer) and one-way latency (a ping-pong kernel over peer memory), and each GPU's
 * host bandwidth (pinned cudaMemcpy H2D and D2H) and one-way latency to a host thread (the
 * same kernel over mapped host memory).  For rank processes sharing one GPU, NCCL joins
 * them by its socket transport: which interface it would use is noted, not measured.
 * The arithmetic (medians, rates) and the reports are plain C here, so they are tested on
 * synthetic timings without a GPU.
 */
#ifndef CCT_PROBE_LINKS_H
#define CCT_PROBE_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cct_error.h"
#include "cct_probe.h"
#include "cct_table.h"

#define CCT_LINKS_MAX_SAMPLES 16

typedef struct cct_links {
    int n_gpus;
    size_t copy_bytes;  /* bytes per timed copy */
    int reps;           /* timed copies per figure (after one warm-up) */
    int pingpong_iters; /* timed round trips per latency (after a warm-up) */
    bool peer_access[CCT_PROBE_MAX_GPUS][CCT_PROBE_MAX_GPUS];
    double peer_gbps[CCT_PROBE_MAX_GPUS][CCT_PROBE_MAX_GPUS];   /* src row, dst column; NAN */
    double peer_lat_us[CCT_PROBE_MAX_GPUS][CCT_PROBE_MAX_GPUS]; /* NAN: not measured */
    double h2d_gbps[CCT_PROBE_MAX_GPUS], d2h_gbps[CCT_PROBE_MAX_GPUS];
    double host_lat_us[CCT_PROBE_MAX_GPUS];
    char socket_if[64];   /* the interface NCCL's socket transport would pick; "" none */
    char socket_why[160]; /* how it was chosen */
    double wall_s;        /* how long the measurement took */
} cct_links;

/* Every figure NAN, the sizes set. */
void cct_links_init(cct_links *l, int n_gpus, size_t copy_bytes, int reps, int pingpong_iters);

/* The median of n samples (sorted in place); NAN when n == 0 or a sample is not > 0. */
double cct_links_median(double *seconds, int n);
/* bytes moved in the median time, as GB/s (1e9 bytes per second); NAN when unknown. */
double cct_links_gbps(size_t bytes, double *seconds, int n);
/* One-way latency in microseconds from the time of `done` round trips; NAN for none. */
double cct_links_oneway_us(unsigned long long ns, int done);

/* The interface NCCL's socket transport picks with no NCCL_SOCKET_IFNAME: an ib* one, else
 * the first that is neither docker* nor lo, else docker*, else lo (NCCL's order).  With
 * ifname_env set, the first interface it selects (a prefix list, "^" excludes, "=" exact).
 * out gets the name ("" when none), why how it was chosen. */
void cct_links_socket_pick(const char *ifname_env, const char *const *ifaces, int n, char *out,
                           size_t out_len, char *why, size_t why_len);

/* The report: text after cct_probe_print's, and the JSON member "link_matrix": {...}. */
void cct_links_print(FILE *out, const cct_links *l, const cct_probe_info *info, int ranks_per_gpu);
void cct_links_print_json(FILE *out, const cct_links *l, const cct_probe_info *info);

/* Measure (GPU; cct_probe_links_measure.c).  CCT_ENOGPU without a GPU. */
cct_status cct_links_measure(const cct_probe_info *info, cct_links *l, cct_error *err);

/* ---- the matrix stored with a run (cct_probe_links_store.c) ---- */

/* Read a matrix back from JSON: `probe --links --json`'s whole answer (its "link_matrix")
 * or that member alone; null figures stay NAN.  paths (may be NULL) gets n_gpus and NCCL's
 * path per pair (CCT_PATH_UNKNOWN where not given); nothing else of it is set.  Errors are
 * "NAME:LINE:COL: ...". */
cct_status cct_links_parse(const char *data, size_t len, const char *name, cct_links *l,
                           cct_probe_info *paths, cct_error *err);
/* The table's summary of l (cct_link_summary): slowest and fastest pair, the slowest GPU's
 * host figures, the socket interface; measured with store run `run`.  s is overwritten
 * (its socket is allocated: cct_table_destroy frees it with the table). */
cct_status cct_links_summarize(const cct_links *l, int run, cct_link_summary *s, cct_error *err);

#endif
