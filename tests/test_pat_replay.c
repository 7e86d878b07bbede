/*
 * test_pat_replay.c - NCCL's PAT algorithm through search, fit, calibration and the bench's
 * oracle, on recorded H200 measurements (no GPU).
 *
 * The recorded 8-rank store (rank processes sharing one H200, each its own NCCL node) was
 * searched before the search forced PAT, but NCCL's default ran PAT/Simple for allgather and
 * reducescatter at 3-128 KiB there.  `ccltune search --replay` with the default algorithm set
 * must force PAT exactly there (allgather/reducescatter, Simple) and the replay must answer
 * it from those default points (NCCL's channel count only; other channel counts were never
 * recorded: unsupported).  On the NVLink pair (one node) the default set has no PAT, and a
 * named `--algos pat` is recorded unsupported.  `ccltune fit` of the replayed store has PAT
 * models, and the NCCL-constants fit really uses the PAT points: with them it fits PAT's
 * latency, without them it cannot (the check fails if PAT points stop reaching it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cct_bench.h"
#include "cct_calibrate.h"
#include "cct_nccl_log.h"
#include "cct_store.h"
#include "cli_test_util.h"

#define TUNE8 "data/h200/run-2026-11-29b/tune-8.db.gz"
#define NVLINK2 "data/h200/run-2026-11-29c/nvlink/tune-nvlink-2.db.gz"
#define LOG8 "data/h200/run-2026-11-29c/nccl-model/model-socket-8ranks.log"

static char *data_path(const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    size_t n = strlen(src) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", src, rel);
    return p;
}

static ct_result ccltune(const char *const *args)
{
    assert_non_null(getenv("CCT_CCLTUNE"));
    ct_result r = ct_run(args);
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

static cct_point *load(const char *path, size_t *n)
{
    cct_store *st = NULL;
    cct_error err;
    if (cct_store_open(path, true, &st, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_point *pts = NULL;
    assert_int_equal(cct_store_load_points(st, NULL, 0, &pts, n, &err), CCT_OK);
    cct_store_close(st);
    return pts;
}

typedef struct fixture {
    char *dir, *store; /* the replayed 8-rank search */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = ct_tmpdir("pat");
    size_t n = strlen(f->dir) + 16;
    f->store = malloc(n);
    snprintf(f->store, n, "%s/pat.db", f->dir);
    char *rec = data_path(TUNE8);
    const char *args[] = {"search",
                          "--replay",
                          rec,
                          "--ranks-per-gpu",
                          "8",
                          "--ranks",
                          "8",
                          "--colls",
                          "allgather,reducescatter,allreduce",
                          "--channels",
                          "nccl,1",
                          "--max-bytes",
                          "8M",
                          "--exhaustive",
                          "--store",
                          f->store,
                          NULL};
    ct_result r = ccltune(args);
    if (r.status != 0)
        fail_msg("search --replay: %s", r.err);
    ct_result_free(&r);
    free(rec);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    ct_rm_rf(f->dir);
    free(f->dir);
    free(f->store);
    free(f);
    return 0;
}

/* The recorded default point of coll at bytes, out of place, if NCCL ran PAT/Simple there. */
static const cct_point *default_pat(const cct_point *rec, size_t n, int coll, uint64_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (rec[i].cfg.algo == CCT_DEFAULT && rec[i].cfg.coll == coll && rec[i].bytes == bytes &&
            !rec[i].in_place && rec[i].cfg.align == 0 && rec[i].cfg.buffsize == 0 &&
            rec[i].nccl_algo == CCT_ALGO_PAT && rec[i].nccl_proto == CCT_PROTO_SIMPLE)
            return &rec[i];
    return NULL;
}

static void test_search_forces_pat(void **state)
{
    fixture *f = *state;
    size_t n = 0, n_rec = 0;
    cct_point *pts = load(f->store, &n);
    char *recpath = data_path(TUNE8);
    cct_point *rec = load(recpath, &n_rec);
    size_t ok = 0, unsupported = 0;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (p->cfg.algo != CCT_ALGO_PAT)
            continue;
        assert_true(p->cfg.coll == CCT_COLL_ALLGATHER || p->cfg.coll == CCT_COLL_REDUCESCATTER);
        assert_int_equal(p->cfg.proto, CCT_PROTO_SIMPLE);
        const cct_point *d = default_pat(rec, n_rec, p->cfg.coll, p->bytes);
        if (p->status == CCT_POINT_OK) {
            ok++;
            /* answered where NCCL ran it, at its channel count, near the recorded time */
            assert_int_equal(p->cfg.channels, 0);
            assert_non_null(d);
            assert_int_equal(p->nccl_algo, CCT_ALGO_PAT);
            double ratio = p->stats.median_us / d->stats.median_us;
            if (!(ratio > 0.8 && ratio < 1.25))
                fail_msg("PAT at %llu: %.1f us replayed, %.1f us recorded",
                         (unsigned long long)p->bytes, p->stats.median_us, d->stats.median_us);
        } else {
            assert_int_equal(p->status, CCT_POINT_UNSUPPORTED);
            assert_true(p->cfg.channels != 0 || !d); /* never extrapolated */
            unsupported++;
        }
    }
    printf("PAT points: %zu ok, %zu unsupported\n", ok, unsupported);
    assert_int_equal(ok, 2 * 9); /* the 9 recorded sizes of each collective */
    assert_true(unsupported > 0);
    free(pts);
    free(rec);
    free(recpath);
}

static void test_no_pat_on_one_node(void **state)
{
    fixture *f = *state;
    char *rec = data_path(NVLINK2);
    char db[512], named[512];
    snprintf(db, sizeof db, "%s/nvlink.db", f->dir);
    snprintf(named, sizeof named, "%s/nvlink-named.db", f->dir);
    const char *plain[] = {"search",  "--replay",  rec,          "--ranks", "2",
                           "--colls", "allgather", "--channels", "nccl",    "--max-bytes",
                           "1M",      "--store",   db,           NULL};
    ct_result r = ccltune(plain);
    if (r.status != 0)
        fail_msg("%s", r.err);
    ct_result_free(&r);
    size_t n = 0;
    cct_point *pts = load(db, &n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pts[i].cfg.nodes, 1);
        assert_int_not_equal(pts[i].cfg.algo, CCT_ALGO_PAT);
    }
    free(pts);
    const char *asked[] = {"search",    "--replay", rec,        "--ranks",    "2",    "--colls",
                           "allgather", "--algos",  "ring,pat", "--channels", "nccl", "--max-bytes",
                           "1M",        "--store",  named,      NULL};
    r = ccltune(asked);
    if (r.status != 0)
        fail_msg("%s", r.err);
    ct_result_free(&r);
    pts = load(named, &n);
    size_t pat = 0;
    for (size_t i = 0; i < n; i++)
        if (pts[i].cfg.algo == CCT_ALGO_PAT) {
            assert_int_equal(pts[i].status, CCT_POINT_UNSUPPORTED);
            pat++;
        }
    assert_true(pat >= 3); /* every protocol asked, at the first size at least */
    free(pts);
    free(rec);
}

static void test_fit_has_pat_models(void **state)
{
    fixture *f = *state;
    char out[512];
    snprintf(out, sizeof out, "%s/pat.yaml", f->dir);
    const char *args[] = {"fit", "--store", f->store, "-o", out, NULL};
    ct_result r = ccltune(args);
    if (r.status != 0)
        fail_msg("%s", r.err);
    ct_result_free(&r);
    FILE *fp = fopen(out, "r");
    assert_non_null(fp);
    char line[4096];
    size_t models = 0;
    while (fgets(line, sizeof line, fp))
        models += strstr(line, "{algo: pat, proto: simple, channels: 0") != NULL;
    fclose(fp);
    assert_int_equal(models, 2); /* allgather and reducescatter at 8 ranks */
}

/* Calibrate on pts with the topology of the 8-rank log. */
static void calibrate(const cct_point *pts, size_t n, cct_calib_result *res)
{
    char *path = data_path(LOG8);
    cct_nccl_log *log = malloc(sizeof *log);
    cct_error err;
    if (cct_nccl_log_load(path, log, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    cct_nccl_topo topo = log->topo;
    topo.cc = 90;
    cct_calib_options opt;
    cct_calib_options_default(&opt);
    opt.refine = false;
    if (cct_calibrate(pts, n, &topo, 1, &opt, res, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    free(log);
    free(path);
}

static void test_constants_fit_uses_pat(void **state)
{
    fixture *f = *state;
    size_t n = 0;
    cct_point *pts = load(f->store, &n);
    cct_calib_result *with = malloc(sizeof *with), *without = malloc(sizeof *without);
    calibrate(pts, n, with);
    size_t kept = 0, pat = 0;
    for (size_t i = 0; i < n; i++) {
        int algo = pts[i].cfg.algo >= 0 ? pts[i].cfg.algo : pts[i].nccl_algo;
        if (algo == CCT_ALGO_PAT) {
            pat += pts[i].status == CCT_POINT_OK;
            continue;
        }
        pts[kept++] = pts[i];
    }
    calibrate(pts, kept, without);
    printf("PAT points %zu; fit points %zu with them, %zu without; PAT base latency %.3f\n", pat,
           with->fit_points, without->fit_points,
           with->ls_constants.base_latency_us[CCT_ALGO_PAT][CCT_PROTO_SIMPLE]);
    assert_true(pat >= 2 * 9);
    assert_true(with->fit_points > without->fit_points);
    assert_true(isfinite(with->ls_constants.base_latency_us[CCT_ALGO_PAT][CCT_PROTO_SIMPLE]));
    assert_true(isnan(without->ls_constants.base_latency_us[CCT_ALGO_PAT][CCT_PROTO_SIMPLE]));
    free(with);
    free(without);
    free(pts);
}

/* The bench's oracle forces PAT where NCCL offers it, like the search. */
static void test_bench_oracle_candidates(void **state)
{
    (void)state;
    cct_table t;
    cct_table_init(&t);
    t.ll128_allowed = false;
    assert_true(
        cct_bench_generic_candidate(&t, CCT_COLL_ALLGATHER, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, 8, 8));
    assert_true(cct_bench_generic_candidate(&t, CCT_COLL_REDUCESCATTER, CCT_ALGO_PAT,
                                            CCT_PROTO_SIMPLE, 2, 2));
    assert_false(
        cct_bench_generic_candidate(&t, CCT_COLL_ALLGATHER, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, 2, 1));
    assert_false(
        cct_bench_generic_candidate(&t, CCT_COLL_ALLGATHER, CCT_ALGO_PAT, CCT_PROTO_LL, 8, 8));
    assert_false(
        cct_bench_generic_candidate(&t, CCT_COLL_ALLREDUCE, CCT_ALGO_PAT, CCT_PROTO_SIMPLE, 8, 8));
    assert_true(
        cct_bench_generic_candidate(&t, CCT_COLL_ALLGATHER, CCT_ALGO_RING, CCT_PROTO_LL, 2, 1));
    cct_table_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_forces_pat),
        cmocka_unit_test(test_no_pat_on_one_node),
        cmocka_unit_test(test_fit_has_pat_models),
        cmocka_unit_test(test_constants_fit_uses_pat),
        cmocka_unit_test(test_bench_oracle_candidates),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
