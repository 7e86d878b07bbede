/*
 * data_test_util.h - finding and reading the committed test data (tests/data/...) from a
 * test program: paths are relative to $CCT_TEST_SRCDIR (meson sets it to the tests folder),
 * "tests" when it is unset.  Header-only: each test program includes it once.  A file that
 * cannot be read fails the running cmocka test with the reader's message.
 */
#ifndef DATA_TEST_UTIL_H
#define DATA_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "cct_import.h"

/* The path of tests/<rel> into buf. */
static inline void test_data_path(char *buf, size_t len, const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    snprintf(buf, len, "%s/%s", src ? src : "tests", rel);
}

/* The whole text of tests/<rel>, NUL-terminated; the caller frees it. */
static inline char *test_data_read(const char *rel)
{
    char path[4096];
    test_data_path(path, sizeof path, rel);
    char *data = NULL;
    size_t len = 0;
    cct_error err;
    if (cct_read_file(path, &data, &len, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    return data;
}

#endif
