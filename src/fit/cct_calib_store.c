/*
 * cct_calib_store.c - topologies for the calibrator from the NCCL logs stored with runs
 * (see cct_calib_store.h).  A store holds one log per run; runs of the same shape (a resumed
 * search, a second search on the same box) give the same topology, so only the first log of
 * each (ranks, nodes) is used.
 */
#include "cct_calib_store.h"

#include <stdio.h>
#include <stdlib.h>

#include "cct_nccl_log.h"

static cct_status add_run_topo(cct_store *store, const char *store_name, int64_t run, int cc,
                               cct_nccl_topo *topos, size_t *n_topos, size_t *n_logs,
                               cct_error *err)
{
    char *text = NULL;
    cct_status st = cct_store_get_nccl_log(store, run, &text, err);
    if (st != CCT_OK || !text)
        return st;
    ++*n_logs;
    char name[512];
    snprintf(name, sizeof name, "%s run %lld (stored NCCL log)", store_name, (long long)run);
    cct_nccl_log *log = malloc(sizeof *log);
    if (!log)
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    else
        st = cct_nccl_log_parse(text, name, log, err);
    free(text);
    if (st != CCT_OK) {
        free(log);
        return st;
    }
    cct_nccl_topo t = log->topo;
    free(log);
    t.cc = cc;
    for (size_t i = 0; i < *n_topos; i++)
        if (topos[i].n_ranks == t.n_ranks && topos[i].n_nodes == t.n_nodes)
            return CCT_OK;
    if (*n_topos >= CCT_CALIB_MAX_TOPOS)
        return cct_error_set(err, CCT_EINVAL, "%s: more than %d topologies to calibrate on", name,
                             CCT_CALIB_MAX_TOPOS);
    topos[(*n_topos)++] = t;
    return CCT_OK;
}

cct_status cct_calib_topos_from_store(cct_store *store, const char *store_name, const int64_t *runs,
                                      size_t n_runs, int cc, cct_nccl_topo *topos, size_t *n_topos,
                                      size_t *n_logs, cct_error *err)
{
    if (!store || !store_name || !topos || !n_topos || !n_logs || (n_runs && !runs))
        return cct_error_set(err, CCT_EINVAL, "cct_calib_topos_from_store: NULL argument");
    cct_status st = CCT_OK;
    if (n_runs) {
        for (size_t i = 0; st == CCT_OK && i < n_runs; i++)
            st = add_run_topo(store, store_name, runs[i], cc, topos, n_topos, n_logs, err);
        return st;
    }
    cct_store_run *all = NULL;
    size_t n_all = 0;
    st = cct_store_list_runs(store, &all, &n_all, err);
    for (size_t i = 0; st == CCT_OK && i < n_all; i++)
        st = add_run_topo(store, store_name, all[i].id, cc, topos, n_topos, n_logs, err);
    free(all);
    return st;
}

cct_status cct_calib_from_store(cct_store *store, const char *store_name, const int64_t *runs,
                                size_t n_runs, int cc, const cct_calib_options *opt,
                                cct_calib_result *res, size_t *n_logs, cct_error *err)
{
    if (!res || !opt || !n_logs)
        return cct_error_set(err, CCT_EINVAL, "cct_calib_from_store: NULL argument");
    *n_logs = 0;
    cct_nccl_topo topos[CCT_CALIB_MAX_TOPOS];
    size_t n_topos = 0;
    cct_status st = cct_calib_topos_from_store(store, store_name, runs, n_runs, cc, topos, &n_topos,
                                               n_logs, err);
    if (st != CCT_OK || *n_logs == 0)
        return st;
    cct_point *points = NULL;
    size_t n_points = 0;
    st = cct_store_load_points(store, runs, n_runs, &points, &n_points, err);
    if (st == CCT_OK)
        st = cct_calibrate(points, n_points, topos, n_topos, opt, res, err);
    free(points);
    return st;
}

bool cct_calib_improves(const cct_calib_result *res)
{
    size_t fitted_default = 0, fitted_calibrated = 0;
    for (size_t i = 0; i < res->n_scores; i++)
        if (!res->scores[i].held_out) {
            fitted_default += res->scores[i].agree_default;
            fitted_calibrated += res->scores[i].agree_calibrated;
        }
    return fitted_calibrated >= fitted_default;
}
