/*
 * test_profiler_threads.c - the profiler half under 64 threads and 320 communicators, as
 * in a job with many process groups (tools/ci-reliability.sh runs it under TSan).
 *
 * 32 "launcher" threads each own 10 communicators: they initialise them concurrently,
 * start collective events (as NCCL's launching thread does) and hand each handle through
 * a queue to their "proxy" thread, which reports the kernel channels' stamps as NCCL's
 * proxy thread does -- so every collective is touched by two threads.  Then all
 * launchers finalize their communicators at once; the last one writes the file.  The
 * recording must hold every communicator and every call with its exact GPU time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plugin_test_util.h"
#include "profiler_test_util.h"

#include "cct_recording.h"

#define PAIRS 32
#define COMMS 10
#define ITERS 100
#define QCAP 32

typedef struct item {
    void *ctx, *coll;
    int channels;
    uint64_t ns;
} item;

typedef struct pair {
    pthread_t launcher, proxy;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    item q[QCAP];
    int head, tail;
    bool done;
    void *ctx[COMMS];
} pair;

static pf_plugin P;
static pair pairs[PAIRS];

static uint64_t span_of(int it, int c)
{
    return 1000u * (uint64_t)(1 + (it + c) % 8);
}

static void *proxy_main(void *arg)
{
    pair *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->head == p->tail && !p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->head == p->tail && p->done) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        item it = p->q[p->tail % QCAP];
        p->tail++;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        void *ch[4];
        for (int c = 0; c < it.channels; c++) {
            ncclProfilerEventDescr_v5_t k;
            memset(&k, 0, sizeof k);
            k.type = CCT_PROF_KERNEL_CH;
            k.parentObj = it.coll;
            k.kernelCh.channelId = (uint8_t)c;
            k.kernelCh.pTimer = 1000000;
            P.v5->startEvent(it.ctx, &ch[c], &k);
        }
        for (int c = 0; c < it.channels; c++) {
            ncclProfilerEventStateArgs_v5_t a;
            memset(&a, 0, sizeof a);
            a.kernelCh.pTimer = 1000000 + it.ns;
            P.v5->recordEventState(ch[c], CCT_PROF_STATE_KERNEL_CH_STOP, &a);
            P.v5->stopEvent(ch[c]);
        }
    }
}

static void *launcher_main(void *arg)
{
    pair *p = arg;
    int idx = (int)(p - pairs);
    for (int c = 0; c < COMMS; c++) {
        int mask = 0;
        P.v5->init(&p->ctx[c], (uint64_t)(idx * COMMS + c + 1), &mask, "t", 8, 8, c % 8, tu_logger);
    }
    pthread_create(&p->proxy, NULL, proxy_main, p);
    for (int it = 0; it < ITERS; it++)
        for (int c = 0; c < COMMS; c++) {
            ncclProfilerEventDescr_v5_t d;
            memset(&d, 0, sizeof d);
            d.type = CCT_PROF_COLL;
            d.coll.func = "AllReduce";
            d.coll.count = (size_t)1024 << (it % 4);
            d.coll.datatype = "ncclFloat32";
            d.coll.nChannels = (uint8_t)(1 + c % 4);
            d.coll.algo = "RING";
            d.coll.proto = "LL";
            void *h = NULL;
            P.v5->startEvent(p->ctx[c], &h, &d);
            P.v5->stopEvent(h);
            pthread_mutex_lock(&p->mu);
            while (p->head - p->tail == QCAP)
                pthread_cond_wait(&p->cv, &p->mu);
            p->q[p->head % QCAP] = (item){p->ctx[c], h, 1 + c % 4, span_of(it, c)};
            p->head++;
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
        }
    pthread_mutex_lock(&p->mu);
    p->done = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->proxy, NULL);
    for (int c = 0; c < COMMS; c++)
        P.v5->finalize(p->ctx[c]);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char *dir = pf_tmpdir();
    assert_non_null(dir);
    setenv("CCLTUNE_RECORD", dir, 1);
    assert_true(pf_open(&P));
    for (int i = 0; i < PAIRS; i++) {
        pthread_mutex_init(&pairs[i].mu, NULL);
        pthread_cond_init(&pairs[i].cv, NULL);
    }
    for (int i = 0; i < PAIRS; i++)
        assert_int_equal(pthread_create(&pairs[i].launcher, NULL, launcher_main, &pairs[i]), 0);
    for (int i = 0; i < PAIRS; i++)
        pthread_join(pairs[i].launcher, NULL);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    assert_true(pf_close(&P));

    char *path;
    assert_int_equal(pf_find_rec(dir, &path), 1);
    cct_recording rec;
    cct_error err;
    if (cct_recording_load_file(path, &rec, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(rec.n_comms, PAIRS * COMMS);
    uint64_t calls = 0, timed = 0, total = 0, want_total = 0;
    for (size_t i = 0; i < rec.n_comms; i++) {
        assert_int_equal(rec.comms[i].dropped, 0);
        assert_int_equal(rec.comms[i].late, 0);
        for (size_t r = 0; r < rec.comms[i].n_rows; r++) {
            calls += rec.comms[i].rows[r].calls;
            timed += rec.comms[i].rows[r].timed;
            total += rec.comms[i].rows[r].total_ns;
        }
    }
    for (int i = 0; i < PAIRS; i++)
        for (int it = 0; it < ITERS; it++)
            for (int c = 0; c < COMMS; c++)
                want_total += span_of(it, c);
    assert_int_equal(calls, PAIRS * COMMS * ITERS);
    assert_int_equal(timed, calls);
    assert_int_equal(total, want_total);
    cct_recording_destroy(&rec);
    unlink(path);
    free(path);
    pf_rmdir(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
