/*
 * cct_cli_import_rec.c - `ccltune import RECORDING...` (cct_cli_import_rec.h).
 *
 * All or nothing, like every import: the recordings and the table are read and every
 * point passes the store's checks before the store is opened; then one batch writes the
 * fingerprint, the run (source "production") and its points.  A recording does not say
 * which GPU, links or compute capability it ran on, so the run takes the fingerprint of
 * the newest controlled run in the store with the same NCCL version (then `fit
 * --include-production` can use both together); without one, a fingerprint with what
 * the recordings do say (host, NCCL, ranks and nodes), and the output says which.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cct_cli.h"
#include "cct_cli_import_rec.h"
#include "cct_import_recording.h"
#include "cct_recording_set.h"
#include "cct_search_run.h"
#include "cct_store.h"
#include "cct_table.h"

static const char *const NAME = "import";

bool cct_cli_is_recording(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return true;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char head[32];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return cct_import_is_recording(head, n);
}

/* What the recordings say of the machine. */
static void own_fingerprint(const cct_import_result *r, cct_store_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    snprintf(fp->gpu, sizeof fp->gpu, "unknown (production recording)");
    snprintf(fp->links, sizeof fp->links, "unknown");
    snprintf(fp->nccl, sizeof fp->nccl, "%s", r->nccl_version);
    snprintf(fp->host, sizeof fp->host, "%s", r->host);
    fp->ranks_per_gpu = 1;
    for (size_t k = 0; k < r->n_points; k++) {
        const cct_config *c = &r->points[k].cfg;
        int per_node = (c->ranks + c->nodes - 1) / c->nodes;
        fp->nodes = c->nodes > fp->nodes ? c->nodes : fp->nodes;
        fp->gpus_per_node = per_node > fp->gpus_per_node ? per_node : fp->gpus_per_node;
    }
    snprintf(fp->ll128_reason, sizeof fp->ll128_reason,
             "not known: production recording (run ccltune probe on the machine)");
}

/* The newest controlled run's fingerprint with the same NCCL version; 0 when none. */
static int64_t borrow_fingerprint(cct_store *store, const char *nccl, cct_store_fingerprint *fp,
                                  cct_error *err)
{
    cct_store_run *runs;
    size_t n;
    if (cct_store_list_runs(store, &runs, &n, err) != CCT_OK)
        return -1;
    int64_t from = 0;
    for (size_t i = n; i-- > 0 && !from;) {
        cct_store_fingerprint f;
        if (strcmp(runs[i].source, "production") == 0 ||
            cct_store_get_fingerprint(store, runs[i].fingerprint_id, &f, err) != CCT_OK)
            continue;
        if (strcmp(f.nccl, nccl) == 0) {
            *fp = f;
            from = runs[i].id;
        }
    }
    free(runs);
    return from;
}

/* FNV-1a over the points' keys and times, so importing the same recordings twice shows
 * the same hash. */
static void points_hash(const cct_import_result *r, char out[65])
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < r->n_points; i++) {
        const cct_point *p = &r->points[i];
        char key[160];
        int len = snprintf(key, sizeof key, "%d %d %d %d %d %d %" PRIu64 " %d %.17g;", p->cfg.coll,
                           p->cfg.algo, p->cfg.proto, p->cfg.channels, p->cfg.ranks, p->cfg.nodes,
                           p->bytes, p->stats.n, p->stats.median_us);
        for (int k = 0; k < len && k < (int)sizeof key; k++) {
            h ^= (unsigned char)key[k];
            h *= 1099511628211ull;
        }
    }
    snprintf(out, 65, "recording-fnv1a64-%016" PRIx64, h);
}

static cct_status write_batch(cct_store *store, const cct_store_fingerprint *fp, cct_store_run *run,
                              const cct_import_result *r, cct_error *err)
{
    cct_status st = cct_store_put_fingerprint(store, fp, &run->fingerprint_id, err);
    if (st == CCT_OK)
        st = cct_store_begin_run(store, run, err);
    for (size_t k = 0; k < r->n_points && st == CCT_OK; k++)
        st = cct_store_add_point(store, run->id, &r->points[k], NULL, 0, err);
    if (st == CCT_OK)
        st = cct_store_finish_run(store, run->id, CCT_RUN_DONE, err);
    return st;
}

static int store_points(const cct_rec_import_args *a, const cct_import_result *r, int argc,
                        char **argv)
{
    cct_store *store;
    cct_error err;
    if (cct_store_open(a->store, false, &store, &err) != CCT_OK)
        return cct_cli_fail(NAME, "%s", err.msg);
    cct_store_fingerprint fp;
    int64_t from = borrow_fingerprint(store, r->nccl_version, &fp, &err);
    if (from <= 0)
        own_fingerprint(r, &fp);
    cct_store_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.tool, sizeof run.tool, "ccltune %s", CCT_VERSION);
    snprintf(run.source, sizeof run.source, "production");
    points_hash(r, run.plan_hash);
    cct_search_command_line(argc, argv, run.command, sizeof run.command);
    cct_status st = cct_store_begin_batch(store, &err);
    if (st == CCT_OK) {
        st = write_batch(store, &fp, &run, r, &err);
        st = cct_store_end_batch_with(store, st, &err);
    }
    cct_store_close(store);
    if (st != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        return cct_cli_fail(NAME, "nothing imported: %s is as it was", a->store);
    }
    printf("imported %zu production observations into run %" PRId64 " of %s (source "
           "production: fit leaves them out unless --include-production); machine: ",
           r->n_points, run.id, a->store);
    if (from > 0)
        printf("as run %" PRId64 " (%s, links %s, NCCL %s)\n", from, fp.gpu, fp.links, fp.nccl);
    else
        printf("not known from the recordings (no controlled run of NCCL %s in the store)\n",
               fp.nccl[0] ? fp.nccl : "unknown");
    return CCT_EXIT_OK;
}

static void summarise(size_t n_recs, const cct_import_result *r,
                      const cct_recording_import_summary *s, const char *table)
{
    printf("%zu recording%s: %llu calls -> %zu points: %zu of NCCL's own choices, %zu of the "
           "table's rules%s, %zu of another configuration than the rule asked",
           n_recs, n_recs == 1 ? "" : "s", (unsigned long long)s->calls, r->n_points,
           s->default_points, s->tabled_points, table ? "" : " (no --table)", s->other_points);
    if (s->untimed_calls)
        printf("; %llu calls without GPU time not stored", (unsigned long long)s->untimed_calls);
    if (s->skipped_calls)
        printf("; %llu calls of collectives a tuner is never asked about not stored",
               (unsigned long long)s->skipped_calls);
    printf("\n");
}

/* Every point through the store's checks, before anything is written. */
static int check_points(const cct_rec_import_args *a, const cct_import_result *r)
{
    for (size_t k = 0; k < r->n_points; k++) {
        cct_error err;
        if (cct_store_check_point(a->store, &r->points[k], NULL, 0, &err) != CCT_OK) {
            cct_cli_fail(NAME, "%s", err.msg);
            return cct_cli_fail(NAME, "nothing imported");
        }
    }
    return CCT_EXIT_OK;
}

static int convert(const cct_rec_import_args *a, const cct_recording_set *set,
                   const cct_table *table, int argc, char **argv)
{
    cct_import_result r;
    cct_import_result_init(&r);
    cct_recording_import_summary sum;
    cct_error err;
    int rc = CCT_EXIT_OK;
    if (cct_import_recordings(set->recs, set->n, table, &r, &sum, &err) != CCT_OK)
        rc = cct_cli_fail(NAME, "%s", err.msg);
    if (rc == CCT_EXIT_OK && a->nccl && r.nccl_version[0] && strcmp(r.nccl_version, a->nccl))
        rc = cct_cli_fail(NAME, "the recordings ran NCCL %s but --nccl %s was given",
                          r.nccl_version, a->nccl);
    if (rc == CCT_EXIT_OK && a->nccl)
        snprintf(r.nccl_version, sizeof r.nccl_version, "%s", a->nccl);
    if (rc == CCT_EXIT_OK && r.n_points == 0)
        rc = cct_cli_fail(NAME, "the recordings hold no timed calls of a collective a tuner "
                                "is asked about: nothing to import");
    if (rc == CCT_EXIT_OK)
        rc = check_points(a, &r);
    if (rc == CCT_EXIT_OK) {
        summarise(set->n, &r, &sum, a->table);
        if (a->dry_run)
            printf("dry run: nothing written to %s\n", a->store);
        else
            rc = store_points(a, &r, argc, argv);
    }
    cct_import_result_destroy(&r);
    return rc;
}

int cct_cli_import_recordings(const cct_rec_import_args *a, char **paths, int n, int argc,
                              char **argv)
{
    cct_recording_set set;
    cct_error err;
    if (cct_recording_set_load((const char *const *)paths, (size_t)n, &set, &err) != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        return cct_cli_fail(NAME, "nothing imported");
    }
    cct_table table;
    int rc;
    if (a->table && cct_table_load_file(a->table, &table, &err) != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        rc = cct_cli_fail(NAME, "nothing imported");
    } else {
        rc = convert(a, &set, a->table ? &table : NULL, argc, argv);
        if (a->table)
            cct_table_destroy(&table);
    }
    cct_recording_set_destroy(&set);
    return rc;
}
