/*
 * cct_constants.h - the vocabulary of a table's NCCL model constants (cct_constants in
 * cct_table.h): every entry as a numbered slot, with the spelling the table uses for it.
 *
 * NCCL's tuner constants (tuner ABI v5/v6) are seven arrays: base latencies per
 * algorithm/protocol, hardware latencies per link kind/algorithm/protocol, and five
 * bandwidth ceilings per compute-capability generation and tuning scale.  The reader, the
 * writer, `explain`, `diff` and the plugin all walk them through this one list, so a new
 * entry or a spelling is defined once.  Spellings (docs/table-format.md):
 *   base_latency_us            "ring/ll"           [algo][proto]
 *   hw_latency_us              "nvlink/ring/ll"    [link][algo][proto]; links nvlink, pcie, net
 *   ll_max_bw_gbps, per_ch_max_*_bw_gbps
 *                              "hopper/1node"      [generation][scale]; generations volta,
 *                              ampere, hopper, blackwell; scales 1node, 2nodes, 3+nodes
 * Nothing here allocates.
 */
#ifndef CCT_CONSTANTS_H
#define CCT_CONSTANTS_H

#include <stdbool.h>
#include <stddef.h>

#include "cct_error.h"
#include "cct_table.h"

typedef enum cct_const_family {
    CCT_CONST_BASE_LATENCY = 0,  /* base_latency_us[algo][proto] */
    CCT_CONST_HW_LATENCY = 1,    /* hw_latency_us[link][algo][proto] */
    CCT_CONST_LL_MAX_BW = 2,     /* ll_max_bw[cc][scale] */
    CCT_CONST_RING_LL128_BW = 3, /* per_ch_max_ring_ll128_bw[cc][scale] */
    CCT_CONST_TREE_LL128_BW = 4, /* per_ch_max_tree_ll128_bw[cc][scale] */
    CCT_CONST_TREE_BW = 5,       /* per_ch_max_tree_bw[cc][scale] */
    CCT_CONST_NVLS_TREE_BW = 6,  /* per_ch_max_nvls_tree_bw[cc][scale] */
    CCT_CONST_NUM_FAMILIES = 7
} cct_const_family;

#define CCT_CONST_BW_SLOTS (CCT_CONST_COMPCAPS * CCT_CONST_SCALES)
#define CCT_CONST_NUM_SLOTS                                                                        \
    (CCT_NUM_ALGOS * CCT_NUM_PROTOS + CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS +        \
     5 * CCT_CONST_BW_SLOTS)

/* One entry: its family and indices (base: i algo, j proto; hw: i link, j algo, k proto;
 * bandwidths: i generation, j scale; unused indices 0). */
typedef struct cct_const_slot {
    cct_const_family family;
    int i, j, k;
} cct_const_slot;

/* Slot n of 0 .. CCT_CONST_NUM_SLOTS-1, families in enum order, indices row-major. */
cct_const_slot cct_const_slot_at(size_t n);
/* The inverse of cct_const_slot_at. */
size_t cct_const_slot_index(cct_const_slot s);
/* The entry a slot names in a constants struct. */
double *cct_const_value(cct_constants *c, cct_const_slot s);
double cct_const_get(const cct_constants *c, cct_const_slot s);

/* The table key of a family: "base_latency_us", "hw_latency_us", "ll_max_bw_gbps", ... */
const char *cct_const_family_key(cct_const_family f);
/* Family by its table key, -1 when unknown. */
int cct_const_family_from_key(const char *key);
/* Latencies (us, may be 0) or bandwidth ceilings (GB/s, must be > 0). */
bool cct_const_family_is_bandwidth(cct_const_family f);
/* First slot of a family and how many it has. */
size_t cct_const_family_first(cct_const_family f);
size_t cct_const_family_size(cct_const_family f);

/* "ring/ll", "nvlink/tree/simple", "hopper/1node"; returns buf. */
const char *cct_const_slot_name(cct_const_slot s, char *buf, size_t len);
/* The slot of family f spelt `name`; false when no entry of f is spelt so. */
bool cct_const_slot_from_name(cct_const_family f, const char *name, cct_const_slot *out);

/* Entries that are set (not NAN). */
size_t cct_constants_count(const cct_constants *c);
/* Every set entry finite, latencies >= 0, bandwidths > 0; err names the first bad entry
 * ("nccl_constants hw_latency_us nvlink/ring/ll: -1 is negative").  CCT_EINVAL. */
cct_status cct_constants_check(const cct_constants *c, cct_error *err);

#endif
