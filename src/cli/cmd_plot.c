/*
 * cmd_plot.c - `ccltune plot --store DB [--run N]... [--table T.yaml] [--out DIR]`: draw
 * the measurements of a store, and a table's models and choices, with gnuplot.
 *
 * The work is cct_plot_store() (cct_plot.h); this file parses flags, loads the table with
 * the loader the plugin uses (errors FILE:LINE:COLUMN, as `ccltune validate` prints them)
 * and prints one summary line (and, on stderr, how many runs of production observations
 * it left out: every run means the measured ones, as for fit).  --no-gnuplot writes the
 * data files and scripts only, for a machine without gnuplot.  Exit status: 0 plotted,
 * 1 failure (a store or table that does not load, gnuplot missing or failing), 2 usage
 * error.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_plot.h"
#include "cct_table.h"

static const char *const NAME = "plot";
#define MAX_RUNS 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ccltune plot --store DB [--run N]... [--table T.yaml] [--out DIR]\n"
            "                    [--include-production] [--no-gnuplot]\n\n"
            "Draw time and bus bandwidth against message size, one figure per collective\n"
            "and topology (COLL-<R>r<N>n-time.png/.svg, COLL-<R>r<N>n-busbw.png/.svg): the\n"
            "measured medians with min-max error bars per configuration, NCCL's default in\n"
            "black, corrupt configurations crossed and circled; with --table, the fitted\n"
            "models and the table's choice per band.  Data files and gnuplot scripts are\n"
            "kept next to the images (`gnuplot COLL-<R>r<N>n.gp` redraws them).\n\n"
            "  --store DB     measurement store to read\n"
            "  --run N        only this run (repeatable; default: every run but those of\n"
            "                 production observations)\n"
            "  --include-production\n"
            "                 with every run, also draw production observations (runs of\n"
            "                 source production: ccltune import of job recordings)\n"
            "  --table T      a tuning table whose models and choices to draw\n"
            "  --out DIR      output folder (default plots/), created when missing\n"
            "  --no-gnuplot   write the data files and scripts only\n"
            "  -h, --help     show this help\n\n"
            "Needs gnuplot on PATH (%s).\n\n"
            "Exit status: 0 plotted, 1 failure, 2 usage error.\n",
            CCT_PLOT_GNUPLOT_HINT);
}

int cct_cmd_plot(int argc, char **argv)
{
    enum { OPT_STORE = 256, OPT_RUN, OPT_TABLE, OPT_OUT, OPT_NO_GNUPLOT, OPT_PRODUCTION };
    static const struct option options[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"run", required_argument, NULL, OPT_RUN},
        {"table", required_argument, NULL, OPT_TABLE},
        {"out", required_argument, NULL, OPT_OUT},
        {"no-gnuplot", no_argument, NULL, OPT_NO_GNUPLOT},
        {"include-production", no_argument, NULL, OPT_PRODUCTION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *store = NULL, *table_path = NULL, *out = "plots";
    int64_t runs[MAX_RUNS];
    size_t n_runs = 0;
    cct_plot_options opt;
    cct_plot_options_default(&opt);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        long v;
        cct_error perr;
        switch (c) {
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        case OPT_STORE:
            store = optarg;
            break;
        case OPT_RUN:
            if (cct_parse_flag_long("--run", optarg, 1, 0x7fffffffL, &v, &perr) != CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            if (n_runs == MAX_RUNS)
                return cct_cli_usage_error(NAME, "at most %d --run flags", MAX_RUNS);
            runs[n_runs++] = v;
            break;
        case OPT_TABLE:
            table_path = optarg;
            break;
        case OPT_OUT:
            out = optarg;
            break;
        case OPT_NO_GNUPLOT:
            opt.run_gnuplot = false;
            break;
        case OPT_PRODUCTION:
            opt.include_production = true;
            break;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (optind < argc)
        return cct_cli_extra_args(NAME, argc, argv);
    if (!store)
        return cct_cli_usage_error(NAME, "--store DB is required");
    cct_error err;
    cct_table table;
    bool have_table = table_path != NULL;
    if (have_table && cct_table_load_file(table_path, &table, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return CCT_EXIT_FAIL;
    }
    cct_plot_summary sum;
    cct_status st =
        cct_plot_store(store, runs, n_runs, have_table ? &table : NULL, out, &opt, &sum, &err);
    if (have_table)
        cct_table_destroy(&table);
    if (st != CCT_OK)
        return cct_cli_fail(NAME, "%s", err.msg);
    if (sum.production_runs_left_out)
        fprintf(stderr,
                "ccltune plot: %zu run(s) of production observations left out "
                "(--include-production draws them)\n",
                sum.production_runs_left_out);
    if (opt.run_gnuplot)
        printf("%s: %zu images of %zu figures (%zu configurations, %zu marked corrupt)\n", out,
               sum.n_images, sum.n_figures, sum.n_series, sum.n_corrupt);
    else
        printf("%s: data files and scripts of %zu figures (%zu configurations, %zu marked "
               "corrupt); run gnuplot on the .gp files there to draw them\n",
               out, sum.n_figures, sum.n_series, sum.n_corrupt);
    return CCT_EXIT_OK;
}
