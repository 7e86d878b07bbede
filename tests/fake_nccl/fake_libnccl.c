/*
 * fake_libnccl.c - a stand-in libnccl.so.2 for `ccltune doctor`'s tests: it exports only
 * ncclGetVersion, answering CCT_FAKE_NCCL_VERSION (NCCL_VERSION_CODE, default 22809 for
 * 2.28.9), so the doctor's "which NCCL will the job load" is tested without NCCL.  Tests
 * hand its path to `ccltune doctor --nccl`, as an operator would name a job's bundled NCCL.
 */
#include <stdlib.h>

__attribute__((visibility("default"))) int ncclGetVersion(int *version)
{
    const char *v = getenv("CCT_FAKE_NCCL_VERSION");
    *version = v ? atoi(v) : 22809;
    return 0;
}
