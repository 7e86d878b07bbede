/*
 * cmd_fit.c - `ccltune fit`: fit models to stored measurements and write the table.
 *
 * Reads runs from the store, builds the table (src/cct_fit_table.c), writes it atomically
 * (or to stdout), and reports what it did: sections, rules, models, poor fits (never
 * hidden) and excluded corrupt/hung configurations.  `--accuracy` adds the benchmark
 * figures: median and P95 of |predicted - measured| / measured, in-sample and by
 * leave-one-size-out cross-validation.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_fit_table.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: ccltune fit [--store DB] [--run N]... [-o TABLE.yaml] [OPTIONS]\n\n"
            "Fit a latency/bandwidth model to every measured configuration and write the table\n"
            "of decisions (best configuration per size band) for every collective and topology.\n"
            "The same store and runs always produce byte-identical output.\n\n"
            "  --store DB            measurement store [measurements.db]\n"
            "  --run N               use run N (repeatable) [every run in the store that\n"
            "                        did not fail]\n"
            "  --include-failed      also use runs marked failed (they stopped on an error,\n"
            "                        so their points may be incomplete)\n"
            "  --include-production  also use production observations (runs of source\n"
            "                        production: ccltune import of job recordings)\n"
            "  -o, --output FILE     write the table here (atomically) [stdout]\n"
            "  --tie X               configurations within X of the fastest are tied [0.05]\n"
            "  --min-band F          interior bands span at least a factor F of sizes [2]\n"
            "  --worst-case-align    decide for the worst measured buffer alignment\n"
            "  --ll128 auto|yes|no   allow LL128 rules [auto: the run's LL128 verdict]\n"
            "  --note TEXT           provenance note\n"
            "  --nccl-versions SPEC  also apply the table on these NCCL releases (by default\n"
            "                        only on the measured one's major.minor): versions and\n"
            "                        ranges, e.g. 2.28 (any 2.28.x), 2.30.7, 2.28..2.30,\n"
            "                        comma-separated; written as fingerprint.nccl_versions\n"
            "  --cc X.Y              the GPU's compute capability, for imported runs that lack it\n"
            "  --accuracy            print model accuracy (in-sample and cross-validated)\n"
            "  --previous TABLE      the table this fit replaces: where its choice is still\n"
            "                        not significantly slower than the best, it stays; where\n"
            "                        it left a size to NCCL, a new choice must be significant\n"
            "                        there (a re-tune then changes what the measurements show)\n"
            "  --argmin              the per-size argmin table instead (fastest measured\n"
            "                        configuration per size, NCCL's example tuner script)\n\n"
            "Exit status: 0 the table is written, 1 the store could not be read or the fit or\n"
            "the writing failed, 2 usage error.\n");
}

/* The command line of one fit. */
typedef struct fit_args {
    const char *store_path;
    const char *out_path;      /* NULL: stdout */
    const char *previous_path; /* --previous; NULL: none */
    bool accuracy;
    cct_fit_table_options fo;
} fit_args;

/* CCT_EXIT_OK to go on, -1 after --help, else the exit status of a usage error. */
static int parse_args(int argc, char **argv, fit_args *a)
{
    static const cct_enum_name ll128_names[] = {{"auto", -1}, {"yes", 1}, {"no", 0}, {NULL, 0}};
    static const struct option opts[] = {{"store", required_argument, NULL, 's'},
                                         {"run", required_argument, NULL, 'r'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"tie", required_argument, NULL, 't'},
                                         {"min-band", required_argument, NULL, 'b'},
                                         {"worst-case-align", no_argument, NULL, 'w'},
                                         {"ll128", required_argument, NULL, 'l'},
                                         {"note", required_argument, NULL, 'n'},
                                         {"accuracy", no_argument, NULL, 'a'},
                                         {"cc", required_argument, NULL, 'c'},
                                         {"include-failed", no_argument, NULL, 'F'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"argmin", no_argument, NULL, 'm'},
                                         {"nccl-versions", required_argument, NULL, 'V'},
                                         {"include-production", no_argument, NULL, 'P'},
                                         {"previous", required_argument, NULL, 'R'},
                                         {NULL, 0, NULL, 0}};
    a->store_path = "measurements.db";
    a->out_path = NULL;
    a->previous_path = NULL;
    a->accuracy = false;
    cct_fit_table_options *fo = &a->fo;
    cct_fit_table_options_default(fo);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        long v;
        cct_error perr;
        switch (c) {
        case 's':
            a->store_path = optarg;
            break;
        case 'r':
            if (cct_parse_flag_long("--run", optarg, 1, 0x7fffffffL, &v, &perr) != CCT_OK)
                return cct_cli_usage_error("fit", "%s", perr.msg);
            if (fo->n_runs >= CCT_FIT_MAX_RUNS)
                return cct_cli_usage_error("fit", "at most %d --run flags", CCT_FIT_MAX_RUNS);
            fo->runs[fo->n_runs++] = v;
            break;
        case 'o':
            a->out_path = optarg;
            break;
        case 't':
            if (cct_parse_flag_fraction("--tie", optarg, &fo->decide.tie, &perr) != CCT_OK)
                return cct_cli_usage_error("fit", "%s", perr.msg);
            break;
        case 'b':
            if (cct_parse_flag_double("--min-band", optarg, 1.0, 1024.0,
                                      &fo->decide.min_band_factor, &perr) != CCT_OK)
                return cct_cli_usage_error("fit", "%s", perr.msg);
            break;
        case 'w':
            fo->decide.worst_case_align = true;
            break;
        case 'l':
            if (cct_parse_enum("--ll128", optarg, ll128_names, &fo->ll128, &perr) != CCT_OK)
                return cct_cli_usage_error("fit", "%s", perr.msg);
            break;
        case 'n':
            fo->note = optarg;
            break;
        case 'V':
            if (cct_parse_nccl_versions("--nccl-versions", optarg, NULL, &perr) != CCT_OK)
                return cct_cli_usage_error("fit", "%s", perr.msg);
            fo->nccl_versions = optarg;
            break;
        case 'a':
            a->accuracy = true;
            break;
        case 'F':
            fo->include_failed = true;
            break;
        case 'P':
            fo->include_production = true;
            break;
        case 'm':
            fo->argmin = true;
            break;
        case 'R':
            a->previous_path = optarg;
            break;
        case 'c':
            fo->cc = cct_cc_parse(optarg);
            if (fo->cc <= 0)
                return cct_cli_usage_error("fit", "--cc: '%s' is not a compute capability (X.Y)",
                                           optarg);
            break;
        case 'h':
            help(stdout);
            return -1;
        default:
            return cct_cli_flag_error("fit", c, argv);
        }
    }
    if (optind < argc)
        return cct_cli_extra_args("fit", argc, argv);
    if (a->previous_path && fo->argmin)
        return cct_cli_usage_error("fit", "--previous and --argmin exclude each other (the "
                                          "argmin takes the fastest measured, whatever came "
                                          "before)");
    return CCT_EXIT_OK;
}

/* What the fit did, on stderr. */
static void report_summary(const cct_fit_table_summary *sum, const char *out_path)
{
    fprintf(stderr,
            "ccltune fit: %zu points from %zu run(s) -> %zu sections, %zu rules, %zu models "
            "(%zu flagged poor fits); %zu corrupt and %zu hung points excluded their "
            "configurations; %zu collective/topology groups skipped (only NCCL's default "
            "measured)%s%s\n",
            sum->points, sum->runs, sum->sections, sum->rules, sum->models, sum->poor_fits,
            sum->corrupt, sum->hung, sum->skipped, out_path ? "; wrote " : "",
            out_path ? out_path : "");
    if (sum->production_runs_left_out)
        fprintf(stderr,
                "ccltune fit: %zu run(s) of production observations left out "
                "(--include-production uses them)\n",
                sum->production_runs_left_out);
    if (sum->failed_runs_left_out)
        fprintf(stderr,
                "ccltune fit: %zu run(s) marked failed left out (--include-failed uses "
                "them)\n",
                sum->failed_runs_left_out);
}

/* In-sample accuracy of each section's models over the section's plain points. */
static void print_section_accuracy(const cct_table *table, const cct_point *points, size_t n)
{
    cct_error err;
    cct_point *mine = malloc((n ? n : 1) * sizeof *mine);
    for (size_t i = 0; mine && i < table->n_sections; i++) {
        const cct_section *sec = &table->sections[i];
        size_t k = 0;
        for (size_t j = 0; j < n; j++)
            if (points[j].cfg.coll == sec->coll && points[j].cfg.ranks == sec->ranks &&
                points[j].cfg.nodes == sec->nodes && cct_point_is_plain(&points[j]) &&
                sec->pipe_ops == CCT_ANY && sec->reg_buff == CCT_ANY)
                mine[k++] = points[j];
        cct_accuracy a;
        char key[128];
        if (cct_fit_accuracy(mine, k, sec->models, sec->n_models, &a, &err) == CCT_OK)
            printf("accuracy %-28s in-sample: median %.2f %%, P95 %.2f %%, max %.2f %% over "
                   "%zu points\n",
                   cct_section_describe(sec, key, sizeof key), 100.0 * a.median, 100.0 * a.p95,
                   100.0 * a.max, a.n);
    }
    free(mine);
}

/* --accuracy: per section in-sample, then leave-one-size-out over the fitted runs' points;
 * nothing is printed where the points cannot be loaded. */
static void print_accuracy(cct_store *store, const cct_fit_table_options *fo,
                           const cct_table *table)
{
    cct_error err;
    cct_point *points = NULL;
    int64_t *ids = NULL;
    size_t n = 0, n_ids = 0;
    if (cct_fit_table_runs(store, fo, &ids, &n_ids, &err) == CCT_OK &&
        cct_store_load_points(store, ids, n_ids, &points, &n, &err) == CCT_OK) {
        cct_accuracy cv = {0};
        print_section_accuracy(table, points, n);
        cct_status cst = cct_fit_cross_validate(points, n, &fo->decide.fit, &cv, &err);
        if (cst == CCT_OK)
            printf("accuracy, all sections, leave-one-size-out: median %.2f %%, P95 %.2f %%, "
                   "max %.2f %% over "
                   "%zu points\n",
                   100.0 * cv.median, 100.0 * cv.p95, 100.0 * cv.max, cv.n);
        free(points);
    }
    free(ids);
}

int cct_cmd_fit(int argc, char **argv)
{
    fit_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CCT_EXIT_OK)
        return rc < 0 ? CCT_EXIT_OK : rc;
    cct_error err;
    cct_table previous;
    if (a.previous_path) {
        if (cct_table_load_file(a.previous_path, &previous, &err) != CCT_OK)
            return cct_cli_fail("fit", "--previous: %s", err.msg);
        a.fo.decide.previous = &previous;
    }
    cct_store *store = NULL;
    if (cct_store_open(a.store_path, true, &store, &err) != CCT_OK) {
        if (a.previous_path)
            cct_table_destroy(&previous);
        return cct_cli_fail("fit", "%s", err.msg);
    }
    cct_table table;
    cct_fit_table_summary sum;
    cct_status st = cct_fit_table_from_store(store, &a.fo, &table, &sum, &err);
    if (st != CCT_OK) {
        cct_store_close(store);
        if (a.previous_path)
            cct_table_destroy(&previous);
        return cct_cli_fail("fit", "%s", err.msg);
    }
    if (a.out_path)
        st = cct_table_save(&table, a.out_path, &err);
    else
        st = cct_table_write(&table, stdout, &err);
    int code = st == CCT_OK ? CCT_EXIT_OK : cct_cli_fail("fit", "%s", err.msg);
    if (st == CCT_OK)
        report_summary(&sum, a.out_path);
    if (code == CCT_EXIT_OK && a.accuracy)
        print_accuracy(store, &a.fo, &table);
    cct_table_destroy(&table);
    if (a.previous_path)
        cct_table_destroy(&previous);
    cct_store_close(store);
    return code;
}
