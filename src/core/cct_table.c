/*
 * cct_table.c - the in-memory table: construction, semantic checks and lookup.
 *
 * Rules inside a section are stored sorted by max_bytes, so finding the band for a message
 * size is a binary search over a contiguous array: O(log n), no allocation, safe from any
 * number of threads once the table is built.  The checks here are the single source of
 * truth for "a valid table": the YAML reader runs them (adding file positions), and the
 * fitter runs them before it writes anything.
 */
#include "cct_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cct_table_init(cct_table *table)
{
    memset(table, 0, sizeof *table);
    table->format = CCT_TABLE_FORMAT;
    cct_constants_clear(&table->constants);
    cct_link_summary_clear(&table->link_matrix);
}

void cct_link_summary_clear(cct_link_summary *s)
{
    memset(s, 0, sizeof *s);
    s->pair_gbps_min = s->pair_gbps_max = NAN;
    s->pair_latency_us_min = s->pair_latency_us_max = NAN;
    s->h2d_gbps = s->d2h_gbps = s->host_latency_us = NAN;
}

void cct_constants_clear(cct_constants *constants)
{
    double *all = (double *)&constants->base_latency_us;
    size_t n = (sizeof *constants - offsetof(cct_constants, base_latency_us)) / sizeof(double);
    for (size_t i = 0; i < n; i++)
        all[i] = NAN;
    constants->present = false;
}

static void provenance_free(cct_provenance *p)
{
    free(p->tool);
    free(p->created);
    free(p->nccl);
    free(p->source);
    free(p->runs);
    free(p->note);
    free(p->command);
}

static void fingerprint_free(cct_fingerprint *f)
{
    free(f->gpu);
    free(f->links);
    free(f->nccl);
    free(f->nccl_versions);
    free(f->cuda);
}

void cct_table_destroy(cct_table *table)
{
    if (!table)
        return;
    provenance_free(&table->provenance);
    fingerprint_free(&table->fingerprint);
    free(table->ll128_reason);
    free(table->link_matrix.socket);
    for (size_t i = 0; i < table->n_env; i++) {
        free(table->env[i].key);
        free(table->env[i].value);
    }
    free(table->env);
    for (size_t i = 0; i < table->n_sections; i++) {
        free(table->sections[i].rules);
        free(table->sections[i].models);
        free(table->sections[i].penalties);
    }
    free(table->sections);
    cct_table_init(table);
}

/* Make room for one more element.  Capacity is not stored: it is count rounded up to a
 * power of two, so reallocating exactly when count is 0 or a power of two keeps appends
 * amortised O(1), and a section of one rule holds one rule, not four (tables of hundreds of
 * thousands of small sections are loaded inside jobs). */
static void *grow_one(void *array, size_t count, size_t elem)
{
    bool power_of_two = count && (count & (count - 1)) == 0;
    if (count != 0 && !power_of_two)
        return array;
    size_t new_cap = count == 0 ? 1 : count * 2;
    return realloc(array, new_cap * elem);
}

cct_section *cct_table_add_section(cct_table *table, int coll, int ranks, int nodes)
{
    cct_section *s = grow_one(table->sections, table->n_sections, sizeof *s);
    if (!s)
        return NULL;
    table->sections = s;
    cct_section *sec = &table->sections[table->n_sections++];
    memset(sec, 0, sizeof *sec);
    sec->coll = coll;
    sec->ranks = ranks;
    sec->nodes = nodes;
    sec->pipe_ops = CCT_ANY;
    sec->reg_buff = CCT_ANY;
    return sec;
}

cct_status cct_section_add_rule(cct_section *section, const cct_rule *rule)
{
    cct_rule *r = grow_one(section->rules, section->n_rules, sizeof *r);
    if (!r)
        return CCT_ENOMEM;
    section->rules = r;
    section->rules[section->n_rules++] = *rule;
    return CCT_OK;
}

cct_status cct_section_add_model(cct_section *section, const cct_model *model)
{
    cct_model *m = grow_one(section->models, section->n_models, sizeof *m);
    if (!m)
        return CCT_ENOMEM;
    section->models = m;
    section->models[section->n_models++] = *model;
    return CCT_OK;
}

cct_status cct_section_add_penalty(cct_section *section, const cct_align_penalty *penalty)
{
    cct_align_penalty *p = grow_one(section->penalties, section->n_penalties, sizeof *p);
    if (!p)
        return CCT_ENOMEM;
    section->penalties = p;
    section->penalties[section->n_penalties++] = *penalty;
    return CCT_OK;
}

cct_status cct_table_set_env(cct_table *table, const char *key, const char *value)
{
    size_t pos = 0;
    while (pos < table->n_env && strcmp(table->env[pos].key, key) < 0)
        pos++;
    char *v = strdup(value);
    if (!v)
        return CCT_ENOMEM;
    if (pos < table->n_env && strcmp(table->env[pos].key, key) == 0) {
        free(table->env[pos].value);
        table->env[pos].value = v;
        return CCT_OK;
    }
    char *k = strdup(key);
    cct_kv *kv = k ? grow_one(table->env, table->n_env, sizeof *kv) : NULL;
    if (!kv) {
        free(k);
        free(v);
        return CCT_ENOMEM;
    }
    table->env = kv;
    memmove(&table->env[pos + 1], &table->env[pos], (table->n_env - pos) * sizeof *kv);
    table->env[pos].key = k;
    table->env[pos].value = v;
    table->n_env++;
    return CCT_OK;
}

cct_rule cct_rule_blank(void)
{
    cct_rule r;
    memset(&r, 0, sizeof r);
    r.algo = CCT_ALGO_RING;
    r.proto = CCT_PROTO_SIMPLE;
    r.predicted_us = NAN;
    r.margin = NAN;
    r.margin_default = NAN;
    return r;
}

const char *cct_section_describe(const cct_section *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s ranks=%d nodes=%d", cct_coll_name(s->coll), s->ranks, s->nodes);
    if (n > 0 && (size_t)n < len && s->pipe_ops != CCT_ANY)
        n += snprintf(buf + n, len - (size_t)n, " pipe_ops=%d", s->pipe_ops);
    if (n > 0 && (size_t)n < len && s->reg_buff != CCT_ANY)
        snprintf(buf + n, len - (size_t)n, " reg_buff=%d", s->reg_buff);
    return buf;
}

static bool same_key(const cct_section *a, const cct_section *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->nodes == b->nodes &&
           a->pipe_ops == b->pipe_ops && a->reg_buff == b->reg_buff;
}

/* Record where a check failed and pass the status through. */
static cct_status blame(cct_check_where *where, cct_check_item item, size_t index, cct_status st)
{
    if (where) {
        where->item = item;
        where->index = index;
    }
    return st;
}

cct_status cct_table_check_section(const cct_section *s, cct_error *err)
{
    return cct_table_check_section_at(s, err, NULL);
}

cct_status cct_table_check_section_at(const cct_section *s, cct_error *err, cct_check_where *where)
{
    char key[128];
    cct_section_describe(s, key, sizeof key);
    if (s->coll < 0 || s->coll >= CCT_NUM_COLLS)
        return blame(where, CCT_CHECK_SECTION, 0,
                     cct_error_set(err, CCT_EINVAL, "section has unknown collective %d", s->coll));
    if (s->ranks < 1 || s->ranks > CCT_TABLE_MAX_RANKS)
        return blame(
            where, CCT_CHECK_SECTION, 0,
            cct_error_set(err, CCT_EINVAL, "%s: ranks must be 1..%d", key, CCT_TABLE_MAX_RANKS));
    if (s->nodes < 1 || s->nodes > s->ranks)
        return blame(where, CCT_CHECK_SECTION, 0,
                     cct_error_set(err, CCT_EINVAL, "%s: nodes must be 1..ranks", key));
    if (s->pipe_ops != CCT_ANY && s->pipe_ops < 1)
        return blame(where, CCT_CHECK_SECTION, 0,
                     cct_error_set(err, CCT_EINVAL, "%s: pipe_ops must be >= 1", key));
    if (s->reg_buff != CCT_ANY && s->reg_buff != 0 && s->reg_buff != 1)
        return blame(where, CCT_CHECK_SECTION, 0,
                     cct_error_set(err, CCT_EINVAL, "%s: reg_buff must be true or false", key));
    if (s->n_rules == 0)
        return blame(where, CCT_CHECK_SECTION, 0,
                     cct_error_set(err, CCT_EINVAL, "%s: no rules", key));
    for (size_t i = 0; i < s->n_rules; i++) {
        const cct_rule *r = &s->rules[i];
        size_t no = i + 1;
        if (r->algo < 0 || r->algo >= CCT_NUM_ALGOS)
            return blame(where, CCT_CHECK_RULE, i,
                         cct_error_set(err, CCT_EINVAL, "%s rule %zu: unknown algorithm", key, no));
        if (r->proto < 0 || r->proto >= CCT_NUM_PROTOS)
            return blame(where, CCT_CHECK_RULE, i,
                         cct_error_set(err, CCT_EINVAL, "%s rule %zu: unknown protocol", key, no));
        if (r->channels < 0 || r->channels > CCT_TABLE_MAX_CHANNELS)
            return blame(where, CCT_CHECK_RULE, i,
                         cct_error_set(err, CCT_EINVAL, "%s rule %zu: channels must be 0..%d", key,
                                       no, CCT_TABLE_MAX_CHANNELS));
        if (r->max_bytes <= r->min_bytes)
            return blame(where, CCT_CHECK_RULE, i,
                         cct_error_set(err, CCT_EINVAL,
                                       "%s rule %zu: empty band (max_bytes <= min_bytes)", key,
                                       no));
        if (i == 0 && r->min_bytes != 0)
            return blame(where, CCT_CHECK_RULE, i,
                         cct_error_set(err, CCT_EINVAL,
                                       "%s rule 1: the first band must start at min_bytes 0", key));
        if (i > 0) {
            uint64_t prev = s->rules[i - 1].max_bytes;
            if (r->min_bytes > prev)
                return blame(where, CCT_CHECK_RULE, i,
                             cct_error_set(err, CCT_EINVAL,
                                           "%s rule %zu: gap: sizes %llu..%llu are not covered",
                                           key, no, (unsigned long long)prev,
                                           (unsigned long long)(r->min_bytes - 1)));
            if (r->min_bytes < prev)
                return blame(where, CCT_CHECK_RULE, i,
                             cct_error_set(err, CCT_EINVAL,
                                           "%s rule %zu: overlaps or is out of order with rule %zu",
                                           key, no, no - 1));
        }
        if (!(isnan(r->predicted_us) || r->predicted_us >= 0.0))
            return blame(
                where, CCT_CHECK_RULE, i,
                cct_error_set(err, CCT_EINVAL, "%s rule %zu: predicted_us must be >= 0", key, no));
    }
    if (s->rules[s->n_rules - 1].max_bytes != CCT_BYTES_INF)
        return blame(
            where, CCT_CHECK_RULE, s->n_rules - 1,
            cct_error_set(err, CCT_EINVAL, "%s: the last band must end at max_bytes inf", key));
    for (size_t i = 0; i < s->n_models; i++) {
        const cct_model *m = &s->models[i];
        if (m->algo < 0 || m->algo >= CCT_NUM_ALGOS || m->proto < 0 || m->proto >= CCT_NUM_PROTOS)
            return blame(where, CCT_CHECK_MODEL, i,
                         cct_error_set(err, CCT_EINVAL,
                                       "%s model %zu: unknown algorithm or protocol", key, i + 1));
        if (m->channels < 0 || m->channels > CCT_TABLE_MAX_CHANNELS)
            return blame(where, CCT_CHECK_MODEL, i,
                         cct_error_set(err, CCT_EINVAL, "%s model %zu: channels must be 0..%d", key,
                                       i + 1, CCT_TABLE_MAX_CHANNELS));
        if (m->kind != CCT_MODEL_LINEAR && m->kind != CCT_MODEL_SEGMENTED &&
            m->kind != CCT_MODEL_PIECEWISE)
            return blame(where, CCT_CHECK_MODEL, i,
                         cct_error_set(err, CCT_EINVAL, "%s model %zu: unknown kind %d", key, i + 1,
                                       (int)m->kind));
        if (m->n_segments < 0 || m->n_segments > CCT_MODEL_MAX_SEGMENTS ||
            (m->kind == CCT_MODEL_PIECEWISE && m->n_segments < 3))
            return blame(where, CCT_CHECK_MODEL, i,
                         cct_error_set(err, CCT_EINVAL,
                                       "%s model %zu: %d segments (piecewise needs 3..%d)", key,
                                       i + 1, m->n_segments, CCT_MODEL_MAX_SEGMENTS));
        for (int k = 0; k < m->n_segments; k++) {
            uint64_t from = m->segments[k].from_bytes;
            if ((k == 0 && from != 0) || (k > 0 && from <= m->segments[k - 1].from_bytes))
                return blame(where, CCT_CHECK_MODEL, i,
                             cct_error_set(err, CCT_EINVAL,
                                           "%s model %zu: segments must start at 0 and at "
                                           "increasing from_bytes",
                                           key, i + 1));
        }
    }
    for (size_t i = 0; i < s->n_penalties; i++) {
        const cct_align_penalty *p = &s->penalties[i];
        if (p->proto < 0 || p->proto >= CCT_NUM_PROTOS)
            return blame(
                where, CCT_CHECK_PENALTY, i,
                cct_error_set(err, CCT_EINVAL, "%s alignment %zu: unknown protocol", key, i + 1));
    }
    return CCT_OK;
}

cct_status cct_table_check(const cct_table *table, cct_error *err)
{
    if (table->format != CCT_TABLE_FORMAT)
        return cct_error_set(err, CCT_EUNSUPPORTED,
                             "table format %d is not supported (this build reads format %d)",
                             table->format, CCT_TABLE_FORMAT);
    for (size_t i = 0; i < table->n_sections; i++) {
        cct_status st = cct_table_check_section(&table->sections[i], err);
        if (st != CCT_OK)
            return st;
        for (size_t j = 0; j < i; j++) {
            if (same_key(&table->sections[i], &table->sections[j])) {
                char key[128];
                return cct_error_set(err, CCT_EINVAL, "%s appears twice",
                                     cct_section_describe(&table->sections[i], key, sizeof key));
            }
        }
    }
    return CCT_OK;
}

/* A section matches a call when every key it specifies is equal; more specific keys win. */
const cct_section *cct_table_find_section(const cct_table *table, int coll, int ranks, int nodes,
                                          int pipe_ops, int reg_buff)
{
    const cct_section *best = NULL;
    int best_score = -1;
    for (size_t i = 0; i < table->n_sections; i++) {
        const cct_section *s = &table->sections[i];
        if (s->coll != coll || s->ranks != ranks || s->nodes != nodes)
            continue;
        if (s->pipe_ops != CCT_ANY && s->pipe_ops != pipe_ops)
            continue;
        if (s->reg_buff != CCT_ANY && s->reg_buff != reg_buff)
            continue;
        int score = (s->pipe_ops != CCT_ANY) * 2 + (s->reg_buff != CCT_ANY);
        if (score > best_score) {
            best = s;
            best_score = score;
        }
    }
    return best;
}

const cct_rule *cct_section_lookup(const cct_section *section, uint64_t bytes)
{
    size_t lo = 0, hi = section->n_rules;
    if (hi == 0)
        return NULL;
    /* first rule with max_bytes > bytes; bands are contiguous so it contains bytes */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (section->rules[mid].max_bytes > bytes)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo == section->n_rules && section->rules[lo - 1].max_bytes == CCT_BYTES_INF)
        return &section->rules[lo - 1]; /* the last band is open-ended: it holds UINT64_MAX too */
    return lo < section->n_rules ? &section->rules[lo] : NULL;
}

int cct_cc_parse(const char *text)
{
    if (!text)
        return -1;
    char *end = NULL;
    long major = strtol(text, &end, 10);
    if (end == text || *end != '.' || major < 1 || major > 99)
        return -1;
    const char *minor_text = end + 1;
    long minor = strtol(minor_text, &end, 10);
    if (end == minor_text || *end != '\0' || minor < 0 || minor > 9)
        return -1;
    return (int)(major * 10 + minor);
}

const char *cct_cc_format(int cc, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", cc / 10, cc % 10);
    return buf;
}
