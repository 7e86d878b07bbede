/*
 * test_sort_merge.c - cct_sort_merge: items come out sorted with each key once, the
 * values of equal keys summed into the survivor, an empty array left alone, and items
 * with no equal neighbour moved down past the folded ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cct_sort_merge.h"

typedef struct item {
    int key;
    int sum;
    int first; /* sum as given, to see that nothing was merged in */
} item;

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    return (a->key > b->key) - (a->key < b->key);
}

static void add(void *pd, const void *ps)
{
    ((item *)pd)->sum += ((const item *)ps)->sum;
}

static void test_folds_equal_keys(void **state)
{
    (void)state;
    item v[] = {{3, 1, 1}, {1, 10, 10}, {3, 2, 2}, {2, 100, 100}, {3, 4, 4}, {1, 20, 20}};
    size_t n = cct_sort_merge(v, sizeof v / sizeof *v, sizeof *v, cmp_item, add);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].key, 1);
    assert_int_equal(v[0].sum, 30);
    assert_int_equal(v[1].key, 2);
    assert_int_equal(v[1].sum, 100);
    assert_int_equal(v[2].key, 3);
    assert_int_equal(v[2].sum, 7);
}

static void test_distinct_and_empty(void **state)
{
    (void)state;
    item v[] = {{5, 5, 5}, {4, 4, 4}, {6, 6, 6}};
    assert_int_equal(cct_sort_merge(v, 3, sizeof *v, cmp_item, add), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(v[i].key, 4 + i);
        assert_int_equal(v[i].sum, v[i].first); /* nothing merged */
    }
    assert_int_equal(cct_sort_merge(NULL, 0, sizeof *v, cmp_item, add), 0);
    item same[] = {{9, 1, 1}, {9, 1, 1}, {9, 1, 1}, {9, 1, 1}};
    assert_int_equal(cct_sort_merge(same, 4, sizeof *same, cmp_item, add), 1);
    assert_int_equal(same[0].sum, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folds_equal_keys),
        cmocka_unit_test(test_distinct_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
