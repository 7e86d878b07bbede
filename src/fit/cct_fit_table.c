/*
 * cct_fit_table.c - from a measurement store to a finished table: select runs, load their
 * points, build every section (cct_decide), and fill provenance and fingerprint.
 *
 * Determinism is the rule that shapes this file: the same store and runs always give the
 * same bytes, so `created` is the time the newest selected run finished (not "now"), runs
 * are listed in id order, and everything else comes from the points.  Runs measured on
 * different machines or topologies are refused together: one table describes one box.
 */
#include "cct_fit_table.h"

#include "cct_argmin.h"
#include "cct_cycles.h"
#include "cct_probe_links.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
    return (s && *s) ? strdup(s) : NULL;
}

void cct_fit_table_options_default(cct_fit_table_options *o)
{
    memset(o, 0, sizeof *o);
    cct_decide_options_default(&o->decide);
    o->ll128 = -1;
}

static bool same_fingerprint(const cct_store_fingerprint *a, const cct_store_fingerprint *b)
{
    return strcmp(a->gpu, b->gpu) == 0 && a->cc == b->cc && a->gpus_per_node == b->gpus_per_node &&
           a->nodes == b->nodes && a->ranks_per_gpu == b->ranks_per_gpu &&
           strcmp(a->links, b->links) == 0 && strcmp(a->nccl, b->nccl) == 0;
}

/* A run of production observations (`import RECORDING`): job conditions, not a controlled
 * measurement. */
static bool is_production(const cct_store_run *r)
{
    return strcmp(r->source, "production") == 0;
}

/* Which runs feed the fit: the listed ones, or every run; a run marked failed stopped on an
 * error, so it is used only when the options say so (and listing it without is an error);
 * likewise production observations.  left_out[0] counts failed runs, [1] production runs
 * left out. */
static cct_status pick_runs(const cct_store_run *runs, size_t n, const cct_fit_table_options *o,
                            int64_t *sel, size_t *k, size_t left_out[2], cct_error *err)
{
    *k = 0;
    left_out[0] = left_out[1] = 0;
    for (size_t i = 0; i < n; i++) {
        bool listed = false;
        for (size_t j = 0; j < o->n_runs; j++)
            listed |= runs[i].id == o->runs[j];
        bool failed = runs[i].state == CCT_RUN_FAILED && !o->include_failed;
        bool production = is_production(&runs[i]) && !o->include_production;
        if (failed && listed)
            return cct_error_set(err, CCT_EINVAL,
                                 "run %lld is marked failed (it stopped on an error, so its "
                                 "points may be incomplete): pass --include-failed to fit it "
                                 "anyway",
                                 (long long)runs[i].id);
        if (production && listed)
            return cct_error_set(err, CCT_EINVAL,
                                 "run %lld holds production observations (ccltune import of "
                                 "recordings), not controlled measurements: pass "
                                 "--include-production to fit it",
                                 (long long)runs[i].id);
        if ((failed || production) && o->n_runs == 0)
            left_out[failed ? 0 : 1]++;
        else if (listed || o->n_runs == 0)
            sel[(*k)++] = runs[i].id;
    }
    for (size_t j = 0; j < o->n_runs; j++) {
        bool found = false;
        for (size_t i = 0; i < *k; i++)
            found |= sel[i] == o->runs[j];
        if (!found)
            return cct_error_set(err, CCT_ENOTFOUND, "the store has no run %lld",
                                 (long long)o->runs[j]);
    }
    if (*k == 0 && left_out[0] > 0)
        return cct_error_set(err, CCT_ENOTFOUND,
                             "every run in the store is marked failed (%zu): pass "
                             "--include-failed to fit them anyway",
                             left_out[0]);
    if (*k == 0 && left_out[1] > 0)
        return cct_error_set(err, CCT_ENOTFOUND,
                             "the store holds only production observations (%zu runs): pass "
                             "--include-production to fit them",
                             left_out[1]);
    if (*k == 0)
        return cct_error_set(err, CCT_ENOTFOUND, "the store holds no runs");
    return CCT_OK;
}

cct_status cct_fit_table_runs(cct_store *store, const cct_fit_table_options *o, int64_t **ids,
                              size_t *n_ids, cct_error *err)
{
    cct_store_run *runs = NULL;
    size_t n = 0, left_out[2];
    cct_status st = cct_store_list_runs(store, &runs, &n, err);
    if (st != CCT_OK)
        return st;
    *ids = calloc(n ? n : 1, sizeof **ids);
    if (!*ids)
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    else
        st = pick_runs(runs, n, o, *ids, n_ids, left_out, err);
    free(runs);
    if (st != CCT_OK) {
        free(*ids);
        *ids = NULL;
    }
    return st;
}

static cct_status select_runs(cct_store *store, const cct_fit_table_options *o, int64_t **ids,
                              size_t *n_ids, size_t left_out[2], cct_store_fingerprint *fp,
                              char *created, size_t created_len, char *source, size_t source_len,
                              cct_error *err)
{
    cct_store_run *runs = NULL;
    size_t n = 0;
    cct_status st = cct_store_list_runs(store, &runs, &n, err);
    if (st != CCT_OK)
        return st;
    int64_t *sel = calloc(n ? n : 1, sizeof *sel);
    size_t k = 0;
    if (!sel) {
        free(runs);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    st = pick_runs(runs, n, o, sel, &k, left_out, err);
    if (st != CCT_OK) {
        free(runs);
        free(sel);
        return st;
    }
    created[0] = '\0';
    source[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        bool in = false;
        for (size_t j = 0; j < k; j++)
            in |= sel[j] == runs[i].id;
        if (!in)
            continue;
        cct_store_fingerprint f;
        st = cct_store_get_fingerprint(store, runs[i].fingerprint_id, &f, err);
        if (st != CCT_OK)
            break;
        if (created[0] == '\0') {
            *fp = f;
            snprintf(source, source_len, "%s", runs[i].source);
        } else if (!same_fingerprint(fp, &f)) {
            st =
                cct_error_set(err, CCT_EINVAL,
                              "run %lld was measured on another machine or topology (%s, %d "
                              "ranks per GPU, links %s, NCCL %s) than the first selected run "
                              "(%s, %d, %s, %s); a table describes one box: choose runs with --run",
                              (long long)runs[i].id, f.gpu, f.ranks_per_gpu, f.links, f.nccl,
                              fp->gpu, fp->ranks_per_gpu, fp->links, fp->nccl);
            break;
        }
        const char *when = runs[i].finished[0] ? runs[i].finished : runs[i].started;
        if (strcmp(when, created) > 0)
            snprintf(created, created_len, "%s", when);
    }
    free(runs);
    if (st != CCT_OK) {
        free(sel);
        return st;
    }
    *ids = sel;
    *n_ids = k;
    return CCT_OK;
}

/* Whether text, lines separated by '\n', has a line equal to line. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; *p;) {
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return true;
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return false;
}

/* The measuring commands of the selected runs as the store recorded them, each distinct one
 * once, one per line, in run order ("" when none is recorded). */
static void runs_command(cct_store *store, const int64_t *ids, size_t n, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        cct_store_run run;
        cct_error ignored;
        if (cct_store_get_run(store, ids[i], &run, &ignored) != CCT_OK || !run.command[0] ||
            has_line(out, run.command))
            continue;
        size_t used = strlen(out);
        if (used + strlen(run.command) + 2 < len)
            snprintf(out + used, len - used, "%s%s", used ? "\n" : "", run.command);
    }
}

static const char *table_source(const char *run_source)
{
    if (strcmp(run_source, "search") == 0)
        return "measured";
    if (strcmp(run_source, "replay") == 0)
        return "replayed";
    return "imported";
}

/* The link matrix of the newest selected run that has one, in the table's few figures
 * (cct_links_summarize); no run with one leaves the table without (so a store from before
 * schema 4 gives the same bytes as ever).  A stored matrix that does not read is an error:
 * the search checked it before storing it. */
static cct_status fit_links(cct_store *store, const int64_t *ids, size_t n, cct_table *t,
                            cct_error *err)
{
    for (size_t i = n; i-- > 0;) {
        char *json = NULL;
        cct_status st = cct_store_get_links(store, ids[i], &json, err);
        if (st != CCT_OK)
            return st;
        if (!json)
            continue;
        cct_links *l = malloc(sizeof *l);
        char name[64];
        snprintf(name, sizeof name, "run %lld's link matrix", (long long)ids[i]);
        st = l ? cct_links_parse(json, strlen(json), name, l, NULL, err)
               : cct_error_set(err, CCT_ENOMEM, "out of memory");
        if (st == CCT_OK)
            st = cct_links_summarize(l, (int)ids[i], &t->link_matrix, err);
        free(l);
        free(json);
        return st;
    }
    return CCT_OK;
}

cct_status cct_fit_table_from_store(cct_store *store, const cct_fit_table_options *o,
                                    cct_table *table, cct_fit_table_summary *summary,
                                    cct_error *err)
{
    int64_t *ids = NULL;
    size_t n_ids = 0;
    cct_store_fingerprint fp;
    char created[32], source[32];
    size_t left_out[2] = {0, 0};
    cct_status st = select_runs(store, o, &ids, &n_ids, left_out, &fp, created, sizeof created,
                                source, sizeof source, err);
    if (st != CCT_OK)
        return st;
    cct_point *points = NULL;
    size_t n = 0;
    st = cct_store_load_points(store, ids, n_ids, &points, &n, err);
    if (st != CCT_OK) {
        free(ids);
        return st;
    }
    if (fp.cc <= 0 && o->cc <= 0) {
        free(points);
        free(ids);
        return cct_error_set(err, CCT_EINVAL,
                             "the runs do not record the GPU's compute capability (imported logs "
                             "do not say it): pass --cc X.Y (9.0 for an H100 or H200)");
    }
    if (o->cc > 0)
        fp.cc = o->cc;
    cct_decide_options dopt = o->decide;
    dopt.ll128_allowed = o->ll128 >= 0 ? o->ll128 != 0 : fp.ll128_allowed;
    cct_cycles cycles;
    cct_cycles_init(&cycles);
    if (!o->no_cycles && !o->argmin &&
        (st = cct_cycles_load(store, ids, n_ids, &cycles, err)) != CCT_OK) {
        cct_cycles_free(&cycles);
        free(points);
        free(ids);
        return st;
    }
    if (cycles.n > 0)
        dopt.cycles = &cycles; /* imported runs store statistics without samples */
    cct_table_init(table);
    char runs_text[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n_ids && used + 24 < sizeof runs_text; i++) {
        int w = snprintf(runs_text + used, sizeof runs_text - used, "%s%lld", i ? "," : "",
                         (long long)ids[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    char tool[64];
    snprintf(tool, sizeof tool, "ccltune %s", CCT_VERSION);
    char cc[16];
    table->provenance.tool = strdup(tool);
    table->provenance.created = strdup(created);
    table->provenance.nccl = dup_or_null(fp.nccl);
    table->provenance.source = strdup(table_source(source));
    table->provenance.runs = strdup(runs_text);
    table->provenance.note = dup_or_null(o->note);
    char command[4096];
    runs_command(store, ids, n_ids, command, sizeof command);
    table->provenance.command = dup_or_null(command);
    table->fingerprint.gpu = strdup(fp.gpu);
    table->fingerprint.cc = fp.cc;
    table->fingerprint.gpus_per_node = fp.gpus_per_node > 0 ? fp.gpus_per_node : 1;
    table->fingerprint.nodes = fp.nodes > 0 ? fp.nodes : 1;
    table->fingerprint.ranks_per_gpu = fp.ranks_per_gpu > 0 ? fp.ranks_per_gpu : 1;
    table->fingerprint.links = strdup(fp.links[0] ? fp.links : "unknown"); /* imports: not said */
    table->fingerprint.nccl = strdup(fp.nccl[0] ? fp.nccl : "unknown");
    table->fingerprint.cuda = dup_or_null(fp.cuda);
    table->fingerprint.nccl_versions = dup_or_null(o->nccl_versions);
    table->ll128_allowed = dopt.ll128_allowed;
    table->ll128_reason =
        strdup(o->ll128 >= 0 ? (o->ll128 ? "forced on by --ll128 yes" : "forced off by --ll128 no")
                             : fp.ll128_reason);
    (void)cc;
    if (!table->provenance.tool || !table->provenance.created || !table->provenance.source ||
        !table->provenance.runs || !table->fingerprint.gpu || !table->fingerprint.links ||
        !table->fingerprint.nccl || !table->ll128_reason) {
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    } else {
        size_t skipped = 0, n_plain = 0, keyed = 0;
        /* plain calls first (the sections every call falls back to), then the sections keyed
         * by numPipeOps/regBuff where grouped or registered calls decide otherwise */
        cct_point *plain = malloc(sizeof *plain * (n ? n : 1));
        if (!plain)
            st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        for (size_t i = 0; plain && i < n; i++)
            if (cct_point_is_plain_call(&points[i]))
                plain[n_plain++] = points[i];
        if (st == CCT_OK && o->argmin)
            st = cct_build_argmin_table(plain, n_plain, dopt.ll128_allowed, table, err);
        else if (st == CCT_OK)
            st = cct_build_table_counted(plain, n_plain, &dopt, table, &skipped, err);
        if (st == CCT_OK && n_plain < n && !o->argmin)
            st = cct_build_mode_sections(points, n, &dopt, table, &keyed, err);
        free(plain);
        if (summary)
            summary->skipped = skipped;
    }
    if (st == CCT_OK)
        st = fit_links(store, ids, n_ids, table, err);
    if (st == CCT_OK && summary) {
        size_t skipped = summary->skipped;
        memset(summary, 0, sizeof *summary);
        summary->skipped = skipped;
        summary->points = n;
        summary->runs = n_ids;
        summary->failed_runs_left_out = left_out[0];
        summary->production_runs_left_out = left_out[1];
        for (size_t i = 0; i < table->n_sections; i++) {
            summary->sections++;
            summary->rules += table->sections[i].n_rules;
            summary->models += table->sections[i].n_models;
            for (size_t m = 0; m < table->sections[i].n_models; m++)
                summary->poor_fits += table->sections[i].models[m].poor_fit;
        }
        for (size_t i = 0; i < n; i++) {
            summary->corrupt += points[i].status == CCT_POINT_CORRUPT;
            summary->hung += points[i].status == CCT_POINT_HANG;
        }
    }
    if (st != CCT_OK)
        cct_table_destroy(table);
    cct_cycles_free(&cycles);
    free(points);
    free(ids);
    return st;
}
