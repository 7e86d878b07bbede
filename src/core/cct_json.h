/*
 * cct_json.h - a small JSON reader for inputs ccltune imports (nccl-tests -J files).
 *
 * It builds the whole document as an array of nodes linked by index (first child, next
 * sibling), with every string and number spelling in one pool, so a document is two
 * allocations however deep it is.  The parser is iterative with an explicit stack
 * (depth <= CCT_JSON_MAX_DEPTH), so hostile input cannot exhaust the C stack.  It follows
 * RFC 8259 with two tolerances for what nccl-tests writes: the bare words nan, inf and
 * -inf are numbers (printf("%lf") of a non-finite double), and a duplicate member name
 * is an error rather than "last one wins".  Numbers keep their spelling; callers convert
 * them with the strictness they need.
 *
 * Ownership: cct_json_init() makes an empty document; cct_json_parse() fills it;
 * cct_json_destroy() frees it.  Node and string pointers are valid until then.
 */
#ifndef CCT_JSON_H
#define CCT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"

#define CCT_JSON_MAX_DEPTH 64
#define CCT_JSON_MAX_MEMBERS 4096 /* per object: keeps the duplicate check cheap */
#define CCT_JSON_NONE SIZE_MAX

typedef enum cct_json_type {
    CCT_JSON_NULL,
    CCT_JSON_BOOL,
    CCT_JSON_NUMBER,
    CCT_JSON_STRING,
    CCT_JSON_ARRAY,
    CCT_JSON_OBJECT
} cct_json_type;

typedef struct cct_json_node {
    int type;                 /* cct_json_type */
    bool boolean;             /* CCT_JSON_BOOL */
    unsigned line, col;       /* where the value starts, 1-based */
    size_t key;               /* pool offset of the member name; CCT_JSON_NONE outside objects */
    size_t text;              /* pool offset of a string's value or a number's spelling */
    size_t first, last, next; /* children and siblings by index; CCT_JSON_NONE when none */
    size_t count;             /* children */
} cct_json_node;

typedef struct cct_json_doc {
    cct_json_node *nodes;
    size_t n_nodes, cap_nodes;
    char *pool;
    size_t pool_len, pool_cap;
} cct_json_doc;

void cct_json_init(cct_json_doc *doc);
void cct_json_destroy(cct_json_doc *doc);

/* Parse len bytes (no NUL needed).  Errors are "NAME:LINE:COL: ...". */
cct_status cct_json_parse(cct_json_doc *doc, const char *data, size_t len, const char *name,
                          cct_error *err);

const cct_json_node *cct_json_root(const cct_json_doc *doc);
/* The member named key of an object, NULL when absent (or node is not an object). */
const cct_json_node *cct_json_member(const cct_json_doc *doc, const cct_json_node *node,
                                     const char *key);
/* Children of an array or object in order; NULL after the last. */
const cct_json_node *cct_json_first(const cct_json_doc *doc, const cct_json_node *node);
const cct_json_node *cct_json_next(const cct_json_doc *doc, const cct_json_node *node);
/* A string's value or a number's spelling ("" for other types). */
const char *cct_json_text(const cct_json_doc *doc, const cct_json_node *node);
const char *cct_json_key(const cct_json_doc *doc, const cct_json_node *node);
const char *cct_json_type_name(int type);

#endif
