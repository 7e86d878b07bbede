/*
 * cct_table_diff_bands.c - one section against the same key's section of the other table:
 * the decisions size range by size range, predicted times, and the models behind them.
 *
 * The boundaries of both sections' bands, merged, cut [0, inf) into ranges on which each
 * table makes exactly one choice; a split or merged band therefore shows up only where the
 * choice really differs.  Consecutive ranges with the same change become one line.
 * Predictions are evaluated at the geometric middle of each range (see mid_bytes), from the
 * models behind the rules (cct_rule_model.h), and only where the table backs them (a model
 * within its span; the new table's first), or from a band's predicted_us at exactly the size
 * it was taken at.  A changed choice's two configurations are always predicted at the same
 * size: the range's middle, else the new band's ref_bytes, else the old band's (inside the
 * range) -- never one table's number at one size against the other's at another.  Whether a
 * changed band is significant comes from the two rules' measured evidence (see
 * classify).  A band left to
 * NCCL (cct_rule_is_nccl_choice) runs NCCL's default: its twin's model or its predicted_us
 * stands in for that default only under the same conditions, and a band left to NCCL in one
 * table and naming the same configuration in the other is no change (the plugin does the
 * same), nor is a moved prediction there (NCCL's default did not change with the table).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_model.h"
#include "cct_rule_model.h"
#include "cct_table_diff_internal.h"

/* Where a range's prediction is taken: its geometric middle.  Open ends get a size one
 * factor of two inside the known end; [0, inf) (a one-band section) uses 1 MiB. */
static uint64_t mid_bytes(uint64_t lo, uint64_t hi)
{
    if (lo == 0 && hi == CCT_BYTES_INF)
        return 1u << 20;
    if (lo == 0)
        return hi / 2 > 0 ? hi / 2 : 1;
    if (hi == CCT_BYTES_INF)
        return lo <= UINT64_MAX / 2 ? lo * 2 : lo;
    return (uint64_t)llround(sqrt((double)lo) * sqrt((double)hi));
}

static cct_diff_config config_of(const cct_rule *r)
{
    cct_diff_config c = {r->algo, r->proto, r->channels, r->chunk_bytes,
                         cct_rule_is_nccl_choice(r)};
    return c;
}

static bool config_equal(const cct_diff_config *a, const cct_diff_config *b)
{
    return a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           a->chunk_bytes == b->chunk_bytes;
}

/* A band's own predicted_us stands for sizes near its ref_bytes (where it was evaluated), or
 * for the whole band when the table does not say where (a hand-written table). */
static bool band_number_covers(const cct_rule *rule, uint64_t n)
{
    if (rule->ref_bytes == 0)
        return n >= rule->min_bytes && n < rule->max_bytes;
    cct_size_span at = {true, rule->ref_bytes, rule->ref_bytes};
    return cct_span_covers(&at, n);
}

/* Predicted time of configuration c in a table's section at n bytes, where the table can
 * back it: the model of c within its span (cct_rule_model.h); else the band's own
 * predicted_us when rule (may be NULL) is that choice.  NAN otherwise.  For a band left to
 * NCCL the model is that of the forced twin, and predicted_us the default's measured time. */
static double predict(const cct_table *t, const cct_section *s, const cct_diff_config *c,
                      const cct_rule *rule, uint64_t n)
{
    cct_rule probe = cct_rule_blank();
    probe.algo = c->algo;
    probe.proto = c->proto;
    probe.channels = c->channels;
    const cct_model *m = cct_rule_model(t, s, &probe);
    double v = NAN;
    if (m) {
        cct_size_span span = cct_model_table_span(t, s, m);
        v = cct_model_predict_within(m, &span, n);
    }
    if (isfinite(v) && v > 0)
        return v;
    if (rule) {
        cct_diff_config rc = config_of(rule);
        if (config_equal(&rc, c) && isfinite(rule->predicted_us) && rule->predicted_us > 0 &&
            band_number_covers(rule, n))
            return rule->predicted_us;
    }
    return NAN;
}

/* A rule's gain over NCCL's choice as a log interval, with its run's noise floor: [0, 0] for a
 * band left to NCCL; false when the rule carries no evidence. */
static bool evidence_of(const cct_rule *r, double *lo, double *hi, double *noise)
{
    if (cct_rule_is_nccl_choice(r)) {
        *lo = *hi = *noise = 0.0;
        return true;
    }
    if (r->no_baseline || !(r->gain > 0.0 && r->gain_lo > 0.0 && r->gain_hi >= r->gain_lo))
        return false;
    *lo = log(r->gain_lo);
    *hi = log(r->gain_hi);
    *noise = r->noise > 0.0 ? log1p(r->noise) : 0.0;
    return true;
}

/* Whether replacing rule a by rule b is within noise: both carry evidence, and neither
 * choice's interval of gain over NCCL lies above the other's by more than the larger noise
 * floor.  Sets *unknown when one of them has no evidence (then the change is significant). */
static bool classify(const cct_rule *a, const cct_rule *b, bool *unknown)
{
    double alo, ahi, an, blo, bhi, bn;
    *unknown = !evidence_of(a, &alo, &ahi, &an) || !evidence_of(b, &blo, &bhi, &bn);
    if (*unknown)
        return false;
    double floor = an > bn ? an : bn;
    return !(blo - ahi > floor || alo - bhi > floor);
}

/* Configuration c at exactly n bytes: a model within its span in either table (the new
 * first), else rule r's predicted_us when r chose c and was evaluated at n (or, hand-written,
 * does not say where: then for its whole band). */
static double exactly_at(const cct_table *ta, const cct_section *sa, const cct_table *tb,
                         const cct_section *sb, const cct_diff_config *c, const cct_rule *r,
                         uint64_t n)
{
    double v = predict(tb, sb, c, NULL, n);
    if (isnan(v))
        v = predict(ta, sa, c, NULL, n);
    cct_diff_config rc = config_of(r);
    if (isnan(v) && config_equal(&rc, c) && isfinite(r->predicted_us) && r->predicted_us > 0 &&
        (r->ref_bytes == n || (r->ref_bytes == 0 && n >= r->min_bytes && n < r->max_bytes)))
        v = r->predicted_us;
    return v;
}

/* A change being accumulated over consecutive ranges. */
typedef struct pending {
    bool open;
    bool unknown; /* some range has no believed prediction: the change gets none */
    cct_diff_change c;
    int sign; /* PREDICTED: +1 faster, -1 slower; ranges merge only with the same sign */
} pending;

static cct_status flush(cct_diff *d, pending *p)
{
    if (!p->open)
        return CCT_OK;
    p->open = false;
    if (p->unknown)
        p->c.speedup_lo = p->c.speedup_hi = NAN;
    return cct_diff_push(d, &p->c);
}

static void widen(cct_diff_change *c, double speedup)
{
    if (isnan(speedup))
        return;
    c->speedup_lo = isnan(c->speedup_lo) ? speedup : fmin(c->speedup_lo, speedup);
    c->speedup_hi = isnan(c->speedup_hi) ? speedup : fmax(c->speedup_hi, speedup);
}

/* The two sections being compared, with their tables. */
typedef struct pair {
    const cct_table *ta, *tb;
    const cct_section *sa, *sb;
    double threshold;
    cct_diff_change key; /* the section's key, copied into every change */
} pair;

/* When no table's models back both choices at the range's middle: both at the new band's
 * ref_bytes, else at the old band's, when inside the range (a band's predicted_us holds
 * only there).  Hand-written
 * bands that do not say where hold for their whole band. */
static void at_a_ref(const pair *x, const cct_rule *ra, const cct_rule *rb, uint64_t lo,
                     uint64_t hi, const cct_diff_config *from, const cct_diff_config *to,
                     double *t_old, double *t_new)
{
    const cct_rule *refs[2] = {rb, ra};
    for (int i = 0; i < 2; i++) {
        uint64_t n = refs[i]->ref_bytes ? refs[i]->ref_bytes : refs[i]->min_bytes;
        if ((refs[i]->ref_bytes == 0 && ra->ref_bytes != rb->ref_bytes) || n < lo || n >= hi)
            continue; /* one hand-written side, or a size outside this range */
        *t_old = exactly_at(x->ta, x->sa, x->tb, x->sb, from, ra, n);
        *t_new = exactly_at(x->ta, x->sa, x->tb, x->sb, to, rb, n);
        if (isfinite(*t_old) && isfinite(*t_new))
            return;
    }
    *t_old = *t_new = NAN;
}

/* One range [lo, hi) on which each table has one rule: extend the pending change, or flush
 * it and start another, or just flush when nothing worth a line changed here. */
static cct_status range(cct_diff *d, pending *p, const pair *x, const cct_rule *ra,
                        const cct_rule *rb, uint64_t lo, uint64_t hi)
{
    const cct_table *ta = x->ta, *tb = x->tb;
    const cct_section *sa = x->sa, *sb = x->sb;
    cct_diff_config from = config_of(ra), to = config_of(rb);
    uint64_t n = mid_bytes(lo, hi);
    cct_diff_kind kind;
    double speedup;
    int sign = 0;
    if (!config_equal(&from, &to)) {
        kind = from.algo != to.algo || from.proto != to.proto ? CCT_DIFF_CHOICE : CCT_DIFF_TUNING;
        /* like with like: both at the same size -- the range's middle, else a band's
         * ref_bytes inside the range -- never a number taken at another size */
        double t_old = exactly_at(ta, sa, tb, sb, &from, ra, n);
        double t_new = exactly_at(ta, sa, tb, sb, &to, rb, n);
        if (!isfinite(t_old) || !isfinite(t_new))
            at_a_ref(x, ra, rb, lo, hi, &from, &to, &t_old, &t_new);
        speedup = t_old / t_new - 1.0;
    } else if (from.nccl || to.nccl) {
        /* NCCL runs its default here on at least one side (the plugin does the same thing on
         * both): the forced twin's model says nothing about what runs */
        return flush(d, p);
    } else {
        double t_old = predict(ta, sa, &from, ra, n), t_new = predict(tb, sb, &to, rb, n);
        if (!(fabs(t_new - t_old) > x->threshold * t_old)) /* also false for NAN */
            return flush(d, p);
        kind = CCT_DIFF_PREDICTED;
        speedup = t_old / t_new - 1.0;
        sign = speedup > 0 ? 1 : -1;
    }
    if (!isfinite(speedup))
        speedup = NAN;
    bool unknown = false;
    bool within = kind != CCT_DIFF_PREDICTED && classify(ra, rb, &unknown);
    if (p->open && p->c.kind == kind && p->sign == sign && p->c.within_noise == within &&
        p->c.no_evidence == unknown && config_equal(&p->c.from, &from) &&
        config_equal(&p->c.to, &to) && p->c.from.nccl == from.nccl && p->c.to.nccl == to.nccl &&
        p->c.max_bytes == lo) {
        p->c.max_bytes = hi;
        p->unknown |= isnan(speedup);
        widen(&p->c, speedup);
        return CCT_OK;
    }
    cct_status st = flush(d, p);
    p->open = true;
    p->unknown = isnan(speedup);
    p->sign = sign;
    p->c = x->key;
    p->c.kind = kind;
    p->c.level = kind == CCT_DIFF_PREDICTED ? CCT_DIFF_NOTE : CCT_DIFF_DECISION;
    p->c.min_bytes = lo;
    p->c.max_bytes = hi;
    p->c.from = from;
    p->c.to = to;
    p->c.within_noise = within;
    p->c.no_evidence = unknown;
    widen(&p->c, speedup);
    return st;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static cct_status bands(cct_diff *d, const pair *x)
{
    const cct_section *sa = x->sa, *sb = x->sb;
    size_t n = sa->n_rules + sb->n_rules, k = 0;
    uint64_t *cuts = malloc((n ? n : 1) * sizeof *cuts);
    if (!cuts)
        return CCT_ENOMEM;
    for (size_t i = 0; i < sa->n_rules; i++)
        cuts[k++] = sa->rules[i].min_bytes;
    for (size_t i = 0; i < sb->n_rules; i++)
        cuts[k++] = sb->rules[i].min_bytes;
    qsort(cuts, k, sizeof *cuts, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || cuts[i] != cuts[u - 1])
            cuts[u++] = cuts[i];
    pending p = {.open = false};
    cct_status st = CCT_OK;
    for (size_t i = 0; st == CCT_OK && i < u; i++) {
        uint64_t lo = cuts[i], hi = i + 1 < u ? cuts[i + 1] : CCT_BYTES_INF;
        const cct_rule *ra = cct_section_lookup(sa, lo), *rb = cct_section_lookup(sb, lo);
        if (!ra || !rb) /* a section without rules: the loader refuses it */
            continue;
        st = range(d, &p, x, ra, rb, lo, hi);
    }
    if (st == CCT_OK)
        st = flush(d, &p);
    free(cuts);
    return st;
}

static bool num_equal(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static bool model_same_key(const cct_model *a, const cct_model *b)
{
    return a->algo == b->algo && a->proto == b->proto && a->channels == b->channels &&
           a->buffsize == b->buffsize && a->ll_buffsize == b->ll_buffsize &&
           a->ll128_buffsize == b->ll128_buffsize;
}

static bool model_equal(const cct_model *a, const cct_model *b)
{
    if (a->kind != b->kind || a->n_points != b->n_points || a->poor_fit != b->poor_fit ||
        a->break_bytes != b->break_bytes || a->n_segments != b->n_segments ||
        !num_equal(a->alpha_us, b->alpha_us) || !num_equal(a->alpha_ci, b->alpha_ci) ||
        !num_equal(a->beta_gbps, b->beta_gbps) || !num_equal(a->beta_ci, b->beta_ci) ||
        !num_equal(a->alpha2_us, b->alpha2_us) || !num_equal(a->beta2_gbps, b->beta2_gbps) ||
        !num_equal(a->r2, b->r2))
        return false;
    for (int i = 0; i < a->n_segments && i < CCT_MODEL_MAX_SEGMENTS; i++) {
        const cct_model_segment *x = &a->segments[i], *y = &b->segments[i];
        if (x->from_bytes != y->from_bytes || !num_equal(x->alpha_us, y->alpha_us) ||
            !num_equal(x->alpha_ci, y->alpha_ci) || !num_equal(x->beta_gbps, y->beta_gbps) ||
            !num_equal(x->beta_ci, y->beta_ci))
            return false;
    }
    return true;
}

static const cct_model *find_model(const cct_section *s, const cct_model *key)
{
    for (size_t i = 0; i < s->n_models; i++)
        if (model_same_key(&s->models[i], key))
            return &s->models[i];
    return NULL;
}

/* Alignment entries as sets: the same (proto, offset) keys with the same penalties. */
static bool alignment_equal(const cct_section *a, const cct_section *b)
{
    if (a->n_penalties != b->n_penalties)
        return false;
    for (size_t i = 0; i < a->n_penalties; i++) {
        const cct_align_penalty *x = &a->penalties[i];
        bool found = false;
        for (size_t j = 0; j < b->n_penalties && !found; j++) {
            const cct_align_penalty *y = &b->penalties[j];
            found =
                x->proto == y->proto && x->offset == y->offset && num_equal(x->penalty, y->penalty);
        }
        if (!found)
            return false;
    }
    return true;
}

static cct_status models(cct_diff *d, const cct_diff_change *key, const cct_section *sa,
                         const cct_section *sb)
{
    cct_diff_change c = *key;
    c.kind = CCT_DIFF_MODELS;
    c.level = CCT_DIFF_RECORD;
    for (size_t i = 0; i < sa->n_models; i++) {
        const cct_model *other = find_model(sb, &sa->models[i]);
        if (!other)
            c.models_removed++;
        else if (!model_equal(&sa->models[i], other))
            c.models_changed++;
    }
    for (size_t i = 0; i < sb->n_models; i++)
        c.models_added += find_model(sa, &sb->models[i]) == NULL;
    c.alignment_changed = !alignment_equal(sa, sb);
    if (!c.models_removed && !c.models_changed && !c.models_added && !c.alignment_changed)
        return CCT_OK;
    return cct_diff_push(d, &c);
}

cct_status cct_diff_section_pair(cct_diff *diff, const cct_table *old_t, const cct_section *old_s,
                                 const cct_table *new_t, const cct_section *new_s, double threshold)
{
    pair x = {old_t, new_t,     old_s,
              new_s, threshold, cct_diff_change_blank(CCT_DIFF_CHOICE, CCT_DIFF_DECISION)};
    x.key.coll = old_s->coll;
    x.key.ranks = old_s->ranks;
    x.key.nodes = old_s->nodes;
    x.key.pipe_ops = old_s->pipe_ops;
    x.key.reg_buff = old_s->reg_buff;
    cct_status st = bands(diff, &x);
    if (st == CCT_OK)
        st = models(diff, &x.key, old_s, new_s);
    return st;
}
