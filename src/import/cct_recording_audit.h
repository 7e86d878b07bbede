/*
 * cct_recording_audit.h - what NCCL ran in recorded jobs, by collective and size band,
 * and (with a table) whether it ran what the table's rules asked.  `ccltune audit` prints
 * this; the computation lives here so that tests and other commands share it.
 *
 * Rows of every communicator of every recording are merged by (collective, ranks, nodes,
 * size band, algorithm, protocol, channels).  Without a table the bands are powers of two
 * ([2^k, 2^(k+1)) bytes); with one they are the bands of the rule that covers the size in
 * the section for the communicator's shape (as the tuner finds it for a single call on
 * unregistered buffers: pipe_ops 1, reg_buff 0).  Each line is then "as asked" (algorithm
 * and protocol equal the rule's, and no more channels than the rule sets: the tuner's count
 * is a cap, under which NCCL spreads small messages over fewer channels), "left to
 * NCCL" (no section or rule for it, or a collective a tuner is never asked about) or a
 * mismatch.  Calls are counted per rank: a collective on 4 ranks is 4 calls.
 *
 * The saving estimate applies a measured gain over NCCL's own choice to the GPU time each
 * recorded (size, configuration) took when it ran as the table asked.  By default the gain
 * is the rule's (the table's `evidence`, measured at the rule's reference size): an
 * estimate for the whole band from one measured size, said so where shown.  A gain source
 * (cct_audit_gain_fn, e.g. measurements in a store) may answer per recorded size instead.
 *
 * Ownership: cct_audit_run fills *out; cct_audit_destroy frees it.
 */
#ifndef CCT_RECORDING_AUDIT_H
#define CCT_RECORDING_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_recording.h"
#include "cct_table.h"

typedef enum cct_audit_verdict {
    CCT_AUDIT_NO_TABLE = 0, /* audited without a table */
    CCT_AUDIT_AS_ASKED = 1,
    CCT_AUDIT_LEFT = 2, /* the table has no rule for it: NCCL's own choice */
    CCT_AUDIT_MISMATCH = 3
} cct_audit_verdict;

typedef struct cct_audit_line {
    int coll, ranks, nodes;
    uint64_t lo, hi;           /* the band: lo <= bytes < hi (hi CCT_BYTES_INF: no end) */
    int algo, proto, channels; /* what NCCL ran (-1: unknown) */
    uint64_t calls, timed, total_ns;
    uint64_t min_bytes, max_bytes; /* recorded sizes within the band */
    uint64_t hist[CCT_RECORDING_HIST];
    cct_audit_verdict verdict;
    int want_algo, want_proto, want_channels; /* the rule's; -1 without one */
    double gain, gain_lo, gain_hi; /* the gain of the line's first size (NCCL's time / the
                                      rule's, 95 % CI where known); 0 when it has none */
    double evidence_ns, saved_ns, saved_lo_ns, saved_hi_ns; /* summed over the line's sizes */
} cct_audit_line;

typedef struct cct_audit {
    cct_audit_line *lines; /* sorted by coll, ranks, nodes, lo, then calls (most first) */
    size_t n_lines;
    size_t n_recordings, n_comms;
    uint64_t calls, timed, total_ns, dropped, late;
    uint64_t as_asked, left, mismatched; /* calls; all 0 without a table */
    size_t mismatch_lines;
    /* The saving estimate: over calls that ran the table's choice under a rule with measured
     * evidence, the GPU time they took (evidence_ns) and what NCCL's own choice would have
     * taken more by the rule's gain: saved = time x (gain - 1), with the CI's ends.
     * no_evidence_calls: as-asked calls whose rule has no evidence (not estimated). */
    double evidence_ns, saved_ns, saved_lo_ns, saved_hi_ns;
    uint64_t no_evidence_calls;
} cct_audit;

/* A gain source: NCCL's time / the rule's for a collective of `bytes` on a communicator of
 * that shape that ran `rule`'s choice; false when it has no measurement for it (those calls
 * count as no_evidence_calls).  lo/hi: an interval, or the gain itself without one. */
typedef bool (*cct_audit_gain_fn)(void *ctx, int coll, int ranks, int nodes, uint64_t bytes,
                                  const cct_rule *rule, double *gain, double *lo, double *hi);

/* table may be NULL.  CCT_ENOMEM is the only failure.  Gains from the rules' evidence. */
cct_status cct_audit_run(const cct_recording *recs, size_t n, const cct_table *table,
                         cct_audit *out, cct_error *err);
/* The same with gains from gain(ctx, ...); gain NULL: the rules' evidence. */
cct_status cct_audit_run_gains(const cct_recording *recs, size_t n, const cct_table *table,
                               cct_audit_gain_fn gain, void *ctx, cct_audit *out, cct_error *err);
void cct_audit_destroy(cct_audit *audit);

const char *cct_audit_verdict_name(cct_audit_verdict v); /* "as_asked", "left_to_nccl", ... */

/* The rule that table (may be NULL) gives a recorded call: the section of plain calls (one
 * pipelined op, no registered buffer) of coll on that communicator shape; NULL without one. */
const cct_rule *cct_audit_rule(const cct_table *table, int coll, int ranks, int nodes,
                               uint64_t bytes);
/* Whether NCCL ran what rule asked: its algorithm and protocol, and no more channels than
 * the rule's (a rule's channel count is a cap: NCCL spreads a small message over fewer). */
bool cct_audit_ran_as_asked(const cct_rule *rule, int algo, int proto, int channels);

#endif
