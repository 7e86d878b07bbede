/*
 * cct_nccltests_lines.h - recognisers for the kinds of line an nccl-tests text log holds,
 * used by the text importer's state machine (cct_import_nccltests.c): NCCL log lines
 * (also when NCCL printed one in the middle of a table row), NCCL INFO messages that
 * matter, the run header, rank lines and the table's column header.
 *
 * Every function takes one NUL-terminated line without its line end and reports errors
 * as "NAME:LINE:COL: ".  Private to the importer; no ownership beyond what the
 * cct_nt_run functions state.
 */
#ifndef CCT_NCCLTESTS_LINES_H
#define CCT_NCCLTESTS_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_nccltests_run.h"

/* Column kinds of a results table. */
enum {
    NT_SIZE,
    NT_COUNT,
    NT_TYPE,
    NT_REDOP,
    NT_ROOT,
    NT_TIME,
    NT_ALGBW,
    NT_BUSBW,
    NT_WRONG, /* "#wrong": wrong elements, or N/A */
    NT_ERROR, /* "error" (nccl-tests < 2.13): largest deviation, not a count */
    NT_IMIN,
    NT_IMAX,
    NT_IP99,
    NT_ICV,
    NT_TS_DATE, /* -S 1 timestamp: two blank-separated fields */
    NT_TS_TIME
};

#define NT_MAX_COLS 24

typedef struct nt_layout {
    int n;                           /* fields per row */
    unsigned char kind[NT_MAX_COLS]; /* NT_* */
    unsigned char side[NT_MAX_COLS]; /* 0 out-of-place, 1 in-place (timing columns) */
    bool old_error;                  /* "error" instead of "#wrong" */
    int redop_col; /* position of "redop" when "root" follows it, else -1: nccl-tests
                    * 2.13.0-2.13.3 printed an empty redop for collectives without one */
} nt_layout;

/* A blank-separated field of a line. */
typedef struct nt_span {
    const char *s;
    size_t n;
    unsigned col; /* 1-based */
} nt_span;

/* Split line[from..] into fields; stores at most max, returns how many there are. */
size_t nt_fields(const char *line, size_t from, nt_span *out, size_t max);
bool nt_span_is(const nt_span *t, const char *word);

/* An NCCL log line ("host:pid:tid [dev] NCCL INFO msg", WARN, TRACE, CALL), possibly after
 * part of a table row that NCCL interrupted.  On true, *start is where the log prefix
 * begins (text before it belongs to the row), *msg where the message begins, and *info
 * whether it is an INFO message.  hosts help find where a row's last field ends and the
 * host name begins when they touch. */
bool nt_find_log(const char *line, char *const *hosts, size_t n_hosts, size_t *start, size_t *msg,
                 bool *info);

/* Interpret an INFO message (line + msg) for run: environment settings, NCCL's
 * "nRanks/nNodes" line, TUNING choices, the NCCL version.  Others are ignored. */
cct_status nt_info(cct_nt_run *run, const char *line, size_t msg, const char *name, unsigned lineno,
                   cct_error *err);

/* "NCCL version 2.28.9+cuda12.9" (a message or a bare line) into run->nccl_version. */
bool nt_nccl_version(cct_nt_run *run, const char *text);

/* "# nThread 1 nGpus 8 ... iters: 20 ... unalign: 0" */
cct_status nt_run_header(cct_nt_run *run, const char *line, const char *name, unsigned lineno,
                         cct_error *err);
/* "#  Rank  0 Group  0 Pid 1234 on host device  0 [0000:18:00] NVIDIA H200" (Group is
 * absent before 2.13.4; the bus id was "[0x18]" before 2.15); a line nccl-tests cut with
 * "..." marks the list incomplete. */
cct_status nt_rank_line(cct_nt_run *run, const char *line, const char *name, unsigned lineno,
                        cct_error *err);
/* "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ..." */
cct_status nt_table_header(nt_layout *layout, const char *line, const char *name, unsigned lineno,
                           cct_error *err);

#endif
