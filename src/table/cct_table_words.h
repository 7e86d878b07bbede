/*
 * cct_table_words.h - a table's content in words, for the comments the writer puts in the
 * file and for `ccltune explain`: the topology it was measured on, how its ranks were joined,
 * size bands, and why a rule is there (its measured evidence against NCCL's own choice).
 *
 * One place for these sentences, so the file a reviewer reads in git and the command that
 * explains it say the same thing.  Every function writes into the caller's buffer (cut to
 * fit) and returns it; nothing is allocated.  Texts depend only on their arguments, so the
 * writer stays deterministic.
 */
#ifndef CCT_TABLE_WORDS_H
#define CCT_TABLE_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_table.h"

/* "1 node x 2 GPUs, one rank per GPU", or for ranks_per_gpu > 1 (the shared-GPU measuring
 * setup, fingerprint.nodes rank processes each its own NCCL node):
 * "4 rank processes sharing one GPU (MPS), each its own NCCL node: never matches a real
 * deployment". */
const char *cct_words_topology(const cct_fingerprint *fp, char *buf, size_t len);

/* How the ranks were joined, for a fingerprint's `links`: "NVLink", "NET/Socket (...)", ... */
const char *cct_words_links(const char *links);

/* A size for people: "64 KiB" where exact, "~2.133 MiB" where not, "inf". */
const char *cct_words_size(uint64_t bytes, char *buf, size_t len);

/* A band [min, max): "0 B to 4 KiB", "~64 KiB to 8 MiB", "8 MiB and up". */
const char *cct_words_band(uint64_t min_bytes, uint64_t max_bytes, char *buf, size_t len);

/* Why the rule is there, short enough for a trailing comment: "1.62x faster than NCCL here",
 * "NCCL's own choice", "no NCCL baseline (imported)", "within noise of NCCL (1.02x)",
 * "model: 1.08x faster than NCCL", "no evidence in the table". */
const char *cct_words_verdict(const cct_rule *rule, char *buf, size_t len);

/* The rule's measured evidence in full, or "" when it has none: "gain 1.62x over NCCL at
 * 768 KiB (95 % CI 1.55-1.70x), noise 4.0 %, 8 cycles" or "no NCCL baseline (imported)". */
const char *cct_words_evidence(const cct_rule *rule, char *buf, size_t len);

/* True when the rule carries measured evidence (a gain, its interval, noise and cycles). */
bool cct_rule_has_evidence(const cct_rule *rule);

#endif
