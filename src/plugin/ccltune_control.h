/*
 * ccltune_control.h - the measurement interface of libnccl-tuner-ccltune.so.
 *
 * The search runner lives in the same process as NCCL.  It loads the plugin by path
 * (dlopen of the path given in NCCL_TUNER_PLUGIN returns the handle NCCL itself uses),
 * looks these symbols up with dlsym, and then switches the configuration under test per
 * call -- no communicator re-initialisation per point.  While forcing is active the plugin
 * ignores its table and selects exactly the forced algorithm/protocol/channels, unless NCCL
 * marked that entry NCCL_ALGO_PROTO_IGNORE; then it leaves the call to NCCL and reports
 * `forced_applied = 0`, so the runner records the configuration as unsupported instead of
 * timing the wrong thing.
 *
 * Every call also records what NCCL would have chosen by itself (the cheapest entry of
 * the cost table it passed in), so the runner can label its baseline measurements, and the
 * keys NCCL passed (nBytes, numPipeOps, regBuff), which are what a table's sections match
 * at run time: NCCL aggregates a group's same-kind collectives into one call whose nBytes
 * is their total, and regBuff is 1 only when both buffers are registered.
 *
 * Forcing never touches an ignored entry and never forces LL128 where the running NCCL's
 * rule for this GPU would not enable it (src/cct_ll128.c); both report forced_applied = 0.
 * External tools get the same without this API: CCLTUNE_FORCE=algo/proto[/channels] in the
 * environment forces from the first communicator on (a force set through this API before
 * that wins), and CCLTUNE_MEASURE=1 only records.  Measurement mode needs no table.
 *
 * Thread safety: these functions and getCollInfo synchronise on one mutex, taken only
 * while measurement mode is on (CCLTUNE_MEASURE=1, CCLTUNE_FORCE, or after the first
 * ccltune_control_force); ordinary jobs never take it.  docs/plugin.md has the details.
 */
#ifndef CCLTUNE_CONTROL_H
#define CCLTUNE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define CCLTUNE_CONTROL_ABI 2 /* 2: pipe_ops and reg_buff in the observation */
/* ccltune_control_force(CCLTUNE_CONTROL_BYPASS, 0, 0): neither table nor forcing; every call
 * is left to NCCL (how `ccltune bench` times NCCL's defaults with the plugin loaded). */
#define CCLTUNE_CONTROL_BYPASS (-2)

typedef struct ccltune_observation {
    uint64_t calls;    /* getCollInfo calls seen in measurement mode since the last reset */
    int coll;          /* ncclFunc_t of the last call */
    uint64_t bytes;    /* nBytes of the last call */
    int default_algo;  /* NCCL's own cheapest entry before the plugin touched the table; -1 */
    int default_proto; /* when the tuner ABI (v2) passes no cost table */
    int chosen_algo;   /* what the plugin selected; -1 when it left the call to NCCL */
    int chosen_proto;
    int channels;        /* channel count the plugin wrote; 0 when untouched */
    int forced_applied;  /* 1 when a forced configuration was applied to the last call */
    int ignored_mask[7]; /* per algorithm: bit p set when NCCL passed protocol p as ignored */
    int pipe_ops;        /* numPipeOps of the last call: the key a table section matches */
    int reg_buff;        /* regBuff of the last call; -1 when the tuner ABI (v2, v3) lacks it */
} ccltune_observation;

/* The last getChunkSize call NCCL (tuner v6, NCCL >= 2.30) made in measurement mode.  NCCL
 * asks once per channel range of a collective: bytes is that range's share. */
typedef struct ccltune_chunk_observation {
    uint64_t calls; /* getChunkSize calls since the last reset */
    int coll, algo, proto;
    uint64_t bytes;      /* nBytes NCCL passed */
    uint64_t nccl_chunk; /* the chunk NCCL computed and passed in */
    uint64_t answered;   /* what the plugin answered (NCCL then caps and rounds it) */
} ccltune_chunk_observation;

#define CCLTUNE_CONTROL_CHUNK_MAX (1ull << 30) /* NCCL's chunk fields hold up to 1 GiB */

/* Returns CCLTUNE_CONTROL_ABI; lets the runner check it loaded a compatible plugin. */
int ccltune_control_abi(void);

/* Force algo/proto (cct_algo/cct_proto values) and channels (0: NCCL's count, 64: all the
 * communicator has; NCCL clamps) for every following call.  algo -1 stops forcing and
 * returns the plugin to its table (to NCCL's own choice when there is no table);
 * CCLTUNE_CONTROL_BYPASS leaves every call to NCCL even with a table; measurement mode stays
 * on.  Returns 0, or -1 on out-of-range values. */
int ccltune_control_force(int algo, int proto, int channels);

/* Force the chunk size (bytes; 0: NCCL's own) getChunkSize answers for the forced
 * algorithm/protocol while forcing is on; an answer below the protocol's grain is raised to
 * one grain.  Optional symbol (absent before this plugin version: look it up with dlsym).
 * Returns 0, or -1 above CCLTUNE_CONTROL_CHUNK_MAX. */
int ccltune_control_chunk(uint64_t bytes);
void ccltune_control_chunk_last(ccltune_chunk_observation *out);

/* Whether communicators initialised from now on get the table's nccl_constants written into
 * NCCL's model (tuner v5/v6): 1 (the default; CCLTUNE_CONSTANTS=0 still wins) or 0 (NCCL's
 * own constants).  Read once per communicator, at its init, so a process can hold one
 * communicator with the constants and one without (how `ccltune bench` times NCCL's real
 * defaults against a table with constants).  Returns 0, or -1 when on is not 0 or 1.  It
 * does not turn measurement mode on. */
int ccltune_control_constants(int on);

/* Copy the observation of the most recent getCollInfo call; reset clears the counters. */
void ccltune_control_last(ccltune_observation *out);
void ccltune_control_reset(void);

#endif
