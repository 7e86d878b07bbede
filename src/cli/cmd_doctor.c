/*
 * cmd_doctor.c - `ccltune doctor`: before a job starts, will the plugin apply this table?
 *
 * An operator runs it on the target box, in the job's environment.  Every check is library
 * code that runs the plugin's own loader, fingerprint match and per-call decision
 * (src/plugin/plugin_doctor.c); this file parses the flags, adds where this ccltune's own
 * plugin is (for the hint when NCCL would load none), and prints the findings as text or
 * JSON.  Exit 0 when the table will apply as written, 1 when not (every reason listed),
 * 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cct_json_write.h"
#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_search.h"
#include "cct_table.h"
#include "plugin_doctor.h"

static const char *const NAME = "doctor";

static void help(FILE *out)
{
    fprintf(
        out,
        "usage: ccltune doctor [--table T] [--ranks N] [--nodes M] [--nccl LIB] [--json]\n\n"
        "Say whether a job started from this environment, on this box, will apply a\n"
        "tuning table: which NCCL it loads (path, version, tuner ABI), whether NCCL_TUNER_PLUGIN\n"
        "makes NCCL load ccltune's plugin, whether the plugin accepts the table (safe\n"
        "loading, format), whether its fingerprint matches this GPU and NCCL, which sections\n"
        "apply at the shape, the LL128 verdict here, and which rules the environment\n"
        "(NCCL_ALGO, NCCL_PROTO, NCCL_MAX_NCHANNELS, buffer sizes) blocks.  The checks are\n"
        "the plugin's own code.\n\n"
        "  --table T     the table (default: CCLTUNE_TABLE, as the plugin reads it)\n"
        "  --ranks N     ranks of the communicator (default: every shape in the table)\n"
        "  --nodes M     nodes of the communicator (default: every node count for N)\n"
        "  --nccl LIB    the NCCL library the job loads (default: libnccl.so.2 as the\n"
        "                loader finds it here; name a framework's bundled copy by path)\n"
        "  --json        machine-readable output\n"
        "  -h, --help    show this help\n\n"
        "Exit status: 0 the table will apply as written, 1 it will not (the reasons are\n"
        "listed), 2 usage error.\n");
}

static void print_json(const cct_doctor_report *r)
{
    printf("{\"applies\": %s,\n \"nccl\": {\"path\": ", r->applies ? "true" : "false");
    cct_json_write_string(stdout, r->nccl.path);
    printf(", \"version\": %d, \"tuner_abi\": %d},\n \"plugin\": {\"path\": ", r->nccl.version,
           r->tuner.abi);
    cct_json_write_string(stdout, r->tuner.path);
    printf(", \"ours\": %s, \"tried\": ", r->tuner.ours ? "true" : "false");
    cct_json_write_string(stdout, r->tuner.tried);
    printf(", \"own\": ");
    cct_json_write_string(stdout, r->own_plugin);
    printf("},\n \"gpu\": {\"name\": ");
    cct_json_write_string(stdout, r->gpu);
    printf(", \"cc\": %d},\n \"table\": {\"path\": ", r->cc);
    cct_json_write_string(stdout, r->table_path);
    printf(", \"status\": ");
    cct_json_write_string(stdout, r->table_status);
    printf(", \"shapes\": %zu, \"rules\": %zu, \"blocked\": %zu},\n \"checks\": [", r->n_shapes,
           r->n_rules, r->n_blocked);
    for (size_t i = 0; i < r->n_items; i++) {
        printf("%s\n  {\"check\": \"%s\", \"status\": \"%s\", \"detail\": ", i ? "," : "",
               r->items[i].check, cct_doc_level_name(r->items[i].level));
        cct_json_write_string(stdout, r->items[i].text);
        printf("}");
    }
    printf("]}\n");
}

static void print_text(const cct_doctor_report *r)
{
    size_t fails = 0;
    for (size_t i = 0; i < r->n_items; i++) {
        const cct_doc_item *it = &r->items[i];
        fails += it->level == CCT_DOC_FAIL;
        printf("%-4s %-11s %s\n", cct_doc_level_name(it->level), it->check, it->text);
    }
    if (r->applies)
        printf("\nverdict: the table will apply as written (%zu rules at %zu shape%s)\n",
               r->n_rules, r->n_shapes, r->n_shapes == 1 ? "" : "s");
    else
        printf("\nverdict: the table will NOT apply as written: %zu reason%s (lines marked fail)\n",
               fails, fails == 1 ? "" : "s");
}

int cct_cmd_doctor(int argc, char **argv)
{
    static const struct option opts[] = {{"table", required_argument, NULL, 't'},
                                         {"ranks", required_argument, NULL, 'r'},
                                         {"nodes", required_argument, NULL, 'n'},
                                         {"nccl", required_argument, NULL, 'l'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    cct_doctor_opts o = {NULL, 0, 0, NULL, NULL};
    bool json = false;
    long v;
    cct_error err;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            o.table = optarg;
            break;
        case 'l':
            o.nccl = optarg;
            break;
        case 'r':
        case 'n':
            if (cct_parse_flag_long(c == 'r' ? "--ranks" : "--nodes", optarg, 1,
                                    CCT_TABLE_MAX_RANKS, &v, &err) != CCT_OK)
                return cct_cli_usage_error(NAME, "%s", err.msg);
            *(c == 'r' ? &o.ranks : &o.nodes) = (int)v;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            help(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (optind < argc)
        return cct_cli_extra_args(NAME, argc, argv);
    char own[4096];
    if (cct_search_find_plugin(NULL, own, sizeof own, &err) == CCT_OK)
        o.own_plugin = own;
    cct_doctor_report r;
    if (cct_doctor_run(&o, &r, &err) != CCT_OK) {
        cct_doctor_report_free(&r);
        return cct_cli_fail(NAME, "%s", err.msg);
    }
    if (json)
        print_json(&r);
    else
        print_text(&r);
    int code = r.applies ? CCT_EXIT_OK : CCT_EXIT_FAIL;
    cct_doctor_report_free(&r);
    return code;
}
