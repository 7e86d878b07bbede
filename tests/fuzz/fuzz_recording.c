/*
 * fuzz_recording.c - libFuzzer target for the reader of profiler recordings
 * (cct_recording_load_buffer, src/import/cct_recording.c), which `ccltune audit` runs on
 * files copied from jobs.
 *
 * Any input: the reader must return (no crash, leak, over-read or hang).  A refusal is
 * "fuzz:OFFSET: ..." with OFFSET within the input; an accepted recording is consistent:
 * every row has calls > 0, timed <= calls, a histogram that sums to timed, a known
 * collective, and channel counts in 0..127.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzz=true, CC=clang); run e.g.
 *   build-fuzz/tests/fuzz/fuzz_recording -dict=tests/fuzz/dict/recording.dict \
 *     tests/fuzz/corpus/recording
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_accepted(const cct_recording *rec)
{
    for (size_t i = 0; i < rec->n_comms; i++)
        for (size_t r = 0; r < rec->comms[i].n_rows; r++) {
            const cct_rec_row *row = &rec->comms[i].rows[r];
            uint64_t sum = 0;
            for (int b = 0; b < CCT_RECORDING_HIST; b++)
                sum += row->hist[b];
            if (row->calls == 0 || row->timed > row->calls || sum != row->timed || row->coll < 0 ||
                row->coll > CCT_RECORDING_OTHER || row->channels < 0 || row->channels > 127)
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cct_recording rec;
    cct_error err;
    if (cct_recording_load_buffer((const char *)data, size, "fuzz", &rec, &err) == CCT_OK) {
        check_accepted(&rec);
        cct_recording_destroy(&rec);
        return 0;
    }
    size_t off;
    if (sscanf(err.msg, "fuzz:%zu:", &off) != 1 || off > size)
        abort();
    return 0;
}
