/*
 * profiler_internal.h - what the profiler half of libnccl-tuner-ccltune.so shares between
 * its files (none of it is exported; plugin.map exports only the ncclProfiler_vN structs).
 *
 *   profiler_names.c  NCCL's spellings of functions, algorithms, protocols and data types
 *                     to our numbers, without allocation (on every collective's path)
 *   profiler_agg.c    one recorder per communicator: a fixed open-addressed table of
 *                     (collective, bytes, algorithm, protocol, channels) -> calls, GPU time,
 *                     log2 histogram; a ring of in-flight collectives that the kernel-channel
 *                     events time.  Lock-free, allocation-free per event.
 *   profiler_process.c the process's recorders, CCLTUNE_RECORD, and the recording file
 *                     written atomically when the last communicator finalizes (and at unload)
 *   profiler_abi.c    the exported ncclProfiler_v4/v5/v6 structs
 * The file format is docs/plugin.md "Recording what NCCL ran"; src/import/cct_recording.c
 * reads it.
 */
#ifndef CCT_PROFILER_INTERNAL_H
#define CCT_PROFILER_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nccl_profiler_abi.h"

/* ---- the recording format (written here, read by src/import/cct_recording.c) ---- */
#define CCT_REC_MAGIC "ccltune-recording"
#define CCT_REC_VERSION 1
#define CCT_REC_HIST_BUCKETS 20
#define CCT_REC_HIST_BASE_SHIFT 10 /* bucket i: [2^(i+10), 2^(i+11)) ns; ends open */

/* Collectives beyond the five a tuner is asked about are recorded as "other". */
#define CCT_PROF_COLL_OTHER 5
#define CCT_PROF_ALGO_UNKNOWN 7
#define CCT_PROF_PROTO_UNKNOWN 3

/* ---- profiler_names.c ---- */
int cct_prof_func(const char *s);           /* cct_coll, or CCT_PROF_COLL_OTHER */
int cct_prof_algo(const char *s);           /* cct_algo, or CCT_PROF_ALGO_UNKNOWN */
int cct_prof_proto(const char *s);          /* cct_proto, or CCT_PROF_PROTO_UNKNOWN */
unsigned cct_prof_type_size(const char *s); /* bytes per element; 1 when unknown */
/* Names for the file: "allreduce", "ring", "ll", ...; "other"/"unknown" beyond. */
const char *cct_prof_coll_name(int coll);
const char *cct_prof_algo_name(int algo);
const char *cct_prof_proto_name(int proto);

/* ---- profiler_agg.c ---- */

/* Entries per communicator (a power of two); when full, new keys are counted as dropped. */
#define CCT_REC_SLOTS 1024
/* Collectives in flight per communicator whose kernel-channel events are awaited. */
#define CCT_REC_INFLIGHT 256

/* Key: bytes (48 bits) | coll+1 (4) | algo (3) | proto (2) | channels (7); never 0. */
typedef struct cct_rec_entry {
    atomic_uint_fast64_t key;
    atomic_uint_fast64_t calls;
    atomic_uint_fast64_t timed;    /* calls with a GPU time */
    atomic_uint_fast64_t total_ns; /* sum of those times */
    _Atomic uint32_t hist[CCT_REC_HIST_BUCKETS];
} cct_rec_entry;

/* One collective between its start event and its last kernel-channel stop. */
typedef struct cct_rec_flight {
    unsigned char kind;           /* first byte of every handle: which event this is */
    unsigned char kind_ch;        /* the kernel-channel handles point here */
    _Atomic uint32_t entry;       /* index of its entry + 1; 0 while free or dropped */
    atomic_int expected;          /* channels NCCL announced */
    atomic_int stopped;           /* kernel channels stopped so far */
    atomic_bool flushed;          /* its time went into the entry (or never will) */
    atomic_uint_fast64_t t_start; /* earliest channel start (GPU ns); UINT64_MAX none */
    atomic_uint_fast64_t t_stop;  /* latest channel stop (GPU ns); 0 none */
    struct cct_recorder *rec;
} cct_rec_flight;

#define CCT_REC_KIND_COLL 0xC1
#define CCT_REC_KIND_CH 0xC2

typedef struct cct_recorder {
    uint64_t comm_id;
    int rank, nranks, nnodes;
    int abi;
    atomic_uint_fast64_t dropped; /* calls not recorded: the entry table was full */
    atomic_uint_fast64_t next;    /* flights handed out */
    atomic_uint_fast64_t late;    /* kernel-channel events whose flight was reused */
    cct_rec_entry entries[CCT_REC_SLOTS];
    cct_rec_flight flights[CCT_REC_INFLIGHT];
    struct cct_recorder *next_rec; /* process list (profiler_process.c) */
    bool closed;                   /* finalized by NCCL */
    ncclDebugLogger_t log;         /* NCCL's logger, from init */
} cct_recorder;

/* Set up a zeroed recorder (calloc'd by the caller). */
void cct_recorder_setup(cct_recorder *r, uint64_t comm_id, int rank, int nranks, int nnodes,
                        int abi);
/* A collective starts: count it, return the handle its kernel channels will name as their
 * parent (NULL only for bad arguments). */
void *cct_recorder_coll(cct_recorder *r, const char *func, size_t count, const char *datatype,
                        int n_channels, const char *algo, const char *proto);
/* A kernel channel of parent starts at GPU time t; returns its handle (NULL when parent is
 * not one of ours). */
void *cct_recorder_channel_start(void *parent, uint64_t t);
/* A kernel channel's stop stamp (recordEventState ncclProfilerKernelChStop). */
void cct_recorder_channel_stamp(void *handle, uint64_t t);
/* stopEvent on any handle we returned. */
void cct_recorder_stop(void *handle);
/* Flush collectives still waiting for channels (finalize, unload): what they have is
 * their time when at least one channel stopped. */
void cct_recorder_flush_all(cct_recorder *r);
/* Bucket of a time in ns. */
int cct_rec_bucket(uint64_t ns);
/* Unpack a key. */
void cct_rec_key_unpack(uint64_t key, uint64_t *bytes, int *coll, int *algo, int *proto,
                        int *channels);

/* ---- profiler_process.c ---- */

/* CCLTUNE_RECORD checked once per load: the folder, or NULL (recording off; WARNed once
 * when set but unusable). */
const char *cct_prof_record_dir(ncclDebugLogger_t log);
/* Create a communicator's recorder (NULL: off or out of memory) and list it. */
cct_recorder *cct_prof_open(uint64_t comm_id, int rank, int nranks, int nnodes, int abi,
                            ncclDebugLogger_t log);
/* Finalize a communicator; writes the process's file when it was the last one open. */
void cct_prof_close(cct_recorder *r);
/* Whether kernel-channel events (GPU times) are wanted: CCLTUNE_RECORD_TIME=0 records the
 * configurations and counts only, sparing NCCL the proxy work of collecting GPU stamps. */
bool cct_prof_record_time(void);
/* A profiler init happened in this load (whatever it answered). */
void cct_prof_note_init(void);
/* At a tuner init: when CCLTUNE_RECORD is set but NCCL never initialised this library as
 * its profiler (NCCL_PROFILER_PLUGIN unset or naming another library, or an NCCL without
 * profiler v4+), one WARN per load says that nothing is recorded.  NCCL initialises the
 * profiler of a communicator before its tuner. */
void cct_prof_tuner_check(ncclDebugLogger_t log);
/* Write every recorder of the process to f in the recording format. */
void cct_prof_write_all(FILE *f);

#endif
