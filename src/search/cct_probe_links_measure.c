/*
 * cct_probe_links_measure.c - timing the links for `ccltune probe --links` (cct_probe_links.h).
 *
 * Per GPU: pinned host copies both ways (cudaMemcpyAsync, CUDA events) and a ping-pong with a
 * host thread over mapped pinned memory.  Per ordered pair: cudaMemcpyPeerAsync timed on the
 * source's stream, and, where peer access works, the ping-pong kernel on both GPUs at once,
 * each polling a flag in its own memory and writing its peer's.  Every figure is the median
 * of a few repetitions after a warm-up, with sizes picked so eight GPUs take well under 5 s.
 * Peer access is enabled for the measurement and disabled again; memory is freed on every
 * path.  The kernels time themselves and give up after a deadline, so nothing here can hang.
 */
#include <cuda_runtime.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cct_kernels_links.h"
#include "cct_probe_links.h"

#define COPY_BYTES ((size_t)64 << 20)
#define REPS 5
#define PP_WARM 100
#define PP_ITERS 1000
#define PP_TIMEOUT_NS 2000000000ull /* a partner that never answers: give up after 2 s */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time REPS copies (after one warm-up) on stream s; kind 0 H2D, 1 D2H, 2 peer. */
static double time_copies(int dev, void *dst, int dst_dev, const void *src, int src_dev, int kind,
                          cudaStream_t s)
{
    cudaEvent_t a, b;
    double secs[REPS];
    cudaSetDevice(dev);
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess)
        return NAN;
    int n = 0;
    for (int r = -1; r < REPS; r++) {
        cudaEventRecord(a, s);
        cudaError_t e =
            kind == 2
                ? cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, COPY_BYTES, s)
                : cudaMemcpyAsync(dst, src, COPY_BYTES,
                                  kind == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s);
        cudaEventRecord(b, s);
        float ms = 0;
        if (e != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
            cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
            break;
        if (r >= 0)
            secs[n++] = ms / 1e3;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return n == REPS ? cct_links_gbps(COPY_BYTES, secs, n) : NAN;
}

/* The host side of a GPU-host ping-pong: answer each round of the kernel. */
static void host_partner(volatile uint32_t *mine, volatile uint32_t *theirs)
{
    double deadline = now_s() + PP_TIMEOUT_NS / 1e9;
    for (uint32_t k = 1; k <= PP_WARM + PP_ITERS; k++) {
        while (*mine != k)
            if (now_s() > deadline)
                return;
        atomic_thread_fence(memory_order_seq_cst);
        *theirs = k;
    }
}

static void measure_host(int dev, cct_links *l)
{
    void *h = NULL, *d = NULL;
    uint32_t *flags = NULL;
    cct_pingpong_result *res = NULL;
    cudaStream_t s = NULL;
    cudaSetDevice(dev);
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return;
    if (cudaHostAlloc(&h, COPY_BYTES, cudaHostAllocDefault) == cudaSuccess &&
        cudaMalloc(&d, COPY_BYTES) == cudaSuccess) {
        l->h2d_gbps[dev] = time_copies(dev, d, dev, h, dev, 0, s);
        l->d2h_gbps[dev] = time_copies(dev, h, dev, d, dev, 1, s);
    }
    /* flags[0]: the GPU polls it, the host writes it; flags[1]: the reverse */
    if (cudaHostAlloc((void **)&flags, 2 * sizeof *flags, cudaHostAllocMapped) == cudaSuccess &&
        cudaMalloc((void **)&res, sizeof *res) == cudaSuccess) {
        memset(flags, 0, 2 * sizeof *flags);
        uint32_t *dflags = NULL;
        cct_pingpong_result r = {0, 0};
        if (cudaHostGetDevicePointer((void **)&dflags, flags, 0) == cudaSuccess &&
            cct_kernel_pingpong(dflags, dflags + 1, PP_WARM, PP_ITERS, 1, PP_TIMEOUT_NS, res, s) ==
                0) {
            host_partner(flags + 1, flags);
            if (cudaMemcpyAsync(&r, res, sizeof r, cudaMemcpyDeviceToHost, s) == cudaSuccess &&
                cudaStreamSynchronize(s) == cudaSuccess && r.done == PP_ITERS)
                l->host_lat_us[dev] = cct_links_oneway_us(r.ns, r.done);
        }
    }
    cudaStreamSynchronize(s);
    cudaFreeHost(flags);
    cudaFree(res);
    cudaFreeHost(h);
    cudaFree(d);
    cudaStreamDestroy(s);
}

/* Per GPU: a buffer for copies, a flag pair (device memory), a result slot, a stream. */
typedef struct gpu_side {
    void *buf;
    uint32_t *flag; /* flag[0] polled by this GPU */
    cct_pingpong_result *res;
    cudaStream_t s;
} gpu_side;

static void measure_pair(int i, int j, gpu_side *g, cct_links *l)
{
    l->peer_gbps[i][j] = time_copies(i, g[j].buf, j, g[i].buf, i, 2, g[i].s);
    if (!l->peer_access[i][j] || !l->peer_access[j][i])
        return;
    cudaSetDevice(i);
    cudaMemsetAsync(g[i].flag, 0, sizeof(uint32_t), g[i].s);
    cudaStreamSynchronize(g[i].s);
    cudaSetDevice(j);
    cudaMemsetAsync(g[j].flag, 0, sizeof(uint32_t), g[j].s);
    cudaStreamSynchronize(g[j].s);
    /* the partner first: it waits for round 1 */
    if (cct_kernel_pingpong(g[j].flag, g[i].flag, PP_WARM, PP_ITERS, 0, PP_TIMEOUT_NS, NULL,
                            g[j].s) != 0)
        return;
    cudaSetDevice(i);
    cct_pingpong_result r = {0, 0};
    if (cct_kernel_pingpong(g[i].flag, g[j].flag, PP_WARM, PP_ITERS, 1, PP_TIMEOUT_NS, g[i].res,
                            g[i].s) == 0 &&
        cudaMemcpyAsync(&r, g[i].res, sizeof r, cudaMemcpyDeviceToHost, g[i].s) == cudaSuccess &&
        cudaStreamSynchronize(g[i].s) == cudaSuccess && r.done == PP_ITERS)
        l->peer_lat_us[i][j] = cct_links_oneway_us(r.ns, r.done);
    cudaSetDevice(j);
    cudaStreamSynchronize(g[j].s);
}

static void measure_pairs(cct_links *l)
{
    int n = l->n_gpus;
    gpu_side *g = calloc((size_t)n, sizeof *g);
    bool *enabled = calloc((size_t)n * (size_t)n, sizeof *enabled);
    if (!g || !enabled) {
        free(g);
        free(enabled);
        return;
    }
    bool ready = true;
    for (int i = 0; i < n && ready; i++) {
        cudaSetDevice(i);
        ready = cudaStreamCreateWithFlags(&g[i].s, cudaStreamNonBlocking) == cudaSuccess &&
                cudaMalloc(&g[i].buf, COPY_BYTES) == cudaSuccess &&
                cudaMalloc((void **)&g[i].flag, 64) == cudaSuccess &&
                cudaMalloc((void **)&g[i].res, sizeof *g[i].res) == cudaSuccess;
        for (int j = 0; j < n; j++) {
            int can = 0;
            if (i != j && cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess && can) {
                cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
                enabled[i * n + j] = e == cudaSuccess;
                l->peer_access[i][j] = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
                cudaGetLastError(); /* clear "already enabled" */
            }
        }
    }
    for (int i = 0; ready && i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j)
                measure_pair(i, j, g, l);
    for (int i = 0; i < n; i++) {
        cudaSetDevice(i);
        for (int j = 0; j < n; j++)
            if (enabled[i * n + j])
                cudaDeviceDisablePeerAccess(j);
        if (g[i].s)
            cudaStreamSynchronize(g[i].s);
        cudaFree(g[i].buf);
        cudaFree(g[i].flag);
        cudaFree(g[i].res);
        if (g[i].s)
            cudaStreamDestroy(g[i].s);
    }
    free(g);
    free(enabled);
}

static void socket_note(cct_links *l)
{
    struct ifaddrs *all = NULL;
    const char *names[64];
    int n = 0;
    if (getifaddrs(&all) == 0) {
        for (struct ifaddrs *a = all; a && n < 64; a = a->ifa_next) {
            if (!a->ifa_addr || !(a->ifa_flags & IFF_UP) ||
                (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
                continue;
            bool seen = false;
            for (int k = 0; k < n && !seen; k++)
                seen = strcmp(names[k], a->ifa_name) == 0;
            if (!seen)
                names[n++] = a->ifa_name;
        }
    }
    cct_links_socket_pick(getenv("NCCL_SOCKET_IFNAME"), names, n, l->socket_if, sizeof l->socket_if,
                          l->socket_why, sizeof l->socket_why);
    if (all)
        freeifaddrs(all);
}

cct_status cct_links_measure(const cct_probe_info *info, cct_links *l, cct_error *err)
{
    if (info->n_gpus <= 0)
        return cct_error_set(err, CCT_ENOGPU, "no GPU visible: nothing to measure");
    double t0 = now_s();
    int prev = 0;
    cudaGetDevice(&prev);
    cct_links_init(l, info->n_gpus, COPY_BYTES, REPS, PP_ITERS);
    for (int i = 0; i < l->n_gpus; i++)
        measure_host(i, l);
    if (l->n_gpus > 1)
        measure_pairs(l);
    socket_note(l);
    cudaSetDevice(prev);
    l->wall_s = now_s() - t0;
    return CCT_OK;
}
