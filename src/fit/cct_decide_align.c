/*
 * cct_decide_align.c - what a misaligned buffer costs each protocol, from the points: the
 * last step of the prepare stage (cct_decide_prepare.c).
 *
 * The tuner API cannot see buffer addresses, so alignment is a characterisation recorded in
 * the table, not a key of the rules.  For every usable forced configuration measured both
 * aligned and at an offset, at the same size, the ratio misaligned / aligned time is one
 * sample; a protocol's penalty at an offset is the median of its samples minus one (the
 * median, because single sizes can be noisy by 10-20 %; all buffer settings pooled, since
 * this is a property of the protocol's data path).  With worst_case_align, each
 * configuration is ranked at its protocol's worst measured offset: its times are scaled by
 * 1 + the largest penalty (never below 1: a misalignment that happened to be faster does
 * not make aligned calls faster).  Protocols never measured misaligned keep factor 1.
 */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"

typedef struct ratio {
    int proto;
    unsigned offset;
    double r;
} ratio;

static int cmp_ratio(const void *pa, const void *pb)
{
    const ratio *a = pa, *b = pb;
    if (a->proto != b->proto)
        return a->proto < b->proto ? -1 : 1;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    return (a->r > b->r) - (a->r < b->r);
}

/* Mean median of c's OK points at (offset, bytes); NAN when none. */
static double mean_at(const cct_dconf *c, unsigned offset, uint64_t bytes)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < c->n_all; i++) {
        const cct_point *p = c->all[i];
        if (p->status == CCT_POINT_OK && p->cfg.align == offset && p->bytes == bytes) {
            sum += p->stats.median_us;
            k++;
        }
    }
    return k ? sum / (double)k : NAN;
}

cct_status cct_dsec_penalties(cct_dsec *sec, const cct_decide_options *opt, cct_error *err)
{
    ratio *r = malloc(sizeof *r * (sec->n ? sec->n : 1));
    if (!r)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t nr = 0;
    for (size_t i = 0; i < sec->n_conf; i++) {
        const cct_dconf *c = &sec->conf[i];
        if (c->excluded || c->baseline || c->n == 0 || c->cfg.chunk != 0)
            continue;
        for (size_t q = 0; q < c->n_all; q++) {
            const cct_point *p = c->all[q];
            if (p->status != CCT_POINT_OK || p->cfg.align == 0)
                continue;
            /* one sample per (offset, size): skip repeats of the same pair */
            if (q > 0 && c->all[q - 1]->status == CCT_POINT_OK &&
                c->all[q - 1]->cfg.align == p->cfg.align && c->all[q - 1]->bytes == p->bytes)
                continue;
            double aligned = mean_at(c, 0, p->bytes);
            if (isnan(aligned))
                continue;
            r[nr++] =
                (ratio){c->cfg.proto, p->cfg.align, mean_at(c, p->cfg.align, p->bytes) / aligned};
        }
    }
    qsort(r, nr, sizeof *r, cmp_ratio);
    double *v = malloc(sizeof(double) * (nr ? nr : 1));
    sec->pen = malloc(sizeof *sec->pen * (nr ? nr : 1));
    if (!v || !sec->pen) {
        free(v);
        free(r);
        free(sec->pen);
        sec->pen = NULL;
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        while (j < nr && r[j].proto == r[i].proto && r[j].offset == r[i].offset) {
            v[j - i] = r[j].r;
            j++;
        }
        /* already sorted by value within the group */
        double med = gsl_stats_median_from_sorted_data(v, 1, j - i);
        sec->pen[sec->n_pen++] = (cct_align_penalty){r[i].proto, r[i].offset, med - 1.0};
        i = j;
    }
    free(v);
    free(r);
    if (opt->worst_case_align) {
        for (size_t i = 0; i < sec->n_conf; i++) {
            cct_dconf *c = &sec->conf[i];
            double worst = 0.0;
            if (!c->baseline && cct_dsec_worst_penalty(sec, c->cfg.proto, &worst))
                c->factor = 1.0 + worst;
        }
    }
    return CCT_OK;
}
