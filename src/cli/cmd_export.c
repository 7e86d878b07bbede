/*
 * cmd_export.c - `ccltune export TABLE.yaml --format nccl-example-csv [-o FILE]`: a tuning
 * table in another tool's format, for users of NCCL's example tuner plugin.
 *
 * The table goes through the strict loader the plugin uses, so only a valid table is
 * exported; the conversion (inclusive bands, the open band's upper bound, channels, what
 * the format cannot carry) is cct_export_csv.c's and is described in
 * docs/import-export.md.  With -o the file is written next to its destination and renamed
 * into place, so a reader never sees half a configuration; without it the text goes to
 * stdout.  --format is required so that scripts keep working when more formats come.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cct_atomic_file.h"
#include "cct_cli.h"
#include "cct_export_csv.h"
#include "cct_table.h"

static const char *const NAME = "export";

static void usage(FILE *out)
{
    fprintf(out, "usage: ccltune export TABLE.yaml --format nccl-example-csv [-o FILE]\n\n"
                 "Write a tuning table as the CSV configuration of NCCL's example tuner plugin\n"
                 "(NCCL_TUNER_CONFIG_FILE).  Bands become inclusive [min_bytes, max_bytes];\n"
                 "chunk sizes and recommended environment variables have no column and are\n"
                 "named in the file's comment header.\n\n"
                 "  -f, --format FORMAT  nccl-example-csv (the only format so far; required)\n"
                 "  -o, --output FILE    write FILE (atomically) instead of stdout\n"
                 "  -h, --help           show this help\n\n"
                 "Exit status: 0 written, 1 the table is invalid or writing failed, 2 usage "
                 "error.\n");
}

/* Export into a temporary file beside path, then rename it over path (cct_atomic_file.h). */
static int export_to_file(const cct_table *t, const char *source, const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    cct_atomic_file a;
    cct_error err;
    /* a config is read by others: the mode a plain new file would get */
    cct_status st = cct_atomic_open(&a, path, 0666 & ~mask, &err);
    if (st == CCT_OK) {
        st = cct_export_nccl_example_csv(t, source, a.f, &err);
        if (st == CCT_OK) {
            st = cct_atomic_commit(&a, &err);
        } else {
            cct_atomic_abort(&a);
            cct_error_prefix(&err, "%s", path);
        }
    }
    return st == CCT_OK ? CCT_EXIT_OK : cct_cli_fail(NAME, "%s", err.msg);
}

int cct_cmd_export(int argc, char **argv)
{
    static const struct option options[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *output = NULL;
    optind = 1;
    opterr = 0;
    int c;
    /* no '+': the table may come before the flags, as in the usage line */
    while ((c = getopt_long(argc, argv, ":f:o:h", options, NULL)) != -1) {
        switch (c) {
        case 'f':
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (!format)
        return cct_cli_usage_error(NAME, "--format is required (nccl-example-csv)");
    if (strcmp(format, "nccl-example-csv") != 0)
        return cct_cli_usage_error(NAME, "unknown format '%s' (nccl-example-csv)", format);
    if (optind >= argc)
        return cct_cli_usage_error(NAME, "no table given");
    if (argc - optind > 1)
        return cct_cli_usage_error(NAME, "unexpected argument '%s' (one table at a time)",
                                   argv[optind + 1]);
    const char *path = argv[optind];
    cct_table t;
    cct_error err;
    if (cct_table_load_file(path, &t, &err) != CCT_OK)
        return cct_cli_fail(NAME, "%s", err.msg);
    int rc;
    if (output) {
        rc = export_to_file(&t, path, output);
    } else if (cct_export_nccl_example_csv(&t, path, stdout, &err) != CCT_OK) {
        rc = cct_cli_fail(NAME, "%s", err.msg);
    } else {
        rc = CCT_EXIT_OK;
    }
    cct_table_destroy(&t);
    return rc;
}
