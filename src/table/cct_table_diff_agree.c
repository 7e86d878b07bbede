/*
 * cct_table_diff_agree.c - how often two tables decide the same (cct_table_agreement in
 * cct_table_diff.h): the measure of a re-tune's stability.
 *
 * Two tunes of the same box with the same flags should decide the same (algorithm,
 * protocol, channels) almost everywhere; this counts it at a fixed grid of sizes (four per
 * octave by default), the grid a user would sample `ccltune export` at, so that the count
 * does not depend on where either table put its band edges.
 */
#include <math.h>
#include <string.h>

#include "cct_table_diff.h"

static bool same_key(const cct_section *a, const cct_section *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->nodes == b->nodes &&
           a->pipe_ops == b->pipe_ops && a->reg_buff == b->reg_buff;
}

static const cct_section *find(const cct_table *t, const cct_section *key)
{
    for (size_t i = 0; i < t->n_sections; i++)
        if (same_key(&t->sections[i], key))
            return &t->sections[i];
    return NULL;
}

static bool plain(const cct_section *s)
{
    return s->pipe_ops == CCT_ANY && s->reg_buff == CCT_ANY;
}

static void count_section(const cct_section *sa, const cct_section *sb, uint64_t lo, uint64_t hi,
                          int per_octave, cct_agreement *out)
{
    int coll = (sa ? sa : sb)->coll;
    for (int k = 0;; k++) {
        double v = round((double)lo * exp2((double)k / per_octave));
        if (v > (double)hi)
            break;
        uint64_t bytes = (uint64_t)v;
        const cct_rule *ra = sa ? cct_section_lookup(sa, bytes) : NULL;
        const cct_rule *rb = sb ? cct_section_lookup(sb, bytes) : NULL;
        bool same = ra && rb && ra->algo == rb->algo && ra->proto == rb->proto &&
                    ra->channels == rb->channels;
        out->sizes++;
        out->agree += same;
        if (coll >= 0 && coll < CCT_NUM_COLLS) {
            out->coll_sizes[coll]++;
            out->coll_agree[coll] += same;
        }
    }
}

cct_status cct_table_agreement(const cct_table *a, const cct_table *b, uint64_t min_bytes,
                               uint64_t max_bytes, int per_octave, cct_agreement *out,
                               cct_error *err)
{
    memset(out, 0, sizeof *out);
    if (min_bytes < 1 || max_bytes < min_bytes || per_octave < 1 || per_octave > 64)
        return cct_error_set(
            err, CCT_EINVAL, "agreement: sizes %llu..%llu at %d per octave are not a range",
            (unsigned long long)min_bytes, (unsigned long long)max_bytes, per_octave);
    for (size_t i = 0; i < a->n_sections; i++)
        if (plain(&a->sections[i]))
            count_section(&a->sections[i], find(b, &a->sections[i]), min_bytes, max_bytes,
                          per_octave, out);
    for (size_t i = 0; i < b->n_sections; i++)
        if (plain(&b->sections[i]) && !find(a, &b->sections[i]))
            count_section(NULL, &b->sections[i], min_bytes, max_bytes, per_octave, out);
    return CCT_OK;
}
