/*
 * test_plugin_attacks.c - the built plugin attacked through its ABI, as a hostile or buggy
 * environment would: NCCL's calls with arguments NCCL never passes, tables swapped under the
 * loader, and many threads at once, under the stand-in CUDA driver (tests/fake_cuda).
 *
 * Attacks: a table replaced by rename, rewritten in place, truncated, emptied or corrupted
 * while 64 threads initialise communicators (the process-wide load races the writer);
 * cost tables of every shape from 1x1 to 10x5 (NCCL has 6x3 or 7x3), allocated to their
 * exact size so AddressSanitizer sees any write past them, filled with IGNORE, negatives,
 * NaN, infinities and -0.0; NULL pointers and absurd sizes in every argument; 64 threads
 * creating, calling and finalizing contexts while one thread switches measurement mode
 * between a forbidden LL128 configuration, the table, NCCL (bypass) and another forced one.
 * Every GPU here is one where LL128 must not be chosen: a T4 (cc 7.5) under NCCL 2.24.3,
 * which NCCL's rule refuses, with a table that claims LL128 is fine; and an H200 under
 * NCCL 2.28.9 with a table whose ll128.allowed is false.
 * Properties checked after every call: no crash; an entry NCCL set to IGNORE (-1.0) is never
 * changed, nor any other negative or NaN entry; at most one entry changes, only to 0.0;
 * no LL128 entry is ever chosen; nothing outside the table is written.  CI runs it under
 * ASan+UBSan and ThreadSanitizer (tools/ci-reliability.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "ccltune_control.h"
#include "plugin_test_util.h"

#define THREADS 64
#define P_LL128 1

/* ---- the two LL128-forbidding setups ---- */
typedef struct setup {
    const char *name;
    const char *gpu, *cc_text, *nccl_text;
    const char *fake_cc;
    int nccl_version;
    bool table_ll128;
} setup;

static const setup setups[] = {
    /* NCCL's rule refuses cc 7.5 in 2.24; the table's verdict lies */
    {"T4 under NCCL 2.24.3", "Tesla T4", "7.5", "2.24.3", "75", 22403, true},
    /* NCCL's rule allows the GPU; the table (the probe's paths) says no */
    {"H200 with ll128.allowed false", "NVIDIA H200", "9.0", "2.28.9", "90", 22809, false},
};

/* Rules that want LL128 in places, and every algorithm, for 8 ranks on one node. */
static const char *body_a =
    "  allreduce:\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, channels: 2}\n"
    "        - {min_bytes: 64KiB, max_bytes: 4MiB, algo: tree, proto: ll128}\n"
    "        - {min_bytes: 4MiB, max_bytes: inf, algo: ring, proto: ll128, channels: 8}\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      pipe_ops: 2\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: nvls, proto: simple}\n"
    "  allgather:\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      reg_buff: true\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: pat, proto: simple}\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 1MiB, algo: ring, proto: ll128}\n"
    "        - {min_bytes: 1MiB, max_bytes: inf, algo: collnet_direct, proto: simple}\n";

/* A second valid table: the swap changes the choice. */
static const char *body_b = "  allreduce:\n"
                            "    - ranks: 8\n"
                            "      nodes: 1\n"
                            "      rules:\n"
                            "        - {min_bytes: 0, max_bytes: inf, algo: tree, proto: simple}\n";

static void use_setup(const setup *s)
{
    setenv("CCT_FAKE_GPU_NAME", s->gpu, 1);
    setenv("CCT_FAKE_GPU_CC", s->fake_cc, 1);
    fake_nccl_version = s->nccl_version;
    unsetenv("CCLTUNE_FORCE");
    unsetenv("CCLTUNE_MEASURE");
    unsetenv("NCCL_PROTO");
    unsetenv("CCLTUNE_STRICT");
}

static char *table_text(const setup *s, const char *body)
{
    return tu_table_yaml(s->gpu, s->cc_text, s->nccl_text, 1, s->table_ll128, body);
}

/* ---- the per-call check ---- */

static atomic_int violations;
static char first_violation[512];
static pthread_mutex_t violation_mu = PTHREAD_MUTEX_INITIALIZER;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
    if (atomic_fetch_add(&violations, 1) != 0)
        return;
    pthread_mutex_lock(&violation_mu);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(first_violation, sizeof first_violation, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&violation_mu);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* Random entries: valid times, IGNORE, other negatives, NaN, infinities, -0.0. */
static void fill_odd(float *c, int n, uint64_t *rng)
{
    for (int i = 0; i < n; i++) {
        uint64_t r = xorshift(rng);
        switch (r % 10) {
        case 0:
        case 1:
            c[i] = TU_IGN;
            break;
        case 2:
            c[i] = -(float)(r % 1000) - 2.0f;
            break;
        case 3:
            c[i] = NAN;
            break;
        case 4:
            c[i] = (r >> 8) & 1 ? INFINITY : -INFINITY;
            break;
        case 5:
            c[i] = -0.0f;
            break;
        default:
            c[i] = 1.0f + (float)(r % 100000) / 7.0f;
        }
    }
}

/* Compare a cost table after a call with its copy from before: at most one entry changed,
 * from a value >= 0 to 0.0, not an LL128 entry; nch either untouched or a channel count. */
static int check_costs(const float *before, const float *after, int na, int np, int nch_before,
                       int nch_after, const char *what)
{
    int changed = 0;
    for (int a = 0; a < na; a++) {
        for (int p = 0; p < np; p++) {
            int i = a * np + p;
            if (memcmp(&before[i], &after[i], sizeof(float)) == 0)
                continue;
            changed++;
            if (!(before[i] >= 0.0f))
                violation("%s: entry [%d][%d] of %dx%d changed from %g (ignored/negative/NaN) to "
                          "%g",
                          what, a, p, na, np, (double)before[i], (double)after[i]);
            else if (after[i] != 0.0f)
                violation("%s: entry [%d][%d] changed to %g, not 0.0", what, a, p,
                          (double)after[i]);
            if (p == P_LL128)
                violation("%s: LL128 chosen ([%d][%d] of %dx%d) where it is forbidden", what, a, p,
                          na, np);
        }
    }
    if (changed > 1)
        violation("%s: %d entries changed", what, changed);
    if (nch_after != nch_before && (nch_after < 1 || nch_after > 64))
        violation("%s: nChannels set to %d", what, nch_after);
    return changed;
}

/* One getCollInfo on a table of na x np (exact allocation) with odd entries. */
static void attack_call(ncclTuner_v5_t *v5, void *ctx, int coll, size_t bytes, int pipe_ops, int na,
                        int np, int reg, uint64_t *rng)
{
    size_t n = (size_t)na * (size_t)np;
    float *c = malloc(n * sizeof *c), *before = malloc(n * sizeof *before);
    if (!c || !before) {
        violation("out of memory in the test");
        free(c);
        free(before);
        return;
    }
    fill_odd(c, (int)n, rng);
    if ((xorshift(rng) & 3) == 0) /* also plain tables, where the rule can apply */
        tu_costs_fill(c, na, np);
    memcpy(before, c, n * sizeof *c);
    int nch = 7;
    v5->getCollInfo(ctx, coll, bytes, pipe_ops, (float **)c, na, np, reg, &nch);
    check_costs(before, c, na, np, 7, nch, "getCollInfo");
    free(c);
    free(before);
}

static const size_t sizes[] = {0,       1, 4096, 65535, 65536, 1 << 20, 5 << 20, (size_t)1 << 40,
                               SIZE_MAX};

static void random_call(ncclTuner_v5_t *v5, void *ctx, uint64_t *rng)
{
    uint64_t r = xorshift(rng);
    int na = (r & 1) ? 7 : 1 + (int)((r >> 1) % 10);
    int np = (r & 2) ? 3 : 1 + (int)((r >> 5) % 5);
    int coll = (int)((r >> 9) % 7) - 1; /* -1 .. 5: beyond NCCL's collectives too */
    size_t bytes = sizes[(r >> 13) % (sizeof sizes / sizeof *sizes)];
    int pipe_ops = (int)((r >> 17) % 4) - 1;
    int reg = (int)((r >> 20) % 4) - 1;
    attack_call(v5, ctx, coll, bytes, pipe_ops, na, np, reg, rng);
}

/* ---- plugin handles ---- */
typedef struct plugin {
    void *h;
    ncclTuner_v6_t *v6;
    ncclTuner_v5_t *v5;
    ncclTuner_v2_t *v2;
    ncclTuner_v1_t *v1;
    int (*force)(int, int, int);
    void (*last)(ccltune_observation *);
} plugin;

static bool plugin_open(plugin *P)
{
    memset(P, 0, sizeof *P);
    P->h = tu_plugin_open();
    if (!P->h)
        return false;
    P->v6 = tu_sym(P->h, "ncclTunerPlugin_v6");
    P->v5 = tu_sym(P->h, "ncclTunerPlugin_v5");
    P->v2 = tu_sym(P->h, "ncclTunerPlugin_v2");
    P->v1 = tu_sym(P->h, "ncclTunerPlugin_v1");
    *(void **)&P->force = tu_sym(P->h, "ccltune_control_force");
    *(void **)&P->last = tu_sym(P->h, "ccltune_control_last");
    return P->v6 && P->v5 && P->v2 && P->v1 && P->force && P->last;
}

static char *dir; /* private (0700), so the folder rule holds */

static char *path_in_dir(const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    if (write(fd, text, len) < 0)
        violation("cannot write %s", path);
    close(fd);
}

/* ---- attack 1: the table swapped while communicators initialise ---- */

static atomic_bool writer_stop;

typedef struct writer_arg {
    const char *path;
    char *good_a, *good_b;
} writer_arg;

static void *writer(void *argp)
{
    writer_arg *w = argp;
    char *tmp = path_in_dir("swap.tmp");
    uint64_t rng = 0x1234567;
    const char *bad = "ccltune_table: 1\ncollectives: [unterminated\n";
    while (!atomic_load(&writer_stop)) {
        uint64_t r = xorshift(&rng);
        const char *text = (r & 1) ? w->good_a : w->good_b;
        size_t len = strlen(text);
        switch ((r >> 1) % 6) {
        case 0: /* atomic replace, as a deployment should */
        case 1:
            write_file(tmp, text, len);
            rename(tmp, w->path);
            break;
        case 2: { /* rewritten in place in two halves: readers may see half a table */
            int fd = open(w->path, O_WRONLY | O_TRUNC);
            if (fd >= 0) {
                if (write(fd, text, len / 2) < 0 ||
                    (sched_yield(), write(fd, text + len / 2, len - len / 2)) < 0)
                    violation("cannot write the table");
                close(fd);
            }
            break;
        }
        case 3: /* emptied */
            write_file(tmp, "", 0);
            rename(tmp, w->path);
            break;
        case 4: /* corrupt */
            write_file(tmp, bad, strlen(bad));
            rename(tmp, w->path);
            break;
        default: /* gone for a moment */
            unlink(w->path);
            sched_yield();
            write_file(tmp, text, len);
            rename(tmp, w->path);
        }
        sched_yield();
    }
    free(tmp);
    return NULL;
}

typedef struct race_arg {
    plugin *P;
    int id;
    pthread_barrier_t *barrier;
    atomic_int *choice; /* the 4096-byte allreduce's chosen entry, -1 none, agreed by all */
} race_arg;

static void *race_worker(void *argp)
{
    race_arg *a = argp;
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)a->id;
    pthread_barrier_wait(a->barrier);
    void *ctx = NULL;
    if (a->P->v5->init(&ctx, 0x1000 + (uint64_t)a->id, 8, 1, tu_logger, &nvl, &k) != ncclSuccess)
        violation("init failed without CCLTUNE_STRICT");
    /* every context of the process shares one table: all agree on the choice */
    float c[21];
    tu_costs_fill(c, 7, 3);
    int nch = 0;
    a->P->v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, 7, 3, 0, &nch);
    int chosen = -1;
    for (int i = 0; i < 21; i++)
        if (c[i] == 0.0f)
            chosen = i;
    int expected = -2;
    if (!atomic_compare_exchange_strong(a->choice, &expected, chosen) && expected != chosen)
        violation("contexts of one process disagree: entry %d and %d", expected, chosen);
    if (chosen != -1 && chosen != 1 * 3 + 0 && chosen != 0 * 3 + 2)
        violation("the swapped table chose entry %d, in neither version", chosen);
    for (int i = 0; i < 50; i++)
        random_call(a->P->v5, ctx, &rng);
    if (a->P->v5->finalize(ctx) != ncclSuccess)
        violation("finalize failed");
    return NULL;
}

static void test_table_swapped_during_init(void **state)
{
    (void)state;
    atomic_store(&violations, 0);
    for (size_t si = 0; si < sizeof setups / sizeof *setups; si++) {
        const setup *s = &setups[si];
        use_setup(s);
        char *table_path = path_in_dir("table.yaml");
        writer_arg w = {table_path, table_text(s, body_a), table_text(s, body_b)};
        write_file(w.path, w.good_a, strlen(w.good_a));
        setenv("CCLTUNE_TABLE", w.path, 1);
        atomic_store(&writer_stop, false);
        pthread_t wt;
        assert_int_equal(pthread_create(&wt, NULL, writer, &w), 0);
        int rounds = 12, tables = 0;
        for (int round = 0; round < rounds; round++) {
            tu_log_clear();
            plugin P;
            assert_true(plugin_open(&P));
            pthread_barrier_t barrier;
            pthread_barrier_init(&barrier, NULL, THREADS);
            atomic_int choice = -2;
            race_arg args[THREADS];
            pthread_t th[THREADS];
            for (int i = 0; i < THREADS; i++) {
                args[i] = (race_arg){&P, i, &barrier, &choice};
                assert_int_equal(pthread_create(&th[i], NULL, race_worker, &args[i]), 0);
            }
            for (int i = 0; i < THREADS; i++)
                pthread_join(th[i], NULL);
            pthread_barrier_destroy(&barrier);
            /* a refused file is one WARN for the process, not one per communicator */
            if (tu_log_count(NCCL_LOG_WARN, NULL) > 1)
                violation("%d WARNs in one load", tu_log_count(NCCL_LOG_WARN, NULL));
            tables += atomic_load(&choice) != -1;
            if (!tu_plugin_close(P.h))
                violation("the plugin did not unload");
        }
        atomic_store(&writer_stop, true);
        pthread_join(wt, NULL);
        print_message("%s: %d loads while the table was swapped, %d used a table\n", s->name,
                      rounds, tables);
        unlink(w.path);
        free(table_path);
        free(w.good_a);
        free(w.good_b);
        if (atomic_load(&violations))
            fail_msg("%s: %d violations, first: %s", s->name, atomic_load(&violations),
                     first_violation);
    }
}

/* ---- attack 2: every cost-table shape, every odd entry, odd keys ---- */

static void test_odd_cost_tables(void **state)
{
    (void)state;
    atomic_store(&violations, 0);
    for (size_t si = 0; si < sizeof setups / sizeof *setups; si++) {
        const setup *s = &setups[si];
        use_setup(s);
        char *text = table_text(s, body_a);
        char *path = path_in_dir("odd.yaml");
        write_file(path, text, strlen(text));
        free(text);
        setenv("CCLTUNE_TABLE", path, 1);
        for (int measure = 0; measure < 2; measure++) {
            if (measure) /* forced LL128, NCCL_PROTO unlocking it: still refused here */
                setenv("CCLTUNE_FORCE", "ring/ll128", 1);
            if (measure)
                setenv("NCCL_PROTO", "LL,LL128,Simple", 1);
            tu_log_clear();
            plugin P;
            assert_true(plugin_open(&P));
            ncclTunerConstants_v5_t k;
            ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
            void *ctx = NULL;
            assert_int_equal(P.v5->init(&ctx, 7, 8, 1, tu_logger, &nvl, &k), ncclSuccess);
            assert_non_null(ctx);
            uint64_t rng = 42;
            for (int na = 1; na <= 10; na++)
                for (int np = 1; np <= 5; np++)
                    for (int coll = -1; coll <= 5; coll++)
                        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
                            for (int pipe = 1; pipe <= 2; pipe++)
                                attack_call(P.v5, ctx, coll, sizes[b], pipe, na, np, pipe - 1,
                                            &rng);
            for (int i = 0; i < 20000; i++)
                random_call(P.v5, ctx, &rng);
            assert_int_equal(P.v5->finalize(ctx), ncclSuccess);
            const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize comm");
            assert_non_null(fin);
            assert_true(tu_field(fin, "calls") > 0);
            assert_true(tu_plugin_close(P.h));
            unsetenv("CCLTUNE_FORCE");
            unsetenv("NCCL_PROTO");
        }
        unlink(path);
        free(path);
        if (atomic_load(&violations))
            fail_msg("%s: %d violations, first: %s", s->name, atomic_load(&violations),
                     first_violation);
    }
}

/* ---- attack 3: NULL pointers and absurd values in every argument ---- */

static void test_null_and_absurd_arguments(void **state)
{
    (void)state;
    atomic_store(&violations, 0);
    use_setup(&setups[1]);
    char *text = table_text(&setups[1], body_a);
    char *path = path_in_dir("null.yaml");
    write_file(path, text, strlen(text));
    free(text);
    setenv("CCLTUNE_TABLE", path, 1);
    plugin P;
    assert_true(plugin_open(&P));
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    /* init: no place for the context; NULL logger, NVL info and constants; absurd shapes */
    assert_int_equal(P.v6->init(NULL, 1, 8, 1, tu_logger, &nvl, &k), ncclInvalidArgument);
    assert_int_equal(P.v5->init(NULL, 1, 8, 1, tu_logger, &nvl, &k), ncclInvalidArgument);
    assert_int_equal(P.v2->init(8, 1, tu_logger, NULL), ncclInvalidArgument);
    static const size_t shapes[][2] = {{8, 1}, {0, 0}, {SIZE_MAX, SIZE_MAX},
                                       {1, 8}, {8, 0}, {(size_t)1 << 31, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        void *c6 = NULL, *c5 = NULL, *c2 = NULL;
        assert_int_equal(P.v6->init(&c6, i, shapes[i][0], shapes[i][1], NULL, NULL, NULL),
                         ncclSuccess);
        assert_int_equal(P.v5->init(&c5, i, shapes[i][0], shapes[i][1], tu_logger, NULL, NULL),
                         ncclSuccess);
        assert_int_equal(P.v2->init(shapes[i][0], shapes[i][1], NULL, &c2), ncclSuccess);
        uint64_t rng = 7 + i;
        float c[21];
        tu_costs_fill(c, 7, 3);
        for (int j = 0; j < 200; j++) {
            random_call(P.v5, c5, &rng);
            random_call((ncclTuner_v5_t *)P.v6, c6, &rng); /* same getCollInfo signature */
        }
        /* NULL cost table, NULL nChannels, NULL context, zero and negative dimensions */
        assert_int_equal(P.v5->getCollInfo(c5, 4, 4096, 1, NULL, 7, 3, 0, NULL), ncclSuccess);
        assert_int_equal(P.v5->getCollInfo(c5, 4, 4096, 1, (float **)c, 7, 3, 0, NULL),
                         ncclSuccess);
        assert_int_equal(P.v5->getCollInfo(NULL, 4, 4096, 1, (float **)c, 7, 3, 0, NULL),
                         ncclSuccess);
        assert_int_equal(P.v5->getCollInfo(c5, 4, 4096, 1, (float **)c, 0, 3, 0, NULL),
                         ncclSuccess);
        assert_int_equal(P.v5->getCollInfo(c5, 4, 4096, 1, (float **)c, -7, -3, 0, NULL),
                         ncclSuccess);
        assert_int_equal(P.v5->getCollInfo(c5, 4, 4096, 1, (float **)c, INT32_MIN, 3, 0, NULL),
                         ncclSuccess);
        /* v2 without out-parameters, or with only some */
        int a = -1, p = -1, nch = 0;
        assert_int_equal(P.v2->getCollInfo(c2, 4, 4096, 0, 0, 1, NULL, NULL, NULL), ncclSuccess);
        assert_int_equal(P.v2->getCollInfo(c2, 4, 4096, 0, 0, 1, &a, NULL, &nch), ncclSuccess);
        assert_int_equal(P.v2->getCollInfo(c2, 4, 4096, 0, 0, 1, NULL, &p, NULL), ncclSuccess);
        assert_int_equal(P.v2->getCollInfo(c2, 99, SIZE_MAX, 5, -5, -1, &a, &p, &nch), ncclSuccess);
        assert_true(p != P_LL128);
        /* getChunkSize without a chunk, or for absurd keys */
        size_t chunk = 4096;
        assert_int_equal(P.v6->getChunkSize(c6, 4, 4096, 1, 0, 2, NULL), ncclSuccess);
        assert_int_equal(P.v6->getChunkSize(c6, -1, SIZE_MAX, 99, -4, -1, &chunk), ncclSuccess);
        assert_int_equal(P.v6->getChunkSize(NULL, 4, 4096, 1, 0, 2, &chunk), ncclSuccess);
        assert_int_equal(chunk, 4096);
        assert_int_equal(P.v6->finalize(c6), ncclSuccess);
        assert_int_equal(P.v5->finalize(c5), ncclSuccess);
        assert_int_equal(P.v2->destroy(c2), ncclSuccess);
    }
    assert_int_equal(P.v5->finalize(NULL), ncclSuccess);
    /* v1: destroy without init, init twice, calls without out-parameters */
    assert_int_equal(P.v1->destroy(), ncclSuccess);
    assert_int_equal(P.v1->init(8, 1, NULL), ncclSuccess);
    assert_int_equal(P.v1->init(SIZE_MAX, 0, tu_logger), ncclSuccess);
    assert_int_equal(P.v1->getCollInfo(4, 4096, 0, 0, 1, NULL, NULL, NULL), ncclSuccess);
    assert_int_equal(P.v1->destroy(), ncclSuccess);
    assert_int_equal(P.v1->destroy(), ncclSuccess);
    assert_int_equal(P.v1->destroy(), ncclSuccess);
    /* the control API with NULL and out-of-range values */
    P.last(NULL);
    assert_int_equal(P.force(INT32_MIN, 0, 0), -1);
    assert_int_equal(P.force(1, INT32_MAX, 0), -1);
    assert_int_equal(P.force(1, 2, -1), -1);
    assert_int_equal(P.force(-1, 0, 0), 0);
    assert_true(tu_plugin_close(P.h));
    unlink(path);
    free(path);
    if (atomic_load(&violations))
        fail_msg("%d violations, first: %s", atomic_load(&violations), first_violation);
}

/* ---- attack 4: 64 threads, contexts coming and going, measurement switched under them ---- */

typedef struct churn_arg {
    plugin *P;
    int id;
    void *shared;
    pthread_barrier_t *barrier;
} churn_arg;

static atomic_bool churn_stop;

static void *churn_worker(void *argp)
{
    churn_arg *a = argp;
    uint64_t rng = 0xabcdef12345ull + (uint64_t)a->id * 7919;
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    pthread_barrier_wait(a->barrier);
    for (int life = 0; life < 3; life++) {
        void *own = NULL;
        size_t ranks = (xorshift(&rng) & 1) ? 8 : 1 + xorshift(&rng) % 16;
        if (a->P->v5->init(&own, (uint64_t)a->id << 8 | (uint64_t)life, ranks, 1, tu_logger, &nvl,
                           &k) != ncclSuccess)
            violation("init failed");
        for (int i = 0; i < 150; i++) {
            random_call(a->P->v5, (i & 1) ? own : a->shared, &rng);
            if (a->id == 0 && i % 10 == 0) {
                static const int modes[][2] = {
                    {1, P_LL128}, {-1, 0}, {-2, 0}, {0, P_LL128}, {0, 2}};
                int m = (int)(xorshift(&rng) % 5);
                a->P->force(modes[m][0], modes[m][1], (int)(xorshift(&rng) % 4));
            }
            if (a->id == 1 && i % 25 == 0) {
                ccltune_observation o;
                a->P->last(&o);
                if (o.chosen_proto == P_LL128)
                    violation("the last observation chose LL128");
            }
        }
        if (a->P->v5->finalize(own) != ncclSuccess)
            violation("finalize failed");
    }
    return NULL;
}

static void test_threads_churn_while_measuring(void **state)
{
    (void)state;
    atomic_store(&violations, 0);
    for (size_t si = 0; si < sizeof setups / sizeof *setups; si++) {
        const setup *s = &setups[si];
        use_setup(s);
        char *text = table_text(s, body_a);
        char *path = path_in_dir("churn.yaml");
        write_file(path, text, strlen(text));
        free(text);
        setenv("CCLTUNE_TABLE", path, 1);
        setenv("NCCL_PROTO", "LL,LL128,Simple", 1); /* as the search runs it */
        tu_log_clear();
        plugin P;
        assert_true(plugin_open(&P));
        ncclTunerConstants_v5_t k;
        ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
        void *shared = NULL;
        assert_int_equal(P.v5->init(&shared, 1, 8, 1, tu_logger, &nvl, &k), ncclSuccess);
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, NULL, THREADS);
        atomic_store(&churn_stop, false);
        churn_arg args[THREADS];
        pthread_t th[THREADS];
        for (int i = 0; i < THREADS; i++) {
            args[i] = (churn_arg){&P, i, shared, &barrier};
            assert_int_equal(pthread_create(&th[i], NULL, churn_worker, &args[i]), 0);
        }
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&barrier);
        assert_int_equal(P.v5->finalize(shared), ncclSuccess);
        assert_int_equal(tu_log_count(NCCL_LOG_INFO, "finalize comm"), 1 + THREADS * 3);
        assert_true(tu_plugin_close(P.h));
        unsetenv("NCCL_PROTO");
        unlink(path);
        free(path);
        if (atomic_load(&violations))
            fail_msg("%s: %d violations, first: %s", s->name, atomic_load(&violations),
                     first_violation);
    }
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    alarm(600); /* a hang is a failure */
    if (!tu_load_fake_cuda())
        return 1;
    const char *tmp = getenv("TMPDIR");
    char templ[4096];
    snprintf(templ, sizeof templ, "%s/cct-attacks-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    dir = mkdtemp(templ);
    if (!dir)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_swapped_during_init),
        cmocka_unit_test(test_odd_cost_tables),
        cmocka_unit_test(test_null_and_absurd_arguments),
        cmocka_unit_test(test_threads_churn_while_measuring),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char *tmpfile = path_in_dir("swap.tmp");
    unlink(tmpfile);
    free(tmpfile);
    rmdir(dir);
    tu_unload_fake_cuda();
    return rc;
}
