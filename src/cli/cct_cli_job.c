/*
 * cct_cli_job.c - the job weighting lines `audit` and `explain --weights-from` print, and the
 * audit run behind them with gains from a store (cct_cli_job.h).
 */
#include <stdbool.h>
#include <stdio.h>

#include "cct_cli_job.h"
#include "cct_json_write.h"
#include "cct_store_gains.h"

/* Per rank process (the recordings are one per process) and per step when known. */
static double per_unit(const cct_audit *a, const cct_job_weighting *w, double ns)
{
    double n = a->n_recordings ? (double)a->n_recordings : 1.0;
    return ns / n / (w->steps > 0 ? (double)w->steps : 1.0);
}

void cct_cli_fprint_job(FILE *out, const cct_audit *a, const cct_job_weighting *w, bool steps_hint)
{
    double nccl_ns = (double)a->total_ns + a->saved_ns;
    double pct = nccl_ns > 0 ? 100.0 * a->saved_ns / nccl_ns : 0.0;
    fprintf(out,
            "for this job the table saves %.3f ms GPU %s per rank process (%.3f..%.3f), %.1f %% "
            "of its collective time (%.3f ms %s with NCCL's own choices; %zu rank process%s "
            "recorded",
            per_unit(a, w, a->saved_ns) / 1e6, w->steps ? "per step" : "over the recorded job",
            per_unit(a, w, a->saved_lo_ns) / 1e6, per_unit(a, w, a->saved_hi_ns) / 1e6, pct,
            per_unit(a, w, nccl_ns) / 1e6, w->steps ? "per step" : "in all", a->n_recordings,
            a->n_recordings == 1 ? "" : "es");
    if (w->steps)
        fprintf(out, ", %ld steps", w->steps);
    if (w->store)
        fprintf(out,
                "); gains from the measurements in %s at each recorded size (medians, no "
                "interval)\n",
                w->store);
    else
        fprintf(out, "); gains from the rules' measured evidence, each at its reference size\n");
    if (!w->steps && steps_hint)
        fprintf(out, "pass --steps N (the steps the recorded job ran) for the saving per step\n");
}

void cct_cli_print_job(const cct_audit *a, const cct_job_weighting *w)
{
    cct_cli_fprint_job(stdout, a, w, true);
}

void cct_cli_print_json_job(const cct_audit *a, const cct_job_weighting *w)
{
    double nccl_ns = (double)a->total_ns + a->saved_ns;
    printf(",\"job\":{\"processes\":%zu,\"steps\":", a->n_recordings);
    if (w->steps)
        printf("%ld", w->steps);
    else
        printf("null");
    printf(",\"per\":\"%s\",\"saved_ns\":%.0f,\"saved_lo_ns\":%.0f,\"saved_hi_ns\":%.0f,"
           "\"collective_ns\":%.0f,\"nccl_collective_ns\":%.0f,\"saved_pct\":%.3f,"
           "\"gains_from\":",
           w->steps ? "step_per_process" : "job_per_process", per_unit(a, w, a->saved_ns),
           per_unit(a, w, a->saved_lo_ns), per_unit(a, w, a->saved_hi_ns),
           per_unit(a, w, (double)a->total_ns), per_unit(a, w, nccl_ns),
           nccl_ns > 0 ? 100.0 * a->saved_ns / nccl_ns : 0.0);
    if (w->store) {
        printf("{\"store\":");
        cct_json_write_string(stdout, w->store);
        printf("}}");
    } else
        printf("\"table_evidence\"}");
}

/* Run the audit with gains from the table or, with --store, from the store. */
cct_status cct_cli_job_audit(const cct_recording *recs, size_t n, const cct_table *table,
                             const cct_job_weighting *w, cct_audit *a, cct_error *err)
{
    if (!w->store || !table)
        return cct_audit_run(recs, n, table, a, err);
    cct_store *store;
    cct_status st = cct_store_open(w->store, true, &store, err);
    if (st != CCT_OK)
        return st;
    cct_store_gains g;
    st = cct_store_gains_load(store, &g, err);
    cct_store_close(store);
    if (st != CCT_OK)
        return st;
    st = cct_audit_run_gains(recs, n, table, cct_store_gain, &g, a, err);
    cct_store_gains_destroy(&g);
    return st;
}
