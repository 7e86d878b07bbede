/*
 * cct_decide_modes.c - sections keyed by call mode: grouped collectives (numPipeOps) and
 * registered buffers (regBuff).
 *
 * A point measured in a call mode (pipe_ops k > 1 or registered buffers) is filed under the
 * key NCCL passed its tuner for it, since that is what the plugin matches at run time:
 * tuner_pipe_ops / tuner_reg_buff when recorded, else the requested mode.  Its size becomes
 * the bytes NCCL passed (tuner_bytes; else k x bytes: NCCL aggregates a group's same-kind
 * collectives into one tuner call), so the section's bands are in the plugin's units.
 * Points whose key is the plain one (numPipeOps 1, regBuff 0: on NVLink NCCL passes 1 for a
 * group of 4, since it divides the group by its channel count) cannot be told apart from
 * plain calls by the plugin and make no section.
 *
 * A keyed section is built exactly like a plain one (cct_dsec_prepare / cct_dsec_decide in
 * cct_decide.c, at NCCL's default buffers, where call modes are measured), then kept only when it
 * changes a decision: at some measured size, the plain section's choice for that many bytes, timed
 * in this mode, is slower than the keyed section's choice by more than the tie threshold. Otherwise
 * the plain (ANY) section already serves the mode and the table stays smaller.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"

/* The key a mode point is matched on at run time. */
static void mode_key(const cct_point *p, int *pipe_ops, int *reg_buff)
{
    if (p->tuner_pipe_ops > 0 && p->tuner_reg_buff >= 0) {
        *pipe_ops = p->tuner_pipe_ops;
        *reg_buff = p->tuner_reg_buff;
    } else {
        *pipe_ops = cct_config_pipe_ops(&p->cfg);
        *reg_buff = p->cfg.reg_buff ? 1 : 0;
    }
}

static int cmp_mode(const void *pa, const void *pb)
{
    const cct_point *a = pa, *b = pb;
    int ka[5] = {a->cfg.coll, a->cfg.ranks, a->cfg.nodes, 0, 0};
    int kb[5] = {b->cfg.coll, b->cfg.ranks, b->cfg.nodes, 0, 0};
    mode_key(a, &ka[3], &ka[4]);
    mode_key(b, &kb[3], &kb[4]);
    for (int i = 0; i < 5; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* A mode point rewritten as the plain point the builder expects, at the bytes NCCL passed. */
static cct_point as_plain(const cct_point *p)
{
    cct_point q = *p;
    q.bytes = p->tuner_pipe_ops > 0 && p->tuner_bytes > 0
                  ? p->tuner_bytes
                  : p->bytes * (uint64_t)cct_config_pipe_ops(&p->cfg);
    q.cfg.pipe_ops = 0;
    q.cfg.reg_buff = false;
    return q;
}

/* Median time, measured in this mode, of algo/proto (any channel count, the fastest) at
 * bytes; NAN when not measured there. */
static double mode_time(const cct_point *pts, size_t n, int algo, int proto, uint64_t bytes)
{
    double best = NAN;
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (p->bytes != bytes || p->in_place || p->status != CCT_POINT_OK || p->cfg.align != 0 ||
            p->cfg.algo != algo || p->cfg.proto != proto || !(p->stats.median_us > 0))
            continue;
        if (isnan(best) || p->stats.median_us < best)
            best = p->stats.median_us;
    }
    return best;
}

/* True when the keyed section beats the plain one's choices, timed in this mode, by more
 * than the tie threshold at some measured size. */
static bool changes_a_decision(const cct_section *keyed, const cct_section *plain,
                               const cct_point *pts, size_t n, double tie)
{
    for (size_t i = 0; i < n; i++) {
        if (pts[i].in_place || pts[i].cfg.algo < 0)
            continue;
        uint64_t bytes = pts[i].bytes;
        const cct_rule *k = cct_section_lookup(keyed, bytes);
        const cct_rule *q = plain ? cct_section_lookup(plain, bytes) : NULL;
        if (!k)
            continue;
        if (!q)
            return true; /* the plain section does not cover this size at all */
        if (k->algo == q->algo && k->proto == q->proto)
            continue;
        double tk = mode_time(pts, n, k->algo, k->proto, bytes);
        double tq = mode_time(pts, n, q->algo, q->proto, bytes);
        if (!isnan(tk) && (isnan(tq) || tq > tk * (1.0 + tie)))
            return true;
    }
    return false;
}

/* One (collective, topology, key) group: build, compare, append when it matters. */
static cct_status build_one(cct_point *pts, size_t n, const cct_decide_options *opt,
                            cct_table *table, size_t *emitted, cct_error *err)
{
    int pipe_ops, reg_buff;
    mode_key(&pts[0], &pipe_ops, &reg_buff);
    if (pipe_ops == 1 && reg_buff == 0)
        return CCT_OK; /* the plugin cannot tell these calls from plain ones */
    for (size_t i = 0; i < n; i++)
        pts[i] = as_plain(&pts[i]);
    cct_decide_options o = *opt;
    o.buffsize = o.ll_buffsize = o.ll128_buffsize = 0; /* call modes are measured there */
    o.auto_buffers = false;
    cct_dsec sec;
    cct_status st = cct_dsec_prepare(pts, n, &o, &sec, err);
    if (st != CCT_OK)
        return st;
    if (!cct_dsec_has_candidates(&sec)) {
        cct_dsec_free(&sec);
        return CCT_OK;
    }
    cct_buffers b = {0, 0, 0};
    cct_section s;
    memset(&s, 0, sizeof s);
    s.coll = sec.coll;
    s.ranks = sec.ranks;
    s.nodes = sec.nodes;
    s.pipe_ops = pipe_ops;
    s.reg_buff = reg_buff;
    st = cct_dsec_decide(&sec, &o, &b, &s, err);
    cct_dsec_free(&sec);
    if (st == CCT_OK)
        st = cct_table_check_section(&s, err);
    if (st != CCT_OK) {
        cct_section_release(&s);
        return st;
    }
    const cct_section *plain =
        cct_table_find_section(table, s.coll, s.ranks, s.nodes, 1, 0); /* plain calls */
    if (plain && plain->pipe_ops == CCT_ANY && plain->reg_buff == CCT_ANY &&
        !changes_a_decision(&s, plain, pts, n, opt->tie)) {
        cct_section_release(&s);
        return CCT_OK;
    }
    cct_section *dst = cct_table_add_section(table, s.coll, s.ranks, s.nodes);
    if (!dst) {
        cct_section_release(&s);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    *dst = s;
    (*emitted)++;
    return CCT_OK;
}

cct_status cct_build_mode_sections(const cct_point *points, size_t n, const cct_decide_options *opt,
                                   cct_table *table, size_t *emitted, cct_error *err)
{
    *emitted = 0;
    cct_point *mine = malloc(sizeof *mine * (n ? n : 1));
    if (!mine)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!cct_point_is_plain_call(&points[i]) && points[i].cfg.chunk == 0)
            mine[m++] = points[i];
    qsort(mine, m, sizeof *mine, cmp_mode);
    size_t keep = table->n_sections;
    cct_status st = CCT_OK;
    for (size_t i = 0; i < m && st == CCT_OK;) {
        size_t j = i;
        while (j < m && cmp_mode(&mine[j], &mine[i]) == 0)
            j++;
        st = build_one(mine + i, j - i, opt, table, emitted, err);
        if (st != CCT_OK)
            cct_error_prefix(err, "%s ranks=%d nodes=%d (grouped/registered calls)",
                             cct_coll_name(mine[i].cfg.coll), mine[i].cfg.ranks, mine[i].cfg.nodes);
        i = j;
    }
    if (st == CCT_OK)
        st = cct_table_check(table, err);
    if (st != CCT_OK) {
        for (size_t i = keep; i < table->n_sections; i++)
            cct_section_release(&table->sections[i]);
        table->n_sections = keep;
        *emitted = 0;
    }
    free(mine);
    return st;
}
