/*
 * cmd_calibrate.c - `ccltune calibrate`: fit NCCL's cost-model constants to stored
 * measurements (src/cct_calibrate.c) using the topology NCCL printed in its debug logs
 * (src/cct_nccl_log.c), report how often NCCL's model picks the measured best with its
 * default and with the fitted constants, and write a table carrying the constants.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_calib_store.h"
#include "cct_calibrate.h"
#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_config.h"
#include "cct_constants.h"
#include "cct_nccl_log.h"
#include "cct_store.h"

#define MAX_STORES 16

static void help(FILE *out)
{
    fprintf(out,
            "usage: ccltune calibrate STORE... [--nccl-log LOG...] -o OUT.yaml [OPTIONS]\n\n"
            "Fit NCCL's own cost-model constants (base and hardware latencies, bandwidth\n"
            "ceilings) to the measurements in the stores, so that NCCL's model picks what was\n"
            "measured fastest, and write them as a table's nccl_constants (the plugin writes\n"
            "them at communicator init).  Each LOG is an NCCL debug log of one communicator\n"
            "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING) and gives the topology of its\n"
            "rank count; points at rank counts without a log are not used.  Without --nccl-log\n"
            "the logs `ccltune search` stored with its runs are used (store schema 3).  Prints,\n"
            "per rank count, how often NCCL's pick is within --tie of the measured best and how\n"
            "much slower than the best it is (regret), with NCCL's default constants, the\n"
            "least-squares fit and the final constants (held-out rank counts marked).  The\n"
            "final constants refine the least-squares ones to lower the regret of NCCL's\n"
            "pick on the fitted rank counts (docs/calibration.md).\n\n"
            "  --nccl-log LOG        NCCL debug log (repeatable; one per rank count)\n"
            "                        [the logs stored with the runs]\n"
            "  -o, --output FILE     write the table here (atomically)\n"
            "  --table IN.yaml       add the constants to this table [a constants-only table]\n"
            "  --eval STORE          score the constants on this store too, never fit on it\n"
            "                        (repeatable; e.g. a bench of an earlier table)\n"
            "  --no-refine           keep the least-squares constants (skip the regret\n"
            "                        refinement)\n"
            "  --fit-ranks N[,N...]  fit on these rank counts only; score on all [all]\n"
            "  --tie X               a pick within X of the best agrees [0.05]\n"
            "  --cc X.Y              compute capability [the store's]\n"
            "  --note TEXT           provenance note\n\n"
            "Exit status: 0 the constants are fitted (and written with -o), 1 a store, log or\n"
            "table could not be read or the fit failed, 2 usage error.\n");
}

static cct_status add_fit_ranks(void *ctx, const char *flag, const char *item, size_t index,
                                cct_error *err)
{
    (void)index;
    cct_calib_options *opt = ctx;
    long v;
    cct_status st = cct_parse_flag_long(flag, item, 2, CCT_TABLE_MAX_RANKS, &v, err);
    if (st == CCT_OK && opt->n_fit_ranks >= CCT_CALIB_MAX_TOPOS)
        st =
            cct_error_set(err, CCT_EINVAL, "%s: at most %d rank counts", flag, CCT_CALIB_MAX_TOPOS);
    if (st == CCT_OK)
        opt->fit_ranks[opt->n_fit_ranks++] = (int)v;
    return st;
}

/* Load every run's points of one store and its first run's fingerprint. */
static cct_status load_store(const char *path, cct_point **all, size_t *n_all,
                             cct_store_fingerprint *fp, bool *have_fp, char *created,
                             size_t created_len, cct_error *err)
{
    cct_store *store = NULL;
    cct_status st = cct_store_open(path, true, &store, err);
    if (st != CCT_OK)
        return st;
    cct_store_run *runs = NULL;
    size_t n_runs = 0;
    st = cct_store_list_runs(store, &runs, &n_runs, err);
    if (st == CCT_OK && n_runs == 0)
        st = cct_error_set(err, CCT_ENOTFOUND, "%s: the store holds no runs", path);
    for (size_t i = 0; st == CCT_OK && i < n_runs; i++) {
        if (strcmp(runs[i].source, "production") == 0)
            continue;
        const char *when = runs[i].finished[0] ? runs[i].finished : runs[i].started;
        if (strcmp(when, created) > 0)
            snprintf(created, created_len, "%s", when);
        if (!*have_fp) {
            st = cct_store_get_fingerprint(store, runs[i].fingerprint_id, fp, err);
            *have_fp = st == CCT_OK;
        }
    }
    /* production observations (import of job recordings) are not controlled measurements */
    int64_t *ids = n_runs ? calloc(n_runs, sizeof *ids) : NULL;
    size_t n_ids = 0;
    if (st == CCT_OK && !ids)
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t i = 0; st == CCT_OK && i < n_runs; i++)
        if (strcmp(runs[i].source, "production") != 0)
            ids[n_ids++] = runs[i].id;
    if (st == CCT_OK && n_ids == 0)
        st = cct_error_set(err, CCT_ENOTFOUND, "%s: the store holds only production observations",
                           path);
    cct_point *pts = NULL;
    size_t n = 0;
    if (st == CCT_OK)
        st = cct_store_load_points(store, ids, n_ids, &pts, &n, err);
    free(ids);
    if (st == CCT_OK && n > 0) {
        cct_point *grown = realloc(*all, (*n_all + n) * sizeof *grown);
        if (!grown) {
            st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        } else {
            memcpy(grown + *n_all, pts, n * sizeof *pts);
            *all = grown;
            *n_all += n;
        }
    }
    free(pts);
    free(runs);
    cct_store_close(store);
    return st;
}

/* Without --nccl-log: the topologies of the logs the search stored with the runs. */
static cct_status stored_topos(char **paths, size_t n_stores, int cc, cct_nccl_topo *topos,
                               size_t *n_topos, cct_error *err)
{
    size_t n_logs = 0;
    *n_topos = 0;
    for (size_t i = 0; i < n_stores; i++) {
        cct_store *store = NULL;
        cct_status st = cct_store_open(paths[i], true, &store, err);
        if (st == CCT_OK)
            st = cct_calib_topos_from_store(store, paths[i], NULL, 0, cc, topos, n_topos, &n_logs,
                                            err);
        cct_store_close(store);
        if (st != CCT_OK)
            return st;
    }
    if (*n_topos == 0)
        return cct_error_set(err, CCT_ENOTFOUND,
                             "no --nccl-log given and no run in the stores has NCCL's model "
                             "printout stored (searches before store schema 3, imports and "
                             "recorded stores have none): pass --nccl-log LOG per rank count "
                             "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING)");
    fprintf(stderr, "ccltune calibrate: %zu topolog%s from the NCCL logs stored with %zu run%s\n",
            *n_topos, *n_topos == 1 ? "y" : "ies", n_logs, n_logs == 1 ? "" : "s");
    return CCT_OK;
}

static char *dup_or_null(const char *s)
{
    return (s && *s) ? strdup(s) : NULL;
}

static cct_status fill_new_table(cct_table *t, const cct_store_fingerprint *fp, int cc,
                                 const char *created, const char *note, cct_error *err)
{
    char tool[64];
    snprintf(tool, sizeof tool, "ccltune %s", CCT_VERSION);
    t->provenance.tool = strdup(tool);
    t->provenance.created = strdup(created[0] ? created : "1970-01-01T00:00:00Z");
    t->provenance.nccl = dup_or_null(fp->nccl);
    t->provenance.source = strdup("measured");
    t->provenance.note = strdup(note ? note : "NCCL cost-model constants from ccltune calibrate");
    t->fingerprint.gpu = strdup(fp->gpu);
    t->fingerprint.cc = cc;
    t->fingerprint.gpus_per_node = fp->gpus_per_node > 0 ? fp->gpus_per_node : 1;
    t->fingerprint.nodes = fp->nodes > 0 ? fp->nodes : 1;
    t->fingerprint.ranks_per_gpu = fp->ranks_per_gpu > 0 ? fp->ranks_per_gpu : 1;
    t->fingerprint.links = strdup(fp->links[0] ? fp->links : "unknown");
    t->fingerprint.nccl = strdup(fp->nccl[0] ? fp->nccl : "unknown");
    t->fingerprint.cuda = dup_or_null(fp->cuda);
    t->ll128_allowed = fp->ll128_allowed;
    t->ll128_reason = strdup(fp->ll128_reason[0] ? fp->ll128_reason : "from the store");
    if (!t->provenance.tool || !t->provenance.created || !t->provenance.source ||
        !t->provenance.note || !t->fingerprint.gpu || !t->fingerprint.links ||
        !t->fingerprint.nccl || !t->ll128_reason)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    return CCT_OK;
}

static void report_scores(const cct_calib_result *r, const char *title)
{
    printf("%s\n", title);
    printf("ranks  fitted  points  agree: NCCL default  least squares     calibrated"
           "  model=NCCL's pick  kappa\n");
    for (size_t i = 0; i < r->n_scores; i++) {
        const cct_calib_score *s = &r->scores[i];
        double n = s->points ? (double)s->points : 1.0;
        printf("%5d  %-6s  %6zu  %5zu (%5.1f %%)  %5zu (%5.1f %%)  %5zu (%5.1f %%)  %7zu/%-7zu  "
               "%6.3f%s\n",
               s->ranks, s->held_out ? "no" : "yes", s->points, s->agree_default,
               100.0 * (double)s->agree_default / n, s->agree_ls, 100.0 * (double)s->agree_ls / n,
               s->agree_calibrated, 100.0 * (double)s->agree_calibrated / n, s->nccl_reproduced,
               s->nccl_known, s->kappa, s->unscored ? " (some picks unmeasured)" : "");
    }
    printf("ranks  fitted  points  regret: NCCL default   least squares      calibrated\n");
    for (size_t i = 0; i < r->n_scores; i++) {
        const cct_calib_score *s = &r->scores[i];
        printf("%5d  %-6s  %6zu  %9.3fx (%2zu unm.)  %7.3fx (%2zu unm.)  %7.3fx (%2zu unm.)\n",
               s->ranks, s->held_out ? "no" : "yes", s->regret_points, exp(s->regret_default),
               s->unmeasured_default, exp(s->regret_ls), s->unmeasured_ls,
               exp(s->regret_calibrated), s->unmeasured_calibrated);
    }
}

static void report(const cct_calib_result *r, double tie)
{
    report_scores(r, "fitted stores:");
    printf("agreement: NCCL's pick within %.0f %% of the measured best over (collective, size) "
           "points where every pick was measured; regret: geometric mean of NCCL's pick / the "
           "measured best over points with two or more measured candidates, a pick never "
           "measured there (unm.) counted as the slowest measured one; model=NCCL's pick: the "
           "model with default constants picks what NCCL ran\n",
           100.0 * tie);
    if (r->fit_points)
        printf("fit: %zu measured times, %zu latency constants, RMS relative residual %.1f %%\n",
               r->fit_points, r->fit_params, 100.0 * r->fit_rms_rel);
    if (r->refine_params)
        printf("refine: %zu constants, %zu evaluations, mean log regret on the fitted rank "
               "counts %.4f -> %.4f\n",
               r->refine_params, r->refine_evals, r->refine_before, r->refine_after);
    printf("constants (others keep NCCL's value; least squares in brackets):\n");
    for (size_t n = 0; n < CCT_CONST_NUM_SLOTS; n++) {
        cct_const_slot s = cct_const_slot_at(n);
        double v = cct_const_get(&r->constants, s), ls = cct_const_get(&r->ls_constants, s);
        if (v == v) {
            char name[64];
            printf("  %s %s = %.3f [%.3f]\n", cct_const_family_key(s.family),
                   cct_const_slot_name(s, name, sizeof name), v, ls);
        }
    }
}

/* Score the fit on the --eval stores (never fitted on) and print it. */
static cct_status evaluate(const char *const *paths, size_t n_paths, const cct_nccl_topo *topos,
                           size_t n_topos, const cct_calib_result *fit,
                           const cct_calib_options *opt, cct_error *err)
{
    cct_point *points = NULL;
    size_t n_points = 0;
    cct_store_fingerprint fp;
    memset(&fp, 0, sizeof fp);
    bool have_fp = false;
    char created[32] = "";
    cct_status st = CCT_OK;
    for (size_t i = 0; st == CCT_OK && i < n_paths; i++)
        st = load_store(paths[i], &points, &n_points, &fp, &have_fp, created, sizeof created, err);
    cct_calib_result *res = st == CCT_OK ? malloc(sizeof *res) : NULL;
    if (st == CCT_OK && !res)
        st = cct_error_set(err, CCT_ENOMEM, "out of memory");
    if (st == CCT_OK)
        st = cct_calibrate_evaluate(points, n_points, topos, n_topos, fit, opt, res, err);
    if (st == CCT_OK)
        report_scores(res, "evaluation stores (--eval, never fitted):");
    free(res);
    free(points);
    return st;
}

/* The command line of one calibrate. */
typedef struct calib_args {
    const char *logs[CCT_CALIB_MAX_TOPOS]; /* --nccl-log */
    size_t n_logs;
    const char *evals[MAX_STORES]; /* --eval */
    size_t n_evals;
    char **stores; /* the STORE words of argv */
    size_t n_stores;
    const char *out_path, *in_table, *note;
    int cc; /* --cc; 0: the store's */
    cct_calib_options opt;
} calib_args;

/* CCT_EXIT_OK to go on, -1 after --help, else the exit status of a usage error. */
static int parse_args(int argc, char **argv, calib_args *a)
{
    static const struct option opts[] = {{"nccl-log", required_argument, NULL, 'L'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"table", required_argument, NULL, 'T'},
                                         {"fit-ranks", required_argument, NULL, 'F'},
                                         {"tie", required_argument, NULL, 't'},
                                         {"cc", required_argument, NULL, 'c'},
                                         {"note", required_argument, NULL, 'n'},
                                         {"eval", required_argument, NULL, 'E'},
                                         {"no-refine", no_argument, NULL, 'R'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    cct_calib_options_default(&a->opt);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        cct_error perr;
        switch (c) {
        case 'L':
            if (a->n_logs >= CCT_CALIB_MAX_TOPOS)
                return cct_cli_usage_error("calibrate", "at most %d --nccl-log flags",
                                           CCT_CALIB_MAX_TOPOS);
            a->logs[a->n_logs++] = optarg;
            break;
        case 'o':
            a->out_path = optarg;
            break;
        case 'T':
            a->in_table = optarg;
            break;
        case 'F':
            if (cct_parse_list("--fit-ranks", optarg, CCT_CALIB_MAX_TOPOS, add_fit_ranks, &a->opt,
                               &perr) != CCT_OK)
                return cct_cli_usage_error("calibrate", "%s", perr.msg);
            break;
        case 't':
            if (cct_parse_flag_fraction("--tie", optarg, &a->opt.tie, &perr) != CCT_OK)
                return cct_cli_usage_error("calibrate", "%s", perr.msg);
            break;
        case 'c':
            a->cc = cct_cc_parse(optarg);
            if (a->cc <= 0)
                return cct_cli_usage_error("calibrate",
                                           "--cc: '%s' is not a compute capability (X.Y)", optarg);
            break;
        case 'n':
            a->note = optarg;
            break;
        case 'E':
            if (a->n_evals >= MAX_STORES)
                return cct_cli_usage_error("calibrate", "at most %d --eval stores", MAX_STORES);
            a->evals[a->n_evals++] = optarg;
            break;
        case 'R':
            a->opt.refine = false;
            break;
        case 'h':
            help(stdout);
            return -1;
        default:
            return cct_cli_flag_error("calibrate", c, argv);
        }
    }
    a->stores = argv + optind;
    a->n_stores = (size_t)(argc - optind);
    if (a->n_stores == 0)
        return cct_cli_usage_error("calibrate", "no STORE given");
    if (a->n_stores > MAX_STORES)
        return cct_cli_usage_error("calibrate", "at most %d stores", MAX_STORES);
    if (!a->out_path)
        return cct_cli_usage_error("calibrate", "-o OUT.yaml is required");
    return CCT_EXIT_OK;
}

/* What the fit is given: the stores' points (owned; freed by the command), the first
 * fingerprint found and the latest run's time, the compute capability and the topologies. */
typedef struct calib_input {
    cct_point *points;
    size_t n_points;
    cct_store_fingerprint fp;
    bool have_fp;
    char created[32];
    int cc;
    cct_nccl_topo topos[CCT_CALIB_MAX_TOPOS];
    size_t n_topos;
} calib_input;

/* The topology of each --nccl-log, or without one those stored with the runs. */
static int load_topos(const calib_args *a, calib_input *in)
{
    cct_error err;
    in->n_topos = a->n_logs;
    if (a->n_logs == 0 &&
        stored_topos(a->stores, a->n_stores, in->cc, in->topos, &in->n_topos, &err) != CCT_OK)
        return cct_cli_fail("calibrate", "%s", err.msg);
    cct_nccl_topo *topos = in->topos;
    for (size_t i = 0; i < a->n_logs; i++) {
        cct_nccl_log *log = malloc(sizeof *log);
        if (!log || cct_nccl_log_load(a->logs[i], log, &err) != CCT_OK) {
            free(log);
            return cct_cli_fail("calibrate", "%s", log ? err.msg : "out of memory");
        }
        topos[i] = log->topo;
        topos[i].cc = in->cc;
        free(log);
        for (size_t j = 0; j < i; j++)
            if (topos[j].n_ranks == topos[i].n_ranks && topos[j].n_nodes == topos[i].n_nodes)
                return cct_cli_fail("calibrate", "%s and %s both describe %d ranks on %d nodes",
                                    a->logs[j], a->logs[i], topos[i].n_ranks, topos[i].n_nodes);
    }
    return CCT_EXIT_OK;
}

/* Loads every store's points, settles the compute capability and reads the topologies. */
static int load_input(const calib_args *a, calib_input *in)
{
    memset(in, 0, sizeof *in);
    cct_error err;
    for (size_t i = 0; i < a->n_stores; i++)
        if (load_store(a->stores[i], &in->points, &in->n_points, &in->fp, &in->have_fp, in->created,
                       sizeof in->created, &err) != CCT_OK)
            return cct_cli_fail("calibrate", "%s", err.msg);
    if (in->n_points == 0)
        return cct_cli_fail("calibrate", "the stores hold no points");
    in->cc = a->cc > 0 ? a->cc : in->fp.cc;
    if (in->cc <= 0)
        return cct_cli_fail("calibrate", "the stores do not record the GPU's compute capability: "
                                         "pass --cc X.Y");
    return load_topos(a, in);
}

/* Writes the fitted constants into --table's table, or into a new constants-only one. */
static cct_status write_table(const calib_args *a, const calib_input *in,
                              const cct_calib_result *res, cct_error *err)
{
    cct_table table;
    cct_status st;
    if (a->in_table)
        st = cct_table_load_file(a->in_table, &table, err);
    else {
        cct_table_init(&table);
        st = fill_new_table(&table, &in->fp, in->cc, in->created, a->note, err);
    }
    if (st == CCT_OK) {
        table.constants = res->constants;
        st = cct_table_save(&table, a->out_path, err);
    }
    cct_table_destroy(&table); /* empty after a failed load: safe */
    return st;
}

/* Fits, reports (and scores on --eval), then writes the table. */
static int fit_and_write(const calib_args *a, const calib_input *in)
{
    cct_error err;
    cct_calib_result *res = malloc(sizeof *res);
    if (!res)
        return cct_cli_fail("calibrate", "out of memory");
    cct_status st =
        cct_calibrate(in->points, in->n_points, in->topos, in->n_topos, &a->opt, res, &err);
    if (st == CCT_OK) {
        report(res, a->opt.tie);
        if (a->n_evals > 0)
            st = evaluate(a->evals, a->n_evals, in->topos, in->n_topos, res, &a->opt, &err);
    }
    if (st == CCT_OK)
        st = write_table(a, in, res, &err);
    free(res);
    if (st != CCT_OK)
        return cct_cli_fail("calibrate", "%s", err.msg);
    fprintf(stderr, "ccltune calibrate: wrote %s\n", a->out_path);
    return CCT_EXIT_OK;
}

int cct_cmd_calibrate(int argc, char **argv)
{
    calib_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CCT_EXIT_OK)
        return rc < 0 ? CCT_EXIT_OK : rc;
    calib_input in;
    rc = load_input(&a, &in);
    if (rc == CCT_EXIT_OK)
        rc = fit_and_write(&a, &in);
    free(in.points);
    return rc;
}
