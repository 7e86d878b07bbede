/*
 * test_probe_nccl.c - what the probe learns from the NCCL library without a GPU: the CUDA
 * version NCCL was built with, read from its "NCCL version X+cudaA.B" string.
 *
 * NCCL's one LL128 exception depends on it (CUDA 11.8), so the probe must find it in the
 * library ccltune is linked with; the expected value comes from nccl.h's own build macros.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <nccl.h>

#include "cct_probe.h"

static void test_nccl_build_cuda(void **state)
{
    (void)state;
    int v = cct_probe_nccl_cuda();
    /* a real NCCL carries its build CUDA version: a plausible major.minor */
    assert_true(v >= 11000 && v < 30000);
    assert_int_equal(v % 10, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_nccl_build_cuda)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
