/*
 * plugin_test_util.h - helpers for the programs that drive libnccl-tuner-ccltune.so the
 * way NCCL does (ABI, property and thread tests, bench/bench_plugin.c).
 *
 * - A logger with NCCL's ncclDebugLogger_t signature that records every line (thread-safe),
 *   so tests can count WARNs and read the finalize counters.
 * - ncclGetVersion, defined here and exported from the test executable (export_dynamic):
 *   the plugin finds it with dlsym(RTLD_DEFAULT) as it finds NCCL's in a real job.
 *   fake_nccl_version sets what it answers.
 * - The fake CUDA driver (tests/fake_cuda/fake_libcuda.c, soname libcuda.so.1), opened by path
 * before the plugin so the plugin's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it.
 * - Loading/unloading the plugin: each load is a fresh process-wide state (table parsed
 *   once per load), so a test sets the environment, loads, runs, and unloads.
 * - YAML tables written to temporary files.
 * Include it in exactly one translation unit per program.
 */
#ifndef CCT_PLUGIN_TEST_UTIL_H
#define CCT_PLUGIN_TEST_UTIL_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"

#define TU_UNUSED __attribute__((unused))

/* ---- recorded log ---- */
#define TU_LOG_MAX 20000
typedef struct tu_log_line {
    int level;
    unsigned long flags;
    char text[1024];
} tu_log_line;

static pthread_mutex_t tu_log_mu = PTHREAD_MUTEX_INITIALIZER;
static tu_log_line tu_log[TU_LOG_MAX];
static int tu_n_log;
static bool tu_log_echo; /* CCT_TEST_VERBOSE=1 prints lines to stderr */

static TU_UNUSED void tu_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                int line, const char *fmt, ...)
{
    (void)file;
    (void)line;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&tu_log_mu);
    if (tu_n_log < TU_LOG_MAX) {
        tu_log[tu_n_log].level = (int)level;
        tu_log[tu_n_log].flags = flags;
        memcpy(tu_log[tu_n_log].text, text, sizeof text);
        tu_n_log++;
    }
    if (tu_log_echo)
        fprintf(stderr, "[log %d] %s\n", (int)level, text);
    pthread_mutex_unlock(&tu_log_mu);
}

static TU_UNUSED void tu_log_clear(void)
{
    pthread_mutex_lock(&tu_log_mu);
    tu_n_log = 0;
    pthread_mutex_unlock(&tu_log_mu);
}

/* Lines at `level` (0: any) containing every one of the NULL-terminated substrings. */
static TU_UNUSED int tu_log_count(int level, const char *needle)
{
    int n = 0;
    pthread_mutex_lock(&tu_log_mu);
    for (int i = 0; i < tu_n_log; i++)
        if ((level == 0 || tu_log[i].level == level) && (!needle || strstr(tu_log[i].text, needle)))
            n++;
    pthread_mutex_unlock(&tu_log_mu);
    return n;
}

/* The last line at `level` containing needle, or NULL (pointer valid until the next clear). */
static TU_UNUSED const char *tu_log_find(int level, const char *needle)
{
    const char *hit = NULL;
    pthread_mutex_lock(&tu_log_mu);
    for (int i = 0; i < tu_n_log; i++)
        if ((level == 0 || tu_log[i].level == level) && (!needle || strstr(tu_log[i].text, needle)))
            hit = tu_log[i].text;
    pthread_mutex_unlock(&tu_log_mu);
    return hit;
}

/* The number after "key=" in line, or -1. */
static TU_UNUSED long long tu_field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = line ? strstr(line, pat) : NULL;
    return p ? atoll(p + strlen(pat)) : -1;
}

/* ---- the NCCL the plugin sees ---- */
int fake_nccl_version = 22809;
__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int *version);
__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int *version)
{
    *version = fake_nccl_version;
    return ncclSuccess;
}

static TU_UNUSED void *tu_fake_cuda;

/* Open the fake driver once per process (path in CCT_FAKE_CUDA). */
static TU_UNUSED bool tu_load_fake_cuda(void)
{
    if (tu_fake_cuda)
        return true;
    const char *path = getenv("CCT_FAKE_CUDA");
    if (!path)
        return false;
    tu_fake_cuda = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!tu_fake_cuda)
        fprintf(stderr, "cannot open fake CUDA driver %s: %s\n", path, dlerror());
    return tu_fake_cuda != NULL;
}

static TU_UNUSED void tu_unload_fake_cuda(void)
{
    if (tu_fake_cuda)
        dlclose(tu_fake_cuda);
    tu_fake_cuda = NULL;
}

/* ---- the plugin ---- */
static TU_UNUSED void *tu_plugin_open(void)
{
    const char *path = getenv("CCT_PLUGIN");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h)
        fprintf(stderr, "cannot open plugin %s: %s\n", path ? path : "(CCT_PLUGIN unset)",
                dlerror());
    return h;
}

/* Close; returns true when the library really left the process (its state is gone). */
static TU_UNUSED bool tu_plugin_close(void *h)
{
    const char *path = getenv("CCT_PLUGIN");
    if (h)
        dlclose(h);
    void *again = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (again) {
        dlclose(again);
        return false;
    }
    return true;
}

static TU_UNUSED void *tu_sym(void *h, const char *name)
{
    void *s = dlsym(h, name);
    if (!s)
        fprintf(stderr, "plugin lacks %s\n", name);
    return s;
}

/* ---- tables ---- */

/* Write text to a new temporary file named *.yaml; returns the malloc'ed path. */
static TU_UNUSED char *tu_write_temp(const char *text)
{
    const char *dir = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/cct-plugin-test-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 5);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) {
        close(fd);
        unlink(path);
        free(path);
        return NULL;
    }
    close(fd);
    return path;
}

/* A complete table: header fields from the arguments, `collectives` as the YAML body under
 * "collectives:" (indented by the caller, two spaces per level).  Returns malloc'ed text. */
static TU_UNUSED char *tu_table_yaml(const char *gpu, const char *cc, const char *nccl,
                                     int ranks_per_gpu, bool ll128_allowed, const char *collectives)
{
    size_t len = strlen(collectives) + 2048;
    char *text = malloc(len);
    snprintf(text, len,
             "ccltune_table: 1\n"
             "provenance:\n"
             "  tool: \"ccltune test\"\n"
             "  created: \"2026-11-29T14:00:00Z\"\n"
             "  source: \"hand-written\"\n"
             "fingerprint:\n"
             "  gpu: \"%s\"\n"
             "  cc: \"%s\"\n"
             "  gpus_per_node: 8\n"
             "  nodes: 1\n"
             "  ranks_per_gpu: %d\n"
             "  links: nvlink\n"
             "  nccl: \"%s\"\n"
             "ll128:\n"
             "  allowed: %s\n"
             "collectives:\n%s",
             gpu, cc, ranks_per_gpu, nccl, ll128_allowed ? "true" : "false", collectives);
    return text;
}

/* ---- cost tables ---- */
#define TU_IGN (-1.0f)

/* Fill a 7x3 cost table (row-major, NCCL's layout) with distinct positive costs. */
static TU_UNUSED void tu_costs_fill(float *c, int num_algo, int num_proto)
{
    for (int a = 0; a < num_algo; a++)
        for (int p = 0; p < num_proto; p++)
            c[a * num_proto + p] = 10.0f + (float)(a * num_proto + p);
}

#endif
