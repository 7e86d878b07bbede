/*
 * cct_cli_job.h - a recorded job weighted by a table's measured gains, as `audit` and
 * `explain --weights-from` print it: the saving per rank process, per step when the
 * step count is given (else over the whole recorded job), its share of the job's
 * collective time, and where the gains come from (the table's evidence or a store).
 *
 * The recordings are one file per rank process, so per-process figures divide the sums
 * by the number of recordings; GPU time of a process's communicators adds up.
 */
#ifndef CCT_CLI_JOB_H
#define CCT_CLI_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cct_recording_audit.h"

typedef struct cct_job_weighting {
    long steps;        /* 0: not given, the whole recorded job */
    const char *store; /* NULL: the rules' own evidence */
} cct_job_weighting;

/* cct_audit_run with gains from w->store when given (opened read-only) and a table. */
cct_status cct_cli_job_audit(const cct_recording *recs, size_t n, const cct_table *table,
                             const cct_job_weighting *w, cct_audit *a, cct_error *err);
/* "for this job the table saves ..." (and the --steps hint), on stdout. */
void cct_cli_print_job(const cct_audit *a, const cct_job_weighting *w);
/* The same line on out, the --steps hint only with steps_hint (`bench` has no --steps). */
void cct_cli_fprint_job(FILE *out, const cct_audit *a, const cct_job_weighting *w, bool steps_hint);
/* ,"job":{...} for a JSON object being written on stdout. */
void cct_cli_print_json_job(const cct_audit *a, const cct_job_weighting *w);

#endif
