/*
 * cct_yaml_layout.h - laying the table writer's YAML out in lines a person can read: flow
 * mappings wrapped at CCT_LINE_MAX characters (with comments at their first and last line),
 * long double-quoted strings folded at spaces, and comment paragraphs wrapped at words.
 *
 * Internal to the table writer (cct_table_write.c, cct_table_write_header.c).  Every layout is
 * a pure function of its input, so the writer stays deterministic; every text produced reads
 * back to exactly the value that was laid out (YAML folds a line break inside a double-quoted
 * scalar into one space, and flow collections may continue on more deeply indented lines).
 * A flow holds its items in fixed buffers (allocate it with cct_flow_new, free it with free);
 * an item too long for its buffer marks the flow as overflowed.
 */
#ifndef CCT_YAML_LAYOUT_H
#define CCT_YAML_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CCT_LINE_MAX 120 /* the longest line the writer produces (a single word may exceed it) */
#define CCT_FLOW_MAX_ITEMS 40
#define CCT_FLOW_ITEM_MAX 1536 /* a segment of four numbers near DBL_MAX still fits */

/* The items of one flow mapping ("key: value" each, separated by ", " in the output). */
typedef struct cct_flow {
    char item[CCT_FLOW_MAX_ITEMS][CCT_FLOW_ITEM_MAX];
    size_t n;
    size_t break_after; /* a line ends after this many items (0: only where the width says) */
    bool overflow;      /* an item did not fit its buffer, or there were too many */
} cct_flow;

/* An empty flow, NULL on ENOMEM; free() it. */
cct_flow *cct_flow_new(void);
/* Append one item, printf-style. */
void cct_flow_add(cct_flow *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append more text to the last item (for values built in pieces). */
void cct_flow_append(cct_flow *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write "<indent spaces><lead>{item, item, ...}" wrapped at CCT_LINE_MAX, continuation lines
 * aligned under the first item.  lead is "- " for a list entry or "key: " for a mapping value.
 * first_comment (may be NULL) ends the first line and last_comment the last one, each as
 * "  # text" where it fits in the width; a first comment that does not fit joins the last
 * ("first: last") where that fits, and a comment that fits nowhere goes on its own line above
 * the entry, at its indentation.  False on ENOMEM or when the flow overflowed. */
bool cct_flow_write(FILE *f, const cct_flow *fl, int indent, const char *lead,
                    const char *first_comment, const char *last_comment);

/* Write the double-quoted YAML scalar `quoted` (already escaped, quotes included) that starts
 * at column `col`, folding it at single spaces onto lines indented by cont_indent so that no
 * line passes CCT_LINE_MAX.  Ends the line. */
void cct_write_folded(FILE *f, int col, int cont_indent, const char *quoted);

/* Write text as comment lines: the first starts with first_prefix, the others with
 * cont_prefix, wrapped at words to CCT_LINE_MAX.  Control characters become '?' and each
 * line break in text starts a new comment line (with cont_prefix). */
void cct_write_comment(FILE *f, const char *first_prefix, const char *cont_prefix,
                       const char *text);

/* A command line as comment lines, wrapped at its spaces with a trailing " \" on every line
 * but the last, so it can be copied into a shell. */
void cct_write_comment_command(FILE *f, const char *first_prefix, const char *cont_prefix,
                               const char *command);

#endif
