/*
 * cct_table_write_header.h - the comment block the writer puts at the top of a table: in
 * words, which box and topology it was measured on, NCCL and CUDA, when and how it was made
 * (the measuring command and runs, from the provenance), and how to read and deploy it.
 *
 * Internal to the writer.  The text depends only on the table, so the same table always gets
 * the same header; the loader skips comments, so the header never changes what a table means.
 */
#ifndef CCT_TABLE_WRITE_HEADER_H
#define CCT_TABLE_WRITE_HEADER_H

#include <stdio.h>

#include "cct_table.h"

/* Write the header's comment lines (each at most CCT_LINE_MAX characters). */
void cct_table_write_header(FILE *f, const cct_table *table);

#endif
