/*
 * fake_librccl.c - a stand-in for AMD's RCCL (soname librccl.so.1) for the plugin tests.
 *
 * RCCL exports NCCL's API under NCCL's names and loads NCCL tuner plugins by the same
 * symbols, but its tuner structures are laid out differently.  The plugin recognises it by
 * the loaded library; a test opens this one by path before the plugin, as a ROCm job has
 * RCCL loaded before NCCL's tuner loader runs.
 */
#define EXPORT __attribute__((visibility("default")))

EXPORT int ncclGetVersion(int *version);
EXPORT int ncclGetVersion(int *version)
{
    *version = 22807; /* RCCL reports NCCL-compatible version codes */
    return 0;
}
