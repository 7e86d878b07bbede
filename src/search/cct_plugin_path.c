/*
 * cct_plugin_path.c - where this ccltune's own tuner plugin is (cct_search_find_plugin).
 *
 * The search and bench runs load libnccl-tuner-ccltune.so into their workers, and
 * `ccltune doctor` reports which one a plain `ccltune` would use.  The plugin is the one
 * built or installed with the executable: an explicit path (--plugin, $CCLTUNE_PLUGIN)
 * wins; otherwise it is looked up relative to /proc/self/exe -- in the build tree the
 * binary is build/src/cli/ccltune and the plugin build/src/plugin/, once installed the
 * binary is PREFIX/BINDIR/ccltune and the plugin PREFIX/LIBDIR/ (CCT_PLUGIN_FROM_BINDIR,
 * written by meson from the configured bindir and libdir, relative so that a DESTDIR
 * staging tree or a moved prefix still works).  ../lib and ../lib64 are tried last.
 * Built without CUDA too: finding a file needs no GPU.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_config.h"
#include "cct_search.h"

#define PLUGIN_FILE "libnccl-tuner-ccltune.so"

static bool try_candidate(const char *dir, const char *rel, char *out, size_t len)
{
    char cand[PATH_MAX * 2 + 64], real[PATH_MAX];
    if (rel[0] == '/')
        snprintf(cand, sizeof cand, "%s/%s", rel, PLUGIN_FILE);
    else
        snprintf(cand, sizeof cand, "%s/%s/%s", dir, rel, PLUGIN_FILE);
    if (access(cand, R_OK) != 0 || !realpath(cand, real) || strlen(real) >= len)
        return false;
    strcpy(out, real);
    return true;
}

cct_status cct_search_find_plugin(const char *explicit_path, char *out, size_t len, cct_error *err)
{
    const char *given = explicit_path ? explicit_path : getenv("CCLTUNE_PLUGIN");
    char real[PATH_MAX];
    if (given) {
        if (!realpath(given, real) || access(real, R_OK) != 0 || strlen(real) >= len)
            return cct_error_set(err, CCT_ENOTFOUND, "plugin %s not found", given);
        strcpy(out, real);
        return CCT_OK;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cct_error_set(err, CCT_ENOTFOUND, "cannot locate the ccltune executable");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const rel[] = {"../plugin", CCT_PLUGIN_FROM_BINDIR, "../lib", "../lib64"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        if (try_candidate(exe, rel[i], out, len))
            return CCT_OK;
    return cct_error_set(err, CCT_ENOTFOUND,
                         "%s not found from %s (tried ../plugin, %s, ../lib, ../lib64); pass "
                         "--plugin PATH",
                         PLUGIN_FILE, exe, CCT_PLUGIN_FROM_BINDIR);
}
