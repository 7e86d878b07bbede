/*
 * fuzz_import_csv.c - libFuzzer target for the importer of the performance CSV of NCCL's example
 * tuner scripts.
 *
 * Any bytes, parsed as that format through cct_import_buffer() exactly as
 * `ccltune import --format` does; fuzz_import_check.h holds the assertions (a refusal
 * names FILE:LINE:COL and leaves nothing behind, accepted points are in range, a second copy
 * of an input is all duplicates).  Seeds: tests/fuzz/corpus/import_csv/.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzz=true, CC=clang); run e.g.
 *   build-fuzz/tests/fuzz/fuzz_import_csv -dict=tests/fuzz/dict/import.dict \
 *     tests/fuzz/corpus/import_csv
 * docs/fuzzing.md records the long runs and their figures.
 */
#include "fuzz_import_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import(data, size, CCT_IMPORT_CSV);
    return 0;
}
