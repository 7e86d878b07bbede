/*
 * cct_space.h - the search space and the plan that covers it.
 *
 * The space has nine dimensions: collective, algorithm x protocol (or NCCL's default),
 * channel count, buffer sizes (NCCL_BUFFSIZE / NCCL_LL_BUFFSIZE / NCCL_LL128_BUFFSIZE),
 * buffer alignment, data type, message size, and the call mode: group size (`--pipe-ops`,
 * k collectives in one ncclGroupStart/End) and buffer registration (`--regbuff`,
 * ncclCommRegister); and, where NCCL asks a tuner for it (2.30+), the chunk size (`--chunk`,
 * crossed with algorithm/protocol/channels at default buffers only: NCCL caps a chunk to the
 * buffers, and a bigger buffer would move NCCL's own chunk too and is no tuner's to set in a
 * job).  The full cross product is rarely worth its time, so the default design is "factorial":
 * every algorithm/protocol/channel combination at default buffers, aligned, in float; each other
 * value of buffers, alignment and data type crossed with algorithm/protocol only (channels left to
 * NCCL); each call mode other than the plain one (1 op, unregistered) likewise, with its own NCCL
 * default, in the same session as the plain calls.
 * `--cross full` measures the whole product.
 *
 * A plan groups configurations into sessions.  A session is one set of rank processes
 * sharing one communicator, so everything NCCL reads only at initialisation (buffer sizes,
 * the environment that unlocks protocols) is fixed per session, while algorithm, protocol
 * and channels are switched per call through the plugin.  NCCL's own default is measured in
 * the first session, interleaved with the forced LL and Simple configurations under the
 * same untouched protocol set; LL128 gets a session of its own with NCCL_PROTO unlocking it
 * (that environment changes NCCL's defaults, so nothing else is measured there).
 *
 * Plans are pure data computed from the options, identically in every rank process, and
 * hashed so a resumed run can prove it continues the same plan.  Ownership: the caller
 * owns a cct_plan and releases it with cct_plan_destroy().
 */
#ifndef CCT_SPACE_H
#define CCT_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"

#define CCT_SPACE_MAX_VALUES 32
#define CCT_CHANNELS_MAX 64 /* "max": NCCL clamps to the communicator's channel count */
#define CCT_PIPE_OPS_MAX 16 /* largest group of --pipe-ops (each op has its own buffers) */

typedef struct cct_algo_proto {
    int algo, proto;
} cct_algo_proto;

typedef enum cct_cross { CCT_CROSS_FACTORIAL = 0, CCT_CROSS_FULL = 1 } cct_cross;

typedef struct cct_space {
    int colls[CCT_NUM_COLLS];
    size_t n_colls;
    int algos[CCT_NUM_ALGOS];
    size_t n_algos;
    bool algos_given; /* --algos given: forced as asked, NCCL's refusals recorded unsupported */
    int protos[CCT_NUM_PROTOS];
    size_t n_protos;
    bool baseline; /* also measure NCCL's default choice */
    int channels[CCT_SPACE_MAX_VALUES];
    size_t n_channels;
    uint64_t buffsizes[CCT_SPACE_MAX_VALUES]; /* 0 = NCCL's default */
    size_t n_buffsizes;
    uint64_t ll_buffsizes[CCT_SPACE_MAX_VALUES];
    size_t n_ll_buffsizes;
    uint64_t ll128_buffsizes[CCT_SPACE_MAX_VALUES];
    size_t n_ll128_buffsizes;
    unsigned aligns[CCT_SPACE_MAX_VALUES];
    size_t n_aligns;
    int dtypes[CCT_NUM_DTYPES];
    size_t n_dtypes;
    int pipe_ops[CCT_SPACE_MAX_VALUES]; /* group sizes; the first is the reference (1) */
    size_t n_pipe_ops;
    bool reg_buffs[2]; /* unregistered and/or registered buffers */
    size_t n_reg_buffs;
    /* chunk sizes the plugin answers NCCL's getChunkSize (tuner v6); 0 = NCCL's own, the
     * default and only value unless --chunk names others; crossed like channels */
    uint64_t chunks[CCT_SPACE_MAX_VALUES];
    size_t n_chunks;
    uint64_t min_bytes, max_bytes;
    double factor; /* grid step */
    bool off_grid; /* add 1.5x midpoints of every other octave */
    /* the octave of min_bytes on the default grid (1 KiB x factor^octave): the midpoints go
     * to the odd octaves counted from there; 0 (the default) counts from min_bytes itself */
    int grid_octave;
    uint64_t extra_sizes[CCT_SPACE_MAX_VALUES];
    size_t n_extra_sizes;
    cct_cross cross;
    int ranks, nodes;
    /* NCCL enables LL128 here by default (the run's fingerprint, set by cct_search_begin): the
     * LL128 configurations are measured in the sessions of the other protocols instead of
     * sessions of their own unlocked with NCCL_PROTO, two fewer process starts per run */
    bool ll128_default;
} cct_space;

/* Fill the defaults documented in `ccltune search --help`. */
void cct_space_defaults(cct_space *space);

/* Parse one dimension from its command-line text ("ring,tree", "1,2,4,max", "0,4,8,12",
 * "default,1M,16M").  On error, err names the flag and the offending item. */
cct_status cct_space_parse(cct_space *space, const char *flag, const char *value, cct_error *err);

/* Whether the plan forces (algo, proto) for coll at the space's ranks and nodes: always for
 * algorithms the user named (--algos), and for the default set (ring, tree, pat) everything
 * but a PAT that NCCL does not offer there (cct_pat_offered: allgather and reducescatter,
 * Simple, one rank per node).  What NCCL refuses at run time is recorded unsupported. */
bool cct_space_forces(const cct_space *space, int coll, int algo, int proto);
/* True when the space asks for a chunk size other than NCCL's own (needs tuner v6). */
bool cct_space_forces_chunk(const cct_space *space);

/* Check the space is coherent (non-empty dimensions, min <= max, factor > 1, ...). */
cct_status cct_space_check(const cct_space *space, cct_error *err);

typedef struct cct_session {
    uint64_t buffsize, ll_buffsize, ll128_buffsize; /* 0 = default */
    bool baseline; /* includes NCCL's own choices (algo/proto CCT_DEFAULT) */
    bool unlock;   /* NCCL_PROTO=LL,LL128,Simple: LL128 forced where NCCL would not pick it */
    bool bench;    /* ccltune bench: the table under test is loaded (CCLTUNE_TABLE) */
    bool no_rules; /* bench --rules off: CCLTUNE_RULES=0, the table's sections are ignored */
    /* bench of a table with nccl_constants: 'default' runs on a communicator initialised
     * with NCCL's own constants, the rest with the table's */
    bool default_no_constants;
    size_t first_config, n_configs; /* slice of plan->configs, grouped by collective */
} cct_session;

typedef struct cct_plan {
    cct_space space;
    cct_session *sessions;
    size_t n_sessions;
    cct_config *configs; /* every configuration, session by session */
    size_t n_configs;
    uint64_t *sizes; /* requested message sizes, ascending, deduplicated */
    size_t n_sizes;
    char hash[17]; /* FNV-1a 64 of the canonical plan text, hex */
} cct_plan;

cct_status cct_plan_build(const cct_space *space, cct_plan *plan, cct_error *err);
/* Recompute plan->hash after sessions/configs/sizes were filled by hand (the bench); tag
 * keeps hand-made plans apart from searched ones. */
void cct_plan_rehash(cct_plan *plan, const char *tag);
void cct_plan_destroy(cct_plan *plan);

/* The byte count actually measured for a requested size: rounded down to a whole number
 * of elements per rank (allgather/reducescatter split the buffer across ranks), at least
 * one element per rank. */
uint64_t cct_plan_effective_bytes(const cct_config *cfg, uint64_t requested);

/* Element count NCCL is called with for that many bytes (per-rank count for allgather
 * and reducescatter, as in their API). */
size_t cct_plan_nccl_count(const cct_config *cfg, uint64_t bytes);

/* Order of `n` configurations in cycle `cycle`: order[position] = configuration.  Cycles
 * come in mirrored pairs (the odd cycle runs the even one backwards, so a drift over time
 * weighs on every configuration alike), and each pair has its own permutation drawn from
 * `seed` and the pair number, so no configuration keeps the first or the last place (or
 * runs right after itself at the pairs' seams) in every cycle.  Deterministic: every rank
 * computes the same order from the same seed. */
void cct_cycle_order(size_t *order, size_t n, int cycle, uint64_t seed);

/* Estimated seconds for the plan (dry run): alpha_us + bytes / beta per collective call,
 * times the calls a point needs (verification, warm-up, cycles x iterations). */
typedef struct cct_estimate {
    size_t points;
    size_t calls;
    double seconds;
} cct_estimate;
cct_estimate cct_plan_estimate(const cct_plan *plan, int warmup, int cycles, double cycle_us,
                               double alpha_us, double beta_gbps);

/* One line describing a configuration: "allreduce ring/ll ch=2 buf=default align=4 float",
 * then " ops=4" and " reg" for a grouped or registered call mode (plain calls keep the line,
 * and so the plan hash, they had before call modes existed). */
const char *cct_config_describe(const cct_config *cfg, char *buf, size_t len);

#endif
