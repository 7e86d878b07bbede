/*
 * bench_plugin_table.c - what a large table costs a job: memory, the first communicator
 * init (the table is read and indexed then) and every later init.
 *
 * For tables filled up to the size limit (CCT_TABLE_MAX_FILE_BYTES, 64 MiB) in the shapes
 * that stress the index -- hundreds of thousands of one-rule sections, one section of a
 * million rules, sections of a few rules -- it loads the built plugin as NCCL does (dlopen,
 * ncclTunerPlugin_v5 init under the stand-in CUDA driver) and reports: the heap the
 * loaded table holds after the first init (glibc mallinfo2, relative to the file size), the
 * peak resident memory during that init (VmHWM, reset before), the first init's wall time,
 * and the median and worst of later inits (+ finalize) for a communicator shape the table
 * has and one it has not.  docs/benchmarks.md records the figures with box and date.
 * Usage: bench_plugin_table [--shape NAME] [--inits N] [--max-bytes N]
 *   shapes: sectionsN (sections of N rules; sections1, sections5 and sections16 by default:
 *   the most sections, the smallest with a bucket table, a typical fitted section) and rules
 *   (one section of as many rules as fit)
 */
#include <malloc.h>
#include <stdint.h>
#include <time.h>

#include "bench_util.h"
#include "plugin_test_util.h"

/* The growing YAML text. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap *= 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
}

static const char *const colls[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                    "reduce"};
static const char *const protos[] = {"ll", "ll128", "simple"};

/* One section of n rules for (ranks, nodes 1); its rules cut [0, inf) geometrically. */
static void section(buf *b, int ranks, int n)
{
    put(b, "    - ranks: %d\n      nodes: 1\n      rules:\n", ranks);
    uint64_t lo = 0;
    for (int i = 0; i < n; i++) {
        uint64_t hi = 64ull << (i % 40);
        hi = hi <= lo ? lo + 1 : hi;
        if (i + 1 < n)
            put(b, "        - {min_bytes: %llu, max_bytes: %llu, algo: ring, proto: %s}\n",
                (unsigned long long)lo, (unsigned long long)hi, protos[i % 3]);
        else
            put(b, "        - {min_bytes: %llu, max_bytes: inf, algo: ring, proto: %s}\n",
                (unsigned long long)lo, protos[i % 3]);
        lo = hi;
    }
}

/* A table of the given shape as close to max_bytes as it gets; *n_sections, and the rank
 * count of a section every collective has (for the "present" init). */
static char *make_table(const char *shape, size_t max_bytes, long *n_sections)
{
    int per = strncmp(shape, "sections", 8) == 0 ? atoi(shape + 8) : 0; /* "rules": 0 */
    buf b = {malloc(1 << 20), 0, 1 << 20};
    char *head = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, true, "");
    put(&b, "%s", head);
    free(head);
    *n_sections = 0;
    size_t budget = max_bytes - 4096;
    if (per == 0) { /* one allreduce section with as many rules as fit */
        put(&b, "  allreduce:\n    - ranks: 8\n      nodes: 1\n      rules:\n");
        uint64_t lo = 0;
        for (long i = 0; b.len < budget - 200; i++) {
            put(&b, "        - {min_bytes: %llu, max_bytes: %llu, algo: ring, proto: %s}\n",
                (unsigned long long)lo, (unsigned long long)(lo + 64), protos[i % 3]);
            lo += 64;
        }
        put(&b, "        - {min_bytes: %llu, max_bytes: inf, algo: ring, proto: ll}\n",
            (unsigned long long)lo);
        *n_sections = 1;
        return b.p;
    }
    /* sections for ranks 2, 3, ... under each collective in turn, until the budget is
     * spent: spread evenly so every collective has rank counts 2 .. max */
    size_t per_coll = budget / 5;
    for (int c = 0; c < 5; c++) {
        put(&b, "  %s:\n", colls[c]);
        size_t start = b.len;
        for (int ranks = 2; b.len - start < per_coll - 64 * (size_t)per - 128; ranks++) {
            section(&b, ranks, per);
            (*n_sections)++;
        }
    }
    return b.p;
}

static long vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static void reset_hwm(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static size_t heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Median, 99th percentile and worst of n later inits + finalizes of (ranks, 1). */
static int later_inits(ncclTuner_v5_t *v5, int ranks, int n, double *median, double *p99,
                       double *worst)
{
    double *t = malloc((size_t)n * sizeof *t);
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, ranks, ranks};
    for (int i = 0; i < n; i++) {
        void *ctx = NULL;
        double t0 = now_ns();
        if (v5->init(&ctx, 100 + (uint64_t)i, (size_t)ranks, 1, NULL, &nvl, &k) != ncclSuccess)
            return 1;
        v5->finalize(ctx);
        t[i] = now_ns() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median = t[n / 2];
    *p99 = t[(size_t)n * 99 / 100];
    *worst = t[n - 1];
    free(t);
    return 0;
}

static int bench(const char *shape, size_t max_bytes, int inits)
{
    long n_sections;
    char *text = make_table(shape, max_bytes, &n_sections);
    size_t file_bytes = strlen(text);
    char *path = tu_write_temp(text);
    free(text);
    if (!path)
        return 1;
    setenv("CCLTUNE_TABLE", path, 1);
    malloc_trim(0);
    void *h = tu_plugin_open();
    if (!h)
        return 1;
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    void *ctx = NULL;
    tu_log_clear();
    size_t heap0 = heap_bytes();
    reset_hwm();
    long hwm0 = vm_hwm_kib();
    double t0 = now_ns();
    ncclResult_t res = v5 ? v5->init(&ctx, 1, 8, 1, tu_logger, &nvl, &k) : ncclInternalError;
    double first_ms = (now_ns() - t0) / 1e6;
    long hwm = vm_hwm_kib();
    size_t heap = heap_bytes() - heap0;
    if (res != ncclSuccess || !ctx || tu_log_count(NCCL_LOG_WARN, NULL) != 0) {
        fprintf(stderr, "%s: plugin init failed or warned: %s\n", shape,
                tu_log_find(NCCL_LOG_WARN, NULL) ? tu_log_find(NCCL_LOG_WARN, NULL) : "");
        return 1;
    }
    const char *line = tu_log_find(NCCL_LOG_INFO, "init comm");
    long long rules = line ? atoll(strstr(line, "sections / ") + 11) : -1;
    v5->finalize(ctx);
    double med_in, p99_in, worst_in, med_out, p99_out, worst_out;
    if (later_inits(v5, 3, inits, &med_in, &p99_in, &worst_in) ||
        later_inits(v5, 1 << 20, inits, &med_out, &p99_out, &worst_out))
        return 1;
    printf("%-10s %5.1f MiB %7ld sections %7lld rules | heap %6.1f MiB (%.2fx) peak RSS +%6.1f "
           "MiB (%.2fx) | first init %7.1f ms | later inits (us, median/p99/worst): present "
           "%.1f/%.1f/%.1f, absent %.1f/%.1f/%.1f\n",
           shape, (double)file_bytes / 1048576.0, n_sections, rules, (double)heap / 1048576.0,
           (double)heap / (double)file_bytes, (double)(hwm - hwm0) / 1024.0,
           (double)(hwm - hwm0) * 1024.0 / (double)file_bytes, first_ms, med_in / 1e3, p99_in / 1e3,
           worst_in / 1e3, med_out / 1e3, p99_out / 1e3, worst_out / 1e3);
    tu_plugin_close(h);
    unlink(path);
    free(path);
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int inits = 1000;
    size_t max_bytes = 64u << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--inits") == 0 && i + 1 < argc)
            inits = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc)
            max_bytes = (size_t)atoll(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s [--shape sectionsN|rules] "
                    "[--inits N] [--max-bytes N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (inits < 1 || max_bytes < 65536 || max_bytes > (64u << 20)) {
        fprintf(stderr, "--inits must be >= 1, --max-bytes 65536 .. 64 MiB\n");
        return 2;
    }
    if (!tu_load_fake_cuda()) {
        fprintf(stderr, "set CCT_FAKE_CUDA to the stand-in driver (build/tests/fake_cuda)\n");
        return 1;
    }
    static const char *const shapes[] = {"sections1", "sections5", "sections16", "rules"};
    int rc = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        if (!only || strcmp(only, shapes[i]) == 0)
            rc |= bench(shapes[i], max_bytes, inits);
    tu_unload_fake_cuda();
    return rc;
}
