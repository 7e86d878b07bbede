/*
 * cct_table_words.c - sentences about a table's content (cct_table_words.h), shared by the
 * writer's comments and `ccltune explain`.
 *
 * The verdict on a rule reads its evidence the way docs/table-format.md defines it: a gain is
 * "faster" only when its whole 95 % interval is above 1 and the gain clears the run's own
 * noise floor, "slower" in the mirror case, and "within noise" otherwise.  Rules without
 * evidence fall back to what the table does know: NCCL's own choice, no baseline at all
 * (imported logs), or the fitted models' prediction (margin_default).
 */
#include "cct_table_words.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cct_rule_model.h"

const char *cct_words_topology(const cct_fingerprint *fp, char *buf, size_t len)
{
    int rpg = fp->ranks_per_gpu > 0 ? fp->ranks_per_gpu : 1;
    if (rpg == 1) {
        snprintf(buf, len, "%d node%s with %d GPU%s each, one rank per GPU", fp->nodes,
                 fp->nodes == 1 ? "" : "s", fp->gpus_per_node, fp->gpus_per_node == 1 ? "" : "s");
        return buf;
    }
    /* the shared-GPU setup: each rank process is its own NCCL node, all on one host */
    const char *never = "each its own NCCL node: never matches a real deployment";
    int procs = fp->nodes, gpus = (fp->nodes + rpg - 1) / rpg;
    char gpu_words[96];
    if (fp->gpus_per_node > gpus) /* the host had more GPUs than the ranks used */
        snprintf(gpu_words, sizeof gpu_words, "%s of the host's %d GPUs", gpus == 1 ? "one" : "",
                 fp->gpus_per_node);
    else
        snprintf(gpu_words, sizeof gpu_words, "%s GPU%s", gpus == 1 ? "one" : "",
                 gpus == 1 ? "" : "s");
    if (procs < 2) /* a table that does not say how many (hand-written) */
        snprintf(buf, len, "%d rank processes per GPU (MPS), %s", rpg, never);
    else if (gpus == 1)
        snprintf(buf, len, "%d rank processes sharing %s (MPS), %s", procs, gpu_words, never);
    else
        snprintf(buf, len, "%d rank processes on %d%s, %d per GPU (MPS), %s", procs, gpus,
                 gpu_words, rpg, never);
    return buf;
}

const char *cct_words_links(const char *links)
{
    static const struct {
        const char *name, *words;
    } kinds[] = {
        {"nvlink", "NVLink between the GPUs"},
        {"pcie", "PCIe between the GPUs"},
        {"net", "a network between the nodes"},
        {"socket", "NET/Socket (the rank processes' NCCL nodes joined over sockets)"},
        {"local", "nothing to link (one GPU, one rank)"},
        {"unknown", "not known (imported logs do not say)"},
    };
    if (!links)
        return "not known";
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(links, kinds[i].name) == 0)
            return kinds[i].words;
    return links;
}

const char *cct_words_size(uint64_t bytes, char *buf, size_t len)
{
    char exact[32];
    cct_format_bytes_exact(bytes, exact, sizeof exact);
    if (bytes == CCT_BYTES_INF || bytes < 1024 || strcmp(exact + strlen(exact) - 2, " B") != 0) {
        snprintf(buf, len, "%s", exact);
        return buf;
    }
    char approx[32];
    snprintf(buf, len, "~%s", cct_format_bytes(bytes, approx, sizeof approx));
    return buf;
}

const char *cct_words_band(uint64_t min_bytes, uint64_t max_bytes, char *buf, size_t len)
{
    char lo[40], hi[40];
    cct_words_size(min_bytes, lo, sizeof lo);
    if (max_bytes == CCT_BYTES_INF)
        snprintf(buf, len, "%s and up", lo);
    else
        snprintf(buf, len, "%s to %s", lo, cct_words_size(max_bytes, hi, sizeof hi));
    return buf;
}

bool cct_rule_has_evidence(const cct_rule *rule)
{
    return !rule->no_baseline && rule->cycles > 0;
}

/* The verdict of measured evidence: +1 faster, -1 slower, 0 within noise. */
static int evidence_sign(const cct_rule *r)
{
    if (r->gain_lo > 1.0 && r->gain - 1.0 > r->noise)
        return 1;
    if (r->gain_hi < 1.0 && 1.0 - r->gain > r->noise)
        return -1;
    return 0;
}

const char *cct_words_verdict(const cct_rule *rule, char *buf, size_t len)
{
    if (rule->no_baseline)
        snprintf(buf, len, "no NCCL baseline (imported)");
    else if (cct_rule_is_nccl_choice(rule))
        snprintf(buf, len, "NCCL's own choice");
    else if (cct_rule_has_evidence(rule)) {
        int sign = evidence_sign(rule);
        if (sign > 0)
            snprintf(buf, len, "%.2fx faster than NCCL here", rule->gain);
        else if (sign < 0)
            snprintf(buf, len, "slower than NCCL here (%.2fx)", rule->gain);
        else
            snprintf(buf, len, "within noise of NCCL (%.2fx)", rule->gain);
    } else if (!isnan(rule->margin_default) && rule->margin_default >= 0)
        snprintf(buf, len, "model: %.2fx faster than NCCL", 1.0 + rule->margin_default);
    else if (!isnan(rule->margin_default))
        snprintf(buf, len, "model: slower than NCCL (%.2fx)", 1.0 + rule->margin_default);
    else
        snprintf(buf, len, "no evidence in the table");
    return buf;
}

const char *cct_words_evidence(const cct_rule *rule, char *buf, size_t len)
{
    if (rule->no_baseline) {
        snprintf(buf, len, "no NCCL baseline (imported)");
        return buf;
    }
    if (!cct_rule_has_evidence(rule)) {
        snprintf(buf, len, "%s", "");
        return buf;
    }
    char at[40] = "its reference size";
    if (rule->ref_bytes)
        cct_words_size(rule->ref_bytes, at, sizeof at);
    snprintf(buf, len,
             "gain %.2fx over NCCL at %s (95 %% CI %.2f-%.2fx), noise %.1f %%, %d cycle%s",
             rule->gain, at, rule->gain_lo, rule->gain_hi, rule->noise * 100.0, rule->cycles,
             rule->cycles == 1 ? "" : "s");
    return buf;
}
