/*
 * cct_json_write.h - the one JSON string writer behind every `--json` output (probe, doctor,
 * audit): quotes, backslashes and control characters escaped as RFC 8259 asks.
 */
#ifndef CCT_JSON_WRITE_H
#define CCT_JSON_WRITE_H

#include <stdio.h>

/* Write s (NULL: the empty string) to out as a quoted JSON string. */
void cct_json_write_string(FILE *out, const char *s);

#endif
