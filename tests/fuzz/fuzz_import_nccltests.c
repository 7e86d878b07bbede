/*
 * fuzz_import_nccltests.c - libFuzzer target for the importer of nccl-tests text output
 * (all_reduce_perf and friends, any version).
 *
 * Any bytes, parsed as that format through cct_import_buffer() exactly as
 * `ccltune import --format` does; fuzz_import_check.h holds the assertions (a refusal
 * names FILE:LINE:COL and leaves nothing behind, accepted points are in range, a second copy
 * of an input is all duplicates).  Seeds: tests/fuzz/corpus/import_nccltests/.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzz=true, CC=clang); run e.g.
 *   build-fuzz/tests/fuzz/fuzz_import_nccltests -dict=tests/fuzz/dict/import.dict \
 *     tests/fuzz/corpus/import_nccltests
 * docs/fuzzing.md records the long runs and their figures.
 */
#include "fuzz_import_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_import(data, size, CCT_IMPORT_NCCLTESTS);
    return 0;
}
