/*
 * cmd_import.c - `ccltune import FILE...`: measurements other tools wrote (nccl-tests text
 * or -J JSON output, the CSV of NCCL's example tuner scripts) into the measurement store.
 *
 * All or nothing per invocation: every file is parsed, and all of them checked against
 * each other for conflicting duplicates and every point against the store's own checks,
 * before the store is opened (a dry run stops there, so it refuses what the import would);
 * any problem is reported (FILE:LINE:COL on stderr) and nothing is written.  Then one store
 * run (source "nccl-tests" or "csv") receives the points, identical duplicates once, in a
 * single store batch: a store failure half way (a full disk) leaves the store as it was.  Per file,
 * one line tells what was understood (points, collective, algorithm/protocol, ranks and nodes) so a
 * wrong inference is seen before it is fitted.  docs/import-export.md describes the formats and the
 * rules.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cli.h"
#include "cct_cli_import_rec.h"
#include "cct_fingerprint.h"
#include "cct_parse.h"
#include "cct_import.h"
#include "cct_search_run.h"
#include "cct_store.h"

static const char *const NAME = "import";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ccltune import [--store FILE] [--format FORMAT] [--coll C] [--algo A]\n"
            "                      [--proto P] [--ranks N] [--nodes N] [--nccl VERSION]\n"
            "                      [--dry-run] FILE...\n"
            "       ccltune import [--store FILE] [--table T] [--dry-run] RECORDING...\n\n"
            "Import measurements into the store as one run: nccl-tests output (text, or\n"
            "its -J JSON) or the performance CSV of NCCL's example tuner scripts.  Every\n"
            "file is checked before anything is written; an error names FILE:LINE:COL.\n"
            "Recordings of a job (CCLTUNE_RECORD files, or folders of them) become one run of\n"
            "production observations (source production), merged over every rank's file:\n"
            "the mean GPU time per call of each configuration, shape and size; fit leaves\n"
            "them out unless --include-production.\n\n"
            "  -s, --store FILE     measurement store (default: measurements.db)\n"
            "  -f, --format FORMAT  auto (default), nccl-tests, nccl-tests-json, csv or\n"
            "                       recording\n"
            "      --table T|none   recordings (required): the table the job ran with; calls\n"
            "                       that ran its rules' choice are observations of that\n"
            "                       configuration, the rest of NCCL's own choice; none: the\n"
            "                       job ran without a table, every call was NCCL's own choice\n"
            "      --coll C         the collective, for logs that do not name it\n"
            "                       (nccl-tests before 2.17): allreduce, all_reduce, ...\n"
            "      --algo A         the algorithm NCCL was forced to (ring, tree, ...), or\n"
            "                       'default'; needed when the log does not show NCCL_ALGO\n"
            "      --proto P        the protocol (ll, ll128, simple) or 'default'\n"
            "      --ranks N        ranks, when the log does not list them\n"
            "      --nodes N        nodes, when the log's host names do not tell NCCL's node\n"
            "                       count (NCCL_HOSTID) and NCCL's INFO lines are missing\n"
            "      --nccl VERSION   the NCCL version (2.28.9), for logs that do not say it; a\n"
            "                       table fitted from the run must name one the plugin can match\n"
            "  -n, --dry-run        check and summarise the files, write nothing\n"
            "  -h, --help           show this help\n\n"
            "A flag that contradicts what a log says is an error, not an override.\n\n"
            "Exit status: 0 imported, 1 a file was refused or the store failed, 2 usage error.\n");
}

static int parse_choice(const char *flag, const char *v, int (*lookup)(const char *), int *out)
{
    if (strcmp(v, "default") == 0) {
        *out = CCT_DEFAULT;
        return CCT_EXIT_OK;
    }
    *out = lookup(v);
    if (*out < 0)
        return cct_cli_usage_error(NAME, "unknown %s '%s'", flag, v);
    return CCT_EXIT_OK;
}

typedef struct import_args {
    const char *store;
    int format;
    bool dry_run;
    const char *nccl;  /* --nccl, NULL when not given */
    const char *table; /* --table, recordings only */
    cct_import_opts opts;
} import_args;

static int parse_args(int argc, char **argv, import_args *a)
{
    enum { OPT_COLL = 256, OPT_ALGO, OPT_PROTO, OPT_RANKS, OPT_NODES, OPT_NCCL, OPT_TABLE };
    static const struct option options[] = {
        {"store", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'f'},
        {"coll", required_argument, NULL, OPT_COLL},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"proto", required_argument, NULL, OPT_PROTO},
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"nccl", required_argument, NULL, OPT_NCCL},
        {"table", required_argument, NULL, OPT_TABLE},
        {"dry-run", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->store = "measurements.db";
    a->format = CCT_IMPORT_AUTO;
    a->dry_run = false;
    a->nccl = NULL;
    a->table = NULL;
    cct_import_opts_init(&a->opts);
    optind = 1;
    opterr = 0;
    int c, rc = CCT_EXIT_OK;
    long v;
    cct_error perr;
    while (rc == CCT_EXIT_OK && (c = getopt_long(argc, argv, ":s:f:nh", options, NULL)) != -1) {
        switch (c) {
        case 's':
            a->store = optarg;
            break;
        case 'f':
            a->format = cct_import_format_from_name(optarg);
            if (a->format < 0)
                rc = cct_cli_usage_error(NAME,
                                         "unknown format '%s' (auto, nccl-tests, "
                                         "nccl-tests-json, csv)",
                                         optarg);
            break;
        case OPT_COLL:
            a->opts.coll = cct_coll_from_name(optarg);
            if (a->opts.coll < 0)
                rc = cct_cli_usage_error(NAME, "unknown collective '%s'", optarg);
            break;
        case OPT_ALGO:
            rc = parse_choice("algorithm", optarg, cct_algo_from_name, &a->opts.algo);
            break;
        case OPT_PROTO:
            rc = parse_choice("protocol", optarg, cct_proto_from_name, &a->opts.proto);
            break;
        case OPT_RANKS:
        case OPT_NODES:
            if (cct_parse_flag_long(c == OPT_RANKS ? "--ranks" : "--nodes", optarg, 1, 1 << 24, &v,
                                    &perr) != CCT_OK)
                rc = cct_cli_usage_error(NAME, "%s", perr.msg);
            else
                *(c == OPT_RANKS ? &a->opts.ranks : &a->opts.nodes) = (int)v;
            break;
        case OPT_NCCL:
            /* the plugin's own reading of a version (cct_fingerprint.h) */
            if (cct_nccl_version_parse(optarg) < 0)
                rc = cct_cli_usage_error(NAME, "--nccl wants an NCCL version like 2.28.9, not '%s'",
                                         optarg);
            a->nccl = optarg;
            break;
        case OPT_TABLE:
            a->table = optarg;
            break;
        case 'n':
            a->dry_run = true;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            rc = cct_cli_flag_error(NAME, c, argv);
        }
    }
    if (rc == CCT_EXIT_OK && optind >= argc)
        rc = cct_cli_usage_error(NAME, "no file given");
    if (rc == CCT_EXIT_OK && a->opts.ranks != CCT_IMPORT_FROM_INPUT &&
        a->opts.nodes != CCT_IMPORT_FROM_INPUT && a->opts.nodes > a->opts.ranks)
        rc = cct_cli_usage_error(NAME, "--nodes %d is more than --ranks %d", a->opts.nodes,
                                 a->opts.ranks);
    return rc;
}

/* "a+b" of the distinct names among the points, in enum order. */
static void names_of(const cct_import_result *r, int which, char *buf, size_t len)
{
    unsigned seen = 0; /* bit 0: CCT_DEFAULT, bit i+1: value i */
    for (size_t i = 0; i < r->n_points; i++) {
        const cct_config *c = &r->points[i].cfg;
        int v = which == 0 ? c->coll : which == 1 ? c->algo : c->proto;
        if (v >= -1 && v < 31)
            seen |= 1u << (v + 1);
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int v = -1; v < 31; v++) {
        if (!(seen & (1u << (v + 1))))
            continue;
        const char *n = v == CCT_DEFAULT ? "default"
                        : which == 0     ? cct_coll_name(v)
                        : which == 1     ? cct_algo_name(v)
                                         : cct_proto_name(v);
        int k = snprintf(buf + used, len - used, "%s%s", used ? "+" : "", n);
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k;
    }
}

/* "8 ranks on 2 nodes", or the distinct topologies joined with ", ". */
static void topologies_of(const cct_import_result *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_points; i++) {
        const cct_config *c = &r->points[i].cfg;
        bool earlier = false;
        for (size_t j = 0; j < i && !earlier; j++)
            earlier = r->points[j].cfg.ranks == c->ranks && r->points[j].cfg.nodes == c->nodes;
        if (earlier)
            continue;
        int k = snprintf(buf + used, len - used, "%s%d ranks on %d node%s", used ? ", " : "",
                         c->ranks, c->nodes, c->nodes == 1 ? "" : "s");
        if (k < 0 || (size_t)k >= len - used)
            break;
        used += (size_t)k;
    }
}

static void summarise(const char *file, const cct_import_result *r)
{
    char colls[128], algos[128], protos[64], topo[256];
    names_of(r, 0, colls, sizeof colls);
    names_of(r, 1, algos, sizeof algos);
    names_of(r, 2, protos, sizeof protos);
    topologies_of(r, topo, sizeof topo);
    size_t dups = 0, bad = 0;
    for (size_t i = 0; i < r->n_points; i++) {
        dups += r->meta[i].duplicate;
        bad += r->points[i].status != CCT_POINT_OK;
    }
    printf("%s: %zu points (%s, %d run%s): %s, algo %s, proto %s, %s", file, r->n_points,
           cct_import_format_name(r->format), r->runs, r->runs == 1 ? "" : "s", colls, algos,
           protos, topo);
    if (bad)
        printf("; %zu with wrong results (stored as corrupt)", bad);
    if (dups)
        printf("; %zu identical to points of an earlier file (stored once)", dups);
    printf("\n");
}

/* Parse every file; report every failure.  Returns the number of files refused. */
static int parse_all(char **files, int n, const import_args *a, cct_import_result *results)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        cct_error err;
        cct_import_result_init(&results[i]);
        if (cct_import_file(files[i], a->format, &a->opts, &results[i], &err) != CCT_OK) {
            cct_cli_fail(NAME, "%s", err.msg);
            failed++;
        }
    }
    return failed;
}

/* One fingerprint for the run: what the files say about the machine.  Files that name
 * different GPUs or NCCL versions come from different machines or software. */
static int fingerprint(const cct_import_result *r, int n, char **files, const char *nccl,
                       cct_store_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    int gpu_from = -1, nccl_from = -1;
    for (int i = 0; i < n; i++)
        if (nccl && r[i].nccl_version[0] && strcmp(r[i].nccl_version, nccl) != 0)
            return cct_cli_fail(NAME, "%s ran NCCL %s but --nccl %s was given", files[i],
                                r[i].nccl_version, nccl);
    if (nccl)
        snprintf(fp->nccl, sizeof fp->nccl, "%s", nccl);
    for (int i = 0; i < n; i++) {
        if (r[i].gpu[0] && gpu_from >= 0 && strcmp(r[i].gpu, fp->gpu) != 0)
            return cct_cli_fail(NAME, "%s measured on %s but %s on %s: import them separately",
                                files[gpu_from], fp->gpu, files[i], r[i].gpu);
        if (r[i].nccl_version[0] && nccl_from >= 0 && strcmp(r[i].nccl_version, fp->nccl) != 0)
            return cct_cli_fail(NAME, "%s ran NCCL %s but %s ran NCCL %s: import them separately",
                                files[nccl_from], fp->nccl, files[i], r[i].nccl_version);
        if (r[i].gpu[0] && gpu_from < 0) {
            gpu_from = i;
            snprintf(fp->gpu, sizeof fp->gpu, "%s", r[i].gpu);
        }
        if (r[i].nccl_version[0] && nccl_from < 0) {
            nccl_from = i;
            snprintf(fp->nccl, sizeof fp->nccl, "%s", r[i].nccl_version);
        }
        if (!fp->host[0])
            snprintf(fp->host, sizeof fp->host, "%s", r[i].host);
        if (r[i].ranks_per_gpu > fp->ranks_per_gpu)
            fp->ranks_per_gpu = r[i].ranks_per_gpu;
        for (size_t k = 0; k < r[i].n_points; k++) {
            const cct_config *c = &r[i].points[k].cfg;
            int per_node = (c->ranks + c->nodes - 1) / c->nodes;
            if (c->nodes > fp->nodes)
                fp->nodes = c->nodes;
            if (per_node > fp->gpus_per_node)
                fp->gpus_per_node = per_node;
        }
    }
    if (fp->ranks_per_gpu < 1)
        fp->ranks_per_gpu = 1;
    fp->gpus_per_node = (fp->gpus_per_node + fp->ranks_per_gpu - 1) / fp->ranks_per_gpu;
    /* cc, links and the LL128 verdict are not in these files: said so, not guessed */
    fp->ll128_allowed = false;
    snprintf(fp->ll128_reason, sizeof fp->ll128_reason,
             "not known: imported measurements (run ccltune probe on the machine)");
    return CCT_EXIT_OK;
}

/* FNV-1a over every input, so two imports of the same files show the same hash. */
static void inputs_hash(char **files, int n, char out[65])
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "rb");
        int ch;
        while (f && (ch = getc(f)) != EOF) {
            h ^= (unsigned char)ch;
            h *= 1099511628211ull;
        }
        if (f)
            fclose(f);
        h ^= 0xff; /* file boundary */
        h *= 1099511628211ull;
    }
    snprintf(out, 65, "import-fnv1a64-%016" PRIx64, h);
}

/* Every point through the store's own checks, so a dry run refuses what the import would. */
static int check_storable(const import_args *a, const cct_import_result *r, int n, char **files)
{
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].n_points; k++) {
            const cct_import_meta *m = &r[i].meta[k];
            cct_error err;
            if (!m->duplicate &&
                cct_store_check_point(a->store, &r[i].points[k],
                                      m->n_samples ? r[i].samples + m->first_sample : NULL,
                                      m->n_samples, &err) != CCT_OK) {
                cct_error_prefix(&err, "%s:%u:%u", files[i], m->line, m->col);
                cct_cli_fail(NAME, "%s", err.msg);
                return cct_cli_fail(NAME, "nothing imported");
            }
        }
    return CCT_EXIT_OK;
}

/* The fingerprint, the run and its points in one store batch: all of them or nothing. */
static cct_status store_batch(cct_store *store, const cct_store_fingerprint *fp, cct_store_run *run,
                              cct_import_result *r, int n, char **files, size_t *stored,
                              size_t *skipped, cct_error *err)
{
    int64_t fp_id = 0;
    cct_status st = cct_store_put_fingerprint(store, fp, &fp_id, err);
    run->fingerprint_id = fp_id;
    if (st == CCT_OK)
        st = cct_store_begin_run(store, run, err);
    for (int i = 0; i < n && st == CCT_OK; i++)
        for (size_t k = 0; k < r[i].n_points && st == CCT_OK; k++) {
            const cct_import_meta *m = &r[i].meta[k];
            if (m->duplicate) {
                (*skipped)++;
                continue;
            }
            st = cct_store_add_point(store, run->id, &r[i].points[k],
                                     m->n_samples ? r[i].samples + m->first_sample : NULL,
                                     m->n_samples, err);
            if (st == CCT_OK)
                (*stored)++;
            else
                cct_error_prefix(err, "%s:%u:%u", files[i], m->line, m->col);
        }
    if (st == CCT_OK)
        st = cct_store_finish_run(store, run->id, CCT_RUN_DONE, err);
    return st;
}

static int store_all(const import_args *a, cct_import_result *r, int n, char **files,
                     const cct_store_fingerprint *fp, int argc, char **argv)
{
    cct_store *store = NULL;
    cct_error err;
    if (cct_store_open(a->store, false, &store, &err) != CCT_OK)
        return cct_cli_fail(NAME, "%s", err.msg);
    cct_store_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.tool, sizeof run.tool, "ccltune %s", CCT_VERSION);
    snprintf(run.source, sizeof run.source, "%s",
             r[0].format == CCT_IMPORT_CSV ? "csv" : "nccl-tests");
    inputs_hash(files, n, run.plan_hash);
    cct_search_command_line(argc, argv, run.command, sizeof run.command);
    size_t stored = 0, skipped = 0;
    cct_status st = cct_store_begin_batch(store, &err);
    if (st == CCT_OK) {
        st = store_batch(store, fp, &run, r, n, files, &stored, &skipped, &err);
        st = cct_store_end_batch_with(store, st, &err);
    }
    cct_store_close(store);
    if (st != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        return cct_cli_fail(NAME, "nothing imported: %s is as it was", a->store);
    }
    printf("imported %zu points into run %" PRId64 " of %s", stored, run.id, a->store);
    if (skipped)
        printf(" (%zu identical duplicates stored once)", skipped);
    printf("\n");
    return CCT_EXIT_OK;
}

/* Recordings take no flags that describe a log, and a table only with them. */
static int recordings(const import_args *a, char **files, int n, int argc, char **argv)
{
    const cct_import_opts *o = &a->opts;
    if (o->coll != CCT_IMPORT_FROM_INPUT || o->algo != CCT_IMPORT_FROM_INPUT ||
        o->proto != CCT_IMPORT_FROM_INPUT || o->ranks != CCT_IMPORT_FROM_INPUT ||
        o->nodes != CCT_IMPORT_FROM_INPUT)
        return cct_cli_usage_error(NAME, "--coll, --algo, --proto, --ranks and --nodes "
                                         "describe logs; a recording says them itself");
    /* a recording does not say whether a table was loaded: storing a tuned job's calls as
     * NCCL's own choices would teach fit --include-production the table's choices as NCCL's */
    if (!a->table)
        return cct_cli_usage_error(NAME, "recordings: name the table the job ran with (--table "
                                         "T), or --table none if it ran without one");
    const char *table = strcmp(a->table, "none") == 0 ? NULL : a->table;
    cct_rec_import_args ra = {a->store, table, a->nccl, a->dry_run};
    return cct_cli_import_recordings(&ra, files, n, argc, argv);
}

int cct_cmd_import(int argc, char **argv)
{
    import_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CCT_EXIT_OK)
        return rc < 0 ? CCT_EXIT_OK : rc;
    char **files = argv + optind;
    int n = argc - optind;
    bool any_rec = a.format == CCT_IMPORT_RECORDING;
    for (int i = 0; i < n && a.format == CCT_IMPORT_AUTO; i++)
        any_rec = any_rec || cct_cli_is_recording(files[i]);
    if (any_rec)
        return recordings(&a, files, n, argc, argv);
    if (a.table)
        return cct_cli_usage_error(NAME, "--table applies to recordings only");
    cct_import_result *results = calloc((size_t)n, sizeof *results);
    if (!results)
        return cct_cli_fail(NAME, "out of memory");
    int failed = parse_all(files, n, &a, results);
    cct_error err;
    if (failed) {
        rc = cct_cli_fail(NAME, "%d of %d file%s refused: nothing imported", failed, n,
                          n == 1 ? "" : "s");
    } else if (cct_import_check_duplicates(results, (size_t)n, NULL, &err) != CCT_OK) {
        cct_cli_fail(NAME, "%s", err.msg);
        rc = cct_cli_fail(NAME, "nothing imported");
    } else {
        for (int i = 0; i < n && rc == CCT_EXIT_OK; i++)
            if ((results[i].format == CCT_IMPORT_CSV) != (results[0].format == CCT_IMPORT_CSV))
                rc = cct_cli_fail(NAME,
                                  "%s is CSV and %s is nccl-tests output: a run has one source, "
                                  "import them separately",
                                  results[i].format == CCT_IMPORT_CSV ? files[i] : files[0],
                                  results[i].format == CCT_IMPORT_CSV ? files[0] : files[i]);
        /* everything the import checks, also for a dry run */
        cct_store_fingerprint fp;
        if (rc == CCT_EXIT_OK)
            rc = fingerprint(results, n, files, a.nccl, &fp);
        if (rc == CCT_EXIT_OK)
            rc = check_storable(&a, results, n, files);
        for (int i = 0; i < n && rc == CCT_EXIT_OK; i++)
            summarise(files[i], &results[i]);
        if (rc == CCT_EXIT_OK && a.dry_run)
            printf("dry run: nothing written to %s\n", a.store);
        else if (rc == CCT_EXIT_OK)
            rc = store_all(&a, results, n, files, &fp, argc, argv);
    }
    for (int i = 0; i < n; i++)
        cct_import_result_destroy(&results[i]);
    free(results);
    return rc;
}
