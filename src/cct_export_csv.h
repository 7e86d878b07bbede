/*
 * cct_export_csv.h - export a ccltune table as the CSV configuration of NCCL's example
 * tuner plugin (plugins/tuner/example in NCCL's repository; NCCL_TUNER_CONFIG_FILE):
 *
 *   collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
 *   numPipeOps,regBuff
 *
 * for users who deploy that plugin instead of ccltune's.  The conversion, and what the
 * format cannot say, is documented in docs/import-export.md:
 *   - our bands are [min, max); the plugin's are inclusive, so max_bytes = max - 1, and
 *     the open last band ends at 18446744073709551615 (the plugin reads max_bytes with
 *     strtoull into a size_t; 4294967295, the value of its examples, would leave
 *     messages of 4 GiB and more unmatched);
 *   - channels 0 (NCCL's count) is written as 0, not -1: the plugin sets *nChannels = 1
 *     before matching and keeps it for -1, while NCCL treats 0 as "its own count";
 *   - chunk sizes, predictions, models and recommended_env have no column: they are
 *     named in the comment header instead.
 * Sections are ordered so the plugin's first match is the section ccltune's lookup
 * would choose (specific numPipeOps/regBuff before "any").  Output is deterministic.
 *
 * The table must pass cct_table_check().  Nothing is owned or kept.
 */
#ifndef CCT_EXPORT_CSV_H
#define CCT_EXPORT_CSV_H

#include <stdio.h>

#include "cct_error.h"
#include "cct_table.h"

/* Comment lines stay below this length: the plugin reads 255 bytes at a time, and the
 * rest of a longer comment would be parsed as a configuration line. */
#define CCT_EXPORT_CSV_MAX_COMMENT 200

/* Write table to out; source names the table in the header comment (may be NULL). */
cct_status cct_export_nccl_example_csv(const cct_table *table, const char *source, FILE *out,
                                       cct_error *err);

#endif
