/*
 * cmd_audit.c - `ccltune audit RECORDING... [--table T] [--json]`: what NCCL ran in a job
 * recorded by the profiler half of the plugin (CCLTUNE_RECORD), by collective and size
 * band, and with a table whether NCCL ran the table's choices.
 *
 * The merging and the verdicts are cct_audit_run() (cct_recording_audit.h); this file
 * loads the recordings and the table, prints text or JSON and picks the exit status:
 * 0 every call the table has a rule for ran as the rule asked (always 0 without a table),
 * 1 some did not, 2 a usage error or an input that does not load (so a script never
 * mistakes "could not check" for "mismatch").  A folder operand means every *.rec file
 * in it.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cct_json_write.h"
#include "cct_cli.h"
#include "cct_cli_job.h"
#include "cct_grow.h"
#include "cct_names.h"
#include "cct_parse.h"
#include "cct_recording.h"
#include "cct_recording_audit.h"
#include "cct_table.h"

static const char *const NAME = "audit";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ccltune audit [--table T [--store DB] [--steps N]] [--json] RECORDING...\n\n"
            "Say what NCCL ran in a recorded job: per collective, communicator shape and\n"
            "size band, the calls (counted per rank), their GPU time and the algorithm,\n"
            "protocol and channel count NCCL executed, by NCCL's own profiler report.\n"
            "Record with NCCL_PROFILER_PLUGIN=PATH/libnccl-tuner-ccltune.so and\n"
            "CCLTUNE_RECORD=DIR (docs/plugin.md);\n"
            "a RECORDING that is a folder stands for every *.rec file in it.\n\n"
            "  -t, --table T  compare with table T: calls that ran the rule's choice, calls\n"
            "                 left to NCCL (no rule), every mismatch with its calls, and the\n"
            "                 time saved as estimated from the rules' measured gains\n"
            "  --store DB     take the gains from DB's measurements instead: NCCL's default\n"
            "                 vs the rule's configuration at each recorded size (the nearest\n"
            "                 size measured within 2x; search --sizes-from measures them; a\n"
            "                 bench store's timing of the table as applied comes first)\n"
            "  --steps N      the recorded job ran N training steps: the saving is given per\n"
            "                 step (without: over the whole recorded job), per rank process\n"
            "  --json         one JSON object on stdout instead of text\n"
            "  -h, --help     show this help\n\n"
            "Exit status: 0 every call the table has a rule for ran as the rule asked (or no\n"
            "--table), 1 some ran something else, 2 usage error or an input that does not\n"
            "load.\n");
}

typedef struct inputs {
    char **paths;
    size_t n, cap;
} inputs;

static bool add_path(inputs *in, const char *path)
{
    if (!cct_grow((void **)&in->paths, &in->cap, in->n + 1, sizeof *in->paths))
        return false;
    return (in->paths[in->n] = strdup(path)) ? (in->n++, true) : false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file as is; a folder as its *.rec files, sorted. */
static int expand(inputs *in, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode))
        return add_path(in, arg) ? CCT_EXIT_OK : cct_cli_fail(NAME, "out of memory");
    DIR *d = opendir(arg);
    if (!d)
        return cct_cli_fail(NAME, "%s: cannot open the folder", arg);
    size_t first = in->n;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".rec") != 0 || e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
        if (!add_path(in, path)) {
            closedir(d);
            return cct_cli_fail(NAME, "out of memory");
        }
    }
    closedir(d);
    if (in->n == first)
        return cct_cli_fail(NAME, "%s: no recordings (*.rec) in this folder", arg);
    qsort(in->paths + first, in->n - first, sizeof *in->paths, cmp_str);
    return CCT_EXIT_OK;
}

static const char *algo_s(int a)
{
    return a >= 0 ? cct_algo_name(a) : "unknown";
}

static const char *proto_s(int p)
{
    return p >= 0 ? cct_proto_name(p) : "unknown";
}

static const char *coll_s(int c)
{
    return c >= 0 && c < CCT_NUM_COLLS ? cct_coll_name(c) : "other";
}

static void config_s(int algo, int proto, int channels, char *buf, size_t len)
{
    if (channels > 0)
        snprintf(buf, len, "%s/%s/%d", algo_s(algo), proto_s(proto), channels);
    else
        snprintf(buf, len, "%s/%s", algo_s(algo), proto_s(proto));
}

static void band_s(const cct_audit_line *l, char *buf, size_t len)
{
    char a[32], b[32];
    cct_format_bytes_exact(l->lo, a, sizeof a);
    cct_format_bytes_exact(l->hi, b, sizeof b);
    snprintf(buf, len, "%s-%s", a, b);
}

static bool same_band(const cct_audit_line *a, const cct_audit_line *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->nodes == b->nodes && a->lo == b->lo;
}

static void print_text(const cct_audit *a, const char *table, const cct_job_weighting *w)
{
    char band[80], cfg[64], want[64], lo[32], hi[32];
    for (size_t i = 0; i < a->n_lines; i++) {
        const cct_audit_line *l = &a->lines[i];
        if (i == 0 || !same_band(l, &a->lines[i - 1])) {
            band_s(l, band, sizeof band);
            printf("%s, %d ranks (%d nodes), %s", coll_s(l->coll), l->ranks, l->nodes, band);
            if (l->want_algo >= 0) {
                config_s(l->want_algo, l->want_proto, l->want_channels, want, sizeof want);
                printf(": table asks %s", want);
            } else if (table)
                printf(": no rule, NCCL decides");
            printf("\n");
        }
        config_s(l->algo, l->proto, l->channels, cfg, sizeof cfg);
        cct_format_bytes_exact(l->min_bytes, lo, sizeof lo);
        cct_format_bytes_exact(l->max_bytes, hi, sizeof hi);
        printf("  ran %-22s %10llu calls", cfg, (unsigned long long)l->calls);
        if (l->timed)
            printf("  mean %9.1f us GPU", (double)l->total_ns / (double)l->timed / 1e3);
        else
            printf("  %21s", "no GPU time");
        if (l->min_bytes == l->max_bytes)
            printf("  size %s", lo);
        else
            printf("  sizes %s..%s", lo, hi);
        if (l->verdict == CCT_AUDIT_MISMATCH)
            printf("  MISMATCH");
        printf("\n");
    }
    printf("%llu calls in %zu recording%s (%zu communicator%s), %llu with GPU time, %.3f ms "
           "GPU in all\n",
           (unsigned long long)a->calls, a->n_recordings, a->n_recordings == 1 ? "" : "s",
           a->n_comms, a->n_comms == 1 ? "" : "s", (unsigned long long)a->timed,
           (double)a->total_ns / 1e6);
    if (a->dropped || a->late)
        printf("not counted: %llu calls (a recorder's table was full), %llu late kernel "
               "events\n",
               (unsigned long long)a->dropped, (unsigned long long)a->late);
    if (table)
        printf("table %s: %llu calls ran the table's choice, %llu were left to NCCL, %llu "
               "mismatched (%zu configuration%s)\n",
               table, (unsigned long long)a->as_asked, (unsigned long long)a->left,
               (unsigned long long)a->mismatched, a->mismatch_lines,
               a->mismatch_lines == 1 ? "" : "s");
    if (table && a->evidence_ns > 0)
        printf("estimated saving: %.3f ms GPU (95 %% CI %.3f..%.3f), %.1f %% of the %.3f ms the "
               "recorded calls would have taken with NCCL's own choices; from each rule's "
               "measured gain over NCCL's choice (at its reference size) applied to the %.3f ms "
               "spent under rules with evidence\n",
               a->saved_ns / 1e6, a->saved_lo_ns / 1e6, a->saved_hi_ns / 1e6,
               100.0 * a->saved_ns / ((double)a->total_ns + a->saved_ns),
               ((double)a->total_ns + a->saved_ns) / 1e6, a->evidence_ns / 1e6);
    if (table && a->no_evidence_calls)
        printf("no estimate for %llu calls that ran rules without measured evidence%s\n",
               (unsigned long long)a->no_evidence_calls,
               w->store ? " (no measurement of NCCL's default and the rule's choice within 2x "
                          "of their size in the store)"
                        : "");
    if (table && a->evidence_ns > 0)
        cct_cli_print_job(a, w);
}

static void print_json(const cct_audit *a, const char *table, const cct_job_weighting *w)
{
    printf("{\"recordings\":%zu,\"communicators\":%zu,\"calls\":%llu,\"timed\":%llu,"
           "\"gpu_ns\":%llu,\"dropped\":%llu,\"late\":%llu,\"table\":",
           a->n_recordings, a->n_comms, (unsigned long long)a->calls, (unsigned long long)a->timed,
           (unsigned long long)a->total_ns, (unsigned long long)a->dropped,
           (unsigned long long)a->late);
    if (table)
        cct_json_write_string(stdout, table);
    else
        printf("null");
    printf(",\"as_asked\":%llu,\"left_to_nccl\":%llu,\"mismatched\":%llu,"
           "\"evidence_ns\":%.0f,\"saved_ns\":%.0f,\"saved_lo_ns\":%.0f,\"saved_hi_ns\":%.0f,"
           "\"no_evidence_calls\":%llu",
           (unsigned long long)a->as_asked, (unsigned long long)a->left,
           (unsigned long long)a->mismatched, a->evidence_ns, a->saved_ns, a->saved_lo_ns,
           a->saved_hi_ns, (unsigned long long)a->no_evidence_calls);
    if (table)
        cct_cli_print_json_job(a, w);
    printf(",\"lines\":[");
    for (size_t i = 0; i < a->n_lines; i++) {
        const cct_audit_line *l = &a->lines[i];
        printf("%s{\"coll\":\"%s\",\"ranks\":%d,\"nodes\":%d,\"band_lo\":%llu,\"band_hi\":",
               i ? "," : "", coll_s(l->coll), l->ranks, l->nodes, (unsigned long long)l->lo);
        if (l->hi == CCT_BYTES_INF)
            printf("null");
        else
            printf("%llu", (unsigned long long)l->hi);
        printf(",\"min_bytes\":%llu,\"max_bytes\":%llu,\"algo\":\"%s\",\"proto\":\"%s\","
               "\"channels\":%d,\"calls\":%llu,\"timed\":%llu,\"gpu_ns\":%llu,\"hist\":[",
               (unsigned long long)l->min_bytes, (unsigned long long)l->max_bytes, algo_s(l->algo),
               proto_s(l->proto), l->channels, (unsigned long long)l->calls,
               (unsigned long long)l->timed, (unsigned long long)l->total_ns);
        for (int b = 0; b < CCT_RECORDING_HIST; b++)
            printf("%s%llu", b ? "," : "", (unsigned long long)l->hist[b]);
        printf("],\"verdict\":\"%s\",\"want\":", cct_audit_verdict_name(l->verdict));
        if (l->want_algo >= 0)
            printf("{\"algo\":\"%s\",\"proto\":\"%s\",\"channels\":%d,\"gain\":%.4g,"
                   "\"saved_ns\":%.0f}",
                   algo_s(l->want_algo), proto_s(l->want_proto), l->want_channels, l->gain,
                   l->saved_ns);
        else
            printf("null");
        printf("}");
    }
    printf("]}\n");
}

static int audit_files(inputs *in, const char *table_path, const cct_job_weighting *w, bool json)
{
    cct_recording *recs = calloc(in->n, sizeof *recs);
    if (!recs)
        return cct_cli_fail(NAME, "out of memory");
    cct_error err;
    cct_table table;
    bool have_table = false;
    int status = CCT_EXIT_OK;
    size_t loaded = 0;
    for (; loaded < in->n; loaded++)
        if (cct_recording_load_file(in->paths[loaded], &recs[loaded], &err) != CCT_OK) {
            fprintf(stderr, "%s\n", err.msg);
            status = CCT_EXIT_USAGE;
            goto out;
        }
    if (table_path) {
        if (cct_table_load_file(table_path, &table, &err) != CCT_OK) {
            fprintf(stderr, "%s\n", err.msg);
            status = CCT_EXIT_USAGE;
            goto out;
        }
        have_table = true;
    }
    cct_audit a;
    if (cct_cli_job_audit(recs, in->n, have_table ? &table : NULL, w, &a, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        status = CCT_EXIT_USAGE;
        goto out;
    }
    if (json)
        print_json(&a, table_path, w);
    else
        print_text(&a, table_path, w);
    status = a.mismatched ? CCT_EXIT_FAIL : CCT_EXIT_OK;
    cct_audit_destroy(&a);
out:
    for (size_t i = 0; i < loaded; i++)
        cct_recording_destroy(&recs[i]);
    free(recs);
    if (have_table)
        cct_table_destroy(&table);
    return status;
}

int cct_cmd_audit(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_STORE, OPT_STEPS };
    static const struct option options[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"steps", required_argument, NULL, OPT_STEPS},
        {"table", required_argument, NULL, 't'},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *table = NULL;
    bool json = false;
    cct_job_weighting w = {0, NULL};
    cct_error perr;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":t:h", options, NULL)) != -1) {
        switch (c) {
        case 't':
            table = optarg;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_STORE:
            w.store = optarg;
            break;
        case OPT_STEPS:
            if (cct_parse_flag_long("--steps", optarg, 1, 1000000000000L, &w.steps, &perr) !=
                CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            break;
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (optind >= argc)
        return cct_cli_usage_error(NAME, "expected at least one recording");
    if ((w.store || w.steps) && !table)
        return cct_cli_usage_error(NAME, "%s weighs the table's saving: it needs --table",
                                   w.store ? "--store" : "--steps");
    inputs in = {0};
    int status = CCT_EXIT_OK;
    for (int i = optind; i < argc && status == CCT_EXIT_OK; i++)
        if (expand(&in, argv[i]) != CCT_EXIT_OK)
            status = CCT_EXIT_USAGE;
    if (status == CCT_EXIT_OK)
        status = audit_files(&in, table, &w, json);
    for (size_t i = 0; i < in.n; i++)
        free(in.paths[i]);
    free(in.paths);
    return status;
}
