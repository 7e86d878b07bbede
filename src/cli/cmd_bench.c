/*
 * cmd_bench.c - `ccltune bench TABLE`: the table's choices against NCCL's defaults and the
 * best forced configuration (the oracle), on the same communicators, on this machine.
 *
 * The bench reuses the search engine: one session whose configurations are "NCCL's
 * default", "the table" and every configuration the table has a model for, timed in
 * mirrored cycles at sizes on and off the search grid (src/search/cct_bench.c).  This file
 * parses flags, checks the table, and hands over to the launcher (or worker / MPI role, or
 * the replay backend with --replay).  With --sizes-from, a launched or replayed bench ends
 * with the job line `audit` prints (cct_cli_job.c) from the bench's store.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_bench.h"
#include "cct_cli.h"
#include "cct_cli_job.h"
#include "cct_config.h"
#include "cct_parse.h"
#include "cct_recording_set.h"
#include "cct_search.h"

static void help(FILE *out)
{
    fprintf(
        out,
        "usage: ccltune bench TABLE.yaml [--ranks N] [--ranks-per-gpu N] [OPTIONS]\n\n"
        "Time, for every collective the table covers and at sizes on and off the search grid:\n"
        "(a) NCCL's defaults, (b) NCCL with the ccltune plugin applying TABLE, (c) the oracle,\n"
        "the fastest configuration forced through the plugin. All three are timed on the same\n"
        "communicator in the same mirrored cycles. Prints b/a and b/c per size (ratios of\n"
        "speed: 1.10 = the table is 10 %% faster), whether a loss below 0.98 is significant\n"
        "(the two points' samples differ at the 5 %% level, Mann-Whitney U) and the\n"
        "geometric-mean gain over (a).\n"
        "A table with nccl_constants is also benched at rank counts it has no section for\n"
        "(the oracle then tries Ring and Tree x LL, LL128, Simple); NCCL's choice for (a) then\n"
        "comes from a second communicator initialised with NCCL's own constants, and is timed\n"
        "forced on the first.\n"
        "The summary splits the sizes where the table changed NCCL's algorithm or protocol\n"
        "(its effect) from those where NCCL ran the same ones both times (at most the channel\n"
        "count differs; where nothing does, the ratio is the bench's own noise).\n\n"
        "  --ranks N            rank processes [GPUs x ranks-per-gpu]\n"
        "  --ranks-per-gpu N    rank processes per GPU (MPS, joined over sockets) [1]\n"
        "  --colls LIST         collectives [every one the table covers]\n"
        "  --rules on|off       off: ignore the table's rules, (b) is its nccl_constants\n"
        "                       alone (CCLTUNE_RULES=0) [on]\n"
        "  --compare OTHER      also time OTHER's choices in the same cycles and report each\n"
        "                       table per collective against the default and TABLE, with the\n"
        "                       sizes where they differ significantly (up to 4 tables)\n"
        "  --sizes LIST         message sizes [1K, 4K, ... x4 up to --max-bytes, plus 100000,\n"
        "                       3M, 5.5M, 12000000]\n"
        "  --max-bytes SIZE     largest default size [16M]\n"
        "  --sizes-from REC     a recorded job (CCLTUNE_RECORD file or folder; repeatable):\n"
        "                       its collectives, rank count and sizes exactly (the 64 with\n"
        "                       the most GPU time), instead of --colls and --sizes; then\n"
        "                       the summary ends with what ccltune audit REC --table TABLE\n"
        "                       --store BENCH.db says the table saves for the job\n"
        "  --cycles N           timed cycles per point [6]\n"
        "  --cycle-us US        target length of a cycle [2000]\n"
        "  --pipe-ops K         time groups of K collectives per ncclGroupStart/End (each on\n"
        "                       its own buffers; time per collective = group / K) [1]\n"
        "  --regbuff no|yes     buffers registered with ncclCommRegister [no]\n"
        "  --store DB           where the measurements go [bench.db]\n"
        "  -o, --output FILE    markdown report [stdout]\n"
        "  --csv FILE           the same as CSV\n"
        "  --plugin PATH        libnccl-tuner-ccltune.so [beside ccltune]\n"
        "  --timeout S          watchdog per call [60]\n"
        "  --replay DB          answer from a recorded store instead of a GPU (testing)\n"
        "  --no-mps-check       do not insist on a running MPS daemon\n\n"
        "Ranks, collectives, cycles, timeout and the other flags the search also has follow\n"
        "the search's rules (ccltune search --help).\n\n"
        "Exit status: 0 benched, 1 the table does not load or the measurement failed, 2 usage\n"
        "error.\n");
}

static cct_status add_size(void *ctx, const char *flag, const char *item, size_t index,
                           cct_error *err)
{
    cct_search_opts *o = ctx;
    uint64_t b;
    cct_status st = cct_parse_flag_size(flag, item, 1, 16ull << 30, &b, err);
    if (st == CCT_OK) {
        o->bench_sizes[index] = b;
        o->n_bench_sizes = index + 1;
    }
    return st;
}

/* A bench flag that is also a search flag, applied by the search's own rules; pipe-ops and
 * regbuff take one value here (a bench times one group size and one buffer kind). */
static cct_status shared_flag(cct_search_opts *o, const char *name, const char *value,
                              cct_error *err)
{
    bool single = strcmp(name, "pipe-ops") == 0 || strcmp(name, "regbuff") == 0;
    if (single && value && strchr(value, ','))
        return cct_error_set(err, CCT_EINVAL, "--%s: one value in a bench, not '%s'", name, value);
    cct_status st = cct_search_set_flag(o, name, value, err);
    if (st == CCT_OK && strcmp(name, "ranks") == 0 && o->ranks < 2)
        st = cct_error_set(err, CCT_EINVAL, "--ranks: a bench needs 2 ranks or more, not '%s'",
                           value);
    return st;
}

/* --compare OTHER: remembered as given; resolve_compared checks it once the flags are read. */
static cct_status add_compare(cct_search_opts *o, const char *path, cct_error *err)
{
    if (o->n_bench_compare == 4)
        return cct_error_set(err, CCT_EINVAL, "--compare: at most 4 tables");
    o->bench_compare[o->n_bench_compare++] = path;
    return CCT_OK;
}

/* Each --compare table by its absolute path (workers start elsewhere), loaded once to check
 * it; CCT_EXIT_OK, or the exit status of the failure (said). */
static int resolve_compared(cct_search_opts *o)
{
    static char paths[4][PATH_MAX];
    for (size_t i = 0; i < o->n_bench_compare; i++) {
        if (!realpath(o->bench_compare[i], paths[i]))
            return cct_cli_fail("bench", "--compare: %s: no such file", o->bench_compare[i]);
        cct_table t;
        cct_error err;
        if (cct_table_load_file(paths[i], &t, &err) != CCT_OK)
            return cct_cli_fail("bench", "--compare: %s", err.msg);
        cct_table_destroy(&t);
        o->bench_compare[i] = paths[i];
    }
    return CCT_EXIT_OK;
}

/* After a bench --sizes-from: the job line `ccltune audit REC --table TABLE --store BENCH.db`
 * prints, from the bench's store, on stderr after the bench's summary. */
static void print_job(const cct_search_opts *o)
{
    cct_recording_set set;
    cct_table table;
    cct_audit a;
    cct_error err;
    cct_job_weighting w = {0, o->store_path};
    cct_status st = cct_recording_set_load(o->sizes_from, o->n_sizes_from, &set, &err);
    if (st == CCT_OK) {
        st = cct_table_load_file(o->bench_table, &table, &err);
        if (st == CCT_OK) {
            st = cct_cli_job_audit(set.recs, set.n, &table, &w, &a, &err);
            cct_table_destroy(&table);
        }
        cct_recording_set_destroy(&set);
    }
    if (st != CCT_OK) {
        fprintf(stderr, "ccltune bench: the job's saving: %s\n", err.msg);
        return;
    }
    fprintf(stderr, "ccltune bench: ");
    cct_cli_fprint_job(stderr, &a, &w, false);
    cct_audit_destroy(&a);
}

/* A launched or replayed bench's exit; the job line when the sizes came from recordings. */
static int bench_result(const cct_search_opts *o, int code, cct_error *err)
{
    if (code == CCT_EXIT_OK && o->n_sizes_from)
        print_job(o);
    return cct_cli_role_result("bench", code, err);
}

/* The bench's options: the search's defaults, then the bench's own. */
static void bench_opts_init(cct_search_opts *o, int argc, char **argv)
{
    cct_search_opts_init(o, argc, argv);
    o->store_path = "bench.db";
    o->sched.cycles = 6;
    o->sched.adaptive = false; /* every candidate at every size: the oracle needs them all */
    o->space.baseline = true;
}

int cct_cmd_bench(int argc, char **argv)
{
    enum { OPT_SIZES = 256, OPT_MAX_BYTES, OPT_CSV, OPT_RULES, OPT_COMPARE, OPT_SHARED };
    static const cct_enum_name on_off[] = {{"on", 0}, {"off", 1}, {NULL, 0}};
    static const struct option lopts[] = {{"ranks", required_argument, NULL, OPT_SHARED},
                                          {"ranks-per-gpu", required_argument, NULL, OPT_SHARED},
                                          {"colls", required_argument, NULL, OPT_SHARED},
                                          {"sizes", required_argument, NULL, OPT_SIZES},
                                          {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
                                          {"sizes-from", required_argument, NULL, OPT_SHARED},
                                          {"cycles", required_argument, NULL, OPT_SHARED},
                                          {"cycle-us", required_argument, NULL, OPT_SHARED},
                                          {"pipe-ops", required_argument, NULL, OPT_SHARED},
                                          {"regbuff", required_argument, NULL, OPT_SHARED},
                                          {"store", required_argument, NULL, OPT_SHARED},
                                          {"output", required_argument, NULL, 'o'},
                                          {"csv", required_argument, NULL, OPT_CSV},
                                          {"plugin", required_argument, NULL, OPT_SHARED},
                                          {"timeout", required_argument, NULL, OPT_SHARED},
                                          {"no-mps-check", no_argument, NULL, OPT_SHARED},
                                          {"replay", required_argument, NULL, OPT_SHARED},
                                          {"rules", required_argument, NULL, OPT_RULES},
                                          {"compare", required_argument, NULL, OPT_COMPARE},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    cct_search_opts o;
    cct_error err;
    cct_error_clear(&err);
    bench_opts_init(&o, argc, argv);
    uint64_t max_bytes = 16u << 20;
    bool sizes_given = false, colls_given = false;
    optind = 1;
    opterr = 0;
    int c, index = -1, rules_off = 0;
    while ((c = getopt_long(argc, argv, ":o:h", lopts, &index)) != -1) {
        cct_status st = CCT_OK;
        switch (c) {
        case OPT_SHARED:
            st = shared_flag(&o, lopts[index].name, optarg, &err);
            colls_given = colls_given || strcmp(lopts[index].name, "colls") == 0;
            break;
        case OPT_SIZES:
            st = cct_parse_list("--sizes", optarg, 64, add_size, &o, &err);
            cct_bench_sort_sizes(o.bench_sizes, o.n_bench_sizes);
            sizes_given = st == CCT_OK;
            break;
        case OPT_MAX_BYTES:
            st = cct_parse_flag_size("--max-bytes", optarg, 1, 16ull << 30, &max_bytes, &err);
            break;
        case 'o':
            o.bench_report = optarg;
            break;
        case OPT_CSV:
            o.bench_csv = optarg;
            break;
        case OPT_RULES:
            st = cct_parse_enum("--rules", optarg, on_off, &rules_off, &err);
            o.bench_rules_off = rules_off != 0;
            break;
        case OPT_COMPARE:
            st = add_compare(&o, optarg, &err);
            break;
        case 'h':
            help(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error("bench", c, argv);
        }
        if (st != CCT_OK)
            return cct_cli_usage_error("bench", "%s", err.msg);
    }
    if (optind >= argc)
        return cct_cli_usage_error("bench", "missing TABLE");
    if (optind + 1 < argc)
        return cct_cli_usage_error("bench", "unexpected argument '%s' (one table at a time)",
                                   argv[optind + 1]);
    if (o.n_sizes_from && (sizes_given || colls_given))
        return cct_cli_usage_error("bench", "--sizes-from sets the collectives and sizes from "
                                            "the recordings: leave out --colls and --sizes");
    if (o.n_sizes_from) {
        if (cct_search_bench_sizes_from(&o, &err) != CCT_OK)
            return cct_cli_usage_error("bench", "%s", err.msg);
        cct_bench_sort_sizes(o.bench_sizes, o.n_bench_sizes);
        sizes_given = true;
    }
    if (!sizes_given)
        o.n_bench_sizes = cct_bench_default_sizes(max_bytes, o.bench_sizes, 64);
    static char table_path[PATH_MAX];
    if (!realpath(argv[optind], table_path))
        return cct_cli_fail("bench", "%s: no such file", argv[optind]);
    cct_table t;
    if (cct_table_load_file(table_path, &t, &err) != CCT_OK)
        return cct_cli_fail("bench", "%s", err.msg);
    bool has_constants = t.constants.present;
    cct_table_destroy(&t);
    if (o.bench_rules_off && !has_constants)
        return cct_cli_usage_error("bench",
                                   "--rules off: %s has no nccl_constants, so there is nothing "
                                   "left to bench",
                                   argv[optind]);
    o.bench_table = table_path;
    int rc = resolve_compared(&o);
    if (rc != CCT_EXIT_OK)
        return rc;
    if (o.replay_path)
        return bench_result(&o, cct_search_replay(&o, &err), &err);
#if CCT_HAVE_CUDA
    if (getenv("CCLTUNE_WORKER_RANK"))
        return cct_cli_role_result("bench", cct_search_worker(&o, &err), &err);
    if (cct_search_under_mpi())
        return cct_cli_role_result("bench", cct_search_mpi(&o, &err), &err);
    return bench_result(&o, cct_search_launch(&o, &err), &err);
#else
    return cct_cli_fail("bench", "this ccltune was built without CUDA and NCCL, so it cannot "
                                 "measure");
#endif
}
