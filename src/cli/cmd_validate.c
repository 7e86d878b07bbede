/*
 * cmd_validate.c - `ccltune validate FILE...`: check tables before they are deployed.
 *
 * Each file goes through the same strict loader the plugin uses (cct_table_load_file), so
 * "validate says ok" means "the plugin will load it".  Good files print
 * "FILE: ok (N sections, M rules[, K NCCL model constants])" on stdout (nothing with --quiet); a
 * bad file prints the loader's message, which starts with FILE:LINE:COLUMN like a compiler's, on
 * stderr.  Every file is checked even after a failure, so one run reports every broken table.
 * A folder (what CCLTUNE_TABLE may name for a fleet, cct_fleet.h) has each of its tables checked,
 * then every pair: two tables a process could match with equal precedence at one communicator
 * shape are a configuration error (the plugin would pick by file name).  Exit status: 0 all
 * valid, 1 any invalid or unreadable or a folder conflict, 2 usage error.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cct_cli.h"
#include "cct_constants.h"
#include "cct_fleet.h"
#include "cct_table.h"

static const char *const NAME = "validate";

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: ccltune validate [--quiet] FILE...\n\n"
        "Check tuning tables with the loader the plugin uses.  Prints\n"
        "'FILE: ok (N sections, M rules)' for each valid table and\n"
        "'FILE:LINE:COLUMN: problem' on stderr for each invalid one.\n"
        "A FILE may be a folder: its *.yaml tables are each checked, then in pairs: two tables\n"
        "that match one box and communicator shape with equal precedence are\n"
        "an error (CCLTUNE_TABLE may name such a folder).\n\n"
        "  -q, --quiet   print nothing for valid tables\n"
        "  -h, --help    show this help\n\n"
        "Exit status: 0 all valid, 1 some table invalid or unreadable or a folder\n"
        "conflict, 2 usage error.\n");
}

/* Load and report one table; true when valid (t then holds it). */
static bool check_file(const char *path, bool quiet, cct_table *t)
{
    cct_error err;
    if (cct_table_load_file(path, t, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return false;
    }
    size_t rules = 0;
    for (size_t s = 0; s < t->n_sections; s++)
        rules += t->sections[s].n_rules;
    if (!quiet && t->constants.present)
        printf("%s: ok (%zu sections, %zu rules, %zu NCCL model constants)\n", path, t->n_sections,
               rules, cct_constants_count(&t->constants));
    else if (!quiet)
        printf("%s: ok (%zu sections, %zu rules)\n", path, t->n_sections, rules);
    return true;
}

/* Two tables of a folder that tie: one line on stderr; true when there was none. */
static bool check_pairs(const char *dir, char **names, const cct_table *t, const bool *ok, size_t n)
{
    bool clean = true;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int ranks, nodes;
            if (!ok[i] || !ok[j] || !cct_fleet_conflict(&t[i], &t[j], &ranks, &nodes))
                continue;
            const cct_fingerprint *fp = &t[i].fingerprint;
            fprintf(stderr,
                    "%s: %s and %s both match %s%s, NCCL %s at ranks=%d nodes=%d with equal "
                    "precedence (the plugin would use %s, first by file name); remove one or "
                    "narrow a fingerprint\n",
                    dir, names[i], names[j], fp->gpu ? fp->gpu : "any GPU",
                    fp->ranks_per_gpu > 1 ? " shared by ranks" : "", fp->nccl ? fp->nccl : "any",
                    ranks, nodes, names[i]);
            clean = false;
        }
    return clean;
}

/* Every table of a folder, then every pair; true when all is well. */
static bool check_folder(const char *dir, bool quiet)
{
    char **names;
    size_t n;
    cct_error err;
    if (cct_fleet_list(dir, &names, &n, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return false;
    }
    if (n == 0) {
        fprintf(stderr, "%s: folder holds no *.yaml table\n", dir);
        cct_fleet_list_free(names, n);
        return false;
    }
    cct_table *t = calloc(n, sizeof *t);
    bool *ok = calloc(n, sizeof *ok);
    bool good = t && ok;
    for (size_t i = 0; t && ok && i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        ok[i] = check_file(path, quiet, &t[i]);
        good = good && ok[i];
    }
    if (t && ok) {
        good = check_pairs(dir, names, t, ok, n) && good;
        if (good && !quiet)
            printf("%s: ok (folder of %zu tables, no two tie)\n", dir, n);
        for (size_t i = 0; i < n; i++)
            if (ok[i])
                cct_table_destroy(&t[i]);
    } else {
        fprintf(stderr, "%s: out of memory\n", dir);
    }
    free(t);
    free(ok);
    cct_fleet_list_free(names, n);
    return good;
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
        if (cct_fleet_is_folder(argv[i])) {
            if (!check_folder(argv[i], quiet))
                status = CCT_EXIT_FAIL;
        } else if (check_file(argv[i], quiet, &t)) {
            cct_table_destroy(&t);
        } else {
            status = CCT_EXIT_FAIL;
        }
    }
    return status;
}
