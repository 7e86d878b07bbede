/*
 * cct_json_write.c - write a C string as a JSON string (cct_json_write.h).
 *
 * The commands print their JSON with plain fprintf; only strings need care: a quote or a
 * backslash gets a backslash, a control character becomes \u00XX, and every other byte,
 * UTF-8 included, is written as it is.
 */
#include "cct_json_write.h"

void cct_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}
