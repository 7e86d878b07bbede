/*
 * rec_test_util.h - small recordings in the profiler's file format (docs/plugin.md,
 * "Recording what NCCL ran") for tests of the commands that read them: search
 * --sizes-from, audit's job weighting, import.
 *
 * rt_write() writes one process's file: communicators given as (ranks, nodes) with rows
 * of (collective, bytes, algorithm, protocol, channels, calls, GPU ns); every call is
 * timed and the histogram puts them all in bucket 4, so the file passes the strict reader
 * (tests/test_recording_badinput.c holds the damaged ones).  Include after cmocka.h.
 */
#ifndef CCT_REC_TEST_UTIL_H
#define CCT_REC_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct rt_row {
    const char *coll;
    uint64_t bytes;
    const char *algo, *proto;
    int channels;
    uint64_t calls, total_ns;
} rt_row;

typedef struct rt_comm {
    int ranks, nodes;
    const rt_row *rows;
    size_t n_rows;
} rt_comm;

static __attribute__((unused)) bool rt_write(const char *path, const rt_comm *comms, size_t n_comms)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    size_t rows = 0;
    fprintf(f, "ccltune-recording 1\n# test recording\nprocess host=test pid=77 nccl=22809 "
               "started=1796524529 written=1796524530 clock=gpu hist_base_ns=1024 "
               "hist_buckets=20\n");
    for (size_t c = 0; c < n_comms; c++) {
        fprintf(f, "comm id=%016zx rank=0 ranks=%d nodes=%d abi=5 dropped=0 late=0 rows=%zu\n",
                c + 1, comms[c].ranks, comms[c].nodes, comms[c].n_rows);
        for (size_t r = 0; r < comms[c].n_rows; r++) {
            const rt_row *w = &comms[c].rows[r];
            fprintf(f,
                    "row coll=%s bytes=%llu algo=%s proto=%s channels=%d calls=%llu timed=%llu "
                    "total_ns=%llu hist=4:%llu\n",
                    w->coll, (unsigned long long)w->bytes, w->algo, w->proto, w->channels,
                    (unsigned long long)w->calls, (unsigned long long)w->calls,
                    (unsigned long long)w->total_ns, (unsigned long long)w->calls);
        }
        rows += comms[c].n_rows;
    }
    fprintf(f, "end comms=%zu rows=%zu\n", n_comms, rows);
    return fclose(f) == 0;
}

#endif
