/*
 * fuzz_nccl_log.c - libFuzzer target for the reader of NCCL's own debug output
 * (cct_nccl_log_parse: the TUNING latency/bandwidth table, GRAPH lines, the communicator
 * line), which the calibrator and the model capture feed with logs of foreign jobs.
 *
 * Any input (made NUL-terminated, as the reader takes text): the parser must return (no
 * crash, leak, over-read or hang).  A refusal names the input in its message; an accepted
 * log describes a possible communicator: 1 <= nodes <= ranks, every printed latency and
 * bandwidth finite and >= 0, channel counts >= 0, graph bandwidths finite and >= 0.
 *
 * Build: see tests/fuzz/meson.build (-Dfuzz=true, CC=clang); run e.g.
 *   build-fuzz/tests/fuzz/fuzz_nccl_log -dict=tests/fuzz/dict/nccl_log.dict \
 *     tests/fuzz/corpus/nccl_log
 * docs/fuzzing.md records the long runs and their figures.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cct_nccl_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(double v)
{
    if (!isfinite(v) || v < 0.0)
        abort();
}

static void check_accepted(const cct_nccl_log *log)
{
    const cct_nccl_topo *t = &log->topo;
    if (t->n_nodes < 1 || t->n_ranks < t->n_nodes || t->comm_channels < 0)
        abort();
    for (int c = 0; c < CCT_NUM_COLLS; c++)
        for (int a = 0; a < CCT_NUM_ALGOS; a++)
            for (int p = 0; p < CCT_NUM_PROTOS; p++)
                if (log->printed[c][a][p]) {
                    check_value(log->latency_us[c][a][p]);
                    check_value(log->bandwidth_gbps[c][a][p]);
                }
    for (int a = 0; a < CCT_NUM_ALGOS; a++) {
        const cct_nccl_graph *g = &t->graphs[a];
        if (!g->present)
            continue;
        if (g->n_channels < 0)
            abort();
        check_value(g->bw_intra);
        check_value(g->bw_inter);
    }
    if (memchr(log->nccl_version, '\0', sizeof log->nccl_version) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cct_nccl_log log;
    cct_error err;
    if (cct_nccl_log_parse(text, "fuzz", &log, &err) == CCT_OK)
        check_accepted(&log);
    else if (strncmp(err.msg, "fuzz:", 5) != 0)
        abort();
    free(text);
    return 0;
}
