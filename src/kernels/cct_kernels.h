/*
 * cct_kernels.h - the CUDA kernels of the search: fill inputs with a known pattern,
 * verify collective outputs on the device, flush the L2 cache.
 *
 * Every rank fills its send buffer with pattern(rank, index, seed), a small integer
 * stored as float or bf16.  The integers are bounded so that any sum over all ranks, in
 * any association order, is exact in the data type (|sum| <= 2^24 for float, <= 256 for
 * bf16): the expected output of every collective is known exactly and a single wrong
 * element is detectable.  Verification runs on the GPU and atomically counts mismatches
 * into a device counter; the host reads one integer, never the buffer.
 *
 * All functions enqueue on the given stream and return the launch status (0 = success,
 * otherwise a cudaError_t value); they never synchronise.  C interface, usable from C11.
 */
#ifndef CCT_KERNELS_H
#define CCT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Data types (equal to cct_dtype in cct_measure.h). */
enum { CCT_KDTYPE_FLOAT = 0, CCT_KDTYPE_BF16 = 1 };

/* What a rank's receive buffer must hold after a collective (equal to cct_result in
 * core/cct_facts.h, whose collective rows say which one each collective has). */
enum {
    CCT_KOP_ROOT_COPY = 0, /* the root's pattern */
    CCT_KOP_SUM = 1,       /* the sum of all ranks' patterns */
    CCT_KOP_GATHER = 2,    /* count elements per rank: block b is rank b's pattern */
    CCT_KOP_SUM_SLICE = 3  /* this rank's block of the sum of count x nranks elements */
};

typedef struct cct_verify_spec {
    int op;        /* CCT_KOP_* */
    int root_only; /* only the root's output is defined (reduce): other ranks check nothing */
    int dtype;     /* CCT_KDTYPE_* */
    size_t count;  /* elements per rank as passed to NCCL (gather: send count; sum slice: recv
                      count) */
    int rank;
    int nranks;
    int root; /* root copy, root only */
    uint32_t seed;
} cct_verify_spec;

/* Largest number of ranks for which the bf16 pattern keeps every sum exact. */
#define CCT_KERNEL_MAX_RANKS_BF16 64

/* Fill `count` elements at buf with rank `rank`'s pattern, elements numbered from `first`
 * (allgather in-place places a rank's block inside the receive buffer). */
int cct_kernel_fill(void *buf, size_t count, size_t first, int dtype, int rank, int nranks,
                    uint32_t seed, void *stream);

/* Count wrong elements of a rank's receive buffer into *d_wrong (device memory, added to,
 * not reset).  A non-root rank of a root-only result has nothing to check and adds 0. */
int cct_kernel_verify(const void *recvbuf, const cct_verify_spec *spec, unsigned long long *d_wrong,
                      void *stream);

/* Write `bytes` of scratch memory so the next collective does not start from a warm L2. */
int cct_kernel_flush(void *scratch, size_t bytes, void *stream);

/* The pattern value as a double, for host-side tests of the expectation logic. */
double cct_pattern_value(int dtype, int rank, int nranks, size_t index, uint32_t seed);

#ifdef __cplusplus
}
#endif

#endif
