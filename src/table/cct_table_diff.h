/*
 * cct_table_diff.h - what changed between two tuning tables, as data and as the lines a
 * reviewer reads in a pull request (`ccltune diff OLD.yaml NEW.yaml`).
 *
 * Decisions are compared over the union of both tables' band boundaries, so a band that
 * was split or merged is compared size range by size range; adjacent ranges with the same
 * change are merged into one line.  Every change has a level: DECISION changes what the
 * plugin does (rules, sections, the LL128 verdict, recommended_env, NCCL model constants, the
 * fingerprint fields
 * the plugin matches on); NOTE changes nothing at run time but deserves a look (predicted
 * times that moved beyond the threshold, other fingerprint fields); RECORD is bookkeeping
 * (provenance, refitted models) that `ccltune diff --all` shows.  docs/commands.md gives
 * the wording and the rules.
 *
 * Ownership: cct_table_diff() fills a caller-owned cct_diff whose changes and strings it
 * owns; cct_diff_destroy() frees them.  The tables are only read.
 */
#ifndef CCT_TABLE_DIFF_H
#define CCT_TABLE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_table.h"

typedef enum cct_diff_level {
    CCT_DIFF_DECISION = 0, /* the plugin behaves differently: counts for the exit status */
    CCT_DIFF_NOTE = 1,     /* nothing changes at run time, but a reviewer should see it */
    CCT_DIFF_RECORD = 2    /* bookkeeping: listed only on request */
} cct_diff_level;

typedef enum cct_diff_kind {
    CCT_DIFF_PROVENANCE = 0,  /* a provenance field (field, old_value, new_value) */
    CCT_DIFF_FINGERPRINT,     /* a fingerprint field */
    CCT_DIFF_LL128,           /* the LL128 verdict */
    CCT_DIFF_LL128_REASON,    /* the reason given for it */
    CCT_DIFF_ENV,             /* a recommended_env variable added, removed or changed */
    CCT_DIFF_SECTION_ADDED,   /* a section only the new table has (n_bands: its bands) */
    CCT_DIFF_SECTION_REMOVED, /* a section only the old table has */
    CCT_DIFF_CHOICE,          /* algorithm or protocol changed over [min_bytes, max_bytes) */
    CCT_DIFF_TUNING,          /* same algorithm and protocol; channels or chunk changed */
    CCT_DIFF_PREDICTED,       /* same configuration; its predicted time moved */
    CCT_DIFF_MODELS,          /* fitted models or alignment penalties changed */
    CCT_DIFF_CONSTANT         /* an nccl_constants entry set, unset or changed (field: its
                                 family and name, "base_latency_us ring/ll") */
} cct_diff_kind;

/* What a rule selects; two rules decide the same when the first four are equal (the plugin
 * does the same for a rule of NCCL's choice and for one naming the same configuration). */
typedef struct cct_diff_config {
    int algo, proto;
    int channels;         /* 0: NCCL's */
    uint64_t chunk_bytes; /* 0: NCCL's */
    bool nccl; /* the band is left to NCCL (cct_rule_is_nccl_choice): algo/proto are NCCL's
                  default there, and what runs is NCCL's default, not the forced twin */
} cct_diff_config;

typedef struct cct_diff_change {
    cct_diff_kind kind;
    cct_diff_level level;
    /* Field kinds (PROVENANCE, FINGERPRINT, LL128, LL128_REASON, ENV): the field or
     * variable name and both values as written in the tables; NULL value: absent. */
    char *field, *old_value, *new_value;
    /* Section kinds: the section's key (coll, ranks, nodes, pipe_ops, reg_buff as in
     * cct_section; pipe_ops/reg_buff CCT_ANY when not distinguished). */
    int coll, ranks, nodes, pipe_ops, reg_buff;
    size_t n_bands; /* SECTION_ADDED / SECTION_REMOVED */
    /* CHOICE, TUNING, PREDICTED: sizes [min_bytes, max_bytes) (max CCT_BYTES_INF: no end). */
    uint64_t min_bytes, max_bytes;
    cct_diff_config from, to; /* the old and the new table's choice (equal for PREDICTED) */
    /* Predicted speed of the new choice over the old one, t_old / t_new - 1 (0.12: 12 %
     * faster, negative: slower), at the middle of every range between band boundaries that
     * this change covers: the smallest and the largest.  A range counts only where both
     * choices have a prediction believed at its middle (a model within its span,
     * cct_rule_model.h, or a band's predicted_us near its ref_bytes); NAN when one of them
     * has none, so a percentage never rests on an extrapolated model. */
    double speedup_lo, speedup_hi;
    /* DECISION level: whether the change is significant.  A changed band (CHOICE, TUNING) is
     * within noise when both tables carry measured evidence (cct_rule: gain over NCCL's choice
     * with its interval, and the run's noise floor; a band left to NCCL counts as gain 1
     * exactly) and neither choice's interval lies above the other's by more than the larger
     * of the two noise floors; every other decision change is significant. */
    bool within_noise;
    bool no_evidence; /* a changed band one of whose rules carries no evidence (old tables) */
    /* MODELS: models whose key only one table has, models whose numbers differ. */
    size_t models_added, models_removed, models_changed;
    bool alignment_changed;
    char *text; /* the one line a reviewer reads, without a newline */
} cct_diff_change;

typedef struct cct_diff {
    size_t n_changes;
    cct_diff_change *changes; /* in the tables' layout order: provenance, fingerprint, LL128,
                                 recommended_env, nccl_constants, then sections in the writer's
                                 order, and by size within a section */
    size_t n_level[3];        /* changes per cct_diff_level */
    size_t n_significant;     /* DECISION changes that are significant ... */
    size_t n_within_noise;    /* ... and those within both runs' noise */
} cct_diff;

typedef struct cct_diff_options {
    /* PREDICTED is reported where |t_new - t_old| / t_old exceeds this (default 0.05). */
    double threshold;
} cct_diff_options;

void cct_diff_options_default(cct_diff_options *opt);

/* Compare old_t with new_t.  opt may be NULL (defaults).  *out is initialised here; on
 * failure (CCT_ENOMEM, or CCT_EINVAL for a negative or non-finite threshold) it is left
 * empty and err says why. */
cct_status cct_table_diff(const cct_table *old_t, const cct_table *new_t,
                          const cct_diff_options *opt, cct_diff *out, cct_error *err);

/* True when no significant DECISION change was found (changes within noise may remain). */
bool cct_diff_no_significant(const cct_diff *diff);

/* True when no change of level DECISION was found: the plugin will behave the same. */
bool cct_diff_decisions_equal(const cct_diff *diff);

void cct_diff_destroy(cct_diff *diff);

/* Agreement of two tables' decisions: at `per_octave` sizes per octave from min_bytes to
 * max_bytes (round(min_bytes * 2^(k / per_octave))), in every plain section either table has
 * (pipe_ops and reg_buff CCT_ANY), whether both choose the same algorithm, protocol and
 * channel count -- what `ccltune export --format nccl-example-csv` would write for that size.
 * A section only one table has disagrees at every size.  Per collective and in total. */
typedef struct cct_agreement {
    size_t sizes, agree;
    size_t coll_sizes[CCT_NUM_COLLS], coll_agree[CCT_NUM_COLLS];
} cct_agreement;

cct_status cct_table_agreement(const cct_table *a, const cct_table *b, uint64_t min_bytes,
                               uint64_t max_bytes, int per_octave, cct_agreement *out,
                               cct_error *err);

#endif
