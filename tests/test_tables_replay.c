/*
 * test_tables_replay.c - the committed tables under tables/ are reproduced byte for byte
 * by fitting the recorded stores that produced them (suite `replay`).
 *
 * Each table names its store and the note it was made with; `ccltune fit` (or, for a table
 * written by `ccltune tune` with fitted NCCL constants, `ccltune tune --recorded`) is run exactly
 * as a user would and its output compared with the committed file.  A change to the
 * fitter, the decisions or the writer that would change a committed table fails here, so
 * the tables in git always say what the current code concludes from the measurements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cct_names.h"
#include "cct_table.h"
#include "fixture_test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct replay_case {
    const char *table;
    const char *store;
    const char *note;
    const char *extra; /* further flags of `ccltune fit` */
    bool tune;         /* `ccltune tune --recorded`: rules and the fitted nccl_constants */
} replay_case;

static const replay_case cases[] = {
    {"tables/h200-socket-2ranks.yaml", "tests/data/h200/run-2026-11-29b/tune-2.db.gz",
     "H200, 2 rank processes sharing the GPU (MPS, NCCL_HOSTID per rank)", "", false},
    {"tables/h200-socket-4ranks.yaml", "tests/data/h200/run-2026-11-29b/tune-4.db.gz",
     "H200, 4 rank processes sharing the GPU (MPS, NCCL_HOSTID per rank)", "", false},
    {"tables/h200-socket-8ranks.yaml", "tests/data/h200/run-2026-11-29b/tune-8.db.gz",
     "H200, 8 rank processes sharing the GPU (MPS, NCCL_HOSTID per rank)", "", false},
    /* measured with the schedule that keeps NCCL's own Simple twin to 1 GiB (the first NVLink
     * store had pruned Simple after 2 KiB); the probe reads
     * NCCL's build CUDA version, so LL128's verdict needs no flag */
    {"tables/h200-nvlink-2ranks.yaml", "tests/data/h200/run-2026-11-29c/nvlink/tune-nvlink-2.db.gz",
     "H200 x2, one rank per GPU (NVLink); schedule keeps the Simple twin of the default", "",
     false},
    /* H200 x4: written on the GPU by `ccltune tune` (rules and the nccl_constants it fitted from
     * the NCCL model printout stored with the run), benched as written, refitted since */
    {"tables/h200-nvlink-4ranks.yaml", "tests/data/h200/run-2026-11-29d/tune-nvlink-4.db.gz",
     "H200 x4, one rank per GPU (NVLink)", "", true},
    /* H100, NCCL 2.30.7 built from source, chunk sizes searched (nccl,64K,256K,1M): written by
     * `ccltune tune` with the nccl_constants it fitted from 2.30.7's model printout; these
     * refitted tables benched as committed (tests/data/h100/nccl230-2026-12-06/refit/) */
    {"tables/h100-nccl230-2ranks.yaml", "tests/data/h100/nccl230-2026-12-06/tune230-2.db.gz",
     "H100, 2 rank processes sharing the GPU (MPS, NCCL_HOSTID per rank), NCCL 2.30.7 built from "
     "source",
     "", true},
    {"tables/h100-nccl230-4ranks.yaml", "tests/data/h100/nccl230-2026-12-06/tune230-4.db.gz",
     "H100, 4 rank processes sharing the GPU (MPS, NCCL_HOSTID per rank), NCCL 2.30.7 built from "
     "source",
     "", true},
};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static void test_committed_tables_reproduce(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR"), *ccltune = getenv("CCT_CCLTUNE");
    assert_non_null(src);
    assert_non_null(ccltune);
    char dir[] = "/tmp/cct-tables-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char store[1024], want[1024], out[1100], cmd[4096];
        snprintf(store, sizeof store, "%s/../%s", src, cases[i].store);
        snprintf(want, sizeof want, "%s/../%s", src, cases[i].table);
        snprintf(out, sizeof out, "%s/t%zu.yaml", dir, i);
        snprintf(cmd, sizeof cmd, "'%s' %s '%s' --note '%s' %s -o '%s' >/dev/null 2>&1", ccltune,
                 cases[i].tune ? "tune --no-plots --recorded" : "fit --store", store, cases[i].note,
                 cases[i].extra, out);
        int rc = system(cmd);
        assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
        size_t n_want = 0, n_got = 0;
        char *w = slurp(want, &n_want), *g = slurp(out, &n_got);
        assert_non_null(w);
        assert_non_null(g);
        if (n_want != n_got || memcmp(w, g, n_want) != 0)
            fail_msg("%s is not what `ccltune fit --store %s` produces now (%s); refit and review "
                     "the diff with `ccltune diff`",
                     cases[i].table, cases[i].store, out);
        free(w);
        free(g);
        unlink(out);
    }
    rmdir(dir);
}

/* The 4-GPU NVLink store measured reducescatter 4 MiB at 27.3 us with Ring/LL128 against
 * 33.7 us for NCCL's default (Ring/Simple), and 8 MiB at 38.5 vs 40.1 us: the table fitted from
 * it takes Ring/LL128 there (narrowest-first band settling had left both sizes to NCCL), and
 * leaves 12 MiB, where LL128 loses, to NCCL. */
static void test_nvlink4_reducescatter_ll128(void **state)
{
    (void)state;
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char path[1024];
    snprintf(path, sizeof path, "%s/../tables/h200-nvlink-4ranks.yaml", src);
    cct_table t;
    cct_error err;
    assert_int_equal(cct_table_load_file(path, &t, &err), CCT_OK);
    const cct_section *sec = cct_table_find_section(&t, CCT_COLL_REDUCESCATTER, 4, 1, 1, 0);
    assert_non_null(sec);
    const uint64_t ll128_sizes[] = {4194304, 5767168, 8388608};
    for (size_t i = 0; i < sizeof ll128_sizes / sizeof ll128_sizes[0]; i++) {
        const cct_rule *r = cct_section_lookup(sec, ll128_sizes[i]);
        assert_non_null(r);
        assert_int_equal(r->algo, CCT_ALGO_RING);
        assert_int_equal(r->proto, CCT_PROTO_LL128);
        assert_true(r->margin_default > 0.02);
    }
    const cct_rule *r = cct_section_lookup(sec, 12582912);
    assert_non_null(r);
    assert_int_equal(r->proto, CCT_PROTO_SIMPLE);
    assert_int_equal(r->channels, 0);
    cct_table_destroy(&t);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_committed_tables_reproduce),
                                       cmocka_unit_test(test_nvlink4_reducescatter_ll128)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
