/*
 * fake_libcuda.c - a stand-in CUDA driver for the plugin tests and benchmark.
 *
 * The plugin identifies the GPU through the CUDA driver already loaded in the process:
 * dlopen("libcuda.so.1", RTLD_NOLOAD), then cuCtxGetDevice / cuDeviceGetName /
 * cuDeviceGetAttribute.  This library is built with the soname libcuda.so.1; a test
 * dlopens it by path first, and the plugin's RTLD_NOLOAD lookup then finds it, exactly as
 * it would find the real driver inside a NCCL job -- no test hook in the plugin itself.
 * The GPU it reports comes from the environment, so tests can stage mismatches:
 *   CCT_FAKE_GPU_NAME (default "NVIDIA H200"), CCT_FAKE_GPU_CC (default 90),
 *   CCT_FAKE_NO_CONTEXT=1 (cuCtxGetDevice fails as without a current context),
 *   CCT_FAKE_NO_GPU=1 (cuInit fails as on a box without GPUs; `ccltune doctor` calls it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuCtxGetDevice(int *device)
{
    const char *noctx = getenv("CCT_FAKE_NO_CONTEXT");
    if (noctx && strcmp(noctx, "1") == 0)
        return 201; /* CUDA_ERROR_INVALID_CONTEXT */
    *device = 0;
    return 0;
}

EXPORT int cuDeviceGetName(char *name, int len, int device)
{
    const char *n = getenv("CCT_FAKE_GPU_NAME");
    if (device != 0 || len <= 0)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    snprintf(name, (size_t)len, "%s", n ? n : "NVIDIA H200");
    return 0;
}

EXPORT int cuDeviceGetAttribute(int *value, int attribute, int device)
{
    const char *c = getenv("CCT_FAKE_GPU_CC");
    int cc = c ? atoi(c) : 90;
    if (device != 0)
        return 101;
    if (attribute == 75) /* COMPUTE_CAPABILITY_MAJOR */
        *value = cc / 10;
    else if (attribute == 76) /* COMPUTE_CAPABILITY_MINOR */
        *value = cc % 10;
    else
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    return 0;
}

/* What `ccltune doctor` calls to make device 0 current before reading it, as NCCL has done
 * before tuner init: CCT_FAKE_NO_GPU=1 makes cuInit fail as on a box without GPUs. */
EXPORT int cuInit(unsigned flags)
{
    const char *none = getenv("CCT_FAKE_NO_GPU");
    (void)flags;
    return none && strcmp(none, "1") == 0 ? 100 /* CUDA_ERROR_NO_DEVICE */ : 0;
}

EXPORT int cuDeviceGet(int *device, int ordinal)
{
    if (ordinal != 0)
        return 101;
    *device = 0;
    return 0;
}

static int fake_primary_context;

EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int device)
{
    if (device != 0)
        return 101;
    *ctx = &fake_primary_context;
    return 0;
}

EXPORT int cuCtxSetCurrent(void *ctx)
{
    return ctx == &fake_primary_context ? 0 : 201;
}
