/*
 * cct_nccltests_run.c - resolving one nccl-tests run into cct_points (see
 * cct_nccltests_run.h).
 *
 * Each dimension has an order of authority, strongest first, and any two sources that
 * both speak must agree:
 *   collective  --coll, the program name ("# Collective test starting: all_reduce_perf")
 *   ranks       --ranks, NCCL's "nRanks" INFO line, the "# Rank N ..." lines
 *   nodes       --nodes, NCCL's "nNodes" INFO line, distinct host names in the rank lines
 *               (not when NCCL_HOSTID was set: then NCCL's nodes need not be hosts)
 *   algo/proto  --algo/--proto, NCCL_ALGO/NCCL_PROTO (cct_nccl_env.c), else NCCL's default
 * What NCCL actually ran for a default configuration comes from its TUNING lines
 * (nccl_algo/nccl_proto of each point), when the log has them.
 */
#include "cct_nccltests_run.h"

#include "cct_facts.h"
#include "cct_grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_check.h"
#include "cct_table.h"

#define MAX_TUNING 1024

void cct_nt_run_init(cct_nt_run *run, unsigned line)
{
    memset(run, 0, sizeof *run);
    run->line = line;
    run->col = 1;
    run->coll = -1;
    cct_nccl_env_init(&run->env);
}

void cct_nt_run_destroy(cct_nt_run *run)
{
    for (size_t i = 0; i < run->n_rows; i++)
        for (int s = 0; s < 2; s++)
            free(run->rows[i].side[s].samples);
    for (size_t i = 0; i < run->n_hosts; i++)
        free(run->hosts[i]);
    for (size_t i = 0; i < run->n_gpu_ids; i++)
        free(run->gpu_ids[i]);
    free(run->gpu_ids);
    free(run->rows);
    free(run->hosts);
    free(run->rank_ids);
    free(run->tuning);
    memset(run, 0, sizeof *run);
}

/* nccl-tests programs that measure what NCCL's tuner never sees. */
static const char *const untunable[] = {"alltoall", "alltoallv", "sendrecv",
                                        "gather",   "scatter",   "hypercube"};

/* "broadcast, reduce, all_gather, reduce_scatter and all_reduce": the nccl-tests programs
 * of the collectives ccltune knows (cct_facts.c), for messages. */
static const char *known_programs(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < CCT_NUM_COLLS && used < len; c++) {
        const char *sep = c == 0 ? "" : c + 1 == CCT_NUM_COLLS ? " and " : ", ";
        int n = snprintf(buf + used, len - used, "%s%s", sep, cct_coll_facts_of(c)->tests_stem);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

cct_status cct_nt_run_set_program(cct_nt_run *run, const char *program, const char *name,
                                  unsigned line, unsigned col, cct_error *err)
{
    const char *base = program;
    for (const char *p = program; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    const char *perf = strstr(base, "_perf");
    size_t n = perf ? (size_t)(perf - base) : 0;
    char stem[32];
    if (!perf || n == 0 || n >= sizeof stem)
        return cct_error_at(err, CCT_EINVAL, name, line, col,
                            "'%.64s' is not an nccl-tests program (they are named like "
                            "all_reduce_perf)",
                            base);
    memcpy(stem, base, n);
    stem[n] = '\0';
    int coll = cct_coll_from_name(stem);
    if (coll < 0) {
        for (size_t i = 0; i < sizeof untunable / sizeof untunable[0]; i++)
            if (strcmp(stem, untunable[i]) == 0) {
                char known[256];
                return cct_error_at(err, CCT_EUNSUPPORTED, name, line, col,
                                    "%s_perf measures %s, which NCCL's tuner does not choose "
                                    "for; ccltune imports %s",
                                    stem, stem, known_programs(known, sizeof known));
            }
        return cct_error_at(err, CCT_EINVAL, name, line, col,
                            "'%.64s' is not an nccl-tests program ccltune knows", base);
    }
    run->coll = coll;
    run->coll_line = line;
    run->coll_col = col;
    return CCT_OK;
}

cct_status cct_nt_run_add_rank(cct_nt_run *run, int rank, const char *host, const char *gpu,
                               cct_error *err)
{
    if (!cct_grow((void **)&run->rank_ids, &run->cap_rank_ids, run->n_rank_ids + 1,
                  sizeof *run->rank_ids))
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    run->rank_ids[run->n_rank_ids++] = rank;
    if (gpu[0]) {
        if (!cct_grow((void **)&run->gpu_ids, &run->cap_gpu_ids, run->n_gpu_ids + 1,
                      sizeof *run->gpu_ids))
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
        size_t n = strlen(host) + strlen(gpu) + 2;
        char *id = malloc(n);
        if (!id)
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
        snprintf(id, n, "%s %s", host, gpu);
        run->gpu_ids[run->n_gpu_ids++] = id;
    }
    if (run->n_hosts > 0 && strcmp(run->hosts[run->n_hosts - 1], host) == 0)
        return CCT_OK;
    if (!cct_grow((void **)&run->hosts, &run->cap_hosts, run->n_hosts + 1, sizeof *run->hosts))
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    char *copy = strdup(host);
    if (!copy)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    run->hosts[run->n_hosts++] = copy;
    return CCT_OK;
}

cct_status cct_nt_run_add_row(cct_nt_run *run, cct_nt_row *row, cct_error *err)
{
    if (!cct_grow((void **)&run->rows, &run->cap_rows, run->n_rows + 1, sizeof *run->rows)) {
        free(row->side[0].samples);
        free(row->side[1].samples);
        row->side[0].samples = row->side[1].samples = NULL;
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    run->rows[run->n_rows++] = *row;
    return CCT_OK;
}

void cct_nt_run_add_tuning(cct_nt_run *run, int coll, uint64_t bytes, int algo, int proto)
{
    /* consecutive lines almost always repeat the last size: check it first */
    size_t n = run->n_tuning;
    for (size_t k = 0; k < n; k++) {
        size_t i = (run->last_tuning + k) % n;
        cct_nt_tuning *t = &run->tuning[i];
        if (t->coll == coll && t->bytes == bytes) {
            t->mixed |= t->algo != algo || t->proto != proto;
            run->last_tuning = i;
            return;
        }
    }
    if (n >= MAX_TUNING ||
        !cct_grow((void **)&run->tuning, &run->cap_tuning, n + 1, sizeof *run->tuning))
        return;
    run->tuning[n] = (cct_nt_tuning){coll, bytes, algo, proto, false};
    run->last_tuning = n;
    run->n_tuning++;
}

void cct_nt_version_from_code(long code, char *buf, size_t len)
{
    if (code >= 10000)
        snprintf(buf, len, "%ld.%ld.%ld", code / 10000, code % 10000 / 100, code % 100);
    else if (code > 0)
        snprintf(buf, len, "%ld.%ld.%ld", code / 1000, code % 1000 / 100, code % 100);
    else if (len)
        buf[0] = '\0';
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ranks the log lists, 0 when it lists none; an error when the list has gaps or repeats. */
static cct_status listed_ranks(const cct_nt_run *run, const char *name, int *out, cct_error *err)
{
    *out = 0;
    if (run->n_rank_ids == 0 || run->ranks_truncated)
        return CCT_OK;
    if (run->n_rank_ids > CCT_TABLE_MAX_RANKS)
        return cct_error_at(err, CCT_EINVAL, name, run->ranks_line, run->ranks_col,
                            "more than %d rank lines", CCT_TABLE_MAX_RANKS);
    int *ids = malloc(run->n_rank_ids * sizeof *ids);
    if (!ids)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    memcpy(ids, run->rank_ids, run->n_rank_ids * sizeof *ids);
    qsort(ids, run->n_rank_ids, sizeof *ids, cmp_int);
    cct_status rc = CCT_OK;
    for (size_t i = 0; i < run->n_rank_ids && rc == CCT_OK; i++)
        if (ids[i] != (int)i)
            rc = cct_error_at(err, CCT_EINVAL, name, run->ranks_line, run->ranks_col,
                              "the rank lines of this run do not list ranks 0..%zu once each "
                              "(rank %d %s)",
                              run->n_rank_ids - 1, ids[i] < (int)i ? ids[i] : (int)i,
                              ids[i] < (int)i ? "repeats" : "is missing");
    free(ids);
    if (rc == CCT_OK)
        *out = (int)run->n_rank_ids;
    return rc;
}

static cct_status distinct_hosts(const cct_nt_run *run, int *out, cct_error *err)
{
    *out = 0;
    if (run->n_hosts == 0 || run->ranks_truncated)
        return CCT_OK;
    char **copy = malloc(run->n_hosts * sizeof *copy);
    if (!copy)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    memcpy(copy, run->hosts, run->n_hosts * sizeof *copy);
    qsort(copy, run->n_hosts, sizeof *copy, cmp_str);
    int n = 1;
    for (size_t i = 1; i < run->n_hosts; i++)
        n += strcmp(copy[i - 1], copy[i]) != 0;
    free(copy);
    *out = n;
    return CCT_OK;
}

/* The most ranks listed on one GPU (the same host and bus id), 0 when not known. */
static cct_status ranks_per_gpu(const cct_nt_run *run, int *out, cct_error *err)
{
    *out = 0;
    if (run->n_gpu_ids == 0 || run->n_gpu_ids != run->n_rank_ids || run->ranks_truncated)
        return CCT_OK;
    char **copy = malloc(run->n_gpu_ids * sizeof *copy);
    if (!copy)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    memcpy(copy, run->gpu_ids, run->n_gpu_ids * sizeof *copy);
    qsort(copy, run->n_gpu_ids, sizeof *copy, cmp_str);
    int best = 1, same = 1;
    for (size_t i = 1; i < run->n_gpu_ids; i++) {
        same = strcmp(copy[i - 1], copy[i]) == 0 ? same + 1 : 1;
        if (same > best)
            best = same;
    }
    free(copy);
    *out = best;
    return CCT_OK;
}

static cct_status resolve_coll(const cct_nt_run *run, const char *name, const cct_import_opts *opts,
                               int *coll, cct_error *err)
{
    if (opts->coll != CCT_IMPORT_FROM_INPUT) {
        if (run->coll >= 0 && run->coll != opts->coll)
            return cct_error_at(err, CCT_EINVAL, name, run->coll_line, run->coll_col,
                                "the log measured %s but --coll %s was given",
                                cct_coll_name(run->coll), cct_coll_name(opts->coll));
        *coll = opts->coll;
        return CCT_OK;
    }
    if (run->coll < 0)
        return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                            "this run does not name its collective (nccl-tests before 2.17 "
                            "prints no \"# Collective test starting\" line): pass --coll");
    *coll = run->coll;
    return CCT_OK;
}

static cct_status resolve_ranks(const cct_nt_run *run, const char *name,
                                const cct_import_opts *opts, int *ranks, cct_error *err)
{
    int listed;
    cct_status rc = listed_ranks(run, name, &listed, err);
    if (rc != CCT_OK)
        return rc;
    /* every process lists nThread x nGpus ranks */
    long per_process = (long)run->threads * run->gpus;
    if (listed && per_process > 0 && listed % per_process != 0)
        return cct_error_at(err, CCT_EINVAL, name, run->ranks_line, run->ranks_col,
                            "the log lists %d ranks, not a multiple of nThread x nGpus = %ld: "
                            "rank lines are missing",
                            listed, per_process);
    if (listed && run->nccl_ranks && listed != run->nccl_ranks)
        return cct_error_at(err, CCT_EINVAL, name, run->nccl_line, run->nccl_col,
                            "NCCL reports nRanks %d but the log lists %d ranks", run->nccl_ranks,
                            listed);
    int known = run->nccl_ranks ? run->nccl_ranks : listed;
    if (opts->ranks != CCT_IMPORT_FROM_INPUT) {
        if (known && known != opts->ranks)
            return cct_error_at(
                err, CCT_EINVAL, name, run->nccl_ranks ? run->nccl_line : run->ranks_line,
                run->nccl_ranks ? run->nccl_col : run->ranks_col,
                "the log shows %d ranks but --ranks %d was given", known, opts->ranks);
        *ranks = opts->ranks;
        return CCT_OK;
    }
    if (!known)
        return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                            "cannot tell how many ranks this run had (no complete \"# Rank\" "
                            "lines): pass --ranks");
    *ranks = known;
    return CCT_OK;
}

static cct_status resolve_nodes(const cct_nt_run *run, const char *name,
                                const cct_import_opts *opts, int ranks, int *nodes, cct_error *err)
{
    if (opts->nodes != CCT_IMPORT_FROM_INPUT) {
        if (run->nccl_nodes && run->nccl_nodes != opts->nodes)
            return cct_error_at(err, CCT_EINVAL, name, run->nccl_line, run->nccl_col,
                                "NCCL reports nNodes %d but --nodes %d was given", run->nccl_nodes,
                                opts->nodes);
        *nodes = opts->nodes;
    } else if (run->nccl_nodes) {
        *nodes = run->nccl_nodes;
    } else if (run->env.hostid) {
        return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                            "NCCL_HOSTID is set, so NCCL's node count need not match the host "
                            "names, and the log has no NCCL \"nNodes\" line: pass --nodes");
    } else {
        int hosts;
        cct_status rc = distinct_hosts(run, &hosts, err);
        if (rc != CCT_OK)
            return rc;
        if (!hosts)
            return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                                "cannot tell how many nodes this run had (no complete \"# "
                                "Rank\" lines): pass --nodes");
        *nodes = hosts;
    }
    if (*nodes > ranks)
        return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                            "%d nodes for %d ranks: a node has at least one rank", *nodes, ranks);
    return CCT_OK;
}

/* What NCCL's TUNING lines say it ran at this size, -1/-1 when they do not say. */
static void nccl_choice(const cct_nt_run *run, int coll, int ranks, uint64_t size, int *algo,
                        int *proto)
{
    *algo = *proto = -1;
    uint64_t per = cct_coll_per_rank(coll) ? (uint64_t)ranks : 1;
    for (size_t i = 0; i < run->n_tuning; i++) {
        const cct_nt_tuning *t = &run->tuning[i];
        if (t->coll != coll || t->mixed || t->bytes > UINT64_MAX / per || t->bytes * per != size)
            continue;
        *algo = t->algo;
        *proto = t->proto;
        return;
    }
}

/* nccl-tests computes busbw = algbw * factor(collective, ranks).  Where algbw has enough
 * digits (>= 1 GB/s, two decimals), a factor that does not fit the reported pair means
 * the collective or the rank count this import assumes is not the one measured. */
static cct_status check_busbw(const cct_nt_run *run, const char *name, const cct_config *cfg,
                              cct_error *err)
{
    double f = cct_busbw_factor(cfg->coll, cfg->ranks);
    for (size_t r = 0; r < run->n_rows; r++)
        for (int s = 0; s < 2; s++) {
            const cct_nt_side *side = &run->rows[r].side[s];
            if (!side->present || !(side->algbw >= 1.0) || !isfinite(side->busbw))
                continue;
            double expect = side->algbw * f;
            if (fabs(side->busbw - expect) <= 0.03 * expect + 0.01)
                continue;
            return cct_error_at(err, CCT_EINVAL, name, run->rows[r].line, run->rows[r].col,
                                "busbw %.2f is %.3f x algbw %.2f, but %s on %d ranks has factor "
                                "%.3f: the collective or the rank count is not the one measured",
                                side->busbw, side->busbw / side->algbw, side->algbw,
                                cct_coll_name(cfg->coll), cfg->ranks, f);
        }
    return CCT_OK;
}

/* One row's numbers against each other (cct_import_check.h): its size fits the store, its
 * count makes its size, and each half's time agrees with size / algbw and is not absurd. */
static cct_status check_row(const cct_nt_row *row, const char *name, const cct_config *cfg,
                            cct_error *err)
{
    if (row->size > CCT_IMPORT_MAX_BYTES)
        return cct_error_at(err, CCT_EINVAL, name, row->size_line, row->size_col,
                            "size %llu is above 2^63 - 1 bytes, the most a measurement can "
                            "have (the store cannot hold it)",
                            (unsigned long long)row->size);
    if (row->has_count &&
        !cct_import_count_fits(cfg->coll, cfg->ranks, row->dtype, row->size, row->count)) {
        unsigned long long bytes = (unsigned long long)row->count * cct_dtype_size(row->dtype);
        return cct_error_at(err, CCT_EINVAL, name, row->count_line, row->count_col,
                            "count %llu %s is %llu B, but the row says size %llu (%s on %d "
                            "ranks): the row contradicts itself",
                            (unsigned long long)row->count, cct_dtype_name(row->dtype), bytes,
                            (unsigned long long)row->size, cct_coll_name(cfg->coll), cfg->ranks);
    }
    for (int s = 0; s < 2; s++) {
        const cct_nt_side *side = &row->side[s];
        if (!side->present)
            continue;
        if (isfinite(side->algbw) && !cct_import_time_fits(row->size, side->time_us, side->time_res,
                                                           side->algbw, side->algbw_res))
            return cct_error_at(err, CCT_EINVAL, name, side->time_line, side->time_col,
                                "time %g us contradicts the row: size %llu B at algbw %g GB/s "
                                "takes %.3g us",
                                side->time_us, (unsigned long long)row->size, side->algbw,
                                side->algbw > 0 ? (double)row->size / (side->algbw * 1e3)
                                                : INFINITY);
        if (side->time_us > CCT_IMPORT_MAX_TIME_US)
            return cct_error_at(err, CCT_EINVAL, name, side->time_line, side->time_col,
                                "time %g us is more than 1e12 us (11.6 days): not a measurement",
                                side->time_us);
    }
    return CCT_OK;
}

cct_status cct_nt_run_finish(const cct_nt_run *run, const char *name, const cct_import_opts *opts,
                             cct_import_result *result, cct_error *err)
{
    if (run->n_rows == 0)
        return cct_error_at(err, CCT_EINVAL, name, run->line, run->col,
                            "this run has no data rows (did it fail?)");
    cct_config cfg = {0};
    cct_status rc = resolve_coll(run, name, opts, &cfg.coll, err);
    if (rc == CCT_OK)
        rc = resolve_ranks(run, name, opts, &cfg.ranks, err);
    if (rc == CCT_OK)
        rc = resolve_nodes(run, name, opts, cfg.ranks, &cfg.nodes, err);
    for (size_t r = 0; r < run->n_rows && rc == CCT_OK; r++)
        rc = check_row(&run->rows[r], name, &cfg, err);
    if (rc == CCT_OK)
        rc = check_busbw(run, name, &cfg, err);
    if (rc == CCT_OK)
        rc = cct_nccl_env_apply(&run->env, opts, name, &cfg, err);
    if (rc != CCT_OK)
        return rc;
    for (size_t r = 0; r < run->n_rows && rc == CCT_OK; r++) {
        const cct_nt_row *row = &run->rows[r];
        cct_point p = {0};
        p.cfg = cfg;
        p.cfg.dtype = row->dtype;
        /* -u counts elements; the offset from 4 KiB alignment is what matters to NCCL */
        uint64_t off = (uint64_t)run->unalign % 4096 * cct_dtype_size(row->dtype);
        p.cfg.align = (unsigned)(off % 4096);
        p.bytes = row->size;
        nccl_choice(run, cfg.coll, cfg.ranks, row->size, &p.nccl_algo, &p.nccl_proto);
        if (cfg.algo != CCT_DEFAULT)
            p.nccl_algo = cfg.algo;
        if (cfg.proto != CCT_DEFAULT)
            p.nccl_proto = cfg.proto;
        for (int s = 0; s < 2 && rc == CCT_OK; s++) {
            const cct_nt_side *side = &row->side[s];
            if (!side->present)
                continue;
            p.in_place = s == 1;
            p.stats = (cct_stats){
                .n =
                    side->n_samples ? (int)side->n_samples : (row->iters ? row->iters : run->iters),
                .median_us = side->time_us,
                .mean_us = side->time_us,
                .p95_us = side->p95_us,
                .min_us = side->min_us,
                .max_us = side->max_us,
                .cv = side->cv,
            };
            p.wrong = side->checked ? side->wrong : 0;
            p.status = p.wrong > 0 ? CCT_POINT_CORRUPT : CCT_POINT_OK;
            rc = cct_import_add_point(result, &p, row->line, row->col, side->samples,
                                      side->n_samples, err);
        }
    }
    int per_gpu = 0;
    if (rc == CCT_OK)
        rc = ranks_per_gpu(run, &per_gpu, err);
    if (rc != CCT_OK)
        return rc;
    result->runs++;
    if (per_gpu > result->ranks_per_gpu)
        result->ranks_per_gpu = per_gpu;
    if (!result->gpu[0])
        snprintf(result->gpu, sizeof result->gpu, "%s", run->gpu);
    if (!result->host[0] && run->n_hosts)
        snprintf(result->host, sizeof result->host, "%s", run->hosts[0]);
    if (!result->nccl_version[0])
        snprintf(result->nccl_version, sizeof result->nccl_version, "%s", run->nccl_version);
    return CCT_OK;
}
