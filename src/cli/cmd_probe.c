/*
 * cmd_probe.c - `ccltune probe`: print this machine's fingerprint and NCCL's LL128 verdict.
 *
 * The verdict depends on the topology the communicator will have, so the same flags as
 * `search` describe it (--ranks, --ranks-per-gpu, --nodes).  Without a GPU the command says
 * so and exits 1: a fingerprint without GPUs would be worthless.  --links adds the measured
 * link matrix (cct_probe_links.h): copy bandwidth and latency per GPU pair and to the host.
 * With --json the answer is JSON either way: {"ok": true, ...} on success, {"ok": false,
 * "error": "..."} on stdout on failure (and the error on stderr as every command prints it).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cct_json_write.h"
#include "cct_cli.h"
#include "cct_parse.h"
#include "cct_config.h"
#if CCT_HAVE_CUDA
#include "cct_probe.h"
#include "cct_probe_links.h"
#endif

/* The failure: as JSON on stdout with --json, and as the usual error line on stderr. */
static int probe_fail(bool json, const char *msg)
{
    if (json) {
        printf("{\"ok\": false, \"error\": ");
        cct_json_write_string(stdout, msg);
        printf("}\n");
    }
    return cct_cli_fail("probe", "%s", msg);
}

static void help(FILE *out)
{
    fprintf(out,
            "usage: ccltune probe [--json] [--links] [--ranks N] [--ranks-per-gpu N] "
            "[--nodes N]\n\n"
            "Print the GPUs, compute capabilities, GPU-to-GPU link matrix (NVLink / PCIe path\n"
            "as NCCL names it), NICs, NCCL and CUDA versions, and whether NCCL enables LL128\n"
            "by default for the topology described (default: every GPU, one rank each).\n\n"
            "  --json              machine-readable output\n"
            "  --links             also measure the links (a few seconds): copy bandwidth and\n"
            "                      one-way latency of every GPU pair and to the host, next to\n"
            "                      NCCL's path names\n"
            "  --ranks N           ranks of the communicator [GPUs x ranks-per-gpu]\n"
            "  --ranks-per-gpu N   rank processes per GPU (joined over sockets) [1]\n"
            "  --nodes N           nodes (MPI runs) [1, or ranks when ranks-per-gpu > 1]\n\n"
            "With --json a failure is JSON too: {\"ok\": false, \"error\": \"...\"}.\n\n"
            "Exit status: 0 printed, 1 no GPU or NCCL could not be queried, 2 usage error.\n");
}

int cct_cmd_probe(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"links", no_argument, NULL, 'l'},
                                         {"ranks", required_argument, NULL, 'r'},
                                         {"ranks-per-gpu", required_argument, NULL, 'g'},
                                         {"nodes", required_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    bool json = false;
    int links = 0;
    long ranks = 0, per_gpu = 1, nodes = 0;
    cct_error perr;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'l':
            links = 1;
            break;
        case 'r':
            if (cct_parse_flag_long("--ranks", optarg, 1, 4096, &ranks, &perr) != CCT_OK)
                return cct_cli_usage_error("probe", "%s", perr.msg);
            break;
        case 'g':
            if (cct_parse_flag_long("--ranks-per-gpu", optarg, 1, 64, &per_gpu, &perr) != CCT_OK)
                return cct_cli_usage_error("probe", "%s", perr.msg);
            break;
        case 'n':
            if (cct_parse_flag_long("--nodes", optarg, 1, 4096, &nodes, &perr) != CCT_OK)
                return cct_cli_usage_error("probe", "%s", perr.msg);
            break;
        case 'h':
            help(stdout);
            return CCT_EXIT_OK;
        default:
            return cct_cli_flag_error("probe", c, argv);
        }
    }
    if (optind < argc)
        return cct_cli_extra_args("probe", argc, argv);
#if CCT_HAVE_CUDA
    cct_probe_info *info = calloc(1, sizeof *info);
    cct_error err;
    if (!info)
        return probe_fail(json, "out of memory");
    if (cct_probe_collect(info, &err) != CCT_OK) {
        free(info);
        return probe_fail(json, err.msg);
    }
    int r = ranks ? (int)ranks : info->n_gpus * (int)per_gpu;
    int nn = nodes ? (int)nodes : (per_gpu > 1 ? r : 1);
    cct_links *lm = links ? calloc(1, sizeof *lm) : NULL;
    if (links && !lm)
        cct_error_set(&err, CCT_ENOMEM, "out of memory");
    if (links && (!lm || cct_links_measure(info, lm, &err) != CCT_OK)) {
        free(lm);
        free(info);
        return probe_fail(json, err.msg);
    }
    if (json) {
        cct_probe_print_json_links(stdout, info, r, nn, (int)per_gpu, lm);
    } else {
        cct_probe_print(stdout, info, r, nn, (int)per_gpu);
        if (lm)
            cct_links_print(stdout, lm, info, (int)per_gpu);
    }
    free(lm);
    free(info);
    return CCT_EXIT_OK;
#else
    (void)links;
    return probe_fail(json, "this ccltune was built without CUDA, so it cannot see GPUs");
#endif
}
