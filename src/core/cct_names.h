/*
 * cct_names.h - the vocabulary of ccltune: collectives, algorithms, protocols, and byte
 * sizes, with their spellings in tables, on the command line and in NCCL.
 *
 * The numeric values are NCCL's own: cct_coll matches ncclFunc_t for the five
 * collectives (unchanged from NCCL 2.19 to 2.30), cct_algo and cct_proto are the row and
 * column indices of the tuner cost table (NCCL_ALGO_* / NCCL_PROTO_*).  Keeping them
 * equal means no translation on the plugin's hot path.
 */
#ifndef CCT_NAMES_H
#define CCT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_parse.h" /* cct_parse_bytes, for the readers of sizes */

typedef enum cct_coll {
    CCT_COLL_BROADCAST = 0,
    CCT_COLL_REDUCE = 1,
    CCT_COLL_ALLGATHER = 2,
    CCT_COLL_REDUCESCATTER = 3,
    CCT_COLL_ALLREDUCE = 4,
    CCT_NUM_COLLS = 5
} cct_coll;

typedef enum cct_algo {
    CCT_ALGO_TREE = 0,
    CCT_ALGO_RING = 1,
    CCT_ALGO_COLLNET_DIRECT = 2,
    CCT_ALGO_COLLNET_CHAIN = 3,
    CCT_ALGO_NVLS = 4,
    CCT_ALGO_NVLS_TREE = 5,
    CCT_ALGO_PAT = 6,
    CCT_NUM_ALGOS = 7
} cct_algo;

typedef enum cct_proto {
    CCT_PROTO_LL = 0,
    CCT_PROTO_LL128 = 1,
    CCT_PROTO_SIMPLE = 2,
    CCT_NUM_PROTOS = 3
} cct_proto;

/* "no limit" for a band's upper bound; written as `inf` in tables */
#define CCT_BYTES_INF UINT64_MAX

/* Table/CLI spellings, lower case: "allreduce", "ring", "ll128", "collnet_direct". */
const char *cct_coll_name(int coll);   /* "?" when out of range */
const char *cct_algo_name(int algo);   /* "?" when out of range */
const char *cct_proto_name(int proto); /* "?" when out of range */

/* Reverse lookups, case-insensitive; accept the table spelling and NCCL's spelling
 * ("Ring", "CollnetDirect", "NVLSTree", "Simple", "AllReduce").  -1 when unknown. */
int cct_coll_from_name(const char *name);
int cct_algo_from_name(const char *name);
int cct_proto_from_name(const char *name);

/* NCCL's spellings for NCCL_ALGO / NCCL_PROTO ("Ring", "LL128", ...). */
const char *cct_algo_nccl_name(int algo);
const char *cct_proto_nccl_name(int proto);

/* Human form for messages and `explain`: "0 B", "4 KiB", "1.5 MiB", "inf". Returns buf. */
const char *cct_format_bytes(uint64_t bytes, char *buf, size_t len);
/* cct_format_bytes where that is exact, else plain bytes: "64 KiB", but "65537 B" (the human
 * form would round away the 1).  For band edges and chunk sizes set by hand. */
const char *cct_format_bytes_exact(uint64_t bytes, char *buf, size_t len);

#endif
