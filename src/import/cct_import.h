/*
 * cct_import.h - measurements that other tools wrote, turned into cct_points: the result
 * every importer fills, format detection, file reading, and the duplicate check.
 *
 * An importer reads one whole input held in memory (any bytes: a log, a binary, nothing)
 * and either fills a cct_import_result or fails with "NAME:LINE:COL: ..." in err.  It
 * never guesses: a number it cannot read, a dimension it cannot tell (collective, ranks,
 * nodes, algorithm) or two different values for one point is an error the user can fix
 * with a flag or a cleaner file.  docs/import-export.md lists the formats and the rules.
 *
 * Imported points carry one summary number (nccl-tests reports an average) in median_us
 * and mean_us; other statistics are NaN unless the input had per-iteration timing.
 *
 * Ownership: cct_import_result_init() makes an empty result that owns its arrays and name;
 * cct_import_result_destroy() frees them.  cct_import_buffer()/cct_import_file() leave
 * the result as they found it when they fail (points of earlier successful calls stay).
 */
#ifndef CCT_IMPORT_H
#define CCT_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_file.h"
#include "cct_parse.h"
#include "cct_measure.h"

typedef enum cct_import_format {
    CCT_IMPORT_AUTO = 0,           /* decide from the content (cct_import_detect) */
    CCT_IMPORT_NCCLTESTS = 1,      /* nccl-tests text output */
    CCT_IMPORT_NCCLTESTS_JSON = 2, /* nccl-tests -J output */
    CCT_IMPORT_CSV = 3,            /* performance CSV of NCCL's example tuner scripts */
    CCT_IMPORT_RECORDING = 4       /* profiler recordings: cct_import_recordings, all at once */
} cct_import_format;

/* An option not given: the importer takes the value from the input. */
#define CCT_IMPORT_FROM_INPUT (-2)

/* Longest line any importer accepts (nccl-tests and NCCL write far shorter ones). */
#define CCT_IMPORT_MAX_LINE 65536

/* What the user said on the command line; each field CCT_IMPORT_FROM_INPUT when not. */
typedef struct cct_import_opts {
    int coll;  /* cct_coll */
    int algo;  /* cct_algo or CCT_DEFAULT ("NCCL's own choice") */
    int proto; /* cct_proto or CCT_DEFAULT */
    int ranks; /* >= 1 */
    int nodes; /* >= 1 */
} cct_import_opts;

/* Where a point came from, parallel to cct_import_result.points. */
typedef struct cct_import_meta {
    unsigned line, col;  /* 1-based input position of its row (JSON logs are one line) */
    bool duplicate;      /* identical to an earlier point: set by cct_import_check_duplicates */
    size_t first_sample; /* raw samples (per-iteration times) in result.samples */
    size_t n_samples;
} cct_import_meta;

typedef struct cct_import_result {
    char *name; /* the input's name in messages; owned */
    int format; /* cct_import_format actually parsed */
    cct_point *points;
    cct_import_meta *meta;
    size_t n_points, cap_points;
    double *samples;
    size_t n_samples, cap_samples;
    int runs;              /* benchmark runs (tables) the input held */
    int ranks_per_gpu;     /* most ranks the input shows on one GPU (host + bus id); 0 unknown */
    char gpu[128];         /* GPU name the input reports, "" when it does not */
    char host[128];        /* first host name, "" when unknown */
    char nccl_version[32]; /* "2.28.9", "" when unknown */
} cct_import_result;

void cct_import_opts_init(cct_import_opts *opts);

void cct_import_result_init(cct_import_result *result);
void cct_import_result_destroy(cct_import_result *result);

/* Append a point (and a copy of its samples, n may be 0).  CCT_ENOMEM on failure. */
cct_status cct_import_add_point(cct_import_result *result, const cct_point *point, unsigned line,
                                unsigned col, const double *samples, size_t n_samples,
                                cct_error *err);

/* Drop points from index n_points on (undo a failed importer's partial work). */
void cct_import_truncate(cct_import_result *result, size_t n_points, size_t n_samples);

/* "nccl-tests", "nccl-tests-json", "csv", "recording", "auto"; "?" otherwise. */
const char *cct_import_format_name(int format);
/* Reverse of cct_import_format_name; -1 when unknown. */
int cct_import_format_from_name(const char *name);

/* Guess the format from the content: a JSON object, a CSV whose header names
 * collective and size_bytes, else nccl-tests text (whose parser then says whether it is). */
int cct_import_detect(const char *data, size_t len);

/* Parse data (len bytes, need not be NUL terminated) in the given format (AUTO: detect)
 * and append to result; result->name becomes name.  Then checks the result for
 * duplicates (cct_import_check_duplicates).  On failure result is left exactly as it was. */
cct_status cct_import_buffer(const char *data, size_t len, const char *name, int format,
                             const cct_import_opts *opts, cct_import_result *result,
                             cct_error *err);
cct_status cct_import_file(const char *path, int format, const cct_import_opts *opts,
                           cct_import_result *result, cct_error *err);

/* Across results (one per file): two points with the same configuration, size and
 * placement are an error when their values differ ("NAME:LINE:1: ... already at
 * OTHER:LINE"); when identical, the later ones get meta.duplicate = true and *n_duplicates
 * counts them (may be NULL). */
cct_status cct_import_check_duplicates(cct_import_result *results, size_t n_results,
                                       size_t *n_duplicates, cct_error *err);

#endif
