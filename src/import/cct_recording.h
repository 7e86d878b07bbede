/*
 * cct_recording.h - read the recordings the profiler half of libnccl-tuner-ccltune.so
 * writes (CCLTUNE_RECORD=DIR; one file per process, docs/plugin.md "Recording what NCCL
 * ran"): per communicator, each (collective, bytes, algorithm, protocol, channels) NCCL
 * executed, its call count, GPU time and a log2 histogram of times.
 *
 * The reader is strict: the first line names the format and its version, every line has
 * its keys in the documented order, counts must agree (timed <= calls, the histogram sums
 * to timed, each comm's rows and the end line's totals), and a file without its end line
 * is truncated.  Errors are "FILE:OFFSET: message" with the byte offset of the offending
 * field, so a damaged or foreign file is pointed at, never half-read.
 *
 * Ownership: cct_recording_load_* initialise *out; cct_recording_destroy frees it.
 */
#ifndef CCT_RECORDING_H
#define CCT_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"

#define CCT_RECORDING_VERSION 1
#define CCT_RECORDING_HIST 20 /* buckets; bucket i: [2^(i+10), 2^(i+11)) ns, ends open */
#define CCT_RECORDING_OTHER 5 /* coll of collectives a tuner is never asked about */

typedef struct cct_rec_row {
    int coll;  /* cct_coll, or CCT_RECORDING_OTHER */
    int algo;  /* cct_algo, -1 unknown */
    int proto; /* cct_proto, -1 unknown */
    int channels;
    uint64_t bytes; /* as the tuner is asked: count x type size (x ranks for allgather and
                       reducescatter) */
    uint64_t calls, timed, total_ns;
    uint64_t hist[CCT_RECORDING_HIST];
} cct_rec_row;

typedef struct cct_rec_comm {
    uint64_t id;
    int rank, ranks, nodes, abi;
    uint64_t dropped, late;
    size_t n_rows;
    cct_rec_row *rows;
} cct_rec_comm;

typedef struct cct_recording {
    char *name; /* the path given */
    char host[256];
    long pid;
    int nccl; /* NCCL_VERSION_CODE, 0 unknown */
    long long started, written;
    size_t n_comms;
    cct_rec_comm *comms;
} cct_recording;

cct_status cct_recording_load_file(const char *path, cct_recording *out, cct_error *err);
cct_status cct_recording_load_buffer(const char *data, size_t len, const char *name,
                                     cct_recording *out, cct_error *err);
void cct_recording_destroy(cct_recording *rec);

/* The lower edge in ns of histogram bucket b (0 for the first). */
uint64_t cct_recording_bucket_ns(int b);

/* How many rows recs[0..n) hold over all their communicators. */
size_t cct_recording_row_count(const cct_recording *recs, size_t n);

#endif
