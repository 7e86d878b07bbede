/*
 * bench_profiler.c - the CPU cost per collective of the profiler half of
 * libnccl-tuner-ccltune.so, through the entry points NCCL calls.
 *
 * The built plugin is loaded as NCCL loads it (dlopen, ncclProfiler_v5, init with
 * CCLTUNE_RECORD set to a temporary folder).  One "collective" is what NCCL 2.28 calls for
 * a 1-channel collective with kernel-channel events active: startEvent(coll),
 * stopEvent(coll), startEvent(kernelCh), recordEventState(KernelChStop), stopEvent(kernelCh)
 * -- five calls.  Sizes cycle over 64 values so that several entries of the recorder's
 * table are hit.  The loop runs with recording on, then the same loop with recording off
 * (init answered mask 0 and a NULL context; NCCL would then call nothing at all, so "off"
 * times the calls anyway as an upper bound).  Reports the best and median of 7 runs in ns
 * per collective.  Usage: bench_profiler [--calls N]
 */
#include <stdint.h>
#include <time.h>

#include "bench_util.h"
#include "plugin_test_util.h"
#include "profiler_test_util.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double run(const ncclProfiler_v5_t *v5, void *ctx, long calls)
{
    ncclProfilerEventDescr_v5_t d, k;
    memset(&d, 0, sizeof d);
    memset(&k, 0, sizeof k);
    d.type = CCT_PROF_COLL;
    d.coll.func = "AllReduce";
    d.coll.datatype = "ncclFloat32";
    d.coll.nChannels = 1;
    d.coll.algo = "RING";
    d.coll.proto = "LL";
    k.type = CCT_PROF_KERNEL_CH;
    ncclProfilerEventStateArgs_v5_t a;
    memset(&a, 0, sizeof a);
    double t0 = now_ns();
    for (long i = 0; i < calls; i++) {
        d.coll.count = (size_t)256 << (i & 63) % 20;
        void *h = NULL, *kh = NULL;
        v5->startEvent(ctx, &h, &d);
        v5->stopEvent(h);
        k.parentObj = h;
        k.kernelCh.pTimer = (uint64_t)i * 100000;
        v5->startEvent(ctx, &kh, &k);
        a.kernelCh.pTimer = (uint64_t)i * 100000 + 20000;
        v5->recordEventState(kh, CCT_PROF_STATE_KERNEL_CH_STOP, &a);
        v5->stopEvent(kh);
    }
    return (now_ns() - t0) / (double)calls;
}

static void report(const char *what, const ncclProfiler_v5_t *v5, void *ctx, long calls)
{
    double t[7];
    for (int r = 0; r < 7; r++)
        t[r] = run(v5, ctx, calls);
    qsort(t, 7, sizeof *t, cmp_d);
    printf("%-14s best %6.1f ns  median %6.1f ns per collective (5 entry-point calls)\n", what,
           t[0], t[3]);
}

int main(int argc, char **argv)
{
    long calls = 2000000;
    if (argc == 3 && strcmp(argv[1], "--calls") == 0)
        calls = atol(argv[2]);
    char *dir = pf_tmpdir();
    pf_plugin p;
    setenv("CCLTUNE_RECORD", dir, 1);
    if (!dir || !pf_open(&p)) {
        fprintf(stderr, "bench_profiler: cannot load the plugin (CCT_PLUGIN, CCT_FAKE_CUDA)\n");
        return 1;
    }
    void *ctx = NULL;
    int mask = 0;
    p.v5->init(&ctx, 1, &mask, "bench", 1, 1, 0, tu_logger);
    report("recording on", p.v5, ctx, calls);
    p.v5->finalize(ctx);
    pf_close(&p);
    unsetenv("CCLTUNE_RECORD");
    pf_open(&p);
    p.v5->init(&ctx, 1, &mask, "bench", 1, 1, 0, tu_logger);
    if (mask != 0 || ctx)
        fprintf(stderr, "bench_profiler: recording did not turn off\n");
    report("recording off", p.v5, ctx, calls);
    p.v5->finalize(ctx);
    pf_close(&p);
    pf_rmdir(dir);
    free(dir);
    return 0;
}
