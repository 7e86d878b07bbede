/*
 * cct_decide_conf.c - what every stage of a decision reads of a prepared section: a
 * configuration's time at a size (measured, else its model inside its measured range),
 * its measured mean and standard error, whether it is a candidate and uses given buffers,
 * a protocol's worst alignment penalty; and the release of a section and of a section's
 * arrays.
 *
 * The lowest file of the decision pipeline (cct_decide_internal.h): it calls no stage.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"
#include "cct_fit_internal.h"

void cct_dsec_free(cct_dsec *sec)
{
    if (!sec)
        return;
    if (sec->conf && sec->n_conf) /* every configuration's pts lies in one block */
        free(sec->conf[0].pts);
    free(sec->conf);
    free(sec->pts);
    free(sec->pen);
    memset(sec, 0, sizeof *sec);
}

void cct_section_release(cct_section *s)
{
    free(s->rules);
    free(s->models);
    free(s->penalties);
    s->rules = NULL;
    s->models = NULL;
    s->penalties = NULL;
    s->n_rules = s->n_models = s->n_penalties = 0;
}

bool cct_dconf_uses(const cct_dconf *c, const cct_buffers *b)
{
    return c->cfg.buffsize == b->buffsize && c->cfg.ll_buffsize == b->ll_buffsize &&
           c->cfg.ll128_buffsize == b->ll128_buffsize;
}

/* Index of the first point with size >= bytes (c->n when none). */
static size_t first_at(const cct_dconf *c, uint64_t bytes)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->pts[mid]->bytes < bytes)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double cct_dconf_time(const cct_dconf *c, uint64_t bytes)
{
    if (c->n == 0 || bytes < c->lo || bytes > c->hi)
        return NAN;
    size_t lo = first_at(c, bytes);
    if (lo < c->n && c->pts[lo]->bytes == bytes) {
        double sum = 0;
        size_t k = 0;
        for (size_t i = lo; i < c->n && c->pts[i]->bytes == bytes; i++, k++)
            sum += c->pts[i]->stats.median_us;
        return sum / (double)k * c->factor;
    }
    if (!c->fitted)
        return NAN;
    return cct_model_predict(&c->model, bytes) * c->factor;
}

bool cct_dconf_measured(const cct_dconf *c, uint64_t bytes, double rel_floor, double *t,
                        double *rel_se)
{
    size_t lo = first_at(c, bytes);
    double sum = 0.0, var = 0.0;
    size_t k = 0;
    for (size_t i = lo; i < c->n && c->pts[i]->bytes == bytes; i++, k++) {
        const cct_point *p = c->pts[i];
        double u = cct_fit_sigma(p, rel_floor) / p->stats.median_us;
        sum += p->stats.median_us;
        var += u * u;
    }
    if (k == 0)
        return false;
    *t = sum / (double)k;
    *rel_se = sqrt(var) / (double)k;
    return true;
}

bool cct_dconf_candidate(const cct_dconf *c)
{
    return !c->excluded && !c->baseline && c->n > 0 && c->cfg.chunk == 0;
}

bool cct_dsec_has_candidates(const cct_dsec *sec)
{
    for (size_t i = 0; i < sec->n_conf; i++)
        if (cct_dconf_candidate(&sec->conf[i]))
            return true;
    return false;
}

bool cct_dsec_worst_penalty(const cct_dsec *sec, int proto, double *penalty)
{
    bool known = false;
    double worst = 0.0;
    for (size_t i = 0; i < sec->n_pen; i++) {
        if (sec->pen[i].proto != proto)
            continue;
        known = true;
        if (sec->pen[i].penalty > worst)
            worst = sec->pen[i].penalty;
    }
    *penalty = worst;
    return known;
}
