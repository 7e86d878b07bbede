/*
 * profiler_test_util.h - drive the profiler half of libnccl-tuner-ccltune.so the way NCCL
 * does, for the programs that test recording and reading recordings.
 *
 * NCCL's order of calls for one collective (2.28, kernel-channel events active): the
 * launching thread starts the collective event with its algorithm, protocol and channel
 * count and stops it right after queuing the work; later the proxy thread starts one
 * kernel-channel event per channel with the GPU start stamp and the collective's handle as
 * parent, records its stop stamp (state ncclProfilerKernelChStop) and stops it.  pf_coll()
 * replays exactly that with stamps the caller chooses.  Include after plugin_test_util.h
 * in exactly one translation unit per program.
 */
#ifndef CCT_PROFILER_TEST_UTIL_H
#define CCT_PROFILER_TEST_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "nccl_profiler_abi.h"

/* NCCL's v5 layout, from its published header: the members read must sit here. */
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll) == 24, "union offset");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.count) == 24 + 32, "count");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.datatype) == 24 + 48, "datatype");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.nChannels) == 24 + 56, "nChannels");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.algo) == 24 + 64, "algo");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, coll.proto) == 24 + 72, "proto");
_Static_assert(offsetof(ncclProfilerEventDescr_v5_t, kernelCh.pTimer) == 24 + 8, "pTimer");
_Static_assert(offsetof(ncclProfilerEventDescr_v4_t, coll.algo) == 24 + 64, "v4 algo");
_Static_assert(offsetof(ncclProfilerEventDescr_v6_t, coll.proto) == 24 + 72, "v6 proto");

typedef struct pf_plugin {
    void *h;
    ncclProfiler_v6_t *v6;
    ncclProfiler_v5_t *v5;
    ncclProfiler_v4_t *v4;
    ncclTuner_v5_t *tuner5;
} pf_plugin;

static TU_UNUSED bool pf_open(pf_plugin *p)
{
    memset(p, 0, sizeof *p);
    if (!tu_load_fake_cuda() || !(p->h = tu_plugin_open()))
        return false;
    p->v6 = tu_sym(p->h, "ncclProfiler_v6");
    p->v5 = tu_sym(p->h, "ncclProfiler_v5");
    p->v4 = tu_sym(p->h, "ncclProfiler_v4");
    p->tuner5 = tu_sym(p->h, "ncclTunerPlugin_v5");
    return p->v6 && p->v5 && p->v4 && p->tuner5;
}

static TU_UNUSED bool pf_close(pf_plugin *p)
{
    bool gone = tu_plugin_close(p->h);
    memset(p, 0, sizeof *p);
    return gone;
}

/* One collective through v5 as NCCL calls it: channel c starts at t0 + c and stops at
 * t0 + c + ns (so the collective's GPU span is ns + channels - 1). */
static TU_UNUSED void pf_coll(const ncclProfiler_v5_t *v5, void *ctx, const char *func,
                              size_t count, const char *dtype, int channels, const char *algo,
                              const char *proto, uint64_t t0, uint64_t ns)
{
    ncclProfilerEventDescr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = CCT_PROF_COLL;
    d.coll.func = func;
    d.coll.count = count;
    d.coll.datatype = dtype;
    d.coll.nChannels = (uint8_t)channels;
    d.coll.algo = algo;
    d.coll.proto = proto;
    void *coll = NULL;
    v5->startEvent(ctx, &coll, &d);
    if (coll)
        v5->stopEvent(coll); /* host side: right after queuing */
    void *ch[64] = {0};
    for (int c = 0; c < channels && c < 64; c++) {
        ncclProfilerEventDescr_v5_t k;
        memset(&k, 0, sizeof k);
        k.type = CCT_PROF_KERNEL_CH;
        k.parentObj = coll;
        k.kernelCh.channelId = (uint8_t)c;
        k.kernelCh.pTimer = t0 + (uint64_t)c;
        v5->startEvent(ctx, &ch[c], &k);
    }
    for (int c = 0; c < channels && c < 64; c++) {
        if (!ch[c])
            continue;
        ncclProfilerEventStateArgs_v5_t a;
        memset(&a, 0, sizeof a);
        a.kernelCh.pTimer = t0 + (uint64_t)c + ns;
        v5->recordEventState(ch[c], CCT_PROF_STATE_KERNEL_CH_STOP, &a);
        v5->stopEvent(ch[c]);
    }
}

/* A new empty folder under TMPDIR; malloc'ed path. */
static TU_UNUSED char *pf_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/cct-rec-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

/* The *.rec files in dir: how many, and the first one's path in out (malloc'ed). */
static TU_UNUSED int pf_find_rec(const char *dir, char **out)
{
    int n = 0;
    if (out)
        *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".rec") == 0) {
            if (out && !*out) {
                *out = malloc(4096);
                snprintf(*out, 4096, "%s/%s", dir, e->d_name);
            }
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Remove dir and the plain files in it. */
static TU_UNUSED void pf_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

#endif
