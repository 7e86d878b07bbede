/*
 * cct_table.h - the tuning table in memory: what the fitter produces, what the YAML
 * reader/writer (cct_table_read.c / cct_table_write.c) convert, and what the plugin looks
 * decisions up in.  docs/table-format.md describes the file format field by field.
 *
 * Shape: a table has provenance, a hardware fingerprint, an LL128 verdict, recommended
 * environment variables and a list of sections.  A section is one collective on one
 * topology (ranks, nodes; optionally a numPipeOps and regBuff that NCCL passes the tuner)
 * and holds size-band rules -- sorted, non-overlapping, covering [0, inf) -- plus the
 * fitted models that justify them.
 *
 * Ownership: cct_table_init() makes an empty table that owns every string and array
 * reachable from it; cct_table_destroy() frees them all.  Lookups return pointers into
 * the table, valid until it is destroyed.  A loaded table is never modified, so any
 * number of threads may look up in it concurrently.
 */
#ifndef CCT_TABLE_H
#define CCT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cct_error.h"
#include "cct_names.h"

#define CCT_TABLE_FORMAT 2        /* the format version this build writes (and the model's) */
#define CCT_TABLE_FORMAT_OLDEST 1 /* the oldest format version it still reads */
#define CCT_ANY (-1)              /* pipe_ops / reg_buff not distinguished */
#define CCT_TABLE_MAX_CHANNELS 64
#define CCT_TABLE_MAX_RANKS (1 << 24)

/* One size band: bytes in [min_bytes, max_bytes) use this configuration. */
typedef struct cct_rule {
    uint64_t min_bytes;
    uint64_t max_bytes;    /* CCT_BYTES_INF for the last band */
    int algo;              /* cct_algo */
    int proto;             /* cct_proto */
    int channels;          /* 0: leave NCCL's channel count */
    uint64_t chunk_bytes;  /* 0: leave NCCL's chunk size (tuner v6 only) */
    double predicted_us;   /* NAN when unknown (hand-written tables) */
    double margin;         /* predicted gain over the runner-up, fraction; NAN when unknown */
    double margin_default; /* predicted gain over NCCL's default, fraction; NAN when unknown */
    uint64_t ref_bytes;    /* size predicted_us and the margins were evaluated at; 0: unknown */
    /* Measured evidence at ref_bytes (the YAML key `evidence`; all 0 when absent):
     * gain = NCCL's choice's time / this rule's time, as the median over the measured cycles,
     * with a 95 % confidence interval [gain_lo, gain_hi]; noise = the run's own A/A noise
     * floor there (relative, e.g. 0.03 = 3 %); cycles = paired cycles behind it.
     * no_baseline: the source had no NCCL-default timing (imported logs), so no gain. */
    double gain, gain_lo, gain_hi, noise;
    int cycles;
    bool no_baseline;
} cct_rule;

typedef enum cct_model_kind {
    CCT_MODEL_LINEAR = 0,    /* t(n) = alpha + n / beta */
    CCT_MODEL_SEGMENTED = 1, /* linear below break_bytes, a second line above */
    CCT_MODEL_PIECEWISE = 2  /* segments[0..n_segments), n_segments >= 3 (docs/fitting.md) */
} cct_model_kind;

#define CCT_MODEL_MAX_SEGMENTS 8

/* One line of a piecewise model: t(n) = alpha_us + n / (beta_gbps * 1e3) for sizes from
 * from_bytes up to the next segment's from_bytes.  beta_gbps NAN: the segment is flat (no
 * size term); a CI NAN: unknown or unbounded. */
typedef struct cct_model_segment {
    uint64_t from_bytes; /* 0 for the first segment */
    double alpha_us, alpha_ci;
    double beta_gbps, beta_ci;
} cct_model_segment;

/* A fitted latency/bandwidth model of one configuration (units: microseconds, GB/s=1e9 B/s). */
typedef struct cct_model {
    int algo, proto;
    int channels;      /* 0: NCCL's choice */
    uint64_t buffsize; /* NCCL_BUFFSIZE the points were measured with; 0: NCCL's default */
    cct_model_kind kind;
    double alpha_us, alpha_ci;    /* intercept and its 95 % confidence half-width */
    double beta_gbps, beta_ci;    /* asymptotic bandwidth and its 95 % confidence half-width */
    uint64_t break_bytes;         /* segmented only */
    double alpha2_us, beta2_gbps; /* segmented only: the line above break_bytes */
    double r2;
    int n_points;
    bool poor_fit; /* flagged by the fitter: never hidden */
    /* Optional (0 when absent).  The fitter fills segments[] for every kind and mirrors them
     * above: alpha/beta = segments[0], break_bytes = segments[1].from_bytes, alpha2/beta2 =
     * the last segment; only PIECEWISE needs segments[] written out to be reproduced. */
    uint64_t ll_buffsize, ll128_buffsize; /* NCCL_LL_BUFFSIZE / NCCL_LL128_BUFFSIZE; 0: default */
    int n_segments; /* 0: the fields above are the model; else segments[] is (any kind) */
    cct_model_segment segments[CCT_MODEL_MAX_SEGMENTS];
} cct_model;

/* Measured slowdown of a protocol when buffers are offset from 256-byte alignment. */
typedef struct cct_align_penalty {
    int proto;
    unsigned offset; /* bytes */
    double penalty;  /* fraction: 0.05 = 5 % slower than aligned */
} cct_align_penalty;

typedef struct cct_section {
    int coll; /* cct_coll */
    int ranks, nodes;
    int pipe_ops; /* CCT_ANY or >= 1 */
    int reg_buff; /* CCT_ANY, 0 or 1 */
    size_t n_rules;
    cct_rule *rules;
    size_t n_models;
    cct_model *models;
    size_t n_penalties;
    cct_align_penalty *penalties;
} cct_section;

typedef struct cct_kv {
    char *key;
    char *value;
} cct_kv;

typedef struct cct_fingerprint {
    char *gpu; /* "NVIDIA H200" as the CUDA driver names it */
    int cc;    /* compute capability * 10: 90 for 9.0 */
    int gpus_per_node;
    int nodes;
    int ranks_per_gpu; /* > 1: several rank processes shared each GPU (MPS + NCCL_HOSTID) */
    char *links;       /* "nvlink", "pcie", "net", "socket" (ranks joined by NET/Socket) */
    char *nccl;        /* NCCL version the measurements were taken with, "2.28.9" */
    /* optional: further NCCL releases the table applies to, a cct_parse_nccl_versions spec
     * ("2.28,2.30..2.31") the user gave at fit time; NULL when absent */
    char *nccl_versions;
    char *cuda; /* optional: CUDA driver version, "13.0"; NULL when absent */
} cct_fingerprint;

typedef struct cct_provenance {
    char *tool;    /* "ccltune 0.1.0" */
    char *created; /* ISO 8601 UTC: when the measurements were taken (the newest run's end; for
                    * imported logs, the import's time), so the same store gives the same
                    * bytes.  The YAML key is `measured` (format 1 called it `created`). */
    char *nccl;    /* NCCL version of the producing run */
    char *source;  /* "measured", "imported", "hand-written" */
    char *runs;    /* store run ids, free text ("3,4"); NULL when absent */
    char *note;    /* NULL when absent */
    char *command; /* the command that took the measurements, as the store recorded it (one
                    * line per distinct command of the runs); NULL when absent */
} cct_provenance;

/* NCCL's cost-model constants (what a v5/v6 tuner may rewrite at init), fitted from
 * measurements by the calibrator.  Indices follow the v5 ABI: [algo] and [proto] as cct_algo /
 * cct_proto, [link] 0 NVLink, 1 PCI, 2 NET; [cc] NCCL's compute-capability generation index,
 * [scale] its tuning-scale index (tuning.cc).  A NAN entry leaves NCCL's own value in place,
 * so a table only overrides what was fitted.  Units as NCCL's: microseconds and GB/s. */
#define CCT_CONST_HW_LINKS 3
#define CCT_CONST_COMPCAPS 4
#define CCT_CONST_SCALES 3
typedef struct cct_constants {
    bool present; /* false: the table carries no constants (every entry below NAN) */
    double base_latency_us[CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    double hw_latency_us[CCT_CONST_HW_LINKS][CCT_NUM_ALGOS][CCT_NUM_PROTOS];
    double ll_max_bw[CCT_CONST_COMPCAPS][CCT_CONST_SCALES];
    double per_ch_max_ring_ll128_bw[CCT_CONST_COMPCAPS][CCT_CONST_SCALES];
    double per_ch_max_tree_ll128_bw[CCT_CONST_COMPCAPS][CCT_CONST_SCALES];
    double per_ch_max_tree_bw[CCT_CONST_COMPCAPS][CCT_CONST_SCALES];
    double per_ch_max_nvls_tree_bw[CCT_CONST_COMPCAPS][CCT_CONST_SCALES];
} cct_constants;

/* Every entry NAN, present false. */
void cct_constants_clear(cct_constants *constants);

/* A compact summary of the link matrix measured with the fitted run (`ccltune probe --links`,
 * stored in the store's link_matrices); the YAML key `link_matrix`.  present false when the
 * store had none.  A NAN figure was not measured (one GPU has no pairs). */
typedef struct cct_link_summary {
    bool present;
    int run;                                         /* the store run it was measured for */
    int gpus;                                        /* GPUs measured */
    double pair_gbps_min, pair_gbps_max;             /* copy bandwidth: slowest, fastest pair */
    double pair_latency_us_min, pair_latency_us_max; /* one-way latency: fastest, slowest pair */
    double h2d_gbps, d2h_gbps; /* host bandwidth of the slowest GPU, each direction */
    double host_latency_us;    /* one-way latency to a host thread, the slowest GPU's */
    char *socket;              /* the interface NCCL's socket transport picks; NULL none */
} cct_link_summary;

/* Every figure NAN, present false, no socket (frees nothing). */
void cct_link_summary_clear(cct_link_summary *s);

typedef struct cct_table {
    int format;
    cct_provenance provenance;
    cct_fingerprint fingerprint;
    bool ll128_allowed;
    char *ll128_reason;
    size_t n_env;
    cct_kv *env; /* sorted by key */
    size_t n_sections;
    cct_section *sections;
    cct_constants constants;      /* NCCL model constants; constants.present false when absent */
    cct_link_summary link_matrix; /* link_matrix.present false when absent */
} cct_table;

void cct_table_init(cct_table *table);
void cct_table_destroy(cct_table *table);

/* Append an empty section (pipe_ops/reg_buff = CCT_ANY) and return it, NULL on ENOMEM.
 * Pointers to earlier sections may move. */
cct_section *cct_table_add_section(cct_table *table, int coll, int ranks, int nodes);
/* Append to a section; the arrays grow as needed.  CCT_ENOMEM on failure. */
cct_status cct_section_add_rule(cct_section *section, const cct_rule *rule);
cct_status cct_section_add_model(cct_section *section, const cct_model *model);
cct_status cct_section_add_penalty(cct_section *section, const cct_align_penalty *penalty);
/* Set (or replace) a recommended environment variable, kept sorted by key. */
cct_status cct_table_set_env(cct_table *table, const char *key, const char *value);

/* A rule with every optional field unset (NAN predictions, channels 0, chunk 0). */
cct_rule cct_rule_blank(void);

/* Semantic checks shared by the reader and by code that builds tables (the fitter):
 * rules sorted, contiguous, non-empty, starting at 0 and ending at inf; algorithm,
 * protocol and channel counts in range; no two sections with the same key.  On failure
 * err names the section ("allreduce ranks=8 nodes=1 rule 3: ..."). */
cct_status cct_table_check(const cct_table *table, cct_error *err);

/* The checks of cct_table_check() for one section (without the duplicate-key check). */
cct_status cct_table_check_section(const cct_section *section, cct_error *err);

/* Which part of a section cct_table_check_section_at() objected to, so that a caller that
 * knows where each item came from (the YAML reader) can point at it. */
typedef enum cct_check_item {
    CCT_CHECK_SECTION = 0, /* the section as a whole (its key, or it has no rules) */
    CCT_CHECK_RULE = 1,
    CCT_CHECK_MODEL = 2,
    CCT_CHECK_PENALTY = 3
} cct_check_item;

typedef struct cct_check_where {
    cct_check_item item;
    size_t index; /* 0-based index into rules/models/penalties; 0 for the section */
} cct_check_where;

/* cct_table_check_section(), also saying where the problem is (where may be NULL; it is
 * only written on failure).  A last band that does not end at inf is blamed on that rule. */
cct_status cct_table_check_section_at(const cct_section *section, cct_error *err,
                                      cct_check_where *where);

/* The section that applies to a call, or NULL.  Exact matches on ranks and nodes; a section
 * with a specific pipe_ops/reg_buff beats one that says CCT_ANY. */
const cct_section *cct_table_find_section(const cct_table *table, int coll, int ranks, int nodes,
                                          int pipe_ops, int reg_buff);

/* The rule whose band contains bytes (binary search), or NULL if the section is empty. */
const cct_rule *cct_section_lookup(const cct_section *section, uint64_t bytes);

/* Describe a section's key for messages: "allreduce ranks=8 nodes=1 pipe_ops=2". */
const char *cct_section_describe(const cct_section *section, char *buf, size_t len);

/* Compute capability helpers: "9.0" <-> 90.  Parse returns -1 on malformed input. */
int cct_cc_parse(const char *text);
const char *cct_cc_format(int cc, char *buf, size_t len);

/* ---- YAML (cct_table_read.c, cct_table_write.c) ---- */

/* Largest table file the reader accepts (the plugin loads tables inside training jobs). */
#define CCT_TABLE_MAX_FILE_BYTES (64u << 20)

/* Load and fully validate a table.  `name` is used in messages ("FILE:LINE:COL: ...").
 * `table` is an output: it is initialised here (anything it held is not freed).  On failure
 * the table is left empty (destroyed) and err explains.  _file applies the safe-loading
 * rules of cct_safe_file.h first (regular file, size, mode, owner, directory): CCT_EPERM
 * and "PATH: unsafe file (rule NAME): ..." when one fails. */
cct_status cct_table_load_file(const char *path, cct_table *table, cct_error *err);
cct_status cct_table_load_buffer(const char *data, size_t len, const char *name, cct_table *table,
                                 cct_error *err);

/* Write deterministically: the same table always produces the same bytes. */
cct_status cct_table_write(const cct_table *table, FILE *out, cct_error *err);
/* Write to path atomically (temporary file in the same folder, fsync, rename). */
cct_status cct_table_save(const cct_table *table, const char *path, cct_error *err);

#endif
