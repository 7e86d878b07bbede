/*
 * test_fleet.c - choosing a folder's table for a process (src/nccl/cct_fleet.c), on tables
 * built in memory, and the folder listing on a scratch folder.
 *
 * Precedence: the GPU named over the capability alone over neither; the exact NCCL release
 * over another patch (nearest, then newer) over "major.minor" over none; a shared-GPU table
 * where NCCL_HOSTID is set; then file order.  Ties are flagged, misses are ordered nearest
 * first, and the static conflict check (`validate DIR`) finds exactly the pairs that can tie.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cct_fleet.h"
#include "cli_test_util.h"

static void make(cct_table *t, const char *gpu, int cc, const char *nccl, int rpg, int ranks)
{
    cct_table_init(t);
    t->fingerprint.gpu = gpu ? strdup(gpu) : NULL;
    t->fingerprint.cc = cc;
    t->fingerprint.nccl = nccl ? strdup(nccl) : NULL;
    t->fingerprint.ranks_per_gpu = rpg;
    cct_section *s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, ranks, 1);
    assert_non_null(s);
    cct_rule r = cct_rule_blank();
    r.max_bytes = CCT_BYTES_INF;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
}

static const cct_runtime h200 = {"NVIDIA H200", 90, 22809, 8, 1, false};

/* Choose among n tables, every one with a section for the shape unless told otherwise. */
static cct_fleet_choice choose(cct_table *t, size_t n, const cct_runtime *rt)
{
    const cct_table *p[8];
    bool shape[8];
    for (size_t i = 0; i < n; i++) {
        p[i] = &t[i];
        shape[i] = cct_table_find_section(&t[i], CCT_COLL_ALLREDUCE, rt->nranks, rt->nnodes, 1,
                                          -1) != NULL;
    }
    cct_fleet_choice c;
    cct_fleet_choose(p, shape, n, rt, &c);
    return c;
}

static void destroy(cct_table *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cct_table_destroy(&t[i]);
}

static void nccl_precedence(void **state)
{
    (void)state;
    cct_table t[5];
    make(&t[0], "NVIDIA H200", 90, NULL, 1, 8);     /* any NCCL */
    make(&t[1], "NVIDIA H200", 90, "2.28", 1, 8);   /* major.minor */
    make(&t[2], "NVIDIA H200", 90, "2.28.3", 1, 8); /* other patch, 6 away */
    make(&t[3], "NVIDIA H200", 90, "2.28.9", 1, 8); /* exact */
    make(&t[4], "NVIDIA H200", 90, "2.28.7", 1, 8); /* other patch, 2 away */
    cct_fleet_choice c = choose(t, 5, &h200);
    assert_int_equal(c.chosen, 3);
    assert_int_equal(c.runner_up, 4);
    assert_false(c.tie);
    c = choose(t, 3, &h200); /* without exact and nearest: the farther patch still wins */
    assert_int_equal(c.chosen, 2);
    assert_int_equal(c.runner_up, 1);
    c = choose(t, 2, &h200);
    assert_int_equal(c.chosen, 1);
    assert_int_equal(c.runner_up, 0);
    /* equally near patches: the newer */
    cct_runtime rt = h200;
    rt.nccl_version = 22805;
    c = choose(t, 5, &rt);
    assert_int_equal(c.chosen, 4); /* 2.28.7 over 2.28.3, both 2 away */
    assert_int_equal(c.runner_up, 2);
    destroy(t, 5);
}

/* A table widened to the running release (nccl_versions) applies, but ranks below every table
 * measured on that release's major.minor, and above one for any NCCL. */
static void widened_precedence(void **state)
{
    (void)state;
    cct_table t[3];
    make(&t[0], "NVIDIA H200", 90, "2.28.9", 1, 8); /* widened to 2.30 */
    t[0].fingerprint.nccl_versions = strdup("2.30");
    make(&t[1], "NVIDIA H200", 90, "2.30.3", 1, 8); /* other patch of the running release */
    make(&t[2], "NVIDIA H200", 90, NULL, 1, 8);     /* any NCCL */
    cct_runtime rt = h200;
    rt.nccl_version = 23007;
    cct_fleet_choice c = choose(t, 3, &rt);
    assert_int_equal(c.chosen, 1);
    assert_int_equal(c.runner_up, 0);
    cct_fleet_rank r = cct_fleet_rank_of(&t[0], &rt);
    char text[128];
    assert_non_null(strstr(cct_fleet_rank_text(&r, text, sizeof text), "NCCL widened to"));
    cct_table two[2] = {t[0], t[2]}; /* shallow copies: destroyed through t */
    c = choose(two, 2, &rt);
    assert_int_equal(c.chosen, 0);
    rt.nccl_version = 22907; /* neither its own release nor widened to: does not apply */
    c = choose(t, 1, &rt);
    assert_int_equal(c.chosen, -1);
    destroy(t, 3);
}

static void gpu_and_shared_precedence(void **state)
{
    (void)state;
    cct_table t[4];
    make(&t[0], NULL, 0, "2.28.9", 1, 8);          /* any GPU, exact NCCL */
    make(&t[1], NULL, 90, "2.28", 1, 8);           /* cc only */
    make(&t[2], "NVIDIA H200", 0, "2.28", 1, 8);   /* model only */
    make(&t[3], "nvidia h200 ", 90, "2.28", 1, 8); /* both (names compare loosely) */
    cct_fleet_choice c = choose(t, 4, &h200);
    assert_int_equal(c.chosen, 3); /* the GPU outranks an exact NCCL */
    assert_int_equal(c.runner_up, 2);
    c = choose(t, 2, &h200);
    assert_int_equal(c.chosen, 1);
    destroy(t, 4);

    make(&t[0], "NVIDIA H200", 90, "2.28.9", 1, 8);
    make(&t[1], "NVIDIA H200", 90, "2.28.9", 4, 8); /* shared GPU */
    c = choose(t, 2, &h200);                        /* NCCL_HOSTID unset: shared cannot match */
    assert_int_equal(c.chosen, 0);
    assert_int_equal(c.runner_up, -1);
    cct_runtime rt = h200;
    rt.hostid_set = true;
    c = choose(t, 2, &rt);
    assert_int_equal(c.chosen, 1);
    assert_int_equal(c.runner_up, 0);
    assert_false(c.tie);
    destroy(t, 2);
}

static void ties_and_misses(void **state)
{
    (void)state;
    cct_table t[5];
    make(&t[0], "NVIDIA H100 80GB HBM3", 90, "2.28.9", 1, 8); /* GPU miss */
    make(&t[1], "NVIDIA H200", 90, "2.27.3", 1, 8);           /* NCCL miss */
    make(&t[2], "NVIDIA H200", 90, "2.28.9", 1, 16);          /* shape miss */
    make(&t[3], "NVIDIA H200", 80, "2.28.9", 1, 8);           /* cc miss */
    make(&t[4], "NVIDIA H200", 90, "2.28.9", 4, 8);           /* shared-GPU miss */
    cct_fleet_choice c = choose(t, 5, &h200);
    assert_int_equal(c.chosen, -1);
    assert_int_equal(c.n_closest, CCT_FLEET_CLOSEST);
    assert_int_equal(c.closest[0], 2);
    assert_int_equal(c.closest_verdict[0], CCT_FP_TOPOLOGY);
    assert_int_equal(c.closest[1], 4);
    assert_int_equal(c.closest_verdict[1], CCT_FP_SHARED_GPU);
    assert_int_equal(c.closest[2], 1);
    assert_int_equal(c.closest_verdict[2], CCT_FP_NCCL);
    destroy(t, 5);

    make(&t[0], "NVIDIA H200", 90, "2.28.9", 1, 8);
    make(&t[1], "NVIDIA H200", 90, "2.28.9", 1, 8);
    make(&t[2], "NVIDIA H200", 90, "2.28.9", 1, 8);
    c = choose(t, 3, &h200);
    assert_int_equal(c.chosen, 0); /* first in file order */
    assert_int_equal(c.runner_up, 1);
    assert_true(c.tie);
    destroy(t, 3);
}

static void conflicts(void **state)
{
    (void)state;
    cct_table a, b;
    int r = 0, n = 0;
    make(&a, "NVIDIA H200", 90, "2.28.9", 1, 8);
    make(&b, "nvidia H200", 90, "2.28.9", 1, 8);
    assert_true(cct_fleet_conflict(&a, &b, &r, &n));
    assert_int_equal(r, 8);
    assert_int_equal(n, 1);
    cct_table_destroy(&b);
    make(&b, "NVIDIA H200", 90, "2.28.9", 1, 16); /* no common shape */
    assert_false(cct_fleet_conflict(&a, &b, &r, &n));
    cct_table_destroy(&b);
    make(&b, "NVIDIA H200", 90, "2.28", 1, 8); /* precedence decides */
    assert_false(cct_fleet_conflict(&a, &b, &r, &n));
    assert_false(cct_fleet_conflict(&b, &a, &r, &n));
    cct_table_destroy(&b);
    make(&b, "NVIDIA H200", 90, "2.28.3", 1, 8); /* nearest patch decides */
    assert_false(cct_fleet_conflict(&a, &b, &r, &n));
    cct_table_destroy(&b);
    make(&b, "NVIDIA H200", 90, "2.28.9", 2, 8); /* shared vs plain */
    assert_false(cct_fleet_conflict(&a, &b, &r, &n));
    cct_table_destroy(&b);
    make(&b, NULL, 90, "2.28.9", 1, 8); /* GPU named vs not */
    assert_false(cct_fleet_conflict(&a, &b, &r, &n));
    assert_false(cct_fleet_conflict(&b, &a, &r, &n));
    cct_table_destroy(&b);
    cct_table_destroy(&a);
    make(&a, NULL, 0, NULL, 1, 8); /* two tables for anything */
    make(&b, NULL, 0, NULL, 1, 8);
    assert_true(cct_fleet_conflict(&a, &b, &r, &n));
    cct_table_destroy(&b);
    cct_table_destroy(&a);
}

static void touch(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void listing(void **state)
{
    (void)state;
    char *dir = ct_tmpdir("fleet-list");
    assert_non_null(dir);
    touch(dir, "b.yaml");
    touch(dir, "a.YML");
    touch(dir, "B.yaml");
    touch(dir, ".hidden.yaml");
    touch(dir, "notes.txt");
    touch(dir, "yaml");
    char **names;
    size_t n;
    cct_error err;
    assert_int_equal(cct_fleet_list(dir, &names, &n, &err), CCT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "B.yaml"); /* bytewise: upper case first */
    assert_string_equal(names[1], "a.YML");
    assert_string_equal(names[2], "b.yaml");
    cct_fleet_list_free(names, n);
    /* what is a folder of tables: a directory not named like a table */
    assert_true(cct_fleet_is_folder(dir));
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/", dir);
    assert_true(cct_fleet_is_folder(sub));
    snprintf(sub, sizeof sub, "%s/b.yaml", dir);
    assert_false(cct_fleet_is_folder(sub)); /* a file */
    snprintf(sub, sizeof sub, "%s/looks-like.yaml", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_false(cct_fleet_is_folder(sub)); /* meant as one table: refused as one */
    rmdir(sub);
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/absent", dir);
    assert_int_not_equal(cct_fleet_list(missing, &names, &n, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "absent"));
    for (int i = 0; i <= CCT_FLEET_MAX_FILES; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%03d.yaml", i);
        touch(dir, name);
    }
    assert_int_not_equal(cct_fleet_list(dir, &names, &n, &err), CCT_OK);
    assert_non_null(strstr(err.msg, "more than"));
    ct_rm_rf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nccl_precedence),
        cmocka_unit_test(widened_precedence),
        cmocka_unit_test(gpu_and_shared_precedence),
        cmocka_unit_test(ties_and_misses),
        cmocka_unit_test(conflicts),
        cmocka_unit_test(listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
