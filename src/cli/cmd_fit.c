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
#include "cct_fit_table.h"

static void help(FILE *out)
{
    fprintf(out,
            "usage: ccltune fit [--store DB] [--run N]... [-o TABLE.yaml] [OPTIONS]\n\n"
            "Fit a latency/bandwidth model to every measured configuration and write the table\n"
            "of decisions (best configuration per size band) for every collective and topology.\n"
            "The same store and runs always produce byte-identical output.\n\n"
            "  --store DB            measurement store [measurements.db]\n"
            "  --run N               use run N (repeatable) [every run in the store]\n"
            "  -o, --output FILE     write the table here (atomically) [stdout]\n"
            "  --tie X               configurations within X of the fastest are tied [0.05]\n"
            "  --min-band F          interior bands span at least a factor F of sizes [2]\n"
            "  --worst-case-align    decide for the worst measured buffer alignment\n"
            "  --ll128 auto|yes|no   allow LL128 rules [auto: the run's LL128 verdict]\n"
            "  --note TEXT           provenance note\n"
            "  --cc X.Y              the GPU's compute capability, for imported runs that lack it\n"
            "  --accuracy            print model accuracy (in-sample and cross-validated)\n"
            "  --argmin              the per-size argmin table instead (fastest measured\n"
            "                        configuration per size, NCCL's example tuner script)\n");
}

int cct_cmd_fit(int argc, char **argv)
{
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
                                         {"help", no_argument, NULL, 'h'},
                                         {"argmin", no_argument, NULL, 'm'},
                                         {NULL, 0, NULL, 0}};
    const char *store_path = "measurements.db", *out_path = NULL;
    bool accuracy = false;
    cct_fit_table_options fo;
    cct_fit_table_options_default(&fo);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
        long v;
        char *end;
        switch (c) {
        case 's':
            store_path = optarg;
            break;
        case 'r':
            if (cct_cli_parse_int(optarg, 1, 0x7fffffffL, &v) != CCT_OK)
                return cct_cli_usage_error("fit", "--run: '%s' is not a run id", optarg);
            if (fo.n_runs >= CCT_FIT_MAX_RUNS)
                return cct_cli_usage_error("fit", "at most %d --run flags", CCT_FIT_MAX_RUNS);
            fo.runs[fo.n_runs++] = v;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 't':
            fo.decide.tie = strtod(optarg, &end);
            if (*end || !(fo.decide.tie >= 0.0 && fo.decide.tie < 1.0))
                return cct_cli_usage_error("fit", "--tie: '%s' is not a fraction in [0, 1)",
                                           optarg);
            break;
        case 'b':
            fo.decide.min_band_factor = strtod(optarg, &end);
            if (*end || !(fo.decide.min_band_factor >= 1.0 && fo.decide.min_band_factor <= 1024.0))
                return cct_cli_usage_error("fit", "--min-band: '%s' is not a factor in [1, 1024]",
                                           optarg);
            break;
        case 'w':
            fo.decide.worst_case_align = true;
            break;
        case 'l':
            if (strcmp(optarg, "auto") == 0)
                fo.ll128 = -1;
            else if (strcmp(optarg, "yes") == 0)
                fo.ll128 = 1;
            else if (strcmp(optarg, "no") == 0)
                fo.ll128 = 0;
            else
                return cct_cli_usage_error("fit", "--ll128: '%s' is not auto, yes or no", optarg);
            break;
        case 'n':
            fo.note = optarg;
            break;
        case 'a':
            accuracy = true;
            break;
        case 'm':
            fo.argmin = true;
            break;
        case 'c':
            fo.cc = cct_cc_parse(optarg);
            if (fo.cc <= 0)
                return cct_cli_usage_error("fit", "--cc: '%s' is not a compute capability (X.Y)",
                                           optarg);
            break;
        case 'h':
            help(stdout);
            return CCT_EXIT_OK;
        case ':':
            return cct_cli_usage_error("fit", "%s needs a value", argv[optind - 1]);
        default:
            return cct_cli_usage_error("fit", "unknown flag '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cct_cli_usage_error("fit", "unexpected argument '%s'", argv[optind]);
    cct_error err;
    cct_store *store = NULL;
    if (cct_store_open(store_path, true, &store, &err) != CCT_OK)
        return cct_cli_fail("fit", "%s", err.msg);
    cct_table table;
    cct_fit_table_summary sum;
    cct_status st = cct_fit_table_from_store(store, &fo, &table, &sum, &err);
    if (st != CCT_OK) {
        cct_store_close(store);
        return cct_cli_fail("fit", "%s", err.msg);
    }
    if (out_path)
        st = cct_table_save(&table, out_path, &err);
    else
        st = cct_table_write(&table, stdout, &err);
    int code = st == CCT_OK ? CCT_EXIT_OK : cct_cli_fail("fit", "%s", err.msg);
    if (st == CCT_OK) {
        fprintf(stderr,
                "ccltune fit: %zu points from %zu run(s) -> %zu sections, %zu rules, %zu models "
                "(%zu flagged poor fits); %zu corrupt and %zu hung points excluded their "
                "configurations; %zu collective/topology groups skipped (only NCCL's default "
                "measured)%s%s\n",
                sum.points, sum.runs, sum.sections, sum.rules, sum.models, sum.poor_fits,
                sum.corrupt, sum.hung, sum.skipped, out_path ? "; wrote " : "",
                out_path ? out_path : "");
    }
    if (code == CCT_EXIT_OK && accuracy) {
        cct_point *points = NULL;
        size_t n = 0;
        if (cct_store_load_points(store, fo.runs, fo.n_runs, &points, &n, &err) == CCT_OK) {
            cct_accuracy cv = {0};
            cct_point *mine = malloc((n ? n : 1) * sizeof *mine);
            for (size_t i = 0; mine && i < table.n_sections; i++) {
                const cct_section *sec = &table.sections[i];
                size_t k = 0;
                for (size_t j = 0; j < n; j++)
                    if (points[j].cfg.coll == sec->coll && points[j].cfg.ranks == sec->ranks &&
                        points[j].cfg.nodes == sec->nodes && cct_point_is_plain(&points[j]) &&
                        sec->pipe_ops == CCT_ANY && sec->reg_buff == CCT_ANY)
                        mine[k++] = points[j];
                cct_accuracy a;
                char key[128];
                if (cct_fit_accuracy(mine, k, sec->models, sec->n_models, &a, &err) == CCT_OK)
                    printf(
                        "accuracy %-28s in-sample: median %.2f %%, P95 %.2f %%, max %.2f %% over "
                        "%zu points\n",
                        cct_section_describe(sec, key, sizeof key), 100.0 * a.median, 100.0 * a.p95,
                        100.0 * a.max, a.n);
            }
            free(mine);
            cct_status cst = cct_fit_cross_validate(points, n, &fo.decide.fit, &cv, &err);
            if (cst == CCT_OK)
                printf("accuracy, all sections, leave-one-size-out: median %.2f %%, P95 %.2f %%, "
                       "max %.2f %% over "
                       "%zu points\n",
                       100.0 * cv.median, 100.0 * cv.p95, 100.0 * cv.max, cv.n);
            free(points);
        }
    }
    cct_table_destroy(&table);
    cct_store_close(store);
    return code;
}
