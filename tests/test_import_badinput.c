/*
 * test_import_badinput.c - the importers' bad-input corpus (tests/bad_logs): every file
 * there must be refused with the message its sidecar FILE.expect names, and never crash.
 *
 * A sidecar holds "expect: TEXT" (a substring of the error, which starts with the file's
 * name and its LINE:COL) and optionally "args: --coll C --algo A --proto P --ranks N
 * --nodes N --format F" for what the command line would say.  The runner also checks what
 * every message must have -- "NAME:LINE:COL: " in front -- and that a refused input leaves
 * no points behind.  tests/bad_logs/README.md lists the classes.
 */
#include "import_test_util.h"

#include <dirent.h>

static int parse_args(char *line, cct_import_opts *o, int *format)
{
    char *save = NULL;
    for (char *k = strtok_r(line, " \t\n", &save); k; k = strtok_r(NULL, " \t\n", &save)) {
        char *v = strtok_r(NULL, " \t\n", &save);
        if (!v)
            return -1;
        if (strcmp(k, "--coll") == 0)
            o->coll = cct_coll_from_name(v);
        else if (strcmp(k, "--algo") == 0)
            o->algo = strcmp(v, "default") == 0 ? CCT_DEFAULT : cct_algo_from_name(v);
        else if (strcmp(k, "--proto") == 0)
            o->proto = strcmp(v, "default") == 0 ? CCT_DEFAULT : cct_proto_from_name(v);
        else if (strcmp(k, "--ranks") == 0)
            o->ranks = atoi(v);
        else if (strcmp(k, "--nodes") == 0)
            o->nodes = atoi(v);
        else if (strcmp(k, "--format") == 0)
            *format = cct_import_format_from_name(v);
        else
            return -1;
    }
    return 0;
}

/* Returns the number of failed checks for one corpus file (messages on stderr). */
static int check_file(const char *dir, const char *name)
{
    char path[1024], side[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(side, sizeof side, "%s.expect", path);
    FILE *f = fopen(side, "r");
    if (!f) {
        fprintf(stderr, "%s: no sidecar %s.expect\n", name, name);
        return 1;
    }
    char expect[512] = "", line[512];
    cct_import_opts o;
    cct_import_opts_init(&o);
    int format = CCT_IMPORT_AUTO, bad = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "expect: ", 8) == 0) {
            snprintf(expect, sizeof expect, "%s", line + 8);
            expect[strcspn(expect, "\n")] = '\0';
        } else if (strncmp(line, "args: ", 6) == 0 && parse_args(line + 6, &o, &format) != 0) {
            fprintf(stderr, "%s: bad args line in the sidecar\n", name);
            bad++;
        }
    }
    fclose(f);
    if (!expect[0]) {
        fprintf(stderr, "%s: the sidecar has no expect: line\n", name);
        return bad + 1;
    }
    char *data = NULL;
    size_t len = 0;
    cct_error err;
    if (cct_read_file(path, &data, &len, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return bad + 1;
    }
    cct_import_result r;
    cct_import_result_init(&r);
    cct_error_clear(&err);
    cct_status rc = cct_import_buffer(data, len, name, format, &o, &r, &err);
    unsigned l = 0, c = 0;
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s:", name);
    if (rc == CCT_OK) {
        fprintf(stderr, "%s: accepted (%zu points), expected '%s'\n", name, r.n_points, expect);
        bad++;
    } else if (!strstr(err.msg, expect)) {
        fprintf(stderr, "%s: got '%s'\n    expected '%s'\n", name, err.msg, expect);
        bad++;
    } else if (strncmp(err.msg, prefix, strlen(prefix)) != 0 ||
               sscanf(err.msg + strlen(prefix), "%u:%u: ", &l, &c) != 2 || l == 0 || c == 0) {
        fprintf(stderr, "%s: message without NAME:LINE:COL: '%s'\n", name, err.msg);
        bad++;
    }
    if (rc != CCT_OK && (r.n_points != 0 || r.runs != 0 || r.gpu[0] || r.name)) {
        fprintf(stderr, "%s: refused but the result was changed (%zu points)\n", name, r.n_points);
        bad++;
    }
    cct_import_result_destroy(&r);
    free(data);
    return bad;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void corpus(void **state)
{
    (void)state;
    char *dir = tu_path("bad_logs");
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0 ||
            (len > 7 && strcmp(e->d_name + len - 7, ".expect") == 0))
            continue;
        assert_true(n < 256);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        failures += check_file(dir, names[i]);
        free(names[i]);
    }
    free(dir);
    print_message("%zu malformed inputs checked\n", n);
    assert_true(n >= 12);
    assert_int_equal(failures, 0);
}

/* Every prefix of a good log and of a good JSON file is either accepted or refused with
 * a positioned message: truncation at any byte never crashes or misleads. */
static void every_truncation(void **state)
{
    (void)state;
    static const char *const files[] = {"data/nccl-tests/reducescatter_tuning_2.18.txt",
                                        "data/nccl-tests/allgather_per_iter_mpi_2.19.json",
                                        "data/tuner-csv/perf.csv"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t len;
        char *data = tu_read(files[k], &len);
        cct_import_result full;
        cct_error err;
        cct_import_result_init(&full);
        assert_int_equal(cct_import_buffer(data, len, "full", CCT_IMPORT_AUTO, NULL, &full, &err),
                         CCT_OK);
        size_t accepted = 0;
        for (size_t cut = 0; cut <= len; cut++) {
            char *copy = malloc(cut ? cut : 1); /* exact size: valgrind sees any over-read */
            memcpy(copy, data, cut);
            cct_import_result r;
            cct_import_result_init(&r);
            cct_status rc = cct_import_buffer(copy, cut, "cut", CCT_IMPORT_AUTO, NULL, &r, &err);
            if (rc == CCT_OK) {
                accepted++;
                /* what is accepted is a prefix of the points, never a changed value */
                assert_true(r.n_points > 0 && r.n_points <= full.n_points);
                for (size_t i = 0; i < r.n_points; i++) {
                    assert_memory_equal(&r.points[i].cfg, &full.points[i].cfg,
                                        sizeof r.points[i].cfg);
                    assert_int_equal(r.points[i].bytes, full.points[i].bytes);
                    tu_assert_double(r.points[i].stats.median_us, full.points[i].stats.median_us);
                    assert_int_equal(r.points[i].nccl_algo, full.points[i].nccl_algo);
                }
            } else {
                tu_assert_contains(err.msg, "cut:");
                assert_int_equal(r.n_points, 0);
            }
            cct_import_result_destroy(&r);
            free(copy);
        }
        assert_true(accepted >= 1); /* at least the whole file */
        cct_import_result_destroy(&full);
        free(data);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corpus),
        cmocka_unit_test(every_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
