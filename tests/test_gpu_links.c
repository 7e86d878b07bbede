/*
 * test_gpu_links.c - `ccltune probe --links` on a real GPU (src/search/cct_probe_links_measure.c,
 * src/kernels/cct_kernels_links.cu).
 *
 * Suite `gpu`: exits 77 (skipped) when no GPU is visible.  The whole measurement finishes in
 * under 5 s and every figure it could measure is finite and physically plausible (host copies
 * between 1 and 2000 GB/s, one-way latencies between 50 ns and 100 us); with one GPU there are
 * no pairs.  The ping-pong kernel with no partner gives up at its deadline instead of hanging,
 * and reports the rounds it did not complete.
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
#include <time.h>

#include "cct_kernels_links.h"
#include "cct_probe_links.h"

static bool within(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

static void measured(void **state)
{
    (void)state;
    static cct_probe_info info;
    static cct_links l;
    cct_error err;
    assert_int_equal(cct_probe_collect(&info, &err), CCT_OK);
    assert_int_equal(cct_links_measure(&info, &l, &err), CCT_OK);
    cct_links_print(stdout, &l, &info, 1);
    assert_true(l.wall_s < 5.0);
    assert_int_equal(l.n_gpus, info.n_gpus);
    for (int i = 0; i < l.n_gpus; i++) {
        assert_true(within(l.h2d_gbps[i], 1, 2000));
        assert_true(within(l.d2h_gbps[i], 1, 2000));
        assert_true(within(l.host_lat_us[i], 0.05, 100));
        for (int j = 0; j < l.n_gpus; j++) {
            if (i == j) {
                assert_true(isnan(l.peer_gbps[i][j]));
                continue;
            }
            assert_true(within(l.peer_gbps[i][j], 0.5, 5000));
            if (l.peer_access[i][j] && l.peer_access[j][i])
                assert_true(within(l.peer_lat_us[i][j], 0.05, 100));
        }
    }
}

static void no_partner_times_out(void **state)
{
    (void)state;
    uint32_t *flags = NULL, *dflags = NULL;
    cct_pingpong_result *res = NULL, r = {0, 0};
    assert_int_equal(cudaHostAlloc((void **)&flags, 2 * sizeof *flags, cudaHostAllocMapped),
                     cudaSuccess);
    flags[0] = flags[1] = 0;
    assert_int_equal(cudaHostGetDevicePointer((void **)&dflags, flags, 0), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&res, sizeof *res), cudaSuccess);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    /* nobody answers: the deadline (50 ms) ends it */
    assert_int_equal(cct_kernel_pingpong(dflags, dflags + 1, 0, 10, 1, 50000000ull, res, NULL), 0);
    assert_int_equal(cudaMemcpy(&r, res, sizeof r, cudaMemcpyDeviceToHost), cudaSuccess);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    assert_int_equal(r.done, 0);
    assert_int_equal(flags[1], 1u); /* it did write round 1 */
    assert_true(s < 2.0);
    cudaFree(res);
    cudaFreeHost(flags);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_partner_times_out),
        cmocka_unit_test(measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
