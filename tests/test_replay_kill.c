/*
 * test_replay_kill.c - SIGKILL `ccltune search --replay` (the real search, answered from the
 * recorded H200 store) at random moments, resume it each time, and prove the store ends up
 * holding exactly what an uninterrupted search stores: zero points lost, zero duplicated,
 * none extra, integrity_check clean, no point without its samples.
 *
 * A reference replay runs first.  Then a search into a second store is killed after a random
 * delay (0 .. a twelfth of the reference's wall time) and resumed with `--resume 1` until
 * KILLS kills have landed; a run completing earlier starts a new round on a fresh store.
 * Every kill is followed by the checks above (nothing an earlier check saw may vanish); every
 * round ends equal to the reference in keys and statuses, and in statistics for the points
 * of the round's first process (replay noise follows call order, which resumed processes
 * restart).  The search is exhaustive: adaptive pruning decides from measured values.
 * CCT_TEST_SEED replays a sequence of delays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <sqlite3.h>
#include <time.h>

#include "cli_test_util.h"
#include "recorded_test_util.h"

#define KILLS 55
#define MAX_POINTS 8192

/* The dimensions of the replayed search: every collective the recording has at three
 * sizes' worth of work, enough for a few seconds of commits. */
#define SEARCH_FLAGS                                                                               \
    "--ranks", "2", "--ranks-per-gpu", "2", "--colls", "allreduce,allgather,broadcast",            \
        "--max-bytes", "16M", "--channels", "nccl,1,2,max", "--align", "0,4", "--buffsize",        \
        "default,1M", "--cycles", "3", "--exhaustive"

#define KEY_COLS                                                                                   \
    "coll || '/' || algo || '/' || proto || '/' || channels || '/' || buffsize || '/' || "         \
    "ll_buffsize || '/' || ll128_buffsize || '/' || align || '/' || ranks || '/' || nodes || "     \
    "'/' || dtype || '/' || bytes || '/' || in_place"

typedef struct point_row {
    char *key;
    char *status;
    double median;
    char *samples; /* the samples in order, as text: exact comparison */
} point_row;

typedef struct point_set {
    point_row *rows;
    size_t n;
} point_set;

static char *dir, *recording;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_row(const void *a, const void *b)
{
    return strcmp(((const point_row *)a)->key, ((const point_row *)b)->key);
}

static void set_free(point_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->rows[i].key);
        free(s->rows[i].status);
        free(s->rows[i].samples);
    }
    free(s->rows);
    s->rows = NULL;
    s->n = 0;
}

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

/* Open a store the way a reader beside a crashed writer does (read-only; WAL read through
 * the existing -shm).  NULL when the file does not exist yet. */
static sqlite3 *open_store(const char *path)
{
    if (access(path, F_OK) != 0)
        return NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    /* a writer killed before its WAL index was complete leaves a WAL only a connection that
     * may write the -shm can recover (SQLITE_READONLY_RECOVERY): read through one, as the
     * next ccltune run opening the store would */
    if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) ==
        SQLITE_READONLY) {
        sqlite3_close(db);
        db = NULL;
        assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
        sqlite3_busy_timeout(db, 10000);
    }
    return db;
}

static char *query_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    char *out = sqlite3_step(st) == SQLITE_ROW ? dup_col(st, 0) : NULL;
    sqlite3_finalize(st);
    return out;
}

static long long query_int(sqlite3 *db, const char *sql)
{
    char *t = query_text(db, sql);
    long long v = t ? atoll(t) : -1;
    free(t);
    return v;
}

/* Every point of a store (sorted by key), after the structural checks every state of the
 * store must pass: integrity, no duplicate key, every point with all its samples. */
static point_set load_checked(const char *path)
{
    point_set s = {calloc(MAX_POINTS, sizeof(point_row)), 0};
    assert_non_null(s.rows);
    sqlite3 *db = open_store(path);
    if (!db)
        return s;
    if (query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'points'") != 1) {
        sqlite3_close(db); /* killed while the schema was being created: an empty store */
        return s;
    }
    char *ic = query_text(db, "PRAGMA integrity_check");
    if (!ic || strcmp(ic, "ok") != 0)
        fail_msg("%s: integrity_check says %s", path, ic ? ic : "nothing");
    free(ic);
    assert_int_equal(query_int(db, "SELECT count(*) FROM (SELECT " KEY_COLS
                                   " AS k FROM points GROUP BY run_id, k HAVING count(*) > 1)"),
                     0);
    assert_int_equal(query_int(db, "SELECT count(*) FROM points p WHERE p.n_samples > 0 AND "
                                   "p.n_samples <> (SELECT count(*) FROM samples s WHERE "
                                   "s.point_id = p.id)"),
                     0);
    sqlite3_stmt *st;
    const char *sql =
        "SELECT " KEY_COLS ", status, median_us, "
        "(SELECT group_concat(printf('%.17g', time_us), ',') FROM (SELECT time_us FROM samples "
        "WHERE point_id = p.id ORDER BY seq)) FROM points p WHERE run_id = 1";
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(s.n < MAX_POINTS);
        point_row *r = &s.rows[s.n++];
        r->key = dup_col(st, 0);
        r->status = dup_col(st, 1);
        r->median = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1.0 : sqlite3_column_double(st, 2);
        r->samples = dup_col(st, 3);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    qsort(s.rows, s.n, sizeof *s.rows, cmp_row);
    return s;
}

static point_set set_copy(const point_set *s)
{
    point_set c = {calloc(s->n ? s->n : 1, sizeof(point_row)), s->n};
    assert_non_null(c.rows);
    for (size_t i = 0; i < s->n; i++)
        c.rows[i] = (point_row){strdup(s->rows[i].key), strdup(s->rows[i].status),
                                s->rows[i].median, strdup(s->rows[i].samples)};
    return c;
}

static const point_row *find(const point_set *s, const char *key)
{
    point_row probe = {(char *)key, NULL, 0, NULL};
    return bsearch(&probe, s->rows, s->n, sizeof *s->rows, cmp_row);
}

static bool run_exists(const char *path)
{
    sqlite3 *db = open_store(path);
    if (!db)
        return false;
    bool yes = query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'") == 1 &&
               query_int(db, "SELECT count(*) FROM runs WHERE id = 1") == 1;
    sqlite3_close(db);
    return yes;
}

static int run_search(const char *store, bool resume, double kill_after_s, bool *killed)
{
    const char *args[] = {
        "search", "--replay", recording, "--store", store, SEARCH_FLAGS, resume ? "--resume" : NULL,
        "1",      NULL};
    pid_t pid = ct_spawn(args);
    assert_true(pid > 0);
    *killed = false;
    if (kill_after_s >= 0) {
        struct timespec d = {(time_t)kill_after_s,
                             (long)((kill_after_s - (double)(time_t)kill_after_s) * 1e9)};
        nanosleep(&d, NULL);
        *killed = kill(pid, SIGKILL) == 0;
    }
    int status = ct_wait(pid);
    if (*killed && status != 128 + SIGKILL)
        *killed = false; /* it had finished (or died) before the signal landed */
    return status;
}

static int setup(void **state)
{
    (void)state;
    dir = ct_tmpdir("replay-kill");
    const char *src = getenv("CCT_TEST_SRCDIR");
    if (!dir || !src)
        return -1;
    /* a private copy: a killed replay must not leave -wal/-shm files in the source tree */
    recording = malloc(4200);
    snprintf(recording, 4200, "%s/recording.db", dir);
    char from[4200];
    snprintf(from, sizeof from, "%s/data/h200/search-2ranks.db.gz", src);
    return recorded_copy(from, recording) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ct_rm_rf(dir);
    free(dir);
    free(recording);
    return 0;
}

/* The round's store against the reference: same keys, same statuses, and for the points
 * the round's first process stored, the same numbers. */
static void compare_with_reference(const point_set *ref, const point_set *got,
                                   const point_set *first)
{
    size_t missing = 0, extra = 0, status_diff = 0, stats_diff = 0;
    for (size_t i = 0; i < ref->n; i++) {
        const point_row *g = find(got, ref->rows[i].key);
        if (!g) {
            if (missing++ < 5)
                print_message("missing: %s\n", ref->rows[i].key);
        } else if (strcmp(g->status, ref->rows[i].status) != 0) {
            status_diff++;
        }
    }
    for (size_t i = 0; i < got->n; i++)
        if (!find(ref, got->rows[i].key) && extra++ < 5)
            print_message("extra: %s\n", got->rows[i].key);
    for (size_t i = 0; i < first->n; i++) {
        const point_row *r = find(ref, first->rows[i].key);
        if (!r || r->median != first->rows[i].median ||
            strcmp(r->samples, first->rows[i].samples) != 0)
            stats_diff++;
    }
    print_message("round: %zu points (reference %zu), %zu from the first process; missing %zu, "
                  "extra %zu, other status %zu, other statistics %zu\n",
                  got->n, ref->n, first->n, missing, extra, status_diff, stats_diff);
    assert_int_equal(missing, 0);
    assert_int_equal(extra, 0);
    assert_int_equal(status_diff, 0);
    assert_int_equal(stats_diff, 0);
}

static void kill_and_resume(void **state)
{
    (void)state;
    const char *seed_env = getenv("CCT_TEST_SEED");
    unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 0)
                             : (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
    print_message("CCT_TEST_SEED=%u\n", seed);
    srand(seed);

    char ref_path[4200], path[4200];
    snprintf(ref_path, sizeof ref_path, "%s/reference.db", dir);
    bool killed;
    double t0 = now_s();
    assert_int_equal(run_search(ref_path, false, -1, &killed), 0);
    double wall = now_s() - t0;
    point_set ref = load_checked(ref_path);
    print_message("reference: %zu points in %.2f s\n", ref.n, wall);
    assert_true(ref.n > 1000);

    int kills = 0, rounds = 0, attempts = 0;
    size_t lost = 0, stored_total = 0;
    while (kills < KILLS || rounds == 0) {
        snprintf(path, sizeof path, "%s/round%d.db", dir, ++rounds);
        point_set seen = {NULL, 0}, first = {NULL, 0};
        bool first_process = true, done = false;
        while (!done) {
            bool resume = run_exists(path);
            double delay = kills < KILLS ? wall / 12.0 * (double)rand() / RAND_MAX : -1.0;
            int status = run_search(path, resume, delay, &killed);
            attempts++;
            point_set now = load_checked(path);
            /* zero lost: every point an earlier check saw is still there */
            for (size_t i = 0; i < seen.n; i++)
                if (!find(&now, seen.rows[i].key))
                    lost++;
            /* nothing the reference lacks, at any moment */
            for (size_t i = 0; i < now.n; i++)
                if (!find(&ref, now.rows[i].key))
                    fail_msg("after attempt %d: %s is not in the reference", attempts,
                             now.rows[i].key);
            if (first_process) { /* its points saw the reference's noise sequence */
                first = set_copy(&now);
                first_process = false;
            }
            set_free(&seen);
            seen = now;
            if (killed) {
                kills++;
            } else {
                assert_int_equal(status, 0);
                done = true;
            }
        }
        point_set final = load_checked(path);
        compare_with_reference(&ref, &final, &first);
        stored_total += final.n;
        set_free(&final);
        set_free(&first);
        set_free(&seen);
    }
    print_message("%d kills over %d rounds (%d runs of ccltune); %zu points stored, %zu lost, 0 "
                  "duplicated, 0 extra\n",
                  kills, rounds, attempts, stored_total, lost);
    assert_int_equal(lost, 0);
    assert_true(kills >= 50);
    set_free(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kill_and_resume),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
