/*
 * test_gpu_kernels.c - the fill/verify/flush kernels (src/kernels) on a real GPU.
 *
 * Suite `gpu`: exits 77 (skipped) when no GPU is visible.  One GPU plays every rank: the
 * expected output of each collective is built on the host from cct_pattern_value (the same
 * hash the device uses), copied to the device, and the verifier must count zero wrong
 * elements; then single elements are corrupted (a changed value, a NaN, an element left
 * unwritten) and the verifier must count exactly those.  This is what lets the search
 * trust "0 wrong" from a real collective.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_kernels.h"

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16); /* exact for the small integers of the pattern */
}

/* Host expectation for one rank's receive buffer, as float values. */
static void expect(const cct_verify_spec *s, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = 0.0;
        switch (s->op) {
        case CCT_KOP_ROOT_COPY:
            v = cct_pattern_value(s->dtype, s->root, s->nranks, i, s->seed);
            break;
        case CCT_KOP_GATHER:
            v = cct_pattern_value(s->dtype, (int)(i / s->count), s->nranks, i, s->seed);
            break;
        case CCT_KOP_SUM_SLICE:
            for (int r = 0; r < s->nranks; r++)
                v += cct_pattern_value(s->dtype, r, s->nranks, (size_t)s->rank * s->count + i,
                                       s->seed);
            break;
        default:
            for (int r = 0; r < s->nranks; r++)
                v += cct_pattern_value(s->dtype, r, s->nranks, i, s->seed);
        }
        out[i] = (float)v;
    }
}

static unsigned long long verify(const void *dbuf, const cct_verify_spec *s)
{
    unsigned long long *d_wrong, h = 0;
    assert_int_equal(cudaMalloc((void **)&d_wrong, sizeof *d_wrong), cudaSuccess);
    cudaMemset(d_wrong, 0, sizeof *d_wrong);
    assert_int_equal(cct_kernel_verify(dbuf, s, d_wrong, NULL), 0);
    assert_int_equal(cudaMemcpy(&h, d_wrong, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(d_wrong);
    return h;
}

static void check_op(int op, int dtype, int nranks, size_t count)
{
    cct_verify_spec s = {.op = op,
                         .dtype = dtype,
                         .count = count,
                         .rank = 1 % nranks,
                         .nranks = nranks,
                         .root = 0,
                         .seed = 7};
    size_t n = op == CCT_KOP_GATHER ? count * (size_t)nranks : count;
    float *host = malloc(n * sizeof *host);
    expect(&s, host, n);
    size_t esize = dtype == CCT_KDTYPE_BF16 ? 2 : 4;
    void *staging = malloc(n * esize);
    for (size_t i = 0; i < n; i++) {
        if (dtype == CCT_KDTYPE_BF16)
            ((uint16_t *)staging)[i] = to_bf16(host[i]);
        else
            ((float *)staging)[i] = host[i];
    }
    void *d;
    assert_int_equal(cudaMalloc(&d, n * esize), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, staging, n * esize, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(verify(d, &s), 0);
    /* three corruptions: a wrong value, NaN, and poison (what an unwritten element holds) */
    size_t idx[3] = {0, n / 2, n - 1};
    for (int k = 0; k < 3; k++) {
        unsigned char bad[4];
        if (k == 0) {
            float v = host[idx[k]] + 1.0f;
            if (dtype == CCT_KDTYPE_BF16) {
                uint16_t b = to_bf16(v);
                memcpy(bad, &b, 2);
            } else {
                memcpy(bad, &v, 4);
            }
        } else {
            memset(bad, 0xff, sizeof bad);
        }
        cudaMemcpy((char *)d + idx[k] * esize, bad, esize, cudaMemcpyHostToDevice);
    }
    assert_int_equal(verify(d, &s), n >= 3 ? 3 : (n == 2 ? 2 : 1));
    cudaFree(d);
    free(staging);
    free(host);
}

static void test_expectations_all_collectives(void **state)
{
    (void)state;
    int ops[] = {CCT_KOP_ROOT_COPY, CCT_KOP_SUM, CCT_KOP_GATHER, CCT_KOP_SUM_SLICE};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int dtype = 0; dtype < 2; dtype++) {
            check_op(ops[k], dtype, 2, 1000);
            check_op(ops[k], dtype, 8, 4097);
        }
    /* a sum defined at the root only (reduce) */
    cct_verify_spec s = {.op = CCT_KOP_SUM,
                         .root_only = 1,
                         .dtype = CCT_KDTYPE_FLOAT,
                         .count = 513,
                         .rank = 0,
                         .nranks = 4,
                         .root = 0,
                         .seed = 3};
    float host[513];
    expect(&s, host, 513);
    void *d;
    cudaMalloc(&d, sizeof host);
    cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice);
    assert_int_equal(verify(d, &s), 0);
    s.rank = 2; /* a non-root has nothing to verify */
    cudaMemset(d, 0xff, sizeof host);
    assert_int_equal(verify(d, &s), 0);
    cudaFree(d);
}

static void test_fill_matches_pattern(void **state)
{
    (void)state;
    size_t n = 100000;
    for (int dtype = 0; dtype < 2; dtype++) {
        size_t esize = dtype ? 2 : 4;
        void *d;
        cudaMalloc(&d, n * esize);
        assert_int_equal(cct_kernel_fill(d, n, 12345, dtype, 3, 8, 99, NULL), 0);
        unsigned char *h = malloc(n * esize);
        cudaMemcpy(h, d, n * esize, cudaMemcpyDeviceToHost);
        int seen_min = 1 << 30, seen_max = -(1 << 30);
        for (size_t i = 0; i < n; i++) {
            float v;
            if (dtype) {
                uint32_t u = (uint32_t)((uint16_t *)h)[i] << 16;
                memcpy(&v, &u, 4);
            } else {
                v = ((float *)h)[i];
            }
            assert_float_equal(v, cct_pattern_value(dtype, 3, 8, 12345 + i, 99), 0.0);
            seen_min = (int)fminf((float)seen_min, v);
            seen_max = (int)fmaxf((float)seen_max, v);
        }
        /* bf16 with 8 ranks: |value| <= 32 so that any sum of 8 stays exact */
        if (dtype) {
            assert_true(seen_min >= -32 && seen_max <= 32);
        } else {
            assert_true(seen_min < -500 && seen_max > 500);
        }
        free(h);
        cudaFree(d);
    }
}

static void test_flush_writes(void **state)
{
    (void)state;
    size_t bytes = 64 << 20;
    void *d;
    assert_int_equal(cudaMalloc(&d, bytes), cudaSuccess);
    cudaMemset(d, 0, bytes);
    assert_int_equal(cct_kernel_flush(d, bytes, NULL), 0);
    unsigned last = 0;
    cudaMemcpy(&last, (char *)d + bytes - 4, 4, cudaMemcpyDeviceToHost);
    assert_int_not_equal(last, 0u);
    cudaFree(d);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expectations_all_collectives),
        cmocka_unit_test(test_fill_matches_pattern),
        cmocka_unit_test(test_flush_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
