/*
 * cct_import_check.h - the consistency rules every importer applies to one measured row
 * before it becomes a point: a row that contradicts itself is refused, not stored.
 *
 * nccl-tests prints size, count, time and algbw of each row, each from the others: algbw
 * = size / time, and count = size / type size (per rank for allgather and reducescatter).
 * A row whose numbers do not fit together was edited, corrupted or misread, and any of
 * its numbers may be the wrong one.  The checks allow for the rounding of each printed
 * number (half a unit of its last digit) and 2 % beyond.  Values no measurement produces
 * (a size the store cannot hold, a time above 1e12 us) are refused outright.
 */
#ifndef CCT_IMPORT_CHECK_H
#define CCT_IMPORT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* The largest byte count the store holds (SQLite's signed 64-bit integers). */
#define CCT_IMPORT_MAX_BYTES ((uint64_t)INT64_MAX)
/* The longest time a row may report: 1e12 us, 11.6 days for one call. */
#define CCT_IMPORT_MAX_TIME_US 1e12

/* Half a unit of the last digit `text` shows: 0.005 for "0.35", 0.5 for "12", 5e+305 for
 * "1e306".  0 for text that is not a plain decimal number. */
double cct_import_resolution(const char *text);

/* Whether a time (us) and a bandwidth (GB/s) as printed, each +- its resolution, can both
 * describe `bytes`: bytes = gbps * 1e3 * time_us within 2 %. */
bool cct_import_time_fits(uint64_t bytes, double time_us, double time_res, double gbps,
                          double gbps_res);

/* Whether `count` elements of dtype make `bytes` for collective coll on `ranks` ranks:
 * count x type size, or (allgather, reducescatter: nccl-tests prints one rank's count)
 * that times ranks. */
bool cct_import_count_fits(int coll, int ranks, int dtype, uint64_t bytes, uint64_t count);

#endif
