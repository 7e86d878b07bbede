/*
 * bench_plugin.c - how much a getCollInfo call of libnccl-tuner-ccltune.so costs.
 *
 * For tables of 10, 1,000 and 10,000 rules (one allreduce section), the benchmark loads
 * the built plugin as NCCL does (dlopen, ncclTunerPlugin_v5, init with a matching
 * fingerprint), then times a loop of getCollInfo calls over message sizes spread across
 * all bands (log-uniform, precomputed), reporting the best and median of several runs in
 * ns per call.  The cost table is not refilled between calls: once the chosen entry is
 * 0.0 it stays a valid entry, so every call walks the same decision path as in NCCL.
 *
 * Instructions per call: run under callgrind collecting only inside the plugin's
 * getCollInfo (the static function coll_costs):
 *   valgrind --tool=callgrind --toggle-collect=coll_costs \
 *       build-plugin/bench/bench_plugin --callgrind --rules 10000
 * and divide the "Collected" Ir by the call count the program prints.
 * --measure bypass|force|table times the same calls in measurement mode, as `ccltune search`
 * and `ccltune bench` drive the plugin: NCCL's default (bypass), a forced configuration
 * (Ring/LL) and the table applied (the bench's "tuned").  Their difference is CPU time added
 * to every collective call of the measuring loop, which matters where NCCL's small calls are
 * bound by the CPU launch path (docs/benchmarks.md).
 * Usage: bench_plugin [--rules N] [--calls N] [--callgrind] [--measure MODE]
 */
#include <math.h>
#include <stdint.h>
#include <time.h>

#include "bench_util.h"
#include "plugin_test_util.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* n rules over [0, inf): band edges geometric from 64 B to ~16 GiB, so sizes drawn
 * log-uniformly hit every part of the table. */
static char *table_with_rules(int n)
{
    size_t cap = (size_t)n * 96 + 512, len = 0;
    char *b = malloc(cap);
    len += (size_t)snprintf(b + len, cap - len,
                            "  allreduce:\n    - ranks: 8\n      nodes: 1\n      rules:\n");
    static const char *algos[] = {"tree", "ring"};
    static const char *protos[] = {"ll", "ll128", "simple"};
    uint64_t lo = 0;
    double ratio = pow(16.0 * 1024 * 1024 * 1024 / 64.0, 1.0 / n);
    double edge = 64.0;
    for (int i = 0; i < n; i++) {
        uint64_t hi = (uint64_t)edge;
        if (hi <= lo)
            hi = lo + 1;
        edge *= ratio;
        len += (size_t)snprintf(b + len, cap - len,
                                "        - {min_bytes: %llu, max_bytes: ", (unsigned long long)lo);
        if (i + 1 < n)
            len += (size_t)snprintf(b + len, cap - len, "%llu", (unsigned long long)hi);
        else
            len += (size_t)snprintf(b + len, cap - len, "inf");
        len += (size_t)snprintf(b + len, cap - len, ", algo: %s, proto: %s, channels: %d}\n",
                                algos[i % 2], protos[i % 3], i % 5 == 0 ? 0 : 1 + i % 32);
        lo = hi;
    }
    return b;
}

#define SIZES 4096
#define REPEATS 7

/* measurement mode: -1 none, else the ccltune_control_force algorithm (-2 bypass, -1 table) */
static int measure_algo = -3;

static int bench(int n_rules, long calls, bool callgrind)
{
    char *body = table_with_rules(n_rules);
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, true, body);
    free(body);
    char *path = tu_write_temp(text);
    free(text);
    if (!path)
        return 1;
    setenv("CCLTUNE_TABLE", path, 1);
    void *h = tu_plugin_open();
    if (!h)
        return 1;
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    void *ctx = NULL;
    tu_log_clear();
    if (!v5 || v5->init(&ctx, 1, 8, 1, tu_logger, &nvl, &k) != ncclSuccess || !ctx ||
        tu_log_count(NCCL_LOG_WARN, NULL) != 0) {
        fprintf(stderr, "plugin init failed or warned: %s\n",
                tu_log_find(NCCL_LOG_WARN, NULL) ? tu_log_find(NCCL_LOG_WARN, NULL) : "");
        return 1;
    }
    if (measure_algo > -3) {
        int (*force)(int, int, int) = (int (*)(int, int, int))tu_sym(h, "ccltune_control_force");
        /* -1: no forcing, the table decides (the bench's "tuned"); Ring = 1, LL = 0 */
        if (!force || force(measure_algo, 0, 0) != 0) {
            fprintf(stderr, "ccltune_control_force refused the mode\n");
            return 1;
        }
    }
    static size_t sizes[SIZES];
    for (int i = 0; i < SIZES; i++)
        sizes[i] = (size_t)exp2(6.0 + 28.0 * (double)(rnd() % 1000000) / 1e6);
    float costs[21];
    tu_costs_fill(costs, 7, 3);
    int nch = 0;
    double runs[REPEATS];
    int repeats = callgrind ? 1 : REPEATS;
    for (int r = 0; r < repeats; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            nch = 0;
            v5->getCollInfo(ctx, 4, sizes[i & (SIZES - 1)], 1, (float **)costs, 7, 3, 0, &nch);
        }
        runs[r] = (now_ns() - t0) / (double)calls;
    }
    v5->finalize(ctx);
    const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize");
    long long over = tu_field(fin, "overridden");
    qsort(runs, (size_t)repeats, sizeof *runs, cmp_double);
    const char *mode = measure_algo == -3   ? ""
                       : measure_algo == -2 ? "  measure: bypass"
                       : measure_algo == -1 ? "  measure: table"
                                            : "  measure: force ring/ll";
    printf("%7d rules  %10ld calls x %d  best %6.1f ns/call  median %6.1f ns/call  "
           "overridden %lld%s\n",
           n_rules, calls, repeats, runs[0], runs[repeats / 2], over, mode);
    if (measure_algo != -2 && over != (long long)calls * repeats) {
        fprintf(stderr, "not every call was decided by the table (%lld)\n", over);
        return 1;
    }
    tu_plugin_close(h);
    unlink(path);
    free(path);
    return 0;
}

int main(int argc, char **argv)
{
    int only = 0;
    long calls = 10 * 1000 * 1000;
    bool callgrind = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--callgrind") == 0)
            callgrind = true;
        else if (strcmp(argv[i], "--measure") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            measure_algo = strcmp(m, "bypass") == 0  ? -2
                           : strcmp(m, "table") == 0 ? -1
                           : strcmp(m, "force") == 0 ? 1
                                                     : -4;
            if (measure_algo == -4) {
                fprintf(stderr, "--measure: expected bypass, force or table, not '%s'\n", m);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [--rules N] [--calls N] [--callgrind] [--measure MODE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (callgrind && calls == 10 * 1000 * 1000)
        calls = 100000;
    if (!tu_load_fake_cuda()) {
        fprintf(stderr, "set CCT_FAKE_CUDA to the stand-in driver (build/tests/fake_cuda)\n");
        return 1;
    }
    static const int sizes[] = {10, 1000, 10000};
    int rc = 0;
    for (int i = 0; i < 3; i++)
        if (!only || only == sizes[i])
            rc |= bench(sizes[i], calls, callgrind);
    if (only && only != 10 && only != 1000 && only != 10000)
        rc |= bench(only, calls, callgrind);
    tu_unload_fake_cuda();
    return rc;
}
