/*
 * cct_import_nccltests.h - importers for nccl-tests output (github.com/NVIDIA/nccl-tests):
 * the text it prints (all versions from 2.0 on: with or without the redop/root columns,
 * "error" or "#wrong" columns, per-iteration and timestamp columns, NCCL INFO lines
 * mixed in) and the JSON it writes with -J (file versions 1 to 3).
 *
 * Each table row becomes two cct_points, out-of-place and in-place.  The collective,
 * ranks, nodes, algorithm and protocol come from the log or from opts, by the rules in
 * cct_nccltests_run.c and docs/import-export.md; a log that does not say, or says two
 * things, is an error with "NAME:LINE:COL: ".  One text file may hold several runs (one
 * program after another), each with its own header.
 *
 * Both functions accept any bytes and never read past data + len.  On success they append
 * to result; on failure result may hold some of the input's points (cct_import_buffer()
 * removes them).
 */
#ifndef CCT_IMPORT_NCCLTESTS_H
#define CCT_IMPORT_NCCLTESTS_H

#include <stddef.h>

#include "cct_import.h"

cct_status cct_import_nccltests_text(const char *data, size_t len, const char *name,
                                     const cct_import_opts *opts, cct_import_result *result,
                                     cct_error *err);

cct_status cct_import_nccltests_json(const char *data, size_t len, const char *name,
                                     const cct_import_opts *opts, cct_import_result *result,
                                     cct_error *err);

#endif
