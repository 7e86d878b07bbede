/*
 * cct_rule_model.h - which fitted model stands behind a table's rule, and which NCCL buffer
 * sizes a table's rules assume.
 *
 * A section keeps one model per measured configuration, and configurations include the
 * buffer sizes (NCCL_BUFFSIZE and its LL/LL128 siblings) they were measured with.  The
 * rules do not name buffer sizes: those are process-wide, so the table records them once in
 * recommended_env, and a rule's configuration is "its algo/proto/channels under the table's
 * buffers".  `ccltune diff` and `ccltune plot` need exactly that lookup to predict what a
 * rule costs; keeping it here means both read a table the same way.
 *
 * A rule can also leave its band to NCCL: it names NCCL's own algorithm and protocol with
 * NCCL's channels and chunk, and `ccltune fit` marks it with margin_default 0 (docs/fitting.md,
 * "Evidence").  What runs there is NCCL's default, not the forced configuration of the same
 * name, so a rule of NCCL's choice is no evidence for that configuration's model.
 *
 * A model is only trusted near the sizes it was measured at.  A table does not record those,
 * so cct_model_table_span() gathers what the table shows: the model's own line starts (the
 * fitter puts each between two measured sizes) and the bands where the table chose the
 * configuration itself (the evidence rule compared it with NCCL's default at their sizes).
 * With a store the measured sizes are known exactly (cct_plot.c).  Either way a prediction
 * counts only within the span widened by CCT_MODEL_SPAN_MARGIN on both sides.
 *
 * Part of the GSL-free core.  Ownership: nothing is allocated; returned models point into
 * the section, valid as long as its table.
 */
#ifndef CCT_RULE_MODEL_H
#define CCT_RULE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cct_table.h"

typedef struct cct_table_buffers {
    uint64_t buffsize, ll_buffsize, ll128_buffsize; /* 0: NCCL's default */
} cct_table_buffers;

/* The buffer sizes the table's recommended_env sets.  A variable that is absent, or whose
 * value is not plain decimal digits (NCCL itself would misread "8M"), counts as 0. */
cct_table_buffers cct_table_buffers_of(const cct_table *table);

/* The model of (algo, proto, channels) measured with exactly these buffers, or NULL. */
const cct_model *cct_section_find_model(const cct_section *section, int algo, int proto,
                                        int channels, const cct_table_buffers *buffers);

/* The model behind a rule: its configuration under the table's buffers; failing that, the
 * same (algo, proto, channels) with other buffers (the first in the section's order, which
 * the writer sorts), because a hand-edited table may not repeat its buffers in
 * recommended_env.  NULL when the section has no model of that configuration. */
const cct_model *cct_rule_model(const cct_table *table, const cct_section *section,
                                const cct_rule *rule);

/* True when the rule leaves its band to NCCL: channels 0, chunk 0 and margin_default exactly 0,
 * which is how `ccltune fit` writes a band where nothing beat NCCL's default with evidence.
 * Its algo/proto are then NCCL's own choice there (its default as measured).  A hand-written
 * rule without margin_default cannot say, and counts as a choice of the table. */
bool cct_rule_is_nccl_choice(const cct_rule *rule);

/* How far beyond its measured sizes a model is still believed: a factor on each side. */
#define CCT_MODEL_SPAN_MARGIN 2.0

/* Sizes a model stands on, [lo, hi] in bytes (hi CCT_BYTES_INF: a table's open last band). */
typedef struct cct_size_span {
    bool known; /* false: nothing says where it was measured; it covers no size */
    uint64_t lo, hi;
} cct_size_span;

/* Widen span to include [lo, hi]. */
void cct_span_add(cct_size_span *span, uint64_t lo, uint64_t hi);

/* True when bytes lies in [lo / CCT_MODEL_SPAN_MARGIN, hi * CCT_MODEL_SPAN_MARGIN]. */
bool cct_span_covers(const cct_size_span *span, uint64_t bytes);

/* What the table shows about where model (a model of section) was measured: the starts of its
 * second and later lines, and the bands of the rules whose model (cct_rule_model) it is and
 * that are not NCCL's choice.  Unknown when neither exists (a one-line model that no rule of
 * the table's own choosing uses: it may rest on two small sizes). */
cct_size_span cct_model_table_span(const cct_table *table, const cct_section *section,
                                   const cct_model *model);

/* cct_model_predict() where span covers bytes; NAN elsewhere. */
double cct_model_predict_within(const cct_model *model, const cct_size_span *span, uint64_t bytes);

#endif
