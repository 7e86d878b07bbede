/*
 * cct_kernels_links.h - the ping-pong kernel `ccltune probe --links` times one-way latency
 * with: two flags, one polled by each side, each side writing the other's.
 *
 * Between two GPUs both flags live in device memory (each GPU polls its own, writes its
 * peer's through peer access); between a GPU and the host both live in mapped pinned host
 * memory and a host thread plays the partner (cct_links_host_partner).  The initiator times
 * the exchanges after a warm-up with the GPU's global timer, so launch latency and the
 * partner's start are not counted; every wait gives up after timeout_ns (a partner that never
 * started cannot hang the probe).  C interface; returns the launch status (0 = success).
 */
#ifndef CCT_KERNELS_LINKS_H
#define CCT_KERNELS_LINKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the initiator reports (device memory, written once at the end). */
typedef struct cct_pingpong_result {
    unsigned long long ns; /* global-timer nanoseconds for `iters` round trips */
    int done;              /* round trips completed (timed ones); < iters: timed out */
} cct_pingpong_result;

/* One side of the exchange: round k (1-based, warm + iters rounds) is "write k to *theirs,
 * wait for *mine == k" for the initiator and the reverse for the partner.  result: the
 * initiator's report (NULL for the partner). */
int cct_kernel_pingpong(volatile uint32_t *mine, volatile uint32_t *theirs, int warm, int iters,
                        int initiator, unsigned long long timeout_ns, cct_pingpong_result *result,
                        void *stream);

#ifdef __cplusplus
}
#endif

#endif
