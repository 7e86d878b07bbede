/*
 * cmd_bench.c - `ccltune bench TABLE`: the table's choices against NCCL's defaults and the
 * best forced configuration (the oracle), on the same communicators, on this machine.
 *
 * The bench reuses the search engine: one session whose configurations are "NCCL's
 * default", "the table" and every configuration the table has a model for, timed in
 * mirrored cycles at sizes on and off the search grid (src/search/cct_bench.c).  This file
 * parses flags, checks the table, and hands over to the launcher (or worker / MPI role).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_bench.h"
#include "cct_cli.h"
#include "cct_config.h"

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
        "  --sizes LIST         message sizes [1K, 4K, ... x4 up to --max-bytes, plus 100000,\n"
        "                       3M, 5.5M, 12000000]\n"
        "  --max-bytes SIZE     largest default size [16M]\n"
        "  --cycles N           timed cycles per point [6]\n"
        "  --cycle-us US        target length of a cycle [2000]\n"
        "  --pipe-ops K         time groups of K collectives per ncclGroupStart/End (each on\n"
        "                       its own buffers; time per collective = group / K) [1]\n"
        "  --regbuff yes|no     buffers registered with ncclCommRegister [no]\n"
        "  --store DB           where the measurements go [bench.db]\n"
        "  -o, --output FILE    markdown report [stdout]\n"
        "  --csv FILE           the same as CSV\n"
        "  --plugin PATH        libnccl-tuner-ccltune.so [beside ccltune]\n"
        "  --timeout S          watchdog per call [60]\n"
        "  --no-mps-check       do not insist on a running MPS daemon\n");
}

int cct_cmd_bench(int argc, char **argv)
{
    static const struct option lopts[] = {{"ranks", required_argument, NULL, 'r'},
                                          {"ranks-per-gpu", required_argument, NULL, 'g'},
                                          {"colls", required_argument, NULL, 'c'},
                                          {"sizes", required_argument, NULL, 'z'},
                                          {"max-bytes", required_argument, NULL, 'm'},
                                          {"cycles", required_argument, NULL, 'y'},
                                          {"cycle-us", required_argument, NULL, 'u'},
                                          {"pipe-ops", required_argument, NULL, 'K'},
                                          {"regbuff", required_argument, NULL, 'R'},
                                          {"store", required_argument, NULL, 's'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"csv", required_argument, NULL, 'v'},
                                          {"plugin", required_argument, NULL, 'p'},
                                          {"timeout", required_argument, NULL, 't'},
                                          {"no-mps-check", no_argument, NULL, 'M'},
                                          {"rules", required_argument, NULL, 'L'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    cct_search_opts o;
    cct_error err;
    cct_error_clear(&err);
    bool help_flag = false;
    /* start from the search defaults; only the flags below apply to a bench */
    char *no_args[] = {argv[0], NULL};
    cct_search_parse(1, no_args, &o, &help_flag, &err);
    o.argc = argc;
    o.argv = argv;
    o.store_path = "bench.db";
    o.sched.cycles = 6;
    o.sched.adaptive = false; /* every candidate at every size: the oracle needs them all */
    o.space.baseline = true;
    uint64_t max_bytes = 16u << 20;
    bool sizes_given = false;
    optind = 1;
    opterr = 0;
    int c;
    long v;
    while ((c = getopt_long(argc, argv, ":o:", lopts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (cct_cli_parse_int(optarg, 2, 4096, &v) != CCT_OK)
                return cct_cli_usage_error("bench", "--ranks: '%s' is not 2..4096", optarg);
            o.ranks = (int)v;
            break;
        case 'g':
            if (cct_cli_parse_int(optarg, 1, 64, &v) != CCT_OK)
                return cct_cli_usage_error("bench", "--ranks-per-gpu: '%s' is not 1..64", optarg);
            o.ranks_per_gpu = (int)v;
            break;
        case 'c':
            if (cct_space_parse(&o.space, "--colls", optarg, &err) != CCT_OK)
                return cct_cli_usage_error("bench", "%s", err.msg);
            break;
        case 'z': {
            char list[1024];
            snprintf(list, sizeof list, "%s", optarg);
            o.n_bench_sizes = 0;
            char *save = NULL;
            for (char *it = strtok_r(list, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
                uint64_t b;
                if (cct_parse_bytes(it, &b, NULL) != CCT_OK || b == 0 || b == CCT_BYTES_INF ||
                    o.n_bench_sizes >= 64)
                    return cct_cli_usage_error("bench",
                                               "--sizes: '%s' is not a message size (at "
                                               "most 64 sizes)",
                                               it);
                o.bench_sizes[o.n_bench_sizes++] = b;
            }
            cct_bench_sort_sizes(o.bench_sizes, o.n_bench_sizes);
            sizes_given = o.n_bench_sizes > 0;
            break;
        }
        case 'm':
            if (cct_parse_bytes(optarg, &max_bytes, &err) != CCT_OK || max_bytes == CCT_BYTES_INF)
                return cct_cli_usage_error("bench", "--max-bytes: '%s' is not a size", optarg);
            break;
        case 'y':
            if (cct_cli_parse_int(optarg, 2, 1000, &v) != CCT_OK)
                return cct_cli_usage_error("bench", "--cycles: '%s' is not 2..1000", optarg);
            o.sched.cycles = (int)v;
            break;
        case 'u':
            if (cct_cli_parse_int(optarg, 1, 10000000, &v) != CCT_OK)
                return cct_cli_usage_error("bench", "--cycle-us: '%s' is not 1..1e7", optarg);
            o.sched.cycle_us = (double)v;
            break;
        case 'K':
            if (strchr(optarg, ',') ||
                cct_space_parse(&o.space, "--pipe-ops", optarg, &err) != CCT_OK)
                return cct_cli_usage_error(
                    "bench", "%s", strchr(optarg, ',') ? "--pipe-ops: one group size" : err.msg);
            break;
        case 'R':
            if (strchr(optarg, ',') ||
                cct_space_parse(&o.space, "--regbuff", optarg, &err) != CCT_OK)
                return cct_cli_usage_error("bench", "%s",
                                           strchr(optarg, ',') ? "--regbuff: yes or no" : err.msg);
            break;
        case 's':
            o.store_path = optarg;
            break;
        case 'o':
            o.bench_report = optarg;
            break;
        case 'v':
            o.bench_csv = optarg;
            break;
        case 'p':
            o.plugin_path = optarg;
            break;
        case 't': {
            char *end;
            o.timeout_s = strtod(optarg, &end);
            if (*end || !(o.timeout_s >= 0.1 && o.timeout_s <= 86400))
                return cct_cli_usage_error("bench", "--timeout: '%s' is not 0.1..86400", optarg);
            break;
        }
        case 'M':
            o.check_mps = false;
            break;
        case 'L':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
                return cct_cli_usage_error("bench", "--rules: '%s' is not on or off", optarg);
            o.bench_rules_off = strcmp(optarg, "off") == 0;
            break;
        case 'h':
            help(stdout);
            return CCT_EXIT_OK;
        case ':':
            return cct_cli_usage_error("bench", "%s needs a value", argv[optind - 1]);
        default:
            return cct_cli_usage_error("bench", "unknown flag '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return cct_cli_usage_error("bench", optind < argc ? "one table, please" : "missing TABLE");
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
#if CCT_HAVE_CUDA
    if (getenv("CCLTUNE_WORKER_RANK"))
        return cct_cli_role_result("bench", cct_search_worker(&o, &err), &err);
    if (cct_search_under_mpi())
        return cct_cli_role_result("bench", cct_search_mpi(&o, &err), &err);
    return cct_cli_role_result("bench", cct_search_launch(&o, &err), &err);
#else
    return cct_cli_fail("bench", "this ccltune was built without CUDA and NCCL, so it cannot "
                                 "measure");
#endif
}
