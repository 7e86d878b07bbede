/*
 * cmd_validate.c - `ccltune validate FILE...`: check tables before they are deployed.
 *
 * Each file goes through the same strict loader the plugin uses (cct_table_load_file), so
 * "validate says ok" means "the plugin will load it".  Good files print
 * "FILE: ok (N sections, M rules[, K NCCL model constants])" on stdout (nothing with --quiet); a
 * bad file prints the loader's message, which starts with FILE:LINE:COLUMN like a compiler's, on
 * stderr.  Every file is checked even after a failure, so one run reports every broken table.  Exit
 * status: 0 all valid, 1 any invalid or unreadable, 2 usage error.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cct_cli.h"
#include "cct_constants.h"
#include "cct_table.h"

static const char *const NAME = "validate";

static void usage(FILE *out)
{
    fprintf(out, "usage: ccltune validate [--quiet] FILE...\n\n"
                 "Check tuning tables with the loader the plugin uses.  Prints\n"
                 "'FILE: ok (N sections, M rules)' for each valid table and\n"
                 "'FILE:LINE:COLUMN: problem' on stderr for each invalid one.\n\n"
                 "  -q, --quiet   print nothing for valid tables\n"
                 "  -h, --help    show this help\n\n"
                 "Exit status: 0 all valid, 1 some table invalid or unreadable, 2 usage error.\n");
}

int cct_cmd_validate(int argc, char **argv)
{
    static const struct option options[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool quiet = false;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":qh", options, NULL)) != -1) {
        switch (c) {
        case 'q':
            quiet = true;
            break;
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (optind >= argc)
        return cct_cli_usage_error(NAME, "no table given");
    int status = CCT_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        cct_table t;
        cct_error err;
        if (cct_table_load_file(argv[i], &t, &err) != CCT_OK) {
            fprintf(stderr, "%s\n", err.msg);
            status = CCT_EXIT_FAIL;
            continue;
        }
        size_t rules = 0;
        for (size_t s = 0; s < t.n_sections; s++)
            rules += t.sections[s].n_rules;
        if (!quiet && t.constants.present)
            printf("%s: ok (%zu sections, %zu rules, %zu NCCL model constants)\n", argv[i],
                   t.n_sections, rules, cct_constants_count(&t.constants));
        else if (!quiet)
            printf("%s: ok (%zu sections, %zu rules)\n", argv[i], t.n_sections, rules);
        cct_table_destroy(&t);
    }
    return status;
}
