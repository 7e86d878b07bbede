/*
 * cmd_tune.c - `ccltune tune`: search, fit, table and plots in one command.
 *
 * With a GPU it runs `ccltune search` with the given flags (as a child process, so the
 * search's own launcher, watchdog and resume behave exactly as when run by hand), reads
 * the run id it prints, fits that run and writes the table and plots.  Without a GPU it
 * says so in one line and runs fit + table + plots on recorded real measurements instead
 * (tests/data/h200 in a source tree, share/ccltune when installed, or --recorded DB).
 * After the rules it fits NCCL's own cost-model constants (cct_calib_store.h) from the
 * NCCL model printout the search stored with the run, and writes them as the table's
 * nccl_constants when they make NCCL's model agree with the measurements at least as often
 * as its defaults (--no-constants skips this; a store without the printout says so).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cct_calib_store.h"
#include "cct_cli.h"
#include "cct_config.h"
#include "cct_fit_table.h"
#include "cct_parse.h"
#include "cct_plot.h"
#include "cct_search.h"
#include "cct_store.h"
#if CCT_HAVE_CUDA
#include "cct_probe.h"
#endif

static void help(FILE *out)
{
    fprintf(out,
            "usage: ccltune tune [-o TABLE.yaml] [--store DB] [--plots DIR] [SEARCH FLAGS]\n\n"
            "Measure this machine (ccltune search), fit models and write the table and plots.\n"
            "Without a GPU, run the fit, the table and the plots on recorded real measurements.\n\n"
            "  -o, --output FILE   the table [ccltune-table.yaml]\n"
            "  --store DB          measurement store [measurements.db]\n"
            "  --plots DIR         plots (PNG and SVG, with their gnuplot scripts) [plots];\n"
            "                      given, gnuplot missing is an error, else a warning\n"
            "  --no-plots          skip the plots\n"
            "  --no-constants      do not fit NCCL's cost-model constants (nccl_constants)\n"
            "                      from NCCL's model printout stored with the search's run\n"
            "  --recorded DB       fit these recorded measurements instead of measuring, GPU or\n"
            "                      not; without a GPU the default is the recorded H200 store\n"
            "                      [tests/data/h200/run-2026-11-29c/coarse/tune-4.db.gz of the\n"
            "                      source tree: 4 rank processes on an H200, with NCCL's\n"
            "                      model printout for the constants]\n"
            "  --note TEXT         provenance note for the table\n"
            "  --previous TABLE    the table this tune replaces (may be the -o file): its\n"
            "                      choices stay where the new measurements do not show them\n"
            "                      significantly slower, as for ccltune fit; read before the\n"
            "                      search starts\n"
            "  --nccl-versions SPEC\n"
            "                      also apply the table on these NCCL releases, as for\n"
            "                      ccltune fit (e.g. 2.28, 2.28..2.30)\n"
            "  Every other flag goes to `ccltune search` (see ccltune search --help), e.g.\n"
            "  --ranks-per-gpu 4 --max-bytes 64M --colls allreduce,allgather.  They are\n"
            "  checked by the search's rules with a GPU or without; without one (or with\n"
            "  --recorded) they measure nothing, and tune says so.\n\n"
            "Exit status: 0 the table is written (without plots when gnuplot is missing and\n"
            "--plots was not given), 1 the search, the fit, the table or the plots failed,\n"
            "2 usage error.\n");
}

static bool readable(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *default_recorded(void)
{
    const char *env = getenv("CCLTUNE_RECORDED");
    if (env && *env)
        return env;
    if (readable(CCT_RECORDED_SOURCE))
        return CCT_RECORDED_SOURCE;
    return CCT_RECORDED_INSTALLED;
}

static bool have_gpu(void)
{
#if CCT_HAVE_CUDA
    cct_probe_info *info = calloc(1, sizeof *info);
    cct_error err;
    bool ok = info && cct_probe_collect(info, &err) == CCT_OK;
    free(info);
    return ok;
#else
    return false;
#endif
}

/* Fit NCCL's constants from the log stored with the fitted runs into table->constants; says
 * in one line what it did.  Never fails the command: the rules are the table's main part. */
static void tune_constants(cct_store *store, const char *store_path,
                           const cct_fit_table_options *fo, cct_table *table)
{
    cct_calib_options opt;
    cct_calib_options_default(&opt);
    cct_calib_result *res = malloc(sizeof *res);
    size_t n_logs = 0;
    cct_error err;
    cct_status st = res ? cct_calib_from_store(store, store_path, fo->runs, fo->n_runs,
                                               table->fingerprint.cc, &opt, res, &n_logs, &err)
                        : cct_error_set(&err, CCT_ENOMEM, "out of memory");
    if (st != CCT_OK) {
        fprintf(stderr, "ccltune tune: nccl_constants not fitted: %s\n", err.msg);
    } else if (n_logs == 0) {
        fprintf(stderr,
                "ccltune tune: nccl_constants not fitted: no NCCL model printout is stored with "
                "the measurements in %s (recorded stores and searches before store schema 3 "
                "have none)\n",
                store_path);
    } else {
        size_t points = 0, def = 0, cal = 0;
        for (size_t i = 0; i < res->n_scores; i++) {
            points += res->scores[i].points;
            def += res->scores[i].agree_default;
            cal += res->scores[i].agree_calibrated;
        }
        if (cct_calib_improves(res)) {
            table->constants = res->constants;
            fprintf(stderr,
                    "ccltune tune: nccl_constants fitted from NCCL's model printout: NCCL's "
                    "model picks within %.0f %% of the measured best at %zu of %zu points "
                    "(%zu with its default constants)\n",
                    100.0 * opt.tie, cal, points, def);
        } else {
            fprintf(stderr,
                    "ccltune tune: nccl_constants not written: the fitted constants make NCCL's "
                    "model pick within %.0f %% of the measured best at %zu of %zu points, its "
                    "defaults at %zu (ccltune calibrate %s -o FILE writes them anyway)\n",
                    100.0 * opt.tie, cal, points, def, store_path);
        }
    }
    free(res);
}

/* Run the search command line argv ("ccltune", "search", ..., NULL) and return the run id it
 * prints (0 on failure). */
static long long run_search(char **argv)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDOUT_FILENO);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fds[1]);
    /* Read to the end (a child that filled the pipe would block forever), pass every other
     * line on to stderr -- NCCL's own output when the user set NCCL_DEBUG, say -- and keep
     * the last line that is only a number: the run id `ccltune search` prints. */
    FILE *in = fdopen(fds[0], "r");
    long long run = 0;
    char line[4096];
    while (in && fgets(line, sizeof line, in)) {
        char digits[sizeof line];
        snprintf(digits, sizeof digits, "%.*s", (int)strcspn(line, "\n"), line);
        long v;
        if (cct_parse_long(digits, 1, 0x7fffffffL, &v))
            run = v;
        else
            fputs(line, stderr);
    }
    if (in)
        fclose(in);
    else
        close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 0;
    return run;
}

enum {
    OPT_STORE = 256,
    OPT_PLOTS,
    OPT_NO_PLOTS,
    OPT_NO_CONSTANTS,
    OPT_RECORDED,
    OPT_NOTE,
    OPT_NCCL_VERSIONS,
    OPT_PREVIOUS,
    OPT_SEARCH
};

/* "--NAME" of every entry of tune_options(), for the search's command line. */
static char dashed_names[128][40];

/* tune's own flags followed by every search flag tune does not define itself (their val is
 * OPT_SEARCH); ends with a zero entry. */
static const struct option *tune_options(void)
{
    static struct option opts[128] = {
        {"output", required_argument, NULL, 'o'},
        {"store", required_argument, NULL, OPT_STORE},
        {"plots", required_argument, NULL, OPT_PLOTS},
        {"no-plots", no_argument, NULL, OPT_NO_PLOTS},
        {"no-constants", no_argument, NULL, OPT_NO_CONSTANTS},
        {"recorded", required_argument, NULL, OPT_RECORDED},
        {"note", required_argument, NULL, OPT_NOTE},
        {"nccl-versions", required_argument, NULL, OPT_NCCL_VERSIONS},
        {"previous", required_argument, NULL, OPT_PREVIOUS},
        {"help", no_argument, NULL, 'h'},
    };
    static size_t n = 0;
    if (n)
        return opts;
    for (size_t i = 0; i < 128; i++)
        if (opts[i].name)
            snprintf(dashed_names[i], sizeof dashed_names[i], "--%s", opts[i].name);
    while (opts[n].name)
        n++;
    size_t own = n;
    for (const struct option *so = cct_search_long_options(); so->name && n + 1 < 128; so++) {
        bool dup = false;
        for (size_t i = 0; i < own; i++)
            dup = dup || strcmp(opts[i].name, so->name) == 0;
        if (!dup) {
            snprintf(dashed_names[n], sizeof dashed_names[n], "--%s", so->name);
            opts[n++] = (struct option){so->name, so->has_arg, NULL, OPT_SEARCH};
        }
    }
    return opts;
}

/* "--colls, --max-bytes": the names of the search flags in a search command line. */
static void flag_names(char **args, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used + 1 < len; i++)
        if (strncmp(args[i], "--", 2) == 0 && strcmp(args[i], "--store") != 0) {
            int k = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", args[i]);
            used += k > 0 ? (size_t)k : 0;
        }
}

typedef struct tune_args {
    const char *out_path, *store_path, *plots, *recorded, *note;
    const char *previous;      /* --previous; NULL when absent */
    const char *nccl_versions; /* --nccl-versions, checked; NULL when absent */
    bool do_plots, do_constants;
    bool plots_asked;   /* --plots given: the plots are required */
    char **search_argv; /* "ccltune", "search", the search flags, "--store", DB, NULL */
    int n_search;       /* the search flags' words */
} tune_args;

/* Parse tune's flags; the search's are collected and checked by the search's own parser,
 * GPU or not.  Returns CCT_EXIT_OK, a usage error, or -1 after --help. */
static int parse_args(int argc, char **argv, tune_args *a)
{
    *a = (tune_args){"ccltune-table.yaml",
                     "measurements.db",
                     "plots",
                     NULL,
                     NULL,
                     NULL,
                     NULL,
                     true,
                     true,
                     false,
                     NULL,
                     0};
    a->search_argv = calloc((size_t)argc * 2 + 6, sizeof *a->search_argv);
    if (!a->search_argv)
        return cct_cli_fail("tune", "out of memory");
    char **words = a->search_argv + 2;
    const struct option *opts = tune_options();
    optind = 1;
    opterr = 0;
    int c, index = -1;
    while ((c = getopt_long(argc, argv, ":o:h", opts, &index)) != -1) {
        switch (c) {
        case 'o':
            a->out_path = optarg;
            break;
        case OPT_STORE:
            a->store_path = optarg;
            break;
        case OPT_PLOTS:
            a->plots = optarg;
            a->plots_asked = true;
            break;
        case OPT_NO_PLOTS:
            a->do_plots = false;
            break;
        case OPT_NO_CONSTANTS:
            a->do_constants = false;
            break;
        case OPT_RECORDED:
            a->recorded = optarg;
            break;
        case OPT_NOTE:
            a->note = optarg;
            break;
        case OPT_PREVIOUS:
            a->previous = optarg;
            break;
        case OPT_NCCL_VERSIONS: {
            cct_error perr;
            if (cct_parse_nccl_versions("--nccl-versions", optarg, NULL, &perr) != CCT_OK)
                return cct_cli_usage_error("tune", "%s", perr.msg);
            a->nccl_versions = optarg;
            break;
        }
        case OPT_SEARCH: /* as "--NAME [VALUE]", whatever the abbreviation or '=' typed */
            words[a->n_search++] = dashed_names[index];
            if (optarg)
                words[a->n_search++] = optarg;
            break;
        case 'h':
            help(stdout);
            return -1;
        default:
            return cct_cli_flag_error("tune", c, argv);
        }
    }
    if (optind < argc)
        return cct_cli_extra_args("tune", argc, argv);
    a->search_argv[0] = (char *)"ccltune";
    a->search_argv[1] = (char *)"search";
    words[a->n_search] = (char *)"--store";
    words[a->n_search + 1] = (char *)a->store_path;
    cct_search_opts so;
    bool search_help = false;
    cct_error err;
    if (cct_search_parse(a->n_search + 3, a->search_argv + 1, &so, &search_help, &err) != CCT_OK)
        return cct_cli_usage_error("tune", "%s", err.msg);
    return CCT_EXIT_OK;
}

/* The measuring (or the recorded store), the fit, the table and the plots of one tune. */
static int tune_measured(tune_args *ap, cct_fit_table_options *fop)
{
    tune_args a = *ap;
    cct_fit_table_options fo = *fop;
    const char *out_path = a.out_path, *store_path = a.store_path, *plots = a.plots;
    bool do_plots = a.do_plots, do_constants = a.do_constants;
    const char *fit_store = store_path;
    if (!a.recorded && have_gpu()) {
        long long run = run_search(a.search_argv);
        free(a.search_argv);
        if (run <= 0)
            return cct_cli_fail("tune",
                                "the search did not complete; what it measured is in %s "
                                "(continue with ccltune search ... --resume RUN)",
                                store_path);
        fo.runs[fo.n_runs++] = run;
    } else {
        fit_store = a.recorded ? a.recorded : default_recorded();
        char unused[512] = "";
        if (a.n_search) {
            char names[400];
            flag_names(a.search_argv + 2, a.n_search, names, sizeof names);
            snprintf(unused, sizeof unused, "; the measurement flags (%s) are not used", names);
        }
        free(a.search_argv);
        if (a.recorded)
            fprintf(stderr,
                    "ccltune tune: --recorded: running fit, table and plots on the recorded "
                    "measurements in %s instead of measuring%s\n",
                    fit_store, unused);
        else
            fprintf(stderr,
                    "ccltune tune: no GPU on this machine: running fit, table and plots on the "
                    "recorded real measurements in %s instead of measuring%s\n",
                    fit_store, unused);
        if (!readable(fit_store))
            return cct_cli_fail("tune", "recorded measurements %s not found (pass --recorded DB)",
                                fit_store);
    }
    cct_error err;
    cct_store *store = NULL;
    if (cct_store_open(fit_store, true, &store, &err) != CCT_OK)
        return cct_cli_fail("tune", "%s", err.msg);
    cct_table table;
    cct_fit_table_summary sum;
    if (cct_fit_table_from_store(store, &fo, &table, &sum, &err) != CCT_OK) {
        cct_store_close(store);
        return cct_cli_fail("tune", "%s", err.msg);
    }
    if (do_constants)
        tune_constants(store, fit_store, &fo, &table);
    cct_store_close(store);
    int code = CCT_EXIT_OK;
    if (cct_table_save(&table, out_path, &err) != CCT_OK) {
        code = cct_cli_fail("tune", "%s", err.msg);
    } else {
        fprintf(stderr,
                "ccltune tune: wrote %s: %zu sections, %zu rules, %zu models (%zu poor fits "
                "flagged) from %zu points; %zu corrupt and %zu hung points excluded their "
                "configurations\n",
                out_path, sum.sections, sum.rules, sum.models, sum.poor_fits, sum.points,
                sum.corrupt, sum.hung);
    }
    char gnuplot[PATH_MAX];
    if (code == CCT_EXIT_OK && do_plots && !a.plots_asked &&
        cct_plot_find_gnuplot("gnuplot", gnuplot, sizeof gnuplot, &err) != CCT_OK) {
        /* an optional tool missing after the table is written: say so, keep the table */
        fprintf(stderr, "ccltune tune: warning: no plots: %s (--plots DIR makes this an error)\n",
                err.msg);
        do_plots = false;
    }
    if (code == CCT_EXIT_OK && do_plots) {
        if (cct_plot_all(fit_store, fo.runs, fo.n_runs, &table, plots, &err) != CCT_OK)
            code = cct_cli_fail("tune", "plots: %s (the table is written; --no-plots skips them)",
                                err.msg);
        else
            fprintf(stderr, "ccltune tune: wrote the plots to %s/\n", plots);
    }
    cct_table_destroy(&table);
    if (code == CCT_EXIT_OK)
        printf("%s\n", out_path);
    return code;
}

int cct_cmd_tune(int argc, char **argv)
{
    tune_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CCT_EXIT_OK) {
        free(a.search_argv);
        return rc < 0 ? CCT_EXIT_OK : rc;
    }
    cct_fit_table_options fo;
    cct_fit_table_options_default(&fo);
    fo.note = a.note;
    fo.nccl_versions = a.nccl_versions;
    cct_table previous; /* read before measuring: a bad file must not cost a search */
    if (a.previous) {
        cct_error perr;
        if (cct_table_load_file(a.previous, &previous, &perr) != CCT_OK) {
            free(a.search_argv);
            return cct_cli_fail("tune", "--previous: %s", perr.msg);
        }
        fo.decide.previous = &previous;
    }
    int code = tune_measured(&a, &fo);
    if (a.previous)
        cct_table_destroy(&previous);
    return code;
}
