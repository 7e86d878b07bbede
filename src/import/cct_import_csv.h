/*
 * cct_import_csv.h - importer for the performance CSV that NCCL's example tuner scripts
 * read (plugins/tuner/example/scripts/ in NCCL's repository): "collective,size_bytes,
 * algorithm,protocol,channels,nodes,ranks,pipeOps,regBuff,cost_metric,bandwidth_gbps,
 * latency_us".  The header decides the column order.  Every column except cost_metric
 * and bandwidth_gbps is required (latency_us is the only time the format has); unknown
 * or repeated columns are errors.  One row becomes one cct_point: channels -1 means NCCL's
 * count, nodes/ranks -1 ("any") need --nodes/--ranks, pipeOps and regBuff are checked
 * but not stored (a cct_config has no such dimension), and since the format names no data
 * type or placement the point is recorded as float, out-of-place.
 *
 * --coll/--algo/--proto do not apply (each row names them) and are refused.  A last row
 * without a line end is refused as possibly truncated.  Accepts any bytes; errors are
 * "NAME:LINE:COL: ".  Appends to result on success.
 */
#ifndef CCT_IMPORT_CSV_H
#define CCT_IMPORT_CSV_H

#include <stddef.h>

#include "cct_import.h"

cct_status cct_import_csv(const char *data, size_t len, const char *name,
                          const cct_import_opts *opts, cct_import_result *result, cct_error *err);

#endif
