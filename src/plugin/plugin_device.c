/*
 * plugin_device.c - facts about the running process that a table's fingerprint is checked
 * against: the NCCL version and the GPU this communicator runs on.
 *
 * The plugin must not link CUDA or NCCL (it would pin versions and drag libraries into
 * every job), so both are found at run time in the libraries the process already has:
 *  - ncclGetVersion through dlsym(RTLD_DEFAULT); when NCCL was loaded RTLD_LOCAL (Python's
 *    ctypes does that) it is not in the global scope, so libnccl.so.2 is then looked up
 *    with RTLD_NOLOAD, which finds the loaded copy and never loads a second one.
 *  - the CUDA driver: libcuda.so.1 with RTLD_NOLOAD first (NCCL has loaded it), a plain
 *    dlopen only as a fallback.  cuCtxGetDevice gives the device current on the calling
 *    thread -- NCCL calls tuner init on the thread that set up the communicator's device --
 *    then cuDeviceGetName and the compute capability attributes.  No cuInit: if the
 *    driver is not initialised the calls fail and the GPU is reported unknown.
 *  - RCCL (AMD's fork) exports the same ncclGetVersion and loads the same tuner symbols, but
 *    its structures differ (ncclTunerConstants_v5_t has more algorithms and a bwRatio
 *    array): it is recognised by the file that defines ncclGetVersion (dladdr: librccl*),
 *    a loaded librccl.so, or an exported rcclGetVersion.
 * Each lookup takes its own reference and drops it before returning.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "plugin_internal.h"

typedef int (*nccl_get_version_fn)(int *version);
typedef int (*cu_ctx_get_device_fn)(int *device);
typedef int (*cu_device_get_name_fn)(char *name, int len, int device);
typedef int (*cu_device_get_attribute_fn)(int *value, int attribute, int device);

#define CU_ATTR_CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define CU_ATTR_CC_MINOR 76 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */

int cct_device_nccl_version(void)
{
    int version = 0;
    nccl_get_version_fn fn = (nccl_get_version_fn)dlsym(RTLD_DEFAULT, "ncclGetVersion");
    if (fn) {
        if (fn(&version) != 0)
            version = 0;
        return version;
    }
    void *lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return 0;
    fn = (nccl_get_version_fn)dlsym(lib, "ncclGetVersion");
    if (fn && fn(&version) != 0)
        version = 0;
    dlclose(lib);
    return version;
}

static bool named_rccl(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "librccl", 7) == 0;
}

bool cct_device_is_rccl(char *why, size_t why_len)
{
    why[0] = '\0';
    void *fn = dlsym(RTLD_DEFAULT, "ncclGetVersion");
    Dl_info info;
    if (fn && dladdr(fn, &info) && info.dli_fname && named_rccl(info.dli_fname)) {
        snprintf(why, why_len, "ncclGetVersion is defined by %s", info.dli_fname);
        return true;
    }
    if (dlsym(RTLD_DEFAULT, "rcclGetVersion")) {
        snprintf(why, why_len, "the process exports rcclGetVersion");
        return true;
    }
    static const char *const libs[] = {"librccl.so.1", "librccl.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        void *lib = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
        if (lib) {
            dlclose(lib);
            snprintf(why, why_len, "%s is loaded", libs[i]);
            return true;
        }
    }
    return false;
}

bool cct_device_current_gpu(char *name, size_t name_len, int *cc, char *why, size_t why_len)
{
    name[0] = '\0';
    *cc = -1;
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, why_len, "the CUDA driver (libcuda.so.1) is not available");
        return false;
    }
    bool ok = false;
    cu_ctx_get_device_fn get_device = (cu_ctx_get_device_fn)dlsym(lib, "cuCtxGetDevice");
    cu_device_get_name_fn get_name = (cu_device_get_name_fn)dlsym(lib, "cuDeviceGetName");
    cu_device_get_attribute_fn get_attr =
        (cu_device_get_attribute_fn)dlsym(lib, "cuDeviceGetAttribute");
    int dev = -1, major = 0, minor = 0, rc;
    if (!get_device || !get_name || !get_attr) {
        snprintf(why, why_len, "the CUDA driver lacks cuCtxGetDevice/cuDeviceGetName");
    } else if ((rc = get_device(&dev)) != 0) {
        snprintf(why, why_len, "no CUDA context is current on this thread (cuCtxGetDevice: %d)",
                 rc);
    } else if ((rc = get_name(name, (int)name_len, dev)) != 0) {
        snprintf(why, why_len, "cuDeviceGetName failed (%d)", rc);
    } else if ((rc = get_attr(&major, CU_ATTR_CC_MAJOR, dev)) != 0 ||
               (rc = get_attr(&minor, CU_ATTR_CC_MINOR, dev)) != 0) {
        snprintf(why, why_len, "cuDeviceGetAttribute failed (%d)", rc);
    } else {
        name[name_len - 1] = '\0';
        *cc = major * 10 + minor;
        ok = true;
    }
    if (!ok)
        name[0] = '\0';
    dlclose(lib);
    return ok;
}
