/*
 * cct_kernels_links.cu - the ping-pong kernel of `ccltune probe --links` (see
 * cct_kernels_links.h).  One thread: latency, not bandwidth, is what it measures.
 */
#include <cuda_runtime.h>

#include "cct_kernels_links.h"

static __device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Wait until *flag == want; false after timeout_ns. */
static __device__ bool wait_for(volatile uint32_t *flag, uint32_t want, unsigned long long deadline)
{
    while (*flag != want)
        if (global_ns() > deadline)
            return false;
    return true;
}

static __global__ void pingpong(volatile uint32_t *mine, volatile uint32_t *theirs, int warm,
                                int iters, int initiator, unsigned long long timeout_ns,
                                cct_pingpong_result *result)
{
    unsigned long long deadline = global_ns() + timeout_ns, start = 0;
    int rounds = warm + iters, k;
    for (k = 1; k <= rounds; k++) {
        if (k == warm + 1)
            start = global_ns();
        if (initiator) {
            *theirs = (uint32_t)k;
            __threadfence_system();
            if (!wait_for(mine, (uint32_t)k, deadline))
                break;
        } else {
            if (!wait_for(mine, (uint32_t)k, deadline))
                break;
            *theirs = (uint32_t)k;
            __threadfence_system();
        }
    }
    if (result) {
        result->ns = k > warm + 1 ? global_ns() - start : 0;
        result->done = k - 1 - warm > 0 ? k - 1 - warm : 0;
    }
}

extern "C" int cct_kernel_pingpong(volatile uint32_t *mine, volatile uint32_t *theirs, int warm,
                                   int iters, int initiator, unsigned long long timeout_ns,
                                   cct_pingpong_result *result, void *stream)
{
    pingpong<<<1, 1, 0, (cudaStream_t)stream>>>(mine, theirs, warm, iters, initiator, timeout_ns,
                                                result);
    return (int)cudaGetLastError();
}
