/*
 * cct_table_diff_internal.h - the parts of the table diff that talk to each other:
 * cct_table_diff.c (the table-wide fields and pairing sections), cct_table_diff_bands.c
 * (one section against its counterpart) and cct_table_diff_text.c (the words).
 *
 * Ownership: cct_diff_push() copies the change and every string it points to; the caller
 * keeps what it passed.
 */
#ifndef CCT_TABLE_DIFF_INTERNAL_H
#define CCT_TABLE_DIFF_INTERNAL_H

#include "cct_table_diff.h"

/* A change with every field empty (NAN speedups, CCT_ANY keys). */
cct_diff_change cct_diff_change_blank(cct_diff_kind kind, cct_diff_level level);

/* Word the change (cct_diff_wording) and append a copy; CCT_ENOMEM on failure. */
cct_status cct_diff_push(cct_diff *diff, const cct_diff_change *change);

/* Compare a section of the old table with the same key's section of the new one. */
cct_status cct_diff_section_pair(cct_diff *diff, const cct_table *old_t, const cct_section *old_s,
                                 const cct_table *new_t, const cct_section *new_s,
                                 double threshold);

/* The line for a change (malloc'ed, NULL when out of memory). */
char *cct_diff_wording(const cct_diff_change *change);

#endif
