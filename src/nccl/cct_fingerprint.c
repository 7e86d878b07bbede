/*
 * cct_fingerprint.c - matching a table's fingerprint against the running process (see
 * cct_fingerprint.h).
 *
 * Checks run from the most fundamental fact to the most specific, and the first failure
 * is the verdict: a table for another GPU is reported as such even if it also lacks a
 * section for this communicator.  Messages name both sides so a WARN in a training log is
 * enough to see what to re-tune.
 */
#include "cct_fingerprint.h"
#include "cct_parse.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const verdict_names[CCT_FP_NUM_VERDICTS] = {
    "match",        "match-other-patch", "gpu-unknown", "gpu-mismatch",       "cc-mismatch",
    "nccl-unknown", "nccl-mismatch",     "shared-gpu",  "no-topology-section"};

bool cct_fp_usable(cct_fp_verdict verdict)
{
    return verdict == CCT_FP_MATCH || verdict == CCT_FP_MATCH_OTHER_PATCH;
}

const char *cct_fp_verdict_name(cct_fp_verdict verdict)
{
    return (verdict >= 0 && verdict < CCT_FP_NUM_VERDICTS) ? verdict_names[verdict] : "?";
}

int cct_nccl_version_parse(const char *text)
{
    return cct_parse_nccl_version(text);
}

const char *cct_nccl_version_format(int code, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d.%d", code / 10000, (code / 100) % 100, code % 100);
    return buf;
}

static cct_fp_verdict say(cct_fp_verdict v, char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static cct_fp_verdict say(cct_fp_verdict v, char *msg, size_t len, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return v;
}

/* Compare GPU names ignoring case and surrounding blanks (drivers pad some names). */
static bool same_gpu(const char *a, const char *b)
{
    while (isspace((unsigned char)*a))
        a++;
    while (isspace((unsigned char)*b))
        b++;
    size_t la = strlen(a), lb = strlen(b);
    while (la && isspace((unsigned char)a[la - 1]))
        la--;
    while (lb && isspace((unsigned char)b[lb - 1]))
        lb--;
    return la == lb && strncasecmp(a, b, la) == 0;
}

bool cct_fp_widened(const cct_fingerprint *fp, int nccl_version)
{
    cct_nccl_versions v;
    return fp->nccl_versions && nccl_version > 0 &&
           cct_parse_nccl_versions("nccl_versions", fp->nccl_versions, &v, NULL) == CCT_OK &&
           cct_nccl_versions_contain(&v, nccl_version);
}

/* 23007 -> "2.30": the spec item that widens a table to every patch of that release. */
static const char *minor_of(int code, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", code / 10000, (code / 100) % 100);
    return buf;
}

static bool has_topology(const cct_table *t, int nranks, int nnodes)
{
    for (size_t i = 0; i < t->n_sections; i++)
        if (t->sections[i].ranks == nranks && t->sections[i].nodes == nnodes)
            return true;
    return false;
}

cct_fp_verdict cct_fingerprint_check(const cct_table *t, const cct_runtime *rt, char *msg,
                                     size_t len)
{
    return cct_fingerprint_check_shape(t, rt, has_topology(t, rt->nranks, rt->nnodes), msg, len);
}

cct_fp_verdict cct_fingerprint_check_shape(const cct_table *t, const cct_runtime *rt,
                                           bool has_shape, char *msg, size_t len)
{
    const cct_fingerprint *fp = &t->fingerprint;
    char a[16], b[16];
    if (fp->gpu) {
        if (!rt->gpu || !rt->gpu[0])
            return say(CCT_FP_NO_GPU, msg, len,
                       "the GPU of this process could not be identified (table is for %s)",
                       fp->gpu);
        if (!same_gpu(fp->gpu, rt->gpu))
            return say(CCT_FP_GPU, msg, len, "table is for GPU \"%s\", this process runs on \"%s\"",
                       fp->gpu, rt->gpu);
    }
    if (fp->cc > 0) {
        if (rt->cc <= 0)
            return say(CCT_FP_NO_GPU, msg, len,
                       "the compute capability of this GPU could not be read (table is for %s)",
                       cct_cc_format(fp->cc, a, sizeof a));
        if (fp->cc != rt->cc)
            return say(CCT_FP_CC, msg, len, "table is for compute capability %s, this GPU has %s",
                       cct_cc_format(fp->cc, a, sizeof a), cct_cc_format(rt->cc, b, sizeof b));
    }
    int patch_note = 0;
    if (fp->nccl) {
        int want = cct_nccl_version_parse(fp->nccl);
        if (want < 0)
            return say(CCT_FP_NCCL, msg, len, "table's NCCL version \"%s\" is not a version",
                       fp->nccl);
        if (rt->nccl_version <= 0)
            return say(CCT_FP_NO_NCCL, msg, len,
                       "the running NCCL's version could not be found (ncclGetVersion), table "
                       "is for NCCL %s",
                       fp->nccl);
        bool widened = cct_fp_widened(fp, rt->nccl_version);
        if (want / 100 != rt->nccl_version / 100 && !widened)
            return say(CCT_FP_NCCL, msg, len,
                       "table is for NCCL %s%s%s, this process runs NCCL %s; re-tune with this "
                       "NCCL (ccltune tune), or, knowing its choices were measured on %s, widen "
                       "the table to it (ccltune fit --nccl-versions %s)",
                       fp->nccl, fp->nccl_versions ? " and " : "",
                       fp->nccl_versions ? fp->nccl_versions : "",
                       cct_nccl_version_format(rt->nccl_version, a, sizeof a), fp->nccl,
                       minor_of(rt->nccl_version, b, sizeof b));
        patch_note = want != rt->nccl_version ? (widened ? 2 : 1) : 0;
    }
    if (fp->ranks_per_gpu > 1 && !rt->hostid_set)
        return say(CCT_FP_SHARED_GPU, msg, len,
                   "table was measured with %d rank processes sharing each GPU (NCCL_HOSTID "
                   "per rank, ranks joined by sockets); it applies only where NCCL_HOSTID is set",
                   fp->ranks_per_gpu);
    if (!has_shape)
        return say(CCT_FP_TOPOLOGY, msg, len, "table has no section for ranks=%d nodes=%d",
                   rt->nranks, rt->nnodes);
    if (patch_note == 2)
        return say(CCT_FP_MATCH_OTHER_PATCH, msg, len,
                   "match (table measured with NCCL %s, running %s: widened to it by "
                   "nccl_versions %s)",
                   fp->nccl, cct_nccl_version_format(rt->nccl_version, a, sizeof a),
                   fp->nccl_versions);
    if (patch_note)
        return say(CCT_FP_MATCH_OTHER_PATCH, msg, len,
                   "match (table measured with NCCL %s, running %s: patch release differs)",
                   fp->nccl, cct_nccl_version_format(rt->nccl_version, a, sizeof a));
    return say(CCT_FP_MATCH, msg, len, "match");
}
