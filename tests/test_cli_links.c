/*
 * test_cli_links.c - the link matrix through the commands a user runs: `ccltune search
 * --replay ... --links-from FILE` stores it with the run, `ccltune fit` carries its summary
 * into the table (`link_matrix`) and `ccltune explain` prints it.
 *
 * The replay backend measures nothing, so the matrix is tests/data/links/synthetic-2gpus.json
 * (made up, in the probe's JSON form).  Checked: with it, the table's link_matrix holds that
 * file's figures, explain shows them and `explain --links STORE` the whole matrix; without it (or
 * with
 * --no-links) neither has any; a malformed file is refused before any run starts, as FILE:LINE:COL,
 * and leaves no store; a missing file names its path; a recorded store from before schema 4 fits as
 * ever.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli_test_util.h"
#include "data_test_util.h"

#define RECORDED "data/h200/search-2ranks.db.gz"
#define SYNTHETIC "data/links/synthetic-2gpus.json"

typedef struct scratch {
    char *dir;
    char recorded[4096], links[4096], store[4200], table[4200];
} scratch;

static int setup(void **state)
{
    scratch *s = calloc(1, sizeof *s);
    s->dir = ct_tmpdir("cli-links");
    test_data_path(s->recorded, sizeof s->recorded, RECORDED);
    test_data_path(s->links, sizeof s->links, SYNTHETIC);
    snprintf(s->store, sizeof s->store, "%s/s.db", s->dir);
    snprintf(s->table, sizeof s->table, "%s/t.yaml", s->dir);
    *state = s;
    return s->dir ? 0 : -1;
}

static int teardown(void **state)
{
    scratch *s = *state;
    ct_rm_rf(s->dir);
    free(s->dir);
    free(s);
    return 0;
}

/* search --replay with flag/value (both may be NULL), then fit; returns the table text. */
static char *search_and_fit(const scratch *s, const char *flag, const char *value)
{
    const char *search[] = {"search",  "--replay",  s->recorded,   "--store", s->store,
                            "--colls", "allreduce", "--max-bytes", "64K",     "--channels",
                            "nccl,1",  flag,        value,         NULL};
    ct_result r = ct_run(search);
    if (r.status != 0)
        fail_msg("search: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    const char *fit[] = {"fit", "--store", s->store, "-o", s->table, NULL};
    r = ct_run(fit);
    if (r.status != 0)
        fail_msg("fit: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    FILE *f = fopen(s->table, "r");
    assert_non_null(f);
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static char *explain(const scratch *s)
{
    const char *args[] = {"explain", s->table, "--coll", "allreduce", "--ranks", "2", NULL};
    ct_result r = ct_run(args);
    if (r.status != 0)
        fail_msg("explain: exit %d: %s", r.status, r.err);
    free(r.err);
    return r.out;
}

static void stored_fitted_explained(void **state)
{
    scratch *s = *state;
    char *table = search_and_fit(s, "--links-from", s->links);
    assert_non_null(strstr(table, "link_matrix:  # stored with run 1 (ccltune probe --links)\n"
                                  "  run: 1\n  gpus: 2\n  pair_gbps_min: 368.20\n"
                                  "  pair_gbps_max: 370.50\n  pair_latency_us_min: 0.950\n"
                                  "  pair_latency_us_max: 0.970\n  h2d_gbps: 51.00\n"
                                  "  d2h_gbps: 49.80\n  host_latency_us: 1.310\n"
                                  "  socket: \"eth0\"\n"));
    char *out = explain(s);
    assert_non_null(strstr(out, "links:       stored with run 1, 2 GPUs; GPU pairs 368.2-370.5 "
                                "GB/s, 0.95-0.97 us one way\n"));
    assert_non_null(strstr(out, "host (slowest GPU): 51.0 GB/s H2D, 49.8 GB/s D2H, 1.31 us one "
                                "way; sockets over eth0\n"));
    assert_null(strstr(out, "link matrix:"));
    free(out);
    /* --links: the whole stored matrix, pair by pair, with NCCL's path names */
    const char *args[] = {"explain", s->table,  "--coll", "allreduce", "--ranks",
                          "2",       "--links", s->store, NULL};
    ct_result r = ct_run(args);
    if (r.status != 0)
        fail_msg("explain --links: exit %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "link matrix:   measured in 2.41 s"));
    assert_non_null(strstr(r.out, "GPU 1 host: H2D 51.0 GB/s, D2H 49.8 GB/s"));
    assert_non_null(strstr(r.out, "    GPU0             X           370.5 NVL"));
    assert_non_null(strstr(r.out, "    GPU1          0.97 NVL           X"));
    ct_result_free(&r);
    free(table);
}

static void none_without_the_flag(void **state)
{
    scratch *s = *state;
    const char *flags[][2] = {{NULL, NULL}, {"--no-links", NULL}};
    for (int i = 0; i < 2; i++) {
        unlink(s->store);
        char *table = search_and_fit(s, flags[i][0], flags[i][1]);
        assert_null(strstr(table, "link_matrix"));
        char *out = explain(s);
        assert_null(strstr(out, "links:"));
        free(out);
        free(table);
    }
    /* --links with a table that has no link_matrix: nothing to look up */
    const char *args[] = {"explain", s->table,  "--coll", "allreduce", "--ranks",
                          "2",       "--links", s->store, NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "the table has no link_matrix"));
    ct_result_free(&r);
}

static void bad_file_refused(void **state)
{
    scratch *s = *state;
    char bad[4300];
    snprintf(bad, sizeof bad, "%s/bad.json", s->dir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"link_matrix\": {\n  \"host\": [{\"gpu\": 0, \"h2d_gbps\": 50}],\n"
          "  \"pairs\": [{\"src\": 0, \"dst\": 3}]}}\n",
          f);
    fclose(f);
    unlink(s->store);
    const char *args[] = {"search", "--replay",     s->recorded, "--store",
                          s->store, "--links-from", bad,         NULL};
    ct_result r = ct_run(args);
    assert_int_equal(r.status, 1);
    char want[4400];
    snprintf(want, sizeof want, "%s:3:31: \"dst\" must be a GPU index 0..0", bad);
    if (!strstr(r.err, want))
        fail_msg("want \"%s\" in: %s", want, r.err);
    ct_result_free(&r);
    assert_int_not_equal(access(s->store, F_OK), 0); /* no run, no store */

    char missing[4300];
    snprintf(missing, sizeof missing, "%s/missing.json", s->dir);
    args[6] = missing;
    r = ct_run(args);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, missing));
    ct_result_free(&r);
    const char *no_value[] = {"search", "--replay", s->recorded, "--links-from", NULL};
    r = ct_run(no_value);
    assert_int_equal(r.status, 2);
    ct_result_free(&r);
}

/* A store from before schema 4 fits with no link_matrix (read as it is). */
static void old_store_fits(void **state)
{
    scratch *s = *state;
    const char *fit[] = {"fit", "--store", s->recorded, "-o", s->table, NULL};
    ct_result r = ct_run(fit);
    if (r.status != 0)
        fail_msg("fit: exit %d: %s", r.status, r.err);
    ct_result_free(&r);
    char *out = explain(s);
    assert_null(strstr(out, "links:"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(stored_fitted_explained, setup, teardown),
        cmocka_unit_test_setup_teardown(none_without_the_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_file_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(old_store_fits, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
