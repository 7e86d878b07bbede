/*
 * test_plot.c - `ccltune plot` on the recorded H200 stores (tests/data/h200): the images
 * exist and are real PNG and SVG, the data files hold what the figures claim (one envelope
 * block per band of the table, each starting where its band starts), corrupt configurations
 * are marked, the files are deterministic, and a missing gnuplot is a clear error.
 *
 * Exits 77 (skipped) when gnuplot is not on PATH; CI installs gnuplot-nox
 * (tools/install-deps.sh).  The stores are copied to a temporary folder first: opening a
 * store, even read-only, may leave SQLite's -shm file beside it, never in the source tree.
 */
#include "recorded_test_util.h"
#include "report_test_util.h"

#define COLLS "broadcast", "reduce", "allgather", "reducescatter", "allreduce"

typedef struct ctx {
    char dir[64];
    char store4[128], store2[128];
    char *table, *nccl_table;
} ctx;

static bool gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    for (const char *p = path ? path : ""; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, p);
        if (n && access(buf, X_OK) == 0)
            return true;
        p += n + (end != NULL);
    }
    return false;
}

static char *file_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static int setup(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    rp_tmpdir(c->dir, sizeof c->dir);
    snprintf(c->store4, sizeof c->store4, "%s/search-4ranks.db", c->dir);
    snprintf(c->store2, sizeof c->store2, "%s/search-2ranks.db", c->dir);
    char *src4 = rp_path("data/h200/search-4ranks.db.gz"),
         *src2 = rp_path("data/h200/search-2ranks.db.gz");
    assert_true(recorded_copy(src4, c->store4));
    assert_true(recorded_copy(src2, c->store2));
    free(src4);
    free(src2);
    char *table = rp_path("data/plot/allreduce-4ranks.yaml");
    c->table = file_in(c->dir, "allreduce-4ranks.yaml");
    rp_copy(table, c->table); /* 0644 whatever the checkout's umask (report_test_util.h) */
    free(table);
    table = rp_path("data/plot/allreduce-4ranks-nccl.yaml");
    c->nccl_table = file_in(c->dir, "allreduce-4ranks-nccl.yaml");
    rp_copy(table, c->nccl_table);
    free(table);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    ctx *c = *state;
    rp_rmdir(c->dir);
    free(c->table);
    free(c->nccl_table);
    free(c);
    return 0;
}

static bool exists(const char *dir, const char *name)
{
    char *p = file_in(dir, name);
    bool yes = access(p, F_OK) == 0;
    free(p);
    return yes;
}

static char *read_in(const char *dir, const char *name, size_t *len)
{
    char *p = file_in(dir, name);
    char *data = rp_read(p, len);
    if (!data)
        fail_msg("%s was not written", p);
    free(p);
    return data;
}

static void check_png(const char *dir, const char *name)
{
    size_t len = 0;
    char *d = read_in(dir, name, &len);
    if (len < 1000 || memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0)
        fail_msg("%s/%s is not a PNG image (%zu bytes)", dir, name, len);
    free(d);
}

static void check_svg(const char *dir, const char *name)
{
    size_t len = 0;
    char *d = read_in(dir, name, &len);
    const char *p = d;
    if (strncmp(p, "<?xml", 5) == 0) /* the prolog, then the root element */
        p = strstr(p, "?>") + 2;
    while (*p == '\n' || *p == ' ' || *p == '\r')
        p++;
    if (strncmp(p, "<svg", 4) != 0 || !strstr(d, "</svg>"))
        fail_msg("%s/%s has no <svg> root element", dir, name);
    free(d);
}

/* Data blocks of a gnuplot data file: runs of data lines, split by blank lines; first_x[k]
 * and last_x[k] (up to 16) get the first column of each block's first and last line. */
static int blocks(const char *text, double *first_x, double *last_x)
{
    int n = 0;
    bool in = false;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len == 0) {
            in = false;
        } else if (line[0] != '#') {
            double x = strtod(line, NULL);
            if (!in && n < 16 && first_x)
                first_x[n] = x;
            if (!in)
                n++;
            in = true;
            if (n <= 16 && last_x)
                last_x[n - 1] = x;
        }
        line += len + (end != NULL);
    }
    return n;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_plot_with_table(void **state)
{
    ctx *c = *state;
    char *out = file_in(c->dir, "plots");
    rp_result r = rp_run("plot", "--store", c->store4, "--table", c->table, "--out", out);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    char want[256];
    snprintf(want, sizeof want, "%s: 20 images of 5 figures (", out);
    rp_assert_contains(r.out, want);
    rp_assert_contains(r.out, ", 0 marked corrupt)\n");
    rp_free(&r);

    const char *colls[] = {COLLS};
    for (size_t i = 0; i < 5; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s-4r4n-time.png", colls[i]);
        check_png(out, name);
        snprintf(name, sizeof name, "%s-4r4n-busbw.png", colls[i]);
        check_png(out, name);
        snprintf(name, sizeof name, "%s-4r4n-time.svg", colls[i]);
        check_svg(out, name);
        snprintf(name, sizeof name, "%s-4r4n-busbw.svg", colls[i]);
        check_svg(out, name);
        snprintf(name, sizeof name, "%s-4r4n.gp", colls[i]);
        assert_true(exists(out, name));
        snprintf(name, sizeof name, "%s-4r4n-measured.dat", colls[i]);
        assert_true(exists(out, name));
    }

    /* the envelope: one block per band of the table, each from where its band starts (the
     * first from the smallest measured size), the last to the largest measured size */
    char *env = read_in(out, "allreduce-4r4n-envelope.dat", NULL);
    double first[16], last[16];
    assert_int_equal(count(env, "\n# band "), 3);
    assert_int_equal(blocks(env, first, last), 3);
    assert_float_equal(first[0], 1024, 0);
    assert_float_equal(last[0], 8192, 0);
    assert_float_equal(first[1], 8192, 0);
    assert_float_equal(last[1], 262144, 0);
    assert_float_equal(first[2], 262144, 0);
    assert_float_equal(last[2], 16777216, 0);
    rp_assert_contains(env, "# band 2 of 3: 8 KiB to 256 KiB: tree/simple, channels 2");
    free(env);
    /* one curve per model of the table, and the configurations measured: NCCL's default and
     * 2 algorithms x 3 protocols x 4 channel settings */
    char *models = read_in(out, "allreduce-4r4n-models.dat", NULL);
    assert_int_equal(blocks(models, NULL, NULL), 3);
    free(models);
    char *measured = read_in(out, "allreduce-4r4n-measured.dat", NULL);
    assert_int_equal(blocks(measured, NULL, NULL), 25);
    assert_int_equal(count(measured, "# index 0: NCCL default\n"), 1);
    free(measured);
    char *gp = read_in(out, "allreduce-4r4n.gp", NULL);
    rp_assert_contains(gp, "'allreduce-4r4n-envelope.dat' index 0:2 using 1:2 with lines lw 9");
    rp_assert_contains(gp, "title 'chosen by the table'");
    rp_assert_contains(gp, "title 'NCCL default'");
    assert_null(strstr(gp, "corrupt.dat")); /* no wrong point at NCCL's default buffers */
    free(gp);

    /* the table has no allgather section: no curves, no envelope */
    assert_false(exists(out, "allgather-4r4n-envelope.dat"));
    assert_false(exists(out, "allgather-4r4n-models.dat"));
    gp = read_in(out, "allgather-4r4n.gp", NULL);
    assert_null(strstr(gp, "chosen by the table"));
    free(gp);
    free(out);
}

static void test_corrupt_marked(void **state)
{
    ctx *c = *state;
    char *out = file_in(c->dir, "corrupt");
    rp_result r = rp_run("plot", "--store", c->store2, "--out", out, "--no-gnuplot");
    assert_int_equal(r.status, 0);
    rp_assert_contains(r.out, "5 figures (73 configurations, 1 marked corrupt)");
    rp_free(&r);
    assert_false(exists(out, "allreduce-2r2n-time.png")); /* --no-gnuplot */
    /* Tree/LL128 with 2 channels gave wrong elements at 16 MiB (tests/data/h200/README.md) */
    char *bad = read_in(out, "allreduce-2r2n-corrupt.dat", NULL);
    double first[16];
    assert_int_equal(blocks(bad, first, NULL), 1);
    assert_float_equal(first[0], 16777216, 0);
    free(bad);
    char *gp = read_in(out, "allreduce-2r2n.gp", NULL);
    rp_assert_contains(gp, "pt 2 ps 0.8 dt 3 title 'tree/ll128 2 ch (CORRUPT)'");
    rp_assert_contains(gp, "'allreduce-2r2n-corrupt.dat' using 1:2 with points pt 6");
    rp_assert_contains(gp, "title 'corrupt'");
    assert_int_equal(count(gp, "(CORRUPT)"), 2); /* the time and the bandwidth plot */
    free(gp);
    assert_false(exists(out, "allgather-2r2n-corrupt.dat"));
    free(out);
}

static void test_deterministic(void **state)
{
    ctx *c = *state;
    char *a = file_in(c->dir, "det-a"), *b = file_in(c->dir, "det-b");
    const char *dirs[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        rp_result r = rp_run("plot", "--store", c->store4, "--table", c->table, "--out", dirs[i],
                             "--no-gnuplot");
        assert_int_equal(r.status, 0);
        rp_free(&r);
    }
    const char *names[] = {"allreduce-4r4n.gp",         "allreduce-4r4n-measured.dat",
                           "allreduce-4r4n-models.dat", "allreduce-4r4n-envelope.dat",
                           "broadcast-4r4n.gp",         "broadcast-4r4n-measured.dat"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t la = 0, lb = 0;
        char *x = read_in(a, names[i], &la), *y = read_in(b, names[i], &lb);
        assert_true(la > 0);
        if (la != lb || memcmp(x, y, la) != 0)
            fail_msg("%s differs between two runs", names[i]);
        free(x);
        free(y);
    }
    free(a);
    free(b);
}

static void test_gnuplot_missing(void **state)
{
    ctx *c = *state;
    char *out = file_in(c->dir, "nognuplot");
    char *const env[] = {"PATH=/nonexistent", "LC_ALL=C", NULL};
    rp_result r =
        rp_run_env(env, (const char *const[]){"plot", "--store", c->store4, "--out", out, NULL});
    assert_int_equal(r.status, 1);
    rp_assert_contains(r.err, "gnuplot not found on PATH");
    rp_assert_contains(r.err, "apt-get install gnuplot-nox");
    rp_free(&r);
    assert_false(exists(c->dir, "nognuplot")); /* refused before writing anything */
    r = rp_run_env(env, (const char *const[]){"plot", "--store", c->store4, "--out", out,
                                              "--no-gnuplot", NULL});
    assert_int_equal(r.status, 0);
    assert_true(exists(out, "allreduce-4r4n.gp"));
    rp_free(&r);
    free(out);
}

static void test_errors(void **state)
{
    ctx *c = *state;
    char *out = file_in(c->dir, "errors");
    rp_result r = rp_run("plot", "--out", out);
    assert_int_equal(r.status, 2);
    rp_assert_contains(r.err, "--store DB is required");
    rp_free(&r);
    r = rp_run("plot", "--store", c->store4, "--run", "x");
    assert_int_equal(r.status, 2);
    rp_free(&r);
    r = rp_run("plot", "--store", c->store4, "extra");
    assert_int_equal(r.status, 2);
    rp_free(&r);
    r = rp_run("plot", "--help");
    assert_int_equal(r.status, 0);
    rp_assert_contains(r.out, "usage: ccltune plot --store DB");
    rp_free(&r);

    char *src = rp_path("bad_tables/unknown-key-rule.yaml");
    char *bad = file_in(c->dir, "unknown-key-rule.yaml");
    rp_copy(src, bad);
    free(src);
    char expect[4200];
    snprintf(expect, sizeof expect, "%s:11:44: unknown key 'algoo'", bad);
    r = rp_run("plot", "--store", c->store4, "--table", bad, "--out", out);
    assert_int_equal(r.status, 1);
    rp_assert_contains(r.err, expect);
    rp_free(&r);
    free(bad);

    r = rp_run("plot", "--store", c->store4, "--run", "7", "--out", out, "--no-gnuplot");
    assert_int_equal(r.status, 1);
    rp_assert_contains(r.err, "ccltune plot: error: ");
    rp_free(&r);
    char absent[128];
    snprintf(absent, sizeof absent, "%s/absent.db", c->dir);
    r = rp_run("plot", "--store", absent, "--out", out, "--no-gnuplot");
    assert_int_equal(r.status, 1);
    rp_assert_contains(r.err, "does not exist");
    rp_free(&r);
    free(out);
}

/* The line of a data file that starts with x (as "%llu "), after the first line containing
 * after; its second column. */
static double column2_after(const char *text, const char *after, const char *x)
{
    const char *p = strstr(text, after);
    if (!p)
        fail_msg("no '%s'", after);
    char key[40];
    snprintf(key, sizeof key, "\n%s ", x);
    p = strstr(p, key);
    if (!p)
        fail_msg("no row %s after '%s'", x, after);
    return strtod(p + strlen(key), NULL);
}

/* A band left to NCCL follows NCCL's measured default, not the forced twin's model (a flat
 * 20 us fitted on two sizes), and is drawn as NCCL's choice. */
static void test_band_left_to_nccl(void **state)
{
    ctx *c = *state;
    char *out = file_in(c->dir, "nccl");
    rp_result r = rp_run("plot", "--store", c->store4, "--table", c->nccl_table, "--out", out);
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    rp_free(&r);
    check_png(out, "allreduce-4r4n-time.png");
    char *env = read_in(out, "allreduce-4r4n-envelope.dat", NULL);
    char *measured = read_in(out, "allreduce-4r4n-measured.dat", NULL);
    double first[16], last[16];
    assert_int_equal(blocks(env, first, last), 3);
    rp_assert_contains(env, "# band 3 of 3: 256 KiB to inf: ring/simple, channels 0: NCCL's "
                            "choice: NCCL's default as measured");
    /* from where the band starts to the largest size NCCL's default was measured at */
    assert_float_equal(first[2], 262144, 0);
    assert_float_equal(last[2], 16777216, 0);
    const char *sizes[] = {"262144", "1048576", "16777216"};
    for (size_t i = 0; i < 3; i++) {
        double e = column2_after(env, "# band 3 of 3", sizes[i]);
        double m = column2_after(measured, "# index 0: NCCL default", sizes[i]);
        assert_float_equal(e, m, 0);
        assert_true(e > 100); /* not the twin's 20 us */
    }
    /* between two measured sizes: log-log between NCCL's default at both */
    double a = column2_after(measured, "# index 0: NCCL default", "1048576");
    double b = column2_after(measured, "# index 0: NCCL default", "2097152");
    double mid = column2_after(env, "# band 3 of 3", "1482910");
    assert_true(a < b && mid > a && mid < b);
    /* the table's own bands are unchanged: its models */
    rp_assert_contains(env, "# band 2 of 3: 8 KiB to 256 KiB: tree/simple, channels 2: its "
                            "fitted model");
    free(measured);
    free(env);
    char *gp = read_in(out, "allreduce-4r4n.gp", NULL);
    rp_assert_contains(gp, "'allreduce-4r4n-envelope.dat' index 0:1 using 1:2 with lines lw 9 "
                           "lc rgb '#c8c8c8' title 'chosen by the table'");
    rp_assert_contains(gp, "'allreduce-4r4n-envelope.dat' index 2 using 1:2 with lines lw 9 lc "
                           "rgb '#f2d49b' title 'NCCL''s choice (band left to NCCL)'");
    rp_assert_contains(gp, "set label 3 'left to NCCL (ring/simple)'");
    free(gp);
    free(out);
}

int main(void)
{
    if (!gnuplot_on_path()) {
        fprintf(stderr, "gnuplot is not on PATH: skipped (apt-get install gnuplot-nox)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plot_with_table), cmocka_unit_test(test_corrupt_marked),
        cmocka_unit_test(test_deterministic),   cmocka_unit_test(test_gnuplot_missing),
        cmocka_unit_test(test_errors),          cmocka_unit_test(test_band_left_to_nccl),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
