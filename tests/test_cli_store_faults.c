/*
 * test_cli_store_faults.c - store faults as a user meets them: `ccltune search --replay`
 * (the real search, answered from the recorded H200 store) pointed at a disk that fills up,
 * a read-only store, a read-only folder, a store from a newer schema and files that are no
 * store at all.
 *
 * Each case must end with a clear error naming the store, exit status 1, and no damage: a
 * refused file is byte-identical afterwards with no -wal/-shm left beside it; a store whose
 * disk filled mid-run passes integrity_check, holds only whole points of the plan, and a
 * resume once space is back completes it to exactly the points of an undisturbed run.  The
 * full disk is fault_enospc.so under LD_PRELOAD (ENOSPC after a byte budget); "read-only"
 * runs ccltune as uid 65534, since root ignores file modes (skipped when not root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "cli_test_util.h"
#include "recorded_test_util.h"

#define NOBODY 65534
#define SEARCH_FLAGS                                                                               \
    "--ranks", "2", "--ranks-per-gpu", "2", "--colls", "allreduce", "--max-bytes", "4M",           \
        "--channels", "nccl,1", "--cycles", "2", "--exhaustive"

static char *dir, recording[4200], reference[4200];

static char *path_in(const char *name)
{
    char *p = malloc(4200);
    assert_non_null(p);
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

static bool copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    bool ok = in && out;
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    return ok;
}

/* FNV-1a of a whole file: "byte-identical" without keeping a copy. */
static uint64_t file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint64_t h = 1469598103934665603ull;
    int c;
    while ((c = fgetc(f)) != EOF)
        h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
    fclose(f);
    return h;
}

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static bool beside(const char *path, const char *suffix)
{
    char p[4300];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return exists(p);
}

/* Run `ccltune search --replay RECORDING --store STORE FLAGS [extra...]`, as uid (or -1:
 * as we are), with `env` (NAME=VALUE strings, NULL-terminated; may be NULL) added. */
static ct_result search(const char *store, int uid, const char *const *env, const char *extra)
{
    const char *exe = getenv("CCT_CCLTUNE");
    assert_non_null(exe);
    const char *argv[] = {exe,   "search",     "--replay", recording,          "--store",
                          store, SEARCH_FLAGS, extra,      extra ? "1" : NULL, NULL};
    char out_path[] = "/tmp/cct-sf-out-XXXXXX", err_path[] = "/tmp/cct-sf-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    assert_true(out_fd >= 0 && err_fd >= 0);
    unlink(out_path);
    unlink(err_path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
            _exit(77);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        int null_fd = open("/dev/null", O_RDONLY);
        dup2(null_fd, 0);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    ct_result r;
    r.status = ct_wait(pid);
    r.out = ct_slurp_fd(out_fd);
    r.err = ct_slurp_fd(err_fd);
    return r;
}

/* ASAN_OPTIONS as the test got it, plus leave to preload a library before the sanitizer's
 * runtime (it only wraps write calls); for LD_PRELOAD runs. */
static const char *asan_env(void)
{
    static char buf[2048];
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(buf, sizeof buf, "ASAN_OPTIONS=%s%sverify_asan_link_order=0", old ? old : "",
             old && *old ? ":" : "");
    return buf;
}

static sqlite3 *open_ro(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    return db;
}

static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    long long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
}

static void exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* Structural health of a store, and how many of the reference's points it holds. */
static long long check_store(const char *path, long long *extra)
{
    sqlite3 *db = open_ro(path);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(query_int(db, "SELECT count(*) FROM points p WHERE p.n_samples > 0 AND "
                                   "p.n_samples <> (SELECT count(*) FROM samples s WHERE "
                                   "s.point_id = p.id)"),
                     0);
    char sql[8192];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS ref", reference);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    const char *same = "q.coll = p.coll AND q.algo = p.algo AND q.proto = p.proto AND q.channels "
                       "= p.channels AND q.buffsize = p.buffsize AND q.align = p.align AND "
                       "q.dtype = p.dtype AND q.bytes = p.bytes AND q.in_place = p.in_place AND "
                       "q.status = p.status";
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM main.points p WHERE NOT EXISTS (SELECT 1 FROM ref.points q "
             "WHERE %s)",
             same);
    *extra = query_int(db, sql);
    long long n = query_int(db, "SELECT count(*) FROM main.points");
    sqlite3_close(db);
    return n;
}

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("store-faults");
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!dir || !src || chmod(dir, 0755) != 0) /* uid 65534 reads the recording here */
        return -1;
    char from[4200];
    snprintf(from, sizeof from, "%s/data/h200/search-2ranks.db.gz", src);
    snprintf(recording, sizeof recording, "%s/recording.db", dir);
    snprintf(reference, sizeof reference, "%s/reference.db", dir);
    if (!recorded_copy(from, recording))
        return -1;
    ct_result r = search(reference, -1, NULL, NULL);
    int st = r.status;
    ct_result_free(&r);
    return st == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    return 0;
}

static void expect_error(const ct_result *r, const char *store, const char *text)
{
    if (r->status != 1 || !strstr(r->err, store) || !strstr(r->err, text))
        fail_msg("expected exit 1 and \"%s\" naming %s, got exit %d: %s", text, store, r->status,
                 r->err);
}

/* The disk fills in the middle of the search: the error says so, what was committed stays,
 * and once there is space again a resume completes the run to the reference's points. */
static void full_disk_mid_run(void **state)
{
    (void)state;
    char *store = path_in("full.db");
    char fault_path[4300], preload[4300];
    snprintf(fault_path, sizeof fault_path, "CCT_FAULT_PATH=%s", store);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("CCT_FAULT_LIB"));
    const char *env[] = {preload, fault_path, "CCT_FAULT_ENOSPC_AFTER=400000", asan_env(), NULL};
    ct_result r = search(store, -1, env, NULL);
    expect_error(&r, store, "the disk is full");
    assert_non_null(strstr(r.err, "rolled back"));
    ct_result_free(&r);
    long long extra, ref_n = check_store(reference, &extra);
    long long n = check_store(store, &extra);
    print_message("disk full after %lld of %lld points\n", n, ref_n);
    assert_true(n > 0 && n < ref_n);
    assert_int_equal(extra, 0);

    r = search(store, -1, NULL, "--resume");
    if (r.status != 0)
        fail_msg("resume after the disk filled: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    assert_int_equal(check_store(store, &extra), ref_n);
    assert_int_equal(extra, 0);
    free(store);
}

/* Full before anything could be written: an error, and nothing half-made that the next
 * search would trip over. */
static void full_disk_at_creation(void **state)
{
    (void)state;
    char *store = path_in("full-at-start.db");
    char fault_path[4300], preload[4300];
    snprintf(fault_path, sizeof fault_path, "CCT_FAULT_PATH=%s", store);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("CCT_FAULT_LIB"));
    const char *env[] = {preload, fault_path, "CCT_FAULT_ENOSPC_AFTER=0", asan_env(), NULL};
    ct_result r = search(store, -1, env, NULL);
    expect_error(&r, store, "disk is full");
    ct_result_free(&r);
    r = search(store, -1, NULL, NULL);
    if (r.status != 0)
        fail_msg("a search after the failed creation: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    long long extra, ref_n = check_store(reference, &extra);
    assert_int_equal(check_store(store, &extra), ref_n);
    assert_int_equal(extra, 0);
    free(store);
}

/* A refused store: exit 1 with text, file byte-identical, no -wal/-shm created. */
static void expect_untouched(const char *store, int uid, const char *extra, const char *text)
{
    uint64_t before = file_hash(store);
    bool wal = beside(store, "-wal"), shm = beside(store, "-shm");
    ct_result r = search(store, uid, NULL, extra);
    if (r.status == 77)
        skip(); /* could not become uid 65534 */
    expect_error(&r, store, text);
    ct_result_free(&r);
    assert_true(file_hash(store) == before);
    assert_int_equal(beside(store, "-wal"), wal);
    assert_int_equal(beside(store, "-shm"), shm);
}

static void read_only_file(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char *store = path_in("read-only.db");
    assert_true(copy_file(reference, store));
    assert_int_equal(chmod(store, 0444), 0);
    expect_untouched(store, NOBODY, "--resume", "is read-only (no write permission on the file)");
    expect_untouched(store, NOBODY, NULL, "is read-only (no write permission on the file)");
    free(store);
}

static void read_only_folder(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char *sub = path_in("locked"), store[4300];
    assert_non_null(sub);
    assert_int_equal(mkdir(sub, 0755), 0);
    /* "sub ? sub : """: GCC with -fsanitize=undefined cannot see that cmocka's assert stops
     * here and warns (format-truncation) about a NULL %s under -Werror */
    snprintf(store, sizeof store, "%s/store.db", sub ? sub : "");
    assert_true(copy_file(reference, store));
    assert_int_equal(chown(store, NOBODY, NOBODY), 0); /* the file is writable, its folder not */
    assert_int_equal(chmod(sub, 0555), 0);
    expect_untouched(store, NOBODY, "--resume", "is not writable, and the store needs to create");
    chmod(sub, 0755);
    free(sub);
}

static void newer_schema(void **state)
{
    (void)state;
    char *store = path_in("newer.db");
    assert_true(copy_file(reference, store));
    exec_sql(store, "PRAGMA user_version = 5");
    expect_untouched(store, -1, NULL,
                     "was written by a newer ccltune (schema 5, this build reads "
                     "up to 4)");
    expect_untouched(store, -1, "--resume", "was written by a newer ccltune");
    free(store);
}

static void not_a_store(void **state)
{
    (void)state;
    char *yaml = path_in("table.yaml"), *foreign = path_in("foreign.db");
    FILE *f = fopen(yaml, "w");
    assert_non_null(f);
    fputs("ccltune_table: 1\n", f);
    fclose(f);
    expect_untouched(yaml, -1, NULL, "is not a ccltune store (not an SQLite database");
    exec_sql(foreign, "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
    expect_untouched(foreign, -1, NULL, "but not a ccltune store");
    free(yaml);
    free(foreign);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_disk_mid_run), cmocka_unit_test(full_disk_at_creation),
        cmocka_unit_test(read_only_file),    cmocka_unit_test(read_only_folder),
        cmocka_unit_test(newer_schema),      cmocka_unit_test(not_a_store),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
