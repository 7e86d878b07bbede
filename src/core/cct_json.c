/*
 * cct_json.c - an iterative JSON parser into an index-linked node array (see cct_json.h).
 *
 * The parser is a loop over four states (a value is expected, a member name, a colon, or
 * what follows a value) with the open containers on an explicit stack.  Positions are
 * tracked only where a line can end in JSON (between tokens), which is all error messages
 * need.  Strings are unescaped into the pool, \u escapes (with surrogate pairs) become
 * UTF-8, and a \u0000 is refused because the pool holds NUL-terminated strings.
 */
#include "cct_json.h"
#include "cct_grow.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void cct_json_init(cct_json_doc *doc)
{
    memset(doc, 0, sizeof *doc);
}

void cct_json_destroy(cct_json_doc *doc)
{
    free(doc->nodes);
    free(doc->pool);
    cct_json_init(doc);
}

typedef struct parser {
    cct_json_doc *doc;
    const char *s;
    size_t len, i;
    unsigned line;
    size_t line_start;
    const char *name;
    cct_error *err;
} parser;

static unsigned col_of(const parser *p, size_t i)
{
    size_t c = i - p->line_start + 1;
    return c > 0xFFFFFFFFu ? 0xFFFFFFFFu : (unsigned)c;
}

static cct_status fail(parser *p, size_t at, const char *what)
{
    return cct_error_at(p->err, CCT_EPARSE, p->name, p->line, col_of(p, at), "%s", what);
}

static cct_status nomem(parser *p)
{
    return cct_error_set(p->err, CCT_ENOMEM, "%s: out of memory parsing JSON", p->name);
}

static bool pool_put(cct_json_doc *d, const char *bytes, size_t n)
{
    if (n > SIZE_MAX - d->pool_len - 1 ||
        !cct_grow((void **)&d->pool, &d->pool_cap, d->pool_len + n + 1, 1))
        return false;
    memcpy(d->pool + d->pool_len, bytes, n);
    d->pool_len += n;
    d->pool[d->pool_len] = '\0';
    return true;
}

/* Keep the NUL that pool_put left after the last bytes, so the next value starts after it. */
static bool end_string(cct_json_doc *d)
{
    if (!pool_put(d, "", 0))
        return false;
    d->pool_len++;
    return true;
}

static void skip_ws(parser *p)
{
    while (p->i < p->len) {
        char c = p->s[p->i];
        if (c == '\n') {
            p->line++;
            p->line_start = p->i + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        p->i++;
    }
}

static int hex4(const char *s)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int c = (unsigned char)s[k], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static bool put_utf8(cct_json_doc *d, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return pool_put(d, b, n);
}

/* A string starting at p->i (the quote); its value goes to the pool at *off. */
static cct_status string(parser *p, size_t *off)
{
    cct_json_doc *d = p->doc;
    size_t start = p->i++;
    *off = d->pool_len;
    for (;;) {
        if (p->i >= p->len)
            return fail(p, start, "unterminated string");
        size_t run = p->i;
        while (p->i < p->len && p->s[p->i] != '"' && p->s[p->i] != '\\' &&
               (unsigned char)p->s[p->i] >= 0x20)
            p->i++;
        if (!pool_put(d, p->s + run, p->i - run))
            return nomem(p);
        if (p->i >= p->len)
            return fail(p, start, "unterminated string: the JSON is truncated");
        char c = p->s[p->i];
        if (c == '"') {
            p->i++;
            return end_string(d) ? CCT_OK : nomem(p);
        }
        if ((unsigned char)c < 0x20)
            return fail(p, p->i, "control character in a string");
        /* backslash */
        if (p->i + 1 >= p->len)
            return fail(p, start, "unterminated string");
        char e = p->s[p->i + 1];
        static const char escapes[] = "\"\\/bfnrt";
        static const char decoded[] = "\"\\/\b\f\n\r\t";
        const char *simple = e ? strchr(escapes, e) : NULL;
        if (simple) {
            if (!pool_put(d, &decoded[simple - escapes], 1))
                return nomem(p);
            p->i += 2;
            continue;
        }
        if (e != 'u' || p->i + 6 > p->len)
            return fail(p, p->i, "bad escape in a string");
        int hi = hex4(p->s + p->i + 2);
        if (hi < 0)
            return fail(p, p->i, "bad \\u escape in a string");
        unsigned long cp = (unsigned long)hi;
        p->i += 6;
        if (hi >= 0xD800 && hi <= 0xDBFF) {
            int lo = (p->i + 6 <= p->len && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u')
                         ? hex4(p->s + p->i + 2)
                         : -1;
            if (lo < 0xDC00 || lo > 0xDFFF)
                return fail(p, p->i, "unpaired surrogate in a string");
            cp = 0x10000 + (((unsigned long)hi - 0xD800) << 10) + ((unsigned long)lo - 0xDC00);
            p->i += 6;
        } else if (hi >= 0xDC00 && hi <= 0xDFFF) {
            return fail(p, p->i - 6, "unpaired surrogate in a string");
        }
        if (cp == 0)
            return fail(p, p->i - 6, "\\u0000 in a string");
        if (!put_utf8(d, cp))
            return nomem(p);
    }
}

static bool word_at(const parser *p, const char *w)
{
    size_t n = strlen(w);
    if (p->len - p->i < n || memcmp(p->s + p->i, w, n) != 0)
        return false;
    return p->i + n == p->len || !isalnum((unsigned char)p->s[p->i + n]);
}

/* A number's spelling: RFC 8259 grammar, or nan/inf/-inf. */
static cct_status number(parser *p, size_t *off)
{
    size_t start = p->i;
    const char *s = p->s;
    size_t i = p->i, n = p->len;
    const char *words[] = {"-nan", "nan", "-inf", "inf"};
    for (size_t k = 0; k < 4; k++)
        if (word_at(p, words[k])) {
            p->i += strlen(words[k]);
            *off = p->doc->pool_len;
            return pool_put(p->doc, words[k], strlen(words[k])) && end_string(p->doc) ? CCT_OK
                                                                                      : nomem(p);
        }
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0') {
        i++;
    } else if (i < n && s[i] >= '1' && s[i] <= '9') {
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
    } else {
        return fail(p, start, "bad number");
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !isdigit((unsigned char)s[i]))
            return fail(p, start, "bad number");
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !isdigit((unsigned char)s[i]))
            return fail(p, start, "bad number");
        while (i < n && isdigit((unsigned char)s[i]))
            i++;
    }
    if (i < n && (isalnum((unsigned char)s[i]) || s[i] == '.'))
        return fail(p, start, "bad number");
    p->i = i;
    *off = p->doc->pool_len;
    return pool_put(p->doc, s + start, i - start) && end_string(p->doc) ? CCT_OK : nomem(p);
}

/* Append a node under parent (CCT_JSON_NONE: the root). */
static cct_status add_node(parser *p, size_t parent, int type, size_t key, size_t at, size_t *out)
{
    cct_json_doc *d = p->doc;
    if (!cct_grow((void **)&d->nodes, &d->cap_nodes, d->n_nodes + 1, sizeof *d->nodes))
        return nomem(p);
    size_t id = d->n_nodes++;
    d->nodes[id] = (cct_json_node){.type = type,
                                   .line = p->line,
                                   .col = col_of(p, at),
                                   .key = key,
                                   .text = CCT_JSON_NONE,
                                   .first = CCT_JSON_NONE,
                                   .last = CCT_JSON_NONE,
                                   .next = CCT_JSON_NONE};
    if (parent != CCT_JSON_NONE) {
        cct_json_node *par = &d->nodes[parent];
        if (par->last == CCT_JSON_NONE)
            par->first = id;
        else
            d->nodes[par->last].next = id;
        par->last = id;
        par->count++;
    }
    *out = id;
    return CCT_OK;
}

enum { S_VALUE, S_VALUE_OR_END, S_KEY, S_KEY_OR_END, S_COLON, S_AFTER };

/* Parse one scalar or open a container at p->i. */
static cct_status value(parser *p, size_t parent, size_t key, size_t *stack, size_t *depth,
                        int *state)
{
    char c = p->s[p->i];
    size_t at = p->i, id;
    cct_status rc;
    if (c == '{' || c == '[') {
        if (*depth >= CCT_JSON_MAX_DEPTH)
            return fail(p, at, "nested deeper than 64 levels");
        rc = add_node(p, parent, c == '{' ? CCT_JSON_OBJECT : CCT_JSON_ARRAY, key, at, &id);
        if (rc != CCT_OK)
            return rc;
        stack[(*depth)++] = id;
        p->i++;
        *state = c == '{' ? S_KEY_OR_END : S_VALUE_OR_END;
        return CCT_OK;
    }
    int type;
    size_t text = CCT_JSON_NONE;
    bool b = false;
    if (c == '"') {
        type = CCT_JSON_STRING;
        rc = string(p, &text);
    } else if (word_at(p, "true") || word_at(p, "false")) {
        type = CCT_JSON_BOOL;
        b = c == 't';
        p->i += b ? 4 : 5;
        rc = CCT_OK;
    } else if (word_at(p, "null")) {
        type = CCT_JSON_NULL;
        p->i += 4;
        rc = CCT_OK;
    } else if (c == '-' || isdigit((unsigned char)c) || c == 'n' || c == 'i') {
        type = CCT_JSON_NUMBER;
        rc = number(p, &text);
    } else {
        return fail(p, at,
                    (unsigned char)c < 0x20 || (unsigned char)c >= 0x7f
                        ? "unexpected byte: not JSON"
                        : "expected a value");
    }
    if (rc == CCT_OK)
        rc = add_node(p, parent, type, key, at, &id);
    if (rc == CCT_OK) {
        p->doc->nodes[id].text = text;
        p->doc->nodes[id].boolean = b;
        *state = S_AFTER;
    }
    return rc;
}

static cct_status member_name(parser *p, size_t object, size_t *key)
{
    size_t at = p->i;
    cct_status rc = string(p, key);
    if (rc != CCT_OK)
        return rc;
    cct_json_doc *d = p->doc;
    if (d->nodes[object].count >= CCT_JSON_MAX_MEMBERS)
        return fail(p, at, "object with too many members");
    for (size_t k = d->nodes[object].first; k != CCT_JSON_NONE; k = d->nodes[k].next)
        if (strcmp(d->pool + d->nodes[k].key, d->pool + *key) == 0)
            return fail(p, at, "duplicate member name");
    return CCT_OK;
}

cct_status cct_json_parse(cct_json_doc *doc, const char *data, size_t len, const char *name,
                          cct_error *err)
{
    cct_json_destroy(doc);
    parser p = {doc, data, len, 0, 1, 0, name, err};
    size_t stack[CCT_JSON_MAX_DEPTH], depth = 0, key = CCT_JSON_NONE;
    int state = S_VALUE;
    cct_status rc = CCT_OK;
    while (rc == CCT_OK) {
        skip_ws(&p);
        if (p.i >= p.len) {
            if (state == S_AFTER && depth == 0)
                return CCT_OK;
            rc = fail(&p, p.i,
                      doc->n_nodes ? "unexpected end: the JSON is truncated"
                                   : "empty input: no JSON value");
            break;
        }
        char c = p.s[p.i];
        size_t parent = depth ? stack[depth - 1] : CCT_JSON_NONE;
        switch (state) {
        case S_VALUE_OR_END:
            if (c == ']') {
                depth--;
                p.i++;
                state = S_AFTER;
                break;
            }
            /* fall through */
        case S_VALUE:
            rc = value(&p, parent, key, stack, &depth, &state);
            key = CCT_JSON_NONE;
            break;
        case S_KEY_OR_END:
            if (c == '}') {
                depth--;
                p.i++;
                state = S_AFTER;
                break;
            }
            /* fall through */
        case S_KEY:
            if (c != '"') {
                rc = fail(&p, p.i, "expected a member name in quotes");
                break;
            }
            rc = member_name(&p, parent, &key);
            state = S_COLON;
            break;
        case S_COLON:
            if (c != ':') {
                rc = fail(&p, p.i, "expected ':' after a member name");
                break;
            }
            p.i++;
            state = S_VALUE;
            break;
        case S_AFTER:
            if (depth == 0) {
                rc = fail(&p, p.i, "text after the end of the JSON value");
                break;
            }
            bool object = doc->nodes[parent].type == CCT_JSON_OBJECT;
            if (c == ',') {
                state = object ? S_KEY : S_VALUE;
            } else if (c == (object ? '}' : ']')) {
                depth--;
            } else {
                rc = fail(&p, p.i, object ? "expected ',' or '}'" : "expected ',' or ']'");
                break;
            }
            p.i++;
            break;
        }
    }
    cct_json_destroy(doc);
    return rc;
}

const cct_json_node *cct_json_root(const cct_json_doc *doc)
{
    return doc->n_nodes ? &doc->nodes[0] : NULL;
}

const cct_json_node *cct_json_member(const cct_json_doc *doc, const cct_json_node *node,
                                     const char *key)
{
    if (!node || node->type != CCT_JSON_OBJECT)
        return NULL;
    for (size_t k = node->first; k != CCT_JSON_NONE; k = doc->nodes[k].next)
        if (strcmp(doc->pool + doc->nodes[k].key, key) == 0)
            return &doc->nodes[k];
    return NULL;
}

const cct_json_node *cct_json_first(const cct_json_doc *doc, const cct_json_node *node)
{
    if (!node || node->first == CCT_JSON_NONE)
        return NULL;
    return &doc->nodes[node->first];
}

const cct_json_node *cct_json_next(const cct_json_doc *doc, const cct_json_node *node)
{
    if (!node || node->next == CCT_JSON_NONE)
        return NULL;
    return &doc->nodes[node->next];
}

const char *cct_json_text(const cct_json_doc *doc, const cct_json_node *node)
{
    if (!node || node->text == CCT_JSON_NONE)
        return "";
    return doc->pool + node->text;
}

const char *cct_json_key(const cct_json_doc *doc, const cct_json_node *node)
{
    if (!node || node->key == CCT_JSON_NONE)
        return "";
    return doc->pool + node->key;
}

const char *cct_json_type_name(int type)
{
    static const char *const names[] = {"null",     "true/false", "a number",
                                        "a string", "an array",   "an object"};
    return type >= 0 && type <= CCT_JSON_OBJECT ? names[type] : "?";
}
