/*
 * cmd_diff.c - `ccltune diff OLD.yaml NEW.yaml`: what changed between two tables, one line
 * per change, in words a reviewer reads in a pull request.
 *
 * The comparison is cct_table_diff() (cct_table_diff.h); this file loads both tables with
 * the loader the plugin uses, prints the lines of the levels asked for and a last summary
 * line, and chooses the exit status like diff(1): 0 the decisions are equal (provenance
 * and other bookkeeping may differ: --all lists it), 1 they differ, 2 trouble -- a usage
 * error or a table that does not load, whose FILE:LINE:COLUMN message is printed on stderr
 * as `ccltune validate` prints it.  2 rather than 1 for a broken file, so that a script
 * never mistakes "could not compare" for "changed".
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_table.h"
#include "cct_table_diff.h"

static const char *const NAME = "diff";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ccltune diff [--threshold F] [--all] [--fail-on any|significant]\n"
            "                    OLD.yaml NEW.yaml\n"
            "       ccltune diff --agreement [--min-bytes N] [--max-bytes N] A.yaml B.yaml\n\n"
            "Say what changed between two tuning tables, one line per change:\n"
            "  allreduce, 8 ranks (1 node), 2 MiB–4 MiB: ring/ll → ring/simple, predicted 12 %% "
            "faster\n"
            "Decisions are compared size range by size range over both tables' band edges.\n\n"
            "  --threshold F  list a configuration whose predicted time moved by more than\n"
            "                 this fraction (default 0.05)\n"
            "  -a, --all      also list provenance, the LL128 reason and refitted models\n"
            "  --fail-on WHAT exit 1 for any decision change (any, the default) or only for\n"
            "                 significant ones (beyond both tables' measured noise)\n"
            "  --agreement    instead, count the sizes (4 per octave) where both tables choose\n"
            "                 the same algorithm, protocol and channels, per collective\n"
            "  --min-bytes N, --max-bytes N  its range of sizes (default 1K to 64M)\n"
            "  -h, --help     show this help\n\n"
            "The last line counts the decision changes: N significant, M within noise.\n\n"
            "Exit status: 0 the decisions are equal, 1 they differ, 2 usage error or a table\n"
            "that does not load.\n");
}

static void summary(const cct_diff *d, bool all)
{
    size_t dec = d->n_level[CCT_DIFF_DECISION], note = d->n_level[CCT_DIFF_NOTE];
    size_t rec = d->n_level[CCT_DIFF_RECORD];
    if (dec)
        printf("%zu decision change%s", dec, dec == 1 ? "" : "s");
    else
        printf("decisions unchanged");
    if (note)
        printf(", %zu note%s", note, note == 1 ? "" : "s");
    if (rec && all)
        printf(", %zu record change%s (provenance, models)", rec, rec == 1 ? "" : "s");
    else if (rec)
        printf("; %zu record change%s (provenance, models) not shown, --all lists %s", rec,
               rec == 1 ? "" : "s", rec == 1 ? "it" : "them");
    printf("\n%zu significant change%s, %zu within noise\n", d->n_significant,
           d->n_significant == 1 ? "" : "s", d->n_within_noise);
}

static int print_agreement(const cct_table *a, const cct_table *b, uint64_t lo, uint64_t hi)
{
    cct_agreement ag;
    cct_error err;
    if (cct_table_agreement(a, b, lo, hi, 4, &ag, &err) != CCT_OK)
        return cct_cli_usage_error(NAME, "%s", err.msg);
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        if (ag.coll_sizes[c])
            printf("%s: %zu of %zu sizes agree (%.1f %%)\n", cct_coll_name(c), ag.coll_agree[c],
                   ag.coll_sizes[c], 100.0 * (double)ag.coll_agree[c] / (double)ag.coll_sizes[c]);
    printf("agreement: %zu of %zu sizes (%.1f %%)\n", ag.agree, ag.sizes,
           ag.sizes ? 100.0 * (double)ag.agree / (double)ag.sizes : 100.0);
    return CCT_EXIT_OK;
}

int cct_cmd_diff(int argc, char **argv)
{
    enum { OPT_THRESHOLD = 256, OPT_AGREEMENT, OPT_MIN_BYTES, OPT_MAX_BYTES, OPT_FAIL_ON };
    static const struct option options[] = {
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"all", no_argument, NULL, 'a'},
        {"agreement", no_argument, NULL, OPT_AGREEMENT},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"min-bytes", required_argument, NULL, OPT_MIN_BYTES},
        {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cct_diff_options opt;
    cct_diff_options_default(&opt);
    bool all = false, agreement = false, only_significant = false;
    uint64_t min_bytes = 1024, max_bytes = 64u << 20;
    cct_error perr;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ah", options, NULL)) != -1) {
        switch (c) {
        case 'a':
            all = true;
            break;
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        case OPT_THRESHOLD:
            if (cct_parse_flag_double("--threshold", optarg, 0.0, 1e6, &opt.threshold, &perr) !=
                CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            break;
        case OPT_FAIL_ON: {
            static const cct_enum_name fail_on[] = {{"any", 0}, {"significant", 1}, {NULL, 0}};
            int v = 0;
            if (cct_parse_enum("--fail-on", optarg, fail_on, &v, &perr) != CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            only_significant = v == 1;
            break;
        }
        case OPT_AGREEMENT:
            agreement = true;
            break;
        case OPT_MIN_BYTES:
        case OPT_MAX_BYTES:
            if (cct_parse_flag_size(c == OPT_MIN_BYTES ? "--min-bytes" : "--max-bytes", optarg, 1,
                                    UINT64_MAX, c == OPT_MIN_BYTES ? &min_bytes : &max_bytes,
                                    &perr) != CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            break;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (argc - optind != 2)
        return cct_cli_usage_error(NAME, "expected two tables (OLD.yaml NEW.yaml), got %d",
                                   argc - optind);
    cct_table old_t, new_t;
    cct_error err;
    if (cct_table_load_file(argv[optind], &old_t, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return CCT_EXIT_USAGE;
    }
    if (cct_table_load_file(argv[optind + 1], &new_t, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        cct_table_destroy(&old_t);
        return CCT_EXIT_USAGE;
    }
    if (agreement) {
        int rc = print_agreement(&old_t, &new_t, min_bytes, max_bytes);
        cct_table_destroy(&old_t);
        cct_table_destroy(&new_t);
        return rc;
    }
    cct_diff d;
    cct_status st = cct_table_diff(&old_t, &new_t, &opt, &d, &err);
    cct_table_destroy(&old_t);
    cct_table_destroy(&new_t);
    if (st != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        return CCT_EXIT_USAGE;
    }
    for (size_t i = 0; i < d.n_changes; i++)
        if (d.changes[i].level != CCT_DIFF_RECORD || all)
            printf("%s\n", d.changes[i].text);
    summary(&d, all);
    bool same = only_significant ? cct_diff_no_significant(&d) : cct_diff_decisions_equal(&d);
    int status = same ? CCT_EXIT_OK : CCT_EXIT_FAIL;
    cct_diff_destroy(&d);
    return status;
}
