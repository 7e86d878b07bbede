/*
 * cct_table_read.c - the strict YAML table loader (cct_table_load_file / _buffer).
 *
 * libyaml's event parser feeds a recursive-descent reader driven by one descriptor list per
 * kind of mapping (root, provenance, rule, model, ...): which keys exist, their types, which
 * are required.  It descends only where the schema has a mapping or sequence and stops at
 * the first node it did not expect, so recursion depth is the schema's (eight levels)
 * whatever the input, and no document tree is built.  Anchors and aliases are refused, so a
 * hostile table cannot make anything expand.
 *
 * Every error names FILE:LINE:COLUMN (1-based) of the offending node; the shared semantic
 * checks (cct_table_check_section_at) are reported at the entry they blame.  Numbers are
 * parsed in the C locale, whatever the host process (the plugin's) has set.
 */
#include "cct_table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cct_constants.h"
#include "cct_fingerprint.h"
#include "cct_parse.h"
#include "cct_safe_file.h"
#include "cct_suggest.h"

#define MAX_ENV 256          /* recommended_env entries; keeps a hostile table's cost linear */
#define MAX_KEY 256          /* longest mapping key we keep for lookups and messages */
#define MAX_FIELDS 32        /* fields per mapping kind (bitmask width) */
#define MAX_SHOW 48          /* longest piece of input quoted back in a message */
#define MAX_PIPE_OPS INT_MAX /* NCCL passes small numbers; the bound only guards the int */
#define MAX_OFFSET 65535     /* alignment offsets are small byte counts */
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
/* Bounds on numbers no measurement can produce, so a table cannot carry a 300-digit time:
 * times up to 1e12 us (11.6 days per call); gains and penalties are fractions, a gain is
 * other / this - 1, so above -1, and a million-fold difference is not a measurement. */
#define MAX_TIME_US 1000000000000LL
#define MAX_FRACTION 1000000LL

enum { ITEM_RULE, ITEM_MODEL, ITEM_PENALTY, N_ITEM_KINDS };

typedef struct mark_list {
    yaml_mark_t *marks;
    size_t n, cap;
} mark_list;

typedef struct reader {
    yaml_parser_t parser;
    yaml_event_t ev;
    bool have_ev; /* ev holds a parsed event not yet consumed */
    const char *data;
    size_t len;
    const char *name;
    cct_table *table;
    cct_error *err;
    mark_list items[N_ITEM_KINDS]; /* start of each entry of the section being read */
    mark_list sections;            /* start of every section, in table order */
    int version;                   /* the file's ccltune_table (read_format) */
} reader;

typedef struct field field;
typedef cct_status (*value_fn)(reader *r, const field *f, void *obj);

typedef enum field_type {
    FT_STRING,       /* char *, owned by the object */
    FT_INT,          /* int in [min, max] */
    FT_UINT,         /* unsigned in [min, max] */
    FT_BOOL,         /* bool: true / false */
    FT_BOOL_INT,     /* int 0 / 1 written as true / false (reg_buff) */
    FT_SIZE,         /* uint64_t byte count, inf refused */
    FT_SIZE_INF,     /* uint64_t byte count, inf allowed (max_bytes) */
    FT_FLOAT,        /* double, finite; within [min, max] when min < max */
    FT_FLOAT_NONNEG, /* double, finite and >= 0; within [min, max] when min < max */
    FT_FLOAT_POS,    /* double, finite and > 0 (a bandwidth) */
    FT_ALGO,         /* int, cct_algo by its table name */
    FT_PROTO,        /* int, cct_proto by its table name */
    FT_CC,           /* int, compute capability "9.0" -> 90 */
    FT_NCCL,         /* char *, an NCCL version the plugin can match (cct_nccl_version_parse) */
    FT_NCCL_SPEC,    /* char *, NCCL versions and ranges (cct_parse_nccl_versions) */
    FT_LINKS,        /* char *, one of link_names */
    FT_KIND,         /* cct_model_kind by name */
    FT_CUSTOM,       /* the field's own function reads the value */
    FT_SEQ           /* a sequence; the field's function reads each item */
} field_type;

struct field {
    const char *name;
    field_type type;
    bool required;
    size_t offset;
    long long min, max;
    value_fn fn;
};

static const char *const link_names[] = {"nvlink", "pcie", "net", "socket", "local", "unknown"};
#define N_LINKS 6
static const char *const kind_names[] = {"linear", "segmented", "piecewise"};
#define N_KINDS 3

/* ---- messages ---- */

static cct_status fail_at(reader *r, yaml_mark_t m, cct_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static cct_status fail_at(reader *r, yaml_mark_t m, cct_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    unsigned line = m.line >= UINT_MAX ? UINT_MAX : (unsigned)m.line + 1;
    unsigned col = m.column >= UINT_MAX ? UINT_MAX : (unsigned)m.column + 1;
    cct_error_vat(r->err, code, r->name, line, col, fmt, ap);
    va_end(ap);
    return code;
}

/* A piece of input fit to quote in a one-line message: control bytes become '?', and a
 * long value is cut with "..." so an error line stays readable. */
static const char *show(const char *text, size_t len, char *buf, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 4 < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (k + 4 >= cap && len > k) {
        /* never end on a partial UTF-8 sequence */
        while (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0x80)
            k--;
        if (k > 0 && (unsigned char)buf[k - 1] >= 0xc0)
            k--;
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = '\0';
    return buf;
}

/* 1-based line and column of a byte offset; columns count characters, as libyaml does. */
static yaml_mark_t mark_of_offset(const reader *r, size_t offset)
{
    yaml_mark_t m = {0, 0, 0};
    for (size_t i = 0; i < offset && i < r->len; i++) {
        unsigned char c = (unsigned char)r->data[i];
        if (c == '\n') {
            m.line++;
            m.column = 0;
        } else if ((c & 0xc0) != 0x80) {
            m.column++;
        }
    }
    m.index = offset;
    return m;
}

static cct_status syntax_error(reader *r)
{
    yaml_parser_t *p = &r->parser;
    const char *problem = p->problem ? p->problem : "malformed YAML";
    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory while parsing");
    case YAML_READER_ERROR:
        if (p->problem_value >= 0)
            return fail_at(r, mark_of_offset(r, p->problem_offset), CCT_EPARSE,
                           "invalid input: %s (#x%X)", problem, (unsigned)p->problem_value);
        return fail_at(r, mark_of_offset(r, p->problem_offset), CCT_EPARSE, "invalid input: %s",
                       problem);
    default:
        break;
    }
    if (p->context)
        return fail_at(r, p->problem_mark, CCT_EPARSE, "YAML syntax error: %s (%s at %u:%u)",
                       problem, p->context, (unsigned)p->context_mark.line + 1,
                       (unsigned)p->context_mark.column + 1);
    return fail_at(r, p->problem_mark, CCT_EPARSE, "YAML syntax error: %s", problem);
}

/* ---- events ---- */

/* The next event, parsed on demand; it stays current until consume(). */
static cct_status peek(reader *r, yaml_event_t **ev)
{
    if (!r->have_ev) {
        if (!yaml_parser_parse(&r->parser, &r->ev))
            return syntax_error(r);
        r->have_ev = true;
    }
    *ev = &r->ev;
    return CCT_OK;
}

static void consume(reader *r)
{
    if (r->have_ev) {
        yaml_event_delete(&r->ev);
        r->have_ev = false;
    }
}

static const char *node_kind(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return "a scalar";
    case YAML_SEQUENCE_START_EVENT:
        return "a sequence";
    case YAML_MAPPING_START_EVENT:
        return "a mapping";
    case YAML_ALIAS_EVENT:
        return "an alias";
    default:
        return "nothing";
    }
}

/* The current event must start a node of `type` ("what" names it for the message).  Anchors,
 * aliases and tags are refused here, once, for every node of the document. */
static cct_status expect_node(reader *r, yaml_event_type_t type, const char *what,
                              yaml_event_t **out)
{
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    yaml_char_t *anchor = NULL, *tag = NULL;
    if (ev->type == YAML_ALIAS_EVENT)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "aliases are not allowed in a table");
    if (ev->type == YAML_SCALAR_EVENT) {
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
    }
    if (anchor)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "anchors are not allowed in a table");
    if (tag)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "tags are not allowed in a table");
    if (ev->type != type) {
        const char *want = type == YAML_SCALAR_EVENT           ? "a scalar"
                           : type == YAML_SEQUENCE_START_EVENT ? "a sequence"
                                                               : "a mapping";
        return fail_at(r, ev->start_mark, CCT_EINVAL, "%s must be %s, not %s", what, want,
                       node_kind(ev));
    }
    *out = ev;
    return CCT_OK;
}

static bool is_plain(const yaml_event_t *ev)
{
    return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* A plain scalar that YAML reads as null: an empty value, ~ or null. */
static bool is_null(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    return is_plain(ev) && (v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
                            strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

static bool has_nul(const yaml_event_t *ev)
{
    return strlen((const char *)ev->data.scalar.value) != ev->data.scalar.length;
}

static cct_status push_mark(reader *r, mark_list *l, yaml_mark_t m)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        yaml_mark_t *p = realloc(l->marks, cap * sizeof *p);
        if (!p)
            return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
        l->marks = p;
        l->cap = cap;
    }
    l->marks[l->n++] = m;
    return CCT_OK;
}

/* ---- mappings ---- */

/* One key of a mapping: its text (cut at MAX_KEY - 1 bytes), its full length and where it
 * stands. */
typedef struct map_key {
    char text[MAX_KEY];
    size_t len;
    yaml_mark_t at;
} map_key;

/* Read the next key of the current mapping into *k.  *done is set, and the end consumed,
 * when the mapping has no more keys. */
static cct_status next_key(reader *r, map_key *k, bool *done)
{
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    if (ev->type == YAML_MAPPING_END_EVENT) {
        consume(r);
        *done = true;
        return CCT_OK;
    }
    *done = false;
    if ((st = expect_node(r, YAML_SCALAR_EVENT, "a key", &ev)) != CCT_OK)
        return st;
    if (has_nul(ev))
        return fail_at(r, ev->start_mark, CCT_EINVAL, "a key contains a NUL character");
    size_t len = ev->data.scalar.length;
    size_t keep = len < MAX_KEY ? len : MAX_KEY - 1;
    memcpy(k->text, ev->data.scalar.value, keep);
    k->text[keep] = '\0';
    k->len = len;
    k->at = ev->start_mark;
    consume(r);
    return CCT_OK;
}

/* Reads one key's value (the reader stands at it); ctx is the caller's state. */
typedef cct_status (*key_reader)(reader *r, const map_key *k, void *ctx);

/* Read a mapping (`what` names it in errors): each key in turn, its value by read_key.
 * *start, when start is set, gets where the mapping begins. */
static cct_status read_mapping(reader *r, const char *what, key_reader read_key, void *ctx,
                               yaml_mark_t *start)
{
    yaml_event_t *ev = NULL;
    cct_status st = expect_node(r, YAML_MAPPING_START_EVENT, what, &ev);
    if (st != CCT_OK)
        return st;
    if (start)
        *start = ev->start_mark;
    consume(r);
    for (;;) {
        map_key k;
        bool done;
        if ((st = next_key(r, &k, &done)) != CCT_OK || done)
            return st;
        if ((st = read_key(r, &k, ctx)) != CCT_OK)
            return st;
    }
}

static cct_status unknown_key(reader *r, yaml_mark_t m, const char *key, size_t len,
                              const char *const *known, size_t n_known)
{
    char shown[MAX_SHOW];
    show(key, len, shown, sizeof shown);
    const char *guess = len < MAX_KEY ? cct_suggest(key, known, n_known) : NULL;
    if (guess)
        return fail_at(r, m, CCT_EINVAL, "unknown key '%s' (did you mean '%s'?)", shown, guess);
    return fail_at(r, m, CCT_EINVAL, "unknown key '%s'", shown);
}

static cct_status duplicate_key(reader *r, yaml_mark_t m, const char *key, yaml_mark_t first)
{
    return fail_at(r, m, CCT_EINVAL, "duplicate key '%s' (first at %u:%u)", key,
                   (unsigned)first.line + 1, (unsigned)first.column + 1);
}

/* Note k as read at its slot (*seen, *first_at), or fail if that slot was read before. */
static cct_status claim_key(reader *r, const map_key *k, bool *seen, yaml_mark_t *first_at)
{
    if (*seen)
        return duplicate_key(r, k->at, k->text, *first_at);
    *seen = true;
    *first_at = k->at;
    return CCT_OK;
}

/* What a mapping of fields has been given: which keys, and where each key stood. */
typedef struct seen_keys {
    uint32_t mask;
    yaml_mark_t at[MAX_FIELDS];
    yaml_mark_t start; /* the mapping itself */
} seen_keys;

static cct_status read_value(reader *r, const field *f, void *obj);

/* Read a mapping whose keys are `fields`: every key known, none twice, all required ones
 * present; each value goes to obj + field offset.  With first_key set, that key must open
 * the mapping (the format version, so a future format is refused by version, not by the
 * first new key the reader would not know). */
/* read_fields' state while it reads its mapping. */
typedef struct fields_reading {
    const field *fields;
    size_t n;
    void *obj;
    const char *first_key;
    bool first; /* no key read yet */
    const char *names[MAX_FIELDS];
    seen_keys *seen;
} fields_reading;

static cct_status read_field_key(reader *r, const map_key *k, void *ctx)
{
    fields_reading *fr = ctx;
    bool first = fr->first;
    fr->first = false;
    size_t i = 0;
    while (i < fr->n && (k->len >= MAX_KEY || strcmp(k->text, fr->fields[i].name) != 0))
        i++;
    if (first && fr->first_key && (i == fr->n || strcmp(fr->fields[i].name, fr->first_key) != 0))
        return fail_at(r, k->at, CCT_EINVAL,
                       "a table must start with '%s: %d' (its format version)", fr->first_key,
                       CCT_TABLE_FORMAT);
    if (i == fr->n)
        return unknown_key(r, k->at, k->text, k->len, fr->names, fr->n);
    if (fr->seen->mask & (1u << i))
        return duplicate_key(r, k->at, k->text, fr->seen->at[i]);
    fr->seen->mask |= 1u << i;
    fr->seen->at[i] = k->at;
    return read_value(r, &fr->fields[i], fr->obj);
}

static cct_status read_fields(reader *r, const char *what, const field *fields, size_t n, void *obj,
                              const char *first_key, seen_keys *seen)
{
    fields_reading fr = {fields, n, obj, first_key, true, {NULL}, seen};
    for (size_t i = 0; i < n; i++)
        fr.names[i] = fields[i].name;
    memset(seen, 0, sizeof *seen);
    cct_status st = read_mapping(r, what, read_field_key, &fr, &seen->start);
    if (st != CCT_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        if (fields[i].required && !(seen->mask & (1u << i)))
            return fail_at(r, seen->start, CCT_EINVAL, "%s is missing the required key '%s'", what,
                           fields[i].name);
    return CCT_OK;
}

static bool field_seen(const seen_keys *seen, const field *fields, size_t n, const char *name,
                       yaml_mark_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name, name) == 0 && (seen->mask & (1u << i))) {
            *at = seen->at[i];
            return true;
        }
    return false;
}

/* ---- scalars ---- */

/* Digits with an optional minus sign and no leading zeros (YAML 1.1 would read 010 as
 * octal; a table must mean the same to every reader). */
static bool parse_integer(const char *s, long long *out, bool *overflow)
{
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
        return false;
    *overflow = false;
    unsigned long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (ULLONG_MAX - d) / 10)
            *overflow = true;
        else
            v = v * 10 + d;
    }
    if (v > (unsigned long long)LLONG_MAX)
        *overflow = true;
    *out = *overflow ? 0 : (neg ? -(long long)v : (long long)v);
    return true;
}

/* A decimal number: [-+]digits[.digits][e[-+]digits], or with only a fraction.  strtod
 * alone would also take "nan", "inf", hex floats and leading blanks. */
static bool is_decimal(const char *s)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* Index of text in names[], exactly (table spellings are lower case), or -1. */
static int name_index(const char *text, const char *(*name_of)(int), int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(text, name_of(i)) == 0)
            return i;
    return -1;
}

static const char *link_name(int i)
{
    return link_names[i];
}
static const char *kind_name(int i)
{
    return kind_names[i];
}

static cct_status unknown_name(reader *r, yaml_mark_t at, const char *what, const char *text,
                               size_t len, const char *(*name_of)(int), int n)
{
    const char *names[16];
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < n && i < 16; i++) {
        names[i] = name_of(i);
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    char shown[MAX_SHOW];
    show(text, len, shown, sizeof shown);
    const char *guess = cct_suggest(text, names, (size_t)(n < 16 ? n : 16));
    if (guess)
        return fail_at(r, at, CCT_EINVAL, "unknown %s '%s' (did you mean '%s'?)", what, shown,
                       guess);
    return fail_at(r, at, CCT_EINVAL, "unknown %s '%s' (expected one of %s)", what, shown, list);
}

static cct_status read_size(reader *r, const field *f, const yaml_event_t *ev, uint64_t *out)
{
    const char *text = (const char *)ev->data.scalar.value;
    char shown[MAX_SHOW];
    show(text, ev->data.scalar.length, shown, sizeof shown);
    if (!is_plain(ev) || is_null(ev))
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'%s' must be a byte count (an unquoted integer%s)", f->name,
                       f->type == FT_SIZE_INF ? " or inf" : "");
    if (text[0] == '-')
        return fail_at(r, ev->start_mark, CCT_EINVAL, "'%s' must not be negative, got %s", f->name,
                       shown);
    bool inf_text = strcasecmp(text, "inf") == 0;
    if (inf_text && f->type != FT_SIZE_INF)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "'%s' cannot be inf (only max_bytes can)",
                       f->name);
    if (inf_text && strcmp(text, "inf") != 0)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "'%s': write inf in lower case", f->name);
    if (text[0] == '0' && text[1] >= '0' && text[1] <= '9')
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'%s' has a leading zero (%s); write the number without it", f->name, shown);
    cct_error perr;
    cct_error_clear(&perr);
    bool ok = cct_parse_bytes(text, out, &perr) == CCT_OK;
    /* a number that lands on UINT64_MAX would silently mean inf */
    if ((ok && !inf_text && *out == CCT_BYTES_INF) || (!ok && strstr(perr.msg, "too large")))
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'%s' %s is too large (sizes must be below 2^64 - 1)", f->name, shown);
    if (!ok)
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'%s' must be a byte count like 65536 or 64KiB, got '%s'", f->name, shown);
    return CCT_OK;
}

static cct_status read_scalar_field(reader *r, const field *f, void *obj)
{
    yaml_event_t *ev = NULL;
    char what[80];
    snprintf(what, sizeof what, "'%s'", f->name);
    cct_status st = expect_node(r, YAML_SCALAR_EVENT, what, &ev);
    if (st != CCT_OK)
        return st;
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    yaml_mark_t at = ev->start_mark;
    char shown[MAX_SHOW];
    show(text, len, shown, sizeof shown);
    char *slot = (char *)obj + f->offset;
    if (has_nul(ev))
        return fail_at(r, at, CCT_EINVAL, "'%s' contains a NUL character", f->name);

    switch (f->type) {
    case FT_STRING:
    case FT_LINKS:
    case FT_NCCL_SPEC:
    case FT_NCCL: {
        if (is_null(ev))
            return fail_at(r, at, CCT_EINVAL, "'%s' must be a string, not null", f->name);
        if (f->type == FT_LINKS && name_index(text, link_name, N_LINKS) < 0)
            return unknown_name(r, at, "link kind", text, len, link_name, N_LINKS);
        /* the plugin matches it with the same function: what it cannot read, we refuse */
        if (f->type == FT_NCCL && cct_nccl_version_parse(text) < 0)
            return fail_at(r, at, CCT_EINVAL,
                           "'%s' must be an NCCL version like \"2.28.9\", got '%s'", f->name,
                           shown);
        cct_error bad;
        if (f->type == FT_NCCL_SPEC && cct_parse_nccl_versions(f->name, text, NULL, &bad) != CCT_OK)
            return fail_at(r, at, CCT_EINVAL, "%s", bad.msg);
        char *copy = malloc(len + 1);
        if (!copy)
            return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
        memcpy(copy, text, len + 1);
        char **dst = (char **)(void *)slot;
        free(*dst);
        *dst = copy;
        break;
    }
    case FT_INT:
    case FT_UINT: {
        long long v;
        bool overflow;
        if (!is_plain(ev))
            return fail_at(r, at, CCT_EINVAL, "'%s' must be an unquoted integer, got \"%s\"",
                           f->name, shown);
        if (!parse_integer(text, &v, &overflow))
            return fail_at(r, at, CCT_EINVAL, "'%s' must be an integer, got '%s'", f->name, shown);
        if (overflow || v < f->min || v > f->max)
            return fail_at(r, at, CCT_EINVAL, "'%s' must be %lld..%lld, got %s", f->name, f->min,
                           f->max, shown);
        if (f->type == FT_INT)
            *(int *)(void *)slot = (int)v;
        else
            *(unsigned *)(void *)slot = (unsigned)v;
        break;
    }
    case FT_BOOL:
    case FT_BOOL_INT: {
        bool t = is_plain(ev) && strcmp(text, "true") == 0;
        bool fl = is_plain(ev) && strcmp(text, "false") == 0;
        if (!t && !fl)
            return fail_at(r, at, CCT_EINVAL, "'%s' must be true or false, got '%s'", f->name,
                           shown);
        if (f->type == FT_BOOL)
            *(bool *)(void *)slot = t;
        else
            *(int *)(void *)slot = t ? 1 : 0;
        break;
    }
    case FT_SIZE:
    case FT_SIZE_INF: {
        uint64_t v = 0;
        if ((st = read_size(r, f, ev, &v)) != CCT_OK)
            return st;
        *(uint64_t *)(void *)slot = v;
        break;
    }
    case FT_FLOAT:
    case FT_FLOAT_NONNEG:
    case FT_FLOAT_POS: {
        if (!is_plain(ev) || !is_decimal(text))
            return fail_at(r, at, CCT_EINVAL, "'%s' must be a finite decimal number, got '%s'",
                           f->name, shown);
        errno = 0;
        double v = strtod(text, NULL);
        if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
            return fail_at(r, at, CCT_EINVAL, "'%s' %s is out of range", f->name, shown);
        if (f->type == FT_FLOAT_NONNEG && v < 0.0)
            return fail_at(r, at, CCT_EINVAL, "'%s' must be >= 0, got %s", f->name, shown);
        if (f->type == FT_FLOAT_POS && !(v > 0.0))
            return fail_at(r, at, CCT_EINVAL,
                           "'%s' must be > 0 (a bandwidth; leave it out for a flat line), got %s",
                           f->name, shown);
        if (f->min < f->max && (v < (double)f->min || v > (double)f->max))
            return fail_at(r, at, CCT_EINVAL, "'%s' must be from %g to %g, got %s", f->name,
                           (double)f->min, (double)f->max, shown);
        *(double *)(void *)slot = v;
        break;
    }
    case FT_ALGO:
    case FT_PROTO: {
        bool algo = f->type == FT_ALGO;
        int v = algo ? name_index(text, cct_algo_name, CCT_NUM_ALGOS)
                     : name_index(text, cct_proto_name, CCT_NUM_PROTOS);
        if (v < 0)
            return algo
                       ? unknown_name(r, at, "algorithm", text, len, cct_algo_name, CCT_NUM_ALGOS)
                       : unknown_name(r, at, "protocol", text, len, cct_proto_name, CCT_NUM_PROTOS);
        *(int *)(void *)slot = v;
        break;
    }
    case FT_CC: {
        int cc = cct_cc_parse(text);
        if (cc < 0 || is_null(ev))
            return fail_at(r, at, CCT_EINVAL,
                           "'%s' must be a compute capability like \"9.0\", got '%s'", f->name,
                           shown);
        *(int *)(void *)slot = cc;
        break;
    }
    case FT_KIND: {
        int k = name_index(text, kind_name, N_KINDS);
        if (k < 0)
            return unknown_name(r, at, "model kind", text, len, kind_name, N_KINDS);
        *(cct_model_kind *)(void *)slot = (cct_model_kind)k;
        break;
    }
    case FT_CUSTOM:
    case FT_SEQ:
        break;
    }
    consume(r);
    return CCT_OK;
}

static cct_status read_value(reader *r, const field *f, void *obj)
{
    if (f->type == FT_CUSTOM)
        return f->fn(r, f, obj);
    if (f->type != FT_SEQ)
        return read_scalar_field(r, f, obj);
    yaml_event_t *ev = NULL;
    char what[80];
    snprintf(what, sizeof what, "'%s'", f->name);
    cct_status st = expect_node(r, YAML_SEQUENCE_START_EVENT, what, &ev);
    if (st != CCT_OK)
        return st;
    consume(r);
    for (;;) {
        if ((st = peek(r, &ev)) != CCT_OK)
            return st;
        if (ev->type == YAML_SEQUENCE_END_EVENT) {
            consume(r);
            return CCT_OK;
        }
        if ((st = f->fn(r, f, obj)) != CCT_OK)
            return st;
    }
}

/* ---- the schema ---- */

#define FIELD(struct_, name, type, req)                                                            \
    {                                                                                              \
#name, type, req, offsetof(struct_, name), 0, 0, NULL                                      \
    }
#define INT_FIELD(struct_, name, type, req, lo, hi)                                                \
    {                                                                                              \
#name, type, req, offsetof(struct_, name), lo, hi, NULL                                    \
    }

/* ---- format 2: measured (format 1: created), command, channels: max, evidence ---- */

/* A key format 1 does not have: refused in a version-1 table (at its value), which an older
 * build would refuse as well. */
static cct_status need_format2(reader *r, const char *key)
{
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st == CCT_OK && r->version < 2)
        st = fail_at(r, ev->start_mark, CCT_EINVAL,
                     "'%s' is new in format 2, but this table says 'ccltune_table: %d'", key,
                     r->version);
    return st;
}

/* provenance.created (format 1) and provenance.measured (format 2): the same field, the time
 * the measurements were taken (cct_table.h); format 2 renamed it to say so. */
static cct_status read_measured(reader *r, const field *f, void *obj)
{
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    bool old_name = strcmp(f->name, "created") == 0;
    if (old_name && r->version >= 2)
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'created' is called 'measured' since format 2 (it is when the "
                       "measurements were taken, not when the file was written)");
    if (!old_name && (st = need_format2(r, f->name)) != CCT_OK)
        return st;
    const field as_string = {f->name, FT_STRING, false, offsetof(cct_provenance, created),
                             0,       0,         NULL};
    return read_scalar_field(r, &as_string, obj);
}

static cct_status read_command(reader *r, const field *f, void *obj)
{
    cct_status st = need_format2(r, f->name);
    const field as_string = {f->name, FT_STRING, false, offsetof(cct_provenance, command),
                             0,       0,         NULL};
    return st == CCT_OK ? read_scalar_field(r, &as_string, obj) : st;
}

/* A channel count: an integer in the field's range, or (format 2) `max`, the most a table
 * allows, which NCCL clamps to the communicator's channels -- what the search's `max` means. */
static cct_status read_channels(reader *r, const field *f, void *obj)
{
    yaml_event_t *ev = NULL;
    cct_status st = expect_node(r, YAML_SCALAR_EVENT, "'channels'", &ev);
    if (st != CCT_OK)
        return st;
    if (is_plain(ev) && strcmp((const char *)ev->data.scalar.value, "max") == 0) {
        if ((st = need_format2(r, "channels: max")) != CCT_OK)
            return st;
        *(int *)(void *)((char *)obj + f->offset) = CCT_TABLE_MAX_CHANNELS;
        consume(r);
        return CCT_OK;
    }
    const field as_int = {f->name, FT_INT, false, f->offset, f->min, f->max, NULL};
    return read_scalar_field(r, &as_int, obj);
}

/* evidence: {gain, ci: [low, high], noise, cycles} as read, before its checks. */
typedef struct evidence_reading {
    double gain, noise;
    double ci[2];
    int n_ci;
    int cycles;
} evidence_reading;

static cct_status read_ci_item(reader *r, const field *f, void *obj)
{
    evidence_reading *e = obj;
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    if (e->n_ci >= 2)
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'ci' holds two numbers, [low, high]: a third one here");
    const field as_float = {f->name, FT_FLOAT, false, 0, 0, 0, NULL};
    return read_scalar_field(r, &as_float, &e->ci[e->n_ci++]);
}

static const field evidence_fields[] = {
    {"gain", FT_FLOAT, true, offsetof(evidence_reading, gain), 0, 0, NULL},
    {"ci", FT_SEQ, true, 0, 0, 0, read_ci_item},
    {"noise", FT_FLOAT_NONNEG, true, offsetof(evidence_reading, noise), 0, 0, NULL},
    {"cycles", FT_INT, true, offsetof(evidence_reading, cycles), 1, INT_MAX, NULL},
};

/* A rule's measured evidence (docs/table-format.md): `none` where the source had no NCCL
 * baseline, else the gain over NCCL's choice inside its interval, a noise floor >= 0 and at
 * least one cycle. */
static cct_status read_evidence(reader *r, const field *f, void *obj)
{
    cct_rule *rule = obj;
    cct_status st = need_format2(r, f->name);
    yaml_event_t *ev = NULL;
    if (st == CCT_OK)
        st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    if (ev->type == YAML_SCALAR_EVENT) {
        if ((st = expect_node(r, YAML_SCALAR_EVENT, "'evidence'", &ev)) != CCT_OK)
            return st;
        char shown[MAX_SHOW];
        show((const char *)ev->data.scalar.value, ev->data.scalar.length, shown, sizeof shown);
        if (!is_plain(ev) || strcmp((const char *)ev->data.scalar.value, "none") != 0)
            return fail_at(r, ev->start_mark, CCT_EINVAL,
                           "'evidence' must be none or {gain, ci, noise, cycles}, got '%s'", shown);
        rule->no_baseline = true;
        consume(r);
        return CCT_OK;
    }
    evidence_reading e = {0, 0, {0, 0}, 0, 0};
    seen_keys seen;
    if ((st = read_fields(r, "'evidence'", evidence_fields, N_OF(evidence_fields), &e, NULL,
                          &seen)) != CCT_OK)
        return st;
    if (e.n_ci != 2)
        return fail_at(r, seen.at[1], CCT_EINVAL, "'ci' must hold two numbers, [low, high]");
    if (!(e.gain > 0))
        return fail_at(r, seen.at[0], CCT_EINVAL,
                       "'gain' must be above 0 (NCCL's time over this rule's), got %g", e.gain);
    if (!(e.ci[0] <= e.gain && e.gain <= e.ci[1]))
        return fail_at(r, seen.at[1], CCT_EINVAL, "'ci' [%g, %g] must contain the gain %g", e.ci[0],
                       e.ci[1], e.gain);
    rule->gain = e.gain;
    rule->gain_lo = e.ci[0];
    rule->gain_hi = e.ci[1];
    rule->noise = e.noise;
    rule->cycles = e.cycles;
    return CCT_OK;
}

static const field provenance_fields[] = {
    FIELD(cct_provenance, tool, FT_STRING, true),
    {"created", FT_CUSTOM, false, 0, 0, 0, read_measured},
    {"measured", FT_CUSTOM, false, 0, 0, 0, read_measured},
    FIELD(cct_provenance, nccl, FT_STRING, false),
    FIELD(cct_provenance, source, FT_STRING, true),
    FIELD(cct_provenance, runs, FT_STRING, false),
    {"command", FT_CUSTOM, false, 0, 0, 0, read_command},
    FIELD(cct_provenance, note, FT_STRING, false),
};

static const field fingerprint_fields[] = {
    FIELD(cct_fingerprint, gpu, FT_STRING, true),
    FIELD(cct_fingerprint, cc, FT_CC, true),
    INT_FIELD(cct_fingerprint, gpus_per_node, FT_INT, true, 1, CCT_TABLE_MAX_RANKS),
    INT_FIELD(cct_fingerprint, nodes, FT_INT, true, 1, CCT_TABLE_MAX_RANKS),
    INT_FIELD(cct_fingerprint, ranks_per_gpu, FT_INT, false, 1, CCT_TABLE_MAX_RANKS),
    FIELD(cct_fingerprint, links, FT_LINKS, true),
    FIELD(cct_fingerprint, nccl, FT_NCCL, true),
    FIELD(cct_fingerprint, nccl_versions, FT_NCCL_SPEC, false),
    FIELD(cct_fingerprint, cuda, FT_STRING, false),
};

static const field ll128_fields[] = {
    {"allowed", FT_BOOL, true, offsetof(cct_table, ll128_allowed), 0, 0, NULL},
    {"reason", FT_STRING, false, offsetof(cct_table, ll128_reason), 0, 0, NULL},
};

static const field rule_fields[] = {
    FIELD(cct_rule, min_bytes, FT_SIZE, true),
    FIELD(cct_rule, max_bytes, FT_SIZE_INF, true),
    FIELD(cct_rule, algo, FT_ALGO, true),
    FIELD(cct_rule, proto, FT_PROTO, true),
    {"channels", FT_CUSTOM, false, offsetof(cct_rule, channels), 0, CCT_TABLE_MAX_CHANNELS,
     read_channels},
    FIELD(cct_rule, chunk_bytes, FT_SIZE, false),
    INT_FIELD(cct_rule, predicted_us, FT_FLOAT_NONNEG, false, 0, MAX_TIME_US),
    INT_FIELD(cct_rule, margin, FT_FLOAT, false, -1, MAX_FRACTION),
    INT_FIELD(cct_rule, margin_default, FT_FLOAT, false, -1, MAX_FRACTION),
    FIELD(cct_rule, ref_bytes, FT_SIZE, false),
    {"evidence", FT_CUSTOM, false, 0, 0, 0, read_evidence},
};

static const field segment_fields[] = {
    FIELD(cct_model_segment, from_bytes, FT_SIZE, true),
    INT_FIELD(cct_model_segment, alpha_us, FT_FLOAT, false, -MAX_TIME_US, MAX_TIME_US),
    INT_FIELD(cct_model_segment, alpha_ci, FT_FLOAT_NONNEG, false, 0, MAX_TIME_US),
    FIELD(cct_model_segment, beta_gbps, FT_FLOAT_POS, false),
    FIELD(cct_model_segment, beta_ci, FT_FLOAT_NONNEG, false),
};

/* One line of a piecewise model; lines must start at 0 and be listed by increasing size. */
static cct_status read_segment(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_model *m = obj;
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev);
    if (st != CCT_OK)
        return st;
    if (m->n_segments >= CCT_MODEL_MAX_SEGMENTS)
        return fail_at(r, ev->start_mark, CCT_EINVAL, "a model has at most %d segments",
                       CCT_MODEL_MAX_SEGMENTS);
    cct_model_segment seg = {0, NAN, NAN, NAN, NAN};
    seen_keys seen;
    if ((st = read_fields(r, "a segment", segment_fields, N_OF(segment_fields), &seg, NULL,
                          &seen)) != CCT_OK)
        return st;
    int i = m->n_segments;
    if (i == 0 && seg.from_bytes != 0)
        return fail_at(r, seen.at[0], CCT_EINVAL, "the first segment must have from_bytes 0");
    if (i > 0 && seg.from_bytes <= m->segments[i - 1].from_bytes)
        return fail_at(r, seen.at[0], CCT_EINVAL,
                       "segment %d must start above segment %d (from_bytes %llu)", i + 1, i,
                       (unsigned long long)m->segments[i - 1].from_bytes);
    m->segments[m->n_segments++] = seg;
    return CCT_OK;
}

static const field model_fields[] = {
    FIELD(cct_model, algo, FT_ALGO, true),
    FIELD(cct_model, proto, FT_PROTO, true),
    {"channels", FT_CUSTOM, false, offsetof(cct_model, channels), 0, CCT_TABLE_MAX_CHANNELS,
     read_channels},
    FIELD(cct_model, buffsize, FT_SIZE, false),
    FIELD(cct_model, ll_buffsize, FT_SIZE, false),
    FIELD(cct_model, ll128_buffsize, FT_SIZE, false),
    FIELD(cct_model, kind, FT_KIND, true),
    INT_FIELD(cct_model, alpha_us, FT_FLOAT, false, -MAX_TIME_US, MAX_TIME_US),
    INT_FIELD(cct_model, alpha_ci, FT_FLOAT_NONNEG, false, 0, MAX_TIME_US),
    FIELD(cct_model, beta_gbps, FT_FLOAT_POS, false),
    FIELD(cct_model, beta_ci, FT_FLOAT_NONNEG, false),
    FIELD(cct_model, break_bytes, FT_SIZE, false),
    INT_FIELD(cct_model, alpha2_us, FT_FLOAT, false, -MAX_TIME_US, MAX_TIME_US),
    FIELD(cct_model, beta2_gbps, FT_FLOAT_POS, false),
    {"segments", FT_SEQ, false, 0, 0, 0, read_segment},
    FIELD(cct_model, r2, FT_FLOAT, false),
    INT_FIELD(cct_model, n_points, FT_INT, false, 0, INT_MAX),
    FIELD(cct_model, poor_fit, FT_BOOL, false),
};

static const field penalty_fields[] = {
    FIELD(cct_align_penalty, proto, FT_PROTO, true),
    INT_FIELD(cct_align_penalty, offset, FT_UINT, true, 0, MAX_OFFSET),
    INT_FIELD(cct_align_penalty, penalty, FT_FLOAT, true, -1, MAX_FRACTION),
};

static cct_status read_rule(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_section *sec = obj;
    cct_rule rule = cct_rule_blank();
    seen_keys seen;
    cct_status st = read_fields(r, "a rule", rule_fields, N_OF(rule_fields), &rule, NULL, &seen);
    if (st == CCT_OK)
        st = push_mark(r, &r->items[ITEM_RULE], seen.start);
    if (st == CCT_OK && cct_section_add_rule(sec, &rule) != CCT_OK)
        st = cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    return st;
}

/* The keys a model may have depend on its kind: segmented adds a second line, piecewise
 * replaces the line fields by segments (and the reader then mirrors them into those fields,
 * as the fitter does, so a loaded model equals the one that was written). */
static cct_status check_model_kind(reader *r, cct_model *m, const seen_keys *seen)
{
    static const char *const line_keys[] = {"alpha_us", "alpha_ci", "beta_gbps", "beta_ci"};
    static const char *const second_line_keys[] = {"break_bytes", "alpha2_us", "beta2_gbps"};
    const field *fs = model_fields;
    size_t nf = N_OF(model_fields);
    yaml_mark_t at;
    bool has_segments = field_seen(seen, fs, nf, "segments", &at);
    if (m->kind != CCT_MODEL_PIECEWISE && has_segments)
        return fail_at(r, at, CCT_EINVAL, "'segments' is only valid with kind: piecewise");
    if (m->kind == CCT_MODEL_LINEAR) {
        for (size_t i = 0; i < N_OF(second_line_keys); i++)
            if (field_seen(seen, fs, nf, second_line_keys[i], &at))
                return fail_at(r, at, CCT_EINVAL, "'%s' is only valid with kind: segmented",
                               second_line_keys[i]);
        return CCT_OK;
    }
    if (m->kind == CCT_MODEL_SEGMENTED) {
        if (!field_seen(seen, fs, nf, "break_bytes", &at))
            return fail_at(r, seen->start, CCT_EINVAL,
                           "a segmented model is missing the required key 'break_bytes'");
        return CCT_OK;
    }
    for (size_t i = 0; i < N_OF(line_keys); i++)
        if (field_seen(seen, fs, nf, line_keys[i], &at))
            return fail_at(r, at, CCT_EINVAL,
                           "'%s' is not used with kind: piecewise (each segment has its own)",
                           line_keys[i]);
    for (size_t i = 0; i < N_OF(second_line_keys); i++)
        if (field_seen(seen, fs, nf, second_line_keys[i], &at))
            return fail_at(r, at, CCT_EINVAL,
                           "'%s' is not used with kind: piecewise (segments say where lines meet)",
                           second_line_keys[i]);
    if (!has_segments)
        return fail_at(r, seen->start, CCT_EINVAL,
                       "a piecewise model is missing the required key 'segments'");
    if (m->n_segments < 3)
        return fail_at(r, at, CCT_EINVAL,
                       "a piecewise model needs at least 3 segments (use linear or segmented)");
    const cct_model_segment *first = &m->segments[0], *last = &m->segments[m->n_segments - 1];
    m->alpha_us = first->alpha_us;
    m->alpha_ci = first->alpha_ci;
    m->beta_gbps = first->beta_gbps;
    m->beta_ci = first->beta_ci;
    m->break_bytes = m->segments[1].from_bytes;
    m->alpha2_us = last->alpha_us;
    m->beta2_gbps = last->beta_gbps;
    return CCT_OK;
}

static cct_status read_model(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_section *sec = obj;
    cct_model m;
    memset(&m, 0, sizeof m);
    m.alpha_us = m.alpha_ci = m.beta_gbps = m.beta_ci = NAN;
    m.alpha2_us = m.beta2_gbps = m.r2 = NAN;
    seen_keys seen;
    cct_status st = read_fields(r, "a model", model_fields, N_OF(model_fields), &m, NULL, &seen);
    if (st != CCT_OK)
        return st;
    if ((st = check_model_kind(r, &m, &seen)) != CCT_OK)
        return st;
    if ((st = push_mark(r, &r->items[ITEM_MODEL], seen.start)) != CCT_OK)
        return st;
    if (cct_section_add_model(sec, &m) != CCT_OK)
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    return CCT_OK;
}

static cct_status read_penalty(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_section *sec = obj;
    cct_align_penalty p;
    memset(&p, 0, sizeof p);
    seen_keys seen;
    cct_status st =
        read_fields(r, "an alignment entry", penalty_fields, N_OF(penalty_fields), &p, NULL, &seen);
    if (st == CCT_OK)
        st = push_mark(r, &r->items[ITEM_PENALTY], seen.start);
    if (st == CCT_OK && cct_section_add_penalty(sec, &p) != CCT_OK)
        st = cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    return st;
}

static const field section_fields[] = {
    INT_FIELD(cct_section, ranks, FT_INT, true, 1, CCT_TABLE_MAX_RANKS),
    INT_FIELD(cct_section, nodes, FT_INT, true, 1, CCT_TABLE_MAX_RANKS),
    INT_FIELD(cct_section, pipe_ops, FT_INT, false, 1, MAX_PIPE_OPS),
    FIELD(cct_section, reg_buff, FT_BOOL_INT, false),
    {"rules", FT_SEQ, true, 0, 0, 0, read_rule},
    {"models", FT_SEQ, false, 0, 0, 0, read_model},
    {"alignment", FT_SEQ, false, 0, 0, 0, read_penalty},
};

/* Duplicate detection by sorting: tables may hold many sections, and a pairwise scan
 * would let a hostile file cost quadratic time. */
typedef struct dup_key {
    uint64_t k[5]; /* unused words stay 0 */
    size_t idx;
} dup_key;

static int dup_cmp(const void *a, const void *b)
{
    const dup_key *x = a, *y = b;
    for (int i = 0; i < 5; i++)
        if (x->k[i] != y->k[i])
            return x->k[i] < y->k[i] ? -1 : 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Sorts keys; if two are equal, sets *first and *second to the pair whose later member comes
 * earliest in the file, so the error points at the first repetition a reader meets. */
static bool find_duplicate(dup_key *keys, size_t n, size_t *first, size_t *second)
{
    qsort(keys, n, sizeof *keys, dup_cmp);
    bool found = false;
    size_t group_start = 0;
    for (size_t i = 1; i < n; i++) {
        if (memcmp(keys[i].k, keys[i - 1].k, sizeof keys[i].k) != 0) {
            group_start = i;
            continue;
        }
        if (!found || keys[i].idx < *second) {
            *first = keys[group_start].idx;
            *second = keys[i].idx;
            found = true;
        }
    }
    return found;
}

static cct_status check_item_duplicates(reader *r, const cct_section *sec)
{
    size_t n = sec->n_models > sec->n_penalties ? sec->n_models : sec->n_penalties;
    if (n < 2)
        return CCT_OK;
    dup_key *keys = malloc(n * sizeof *keys);
    if (!keys)
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    size_t a, b;
    cct_status st = CCT_OK;
    for (size_t i = 0; i < sec->n_models; i++) {
        const cct_model *m = &sec->models[i];
        keys[i] = (dup_key){{(uint64_t)m->algo << 32 | (uint32_t)m->proto,
                             (uint64_t)(uint32_t)m->channels, m->buffsize, m->ll_buffsize,
                             m->ll128_buffsize},
                            i};
    }
    if (find_duplicate(keys, sec->n_models, &a, &b)) {
        const cct_model *m = &sec->models[b];
        yaml_mark_t fm = r->items[ITEM_MODEL].marks[a];
        st = fail_at(r, r->items[ITEM_MODEL].marks[b], CCT_EINVAL,
                     "a second model for %s/%s channels=%d buffsize=%llu ll_buffsize=%llu "
                     "ll128_buffsize=%llu (first at %u:%u)",
                     cct_algo_name(m->algo), cct_proto_name(m->proto), m->channels,
                     (unsigned long long)m->buffsize, (unsigned long long)m->ll_buffsize,
                     (unsigned long long)m->ll128_buffsize, (unsigned)fm.line + 1,
                     (unsigned)fm.column + 1);
    }
    for (size_t i = 0; st == CCT_OK && i < sec->n_penalties; i++) {
        const cct_align_penalty *p = &sec->penalties[i];
        keys[i] = (dup_key){{(uint64_t)(uint32_t)p->proto, p->offset, 0}, i};
    }
    if (st == CCT_OK && find_duplicate(keys, sec->n_penalties, &a, &b)) {
        yaml_mark_t fm = r->items[ITEM_PENALTY].marks[a];
        st = fail_at(r, r->items[ITEM_PENALTY].marks[b], CCT_EINVAL,
                     "a second alignment entry for %s offset %u (first at %u:%u)",
                     cct_proto_name(sec->penalties[b].proto), sec->penalties[b].offset,
                     (unsigned)fm.line + 1, (unsigned)fm.column + 1);
    }
    free(keys);
    return st;
}

static cct_status read_section(reader *r, int coll)
{
    cct_section *sec = cct_table_add_section(r->table, coll, 0, 0);
    if (!sec)
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    for (int k = 0; k < N_ITEM_KINDS; k++)
        r->items[k].n = 0;
    seen_keys seen;
    cct_status st =
        read_fields(r, "a section", section_fields, N_OF(section_fields), sec, NULL, &seen);
    if (st != CCT_OK)
        return st;
    if ((st = push_mark(r, &r->sections, seen.start)) != CCT_OK)
        return st;
    cct_error why;
    cct_check_where where = {CCT_CHECK_SECTION, 0};
    if (cct_table_check_section_at(sec, &why, &where) != CCT_OK) {
        yaml_mark_t at = seen.start;
        const mark_list *l = where.item == CCT_CHECK_RULE      ? &r->items[ITEM_RULE]
                             : where.item == CCT_CHECK_MODEL   ? &r->items[ITEM_MODEL]
                             : where.item == CCT_CHECK_PENALTY ? &r->items[ITEM_PENALTY]
                                                               : NULL;
        if (l && where.index < l->n)
            at = l->marks[where.index];
        return fail_at(r, at, why.code, "%s", why.msg);
    }
    return check_item_duplicates(r, sec);
}

/* read_collectives' state: which collectives were read, and where. */
typedef struct colls_reading {
    bool seen[CCT_NUM_COLLS];
    yaml_mark_t first_at[CCT_NUM_COLLS];
} colls_reading;

static cct_status read_collective_key(reader *r, const map_key *k, void *ctx)
{
    colls_reading *cr = ctx;
    int coll = k->len < MAX_KEY ? name_index(k->text, cct_coll_name, CCT_NUM_COLLS) : -1;
    if (coll < 0)
        return unknown_name(r, k->at, "collective", k->text, k->len, cct_coll_name, CCT_NUM_COLLS);
    cct_status st = claim_key(r, k, &cr->seen[coll], &cr->first_at[coll]);
    if (st != CCT_OK)
        return st;
    char what[64];
    snprintf(what, sizeof what, "'%s'", cct_coll_name(coll));
    yaml_event_t *ev = NULL;
    if ((st = expect_node(r, YAML_SEQUENCE_START_EVENT, what, &ev)) != CCT_OK)
        return st;
    consume(r);
    for (;;) {
        if ((st = peek(r, &ev)) != CCT_OK)
            return st;
        if (ev->type == YAML_SEQUENCE_END_EVENT) {
            consume(r);
            return CCT_OK;
        }
        if ((st = read_section(r, coll)) != CCT_OK)
            return st;
    }
}

static cct_status read_collectives(reader *r, const field *f, void *obj)
{
    (void)f;
    (void)obj;
    colls_reading cr = {{false}, {{0}}};
    return read_mapping(r, "'collectives'", read_collective_key, &cr, NULL);
}

/* An environment variable name as POSIX shells accept it. */
static bool is_env_name(const char *s, size_t len)
{
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

/* Words some YAML readers (1.1) take for booleans: as plain values they are ambiguous. */
static bool is_yaml_bool(const char *v)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "y", "n"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(v, words[i]) == 0)
            return true;
    return false;
}

static cct_status read_env_key(reader *r, const map_key *k, void *ctx)
{
    cct_table *t = ctx;
    yaml_event_t *ev = NULL;
    cct_status st;
    char shown[MAX_SHOW];
    show(k->text, k->len, shown, sizeof shown);
    if (k->len >= MAX_KEY || !is_env_name(k->text, k->len))
        return fail_at(r, k->at, CCT_EINVAL,
                       "'%s' is not an environment variable name (letters, digits, _)", shown);
    for (size_t i = 0; i < t->n_env; i++)
        if (strcmp(t->env[i].key, k->text) == 0)
            return fail_at(r, k->at, CCT_EINVAL, "duplicate key '%s'", k->text);
    if (t->n_env >= MAX_ENV)
        return fail_at(r, k->at, CCT_EINVAL, "more than %d recommended_env entries", MAX_ENV);
    char what[MAX_KEY + 8];
    snprintf(what, sizeof what, "'%s'", k->text);
    if ((st = expect_node(r, YAML_SCALAR_EVENT, what, &ev)) != CCT_OK)
        return st;
    const char *v = (const char *)ev->data.scalar.value;
    /* a plain scalar must be one YAML reads as an integer or a word, not as null, a
     * boolean or a float, so the environment gets exactly the text the table shows */
    bool plain_ok = !is_null(ev) && !is_yaml_bool(v) && !is_decimal(v) && v[0] != '.';
    long long iv;
    bool overflow;
    if (is_plain(ev) && parse_integer(v, &iv, &overflow))
        plain_ok = true;
    if (has_nul(ev))
        return fail_at(r, ev->start_mark, CCT_EINVAL, "%s contains a NUL character", what);
    if (is_plain(ev) && !plain_ok)
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "%s must be a string or an integer (quote it)", what);
    if (cct_table_set_env(t, k->text, v) != CCT_OK)
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    consume(r);
    return CCT_OK;
}

static cct_status read_env(reader *r, const field *f, void *obj)
{
    (void)f;
    return read_mapping(r, "'recommended_env'", read_env_key, obj, NULL);
}

static cct_status read_format(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_table *t = obj;
    yaml_event_t *ev = NULL;
    cct_status st = expect_node(r, YAML_SCALAR_EVENT, "'ccltune_table'", &ev);
    if (st != CCT_OK)
        return st;
    const char *text = (const char *)ev->data.scalar.value;
    char shown[MAX_SHOW];
    show(text, ev->data.scalar.length, shown, sizeof shown);
    long long v;
    bool overflow;
    if (!is_plain(ev) || has_nul(ev) || !parse_integer(text, &v, &overflow))
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "'ccltune_table' must be the format version, an integer; got '%s'", shown);
    if (overflow || v < CCT_TABLE_FORMAT_OLDEST || v > CCT_TABLE_FORMAT)
        return fail_at(r, ev->start_mark, CCT_EUNSUPPORTED,
                       "unsupported format version %s (this build reads versions %d to %d)", shown,
                       CCT_TABLE_FORMAT_OLDEST, CCT_TABLE_FORMAT);
    r->version = (int)v;
    t->format = CCT_TABLE_FORMAT; /* the model in memory is the current one, whatever the file */
    consume(r);
    return CCT_OK;
}

static cct_status read_sub(reader *r, const char *what, const field *fields, size_t n, void *obj)
{
    seen_keys seen;
    return read_fields(r, what, fields, n, obj, NULL, &seen);
}

static cct_status read_provenance(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_provenance *p = &((cct_table *)obj)->provenance;
    seen_keys seen;
    cct_status st =
        read_fields(r, "'provenance'", provenance_fields, N_OF(provenance_fields), p, NULL, &seen);
    if (st == CCT_OK && !p->created)
        st = fail_at(r, seen.start, CCT_EINVAL, "'provenance' is missing the required key '%s'",
                     r->version >= 2 ? "measured" : "created");
    return st;
}

static cct_status read_fingerprint(reader *r, const field *f, void *obj)
{
    (void)f;
    cct_table *t = obj;
    t->fingerprint.ranks_per_gpu = 1;
    return read_sub(r, "'fingerprint'", fingerprint_fields, N_OF(fingerprint_fields),
                    &t->fingerprint);
}

static cct_status read_ll128(reader *r, const field *f, void *obj)
{
    (void)f;
    return read_sub(r, "'ll128'", ll128_fields, N_OF(ll128_fields), obj);
}

/* ---- link_matrix: the summary of the run's measured link matrix ---- */

#define MAX_LINK_FIGURE 1000000000LL /* GB/s or microseconds no link can reach */

static const field link_fields[] = {
    INT_FIELD(cct_link_summary, run, FT_INT, true, 1, INT_MAX),
    INT_FIELD(cct_link_summary, gpus, FT_INT, true, 1, CCT_TABLE_MAX_RANKS),
    INT_FIELD(cct_link_summary, pair_gbps_min, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, pair_gbps_max, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, pair_latency_us_min, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, pair_latency_us_max, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, h2d_gbps, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, d2h_gbps, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    INT_FIELD(cct_link_summary, host_latency_us, FT_FLOAT_NONNEG, false, 0, MAX_LINK_FIGURE),
    FIELD(cct_link_summary, socket, FT_STRING, false),
};

/* A _min/_max pair comes together, the minimum not above the maximum. */
static cct_status check_link_range(reader *r, const seen_keys *seen, size_t lo_field, double lo,
                                   double hi)
{
    bool has_lo = seen->mask & (1u << lo_field), has_hi = seen->mask & (1u << (lo_field + 1));
    const char *lo_name = link_fields[lo_field].name, *hi_name = link_fields[lo_field + 1].name;
    if (has_lo != has_hi)
        return fail_at(r, has_lo ? seen->at[lo_field] : seen->at[lo_field + 1], CCT_EINVAL,
                       "'%s' needs '%s' beside it", has_lo ? lo_name : hi_name,
                       has_lo ? hi_name : lo_name);
    if (has_lo && lo > hi)
        return fail_at(r, seen->at[lo_field], CCT_EINVAL, "'%s' %g is above '%s' %g", lo_name, lo,
                       hi_name, hi);
    return CCT_OK;
}

static cct_status read_link_matrix(reader *r, const field *f, void *obj)
{
    cct_link_summary *l = &((cct_table *)obj)->link_matrix;
    seen_keys seen;
    cct_status st = need_format2(r, f->name);
    if (st == CCT_OK)
        st = read_fields(r, "'link_matrix'", link_fields, N_OF(link_fields), l, NULL, &seen);
    if (st == CCT_OK)
        st = check_link_range(r, &seen, 2, l->pair_gbps_min, l->pair_gbps_max);
    if (st == CCT_OK)
        st = check_link_range(r, &seen, 4, l->pair_latency_us_min, l->pair_latency_us_max);
    l->present = st == CCT_OK;
    return st;
}

/* ---- nccl_constants: NCCL model constants (cct_constants.h names every entry) ---- */

/* One family's mapping, "entry name: number".  Names must be spelt exactly; latencies must
 * be >= 0 and bandwidth ceilings > 0 (NCCL divides by them and a 0 disables an algorithm). */
/* read_constant_family's state: the family, and which of its entries were read, where. */
typedef struct family_reading {
    cct_const_family fam;
    cct_constants *c;
    bool seen[CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS];
    yaml_mark_t seen_at[CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS];
} family_reading;

static cct_status read_family_key(reader *r, const map_key *k, void *ctx)
{
    family_reading *fr = ctx;
    cct_const_family fam = fr->fam;
    cct_constants *c = fr->c;
    const char *fkey = cct_const_family_key(fam);
    size_t first = cct_const_family_first(fam), n = cct_const_family_size(fam);
    yaml_event_t *ev = NULL;
    cct_status st;
    cct_const_slot slot;
    if (k->len >= MAX_KEY || !cct_const_slot_from_name(fam, k->text, &slot)) {
        char names[CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS][32];
        const char *list[CCT_CONST_HW_LINKS * CCT_NUM_ALGOS * CCT_NUM_PROTOS];
        for (size_t i = 0; i < n; i++)
            list[i] = cct_const_slot_name(cct_const_slot_at(first + i), names[i], 32);
        char shown[MAX_SHOW];
        show(k->text, k->len, shown, sizeof shown);
        const char *guess = k->len < MAX_KEY ? cct_suggest(k->text, list, n) : NULL;
        const char *form = fam == CCT_CONST_BASE_LATENCY ? "algorithm/protocol, like 'ring/ll'"
                           : fam == CCT_CONST_HW_LATENCY
                               ? "link/algorithm/protocol, like 'nvlink/ring/ll'"
                               : "generation/scale, like 'hopper/1node'";
        if (guess)
            return fail_at(r, k->at, CCT_EINVAL, "unknown %s entry '%s' (did you mean '%s'?)", fkey,
                           shown, guess);
        return fail_at(r, k->at, CCT_EINVAL, "unknown %s entry '%s' (expected %s)", fkey, shown,
                       form);
    }
    size_t idx = cct_const_slot_index(slot) - first;
    if ((st = claim_key(r, k, &fr->seen[idx], &fr->seen_at[idx])) != CCT_OK)
        return st;
    if ((st = peek(r, &ev)) != CCT_OK)
        return st;
    yaml_mark_t vat = ev->start_mark;
    const field f = {k->text, FT_FLOAT, false, 0, 0, 0, NULL};
    double v = NAN;
    if ((st = read_scalar_field(r, &f, &v)) != CCT_OK)
        return st;
    if (cct_const_family_is_bandwidth(fam) && !(v > 0.0))
        return fail_at(r, vat, CCT_EINVAL, "%s '%s' must be > 0 (a bandwidth ceiling), got %g",
                       fkey, k->text, v);
    if (!cct_const_family_is_bandwidth(fam) && v < 0.0)
        return fail_at(r, vat, CCT_EINVAL, "%s '%s' must be >= 0 (a latency), got %g", fkey,
                       k->text, v);
    *cct_const_value(c, slot) = v;
    return CCT_OK;
}

static cct_status read_constant_family(reader *r, cct_const_family fam, cct_constants *c)
{
    char what[64];
    snprintf(what, sizeof what, "'%s'", cct_const_family_key(fam));
    family_reading fr = {fam, c, {false}, {{0}}};
    return read_mapping(r, what, read_family_key, &fr, NULL);
}

/* read_constants' state: the families' keys, and which were read, where. */
typedef struct constants_reading {
    cct_constants *c;
    const char *keys[CCT_CONST_NUM_FAMILIES];
    bool seen[CCT_CONST_NUM_FAMILIES];
    yaml_mark_t seen_at[CCT_CONST_NUM_FAMILIES];
} constants_reading;

static cct_status read_constants_key(reader *r, const map_key *k, void *ctx)
{
    constants_reading *cr = ctx;
    int fam = k->len < MAX_KEY ? cct_const_family_from_key(k->text) : -1;
    if (fam < 0)
        return unknown_key(r, k->at, k->text, k->len, cr->keys, CCT_CONST_NUM_FAMILIES);
    cct_status st = claim_key(r, k, &cr->seen[fam], &cr->seen_at[fam]);
    if (st != CCT_OK)
        return st;
    return read_constant_family(r, (cct_const_family)fam, cr->c);
}

static cct_status read_constants(reader *r, const field *f, void *obj)
{
    (void)f;
    constants_reading cr = {&((cct_table *)obj)->constants, {NULL}, {false}, {{0}}};
    for (int i = 0; i < CCT_CONST_NUM_FAMILIES; i++)
        cr.keys[i] = cct_const_family_key((cct_const_family)i);
    cr.c->present = true;
    return read_mapping(r, "'nccl_constants'", read_constants_key, &cr, NULL);
}

static const field root_fields[] = {
    {"ccltune_table", FT_CUSTOM, true, 0, 0, 0, read_format},
    {"provenance", FT_CUSTOM, true, 0, 0, 0, read_provenance},
    {"fingerprint", FT_CUSTOM, true, 0, 0, 0, read_fingerprint},
    {"ll128", FT_CUSTOM, true, 0, 0, 0, read_ll128},
    {"recommended_env", FT_CUSTOM, false, 0, 0, 0, read_env},
    {"collectives", FT_CUSTOM, true, 0, 0, 0, read_collectives},
    {"nccl_constants", FT_CUSTOM, false, 0, 0, 0, read_constants},
    {"link_matrix", FT_CUSTOM, false, 0, 0, 0, read_link_matrix},
};

static cct_status check_duplicate_sections(reader *r)
{
    const cct_table *t = r->table;
    if (t->n_sections < 2)
        return CCT_OK;
    dup_key *keys = malloc(t->n_sections * sizeof *keys);
    if (!keys)
        return cct_error_at(r->err, CCT_ENOMEM, r->name, 0, 0, "out of memory");
    for (size_t i = 0; i < t->n_sections; i++) {
        const cct_section *s = &t->sections[i];
        keys[i] =
            (dup_key){{(uint64_t)s->coll << 32 | (uint32_t)s->ranks, (uint32_t)s->nodes,
                       (uint64_t)(uint32_t)(s->pipe_ops + 1) << 8 | (uint32_t)(s->reg_buff + 1)},
                      i};
    }
    size_t a, b;
    cct_status st = CCT_OK;
    if (find_duplicate(keys, t->n_sections, &a, &b)) {
        char desc[128];
        yaml_mark_t fm = r->sections.marks[a];
        st = fail_at(r, r->sections.marks[b], CCT_EINVAL, "duplicate section %s (first at %u:%u)",
                     cct_section_describe(&t->sections[b], desc, sizeof desc),
                     (unsigned)fm.line + 1, (unsigned)fm.column + 1);
    }
    free(keys);
    return st;
}

static cct_status read_stream(reader *r)
{
    yaml_event_t *ev = NULL;
    cct_status st = peek(r, &ev); /* STREAM_START */
    if (st != CCT_OK)
        return st;
    consume(r);
    if ((st = peek(r, &ev)) != CCT_OK)
        return st;
    if (ev->type == YAML_STREAM_END_EVENT)
        return cct_error_at(r->err, CCT_EINVAL, r->name, 0, 0, "empty file: no table in it");
    consume(r); /* DOCUMENT_START */
    seen_keys seen;
    if ((st = read_fields(r, "the table", root_fields, N_OF(root_fields), r->table, "ccltune_table",
                          &seen)) != CCT_OK)
        return st;
    if ((st = peek(r, &ev)) != CCT_OK)
        return st;
    consume(r); /* DOCUMENT_END */
    if ((st = peek(r, &ev)) != CCT_OK)
        return st;
    if (ev->type != YAML_STREAM_END_EVENT)
        return fail_at(r, ev->start_mark, CCT_EINVAL,
                       "a second YAML document; a table file holds exactly one");
    consume(r);
    return check_duplicate_sections(r);
}

cct_status cct_table_load_buffer(const char *data, size_t len, const char *name, cct_table *table,
                                 cct_error *err)
{
    cct_table_init(table);
    cct_error_clear(err);
    if (!name)
        name = "<table>";
    /* a UTF-8 byte-order mark (editors write one) is not part of the table; positions are
     * counted after it, as an editor shows them */
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        data += 3;
        len -= 3;
    }
    if (len > CCT_TABLE_MAX_FILE_BYTES)
        return cct_error_at(err, CCT_EPERM, name, 0, 0,
                            "the table is %zu bytes, more than the limit of %u MiB", len,
                            CCT_TABLE_MAX_FILE_BYTES >> 20);
    reader r;
    memset(&r, 0, sizeof r);
    r.data = data;
    r.len = len;
    r.name = name;
    r.table = table;
    cct_error local;
    r.err = err ? err : &local;
    if (!yaml_parser_initialize(&r.parser))
        return cct_error_at(err, CCT_ENOMEM, name, 0, 0, "out of memory");
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)data, len);
    yaml_parser_set_encoding(&r.parser, YAML_UTF8_ENCODING);

    locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t saved = c_locale ? uselocale(c_locale) : (locale_t)0;
    cct_status st = read_stream(&r);
    if (c_locale) {
        uselocale(saved);
        freelocale(c_locale);
    }

    consume(&r);
    yaml_parser_delete(&r.parser);
    for (int k = 0; k < N_ITEM_KINDS; k++)
        free(r.items[k].marks);
    free(r.sections.marks);
    if (st != CCT_OK)
        cct_table_destroy(table);
    return st;
}

cct_status cct_table_load_file(const char *path, cct_table *table, cct_error *err)
{
    cct_table_init(table);
    /* the safe-loading rules (cct_safe_file.h): tables steer every job that loads them */
    cct_safe_rules rules = cct_safe_rules_default(CCT_TABLE_MAX_FILE_BYTES);
    char *buf = NULL;
    size_t len = 0;
    cct_status st = cct_safe_read(path, &rules, &buf, &len, err, NULL);
    if (st == CCT_OK)
        st = cct_table_load_buffer(buf, len, path, table, err);
    free(buf);
    return st;
}
