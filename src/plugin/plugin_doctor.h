/*
 * plugin_doctor.h - `ccltune doctor`: will the plugin apply this table in a job started
 * from the current environment, on this box?  Answered by the plugin's own code.
 *
 * The table is loaded by the plugin's process-wide loader (cct_pstate_get: the same
 * CCLTUNE_TABLE / NCCL_TUNER_CONFIG_FILE lookup, safe-loading rules and parser), the GPU
 * is read through the CUDA driver the way the plugin reads it (after making device 0's
 * primary context current, as NCCL does before tuner init), and each communicator shape
 * gets a real plugin context (cct_ctx_create_with) whose log lines are collected.  Every
 * rule is then put through the plugin's per-call decision with a cost table shaped as NCCL
 * would hand it over under the environment's NCCL_ALGO / NCCL_PROTO, so a rule reported
 * as blocked is one the plugin would leave to NCCL.  NCCL and the tuner library are found
 * as a job's loader finds them (cct_nccl_lib.h).  Nothing here prints; the report is a list
 * of findings for the command to show.
 */
#ifndef CCT_PLUGIN_DOCTOR_H
#define CCT_PLUGIN_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_error.h"
#include "cct_nccl_lib.h"

typedef enum cct_doc_level {
    CCT_DOC_OK = 0,   /* a check passed */
    CCT_DOC_INFO = 1, /* a fact (what the plugin logged, the LL128 verdict) */
    CCT_DOC_WARN = 2, /* the table applies, but something deserves a look */
    CCT_DOC_FAIL = 3  /* the table will not apply as written: a reason */
} cct_doc_level;

/* "ok", "info", "warn", "fail" */
const char *cct_doc_level_name(int level);

typedef struct cct_doc_item {
    char check[24]; /* nccl, plugin, gpu, table, fingerprint, sections, rules, ll128, env, log */
    int level;      /* cct_doc_level */
    char text[1024];
} cct_doc_item;

typedef struct cct_doctor_opts {
    const char *table;      /* NULL: the table the job's environment names */
    int ranks, nodes;       /* 0: every shape the table has (nodes 0: every node count) */
    const char *nccl;       /* the NCCL library; NULL: "libnccl.so.2" as the loader finds it */
    const char *own_plugin; /* this ccltune's plugin, for the hint when none loads; NULL */
} cct_doctor_opts;

typedef struct cct_doctor_report {
    const char *own_plugin; /* opts->own_plugin, borrowed; NULL when unknown */
    cct_nccl_lib nccl;
    int nccl_abi; /* the newest tuner ABI that release looks up */
    cct_tuner_lib tuner;
    bool gpu_known;
    char gpu[256];
    int cc;
    char table_path[4096];     /* "" when none is configured */
    const char *table_status;  /* "ok", "none", "failed" */
    size_t n_shapes;           /* communicator shapes checked */
    size_t n_rules, n_blocked; /* rules of those shapes, and those the plugin would not apply */
    bool applies;              /* no CCT_DOC_FAIL item */
    cct_doc_item *items;
    size_t n_items, cap_items;
    bool oom; /* an item could not be stored */
} cct_doctor_report;

/* Run every check.  Sets CCLTUNE_TABLE in this process when opts->table is given (the
 * plugin's loader reads the environment, once per process: call this once).  CCT_ENOMEM
 * is the only failure; every finding, good or bad, is an item. */
cct_status cct_doctor_run(const cct_doctor_opts *opts, cct_doctor_report *report, cct_error *err);
void cct_doctor_report_free(cct_doctor_report *report);

#endif
