/*
 * cct_ll128.c - NCCL's default LL128 enablement rule per release (see cct_ll128.h).
 *
 * Read from src/graph/tuning.cc of NCCL 2.19.3, 2.22.3, 2.25.1, 2.26.2, 2.27.3, 2.27.5,
 * 2.28.9 and 2.30.3.  The rule has five parts, checked in NCCL's order: the inter-node path
 * of the algorithm's graph, the intra-node path (at most NVB in every release), equal
 * compute capabilities (2.30: or all >= 9.0), the allowed compute capabilities, and one
 * exception for CUDA 11.8 builds.  Eras, by NCCL_VERSION_CODE:
 *   < 2.25    capability 7.0, 8.0 or 9.0; inter <= PXB, or <= PXN from 9.0
 *   2.25-2.26 adds 10.0 and 12.0
 *   2.27.0-4  any cc >= 7.0; from 9.0 inter up to PXN, and P2C if NCCL_LL128_C2C (default 1)
 *   2.27.5+   from 9.0 with NCCL_LL128_C2C: inter <= PXN (P2C included); else <= PXB
 *   2.30+     mixed compute capabilities allowed when the lowest is >= 9.0
 * Paths are compared in cct_path order, which is the order of the newest releases; for
 * 2.27.0-4, where P2C sorted after PXN, the sets are translated explicitly.
 */
#include "cct_ll128.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cct_names.h"
#include "cct_table.h"

#define V(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define OLDEST_KNOWN V(2, 19, 0)
#define NEWEST_KNOWN_MINOR V(2, 30, 0) /* the newest release whose rule was read */

static const char *const path_names[CCT_NUM_PATHS] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                      "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

const char *cct_path_name(int path)
{
    return (path >= 0 && path < CCT_NUM_PATHS) ? path_names[path] : "?";
}

int cct_path_from_name(const char *name)
{
    if (!name)
        return CCT_PATH_UNKNOWN;
    for (int i = 0; i < CCT_NUM_PATHS; i++)
        if (strcasecmp(name, path_names[i]) == 0)
            return i;
    return CCT_PATH_UNKNOWN;
}

bool cct_path_exists(int v, int path)
{
    if (path < 0 || path >= CCT_NUM_PATHS)
        return false;
    if (path == CCT_PATH_C2C)
        return v >= V(2, 26, 0);
    if (path == CCT_PATH_P2C)
        return v >= V(2, 27, 0);
    return true;
}

int cct_path_from_nccl(int v, int nccl_path)
{
    /* NCCL's PATH_* numbering per era, index = NCCL's value */
    static const int before_2_26[] = {CCT_PATH_LOC, CCT_PATH_NVL, CCT_PATH_NVB, CCT_PATH_PIX,
                                      CCT_PATH_PXB, CCT_PATH_PXN, CCT_PATH_PHB, CCT_PATH_SYS,
                                      CCT_PATH_NET, CCT_PATH_DIS};
    static const int in_2_26[] = {CCT_PATH_LOC, CCT_PATH_NVL, CCT_PATH_NVB, CCT_PATH_C2C,
                                  CCT_PATH_PIX, CCT_PATH_PXB, CCT_PATH_PXN, CCT_PATH_PHB,
                                  CCT_PATH_SYS, CCT_PATH_NET, CCT_PATH_DIS};
    static const int in_2_27_early[] = {CCT_PATH_LOC, CCT_PATH_NVL, CCT_PATH_NVB, CCT_PATH_C2C,
                                        CCT_PATH_PIX, CCT_PATH_PXB, CCT_PATH_PXN, CCT_PATH_P2C,
                                        CCT_PATH_PHB, CCT_PATH_SYS, CCT_PATH_NET, CCT_PATH_DIS};
    const int *map;
    int n;
    if (v < V(2, 26, 0)) {
        map = before_2_26;
        n = (int)(sizeof before_2_26 / sizeof *before_2_26);
    } else if (v < V(2, 27, 0)) {
        map = in_2_26;
        n = (int)(sizeof in_2_26 / sizeof *in_2_26);
    } else if (v < V(2, 27, 5)) {
        map = in_2_27_early;
        n = (int)(sizeof in_2_27_early / sizeof *in_2_27_early);
    } else {
        return (nccl_path >= 0 && nccl_path < CCT_NUM_PATHS) ? nccl_path : CCT_PATH_UNKNOWN;
    }
    return (nccl_path >= 0 && nccl_path < n) ? map[nccl_path] : CCT_PATH_UNKNOWN;
}

cct_ll128_query cct_ll128_query_blank(void)
{
    cct_ll128_query q;
    memset(&q, 0, sizeof q);
    q.intra_path = CCT_PATH_UNKNOWN;
    q.inter_path = CCT_PATH_UNKNOWN;
    q.ll128_c2c = -1;
    return q;
}

static cct_ll128_verdict say(cct_ll128_verdict v, char *reason, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static cct_ll128_verdict say(cct_ll128_verdict v, char *reason, size_t len, const char *fmt, ...)
{
    if (reason && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reason, len, fmt, ap);
        va_end(ap);
    }
    return v;
}

/* Capabilities a release enables LL128 on, as a sentence fragment; NULL when cc is fine. */
static const char *cc_refusal(int v, int cc)
{
    if (v < V(2, 25, 0))
        return (cc == 70 || cc == 80 || cc == 90) ? NULL : "7.0, 8.0 and 9.0";
    if (v < V(2, 27, 0))
        return (cc == 70 || cc == 80 || cc == 90 || cc == 100 || cc == 120)
                   ? NULL
                   : "7.0, 8.0, 9.0, 10.0 and 12.0";
    return cc >= 70 ? NULL : "7.0 and newer";
}

/* The inter-node part of the rule; returns true when `inter` is acceptable. */
static bool inter_ok(int v, int min_cc, int c2c, int inter)
{
    if (v < V(2, 27, 0))
        return inter <= CCT_PATH_PXB || (min_cc >= 90 && inter <= CCT_PATH_PXN);
    if (v < V(2, 27, 5)) {
        /* PXN sorted before P2C in these releases: "<= P2C" there is "<= PXN" here, and
         * "<= PXN" there excludes P2C */
        if (inter <= CCT_PATH_PXB)
            return true;
        if (min_cc < 90)
            return false;
        return c2c ? inter <= CCT_PATH_PXN : inter == CCT_PATH_PXN;
    }
    if (c2c && min_cc >= 90)
        return inter <= CCT_PATH_PXN;
    return inter <= CCT_PATH_PXB;
}

cct_ll128_verdict cct_ll128_check(const cct_ll128_query *q, char *reason, size_t len)
{
    int v = q->nccl_version;
    char ver[32], lo[16], hi[16];
    snprintf(ver, sizeof ver, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    if (v < OLDEST_KNOWN)
        return say(CCT_LL128_BLOCKED, reason, len,
                   "NCCL version %s is unknown or older than 2.19, whose LL128 rules ccltune "
                   "does not know",
                   v > 0 ? ver : "(unknown)");
    const char *era_note = v >= NEWEST_KNOWN_MINOR + 100 ? " (rule of NCCL 2.30 assumed)" : "";
    if (q->min_cc <= 0 || q->max_cc < q->min_cc)
        return say(CCT_LL128_BLOCKED, reason, len, "compute capability unknown");
    cct_cc_format(q->min_cc, lo, sizeof lo);
    cct_cc_format(q->max_cc, hi, sizeof hi);
    int c2c = q->ll128_c2c < 0 ? 1 : q->ll128_c2c != 0; /* NCCL_LL128_C2C defaults to 1 */

    if (q->inter_path != CCT_PATH_UNKNOWN) {
        if (!cct_path_exists(v, q->inter_path))
            return say(CCT_LL128_BLOCKED, reason, len,
                       "inter-node path %s does not exist in NCCL %s", cct_path_name(q->inter_path),
                       ver);
        if (!inter_ok(v, q->min_cc, c2c, q->inter_path))
            return say(CCT_LL128_BLOCKED, reason, len,
                       "NCCL %s%s does not enable LL128 over inter-node path %s at compute "
                       "capability %s%s",
                       ver, era_note, cct_path_name(q->inter_path), lo,
                       v >= V(2, 27, 0) && q->min_cc >= 90 && !c2c ? " with NCCL_LL128_C2C=0" : "");
    }
    if (q->intra_path != CCT_PATH_UNKNOWN) {
        if (!cct_path_exists(v, q->intra_path))
            return say(CCT_LL128_BLOCKED, reason, len,
                       "intra-node path %s does not exist in NCCL %s", cct_path_name(q->intra_path),
                       ver);
        if (q->intra_path > CCT_PATH_NVB)
            return say(CCT_LL128_BLOCKED, reason, len,
                       "NCCL enables LL128 only over NVLink inside a node (path <= NVB); this "
                       "path is %s",
                       cct_path_name(q->intra_path));
    }
    if (q->min_cc != q->max_cc && !(v >= V(2, 30, 0) && q->min_cc >= 90))
        return say(CCT_LL128_BLOCKED, reason, len,
                   "NCCL %s%s enables LL128 on mixed GPUs (%s..%s) only %s", ver, era_note, lo, hi,
                   v >= V(2, 30, 0) ? "when all are 9.0 or newer"
                                    : "never (all GPUs must have equal compute capability)");
    const char *allowed = cc_refusal(v, q->min_cc);
    if (allowed)
        return say(CCT_LL128_BLOCKED, reason, len,
                   "NCCL %s%s enables LL128 only on compute capability %s; this is %s", ver,
                   era_note, allowed, lo);
    if (q->min_cc == 90 && q->coll == CCT_COLL_ALLREDUCE && q->algo == CCT_ALGO_RING &&
        q->nranks == 2) {
        if (q->cudart_version == 11080)
            return say(CCT_LL128_BLOCKED, reason, len,
                       "NCCL built with CUDA 11.8 disables LL128 for ring allreduce on 2 ranks "
                       "at compute capability 9.0");
        if (q->cudart_version == 0)
            return say(CCT_LL128_UNLESS_CUDA_11_8, reason, len,
                       "NCCL %s%s enables LL128 here unless it was built with CUDA 11.8 (ring "
                       "allreduce on 2 ranks at compute capability 9.0)",
                       ver, era_note);
    }
    bool paths_known = q->intra_path != CCT_PATH_UNKNOWN && q->inter_path != CCT_PATH_UNKNOWN;
    return say(CCT_LL128_ALLOWED, reason, len, "NCCL %s%s enables LL128 at compute capability %s%s",
               ver, era_note, lo, paths_known ? "" : " (link paths not checked here)");
}
