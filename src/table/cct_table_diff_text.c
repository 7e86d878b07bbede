/*
 * cct_table_diff_text.c - the words of `ccltune diff`: one line per change, written for a
 * reviewer reading a pull request, e.g.
 *
 *   allreduce, 8 ranks (1 node), 2 MiB–4 MiB: ring/ll → ring/simple, predicted 12 % faster
 *
 * Sizes read like `ccltune explain`'s ("4 MiB", a fitted edge "5.657 MiB"), "nccl" means
 * the table leaves that choice to NCCL (as explain prints it), "left to NCCL (ring/simple)" a
 * band where the table leaves everything to NCCL's default (cct_rule_is_nccl_choice; a
 * percentage only where both sides are predicted there, cct_table_diff.h), and a percentage is
 * the speedup t_old / t_new - 1 (the convention of a rule's margin), or for a slowdown
 * t_new / t_old - 1; a change that covers several ranges gives the smallest and largest.
 * Values of fields are shown as the tables spell them, "(none)" where a field is absent.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_table_diff_internal.h"

#define LINE_MAX_LEN 1536

/* "2 MiB–4 MiB"; a fitted band edge such as 5931642 reads "5.657 MiB" (4 digits), and
 * exact bytes are used only when that rounding would make both ends look the same. */
static const char *range_text(uint64_t lo, uint64_t hi, char *buf, size_t len)
{
    char a[32], b[32];
    cct_format_bytes(lo, a, sizeof a);
    cct_format_bytes(hi, b, sizeof b);
    if (strcmp(a, b) == 0) {
        cct_format_bytes_exact(lo, a, sizeof a);
        cct_format_bytes_exact(hi, b, sizeof b);
    }
    snprintf(buf, len, "%s–%s", a, b);
    return buf;
}

/* "allreduce, 8 ranks (1 node)" and the variant keys when the section has them. */
static const char *section_label(const cct_diff_change *c, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s, %d rank%s (%d node%s)", cct_coll_name(c->coll), c->ranks,
                     c->ranks == 1 ? "" : "s", c->nodes, c->nodes == 1 ? "" : "s");
    if (n > 0 && (size_t)n < len && c->pipe_ops != CCT_ANY)
        n += snprintf(buf + n, len - (size_t)n, ", pipe_ops %d", c->pipe_ops);
    if (n > 0 && (size_t)n < len && c->reg_buff != CCT_ANY)
        snprintf(buf + n, len - (size_t)n, ", %s buffers",
                 c->reg_buff ? "registered" : "unregistered");
    return buf;
}

static const char *channels_text(int channels, char *buf, size_t len)
{
    if (channels)
        snprintf(buf, len, "%d", channels);
    else
        snprintf(buf, len, "nccl");
    return buf;
}

static const char *chunk_text(uint64_t chunk, char *buf, size_t len)
{
    if (chunk)
        return cct_format_bytes_exact(chunk, buf, len);
    snprintf(buf, len, "nccl");
    return buf;
}

/* "ring/ll", "ring/ll (2 channels)", "tree/simple (1 channel, chunk 128 KiB)", and for a
 * band the table leaves to NCCL "left to NCCL (ring/simple)" (NCCL's default there). */
static const char *config_text(const cct_diff_config *c, char *buf, size_t len)
{
    char chunk[32];
    if (c->nccl) {
        snprintf(buf, len, "left to NCCL (%s/%s)", cct_algo_name(c->algo),
                 cct_proto_name(c->proto));
        return buf;
    }
    int n = snprintf(buf, len, "%s/%s", cct_algo_name(c->algo), cct_proto_name(c->proto));
    if (n <= 0 || (size_t)n >= len)
        return buf;
    if (c->channels && c->chunk_bytes)
        snprintf(buf + n, len - (size_t)n, " (%d channel%s, chunk %s)", c->channels,
                 c->channels == 1 ? "" : "s", chunk_text(c->chunk_bytes, chunk, sizeof chunk));
    else if (c->channels)
        snprintf(buf + n, len - (size_t)n, " (%d channel%s)", c->channels,
                 c->channels == 1 ? "" : "s");
    else if (c->chunk_bytes)
        snprintf(buf + n, len - (size_t)n, " (chunk %s)",
                 chunk_text(c->chunk_bytes, chunk, sizeof chunk));
    return buf;
}

/* Whole percent of a speedup: > 0 faster, < 0 slower (by t_new / t_old - 1), 0 the same. */
static long percent(double speedup)
{
    if (speedup >= 0)
        return lround(speedup * 100.0);
    return -lround((1.0 / (1.0 + speedup) - 1.0) * 100.0);
}

static const char *one_speed(long p, char *buf, size_t len)
{
    if (p == 0)
        snprintf(buf, len, "equally fast");
    else
        snprintf(buf, len, "%ld %% %s", p > 0 ? p : -p, p > 0 ? "faster" : "slower");
    return buf;
}

/* "12 % faster", "5–12 % faster", "3–8 % slower", "8 % slower to 12 % faster". */
static const char *speed_text(const cct_diff_change *c, char *buf, size_t len)
{
    long lo = percent(c->speedup_lo), hi = percent(c->speedup_hi);
    char a[40], b[40];
    if (lo == hi)
        return one_speed(lo, buf, len);
    if (lo > 0)
        snprintf(buf, len, "%ld–%ld %% faster", lo, hi);
    else if (hi < 0)
        snprintf(buf, len, "%ld–%ld %% slower", -hi, -lo);
    else
        snprintf(buf, len, "%s to %s", one_speed(lo, a, sizeof a), one_speed(hi, b, sizeof b));
    return buf;
}

static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void band_line(const cct_diff_change *c, char *line, size_t len)
{
    char label[256], range[80], from[96], to[96], x[32], y[32], speed[160];
    snprintf(line, len, "%s, %s: ", section_label(c, label, sizeof label),
             range_text(c->min_bytes, c->max_bytes, range, sizeof range));
    switch (c->kind) {
    case CCT_DIFF_CHOICE:
        append(line, len, "%s → %s", config_text(&c->from, from, sizeof from),
               config_text(&c->to, to, sizeof to));
        break;
    case CCT_DIFF_TUNING:
        if (c->from.nccl || c->to.nccl) { /* "ring/ll (2 channels) → left to NCCL (ring/ll)" */
            append(line, len, "%s → %s", config_text(&c->from, from, sizeof from),
                   config_text(&c->to, to, sizeof to));
            break;
        }
        append(line, len, "%s/%s", cct_algo_name(c->to.algo), cct_proto_name(c->to.proto));
        if (c->from.channels != c->to.channels)
            append(line, len, ", channels %s → %s", channels_text(c->from.channels, x, sizeof x),
                   channels_text(c->to.channels, y, sizeof y));
        if (c->from.chunk_bytes != c->to.chunk_bytes)
            append(line, len, ", chunk %s → %s", chunk_text(c->from.chunk_bytes, x, sizeof x),
                   chunk_text(c->to.chunk_bytes, y, sizeof y));
        break;
    default: /* PREDICTED */
        append(line, len, "%s unchanged", config_text(&c->to, to, sizeof to));
        break;
    }
    if (!isnan(c->speedup_lo))
        append(line, len, ", %spredicted %s", c->kind == CCT_DIFF_PREDICTED ? "now " : "",
               speed_text(c, speed, sizeof speed));
    if (c->within_noise) /* a change with no evidence on either side stays unmarked */
        append(line, len, " [within noise]");
}

static void models_line(const cct_diff_change *c, char *line, size_t len)
{
    char label[256];
    const char *sep = ": models ";
    snprintf(line, len, "%s", section_label(c, label, sizeof label));
    const struct {
        size_t n;
        const char *what;
    } parts[] = {
        {c->models_changed, "changed"}, {c->models_added, "added"}, {c->models_removed, "removed"}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!parts[i].n)
            continue;
        append(line, len, "%s%zu %s", sep, parts[i].n, parts[i].what);
        sep = ", ";
    }
    if (c->alignment_changed)
        append(line, len, "%salignment penalties changed", strcmp(sep, ", ") == 0 ? "; " : ": ");
}

char *cct_diff_wording(const cct_diff_change *c)
{
    char line[LINE_MAX_LEN], label[256];
    const char *old_v = c->old_value ? c->old_value : "(none)";
    const char *new_v = c->new_value ? c->new_value : "(none)";
    line[0] = '\0';
    switch (c->kind) {
    case CCT_DIFF_PROVENANCE:
        snprintf(line, sizeof line, "provenance %s: %s → %s", c->field, old_v, new_v);
        break;
    case CCT_DIFF_FINGERPRINT:
        snprintf(line, sizeof line, "fingerprint %s: %s → %s", c->field, old_v, new_v);
        break;
    case CCT_DIFF_LL128:
        snprintf(line, sizeof line, "LL128: %s → %s", old_v, new_v);
        break;
    case CCT_DIFF_LL128_REASON:
        snprintf(line, sizeof line, "LL128 reason: %s → %s", old_v, new_v);
        break;
    case CCT_DIFF_ENV:
        snprintf(line, sizeof line, "recommended_env %s: %s → %s", c->field, old_v, new_v);
        break;
    case CCT_DIFF_SECTION_ADDED:
    case CCT_DIFF_SECTION_REMOVED:
        snprintf(line, sizeof line, "%s: section %s (%zu band%s)",
                 section_label(c, label, sizeof label),
                 c->kind == CCT_DIFF_SECTION_ADDED ? "added" : "removed", c->n_bands,
                 c->n_bands == 1 ? "" : "s");
        break;
    case CCT_DIFF_CHOICE:
    case CCT_DIFF_TUNING:
    case CCT_DIFF_PREDICTED:
        band_line(c, line, sizeof line);
        break;
    case CCT_DIFF_MODELS:
        models_line(c, line, sizeof line);
        break;
    case CCT_DIFF_CONSTANT:
        snprintf(line, sizeof line, "nccl_constants %s: %s → %s", c->field,
                 c->old_value ? c->old_value : "(NCCL's)",
                 c->new_value ? c->new_value : "(NCCL's)");
        break;
    }
    return strdup(line);
}
