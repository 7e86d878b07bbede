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
 * Part of the GSL-free core.  Ownership: nothing is allocated; returned models point into
 * the section, valid as long as its table.
 */
#ifndef CCT_RULE_MODEL_H
#define CCT_RULE_MODEL_H

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

#endif
