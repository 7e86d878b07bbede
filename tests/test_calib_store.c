/*
 * test_calib_store.c - NCCL's model printout stored with a run (store schema 3) as the
 * calibrator's input: src/cct_calib_store.c, `ccltune calibrate` without --nccl-log and the
 * constants `ccltune tune` fits after its rules.
 *
 * The replay backend cannot make NCCL print anything, so the stores here are copies of the
 * recorded H200 stores (tests/data/h200/run-2026-11-29b, schema 1: upgraded when opened for
 * writing) with the log NCCL printed for the same topology
 * (run-2026-11-29c/nccl-model/model-socket-2ranks.log) stored the way the search stores its
 * capture.  Checked: the stored log gives exactly the topology the file gives; calibrate
 * from the store equals calibrate with --nccl-log; tune writes those constants (or says why
 * not) and --no-constants skips them; a store without a log, and a stored log that does not
 * parse, are each one clear sentence.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cct_calib_store.h"
#include "cct_constants.h"
#include "cct_import.h"
#include "cct_nccl_log.h"
#include "cct_store.h"
#include "cct_table.h"
#include "cli_test_util.h"
#include "data_test_util.h"
#include "recorded_test_util.h"

#define RUN_B "data/h200/run-2026-11-29b/"
#define LOGS "data/h200/run-2026-11-29c/nccl-model/"

/* dir/name: a copy of the recorded 2-rank store with `log_text` stored for every run
 * (NULL: none). */
static void make_store_from(const char *source, int ranks, const char *dir, const char *name,
                            const char *log_text, char *path, size_t len)
{
    char src[4096];
    test_data_path(src, sizeof src, source);
    snprintf(path, len, "%s/%s", dir, name);
    if (!recorded_copy(src, path))
        fail_msg("cannot copy %s to %s", src, path);
    cct_store *s = NULL;
    cct_error err;
    if (cct_store_open(path, false, &s, &err) != CCT_OK) /* upgrades to schema 3 */
        fail_msg("%s", err.msg);
    cct_store_run *runs = NULL;
    size_t n = 0;
    assert_int_equal(cct_store_list_runs(s, &runs, &n, &err), CCT_OK);
    assert_true(n >= 1);
    for (size_t i = 0; log_text && i < n; i++)
        if (cct_store_put_nccl_log(s, runs[i].id, ranks, ranks, log_text, &err) != CCT_OK)
            fail_msg("%s", err.msg);
    free(runs);
    cct_store_close(s);
}

/* The recorded 2-rank store with log_text stored as its run's NCCL printout. */
static void make_store(const char *dir, const char *name, const char *log_text, char *path,
                       size_t len)
{
    make_store_from(RUN_B "tune-2.db.gz", 2, dir, name, log_text, path, len);
}

static bool has_any_constant(const cct_constants *c)
{
    for (size_t n = 0; n < CCT_CONST_NUM_SLOTS; n++)
        if (!isnan(cct_const_get(c, cct_const_slot_at(n))))
            return true;
    return false;
}

/* The stored log reads back as the topology of the log file; a store or run without a log
 * gives none; a stored log that is not NCCL's printout names the store and the run. */
static void test_topology_from_store(void **s)
{
    (void)s;
    char *dir = ct_tmpdir("calib-store");
    char *text = test_data_read(LOGS "model-socket-2ranks.log");
    char with[4096], without[4096], bad[4096], logfile[4096];
    make_store(dir, "with.db", text, with, sizeof with);
    make_store(dir, "without.db", NULL, without, sizeof without);
    make_store(dir, "bad.db", "vm:1:1 [0] NCCL INFO Bootstrap: nothing about the model\n", bad,
               sizeof bad);
    test_data_path(logfile, sizeof logfile, LOGS "model-socket-2ranks.log");
    cct_nccl_log *file_log = malloc(sizeof *file_log);
    assert_non_null(file_log);
    cct_error err;
    assert_int_equal(cct_nccl_log_load(logfile, file_log, &err), CCT_OK);
    file_log->topo.cc = 90;

    cct_store *st = NULL;
    cct_nccl_topo topos[CCT_CALIB_MAX_TOPOS];
    size_t n_topos = 0, n_logs = 0;
    assert_int_equal(cct_store_open(with, true, &st, &err), CCT_OK);
    assert_int_equal(
        cct_calib_topos_from_store(st, with, NULL, 0, 90, topos, &n_topos, &n_logs, &err), CCT_OK);
    assert_int_equal(n_topos, 1);
    assert_true(n_logs >= 1);
    assert_int_equal(topos[0].n_ranks, 2);
    assert_int_equal(topos[0].n_nodes, 2);
    assert_memory_equal(&topos[0], &file_log->topo, sizeof topos[0]);
    /* the same shape again (a second store of the same box) adds no topology */
    int64_t run1 = 1;
    size_t again = 0;
    assert_int_equal(
        cct_calib_topos_from_store(st, with, &run1, 1, 90, topos, &n_topos, &again, &err), CCT_OK);
    assert_int_equal(n_topos, 1);
    assert_int_equal(again, 1);
    /* a run that is not there */
    int64_t missing = 999;
    assert_int_equal(
        cct_calib_topos_from_store(st, with, &missing, 1, 90, topos, &n_topos, &again, &err),
        CCT_OK);
    assert_int_equal(again, 1);
    cct_store_close(st);

    n_topos = n_logs = 0;
    assert_int_equal(cct_store_open(without, true, &st, &err), CCT_OK);
    assert_int_equal(
        cct_calib_topos_from_store(st, without, NULL, 0, 90, topos, &n_topos, &n_logs, &err),
        CCT_OK);
    assert_int_equal(n_topos, 0);
    assert_int_equal(n_logs, 0);
    cct_calib_options opt;
    cct_calib_options_default(&opt);
    cct_calib_result *res = malloc(sizeof *res);
    assert_non_null(res);
    assert_int_equal(cct_calib_from_store(st, without, NULL, 0, 90, &opt, res, &n_logs, &err),
                     CCT_OK);
    assert_int_equal(n_logs, 0);
    cct_store_close(st);

    assert_int_equal(cct_store_open(bad, true, &st, &err), CCT_OK);
    assert_int_equal(
        cct_calib_topos_from_store(st, bad, NULL, 0, 90, topos, &n_topos, &n_logs, &err),
        CCT_EPARSE);
    assert_non_null(strstr(err.msg, "bad.db run 1 (stored NCCL log)"));
    assert_non_null(strstr(err.msg, "TUNING"));
    cct_store_close(st);

    /* the recorded store itself (schema 1, read-only, no nccl_logs table): no log */
    char recorded[4096];
    test_data_path(recorded, sizeof recorded, RUN_B "tune-2.db.gz");
    n_topos = n_logs = 0;
    assert_int_equal(cct_store_open(recorded, true, &st, &err), CCT_OK);
    assert_int_equal(
        cct_calib_topos_from_store(st, recorded, NULL, 0, 90, topos, &n_topos, &n_logs, &err),
        CCT_OK);
    assert_int_equal(n_logs, 0);
    cct_store_close(st);

    free(res);
    free(file_log);
    free(text);
    ct_rm_rf(dir);
    free(dir);
}

static ct_result run_cmd(const char *const *args)
{
    ct_result r = ct_run(args);
    assert_true(r.out && r.err);
    return r;
}

static void load_table(const char *path, cct_table *t)
{
    cct_error err;
    if (cct_table_load_file(path, t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
}

/* `ccltune calibrate STORE` without --nccl-log equals calibrate with the same log given by
 * hand; without a stored log it asks for --nccl-log; a bad stored log is named. */
static void test_calibrate_command(void **s)
{
    (void)s;
    char *dir = ct_tmpdir("calib-cmd");
    char *text = test_data_read(LOGS "model-socket-2ranks.log");
    char with[4096], without[4096], bad[4096], recorded[4096], logfile[4096];
    make_store(dir, "with.db", text, with, sizeof with);
    make_store(dir, "without.db", NULL, without, sizeof without);
    make_store(dir, "bad.db", "not NCCL at all\n", bad, sizeof bad);
    test_data_path(recorded, sizeof recorded, RUN_B "tune-2.db.gz");
    test_data_path(logfile, sizeof logfile, LOGS "model-socket-2ranks.log");
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/stored.yaml", dir);
    snprintf(b, sizeof b, "%s/given.yaml", dir);

    const char *stored[] = {"calibrate", with, "-o", a, NULL};
    ct_result r = run_cmd(stored);
    if (r.status != 0)
        fail_msg("calibrate from the stored log failed: %s", r.err);
    assert_non_null(strstr(r.err, "1 topology from the NCCL logs stored with 1 run"));
    ct_result_free(&r);
    const char *given[] = {"calibrate", recorded, "--nccl-log", logfile, "-o", b, NULL};
    r = run_cmd(given);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    cct_table ta, tb;
    load_table(a, &ta);
    load_table(b, &tb);
    assert_true(ta.constants.present);
    assert_true(has_any_constant(&ta.constants));
    assert_memory_equal(&ta.constants, &tb.constants, sizeof ta.constants);
    cct_table_destroy(&ta);
    cct_table_destroy(&tb);
    /* --eval scores on the stored log's topology as on the same log given by hand */
    const char *eval_stored[] = {"calibrate", with, "-o", a, "--eval", recorded, NULL};
    r = run_cmd(eval_stored);
    if (r.status != 0)
        fail_msg("calibrate --eval from the stored log failed: %s", r.err);
    const char *eval_given[] = {"calibrate", recorded, "--nccl-log", logfile, "-o",
                                b,           "--eval", recorded,     NULL};
    ct_result g = run_cmd(eval_given);
    assert_int_equal(g.status, 0);
    const char *es = strstr(r.out, "evaluation stores"), *eg = strstr(g.out, "evaluation stores");
    assert_non_null(es);
    assert_non_null(eg);
    assert_string_equal(es, eg);
    ct_result_free(&g);
    ct_result_free(&r);

    const char *none[] = {"calibrate", without, "-o", a, NULL};
    r = run_cmd(none);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "no --nccl-log given and no run in the stores has NCCL's model "
                                  "printout stored"));
    ct_result_free(&r);
    const char *broken[] = {"calibrate", bad, "-o", a, NULL};
    r = run_cmd(broken);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "bad.db run 1 (stored NCCL log): no TUNING table"));
    ct_result_free(&r);
    /* --nccl-log still wins over a stored log */
    const char *both[] = {"calibrate", bad, "--nccl-log", logfile, "-o", a, NULL};
    r = run_cmd(both);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);

    free(text);
    ct_rm_rf(dir);
    free(dir);
}

/* `ccltune tune` on this GPU-less box fits the recorded store: with a stored log it fits the
 * constants after the rules and writes them exactly when it says so (the same constants
 * `ccltune calibrate` writes); --no-constants skips them; without a log it says so in one
 * line and still writes the table. */
static void test_tune_command(void **s)
{
    (void)s;
    char *dir = ct_tmpdir("calib-tune");
    char *text = test_data_read(LOGS "model-socket-2ranks.log");
    char with[4096], recorded[4096], out[4096], cal[4096], bad[4096];
    make_store(dir, "with.db", text, with, sizeof with);
    make_store(dir, "bad.db", "not NCCL at all\n", bad, sizeof bad);
    test_data_path(recorded, sizeof recorded, RUN_B "tune-2.db.gz");
    snprintf(out, sizeof out, "%s/tuned.yaml", dir);
    snprintf(cal, sizeof cal, "%s/calibrated.yaml", dir);

    const char *tune[] = {"tune", "--recorded", with, "--no-plots", "-o", out, NULL};
    ct_result r = run_cmd(tune);
    if (r.status != 0)
        fail_msg("tune failed: %s", r.err);
    bool written = strstr(r.err, "nccl_constants fitted from NCCL's model printout") != NULL;
    bool refused = strstr(r.err, "nccl_constants not written: the fitted constants") != NULL;
    if (written == refused)
        fail_msg("tune said neither (or both) of fitted / not written: %s", r.err);
    ct_result_free(&r);
    const char *calibrate[] = {"calibrate", with, "-o", cal, NULL};
    r = run_cmd(calibrate);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    cct_table tuned, calibrated;
    load_table(out, &tuned);
    load_table(cal, &calibrated);
    assert_true(tuned.n_sections > 0); /* the rules are there either way */
    if (written)
        assert_memory_equal(&tuned.constants, &calibrated.constants, sizeof tuned.constants);
    else
        assert_false(has_any_constant(&tuned.constants));
    size_t sections = tuned.n_sections;
    cct_table_destroy(&tuned);
    cct_table_destroy(&calibrated);

    const char *skip[] = {"tune",           "--recorded", with, "--no-plots",
                          "--no-constants", "-o",         out,  NULL};
    r = run_cmd(skip);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "nccl_constants"));
    ct_result_free(&r);
    load_table(out, &tuned);
    assert_false(has_any_constant(&tuned.constants));
    assert_int_equal(tuned.n_sections, sections);
    cct_table_destroy(&tuned);

    const char *plain[] = {"tune", "--recorded", recorded, "--no-plots", "-o", out, NULL};
    r = run_cmd(plain);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "nccl_constants not fitted: no NCCL model printout is stored"));
    ct_result_free(&r);
    load_table(out, &tuned);
    assert_false(has_any_constant(&tuned.constants));
    cct_table_destroy(&tuned);

    /* a stored log that does not parse: one line, the table is still written */
    const char *broken[] = {"tune", "--recorded", bad, "--no-plots", "-o", out, NULL};
    r = run_cmd(broken);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "nccl_constants not fitted: "));
    assert_non_null(strstr(r.err, "run 1 (stored NCCL log): no TUNING table"));
    ct_result_free(&r);

    free(text);
    ct_rm_rf(dir);
    free(dir);
}

/* Where tune does write the constants (the recorded 4-rank store with its NCCL printout,
 * where they choose better than NCCL's defaults), they are exactly calibrate's: tune and
 * calibrate are one computation on the same points. */
static void test_tune_writes_calibrate_constants(void **s)
{
    (void)s;
    char *dir = ct_tmpdir("calib-tune4");
    char *text = test_data_read(LOGS "model-socket-4ranks.log");
    char with[4096], out[4096], cal[4096];
    make_store_from(RUN_B "tune-4.db.gz", 4, dir, "with4.db", text, with, sizeof with);
    snprintf(out, sizeof out, "%s/tuned.yaml", dir);
    snprintf(cal, sizeof cal, "%s/calibrated.yaml", dir);
    const char *tune[] = {"tune", "--recorded", with, "--no-plots", "-o", out, NULL};
    ct_result r = run_cmd(tune);
    if (r.status != 0)
        fail_msg("tune failed: %s", r.err);
    if (!strstr(r.err, "nccl_constants fitted from NCCL's model printout"))
        fail_msg("tune did not write the constants at 4 ranks: %s", r.err);
    ct_result_free(&r);
    const char *calibrate[] = {"calibrate", with, "-o", cal, NULL};
    r = run_cmd(calibrate);
    assert_int_equal(r.status, 0);
    ct_result_free(&r);
    cct_table tuned, calibrated;
    load_table(out, &tuned);
    load_table(cal, &calibrated);
    assert_true(has_any_constant(&tuned.constants));
    assert_memory_equal(&tuned.constants.base_latency_us, &calibrated.constants.base_latency_us,
                        sizeof tuned.constants - offsetof(cct_constants, base_latency_us));
    cct_table_destroy(&tuned);
    cct_table_destroy(&calibrated);
    free(text);
    ct_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topology_from_store),
        cmocka_unit_test(test_calibrate_command),
        cmocka_unit_test(test_tune_command),
        cmocka_unit_test(test_tune_writes_calibrate_constants),
    };
    return cmocka_run_group_tests_name("calib_store", tests, NULL, NULL);
}
