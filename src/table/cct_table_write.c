/*
 * cct_table_write.c - the deterministic YAML table writer (cct_table_write / _save).
 *
 * Tables live in git, so the same table must always give the same bytes.  The writer fixes
 * everything a YAML library leaves open: key order, sort orders (sections, models,
 * alignment entries), one flow mapping per rule/model line, every string double-quoted,
 * fixed printf float formats in the C locale, NaN fields left out (docs/table-format.md).
 * It is a small hand emitter because libyaml's line wrapping and style choices are exactly
 * what must not vary.
 *
 * The text is built in memory and loaded back with the strict reader before anything
 * reaches the caller's stream, so the writer never produces a file the loader would refuse.
 * cct_table_save() adds atomic replacement (temporary file, fsync, rename, fsync folder).
 */
#include "cct_table.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cct_atomic_file.h"
#include "cct_constants.h"
#include "cct_parse.h"
#include "cct_table_words.h"
#include "cct_table_write_header.h"
#include "cct_yaml_layout.h"

/* Float formats: enough digits for the quantity's precision, few enough to be stable
 * (each format reads back to a double that prints the same text again). */
#define FMT_US "%.3f"    /* predicted_us, alpha_us, alpha_ci, alpha2_us: nanosecond steps */
#define FMT_FRAC "%.4f"  /* margin, margin_default, penalty: 0.01 % steps */
#define FMT_GBPS "%.4f"  /* beta_gbps, beta_ci, beta2_gbps: 0.1 MB/s steps */
#define FMT_R2 "%.5f"    /* r2 */
#define FMT_CONST "%.4f" /* nccl_constants: 0.1 ns, 0.1 MB/s steps */
#define FMT_GAIN "%.3f"  /* evidence gain and its interval: 0.1 % steps */

typedef struct writer {
    FILE *f;
    cct_error *err;
    cct_status st;
} writer;

/* ---- strings ---- */

/* Decode one UTF-8 character at s; returns its length, 0 when the bytes are not valid
 * (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, v = s[0] & 0x1f, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, v = s[0] & 0x0f, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, v = s[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t cp;
    while (*p) {
        size_t n = utf8_decode(p, &cp);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

/* A double-quoted YAML scalar.  Characters a YAML reader would not take literally inside
 * quotes -- controls, C1 controls (U+0085 is a line break to YAML 1.1), the Unicode line and
 * paragraph separators, the BOM and the non-characters U+FFFE/U+FFFF -- are escaped; every
 * other character, ASCII or not, is written as itself.  The string was checked by
 * utf8_valid() beforehand. */
static void put_quoted(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        uint32_t cp = 0;
        size_t n = utf8_decode(p, &cp);
        if (n == 0) { /* unreachable after utf8_valid(); keep the output well-formed */
            fputs("\\uFFFD", f);
            p++;
            continue;
        }
        if (cp == '"')
            fputs("\\\"", f);
        else if (cp == '\\')
            fputs("\\\\", f);
        else if (cp == '\n')
            fputs("\\n", f);
        else if (cp == '\t')
            fputs("\\t", f);
        else if (cp == '\r')
            fputs("\\r", f);
        else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            fprintf(f, "\\x%02X", (unsigned)cp);
        else if (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff)
            fprintf(f, "\\u%04X", (unsigned)cp);
        else
            fwrite(p, 1, n, f);
        p += n;
    }
    fputc('"', f);
}

/* ---- numbers ---- */

/* v with fmt into buf, without a minus sign on a value that rounds to zero ("-0.000"), which
 * would otherwise make tables differ only in the sign of nothing. */
static const char *fmt_float(char *buf, size_t len, const char *fmt, double v)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, fmt, v);
    const char *text = tmp;
    if (tmp[0] == '-' && strspn(tmp + 1, "0.") == strlen(tmp + 1))
        text = tmp + 1;
    snprintf(buf, len, "%s", text);
    return buf;
}

static void put_float(FILE *f, const char *fmt, double v)
{
    char buf[512];
    fputs(fmt_float(buf, sizeof buf, fmt, v), f);
}

static const char *fmt_size(char *buf, size_t len, uint64_t v)
{
    if (v == CCT_BYTES_INF)
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

/* Channels as the search flag spells them: 64, the most a table allows, is "max" (NCCL
 * clamps it to the communicator's channel count, so that is what it means). */
static const char *fmt_channels(char *buf, size_t len, int channels)
{
    if (channels == CCT_TABLE_MAX_CHANNELS)
        snprintf(buf, len, "max");
    else
        snprintf(buf, len, "%d", channels);
    return buf;
}

/* An optional float item; nothing when the value is unknown (NaN). */
static void flow_float(cct_flow *fl, const char *key, const char *fmt, double v)
{
    char buf[64];
    if (!isnan(v))
        cct_flow_add(fl, "%s: %s", key, fmt_float(buf, sizeof buf, fmt, v));
}

/* An optional size item; nothing when it is 0 (unset). */
static void flow_size(cct_flow *fl, const char *key, uint64_t v)
{
    char buf[32];
    if (v)
        cct_flow_add(fl, "%s: %s", key, fmt_size(buf, sizeof buf, v));
}

/* ---- checks that give a better message than the read-back would ---- */

static cct_status need_string(const char *s, const char *what, cct_error *err)
{
    if (!s)
        return cct_error_set(err, CCT_EINVAL, "cannot write the table: %s is not set", what);
    if (!utf8_valid(s))
        return cct_error_set(err, CCT_EINVAL, "cannot write the table: %s is not valid UTF-8",
                             what);
    return CCT_OK;
}

static cct_status need_finite(double v, const char *what, const cct_section *s, cct_error *err)
{
    if (isnan(v) || isfinite(v))
        return CCT_OK;
    char key[128];
    return cct_error_set(err, CCT_EINVAL, "cannot write the table: %s %s is infinite",
                         cct_section_describe(s, key, sizeof key), what);
}

/* The evidence of a rule must be what the loader accepts (docs/table-format.md, "evidence"):
 * said here with the rule's name, before the read-back would say it with a line number. */
static cct_status check_evidence(const cct_rule *r, const cct_section *s, size_t j, cct_error *err)
{
    bool any = r->gain != 0 || r->gain_lo != 0 || r->gain_hi != 0 || r->noise != 0 || r->cycles;
    const char *why = NULL;
    if (r->no_baseline && any)
        why = "has no NCCL baseline but a gain";
    else if (r->no_baseline || !any)
        return CCT_OK;
    else if (!isfinite(r->gain) || !isfinite(r->gain_lo) || !isfinite(r->gain_hi) ||
             !isfinite(r->noise))
        why = "evidence is not finite";
    else if (!(r->gain > 0) || !(r->gain_lo <= r->gain && r->gain <= r->gain_hi))
        why = "evidence gain is not inside its ci, or not above 0";
    else if (r->noise < 0)
        why = "evidence noise is negative";
    else if (r->cycles < 1)
        why = "evidence needs at least one cycle";
    else
        return CCT_OK;
    char key[128];
    return cct_error_set(err, CCT_EINVAL,
                         "cannot write the table: %s rule %zu: %s (gain %g, ci [%g, %g], noise %g, "
                         "cycles %d)",
                         cct_section_describe(s, key, sizeof key), j + 1, why, r->gain, r->gain_lo,
                         r->gain_hi, r->noise, r->cycles);
}

static cct_status check_writable(const cct_table *t, cct_error *err)
{
    const cct_provenance *p = &t->provenance;
    const cct_fingerprint *fp = &t->fingerprint;
    cct_status st = CCT_OK;
    const struct {
        const char *s, *what;
        bool required;
    } strings[] = {
        {p->tool, "provenance.tool", true},
        {p->created, "provenance.created", true},
        {p->nccl, "provenance.nccl", false},
        {p->source, "provenance.source", true},
        {p->runs, "provenance.runs", false},
        {p->note, "provenance.note", false},
        {p->command, "provenance.command", false},
        {fp->gpu, "fingerprint.gpu", true},
        {fp->links, "fingerprint.links", true},
        {fp->nccl, "fingerprint.nccl", true},
        {fp->cuda, "fingerprint.cuda", false},
        {t->ll128_reason, "ll128.reason", false},
        {fp->nccl_versions, "fingerprint.nccl_versions", false},
        {t->link_matrix.present ? t->link_matrix.socket : NULL, "link_matrix.socket", false},
    };
    for (size_t i = 0; st == CCT_OK && i < sizeof strings / sizeof strings[0]; i++)
        if (strings[i].required || strings[i].s)
            st = need_string(strings[i].s, strings[i].what, err);
    for (size_t i = 0; st == CCT_OK && i < t->n_env; i++)
        st = need_string(t->env[i].value, t->env[i].key, err);
    if (st != CCT_OK)
        return st;
    cct_error why;
    if (cct_constants_check(&t->constants, &why) != CCT_OK)
        return cct_error_set(err, CCT_EINVAL, "cannot write the table: %s", why.msg);
    cct_error bad;
    if (fp->nccl_versions && cct_parse_nccl_versions("fingerprint.nccl_versions", fp->nccl_versions,
                                                     NULL, &bad) != CCT_OK)
        return cct_error_set(err, CCT_EINVAL, "cannot write the table: %s", bad.msg);
    char cc[16];
    if (cct_cc_parse(cct_cc_format(fp->cc, cc, sizeof cc)) != fp->cc)
        return cct_error_set(err, CCT_EINVAL,
                             "cannot write the table: fingerprint.cc %d is not a compute "
                             "capability",
                             fp->cc);
    for (size_t i = 0; i < t->n_sections; i++) {
        const cct_section *s = &t->sections[i];
        if ((st = cct_table_check_section(s, err)) != CCT_OK)
            return st;
        for (size_t j = 0; st == CCT_OK && j < s->n_rules; j++) {
            const cct_rule *r = &s->rules[j];
            st = need_finite(r->predicted_us, "predicted_us", s, err);
            if (st == CCT_OK)
                st = need_finite(r->margin, "margin", s, err);
            if (st == CCT_OK)
                st = need_finite(r->margin_default, "margin_default", s, err);
            if (st == CCT_OK)
                st = check_evidence(r, s, j, err);
        }
        for (size_t j = 0; st == CCT_OK && j < s->n_models; j++) {
            const cct_model *m = &s->models[j];
            const double v[] = {m->alpha_us, m->alpha_ci,  m->beta_gbps, m->beta_ci,
                                m->r2,       m->alpha2_us, m->beta2_gbps};
            for (size_t k = 0; st == CCT_OK && k < sizeof v / sizeof v[0]; k++)
                st = need_finite(v[k], "model value", s, err);
            for (int k = 0; st == CCT_OK && k < m->n_segments && k < CCT_MODEL_MAX_SEGMENTS; k++) {
                const cct_model_segment *g = &m->segments[k];
                const double gv[] = {g->alpha_us, g->alpha_ci, g->beta_gbps, g->beta_ci};
                for (size_t q = 0; st == CCT_OK && q < sizeof gv / sizeof gv[0]; q++)
                    st = need_finite(gv[q], "model segment value", s, err);
            }
        }
        for (size_t j = 0; st == CCT_OK && j < s->n_penalties; j++)
            st = need_finite(s->penalties[j].penalty, "alignment penalty", s, err);
        if (st != CCT_OK)
            return st;
    }
    return CCT_OK;
}

/* ---- ordering ---- */

static int cmp_int(int a, int b)
{
    return (a > b) - (a < b);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_section(const void *a, const void *b)
{
    const cct_section *x = *(const cct_section *const *)a, *y = *(const cct_section *const *)b;
    int c = cmp_int(x->coll, y->coll);
    if (!c)
        c = cmp_int(x->ranks, y->ranks);
    if (!c)
        c = cmp_int(x->nodes, y->nodes);
    if (!c)
        c = cmp_int(x->pipe_ops, y->pipe_ops);
    if (!c)
        c = cmp_int(x->reg_buff, y->reg_buff);
    return c;
}

static int cmp_model(const void *a, const void *b)
{
    const cct_model *x = *(const cct_model *const *)a, *y = *(const cct_model *const *)b;
    int c = cmp_int(x->algo, y->algo);
    if (!c)
        c = cmp_int(x->proto, y->proto);
    if (!c)
        c = cmp_int(x->channels, y->channels);
    if (!c)
        c = cmp_u64(x->buffsize, y->buffsize);
    if (!c)
        c = cmp_u64(x->ll_buffsize, y->ll_buffsize);
    if (!c)
        c = cmp_u64(x->ll128_buffsize, y->ll128_buffsize);
    return c;
}

static int cmp_penalty(const void *a, const void *b)
{
    const cct_align_penalty *x = *(const cct_align_penalty *const *)a;
    const cct_align_penalty *y = *(const cct_align_penalty *const *)b;
    int c = cmp_int(x->proto, y->proto);
    return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

/* An array of pointers to n elements of size elem, sorted with cmp; NULL on ENOMEM (or
 * when n is 0, which callers treat as "nothing to write"). */
static const void **sorted_view(const void *base, size_t n, size_t elem,
                                int (*cmp)(const void *, const void *))
{
    if (n == 0)
        return NULL;
    const void **v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = (const char *)base + i * elem;
    qsort(v, n, sizeof *v, cmp);
    return v;
}

/* ---- emission ---- */

/* The measured evidence of a rule as one flow item, or nothing when it has none. */
static void flow_evidence(cct_flow *fl, const cct_rule *r)
{
    char g[32], lo[32], hi[32], noise[32];
    if (r->no_baseline) {
        cct_flow_add(fl, "evidence: none");
        return;
    }
    if (r->gain == 0 && r->gain_lo == 0 && r->gain_hi == 0 && r->noise == 0 && r->cycles == 0)
        return;
    cct_flow_add(fl, "evidence: {gain: %s, ci: [%s, %s], noise: %s, cycles: %d}",
                 fmt_float(g, sizeof g, FMT_GAIN, r->gain),
                 fmt_float(lo, sizeof lo, FMT_GAIN, r->gain_lo),
                 fmt_float(hi, sizeof hi, FMT_GAIN, r->gain_hi),
                 fmt_float(noise, sizeof noise, FMT_FRAC, r->noise), r->cycles);
}

/* A rule: the decision on its first line with the band in words, the numbers behind it on
 * the next, ending in why it is there (cct_words_verdict). */
static bool emit_rule(FILE *f, const cct_rule *r)
{
    cct_flow *fl = cct_flow_new();
    if (!fl)
        return false;
    char a[32], b[32], band[96], verdict[96];
    cct_flow_add(fl, "min_bytes: %s", fmt_size(a, sizeof a, r->min_bytes));
    cct_flow_add(fl, "max_bytes: %s", fmt_size(b, sizeof b, r->max_bytes));
    cct_flow_add(fl, "algo: %s", cct_algo_name(r->algo));
    cct_flow_add(fl, "proto: %s", cct_proto_name(r->proto));
    cct_flow_add(fl, "channels: %s", fmt_channels(a, sizeof a, r->channels));
    flow_size(fl, "chunk_bytes", r->chunk_bytes);
    fl->break_after = fl->n;
    flow_float(fl, "predicted_us", FMT_US, r->predicted_us);
    flow_float(fl, "margin", FMT_FRAC, r->margin);
    flow_float(fl, "margin_default", FMT_FRAC, r->margin_default);
    flow_size(fl, "ref_bytes", r->ref_bytes);
    flow_evidence(fl, r);
    cct_words_band(r->min_bytes, r->max_bytes, band, sizeof band);
    cct_words_verdict(r, verdict, sizeof verdict);
    bool ok = cct_flow_write(f, fl, 8, "- ", band, verdict);
    free(fl);
    return ok;
}

static const char *kind_text(cct_model_kind kind)
{
    return kind == CCT_MODEL_SEGMENTED   ? "segmented"
           : kind == CCT_MODEL_PIECEWISE ? "piecewise"
                                         : "linear";
}

/* One segment of a piecewise model as one flow item ("{from_bytes: ..., ...}"). */
static void flow_segment(cct_flow *fl, const cct_model_segment *s, const char *before,
                         const char *after)
{
    char buf[32];
    cct_flow_add(fl, "%s{from_bytes: %s", before, fmt_size(buf, sizeof buf, s->from_bytes));
    const struct {
        const char *key, *fmt;
        double v;
    } fields[] = {{"alpha_us", FMT_US, s->alpha_us},
                  {"alpha_ci", FMT_US, s->alpha_ci},
                  {"beta_gbps", FMT_GBPS, s->beta_gbps},
                  {"beta_ci", FMT_GBPS, s->beta_ci}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!isnan(fields[i].v))
            cct_flow_append(fl, ", %s: %s", fields[i].key,
                            fmt_float(buf, sizeof buf, fields[i].fmt, fields[i].v));
    cct_flow_append(fl, "}%s", after);
}

static bool emit_model(FILE *f, const cct_model *m)
{
    cct_flow *fl = cct_flow_new();
    if (!fl)
        return false;
    char buf[32];
    cct_flow_add(fl, "algo: %s", cct_algo_name(m->algo));
    cct_flow_add(fl, "proto: %s", cct_proto_name(m->proto));
    cct_flow_add(fl, "channels: %s", fmt_channels(buf, sizeof buf, m->channels));
    cct_flow_add(fl, "buffsize: %llu", (unsigned long long)m->buffsize);
    flow_size(fl, "ll_buffsize", m->ll_buffsize);
    flow_size(fl, "ll128_buffsize", m->ll128_buffsize);
    cct_flow_add(fl, "kind: %s", kind_text(m->kind));
    if (m->kind == CCT_MODEL_PIECEWISE) {
        /* the line fields of a piecewise model mirror its segments: written once, here */
        for (int i = 0; i < m->n_segments; i++)
            flow_segment(fl, &m->segments[i], i == 0 ? "segments: [" : "",
                         i + 1 == m->n_segments ? "]" : "");
    } else {
        flow_float(fl, "alpha_us", FMT_US, m->alpha_us);
        flow_float(fl, "alpha_ci", FMT_US, m->alpha_ci);
        flow_float(fl, "beta_gbps", FMT_GBPS, m->beta_gbps);
        flow_float(fl, "beta_ci", FMT_GBPS, m->beta_ci);
    }
    if (m->kind == CCT_MODEL_SEGMENTED) {
        cct_flow_add(fl, "break_bytes: %s", fmt_size(buf, sizeof buf, m->break_bytes));
        flow_float(fl, "alpha2_us", FMT_US, m->alpha2_us);
        flow_float(fl, "beta2_gbps", FMT_GBPS, m->beta2_gbps);
    }
    flow_float(fl, "r2", FMT_R2, m->r2);
    cct_flow_add(fl, "n_points: %d", m->n_points);
    cct_flow_add(fl, "poor_fit: %s", m->poor_fit ? "true" : "false");
    bool ok = cct_flow_write(f, fl, 8, "- ", NULL, NULL);
    free(fl);
    return ok;
}

static bool has_negative_margin(const cct_section *s)
{
    for (size_t i = 0; i < s->n_rules; i++)
        if (s->rules[i].margin < 0)
            return true;
    return false;
}

static cct_status emit_models(FILE *f, const cct_section *s)
{
    if (!s->n_models)
        return CCT_OK;
    const void **v = sorted_view(s->models, s->n_models, sizeof *s->models, cmp_model);
    if (!v)
        return CCT_ENOMEM;
    fputs("      models:  # time(n bytes) = alpha_us + n / (beta_gbps * 1e3) us; *_ci: 95 % "
          "half-widths\n",
          f);
    bool ok = true;
    for (size_t i = 0; i < s->n_models; i++)
        ok &= emit_model(f, v[i]);
    free(v);
    return ok ? CCT_OK : CCT_ENOMEM;
}

static cct_status emit_penalties(FILE *f, const cct_section *s)
{
    if (!s->n_penalties)
        return CCT_OK;
    const void **v = sorted_view(s->penalties, s->n_penalties, sizeof *s->penalties, cmp_penalty);
    if (!v)
        return CCT_ENOMEM;
    fputs("      alignment:\n", f);
    for (size_t i = 0; i < s->n_penalties; i++) {
        const cct_align_penalty *p = v[i];
        fprintf(f, "        - {proto: %s, offset: %u, penalty: ", cct_proto_name(p->proto),
                p->offset);
        put_float(f, FMT_FRAC, p->penalty);
        fputs("}\n", f);
    }
    free(v);
    return CCT_OK;
}

static cct_status emit_section(FILE *f, const cct_section *s)
{
    fprintf(f, "    - ranks: %d\n      nodes: %d\n", s->ranks, s->nodes);
    if (s->pipe_ops != CCT_ANY)
        fprintf(f, "      pipe_ops: %d\n", s->pipe_ops);
    if (s->reg_buff != CCT_ANY)
        fprintf(f, "      reg_buff: %s\n", s->reg_buff ? "true" : "false");
    if (has_negative_margin(s))
        fputs("      rules:  # margin: runner-up's time / this one's - 1 at ref_bytes; below 0, a "
              "faster one lost a tie\n",
              f);
    else
        fputs("      rules:\n", f);
    bool ok = true;
    for (size_t i = 0; i < s->n_rules; i++)
        ok &= emit_rule(f, &s->rules[i]);
    cct_status st = ok ? CCT_OK : CCT_ENOMEM;
    if (st == CCT_OK)
        st = emit_models(f, s);
    if (st == CCT_OK)
        st = emit_penalties(f, s);
    return st;
}

/* "indent key: "value"", the string folded at spaces to keep lines within the width. */
static bool emit_string_field(FILE *f, const char *indent, const char *key, const char *value)
{
    if (!value)
        return true;
    char *quoted = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&quoted, &len);
    if (!mem)
        return false;
    put_quoted(mem, value);
    if (fclose(mem) != 0) {
        free(quoted);
        return false;
    }
    fprintf(f, "%s%s: ", indent, key);
    int col = (int)(strlen(indent) + strlen(key) + 2);
    cct_write_folded(f, col, (int)strlen(indent) + 4, quoted);
    free(quoted);
    return true;
}

/* nccl_constants: one flow mapping per family, entries in slot order, only the set ones;
 * a block with no entries stays visible as {} (it means "constants: none fitted"). */
static bool emit_constants(FILE *f, const cct_constants *c)
{
    if (!c->present)
        return true;
    if (cct_constants_count(c) == 0) {
        fputs("nccl_constants: {}\n", f);
        return true;
    }
    fputs("nccl_constants:\n", f);
    bool ok = true;
    for (int fam = 0; fam < CCT_CONST_NUM_FAMILIES; fam++) {
        size_t first = cct_const_family_first((cct_const_family)fam);
        size_t n = cct_const_family_size((cct_const_family)fam);
        cct_flow *fl = cct_flow_new();
        if (!fl)
            return false;
        for (size_t i = 0; i < n; i++) {
            cct_const_slot s = cct_const_slot_at(first + i);
            double v = cct_const_get(c, s);
            if (isnan(v))
                continue;
            char name[64], num[64];
            cct_flow_add(fl, "%s: %s", cct_const_slot_name(s, name, sizeof name),
                         fmt_float(num, sizeof num, FMT_CONST, v));
        }
        if (fl->n) {
            char lead[96];
            snprintf(lead, sizeof lead, "%s: ", cct_const_family_key((cct_const_family)fam));
            ok &= cct_flow_write(f, fl, 2, lead, NULL, NULL);
        }
        free(fl);
    }
    return ok;
}

/* link_matrix: the run's measured links in a few figures, only those measured; nothing
 * when the store had no matrix (so older stores give the same bytes as before). */
static bool emit_link_matrix(FILE *f, const cct_link_summary *l)
{
    if (!l->present)
        return true;
    static const struct {
        const char *key, *fmt;
        size_t offset;
    } figures[] = {
        {"pair_gbps_min", "%.2f", offsetof(cct_link_summary, pair_gbps_min)},
        {"pair_gbps_max", "%.2f", offsetof(cct_link_summary, pair_gbps_max)},
        {"pair_latency_us_min", "%.3f", offsetof(cct_link_summary, pair_latency_us_min)},
        {"pair_latency_us_max", "%.3f", offsetof(cct_link_summary, pair_latency_us_max)},
        {"h2d_gbps", "%.2f", offsetof(cct_link_summary, h2d_gbps)},
        {"d2h_gbps", "%.2f", offsetof(cct_link_summary, d2h_gbps)},
        {"host_latency_us", "%.3f", offsetof(cct_link_summary, host_latency_us)},
    };
    fprintf(f, "link_matrix:  # stored with run %d (ccltune probe --links)\n", l->run);
    fprintf(f, "  run: %d\n  gpus: %d\n", l->run, l->gpus);
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        double v = *(const double *)(const void *)((const char *)l + figures[i].offset);
        if (isnan(v))
            continue;
        fprintf(f, "  %s: ", figures[i].key);
        put_float(f, figures[i].fmt, v);
        fputc('\n', f);
    }
    return emit_string_field(f, "  ", "socket", l->socket);
}

static bool emit_head(FILE *f, const cct_table *t)
{
    const cct_provenance *p = &t->provenance;
    const cct_fingerprint *fp = &t->fingerprint;
    char cc[16];
    bool ok = true;
    cct_table_write_header(f, t);
    fprintf(f, "ccltune_table: %d\nprovenance:\n", CCT_TABLE_FORMAT);
    ok &= emit_string_field(f, "  ", "tool", p->tool);
    ok &= emit_string_field(f, "  ", "measured", p->created);
    ok &= emit_string_field(f, "  ", "nccl", p->nccl);
    ok &= emit_string_field(f, "  ", "source", p->source);
    ok &= emit_string_field(f, "  ", "runs", p->runs);
    ok &= emit_string_field(f, "  ", "command", p->command);
    ok &= emit_string_field(f, "  ", "note", p->note);
    fputs("fingerprint:\n", f);
    ok &= emit_string_field(f, "  ", "gpu", fp->gpu);
    fprintf(f, "  cc: \"%s\"\n", cct_cc_format(fp->cc, cc, sizeof cc));
    fprintf(f, "  gpus_per_node: %d\n  nodes: %d\n", fp->gpus_per_node, fp->nodes);
    /* 0 is what cct_table_init() leaves: the default, one rank per GPU */
    fprintf(f, "  ranks_per_gpu: %d\n", fp->ranks_per_gpu ? fp->ranks_per_gpu : 1);
    fprintf(f, "  links: %s\n", fp->links);
    ok &= emit_string_field(f, "  ", "nccl", fp->nccl);
    ok &= emit_string_field(f, "  ", "nccl_versions", fp->nccl_versions); /* absent: nothing */
    ok &= emit_string_field(f, "  ", "cuda", fp->cuda);
    fprintf(f, "ll128:\n  allowed: %s\n", t->ll128_allowed ? "true" : "false");
    ok &= emit_string_field(f, "  ", "reason", t->ll128_reason);
    if (t->n_env) {
        fputs("recommended_env:\n", f);
        for (size_t i = 0; i < t->n_env; i++) /* cct_table_set_env keeps them sorted */
            ok &= emit_string_field(f, "  ", t->env[i].key, t->env[i].value);
    }
    return ok;
}

static cct_status emit(FILE *f, const cct_table *t)
{
    if (!emit_head(f, t) || !emit_link_matrix(f, &t->link_matrix) ||
        !emit_constants(f, &t->constants))
        return CCT_ENOMEM;
    if (t->n_sections == 0) {
        fputs("collectives: {}\n", f);
        return CCT_OK;
    }
    const void **v = sorted_view(t->sections, t->n_sections, sizeof *t->sections, cmp_section);
    if (!v)
        return CCT_ENOMEM;
    fputs("collectives:\n", f);
    cct_status st = CCT_OK;
    for (size_t i = 0; i < t->n_sections && st == CCT_OK; i++) {
        const cct_section *s = v[i];
        if (i == 0 || ((const cct_section *)v[i - 1])->coll != s->coll)
            fprintf(f, "  %s:\n", cct_coll_name(s->coll));
        st = emit_section(f, s);
    }
    free(v);
    return st;
}

cct_status cct_table_write(const cct_table *table, FILE *out, cct_error *err)
{
    cct_error_clear(err);
    if (table->format != CCT_TABLE_FORMAT)
        return cct_error_set(err, CCT_EUNSUPPORTED, "cannot write table format %d (only %d)",
                             table->format, CCT_TABLE_FORMAT);
    cct_status st = check_writable(table, err);
    if (st != CCT_OK)
        return st;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t saved = c_locale ? uselocale(c_locale) : (locale_t)0;
    st = emit(mem, table);
    if (c_locale) {
        uselocale(saved);
        freelocale(c_locale);
    }
    if (fclose(mem) != 0 && st == CCT_OK)
        st = CCT_ENOMEM;
    if (st != CCT_OK) {
        free(text);
        return cct_error_set(err, st, "out of memory");
    }
    /* the guarantee that matters to users: whatever we write, we (and the plugin) can load */
    cct_table back;
    cct_error why;
    if (cct_table_load_buffer(text, len, "<written table>", &back, &why) != CCT_OK) {
        free(text);
        return cct_error_set(err, CCT_EINVAL, "refusing to write a table that would not load: %s",
                             why.msg);
    }
    cct_table_destroy(&back);
    if (fwrite(text, 1, len, out) != len || fflush(out) != 0 || ferror(out))
        st = cct_error_set(err, CCT_EIO, "write failed: %s", strerror(errno));
    free(text);
    return st;
}

/* Targets that are not regular files (/dev/null, /dev/stdout, a FIFO) are written in
 * place: renaming a temporary file over them would replace the device itself (seen: a
 * `-o /dev/null` run as root left /dev/null a regular file). */
static cct_status save_in_place(const cct_table *table, const char *path, cct_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cct_error_at(err, CCT_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    cct_status st = cct_table_write(table, f, err);
    if (fclose(f) != 0 && st == CCT_OK)
        st = cct_error_at(err, CCT_EIO, path, 0, 0, "cannot write: %s", strerror(errno));
    return st;
}

cct_status cct_table_save(const cct_table *table, const char *path, cct_error *err)
{
    cct_error_clear(err);
    struct stat target;
    if (stat(path, &target) == 0 && !S_ISREG(target.st_mode))
        return save_in_place(table, path, err);
    /* a temporary file beside it, renamed over it (cct_atomic_file.h); 0644: a deployed
     * table is read by the jobs of other users */
    cct_atomic_file a;
    cct_status st = cct_atomic_open(&a, path, 0644, err);
    if (st != CCT_OK)
        return st;
    st = cct_table_write(table, a.f, err);
    if (st != CCT_OK) {
        cct_atomic_abort(&a);
        return st;
    }
    return cct_atomic_commit(&a, err);
}
