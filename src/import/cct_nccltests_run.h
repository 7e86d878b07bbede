/*
 * cct_nccltests_run.h - one nccl-tests run (one results table) as both nccl-tests
 * importers see it before it becomes cct_points: its rows, and what the log says about
 * the collective, the ranks and hosts, NCCL's environment and NCCL's own choices.
 *
 * The text and JSON parsers fill a cct_nt_run as they read; cct_nt_run_finish() then
 * resolves every dimension once, with the user's flags, by the same rules for both
 * formats (docs/import-export.md), and emits two points per row.  Keeping resolution in
 * one place is what makes a text log and the JSON of the same run import identically.
 *
 * Private to the importers.  Ownership: a run owns its rows (and their samples), host
 * names and tuning observations; cct_nt_run_destroy() frees them.
 */
#ifndef CCT_NCCLTESTS_RUN_H
#define CCT_NCCLTESTS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_import.h"
#include "cct_nccl_env.h"

/* The out-of-place or in-place half of a row. */
typedef struct cct_nt_side {
    bool present;               /* JSON may record a null out-of-place half */
    double time_us;             /* nccl-tests' average time per collective */
    double algbw, busbw;        /* GB/s as reported, for the consistency checks */
    double time_res, algbw_res; /* half a unit of their last printed digit (rounding) */
    unsigned time_line, time_col;
    bool checked;   /* false: "N/A" (-c 0) or an old log's max-delta "error" column */
    uint64_t wrong; /* wrong elements when checked */
    double min_us, max_us, p95_us, cv; /* per-iteration timing (-I 1); NaN otherwise */
    double *samples;                   /* per-iteration times (JSON -I 1); owned by the run */
    size_t n_samples;
} cct_nt_side;

typedef struct cct_nt_row {
    uint64_t size;  /* bytes, nccl-tests' "size" column */
    uint64_t count; /* elements, nccl-tests' "count" column; has_count false when absent */
    bool has_count;
    int dtype;
    unsigned line, col;           /* where the row starts */
    unsigned size_line, size_col; /* where its size is */
    unsigned count_line, count_col;
    int iters;           /* JSON actual_iterations; 0: the run's iteration count */
    cct_nt_side side[2]; /* [0] out-of-place, [1] in-place */
} cct_nt_row;

/* What NCCL's TUNING INFO lines said it ran for one call size. */
typedef struct cct_nt_tuning {
    int coll;
    uint64_t bytes; /* NCCL's count * element size: one rank's share for allgather and
                     * reducescatter */
    int algo, proto;
    bool mixed; /* different choices for the same size: unknown */
} cct_nt_tuning;

typedef struct cct_nt_run {
    unsigned line, col; /* where the run starts */
    int coll;           /* from the program name; -1 when the log does not say */
    unsigned coll_line, coll_col;
    int threads, gpus; /* per process; 0 unknown */
    int iters;         /* timed iterations; 0 unknown */
    long unalign;      /* nccl-tests -u: first element offset */
    int *rank_ids;     /* rank numbers the log lists */
    size_t n_rank_ids, cap_rank_ids;
    bool ranks_truncated; /* nccl-tests cut its device list ("...") */
    unsigned ranks_line, ranks_col;
    char **hosts; /* host of each listed rank, consecutive repeats dropped */
    size_t n_hosts, cap_hosts;
    char **gpu_ids; /* "host bus-id" of each listed rank */
    size_t n_gpu_ids, cap_gpu_ids;
    int nccl_ranks, nccl_nodes; /* NCCL's "comm ... nRanks N nNodes M" INFO line; 0 absent */
    unsigned nccl_line, nccl_col;
    cct_nccl_env env;
    cct_nt_tuning *tuning;
    size_t n_tuning, cap_tuning, last_tuning;
    cct_nt_row *rows;
    size_t n_rows, cap_rows;
    char gpu[128];
    char nccl_version[32];
} cct_nt_run;

void cct_nt_run_init(cct_nt_run *run, unsigned line);
void cct_nt_run_destroy(cct_nt_run *run);

/* Set the collective from a program name ("all_reduce_perf", a path, "..._perf_mpi");
 * errors at line:col for programs that are not nccl-tests or measure something NCCL's
 * tuner does not see (alltoall, sendrecv, ...). */
cct_status cct_nt_run_set_program(cct_nt_run *run, const char *program, const char *name,
                                  unsigned line, unsigned col, cct_error *err);
/* A rank the log lists, on host, on the GPU with bus id gpu ("" when not known). */
cct_status cct_nt_run_add_rank(cct_nt_run *run, int rank, const char *host, const char *gpu,
                               cct_error *err);
/* Takes ownership of the row's samples, also on failure. */
cct_status cct_nt_run_add_row(cct_nt_run *run, cct_nt_row *row, cct_error *err);
/* Advisory: observations beyond a fixed number of distinct sizes are ignored. */
void cct_nt_run_add_tuning(cct_nt_run *run, int coll, uint64_t bytes, int algo, int proto);

/* NCCL version code (22809, or 2708 before 2.9) as "2.28.9". */
void cct_nt_version_from_code(long code, char *buf, size_t len);

/* Resolve the run's dimensions with opts and append two points per row to result. */
cct_status cct_nt_run_finish(const cct_nt_run *run, const char *name, const cct_import_opts *opts,
                             cct_import_result *result, cct_error *err);

#endif
