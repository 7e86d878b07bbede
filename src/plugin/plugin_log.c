/*
 * plugin_log.c - the plugin's only way to say anything: NCCL's logger.
 *
 * A plugin inside a training job must never write to stdout/stderr (they belong to the
 * application), so every line goes through the ncclDebugLogger_t NCCL passed at init,
 * prefixed "ccltune: " so it greps apart from NCCL's own lines; with no logger the plugin
 * is silent.  Lines are formatted into a stack buffer here (no heap, any thread) and
 * handed to the logger as "%s", so a '%' in a file name cannot confuse NCCL's printf.
 *
 * Hundreds of communicators would repeat the same complaint, so WARNs about process-wide
 * facts go through cct_warn_first(): an atomic bit per topic, set by the first caller.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plugin_internal.h"

static atomic_uint_fast64_t warned;

void cct_plog(ncclDebugLogger_t log, ncclDebugLogLevel level, unsigned long flags, const char *file,
              int line, const char *fmt, ...)
{
    if (!log)
        return;
    char buf[1536];
    int n = snprintf(buf, sizeof buf, "ccltune: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    /* NCCL prints file:line only for WARN; keep it short there */
    const char *base = strrchr(file, '/');
    log(level, flags, base ? base + 1 : file, line, "%s", buf);
}

bool cct_warn_first(int topic)
{
    if (topic < 0 || topic >= CCT_NUM_WARN_TOPICS)
        return false;
    uint_fast64_t bit = (uint_fast64_t)1 << topic;
    return !(atomic_fetch_or_explicit(&warned, bit, memory_order_relaxed) & bit);
}

void cct_warn_reset(void)
{
    atomic_store(&warned, 0);
}

const char *cct_outcome_name(int outcome)
{
    static const char *const names[CCT_NUM_OUTCOMES] = {
        "overridden",    "no_section", "no_rule",     "ignored_entry",
        "ll128_blocked", "mismatch",   "table_error", "bypassed"};
    return (outcome >= 0 && outcome < CCT_NUM_OUTCOMES) ? names[outcome] : "?";
}
