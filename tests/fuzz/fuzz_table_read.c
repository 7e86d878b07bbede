/*
 * fuzz_table_read.c - libFuzzer target for the table loader and the writer's round trip.
 *
 * Any input: the loader must return (no crash, leak, over-read or hang) and leave the table
 * empty on failure.  An input it accepts must write, and the written text must load and
 * write again to the same bytes -- the determinism promise of docs/table-format.md, checked
 * on inputs nobody thought of.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzz=true, CC=clang); run e.g.
 *   build-fuzz/tests/fuzz/fuzz_table_read -dict=tests/fuzz/dict/table.dict \
 *     tests/fuzz/corpus/table_read
 * docs/fuzzing.md records the long runs and their figures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cct_table t;
    cct_error err;
    if (cct_table_load_buffer((const char *)data, size, "fuzz", &t, &err) != CCT_OK) {
        if (t.n_sections != 0 || t.provenance.tool != NULL || err.msg[0] == '\0')
            abort();
        return 0;
    }
    char *w1 = NULL, *w2 = NULL;
    size_t l1 = 0, l2 = 0;
    FILE *m = open_memstream(&w1, &l1);
    if (!m || cct_table_write(&t, m, &err) != CCT_OK)
        abort(); /* a loaded table must always be writable */
    fclose(m);
    cct_table_destroy(&t);
    if (cct_table_load_buffer(w1, l1, "w1", &t, &err) != CCT_OK)
        abort();
    m = open_memstream(&w2, &l2);
    if (!m || cct_table_write(&t, m, &err) != CCT_OK)
        abort();
    fclose(m);
    if (l1 != l2 || memcmp(w1, w2, l1) != 0)
        abort();
    cct_table_destroy(&t);
    free(w1);
    free(w2);
    return 0;
}
