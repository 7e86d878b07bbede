/*
 * cct_constants.c - slots, spellings and checks of a table's NCCL model constants
 * (see cct_constants.h).
 *
 * The seven arrays of cct_constants are numbered as one list of slots: the family's first
 * slot plus the row-major index inside it.  Names are built from the shared algorithm and
 * protocol spellings (cct_names.h) and the link, generation and scale words below, which
 * follow NCCL's own indices (tuning.cc: NCCL_HW_NVLINK/PCI/NET, the compCapIndex of
 * Volta/Ampere/Hopper/Blackwell, and index2 = nNodes 1, 2, more).
 */
#include "cct_constants.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const family_keys[CCT_CONST_NUM_FAMILIES] = {
    "base_latency_us",
    "hw_latency_us",
    "ll_max_bw_gbps",
    "per_ch_max_ring_ll128_bw_gbps",
    "per_ch_max_tree_ll128_bw_gbps",
    "per_ch_max_tree_bw_gbps",
    "per_ch_max_nvls_tree_bw_gbps",
};
static const char *const link_words[CCT_CONST_HW_LINKS] = {"nvlink", "pcie", "net"};
static const char *const gen_words[CCT_CONST_COMPCAPS] = {"volta", "ampere", "hopper", "blackwell"};
static const char *const scale_words[CCT_CONST_SCALES] = {"1node", "2nodes", "3+nodes"};

size_t cct_const_family_size(cct_const_family f)
{
    switch (f) {
    case CCT_CONST_BASE_LATENCY:
        return CCT_NUM_ALGOS * CCT_NUM_PROTOS;
    case CCT_CONST_HW_LATENCY:
        return CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS;
    default:
        return (unsigned)f < CCT_CONST_NUM_FAMILIES ? CCT_CONST_BW_SLOTS : 0;
    }
}

size_t cct_const_family_first(cct_const_family f)
{
    size_t first = 0;
    for (int g = 0; g < (int)f && g < CCT_CONST_NUM_FAMILIES; g++)
        first += cct_const_family_size((cct_const_family)g);
    return first;
}

cct_const_slot cct_const_slot_at(size_t n)
{
    cct_const_slot s = {CCT_CONST_BASE_LATENCY, 0, 0, 0};
    int f = 0;
    while (f < CCT_CONST_NUM_FAMILIES - 1 && n >= cct_const_family_size((cct_const_family)f)) {
        n -= cct_const_family_size((cct_const_family)f);
        f++;
    }
    s.family = (cct_const_family)f;
    if (f == CCT_CONST_BASE_LATENCY) {
        s.i = (int)(n / CCT_NUM_PROTOS);
        s.j = (int)(n % CCT_NUM_PROTOS);
    } else if (f == CCT_CONST_HW_LATENCY) {
        s.i = (int)(n / (CCT_NUM_ALGOS * CCT_NUM_PROTOS));
        s.j = (int)(n / CCT_NUM_PROTOS % CCT_NUM_ALGOS);
        s.k = (int)(n % CCT_NUM_PROTOS);
    } else {
        s.i = (int)(n / CCT_CONST_SCALES);
        s.j = (int)(n % CCT_CONST_SCALES);
    }
    return s;
}

size_t cct_const_slot_index(cct_const_slot s)
{
    size_t first = cct_const_family_first(s.family);
    if (s.family == CCT_CONST_BASE_LATENCY)
        return first + (size_t)s.i * CCT_NUM_PROTOS + (size_t)s.j;
    if (s.family == CCT_CONST_HW_LATENCY)
        return first + ((size_t)s.i * CCT_NUM_ALGOS + (size_t)s.j) * CCT_NUM_PROTOS + (size_t)s.k;
    return first + (size_t)s.i * CCT_CONST_SCALES + (size_t)s.j;
}

double *cct_const_value(cct_constants *c, cct_const_slot s)
{
    switch (s.family) {
    case CCT_CONST_BASE_LATENCY:
        return &c->base_latency_us[s.i][s.j];
    case CCT_CONST_HW_LATENCY:
        return &c->hw_latency_us[s.i][s.j][s.k];
    case CCT_CONST_LL_MAX_BW:
        return &c->ll_max_bw[s.i][s.j];
    case CCT_CONST_RING_LL128_BW:
        return &c->per_ch_max_ring_ll128_bw[s.i][s.j];
    case CCT_CONST_TREE_LL128_BW:
        return &c->per_ch_max_tree_ll128_bw[s.i][s.j];
    case CCT_CONST_TREE_BW:
        return &c->per_ch_max_tree_bw[s.i][s.j];
    default:
        return &c->per_ch_max_nvls_tree_bw[s.i][s.j];
    }
}

double cct_const_get(const cct_constants *c, cct_const_slot s)
{
    return *cct_const_value((cct_constants *)c, s);
}

const char *cct_const_family_key(cct_const_family f)
{
    return (unsigned)f < CCT_CONST_NUM_FAMILIES ? family_keys[f] : "?";
}

int cct_const_family_from_key(const char *key)
{
    for (int f = 0; f < CCT_CONST_NUM_FAMILIES; f++)
        if (strcmp(key, family_keys[f]) == 0)
            return f;
    return -1;
}

bool cct_const_family_is_bandwidth(cct_const_family f)
{
    return f != CCT_CONST_BASE_LATENCY && f != CCT_CONST_HW_LATENCY;
}

const char *cct_const_slot_name(cct_const_slot s, char *buf, size_t len)
{
    if (s.family == CCT_CONST_BASE_LATENCY)
        snprintf(buf, len, "%s/%s", cct_algo_name(s.i), cct_proto_name(s.j));
    else if (s.family == CCT_CONST_HW_LATENCY)
        snprintf(buf, len, "%s/%s/%s", link_words[s.i], cct_algo_name(s.j), cct_proto_name(s.k));
    else
        snprintf(buf, len, "%s/%s", gen_words[s.i], scale_words[s.j]);
    return buf;
}

bool cct_const_slot_from_name(cct_const_family f, const char *name, cct_const_slot *out)
{
    if ((unsigned)f >= CCT_CONST_NUM_FAMILIES)
        return false;
    size_t first = cct_const_family_first(f), n = cct_const_family_size(f);
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        cct_const_slot s = cct_const_slot_at(first + i);
        if (strcmp(name, cct_const_slot_name(s, buf, sizeof buf)) == 0) {
            *out = s;
            return true;
        }
    }
    return false;
}

size_t cct_constants_count(const cct_constants *c)
{
    size_t n = 0;
    for (size_t i = 0; i < CCT_CONST_NUM_SLOTS; i++)
        n += !isnan(cct_const_get(c, cct_const_slot_at(i)));
    return n;
}

cct_status cct_constants_check(const cct_constants *c, cct_error *err)
{
    for (size_t i = 0; i < CCT_CONST_NUM_SLOTS; i++) {
        cct_const_slot s = cct_const_slot_at(i);
        double v = cct_const_get(c, s);
        if (isnan(v))
            continue;
        bool bw = cct_const_family_is_bandwidth(s.family);
        const char *why = !isfinite(v)       ? "is not finite"
                          : bw && !(v > 0.0) ? "must be > 0 (a bandwidth ceiling)"
                          : !bw && v < 0.0   ? "is negative (a latency)"
                                             : NULL;
        if (why) {
            char name[64];
            return cct_error_set(err, CCT_EINVAL, "nccl_constants %s %s: %g %s",
                                 family_keys[s.family], cct_const_slot_name(s, name, sizeof name),
                                 v, why);
        }
    }
    return CCT_OK;
}
