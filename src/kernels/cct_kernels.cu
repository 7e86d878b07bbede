/*
 * cct_kernels.cu - pattern fill, on-device verification and L2 flush (see cct_kernels.h).
 *
 * The pattern is a hash of (rank, global element index, seed) mapped to a small signed
 * integer.  Its half-range shrinks with the rank count so every partial sum a reduction
 * can form stays exactly representable: 1024 for float (sums <= 2^23 up to 8192 ranks),
 * 256/nranks for bf16 (8 significant bits).  The expected value of an output element is
 * recomputed on the device from the same hash, compared bit-exactly, and mismatches are
 * counted per block in shared memory, then added to one global counter.
 */
#include "cct_kernels.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace
{

__host__ __device__ inline int half_range(int dtype, int nranks)
{
    if (dtype == CCT_KDTYPE_BF16) {
        int h = 256 / (nranks > 0 ? nranks : 1);
        return h > 0 ? h : 1;
    }
    return 1024;
}

__host__ __device__ inline int pattern(int dtype, int rank, int nranks, unsigned long long index,
                                       unsigned seed)
{
    /* splitmix64 finaliser: cheap, and neighbouring indices and ranks decorrelate */
    unsigned long long x = index + 0x9E3779B97F4A7C15ull * (unsigned long long)(rank + 1) +
                           ((unsigned long long)seed << 32);
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    int h = half_range(dtype, nranks);
    return (int)(x % (unsigned long long)(2 * h)) - h;
}

__device__ inline float load_value(const void *buf, int dtype, size_t i)
{
    if (dtype == CCT_KDTYPE_BF16)
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(buf)[i]);
    return static_cast<const float *>(buf)[i];
}

__global__ void fill_kernel(void *buf, size_t count, size_t first, int dtype, int rank, int nranks,
                            unsigned seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        int v = pattern(dtype, rank, nranks, first + i, seed);
        if (dtype == CCT_KDTYPE_BF16)
            static_cast<__nv_bfloat16 *>(buf)[i] = __float2bfloat16((float)v);
        else
            static_cast<float *>(buf)[i] = (float)v;
    }
}

__device__ inline int expected_value(const cct_verify_spec &s, size_t i)
{
    switch (s.op) {
    case CCT_KOP_ROOT_COPY: /* the root's buffer */
        return pattern(s.dtype, s.root, s.nranks, i, s.seed);
    case CCT_KOP_GATHER: { /* block b came from rank b, indexed globally */
        int owner = (int)(i / s.count);
        return pattern(s.dtype, owner, s.nranks, i, s.seed);
    }
    case CCT_KOP_SUM_SLICE: { /* this rank's slice of the sum */
        unsigned long long global = (unsigned long long)s.rank * s.count + i;
        int sum = 0;
        for (int r = 0; r < s.nranks; r++)
            sum += pattern(s.dtype, r, s.nranks, global, s.seed);
        return sum;
    }
    default: { /* CCT_KOP_SUM: the sum */
        int sum = 0;
        for (int r = 0; r < s.nranks; r++)
            sum += pattern(s.dtype, r, s.nranks, i, s.seed);
        return sum;
    }
    }
}

__global__ void verify_kernel(const void *recvbuf, size_t n, cct_verify_spec spec,
                              unsigned long long *d_wrong)
{
    __shared__ unsigned long long block_wrong;
    if (threadIdx.x == 0)
        block_wrong = 0;
    __syncthreads();
    unsigned long long mine = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float got = load_value(recvbuf, spec.dtype, i);
        /* bit-exact: NaN and -0/+0 confusions of integer sums count as wrong too */
        if (!(got == (float)expected_value(spec, i)))
            mine++;
    }
    if (mine)
        atomicAdd(&block_wrong, mine);
    __syncthreads();
    if (threadIdx.x == 0 && block_wrong)
        atomicAdd(d_wrong, block_wrong);
}

__global__ void flush_kernel(unsigned *scratch, size_t words, unsigned salt)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        scratch[i] = (unsigned)i ^ salt;
}

unsigned grid_for(size_t n)
{
    size_t blocks = (n + 255) / 256;
    if (blocks > 4096)
        blocks = 4096;
    return blocks ? (unsigned)blocks : 1u;
}

} // namespace

extern "C" int cct_kernel_fill(void *buf, size_t count, size_t first, int dtype, int rank,
                               int nranks, uint32_t seed, void *stream)
{
    if (count == 0)
        return 0;
    fill_kernel<<<grid_for(count), 256, 0, (cudaStream_t)stream>>>(buf, count, first, dtype, rank,
                                                                   nranks, seed);
    return (int)cudaGetLastError();
}

extern "C" int cct_kernel_verify(const void *recvbuf, const cct_verify_spec *spec,
                                 unsigned long long *d_wrong, void *stream)
{
    size_t n = spec->count;
    if (spec->root_only && spec->rank != spec->root)
        return 0; /* only the root's output is defined */
    if (spec->op == CCT_KOP_GATHER)
        n = spec->count * (size_t)spec->nranks; /* the whole gathered buffer */
    if (n == 0)
        return 0;
    verify_kernel<<<grid_for(n), 256, 0, (cudaStream_t)stream>>>(recvbuf, n, *spec, d_wrong);
    return (int)cudaGetLastError();
}

extern "C" int cct_kernel_flush(void *scratch, size_t bytes, void *stream)
{
    static unsigned salt = 1;
    size_t words = bytes / sizeof(unsigned);
    if (words == 0)
        return 0;
    flush_kernel<<<grid_for(words), 256, 0, (cudaStream_t)stream>>>((unsigned *)scratch, words,
                                                                    salt++);
    return (int)cudaGetLastError();
}

extern "C" double cct_pattern_value(int dtype, int rank, int nranks, size_t index, uint32_t seed)
{
    return (double)pattern(dtype, rank, nranks, index, seed);
}
