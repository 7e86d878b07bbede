/*
 * test_parse.c - the one parser (src/core/cct_parse.c) against tables of texts it must
 * accept, with the value, and texts it must refuse: integers, reals, byte sizes, flag
 * values with their ranges, enumerations, comma lists and getopt's flag errors.  A refused
 * text must leave the output untouched and, for the flag forms, name the flag and the text.
 */
#include <getopt.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cct_names.h"
#include "cct_parse.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_u64(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t value;
    } ok[] = {{"0", 0}, {"7", 7}, {"0042", 42}, {"18446744073709551615", UINT64_MAX}};
    static const char *const bad[] = {"",
                                      "-1",
                                      "+1",
                                      " 1",
                                      "1 ",
                                      "1x",
                                      "0x10",
                                      "1e3",
                                      "1.0",
                                      "18446744073709551616",
                                      "99999999999999999999"};
    for (size_t i = 0; i < N(ok); i++) {
        uint64_t v = 1;
        assert_true(cct_parse_u64(ok[i].text, &v));
        assert_true(v == ok[i].value);
    }
    for (size_t i = 0; i < N(bad); i++) {
        uint64_t v = 12345;
        assert_false(cct_parse_u64(bad[i], &v));
        assert_true(v == 12345);
    }
    assert_false(cct_parse_u64(NULL, &(uint64_t){0}));
}

static void test_long(void **state)
{
    (void)state;
    long v = 0;
    assert_true(cct_parse_long("-5", -10, 10, &v) && v == -5);
    assert_true(cct_parse_long("9223372036854775807", 0, LONG_MAX, &v) && v == LONG_MAX);
    assert_true(cct_parse_long("-9223372036854775808", LONG_MIN, 0, &v) && v == LONG_MIN);
    static const char *const bad[] = {
        "", "-", "+3", "--3", " 3", "3 ", "11", "-11", "3.0", "0x3", "9223372036854775808"};
    for (size_t i = 0; i < N(bad); i++) {
        v = 77;
        assert_false(cct_parse_long(bad[i], -10, 10, &v));
        assert_int_equal(v, 77);
    }
}

static void test_double(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double value;
    } ok[] = {{"0", 0}, {"1.5", 1.5}, {".5", 0.5}, {"2.", 2}, {"-3e2", -300}, {"1E-3", 1e-3}};
    static const char *const bad[] = {"",      ".",   "e3",  "1e",  "1e+",   " 1",    "1 ",
                                      "0x1p3", "inf", "nan", "1,5", "1e999", "1.2.3", "--1"};
    for (size_t i = 0; i < N(ok); i++) {
        double v = -1;
        assert_true(cct_parse_double(ok[i].text, &v));
        assert_true(v == ok[i].value);
    }
    for (size_t i = 0; i < N(bad); i++) {
        double v = 42;
        assert_false(cct_parse_double(bad[i], &v));
        assert_true(v == 42);
    }
}

/* Every size spelling the README and docs show (4096, 64K, 8MiB, 256M, 16G, 1KB), any case. */
static void test_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t value;
    } ok[] = {{"0", 0},
              {"4096", 4096},
              {"4096B", 4096},
              {"1K", 1024},
              {"1k", 1024},
              {"1KB", 1024},
              {"1KiB", 1024},
              {"1kib", 1024},
              {"3M", 3u << 20},
              {"8MiB", 8u << 20},
              {"256M", 256u << 20},
              {"16G", 16ull << 30},
              {"2GiB", 2ull << 30},
              {"1T", 1ull << 40},
              {"1TB", 1ull << 40},
              {"inf", CCT_BYTES_INF},
              {"INF", CCT_BYTES_INF},
              {"16777215T", 16777215ull << 40}};
    static const char *const bad[] = {"",
                                      "K",
                                      "-1",
                                      "+1",
                                      " 1K",
                                      "1 K",
                                      "1K ",
                                      "1.5M",
                                      "0x10",
                                      "1Q",
                                      "1KX",
                                      "1KiBB",
                                      "1Ki",
                                      "1BB",
                                      "1P",
                                      "16777216T",
                                      "99999999999999999999",
                                      "1e3",
                                      "1,024"};
    for (size_t i = 0; i < N(ok); i++) {
        uint64_t v = 1;
        assert_int_equal(cct_parse_bytes(ok[i].text, &v, NULL), CCT_OK);
        assert_true(v == ok[i].value);
    }
    for (size_t i = 0; i < N(bad); i++) {
        uint64_t v = 5;
        cct_error err;
        assert_int_equal(cct_parse_bytes(bad[i], &v, &err), CCT_EINVAL);
        assert_true(v == 5);
        assert_true(err.msg[0] != '\0');
    }
}

static void test_flag_numbers(void **state)
{
    (void)state;
    cct_error err;
    long l = 0;
    assert_int_equal(cct_parse_flag_long("--cycles", "6", 2, 1000, &l, &err), CCT_OK);
    assert_int_equal(l, 6);
    assert_int_equal(cct_parse_flag_long("--cycles", "0", 2, 1000, &l, &err), CCT_EINVAL);
    assert_string_equal(err.msg, "--cycles: '0' is not an integer in 2..1000");
    assert_int_equal(cct_parse_flag_long("--cycles", "+6", 2, 1000, &l, &err), CCT_EINVAL);
    assert_int_equal(cct_parse_flag_long("--cycles", NULL, 2, 1000, &l, &err), CCT_EINVAL);
    assert_int_equal(l, 6);

    double d = 0;
    assert_int_equal(cct_parse_flag_double("--cv", "0.05", 0, 10, &d, &err), CCT_OK);
    assert_true(d == 0.05);
    static const char *const bad_d[] = {"+0.1", "-0.1", "11", "0x1p-3", "nan", "1e", ""};
    for (size_t i = 0; i < N(bad_d); i++) {
        assert_int_equal(cct_parse_flag_double("--cv", bad_d[i], 0, 10, &d, &err), CCT_EINVAL);
        assert_non_null(strstr(err.msg, "--cv: '"));
        assert_true(d == 0.05);
    }
    assert_int_equal(cct_parse_flag_double("--x", "-0.5", -1, 1, &d, &err), CCT_OK);
    assert_true(d == -0.5);

    assert_int_equal(cct_parse_flag_fraction("--tie", "0", &d, &err), CCT_OK);
    assert_int_equal(cct_parse_flag_fraction("--tie", "0.999", &d, &err), CCT_OK);
    static const char *const bad_f[] = {"1", "1.0", "-0", "+0.1", "2", "abc"};
    for (size_t i = 0; i < N(bad_f); i++) {
        assert_int_equal(cct_parse_flag_fraction("--tie", bad_f[i], &d, &err), CCT_EINVAL);
        assert_non_null(strstr(err.msg, "is not a fraction in [0, 1)"));
    }
}

static void test_flag_size(void **state)
{
    (void)state;
    cct_error err;
    uint64_t v = 0;
    assert_int_equal(cct_parse_flag_size("--max-bytes", "64M", 1, 16ull << 30, &v, &err), CCT_OK);
    assert_true(v == 64u << 20);
    assert_int_equal(cct_parse_flag_size("--max-bytes", "inf", 1, 16ull << 30, &v, &err),
                     CCT_EINVAL);
    assert_string_equal(err.msg, "--max-bytes: 'inf' is not a size (e.g. 4096, 64K, 8MiB)");
    assert_int_equal(cct_parse_flag_size("--max-bytes", "-1", 1, 16ull << 30, &v, &err),
                     CCT_EINVAL);
    assert_int_equal(cct_parse_flag_size("--max-bytes", "0", 1, 16ull << 30, &v, &err), CCT_EINVAL);
    assert_string_equal(err.msg, "--max-bytes: '0' is outside 1 B..16 GiB");
    assert_int_equal(cct_parse_flag_size("--max-bytes", "32G", 1, 16ull << 30, &v, &err),
                     CCT_EINVAL);
    assert_true(v == 64u << 20);
}

static void test_enum(void **state)
{
    (void)state;
    static const cct_enum_name three[] = {{"auto", -1}, {"yes", 1}, {"no", 0}, {NULL, 0}};
    static const cct_enum_name two[] = {{"on", 0}, {"off", 1}, {NULL, 0}};
    cct_error err;
    int v = 9;
    assert_int_equal(cct_parse_enum("--ll128", "auto", three, &v, &err), CCT_OK);
    assert_int_equal(v, -1);
    assert_int_equal(cct_parse_enum("--ll128", "NO", three, &v, &err), CCT_OK);
    assert_int_equal(v, 0);
    static const char *const bad[] = {"", "maybe", "yes ", "y", "auto,yes"};
    for (size_t i = 0; i < N(bad); i++) {
        v = 9;
        assert_int_equal(cct_parse_enum("--ll128", bad[i], three, &v, &err), CCT_EINVAL);
        assert_int_equal(v, 9);
    }
    cct_parse_enum("--ll128", "maybe", three, &v, &err);
    assert_string_equal(err.msg, "--ll128: 'maybe' is not auto, yes or no");
    cct_parse_enum("--rules", "maybe", two, &v, &err);
    assert_string_equal(err.msg, "--rules: 'maybe' is not on or off");
}

typedef struct collected {
    char items[8][16];
    size_t n;
} collected;

static cct_status collect(void *ctx, const char *flag, const char *item, size_t index,
                          cct_error *err)
{
    collected *c = ctx;
    if (strcmp(item, "bad") == 0)
        return cct_error_set(err, CCT_EINVAL, "%s: '%s' refused", flag, item);
    assert_int_equal(index, c->n);
    strncpy(c->items[c->n], item, sizeof c->items[0] - 1);
    c->n++;
    return CCT_OK;
}

static void test_list(void **state)
{
    (void)state;
    cct_error err;
    collected c = {0};
    assert_int_equal(cct_parse_list("--colls", "a,bb,ccc", 8, collect, &c, &err), CCT_OK);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.items[0], "a");
    assert_string_equal(c.items[2], "ccc");
    static const struct {
        const char *text, *msg;
    } bad[] = {{"", "--colls: empty value"},
               {",a", "--colls: ',a' has an empty item"},
               {"a,", "--colls: 'a,' has an empty item"},
               {"a,,b", "--colls: 'a,,b' has an empty item"},
               {"a,b,c,d", "--colls: at most 3 values"},
               {"a,bad", "--colls: 'bad' refused"}};
    for (size_t i = 0; i < N(bad); i++) {
        collected d = {0};
        assert_int_equal(cct_parse_list("--colls", bad[i].text, 3, collect, &d, &err), CCT_EINVAL);
        assert_string_equal(err.msg, bad[i].msg);
    }
    char longitem[400];
    memset(longitem, 'x', sizeof longitem - 1);
    longitem[sizeof longitem - 1] = '\0';
    assert_int_equal(cct_parse_list("--colls", longitem, 3, collect, &c, &err), CCT_EINVAL);
}

/* getopt_long's ':' and '?' returns become one wording on every command. */
static const char *flag_error(int argc, char **argv)
{
    static const struct option opts[] = {{"store", required_argument, NULL, 's'},
                                         {"all", no_argument, NULL, 'a'},
                                         {NULL, 0, NULL, 0}};
    static cct_error err;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:a", opts, NULL)) != -1)
        if (c == ':' || c == '?') {
            cct_parse_flag_error(c, argv, &err);
            return err.msg;
        }
    return "";
}

/* NCCL versions and the --nccl-versions grammar (cct_parse_versions.c). */
static void test_nccl_versions(void **state)
{
    (void)state;
    assert_int_equal(cct_parse_nccl_version("2.28.9"), 22809);
    assert_int_equal(cct_parse_nccl_version("2.30"), 23000);
    static const char *const bad_version[] = {
        "", "2", "2.", "2.28.", "2.28.9.1", "x.28", "0.28", "2.100", "2.28.9-1", " 2.28", "+2.28"};
    for (size_t i = 0; i < sizeof bad_version / sizeof bad_version[0]; i++)
        assert_int_equal(cct_parse_nccl_version(bad_version[i]), -1);

    cct_nccl_versions v;
    cct_error err;
    assert_int_equal(cct_parse_nccl_versions("--nccl-versions", "2.28", &v, &err), CCT_OK);
    assert_int_equal(v.n, 1);
    assert_true(cct_nccl_versions_contain(&v, 22800));
    assert_true(cct_nccl_versions_contain(&v, 22809));
    assert_true(cct_nccl_versions_contain(&v, 22899));
    assert_false(cct_nccl_versions_contain(&v, 22700 + 99));
    assert_false(cct_nccl_versions_contain(&v, 22900));

    assert_int_equal(cct_parse_nccl_versions("--nccl-versions", "2.30.7,2.26..2.27", &v, &err),
                     CCT_OK);
    assert_int_equal(v.n, 2);
    assert_true(cct_nccl_versions_contain(&v, 23007));
    assert_false(cct_nccl_versions_contain(&v, 23006)); /* a patch is exactly that patch */
    assert_true(cct_nccl_versions_contain(&v, 22600));
    assert_true(cct_nccl_versions_contain(&v, 22799)); /* a range's MAJOR.MINOR end: all of it */
    assert_false(cct_nccl_versions_contain(&v, 22800));
    assert_int_equal(cct_parse_nccl_versions("x", "2.28.3..2.28.7", &v, &err), CCT_OK);
    assert_true(cct_nccl_versions_contain(&v, 22805));
    assert_false(cct_nccl_versions_contain(&v, 22808));
    assert_false(cct_nccl_versions_contain(NULL, 22805));

    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "empty value"},
        {"2.x", "'2.x' is not an NCCL version"},
        {"2.28,", "has an empty item"},
        {"2.28..", "'2.28..' is not a range"},
        {"..2.30", "'..2.30' is not a range"},
        {"2.30..2.28", "ends below where it starts"},
        {"2.28..2.29..2.30", "is not a range"},
        {">=2.28", "is not an NCCL version"},
        {"2.*", "is not an NCCL version"},
        {"2.28.9-1", "is not an NCCL version"},
        {"1.1,1.2,1.3,1.4,1.5,1.6,1.7,1.8,1.9", "at most 8 values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cct_nccl_versions keep = v;
        assert_int_equal(cct_parse_nccl_versions("--nccl-versions", bad[i].text, &v, &err),
                         CCT_EINVAL);
        assert_non_null(strstr(err.msg, "--nccl-versions"));
        if (!strstr(err.msg, bad[i].says))
            fail_msg("'%s': '%s' does not say '%s'", bad[i].text, err.msg, bad[i].says);
        assert_memory_equal(&keep, &v, sizeof v); /* untouched on failure */
    }
}

static void test_flag_error(void **state)
{
    (void)state;
    char *unknown[] = {"cmd", "--bogus", NULL};
    assert_string_equal(flag_error(2, unknown), "unknown flag '--bogus'");
    char *short_unknown[] = {"cmd", "-x", NULL};
    assert_string_equal(flag_error(2, short_unknown), "unknown flag '-x'");
    char *no_value[] = {"cmd", "--store", NULL};
    assert_string_equal(flag_error(2, no_value), "--store needs a value");
    char *short_no_value[] = {"cmd", "-o", NULL};
    assert_string_equal(flag_error(2, short_no_value), "-o needs a value");
    char *value_given[] = {"cmd", "--all=3", NULL};
    assert_string_equal(flag_error(2, value_given), "'--all=3': --all takes no value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),          cmocka_unit_test(test_long),
        cmocka_unit_test(test_double),       cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_flag_numbers), cmocka_unit_test(test_flag_size),
        cmocka_unit_test(test_enum),         cmocka_unit_test(test_list),
        cmocka_unit_test(test_flag_error),   cmocka_unit_test(test_nccl_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
