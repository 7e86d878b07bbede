/*
 * cct_rule_model.c - the model behind a rule (see cct_rule_model.h).
 *
 * Sections hold a handful of models, so a linear scan is the whole algorithm.  The exact
 * buffer match is tried first: when a table recommends NCCL_BUFFSIZE=1M, the rule's time is
 * what its configuration measured with 1M buffers, not with NCCL's default ones.
 */
#include "cct_rule_model.h"

#include <math.h>
#include <string.h>

#include "cct_model.h"

static uint64_t env_bytes(const cct_table *t, const char *key)
{
    for (size_t i = 0; i < t->n_env; i++) {
        if (strcmp(t->env[i].key, key) != 0)
            continue;
        const char *v = t->env[i].value;
        uint64_t n = 0;
        if (!v || !*v)
            return 0;
        for (; *v; v++) {
            if (*v < '0' || *v > '9' || n > (UINT64_MAX - 9) / 10)
                return 0;
            n = n * 10 + (uint64_t)(*v - '0');
        }
        return n;
    }
    return 0;
}

cct_table_buffers cct_table_buffers_of(const cct_table *table)
{
    cct_table_buffers b = {0, 0, 0};
    if (table) {
        b.buffsize = env_bytes(table, "NCCL_BUFFSIZE");
        b.ll_buffsize = env_bytes(table, "NCCL_LL_BUFFSIZE");
        b.ll128_buffsize = env_bytes(table, "NCCL_LL128_BUFFSIZE");
    }
    return b;
}

const cct_model *cct_section_find_model(const cct_section *section, int algo, int proto,
                                        int channels, const cct_table_buffers *buffers)
{
    for (size_t i = 0; i < section->n_models; i++) {
        const cct_model *m = &section->models[i];
        if (m->algo == algo && m->proto == proto && m->channels == channels &&
            m->buffsize == buffers->buffsize && m->ll_buffsize == buffers->ll_buffsize &&
            m->ll128_buffsize == buffers->ll128_buffsize)
            return m;
    }
    return NULL;
}

const cct_model *cct_rule_model(const cct_table *table, const cct_section *section,
                                const cct_rule *rule)
{
    cct_table_buffers b = cct_table_buffers_of(table);
    const cct_model *m =
        cct_section_find_model(section, rule->algo, rule->proto, rule->channels, &b);
    if (m)
        return m;
    for (size_t i = 0; i < section->n_models; i++) {
        m = &section->models[i];
        if (m->algo == rule->algo && m->proto == rule->proto && m->channels == rule->channels)
            return m;
    }
    return NULL;
}

bool cct_rule_is_nccl_choice(const cct_rule *rule)
{
    return rule->channels == 0 && rule->chunk_bytes == 0 && rule->margin_default == 0.0;
}

void cct_span_add(cct_size_span *span, uint64_t lo, uint64_t hi)
{
    if (!span->known) {
        span->known = true;
        span->lo = lo;
        span->hi = hi;
        return;
    }
    span->lo = lo < span->lo ? lo : span->lo;
    span->hi = hi > span->hi ? hi : span->hi;
}

bool cct_span_covers(const cct_size_span *span, uint64_t bytes)
{
    if (!span->known)
        return false;
    double n = (double)bytes;
    if (n * CCT_MODEL_SPAN_MARGIN < (double)span->lo)
        return false;
    return span->hi == CCT_BYTES_INF || n <= (double)span->hi * CCT_MODEL_SPAN_MARGIN;
}

cct_size_span cct_model_table_span(const cct_table *table, const cct_section *section,
                                   const cct_model *model)
{
    cct_size_span span = {false, 0, 0};
    int lines =
        model->n_segments < CCT_MODEL_MAX_SEGMENTS ? model->n_segments : CCT_MODEL_MAX_SEGMENTS;
    for (int k = 1; k < lines; k++) /* each start lies between two measured sizes */
        cct_span_add(&span, model->segments[k].from_bytes, model->segments[k].from_bytes);
    if (lines == 0 && model->kind == CCT_MODEL_SEGMENTED)
        cct_span_add(&span, model->break_bytes, model->break_bytes);
    for (size_t i = 0; i < section->n_rules; i++) {
        const cct_rule *r = &section->rules[i];
        if (cct_rule_is_nccl_choice(r) || cct_rule_model(table, section, r) != model)
            continue;
        cct_span_add(&span, r->min_bytes,
                     r->max_bytes == CCT_BYTES_INF ? CCT_BYTES_INF : r->max_bytes - 1);
    }
    return span;
}

double cct_model_predict_within(const cct_model *model, const cct_size_span *span, uint64_t bytes)
{
    return cct_span_covers(span, bytes) ? cct_model_predict(model, bytes) : NAN;
}
