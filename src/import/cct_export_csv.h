/*
 * cct_export_csv.h - export a ccltune table as the CSV configuration of NCCL's example
 * tuner plugin (plugins/tuner/example in NCCL's repository; NCCL_TUNER_CONFIG_FILE):
 * "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
 * numPipeOps,regBuff", for users who deploy that plugin instead of ccltune's.
 *
 * The lines must decide what ccltune's lookup decides, under the plugin's rules: its
 * bands are inclusive, it reads max_bytes with strtoull into a size_t, it presets
 * *nChannels = 1 and takes the first matching line.  What the format cannot carry (chunk
 * sizes, recommended_env, predictions, models) is named in the comment header.  The
 * function comment below gives each rule; docs/import-export.md explains them.
 *
 * Nothing is owned or kept.
 */
#ifndef CCT_EXPORT_CSV_H
#define CCT_EXPORT_CSV_H

#include <stdio.h>

#include "cct_error.h"
#include "cct_table.h"

/* Comment lines stay below this length: the plugin reads 255 bytes at a time, and the
 * rest of a longer comment would be parsed as a configuration line. */
#define CCT_EXPORT_CSV_MAX_COMMENT 200

/* Write table (which must pass cct_table_check()) to out, deterministically; source names
 * it in the header comment (may be NULL).  Conversion:
 *   - a band [min, max) becomes min,max-1; the open last band ends at 18446744073709551615
 *     (4294967295, the value of the plugin's examples, would leave >= 4 GiB unmatched);
 *   - channels 0 (NCCL's count) stays 0, not -1: the plugin keeps its preset 1 for -1,
 *     while NCCL treats 0 as "its own count";
 *   - pipe_ops/reg_buff "any" become -1; sections are ordered so the plugin's first match
 *     is the section cct_table_find_section() chooses (specific keys first). */
cct_status cct_export_nccl_example_csv(const cct_table *table, const char *source, FILE *out,
                                       cct_error *err);

#endif
