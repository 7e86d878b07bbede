/*
 * test_grow.c - cct_grow: doubling from 16, no realloc when the array is big enough, and a
 * refusal (array untouched) where the byte count would overflow size_t.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "cct_grow.h"

static void test_doubles(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_true(cct_grow((void **)&a, &cap, 1, sizeof *a));
    assert_int_equal(cap, 16);
    a[15] = 7;
    int *before = a;
    assert_true(cct_grow((void **)&a, &cap, 16, sizeof *a)); /* already big enough */
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 16);
    assert_true(cct_grow((void **)&a, &cap, 17, sizeof *a));
    assert_int_equal(cap, 32);
    assert_int_equal(a[15], 7); /* contents kept */
    assert_true(cct_grow((void **)&a, &cap, 1000, sizeof *a));
    assert_int_equal(cap, 1024);
    free(a);
}

static void test_overflow_refused(void **state)
{
    (void)state;
    char *a = malloc(16);
    assert_non_null(a);
    size_t cap = 16;
    assert_false(cct_grow((void **)&a, &cap, SIZE_MAX, 1));
    assert_false(cct_grow((void **)&a, &cap, SIZE_MAX / 4, 8));
    assert_int_equal(cap, 16);
    a[15] = 1; /* still the original, usable allocation */
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_doubles),
                                       cmocka_unit_test(test_overflow_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
