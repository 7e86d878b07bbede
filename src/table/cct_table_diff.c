/*
 * cct_table_diff.c - comparing two tables: the table-wide fields, and which sections the
 * tables share (cct_table_diff.h).
 *
 * Fields are compared in the order the writer lays them out, so the lines read like the
 * file.  Sections are paired by their full key (collective, ranks, nodes, pipe_ops,
 * reg_buff) and walked in the writer's order; a key only one table has is a section added
 * or removed, a shared one goes to cct_table_diff_bands.c.  The fingerprint fields the
 * plugin matches on (GPU, compute capability, NCCL major.minor, shared GPUs or not) decide
 * where a table applies, so changing them is a decision; the others only describe.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_constants.h"
#include "cct_fingerprint.h"
#include "cct_table_diff_internal.h"

void cct_diff_options_default(cct_diff_options *opt)
{
    opt->threshold = 0.05;
}

cct_diff_change cct_diff_change_blank(cct_diff_kind kind, cct_diff_level level)
{
    cct_diff_change c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.level = level;
    c.pipe_ops = CCT_ANY;
    c.reg_buff = CCT_ANY;
    c.speedup_lo = NAN;
    c.speedup_hi = NAN;
    return c;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

static void change_free(cct_diff_change *c)
{
    free(c->field);
    free(c->old_value);
    free(c->new_value);
    free(c->text);
}

cct_status cct_diff_push(cct_diff *diff, const cct_diff_change *change)
{
    cct_diff_change c = *change;
    bool oom = false;
    c.field = dup_or_null(change->field, &oom);
    c.old_value = dup_or_null(change->old_value, &oom);
    c.new_value = dup_or_null(change->new_value, &oom);
    c.text = cct_diff_wording(change);
    cct_diff_change *grown = NULL;
    if (!oom && c.text)
        grown = realloc(diff->changes, (diff->n_changes + 1) * sizeof *grown);
    if (!grown) {
        change_free(&c);
        return CCT_ENOMEM;
    }
    diff->changes = grown;
    diff->changes[diff->n_changes++] = c;
    diff->n_level[c.level]++;
    if (c.level == CCT_DIFF_DECISION) {
        diff->n_within_noise += c.within_noise;
        diff->n_significant += !c.within_noise;
    }
    return CCT_OK;
}

static bool str_equal(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static cct_status field(cct_diff *d, cct_diff_kind kind, cct_diff_level level, const char *name,
                        const char *old_v, const char *new_v)
{
    if (str_equal(old_v, new_v))
        return CCT_OK;
    cct_diff_change c = cct_diff_change_blank(kind, level);
    c.field = (char *)name;
    c.old_value = (char *)old_v;
    c.new_value = (char *)new_v;
    return cct_diff_push(d, &c);
}

/* Quoted, as the writer writes strings, so a reviewer sees exactly what is in the file. */
static const char *quoted(const char *s, char *buf, size_t len)
{
    if (!s)
        return NULL;
    snprintf(buf, len, "\"%s\"", s);
    return buf;
}

static cct_status str_field(cct_diff *d, cct_diff_kind kind, cct_diff_level level, const char *name,
                            const char *old_v, const char *new_v)
{
    char a[512], b[512];
    return field(d, kind, level, name, quoted(old_v, a, sizeof a), quoted(new_v, b, sizeof b));
}

static cct_status int_field(cct_diff *d, cct_diff_kind kind, cct_diff_level level, const char *name,
                            int old_v, int new_v)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%d", old_v);
    snprintf(b, sizeof b, "%d", new_v);
    return field(d, kind, level, name, a, b);
}

static cct_status provenance(cct_diff *d, const cct_provenance *a, const cct_provenance *b)
{
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        {"tool", offsetof(cct_provenance, tool)}, {"created", offsetof(cct_provenance, created)},
        {"nccl", offsetof(cct_provenance, nccl)}, {"source", offsetof(cct_provenance, source)},
        {"runs", offsetof(cct_provenance, runs)}, {"note", offsetof(cct_provenance, note)},
    };
    cct_status st = CCT_OK;
    for (size_t i = 0; st == CCT_OK && i < sizeof fields / sizeof fields[0]; i++) {
        const char *x = *(char *const *)((const char *)a + fields[i].offset);
        const char *y = *(char *const *)((const char *)b + fields[i].offset);
        st = str_field(d, CCT_DIFF_PROVENANCE, CCT_DIFF_RECORD, fields[i].name, x, y);
    }
    return st;
}

/* NCCL major.minor as the plugin compares it; unreadable versions compare as text. */
static bool nccl_minor_differs(const char *a, const char *b)
{
    int x = a ? cct_nccl_version_parse(a) : -1, y = b ? cct_nccl_version_parse(b) : -1;
    if (x < 0 || y < 0)
        return !str_equal(a, b);
    return x / 100 != y / 100;
}

static cct_status fingerprint(cct_diff *d, const cct_fingerprint *a, const cct_fingerprint *b)
{
    const cct_diff_kind k = CCT_DIFF_FINGERPRINT;
    const cct_diff_level dec = CCT_DIFF_DECISION, note = CCT_DIFF_NOTE;
    /* ranks_per_gpu 0 in memory means the default 1, as the writer writes it */
    int rpg_a = a->ranks_per_gpu > 0 ? a->ranks_per_gpu : 1;
    int rpg_b = b->ranks_per_gpu > 0 ? b->ranks_per_gpu : 1;
    char cca[16], ccb[16];
    cct_status st = str_field(d, k, dec, "gpu", a->gpu, b->gpu);
    if (st == CCT_OK && a->cc != b->cc)
        st = field(d, k, dec, "cc", cct_cc_format(a->cc, cca, sizeof cca),
                   cct_cc_format(b->cc, ccb, sizeof ccb));
    if (st == CCT_OK)
        st = int_field(d, k, note, "gpus_per_node", a->gpus_per_node, b->gpus_per_node);
    if (st == CCT_OK)
        st = int_field(d, k, note, "nodes", a->nodes, b->nodes);
    if (st == CCT_OK)
        st =
            int_field(d, k, (rpg_a > 1) != (rpg_b > 1) ? dec : note, "ranks_per_gpu", rpg_a, rpg_b);
    if (st == CCT_OK)
        st = field(d, k, note, "links", a->links, b->links);
    if (st == CCT_OK)
        st = str_field(d, k, nccl_minor_differs(a->nccl, b->nccl) ? dec : note, "nccl", a->nccl,
                       b->nccl);
    if (st == CCT_OK) /* where the plugin applies the table: a decision */
        st = str_field(d, k, dec, "nccl_versions", a->nccl_versions, b->nccl_versions);
    if (st == CCT_OK)
        st = str_field(d, k, note, "cuda", a->cuda, b->cuda);
    return st;
}

static cct_status ll128(cct_diff *d, const cct_table *a, const cct_table *b)
{
    cct_status st = CCT_OK;
    if (a->ll128_allowed != b->ll128_allowed)
        st = field(d, CCT_DIFF_LL128, CCT_DIFF_DECISION, "allowed",
                   a->ll128_allowed ? "allowed" : "not allowed",
                   b->ll128_allowed ? "allowed" : "not allowed");
    if (st == CCT_OK)
        st = str_field(d, CCT_DIFF_LL128_REASON, CCT_DIFF_RECORD, "reason", a->ll128_reason,
                       b->ll128_reason);
    return st;
}

static const char *env_get(const cct_table *t, const char *key)
{
    for (size_t i = 0; i < t->n_env; i++)
        if (strcmp(t->env[i].key, key) == 0)
            return t->env[i].value;
    return NULL;
}

/* Both lists are sorted by key (cct_table_set_env and the reader keep them so); walk them as
 * a merge so the lines come out in the file's order. */
static cct_status env(cct_diff *d, const cct_table *a, const cct_table *b)
{
    size_t i = 0, j = 0;
    cct_status st = CCT_OK;
    while (st == CCT_OK && (i < a->n_env || j < b->n_env)) {
        int cmp = i >= a->n_env ? 1 : j >= b->n_env ? -1 : strcmp(a->env[i].key, b->env[j].key);
        const char *key = cmp <= 0 ? a->env[i].key : b->env[j].key;
        st = str_field(d, CCT_DIFF_ENV, CCT_DIFF_DECISION, key, env_get(a, key), env_get(b, key));
        i += cmp <= 0;
        j += cmp >= 0;
    }
    return st;
}

/* nccl_constants: every entry set in either table and not equal in both, in slot order. */
static cct_status constants(cct_diff *d, const cct_table *a, const cct_table *b)
{
    cct_status st = CCT_OK;
    for (size_t i = 0; st == CCT_OK && i < CCT_CONST_NUM_SLOTS; i++) {
        cct_const_slot s = cct_const_slot_at(i);
        double x = a->constants.present ? cct_const_get(&a->constants, s) : NAN;
        double y = b->constants.present ? cct_const_get(&b->constants, s) : NAN;
        char xs[64], ys[64], name[128], slot[64];
        snprintf(xs, sizeof xs, "%.4f", x);
        snprintf(ys, sizeof ys, "%.4f", y);
        snprintf(name, sizeof name, "%s %s", cct_const_family_key(s.family),
                 cct_const_slot_name(s, slot, sizeof slot));
        /* compared as written: a change below the writer's precision is no change */
        st = field(d, CCT_DIFF_CONSTANT, CCT_DIFF_DECISION, name, isnan(x) ? NULL : xs,
                   isnan(y) ? NULL : ys);
    }
    return st;
}

static int key_cmp(const cct_section *x, const cct_section *y)
{
    const int kx[5] = {x->coll, x->ranks, x->nodes, x->pipe_ops, x->reg_buff};
    const int ky[5] = {y->coll, y->ranks, y->nodes, y->pipe_ops, y->reg_buff};
    for (int i = 0; i < 5; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

static int cmp_section_ptr(const void *pa, const void *pb)
{
    return key_cmp(*(const cct_section *const *)pa, *(const cct_section *const *)pb);
}

/* The table's sections in the writer's order (a loaded table is in it already; a table
 * built in memory need not be). */
static const cct_section **sorted_sections(const cct_table *t, bool *oom)
{
    if (t->n_sections == 0)
        return NULL;
    const cct_section **v = malloc(t->n_sections * sizeof *v);
    if (!v) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < t->n_sections; i++)
        v[i] = &t->sections[i];
    qsort(v, t->n_sections, sizeof *v, cmp_section_ptr);
    return v;
}

static cct_status section_alone(cct_diff *d, const cct_section *s, cct_diff_kind kind)
{
    cct_diff_change c = cct_diff_change_blank(kind, CCT_DIFF_DECISION);
    c.coll = s->coll;
    c.ranks = s->ranks;
    c.nodes = s->nodes;
    c.pipe_ops = s->pipe_ops;
    c.reg_buff = s->reg_buff;
    c.n_bands = s->n_rules;
    return cct_diff_push(d, &c);
}

static cct_status sections(cct_diff *d, const cct_table *a, const cct_table *b, double threshold)
{
    bool oom = false;
    const cct_section **va = sorted_sections(a, &oom), **vb = sorted_sections(b, &oom);
    cct_status st = oom ? CCT_ENOMEM : CCT_OK;
    size_t i = 0, j = 0;
    while (st == CCT_OK && (i < a->n_sections || j < b->n_sections)) {
        int cmp = i >= a->n_sections ? 1 : j >= b->n_sections ? -1 : key_cmp(va[i], vb[j]);
        if (cmp < 0)
            st = section_alone(d, va[i], CCT_DIFF_SECTION_REMOVED);
        else if (cmp > 0)
            st = section_alone(d, vb[j], CCT_DIFF_SECTION_ADDED);
        else
            st = cct_diff_section_pair(d, a, va[i], b, vb[j], threshold);
        i += cmp <= 0;
        j += cmp >= 0;
    }
    free(va);
    free(vb);
    return st;
}

cct_status cct_table_diff(const cct_table *old_t, const cct_table *new_t,
                          const cct_diff_options *opt, cct_diff *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    cct_diff_options def;
    if (!opt) {
        cct_diff_options_default(&def);
        opt = &def;
    }
    if (!isfinite(opt->threshold) || opt->threshold < 0)
        return cct_error_set(err, CCT_EINVAL, "the threshold must be a fraction >= 0, not %g",
                             opt->threshold);
    cct_status st = provenance(out, &old_t->provenance, &new_t->provenance);
    if (st == CCT_OK)
        st = fingerprint(out, &old_t->fingerprint, &new_t->fingerprint);
    if (st == CCT_OK)
        st = ll128(out, old_t, new_t);
    if (st == CCT_OK)
        st = env(out, old_t, new_t);
    if (st == CCT_OK)
        st = constants(out, old_t, new_t);
    if (st == CCT_OK)
        st = sections(out, old_t, new_t, opt->threshold);
    if (st != CCT_OK) {
        cct_diff_destroy(out);
        return cct_error_set(err, st, "comparing tables: %s", cct_strerror(st));
    }
    return CCT_OK;
}

bool cct_diff_no_significant(const cct_diff *diff)
{
    return diff->n_significant == 0;
}

bool cct_diff_decisions_equal(const cct_diff *diff)
{
    return diff->n_level[CCT_DIFF_DECISION] == 0;
}

void cct_diff_destroy(cct_diff *diff)
{
    for (size_t i = 0; i < diff->n_changes; i++)
        change_free(&diff->changes[i]);
    free(diff->changes);
    memset(diff, 0, sizeof *diff);
}
