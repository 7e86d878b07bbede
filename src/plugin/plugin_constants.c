/*
 * plugin_constants.c - a table's nccl_constants into NCCL's cost model, at v5/v6 init.
 *
 * NCCL 2.28+ passes the tuner its ncclTunerConstants_v5_t at communicator init, after
 * filling it with its defaults and before ncclTopoTuneModel turns it into the latency and
 * bandwidth tables that every later cost-table entry comes from (init.cc).  Whatever the
 * plugin writes there therefore steers NCCL's own choice of algorithm, protocol and, through
 * the bandwidths, the crossovers -- including for sizes, rank counts and collectives no
 * table rule covers.  The table's values are validated again here (finite, latencies >= 0,
 * bandwidths > 0): a bad entry writes nothing, logs one WARN and leaves NCCL's constants.
 * Entries the table leaves NAN keep NCCL's value.  Older ABIs carry no constants: the
 * plugin says once that they are ignored.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cct_constants.h"
#include "plugin_internal.h"

_Static_assert(CCT_NCCL_V5_NUM_ALGORITHMS == CCT_NUM_ALGOS &&
                   CCT_NCCL_V5_NUM_PROTOCOLS == CCT_NUM_PROTOS &&
                   CCT_NCCL_V5_NUM_HW_LINKS == CCT_CONST_HW_LINKS &&
                   CCT_NCCL_V5_NUM_COMPCAPS == CCT_CONST_COMPCAPS &&
                   CCT_NCCL_V5_NUM_TUNING_SCALES == CCT_CONST_SCALES,
               "the table's constants must have the v5 ABI's dimensions");

/* The entry of NCCL's struct a slot names. */
static double *nccl_entry(ncclTunerConstants_v5_t *k, cct_const_slot s)
{
    switch (s.family) {
    case CCT_CONST_BASE_LATENCY:
        return &k->baseLatencies[s.i][s.j];
    case CCT_CONST_HW_LATENCY:
        return &k->hwLatencies[s.i][s.j][s.k];
    case CCT_CONST_LL_MAX_BW:
        return &k->llMaxBws[s.i][s.j];
    case CCT_CONST_RING_LL128_BW:
        return &k->perChMaxRingLL128Bws[s.i][s.j];
    case CCT_CONST_TREE_LL128_BW:
        return &k->perChMaxTreeLL128Bws[s.i][s.j];
    case CCT_CONST_TREE_BW:
        return &k->perChMaxTreeBws[s.i][s.j];
    default:
        return &k->perChMaxNVLSTreeBws[s.i][s.j];
    }
}

int cct_constants_apply(const cct_constants *table, ncclTunerConstants_v5_t *nccl, char *summary,
                        size_t len, cct_error *err)
{
    if (len)
        summary[0] = '\0';
    if (cct_constants_check(table, err) != CCT_OK)
        return -1;
    int n = 0;
    size_t used = 0;
    for (size_t i = 0; i < CCT_CONST_NUM_SLOTS; i++) {
        cct_const_slot s = cct_const_slot_at(i);
        double v = cct_const_get(table, s);
        if (isnan(v))
            continue;
        double *dst = nccl_entry(nccl, s);
        if (used + 1 < len) {
            char name[64];
            int w = snprintf(summary + used, len - used, "%s%s %s %g->%g", n ? ", " : "",
                             cct_const_family_key(s.family),
                             cct_const_slot_name(s, name, sizeof name), *dst, v);
            used = w < 0 ? used : used + (size_t)w < len ? used + (size_t)w : len - 1;
        }
        *dst = v;
        n++;
    }
    return n;
}

void cct_constants_at_init(const cct_pctx *ctx, int abi, ncclTunerConstants_v5_t *nccl,
                           ncclDebugLogger_t log)
{
    const cct_pstate *ps = cct_pstate_get();
    if (ps->rccl) {
        /* RCCL's constants structure is larger than NCCL's and ordered differently: never
         * write it, whatever the table holds */
        if (cct_warn_first(CCT_WARN_RCCL))
            CCT_WARN(log,
                     "RCCL detected (%s): its tuner structures differ from NCCL's, so NCCL "
                     "model constants are never written; only a table's rules can apply",
                     ps->rccl_why);
        return;
    }
    const cct_constants *c = cct_ctx_constants(ctx);
    if (!c || cct_constants_count(c) == 0)
        return;
    if (abi < 5) {
        if (cct_warn_first(CCT_WARN_CONSTANTS_OLD_ABI))
            CCT_INFO(log,
                     "the table's %zu NCCL model constants are ignored: tuner v%d has none "
                     "(NCCL 2.28+ with tuner v5/v6 does)",
                     cct_constants_count(c), abi);
        return;
    }
    if (!nccl)
        return;
    if (ps->constants_off || !cct_control_constants_on()) {
        CCT_INFO(log, "comm %s: NCCL model constants not written (%s); NCCL's own are used",
                 cct_ctx_label(ctx),
                 ps->constants_off ? "CCLTUNE_CONSTANTS=0" : "ccltune_control_constants(0)");
        return;
    }
    char summary[1536];
    cct_error err;
    int n = cct_constants_apply(c, nccl, summary, sizeof summary, &err);
    if (n < 0) {
        if (cct_warn_first(CCT_WARN_CONSTANTS_BAD))
            CCT_WARN(log, "%s; no NCCL model constant written, NCCL's own are used", err.msg);
        return;
    }
    CCT_INFO(log, "comm %s: wrote %d NCCL model constants from table %s: %s", cct_ctx_label(ctx), n,
             cct_ctx_table_path(ctx), summary);
}
