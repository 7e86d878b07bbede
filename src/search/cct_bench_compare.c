/*
 * cct_bench_compare.c - other tables judged in the same bench run: the configurations their
 * rules need in the plan, and the comparison section of the report (cct_bench_compare.h).
 */
#include "cct_bench_compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_names.h"
#include "cct_say.h"
#include "cct_stats.h"

cct_status cct_bench_compare_configs(const cct_table *t, bool ll128_allowed, int coll, int ranks,
                                     int nodes, cct_compare_push push, void *ctx, cct_error *err)
{
    cct_status st = CCT_OK;
    for (size_t si = 0; st == CCT_OK && si < t->n_sections; si++) {
        const cct_section *s = &t->sections[si];
        if (s->coll != coll || s->ranks != ranks || s->nodes != nodes)
            continue;
        for (size_t r = 0; st == CCT_OK && r < s->n_rules; r++) {
            const cct_rule *rule = &s->rules[r];
            if (rule->proto == CCT_PROTO_LL128 && !ll128_allowed)
                continue; /* the plugin never asks for it here: NCCL's default runs */
            st = push(ctx, rule->algo, rule->proto, rule->channels, err);
        }
    }
    return st;
}

/* The run's out-of-place, timed points. */
typedef struct pts {
    const cct_point *p;
    size_t n;
} pts;

static bool usable(const cct_point *p)
{
    return !p->in_place && p->status == CCT_POINT_OK && p->stats.median_us > 0;
}

static const cct_point *find_point(const pts *ps, int coll, uint64_t bytes, int algo, int proto,
                                   int channels)
{
    for (size_t i = 0; i < ps->n; i++) {
        const cct_point *p = &ps->p[i];
        if (usable(p) && p->cfg.coll == coll && p->bytes == bytes && p->cfg.algo == algo &&
            (algo < 0 || (p->cfg.proto == proto && p->cfg.channels == channels)))
            return p;
    }
    return NULL;
}

/* The point that stands for table t's choice at the default point d's collective and size:
 * the forced configuration of its rule there, NCCL's default where it has none (or an LL128
 * rule where LL128 is not allowed); NULL when that configuration was not timed. */
static const cct_point *table_choice(const pts *ps, const cct_table *t, bool ll128_allowed,
                                     const cct_point *d)
{
    const cct_section *s =
        cct_table_find_section(t, d->cfg.coll, d->cfg.ranks, d->cfg.nodes,
                               cct_config_pipe_ops(&d->cfg), d->cfg.reg_buff ? 1 : 0);
    const cct_rule *r = s ? cct_section_lookup(s, d->bytes) : NULL;
    if (!r || (r->proto == CCT_PROTO_LL128 && !ll128_allowed))
        return d;
    return find_point(ps, d->cfg.coll, d->bytes, r->algo, r->proto, r->channels);
}

static double p_differ(cct_store *store, int64_t run_id, const cct_point *a, const cct_point *b)
{
    if (a == b)
        return 1.0;
    double *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    cct_error ignored;
    double p = 1.0;
    if (cct_store_load_samples(store, run_id, &a->cfg, a->bytes, false, &sa, &na, &ignored) ==
            CCT_OK &&
        cct_store_load_samples(store, run_id, &b->cfg, b->bytes, false, &sb, &nb, &ignored) ==
            CCT_OK)
        p = cct_mann_whitney_p(sa, na, sb, nb);
    free(sa);
    free(sb);
    return p;
}

/* Who is judged: the table under test as the plugin applied it (-2), forced (-1), or
 * compared table k (>= 0). */
typedef struct judge_ctx {
    cct_store *store;
    int64_t run_id;
    pts ps;
    const cct_table *main;
    const cct_table *tables;
} judge_ctx;

static const cct_point *choice_of(const judge_ctx *j, int who, const cct_point *d)
{
    if (who == -2)
        return find_point(&j->ps, d->cfg.coll, d->bytes, CCT_TUNED, 0, 0);
    const cct_table *t = who == -1 ? j->main : &j->tables[who];
    return table_choice(&j->ps, t, j->main->ll128_allowed, d);
}

static cct_compare_line judge(const judge_ctx *j, int who, int coll)
{
    cct_compare_line l = {coll, 0, NAN, NAN, 0, 0};
    double sum_d = 0.0, sum_m = 0.0;
    for (size_t i = 0; i < j->ps.n; i++) {
        const cct_point *d = &j->ps.p[i];
        if (!usable(d) || d->cfg.algo != CCT_DEFAULT ||
            (coll < CCT_NUM_COLLS && d->cfg.coll != coll))
            continue;
        const cct_point *x = choice_of(j, who, d), *m = choice_of(j, -1, d);
        if (!x || !m)
            continue;
        l.sizes++;
        sum_d += log(d->stats.median_us / x->stats.median_us);
        sum_m += log(m->stats.median_us / x->stats.median_us);
        if (x != m && p_differ(j->store, j->run_id, x, m) < 0.05) {
            l.faster_sig += x->stats.median_us < m->stats.median_us;
            l.slower_sig += x->stats.median_us > m->stats.median_us;
        }
    }
    if (l.sizes) {
        l.vs_default = exp(sum_d / (double)l.sizes);
        l.vs_main = exp(sum_m / (double)l.sizes);
    }
    return l;
}

static void print_line(FILE *out, const cct_compare_line *l, const char *name)
{
    fprintf(out, "| %s | %s | %zu | %.3f | %.3f | %zu / %zu |\n",
            l->coll < CCT_NUM_COLLS ? cct_coll_name(l->coll) : "all", name, l->sizes, l->vs_default,
            l->vs_main, l->faster_sig, l->slower_sig);
}

cct_status cct_bench_compare_lines(cct_store *store, int64_t run_id, const cct_table *main,
                                   const cct_table *tables, size_t n, cct_compare_line *lines,
                                   cct_error *err)
{
    cct_point *p = NULL;
    size_t np = 0;
    cct_status st = cct_store_load_points(store, &run_id, 1, &p, &np, err);
    if (st != CCT_OK)
        return st;
    judge_ctx j = {store, run_id, {p, np}, main, tables};
    for (int who = -2; who < (int)n; who++)
        for (int c = 0; c <= CCT_NUM_COLLS; c++)
            lines[(size_t)(who + 2) * (CCT_NUM_COLLS + 1) + (size_t)c] = judge(&j, who, c);
    free(p);
    return CCT_OK;
}

cct_status cct_bench_compare_report(cct_store *store, int64_t run_id, const cct_table *main,
                                    const cct_table *tables, const char *const *names, size_t n,
                                    FILE *out, bool say, cct_error *err)
{
    size_t width = CCT_NUM_COLLS + 1;
    cct_compare_line *lines = calloc((n + 2) * width, sizeof *lines);
    if (!lines)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    cct_status st = cct_bench_compare_lines(store, run_id, main, tables, n, lines, err);
    if (st != CCT_OK) {
        free(lines);
        return st;
    }
    fprintf(out, "\n## Tables compared in the same run\n\n"
                 "Each table's choice at each size is its rule's configuration forced through the "
                 "plugin, timed in the same cycles as NCCL's default (no section for the shape, or "
                 "LL128 where it is not allowed: NCCL's default).  \"forced\" is the table under "
                 "test judged the same way; \"plugin\" is it as the plugin applied it, so its row "
                 "is the forced path's own A/A noise.  vs table under test: geometric mean of the "
                 "table under test (forced) / this one (> 1: this one is faster); significant: "
                 "sizes where the two differ at p < 0.05 (two-sided Mann-Whitney U on the "
                 "per-cycle samples).\n\n"
                 "| collective | table | sizes | vs NCCL default | vs table under test | "
                 "significantly faster / slower |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (int c = 0; c <= CCT_NUM_COLLS; c++) {
        if (lines[(size_t)c].sizes == 0 && lines[width + (size_t)c].sizes == 0)
            continue;
        for (int who = -2; who < (int)n; who++) {
            const cct_compare_line *l = &lines[(size_t)(who + 2) * width + (size_t)c];
            const char *name = who == -2   ? "under test (plugin)"
                               : who == -1 ? "under test (forced)"
                                           : names[who];
            print_line(out, l, name);
            if (say && c == CCT_NUM_COLLS)
                cct_say(CCT_SAY_ERR,
                        "ccltune bench: %s: %zu sizes, %.3fx over NCCL's default, %.3fx the "
                        "table under test's speed; significantly faster at %zu, slower at %zu\n",
                        name, l->sizes, l->vs_default, l->vs_main, l->faster_sig, l->slower_sig);
        }
    }
    free(lines);
    return CCT_OK;
}
