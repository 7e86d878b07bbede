/*
 * test_plugin_threads.c - many threads and several communicators at once, as in a job
 * whose ranks drive NCCL from different threads.
 *
 * 64 threads start together and each creates its own communicator context while the
 * first eight also create shared ones, so the process-wide table load (pthread_once) is
 * raced.  Then every thread calls getCollInfo on the shared contexts and its own, with a
 * mix of calls that the table overrides, that hit an ignored entry, and that have no
 * section, checking every result; afterwards the finalize counters of each context must
 * equal the sums the threads counted.  A second round toggles measurement mode from one
 * thread while the others call, and checks that no call is lost from the counters.
 * CI also runs it built with ThreadSanitizer (.ci/run), which turns any data race on
 * these paths into a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdatomic.h>

#include "plugin_test_util.h"

#define THREADS 64
#define SHARED 8
#define CALLS 10000

static const char *body = "  allreduce:\n"
                          "    - ranks: 8\n"
                          "      nodes: 1\n"
                          "      rules:\n"
                          "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, "
                          "channels: 2}\n"
                          "        - {min_bytes: 64KiB, max_bytes: inf, algo: tree, proto: "
                          "simple}\n";

static ncclTuner_v5_t *v5;
static int (*force_fn)(int, int, int);
static void *shared_ctx[SHARED];
static pthread_barrier_t barrier;
static atomic_uint_fast64_t want_calls[SHARED + THREADS], want_over[SHARED + THREADS],
    want_ign[SHARED + THREADS], want_nosec[SHARED + THREADS];
static atomic_int errors;
static atomic_bool measuring_round;

typedef struct worker {
    int id;
    void *own;
} worker;

static void one_call(void *ctx, int slot, unsigned i)
{
    float c[21];
    tu_costs_fill(c, 7, 3);
    int kind = (int)(i % 4), nch = 0;
    int coll = kind == 3 ? 0 : 4; /* broadcast has no section */
    size_t bytes = kind == 1 ? (1 << 20) : 4096;
    if (kind == 2)
        c[1 * 3 + 0] = TU_IGN; /* ring/ll ignored */
    v5->getCollInfo(ctx, coll, bytes, 1, (float **)c, 7, 3, 0, &nch);
    atomic_fetch_add(&want_calls[slot], 1);
    if (atomic_load(&measuring_round))
        return; /* the forced configuration varies; only totals are checked */
    bool ok;
    switch (kind) {
    case 0:
        ok = c[1 * 3 + 0] == 0.0f && nch == 2;
        atomic_fetch_add(&want_over[slot], 1);
        break;
    case 1:
        ok = c[0 * 3 + 2] == 0.0f && nch == 0;
        atomic_fetch_add(&want_over[slot], 1);
        break;
    case 2:
        ok = c[1 * 3 + 0] == TU_IGN && nch == 0;
        atomic_fetch_add(&want_ign[slot], 1);
        break;
    default:
        ok = nch == 0 && c[1 * 3 + 0] == 13.0f;
        atomic_fetch_add(&want_nosec[slot], 1);
        break;
    }
    if (!ok)
        atomic_fetch_add(&errors, 1);
}

static void *work(void *arg)
{
    worker *w = arg;
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    pthread_barrier_wait(&barrier);
    if (w->id < SHARED &&
        v5->init(&shared_ctx[w->id], 0x100 + (uint64_t)w->id, 8, 1, tu_logger, &nvl, &k))
        atomic_fetch_add(&errors, 1);
    if (v5->init(&w->own, 0x200 + (uint64_t)w->id, 8, 1, tu_logger, &nvl, &k))
        atomic_fetch_add(&errors, 1);
    pthread_barrier_wait(&barrier);
    for (unsigned i = 0; i < CALLS; i++) {
        int s = (int)((i + (unsigned)w->id) % (SHARED + 1));
        if (s < SHARED)
            one_call(shared_ctx[s], s, i);
        else
            one_call(w->own, SHARED + w->id, i);
        if (w->id == 0 && atomic_load(&measuring_round) && i % 1000 == 0)
            force_fn((i / 1000) % 2 ? 1 : -1, 2, 0); /* ring/simple, then the table, ... */
    }
    pthread_barrier_wait(&barrier);
    if (w->id < SHARED)
        v5->finalize(shared_ctx[w->id]);
    v5->finalize(w->own);
    return NULL;
}

static const char *fin_line(uint64_t comm)
{
    char needle[64];
    snprintf(needle, sizeof needle, "finalize comm 0x%llx ", (unsigned long long)comm);
    return tu_log_find(NCCL_LOG_INFO, needle);
}

static void run_round(bool measuring)
{
    for (int i = 0; i < SHARED + THREADS; i++) {
        atomic_store(&want_calls[i], 0);
        atomic_store(&want_over[i], 0);
        atomic_store(&want_ign[i], 0);
        atomic_store(&want_nosec[i], 0);
    }
    atomic_store(&errors, 0);
    atomic_store(&measuring_round, measuring);
    tu_log_clear();
    void *h = tu_plugin_open();
    assert_non_null(h);
    v5 = tu_sym(h, "ncclTunerPlugin_v5");
    *(void **)&force_fn = tu_sym(h, "ccltune_control_force");
    pthread_t th[THREADS];
    worker w[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        w[i].id = i;
        w[i].own = NULL;
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&barrier);
    assert_int_equal(atomic_load(&errors), 0);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "init comm"), SHARED + THREADS);
    uint64_t total = 0;
    for (int i = 0; i < SHARED + THREADS; i++) {
        uint64_t comm = i < SHARED ? 0x100 + (uint64_t)i : 0x200 + (uint64_t)(i - SHARED);
        const char *line = fin_line(comm);
        assert_non_null(line);
        assert_int_equal(tu_field(line, "calls"), atomic_load(&want_calls[i]));
        total += (uint64_t)tu_field(line, "calls");
        if (!measuring) {
            assert_int_equal(tu_field(line, "overridden"), atomic_load(&want_over[i]));
            assert_int_equal(tu_field(line, "ignored_entry"), atomic_load(&want_ign[i]));
            assert_int_equal(tu_field(line, "no_section"), atomic_load(&want_nosec[i]));
        }
    }
    assert_int_equal(total, (uint64_t)THREADS * CALLS);
    assert_true(tu_plugin_close(h));
}

static void test_threads(void **state)
{
    (void)state;
    run_round(false);
}

static void test_threads_while_measuring(void **state)
{
    (void)state;
    run_round(true);
}

static char *path;

int main(void)
{
    if (!tu_load_fake_cuda())
        return 1;
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, true, body);
    path = tu_write_temp(text);
    free(text);
    setenv("CCLTUNE_TABLE", path, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_threads_while_measuring),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    free(path);
    tu_unload_fake_cuda();
    return rc;
}
