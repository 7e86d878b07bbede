/*
 * cct_nccl_lib.c - the NCCL library and the tuner plugin a job would load (cct_nccl_lib.h).
 *
 * Everything is dlopened RTLD_LAZY | RTLD_LOCAL, so nothing found here enters the global
 * symbol scope of the caller, and closed again.  A path is loaded as a file of its own even
 * when another copy with the same soname is loaded already, which is what lets a caller
 * inspect the NCCL a job would use next to the one it was itself linked with.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cct_nccl_lib.h"

typedef int (*nccl_get_version_fn)(int *version);

static void lib_path(void *h, char *out, size_t len)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
        snprintf(out, len, "%s", lm->l_name);
    else
        snprintf(out, len, "?");
}

static void last_error(char *out, size_t len)
{
    const char *e = dlerror();
    snprintf(out, len, "%s", e ? e : "unknown dlopen error");
}

/* A fresh process's loader looks in LD_LIBRARY_PATH before its cache; this process may
 * have a copy of that soname loaded already (linked, or found through its own RUNPATH),
 * which dlopen by soname would return, so the folders are searched here first. */
static bool on_library_path(const char *name, char *out, size_t len)
{
    const char *lp = getenv("LD_LIBRARY_PATH");
    while (lp && *lp) {
        size_t n = strcspn(lp, ":");
        if (n > 0 && n + strlen(name) + 2 <= len) {
            snprintf(out, len, "%.*s/%s", (int)n, lp, name);
            if (access(out, R_OK) == 0)
                return true;
        }
        lp += n + (lp[n] == ':');
    }
    return false;
}

void cct_nccl_lib_probe(const char *name, cct_nccl_lib *out)
{
    memset(out, 0, sizeof *out);
    if (!name)
        name = "libnccl.so.2";
    char found[4096];
    if (!strchr(name, '/') && on_library_path(name, found, sizeof found))
        name = found;
    void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        last_error(out->why, sizeof out->why);
        return;
    }
    out->found = true;
    lib_path(h, out->path, sizeof out->path);
    nccl_get_version_fn fn = (nccl_get_version_fn)dlsym(h, "ncclGetVersion");
    int v = 0;
    if (!fn)
        snprintf(out->why, sizeof out->why, "%.400s has no ncclGetVersion", out->path);
    else if (fn(&v) != 0 || v <= 0)
        snprintf(out->why, sizeof out->why, "ncclGetVersion failed in %.400s", out->path);
    else
        out->version = v;
    dlclose(h);
}

int cct_tuner_abi_for_nccl(int version)
{
    static const struct {
        int from, abi;
    } table[] = {{23000, 6}, {22800, 5}, {22400, 4}, {22200, 3}, {22000, 2}, {21900, 1}};
    if (version <= 0)
        return 6;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (version >= table[i].from)
            return table[i].abi;
    return 0;
}

/* NCCL 2.21+ turns a plain name into libnccl-tuner-NAME.so (plugin_open.cc): not a path,
 * and not already a library file name lib*.so. */
static bool derives_name(const char *v, int nccl_version)
{
    size_t n = strlen(v);
    if (nccl_version > 0 && nccl_version < 22100)
        return false;
    if (strchr(v, '/'))
        return false;
    return strncmp(v, "lib", 3) != 0 || n < 3 || strcmp(v + n - 3, ".so") != 0;
}

static void *try_open(const char *name, cct_tuner_lib *out)
{
    size_t used = strlen(out->tried);
    snprintf(out->tried + used, sizeof out->tried - used, "%s%s", used ? " " : "", name);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        last_error(out->why, sizeof out->why);
    else
        snprintf(out->name, sizeof out->name, "%s", name);
    return h;
}

void cct_tuner_lib_resolve(const char *env_value, int nccl_version, cct_tuner_lib *out)
{
    memset(out, 0, sizeof *out);
    if (env_value && strcasecmp(env_value, "none") == 0) {
        out->disabled = true;
        return;
    }
    void *h = NULL;
    if (!env_value || !*env_value) {
        h = try_open("libnccl-tuner.so", out);
    } else {
        h = try_open(env_value, out);
        if (!h && derives_name(env_value, nccl_version)) {
            char derived[512];
            snprintf(derived, sizeof derived, "libnccl-tuner-%s.so", env_value);
            h = try_open(derived, out);
        }
    }
    if (!h)
        return;
    out->found = true;
    out->why[0] = '\0';
    lib_path(h, out->path, sizeof out->path);
    out->ours = dlsym(h, "ccltune_control_abi") != NULL;
    for (int abi = cct_tuner_abi_for_nccl(nccl_version); abi >= 1 && !out->abi; abi--) {
        char sym[32];
        snprintf(sym, sizeof sym, "ncclTunerPlugin_v%d", abi);
        /* NCCL 2.22+ tries v2 at the oldest; 2.19 only v1 */
        if (dlsym(h, sym))
            out->abi = abi;
    }
    dlclose(h);
}
