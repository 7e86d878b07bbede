/*
 * test_names.c - byte counts as people read them: cct_format_bytes (rounded human form) and
 * cct_format_bytes_exact (the human form only where it is exact, else plain bytes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cct_names.h"

static void test_format(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(cct_format_bytes(0, b, sizeof b), "0 B");
    assert_string_equal(cct_format_bytes(4096, b, sizeof b), "4 KiB");
    assert_string_equal(cct_format_bytes(3 << 19, b, sizeof b), "1.5 MiB");
    assert_string_equal(cct_format_bytes(65537, b, sizeof b), "64 KiB");
    assert_string_equal(cct_format_bytes(CCT_BYTES_INF, b, sizeof b), "inf");
}

static void test_format_exact(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(cct_format_bytes_exact(1000, b, sizeof b), "1000 B");
    assert_string_equal(cct_format_bytes_exact(65536, b, sizeof b), "64 KiB");
    assert_string_equal(cct_format_bytes_exact(65537, b, sizeof b), "65537 B");
    assert_string_equal(cct_format_bytes_exact(3 << 19, b, sizeof b), "1572864 B");
    assert_string_equal(cct_format_bytes_exact((uint64_t)1 << 30, b, sizeof b), "1 GiB");
    assert_string_equal(cct_format_bytes_exact(CCT_BYTES_INF, b, sizeof b), "inf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_format),
                                       cmocka_unit_test(test_format_exact)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
