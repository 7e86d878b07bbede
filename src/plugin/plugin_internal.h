/*
 * plugin_internal.h - what the files of libnccl-tuner-ccltune.so share with each other
 * (and with the unit tests, which link the same objects without the exported ABI).
 *
 * Layers, bottom up:
 *   plugin_log.c     formatting through NCCL's logger; once-per-process WARNs
 *   plugin_env.c     environment parsing: NCCL_ALGO/NCCL_PROTO as old NCCL reads them,
 *                    CCLTUNE_FORCE
 *   plugin_device.c  runtime facts: NCCL version, this GPU's name and capability
 *   plugin_index.c   the table's sections by communicator shape, rules by size
 *   plugin_state.c   the process-wide state: the table, loaded once, shared read-only
 *   plugin_select.c  pure decisions: apply a choice to a cost table, or check a v1/v2 choice
 *   plugin_context.c one context per communicator: candidate sections, LL128 verdicts,
 *                    counters, the per-call decision, the init/finalize log lines
 *   plugin_control.c measurement mode (ccltune_control.h, CCLTUNE_FORCE, CCLTUNE_MEASURE)
 *   plugin_abi.c     the exported ncclTunerPlugin_v1..v6 structs
 * Nothing here is exported from the shared object (see plugin.map).
 */
#ifndef CCT_PLUGIN_INTERNAL_H
#define CCT_PLUGIN_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_fingerprint.h"
#include "cct_ll128.h"
#include "cct_names.h"
#include "cct_table.h"
#include "nccl_tuner_abi.h"

#define CCT_EXPORT __attribute__((visibility("default")))

/* ---- counters: what happened to each call ---- */
typedef enum cct_outcome {
    CCT_OUT_OVERRIDDEN = 0,  /* the table's (or the forced) choice was applied */
    CCT_OUT_NO_SECTION = 1,  /* no section for this collective / pipe_ops / reg_buff */
    CCT_OUT_NO_RULE = 2,     /* a section but no rule for the size (an empty section) */
    CCT_OUT_IGNORED = 3,     /* the chosen entry is ignored/unsupported/excluded here */
    CCT_OUT_LL128 = 4,       /* LL128 chosen where NCCL would not enable it by default */
    CCT_OUT_MISMATCH = 5,    /* fingerprint mismatch: the table does not belong here */
    CCT_OUT_TABLE_ERROR = 6, /* no usable table (missing, unreadable, malformed, unset) */
    CCT_OUT_BYPASSED = 7,    /* measurement mode asked to leave the call to NCCL */
    CCT_NUM_OUTCOMES = 8
} cct_outcome;

/* "overridden", "no_section", ... as used in the finalize line. */
const char *cct_outcome_name(int outcome);

/* ---- plugin_log.c ---- */

/* Log one line through NCCL's logger (NULL: silent), prefixed "ccltune: ". */
void cct_plog(ncclDebugLogger_t log, ncclDebugLogLevel level, unsigned long flags, const char *file,
              int line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define CCT_LOG(log, level, flags, ...)                                                            \
    cct_plog((log), (level), (flags), __FILE__, __LINE__, __VA_ARGS__)
#define CCT_WARN(log, ...) CCT_LOG(log, NCCL_LOG_WARN, CCT_NCCL_SUBSYS_INIT, __VA_ARGS__)
#define CCT_INFO(log, ...)                                                                         \
    CCT_LOG(log, NCCL_LOG_INFO, CCT_NCCL_SUBSYS_INIT | CCT_NCCL_SUBSYS_TUNING, __VA_ARGS__)

/* Once-per-process topics for WARNs: the first caller gets true, everyone after false. */
typedef enum cct_warn_topic {
    CCT_WARN_TABLE = 0,
    CCT_WARN_FINGERPRINT = 1, /* + cct_fp_verdict */
    CCT_WARN_FORCE = 1 + CCT_FP_NUM_VERDICTS,
    CCT_WARN_V1_SHAPES,
    CCT_WARN_NO_MEMORY,
    CCT_WARN_UNSAFE_OK,         /* a table loaded although a safe-loading rule failed (waived) */
    CCT_WARN_CONSTANTS_OLD_ABI, /* (an INFO) constants in the table, tuner ABI < v5 */
    CCT_WARN_CONSTANTS_BAD,     /* the table's constants failed validation */
    CCT_WARN_DEAD_CONTEXT,      /* a call on a context finalized already */
    CCT_WARN_FOLDER_SKIPPED,    /* files of a table folder that could not be used */
    CCT_WARN_FOLDER_NONE,       /* no table of the folder matches a communicator */
    CCT_WARN_FOLDER_TIE,        /* two tables of the folder tie for a communicator */
    CCT_WARN_RCCL,              /* RCCL: constants never written */
    CCT_NUM_WARN_TOPICS
} cct_warn_topic;
bool cct_warn_first(int topic);
void cct_warn_reset(void); /* tests only */

/* ---- plugin_env.c ---- */

/* Which algorithms/protocols NCCL_ALGO/NCCL_PROTO leave enabled, as NCCL 2.19-2.21 parse
 * them: comma-separated names, case-insensitive, a leading '^' excludes the listed ones,
 * unknown names are ignored.  Unset variables enable everything. */
typedef struct cct_env_mask {
    bool algo[CCT_NUM_ALGOS];
    bool proto[CCT_NUM_PROTOS];
    bool algo_set, proto_set; /* the variable was present */
} cct_env_mask;
void cct_env_mask_parse(const char *algo_env, const char *proto_env, cct_env_mask *out);
/* One NCCL-style list against a name table; enabled[] gets n entries. */
void cct_env_list_parse(const char *text, const char *const *names, int n, bool *enabled);

/* A configuration to force (CCLTUNE_FORCE, ccltune_control_force). */
typedef struct cct_force {
    int algo, proto; /* cct_algo, cct_proto */
    int channels;    /* 0: NCCL's count */
    uint64_t chunk;  /* 0: NCCL's chunk (tuner v6 only) */
} cct_force;
/* "ring/ll", "Tree/Simple/2" or "ring/simple/0/256K": algorithm/protocol[/channels[/chunk]]. */
cct_status cct_force_parse(const char *text, cct_force *out, cct_error *err);

/* A boolean environment variable: "1", "true", "yes", "on" (case-insensitive). */
bool cct_env_flag(const char *name);
/* A switch that is on by default: true only for "0", "false", "no", "off". */
bool cct_env_off(const char *name);

/* ---- plugin_device.c ---- */

/* NCCL_VERSION_CODE of the NCCL in this process (ncclGetVersion looked up at run time),
 * 0 when not found. */
int cct_device_nccl_version(void);
/* Whether the NCCL in this process is RCCL (AMD's fork: same tuner symbol names, other
 * structure layouts): the library that defines ncclGetVersion is named librccl*, or it
 * exports rcclGetVersion.  why gets how it was recognised. */
bool cct_device_is_rccl(char *why, size_t why_len);
/* Name and compute capability of the GPU current on the calling thread, through the CUDA
 * driver already loaded in the process.  false (and why) when it cannot be read. */
bool cct_device_current_gpu(char *name, size_t name_len, int *cc, char *why, size_t why_len);

/* ---- plugin_index.c: the search indexes (built once per process) ---- */

/* Sizes are bucketed log-linearly: by bit length, then by the two bits below the top one,
 * so each power of two splits into four buckets (sizes 0..3 get one bucket each). */
#define CCT_BAND_BUCKETS 252
/* Sections of at most this many rules get no bucket table: their keys are searched whole. */
#define CCT_BAND_SMALL 4

static inline unsigned cct_band_bucket(uint64_t bytes)
{
    if (bytes < 4)
        return (unsigned)bytes;
    unsigned len = 64u - (unsigned)__builtin_clzll(bytes); /* 3..64 */
    return 4u * (len - 2u) + (unsigned)((bytes >> (len - 3u)) & 3u);
}

/* How specific a section's keys are: pipe_ops set counts 2, reg_buff set 1.  The most
 * specific matching section serves a call (cct_table_find_section). */
static inline int cct_section_score(const cct_section *s)
{
    return (s->pipe_ops != CCT_ANY) * 2 + (s->reg_buff != CCT_ANY);
}

typedef struct cct_band_index {
    const cct_section *sec;
    const uint64_t *keys; /* rules[i].max_bytes; NULL when the section is unusable */
    /* Small sections have neither; others one: first[k] is the rule holding the smallest
     * size of bucket k; rules first[k] .. first[k + 1] (inclusive) hold every size of bucket
     * k, and first[CCT_BAND_BUCKETS] = n-1.  first8 up to 256 rules, first32 beyond. */
    const uint8_t *first8;
    const uint32_t *first32;
    uint32_t n;             /* number of keys */
    int pipe_ops, reg_buff; /* the section's, copied for the per-call search */
} cct_band_index;

/* A standalone index of one section (tests); cct_band_index_free releases it. */
cct_status cct_band_index_build(const cct_section *section, cct_band_index *out);
void cct_band_index_free(cct_band_index *ix);

/* The rule whose band contains bytes (same answer as cct_section_lookup), or NULL. */
static inline const cct_rule *cct_band_lookup(const cct_band_index *ix, uint64_t bytes)
{
    if (ix->n == 0)
        return NULL;
    if (bytes == UINT64_MAX) /* the last band ends at "inf" = UINT64_MAX and includes it */
        bytes--;
    const uint64_t *base = ix->keys;
    uint32_t n = ix->n;
    if (ix->first8) {
        unsigned k = cct_band_bucket(bytes);
        base += ix->first8[k];
        n = (uint32_t)(ix->first8[k + 1] - ix->first8[k]) + 1;
    } else if (ix->first32) {
        unsigned k = cct_band_bucket(bytes);
        base += ix->first32[k];
        n = ix->first32[k + 1] - ix->first32[k] + 1;
    }
    uint64_t x = bytes + 1; /* the first key >= x ends the band holding bytes */
    while (n > 1) {
        uint32_t half = n / 2;
        base = base[half] < x ? base + half : base; /* compiles to a conditional move */
        n -= half;
    }
    base += *base < x;
    return &ix->sec->rules[base - ix->keys];
}

/* Every section of a table, indexed by shape and by size. */
typedef struct cct_table_index {
    /* one per section, sorted by (ranks, nodes, coll, score descending, pipe_ops, reg_buff,
     * file order) */
    cct_band_index *ix;
    size_t n;
    size_t *rules_before; /* n + 1 prefix sums of the sections' rule counts in that order */
    uint64_t *keys;       /* storage of every section's keys */
    uint8_t *buckets8;    /* storage of the bucket tables of sections of 5..256 rules */
    uint32_t *buckets32;  /* and of larger sections */
} cct_table_index;

cct_status cct_table_index_build(const cct_table *t, cct_table_index *out);
void cct_table_index_free(cct_table_index *x);
/* The sections of communicators of (ranks, nodes): x->ix[*lo .. *hi); O(log n). */
void cct_table_index_shape(const cct_table_index *x, int ranks, int nodes, size_t *lo, size_t *hi);
/* Within that range, collective coll's sections by score 3, 2, 1, 0: group g is
 * x->ix[out[g] .. out[g + 1]); out[4] ends the collective.  O(log n). */
void cct_table_index_groups(const cct_table_index *x, size_t lo, size_t hi, int ranks, int nodes,
                            int coll, size_t out[5]);

/* ---- plugin_state.c: the process-wide table ---- */
typedef enum cct_table_status {
    CCT_TABLE_NONE = 0,  /* no table configured (CCLTUNE_TABLE unset) */
    CCT_TABLE_OK = 1,    /* loaded and valid */
    CCT_TABLE_FAILED = 2 /* configured but missing, unreadable or malformed */
} cct_table_status;

/* One table of a folder (CCLTUNE_TABLE naming a folder, cct_fleet.h). */
typedef struct cct_ptable {
    char *path;       /* FOLDER/NAME, malloc'ed */
    const char *name; /* NAME, inside path */
    cct_table table;
    size_t n_rules;
    cct_table_index index;
    cct_error waived; /* as cct_pstate's */
} cct_ptable;

/* What a context reads of the table it was given: the state's single table, or one of
 * its folder's. */
typedef struct cct_ptable_ref {
    const char *path;
    const cct_table *table;
    const cct_table_index *index;
    size_t n_rules;
    const cct_error *waived;
} cct_ptable_ref;

typedef struct cct_pstate {
    cct_table_status status;
    const char *path_from; /* "CCLTUNE_TABLE" / "NCCL_TUNER_CONFIG_FILE"; NULL */
    char path[4096];
    cct_table table;       /* valid when status == CCT_TABLE_OK; read-only after load */
    size_t n_rules;        /* over all sections */
    cct_table_index index; /* the table's sections by shape and size */
    cct_error err;         /* why status == CCT_TABLE_FAILED (or CCLTUNE_FORCE was rejected) */
    cct_error waived;      /* a safe-loading rule CCLTUNE_TABLE_UNSAFE_OK=1 waived; "" if none */
    bool strict;           /* CCLTUNE_STRICT */
    bool rules_off;        /* CCLTUNE_RULES=0: sections ignored (constants only) */
    bool constants_off;    /* CCLTUNE_CONSTANTS=0: nccl_constants not written */
    bool trace;            /* NCCL_DEBUG=TRACE: format TRACE lines */
    int nccl_version;
    bool hostid_set;
    int ll128_c2c;      /* NCCL_LL128_C2C, -1 when unset */
    bool proto_env_set; /* NCCL_PROTO present */
    cct_env_mask env;   /* NCCL_ALGO / NCCL_PROTO */
    bool force_set;     /* CCLTUNE_FORCE present and valid */
    cct_force force;    /* its value */
    bool force_env_bad; /* CCLTUNE_FORCE present but malformed */
    cct_error force_err;
    bool rccl;          /* the NCCL in this process is RCCL (plugin_device.c) */
    char rccl_why[256]; /* how it was recognised */
    /* CCLTUNE_TABLE names a folder (path): its tables that loaded, in file-name order, and
     * the files skipped (each error names its file).  status is CCT_TABLE_OK when at least
     * one loaded; table/index above stay empty. */
    bool folder;
    cct_ptable *tables;
    size_t n_tables;
    cct_error *skipped;
    size_t n_skipped;
} cct_pstate;

/* The state, loading it on first use (thread-safe, once per loaded library). */
const cct_pstate *cct_pstate_get(void);
/* Index ps->table (loaded, valid) for lookups: ps->index and ps->n_rules.  On failure
 * (memory) the table is destroyed and ps->err says why.  Used by the state's loader and by
 * the fuzz target, which builds states of its own. */
cct_status cct_pstate_index_table(cct_pstate *ps);
/* Free the table and index of a state built with cct_pstate_index_table(). */
void cct_pstate_free_table(cct_pstate *ps);
/* Load every table of the folder ps->path into ps->tables (CCLTUNE_TABLE naming a folder);
 * files that fail the safe-loading rules or the loader go to ps->skipped.  Used by the
 * state's loader and by tests that build states of their own. */
void cct_pstate_load_folder(cct_pstate *ps);
/* Free what cct_pstate_load_folder() allocated. */
void cct_pstate_free_folder(cct_pstate *ps);
/* Contexts alive; the unload destructor frees the table only when this is 0. */
void cct_pstate_ctx_add(int delta);

/* ---- plugin_select.c: pure decisions ---- */

/* Apply (algo, proto) to a cost table float[num_algo][num_proto]: set that entry to 0.0
 * when it is in bounds, not ignored (-1.0, or any negative/NaN value NCCL skips) and,
 * for LL128, ll128_ok.  Returns CCT_OUT_OVERRIDDEN, CCT_OUT_IGNORED or CCT_OUT_LL128.
 * Inline: it is on every call's path. */
static inline cct_outcome cct_select_apply(float *costs, int num_algo, int num_proto, int algo,
                                           int proto, bool ll128_ok)
{
    if (!costs || algo < 0 || proto < 0 || algo >= num_algo || proto >= num_proto)
        return CCT_OUT_IGNORED;
    float *entry = &costs[(size_t)algo * (size_t)num_proto + (size_t)proto];
    if (!(*entry >= 0.0f)) /* NCCL skips IGNORE and anything negative; NaN fails too */
        return CCT_OUT_IGNORED;
    if (proto == CCT_PROTO_LL128 && !ll128_ok)
        return CCT_OUT_LL128;
    *entry = 0.0f;
    return CCT_OUT_OVERRIDDEN;
}
/* NCCL's own choice on an untouched table: the first strictly cheapest entry >= 0 that is
 * not ignored, scanning algorithms then protocols.  -1/-1 when none. */
void cct_select_default(const float *costs, int num_algo, int num_proto, int *algo, int *proto);
/* Bit p of mask[a] set when entry (a, p) is ignored (a < min(num_algo, 7), p < 31). */
void cct_select_ignored_mask(const float *costs, int num_algo, int num_proto, int *mask,
                             int mask_len);

/* What NCCL 2.19-2.21 (tuner v1/v2, no cost table) would accept without checking. */
typedef struct cct_v2_call {
    int nccl_version;
    int nnodes;
    int coll;
    int collnet_support;
    int nvls_support;
    const cct_env_mask *env; /* NULL: no NCCL_ALGO/NCCL_PROTO restrictions */
} cct_v2_call;
/* CCT_OUT_OVERRIDDEN when (algo, proto) is safe to hand to NCCL, else why not. */
cct_outcome cct_select_check_v2(const cct_v2_call *call, int algo, int proto, bool ll128_ok);

/* ---- plugin_context.c ---- */

typedef struct cct_pctx cct_pctx;

/* Create a communicator's context.  On a configuration error under CCLTUNE_STRICT returns
 * NULL with *fail set (the caller fails init); otherwise never fails except for memory
 * (NULL, *fail false: the caller proceeds without a context).  abi is 1..6. */
cct_pctx *cct_ctx_create(int abi, uint64_t comm_id, size_t nranks, size_t nnodes,
                         ncclDebugLogger_t log, bool *fail);
/* What the communicator's process runs on (cct_device_current_gpu), probed once per init. */
typedef struct cct_gpu_facts {
    bool known;
    char name[256];
    int cc;
    char why[256]; /* why it is unknown, "" otherwise */
} cct_gpu_facts;
/* cct_ctx_create() on a given state and GPU instead of the process's own: the same code
 * path, for the fuzz target and tests that feed tables and GPUs the process does not have.
 * The context borrows ps, which must outlive it. */
cct_pctx *cct_ctx_create_with(const cct_pstate *ps, const cct_gpu_facts *gpu, int abi,
                              uint64_t comm_id, size_t nranks, size_t nnodes, ncclDebugLogger_t log,
                              bool *fail);
/* Log the finalize line and retire the context (poisoned, its memory quarantined before
 * reuse).  NULL is fine (true).  false, touching nothing, for a context finalized already. */
bool cct_ctx_destroy(cct_pctx *ctx);
/* Every context starts with its poison word: CCT_CTX_LIVE until finalize, then
 * CCT_CTX_DEAD.  Here so the per-call check inlines into the ABI adapters. */
#define CCT_CTX_LIVE 0x63636c746c697665ull /* "ccltlive" */
#define CCT_CTX_DEAD 0x63636c7464656164ull /* "ccltdead" */
typedef struct cct_pctx_head {
    atomic_uint_fast64_t magic;
} cct_pctx_head;
/* Whether ctx is a context not yet finalized (false for NULL); one relaxed load. */
static inline bool cct_ctx_live(const cct_pctx *ctx)
{
    return ctx && atomic_load_explicit(&((cct_pctx_head *)(void *)ctx)->magic,
                                       memory_order_relaxed) == CCT_CTX_LIVE;
}

/* v3+: decide on a cost table; returns the outcome (already counted). */
cct_outcome cct_ctx_coll_costs(cct_pctx *ctx, int coll, size_t bytes, int pipe_ops, float **costs,
                               int num_algo, int num_proto, int reg_buff, int *n_channels);
/* v1/v2: decide without a cost table. */
cct_outcome cct_ctx_coll_v2(cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                            int nvls_support, int pipe_ops, int *algo, int *proto, int *n_channels);
/* v6: a rule's chunk size, when NCCL chose that rule's algorithm and protocol. */
void cct_ctx_chunk_size(cct_pctx *ctx, int coll, size_t bytes, int algo, int proto, int n_channels,
                        size_t *chunk);
/* Counters so far (index: cct_outcome). */
void cct_ctx_counters(const cct_pctx *ctx, uint64_t out[CCT_NUM_OUTCOMES]);
int cct_ctx_nranks(const cct_pctx *ctx);
int cct_ctx_nnodes(const cct_pctx *ctx);
/* v1 only: mark the process-wide context as serving communicators of different shapes. */
void cct_ctx_set_ambiguous(cct_pctx *ctx);

/* The decision of the table for one call, without counting (used by measurement mode). */
typedef struct cct_decision {
    cct_outcome outcome;
    int algo, proto, channels; /* -1/-1/0 when left to NCCL */
} cct_decision;

/* The table's NCCL model constants when they apply to this communicator (table loaded, the
 * fingerprint matches apart from the topology, the block present), else NULL. */
const cct_constants *cct_ctx_constants(const cct_pctx *ctx);
const char *cct_ctx_label(const cct_pctx *ctx);
/* The path of the table the context uses ("" when none). */
const char *cct_ctx_table_path(const cct_pctx *ctx);
/* The logger the context was created with (also after finalize: the memory is quarantined). */
ncclDebugLogger_t cct_ctx_logger(const cct_pctx *ctx);

/* ---- plugin_constants.c: the table's constants into NCCL's model (v5/v6 init) ---- */

/* Validate table (finite, latencies >= 0, bandwidths > 0; err says which entry) and write
 * every set entry into nccl.  Returns how many were written (0 when none is set), or -1
 * when validation failed and nccl was left untouched.  summary gets "name old->new, ..."
 * (cut to fit). */
int cct_constants_apply(const cct_constants *table, ncclTunerConstants_v5_t *nccl, char *summary,
                        size_t len, cct_error *err);
/* At a v5/v6 init: write the context's constants into NCCL's unless CCLTUNE_CONSTANTS=0 or
 * ccltune_control_constants(0) says not to; one INFO line says what happened (a WARN when
 * the constants are invalid).  For abi < 5 (no constants in the ABI): one INFO per process
 * that the table's constants are ignored.  nccl may be NULL (nothing to write). */
void cct_constants_at_init(const cct_pctx *ctx, int abi, ncclTunerConstants_v5_t *nccl,
                           ncclDebugLogger_t log);

/* ---- plugin_control.c ---- */
extern atomic_int cct_measure_on;
/* ccltune_control_constants(): false while the process asked for NCCL's own constants. */
bool cct_control_constants_on(void); /* measurement mode: calls go through cct_control_* */
/* Called once at state load: CCLTUNE_MEASURE / CCLTUNE_FORCE. */
void cct_control_from_env(const cct_pstate *ps);
/* Measured variants of the per-call entry points (take the control mutex). */
cct_outcome cct_control_coll_costs(cct_pctx *ctx, int coll, size_t bytes, int pipe_ops,
                                   float *costs, int num_algo, int num_proto, int reg_buff,
                                   int *n_channels);
cct_outcome cct_control_coll_v2(cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                                int nvls_support, int pipe_ops, int *algo, int *proto,
                                int *n_channels);
/* True when a forced configuration is active (getChunkSize then answers the forced chunk,
 * or leaves NCCL's size when none is forced). */
bool cct_control_forcing(void);
/* getChunkSize in measurement mode: records the call for ccltune_control_chunk_last and,
 * while forcing, answers the forced chunk (when the call is the forced algorithm/protocol)
 * or leaves NCCL's.  Returns true when it decided the call (the table must not). */
bool cct_control_chunk(int coll, size_t bytes, int algo, int proto, size_t *chunk);
/* True while measurement mode leaves every call to NCCL (ccltune_control_force(-2, ...)). */
bool cct_control_bypassing(void);

/* Context internals measurement mode needs: the table's decision, and a forced one. */
cct_decision cct_ctx_decide_costs(const cct_pctx *ctx, int coll, size_t bytes, int pipe_ops,
                                  int reg_buff, float *costs, int num_algo, int num_proto,
                                  int *n_channels);
cct_decision cct_ctx_decide_v2(const cct_pctx *ctx, int coll, size_t bytes, int collnet_support,
                               int nvls_support, int pipe_ops, int *algo, int *proto,
                               int *n_channels);
/* Whether measurement mode may force LL128 for (coll, algo): never where NCCL's rule
 * refuses this GPU and release (cct_ll128_check) or a loaded table's ll128 verdict says no;
 * with a cost table also where only the link paths (unseen here) would make NCCL refuse. */
bool cct_ctx_ll128_forceable(const cct_pctx *ctx, int coll, int algo);
const cct_env_mask *cct_ctx_env(const cct_pctx *ctx);
int cct_ctx_nccl_version(const cct_pctx *ctx);
void cct_ctx_count(cct_pctx *ctx, cct_outcome outcome);

#endif
