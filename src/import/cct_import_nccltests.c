/*
 * cct_import_nccltests.c - the nccl-tests text importer: a line-by-line state machine over
 * a whole log (see cct_import_nccltests.h).
 *
 * A run is "# nThread ..." (its header), "#  Rank ..." lines, a column header, rows, and
 * a footer ("# Avg bus bandwidth").  Lines that precede a run's header and belong to it
 * ("# Collective test starting", "# nccl-tests version", NCCL's INFO lines when NCCL
 * printed them first) are collected in `next` and handed to the run when its header
 * comes.  Outside a table, unknown lines are ignored (job scripts print what they like);
 * inside a table every line must be a row, a comment or an NCCL log line.
 *
 * A truncated log is one whose last row is incomplete or lacks its line end; a log that
 * stops after a complete row without the footer is accepted (a job killed between two
 * sizes measured those sizes correctly).  Lines are bounded (CCT_IMPORT_MAX_LINE), bytes
 * that no text log holds are refused, and nothing recurses.
 */
#include "cct_import_nccltests.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_check.h"
#include "cct_nccltests_lines.h"

typedef struct nt_tok {
    char text[64];
    unsigned line, col;
} nt_tok;

typedef enum { ST_NONE, ST_HEADER, ST_TABLE, ST_DONE } nt_state;

typedef struct nt_parser {
    const char *name;
    const cct_import_opts *opts;
    cct_import_result *result;
    cct_nt_run cur;  /* the run being read (state != ST_NONE) */
    cct_nt_run next; /* what belongs to the next run's header */
    nt_state state;
    bool any_run;
    nt_layout layout;
    nt_tok row[NT_MAX_COLS];
    int n_row;
    char redop[16];
    unsigned redop_line;
} nt_parser;

static cct_status fail_at(nt_parser *p, unsigned line, unsigned col, cct_error *err,
                          const char *fmt, const char *a)
{
    return cct_error_at(err, CCT_EINVAL, p->name, line, col, fmt, a);
}

/* ---- rows ---- */

static cct_status field_double(nt_parser *p, const nt_tok *t, const char *what, bool positive,
                               double *out, cct_error *err)
{
    if (!cct_parse_double(t->text, out))
        return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col, "%s '%s' is not a number",
                            what, t->text);
    if (*out < 0)
        return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col, "negative %s '%s'", what,
                            t->text);
    if (positive && *out == 0)
        return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col, "%s is 0: nothing was timed",
                            what);
    return CCT_OK;
}

static cct_status field_u64(nt_parser *p, const nt_tok *t, const char *what, uint64_t *out,
                            cct_error *err)
{
    if (cct_parse_u64(t->text, out))
        return CCT_OK;
    double d;
    if (t->text[0] == '-' && cct_parse_double(t->text, &d))
        return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col, "negative %s '%s'", what,
                            t->text);
    return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col, "%s '%s' is not a whole number",
                        what, t->text);
}

/* "#wrong" is printed with %g: "0", "12", "1.23457e+06", or "N/A" without checking. */
static cct_status field_wrong(nt_parser *p, const nt_tok *t, cct_nt_side *side, cct_error *err)
{
    if (strcmp(t->text, "N/A") == 0)
        return CCT_OK;
    double v;
    cct_status rc = field_double(p, t, "#wrong", false, &v, err);
    if (rc != CCT_OK)
        return rc;
    if (v != floor(v) || v >= 9.2e18)
        return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col,
                            "#wrong '%s' is not a count of elements", t->text);
    side->checked = true;
    side->wrong = (uint64_t)v;
    return CCT_OK;
}

static cct_status field_redop(nt_parser *p, const nt_tok *t, cct_error *err)
{
    if (!p->redop[0]) {
        snprintf(p->redop, sizeof p->redop, "%.15s", t->text);
        p->redop_line = t->line;
        return CCT_OK;
    }
    if (strncmp(p->redop, t->text, sizeof p->redop - 1) == 0)
        return CCT_OK;
    return cct_error_at(err, CCT_EINVAL, p->name, t->line, t->col,
                        "this run mixes reduction operations ('%s' at line %u, '%s' here); "
                        "ccltune does not record the operation, so their points would "
                        "collide: import a log of one operation (nccl-tests -o)",
                        p->redop, p->redop_line, t->text);
}

static cct_status parse_field(nt_parser *p, int kind, const nt_tok *t, cct_nt_side *side,
                              cct_nt_row *row, cct_error *err)
{
    double v;
    cct_status rc = CCT_OK;
    switch (kind) {
    case NT_SIZE:
        row->size_line = t->line;
        row->size_col = t->col;
        return field_u64(p, t, "size", &row->size, err);
    case NT_COUNT:
        row->has_count = true;
        row->count_line = t->line;
        row->count_col = t->col;
        return field_u64(p, t, "count", &row->count, err);
    case NT_TYPE:
        row->dtype = cct_dtype_from_name(t->text);
        if (row->dtype < 0)
            return fail_at(p, t->line, t->col, err,
                           "data type '%s' is not one ccltune records (float, bfloat16); "
                           "measure with nccl-tests -d float or -d bfloat16",
                           t->text);
        return CCT_OK;
    case NT_REDOP:
        return field_redop(p, t, err);
    case NT_ROOT: {
        long root;
        if (!cct_parse_long(t->text, -1, INT_MAX, &root))
            return fail_at(p, t->line, t->col, err, "root '%s' is not a rank number", t->text);
        return CCT_OK;
    }
    case NT_TIME:
        side->time_line = t->line;
        side->time_col = t->col;
        side->time_res = cct_import_resolution(t->text);
        return field_double(p, t, "time", true, &side->time_us, err);
    case NT_ALGBW:
        side->algbw_res = cct_import_resolution(t->text);
        return field_double(p, t, "algbw", false, &side->algbw, err);
    case NT_BUSBW:
        return field_double(p, t, "busbw", false, &side->busbw, err);
    case NT_WRONG:
        return field_wrong(p, t, side, err);
    case NT_ERROR:
        if (strcmp(t->text, "N/A") != 0)
            rc = field_double(p, t, "error", false, &v, err);
        return rc;
    case NT_IMIN:
        return field_double(p, t, "i_min", false, &side->min_us, err);
    case NT_IMAX:
        return field_double(p, t, "i_max", false, &side->max_us, err);
    case NT_IP99:
        return field_double(p, t, "i_p99", false, &v, err);
    case NT_ICV:
        rc = field_double(p, t, "i_cv%", false, &v, err);
        if (rc == CCT_OK)
            side->cv = v / 100.0;
        return rc;
    default:
        return CCT_OK; /* timestamp */
    }
}

static bool numeric_start(const char *s)
{
    return (s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9');
}

static cct_status end_row(nt_parser *p, unsigned line, unsigned col, cct_error *err)
{
    int n = p->n_row;
    p->n_row = 0;
    if (n == 0)
        return CCT_OK;
    if (!numeric_start(p->row[0].text))
        return fail_at(p, p->row[0].line, p->row[0].col, err,
                       "unexpected text in the results table: '%s' (nccl-tests failed, or "
                       "another program wrote here)",
                       p->row[0].text);
    /* one field short with a redop column: the empty redop of nccl-tests 2.13.0-2.13.3
     * (a shifted row that is really cut short fails on its root or a number) */
    int blank = n == p->layout.n - 1 ? p->layout.redop_col : -1;
    if (n < p->layout.n && blank < 0)
        return cct_error_at(err, CCT_EINVAL, p->name, line, col,
                            "the row ends after %d of its %d fields: the log is truncated or "
                            "something interrupted the row",
                            n, p->layout.n);
    cct_nt_row row = {.line = p->row[0].line, .col = p->row[0].col};
    for (int s = 0; s < 2; s++)
        row.side[s] = (cct_nt_side){.present = true,
                                    .algbw = NAN,
                                    .busbw = NAN,
                                    .min_us = NAN,
                                    .max_us = NAN,
                                    .p95_us = NAN,
                                    .cv = NAN};
    for (int i = 0, t = 0; i < p->layout.n; i++) {
        if (i == blank)
            continue;
        cct_status rc = parse_field(p, p->layout.kind[i], &p->row[t++],
                                    &row.side[p->layout.side[i]], &row, err);
        if (rc != CCT_OK)
            return rc;
    }
    return cct_nt_run_add_row(&p->cur, &row, err);
}

/* Append the fields of line (a row, or the part of one before an NCCL log line). */
static cct_status add_fields(nt_parser *p, const char *line, unsigned lineno, cct_error *err)
{
    nt_span f[NT_MAX_COLS + 1];
    size_t n = nt_fields(line, 0, f, NT_MAX_COLS + 1);
    for (size_t i = 0; i < n; i++) {
        if (i > NT_MAX_COLS || p->n_row >= p->layout.n)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno,
                                i < NT_MAX_COLS + 1 ? f[i].col : 1,
                                "the row has more fields than its header's %d", p->layout.n);
        nt_tok *t = &p->row[p->n_row];
        if (f[i].n >= sizeof t->text)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno, f[i].col,
                                "field longer than %zu bytes", sizeof t->text - 1);
        memcpy(t->text, f[i].s, f[i].n);
        t->text[f[i].n] = '\0';
        t->line = lineno;
        t->col = f[i].col;
        p->n_row++;
    }
    return CCT_OK;
}

/* ---- runs ---- */

static cct_status finish_run(nt_parser *p, cct_error *err)
{
    cct_status rc = CCT_OK;
    if (p->state == ST_NONE)
        return CCT_OK;
    if (p->state == ST_HEADER)
        rc = cct_error_at(err, CCT_EINVAL, p->name, p->cur.line, 1,
                          "this run has no results table (nccl-tests stopped before measuring? "
                          "look for its error after this line)");
    else
        rc = cct_nt_run_finish(&p->cur, p->name, p->opts, p->result, err);
    cct_nt_run_destroy(&p->cur);
    p->state = ST_NONE;
    return rc;
}

static cct_status start_run(nt_parser *p, const char *line, unsigned lineno, cct_error *err)
{
    cct_status rc = finish_run(p, err);
    if (rc != CCT_OK)
        return rc;
    p->cur = p->next; /* the run takes what its preamble said */
    cct_nt_run_init(&p->next, 0);
    p->cur.line = lineno;
    p->cur.col = 1;
    p->state = ST_HEADER;
    p->any_run = true;
    p->redop[0] = '\0';
    return nt_run_header(&p->cur, line, p->name, lineno, err);
}

static bool starts_with_text(const char *line, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(line, prefix, n) != 0)
        return false;
    *rest = line + n;
    while (**rest == ' ' || **rest == '\t')
        (*rest)++;
    return true;
}

static cct_status comment(nt_parser *p, char *line, unsigned lineno, cct_error *err)
{
    nt_span f[2];
    size_t n = nt_fields(line, 1, f, 2);
    const char *rest;
    if (n == 0)
        return CCT_OK;
    if (nt_span_is(&f[0], "nThread"))
        return start_run(p, line, lineno, err);
    if (nt_span_is(&f[0], "Rank"))
        return p->state == ST_HEADER ? nt_rank_line(&p->cur, line, p->name, lineno, err) : CCT_OK;
    if (n >= 2 && nt_span_is(&f[0], "size") && nt_span_is(&f[1], "count")) {
        if (p->state == ST_TABLE)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno, 1,
                                "a second results header in one run");
        if (p->state != ST_HEADER)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno, 1,
                                "a results table without its run header (\"# nThread ...\"): "
                                "the beginning of the log is missing");
        p->state = ST_TABLE;
        return nt_table_header(&p->layout, line, p->name, lineno, err);
    }
    if (starts_with_text(line, "# Collective test starting:", &rest))
        return cct_nt_run_set_program(&p->next, rest, p->name, lineno, (unsigned)(rest - line) + 1,
                                      err);
    if (starts_with_text(line, "# nccl-tests version", &rest)) {
        const char *lib = strstr(rest, "nccl-library=");
        long code;
        char buf[16];
        if (lib && sscanf(lib + 13, "%15[0-9]", buf) == 1 && cct_parse_long(buf, 1, 999999, &code))
            cct_nt_version_from_code(code, p->next.nccl_version, sizeof p->next.nccl_version);
        return CCT_OK;
    }
    if (starts_with_text(line, "# Out of bounds values", &rest) && p->state == ST_TABLE &&
        p->layout.old_error) {
        long bad = 0;
        char buf[16];
        if (rest[0] == ':' && sscanf(rest + 1, " %15[0-9]", buf) == 1 &&
            cct_parse_long(buf, 0, LONG_MAX, &bad) && bad > 0)
            return cct_error_at(err, CCT_ECORRUPT, p->name, lineno, 1,
                                "%ld values were out of bounds, and this nccl-tests version "
                                "(before 2.13) does not say which rows: the log cannot be "
                                "imported",
                                bad);
        return CCT_OK;
    }
    if (starts_with_text(line, "# Avg bus bandwidth", &rest) && p->state == ST_TABLE)
        p->state = ST_DONE;
    return CCT_OK;
}

/* Text before an NCCL log prefix that is only a timestamp (NCCL_DEBUG_TIMESTAMP_LEVELS)
 * or blanks. */
static bool no_row_text(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (close) {
            s = close + 1;
            while (*s == ' ' || *s == '\t')
                s++;
        }
    }
    return *s == '\0';
}

static cct_status process_line(nt_parser *p, char *line, unsigned lineno, bool terminated,
                               cct_error *err)
{
    bool in_run = p->state == ST_HEADER || p->state == ST_TABLE;
    cct_nt_run *target = in_run ? &p->cur : &p->next;
    size_t start, msg;
    bool info;
    if (nt_find_log(line, p->cur.hosts, in_run ? p->cur.n_hosts : 0, &start, &msg, &info)) {
        cct_status rc = info ? nt_info(target, line, msg, p->name, lineno, err) : CCT_OK;
        line[start] = '\0';
        if (rc == CCT_OK && p->state == ST_TABLE && !no_row_text(line))
            rc = add_fields(p, line, lineno, err); /* the row goes on after NCCL's line */
        return rc;
    }
    size_t len = strlen(line);
    if (line[0] == '#') {
        if (p->n_row > 0)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno, 1,
                                "the row of line %u is incomplete (%d of %d fields) when a "
                                "comment starts: the log is truncated",
                                p->row[0].line, p->n_row, p->layout.n);
        return comment(p, line, lineno, err);
    }
    if (p->state != ST_TABLE) {
        nt_nccl_version(target, line);
        return CCT_OK;
    }
    cct_status rc = add_fields(p, line, lineno, err);
    if (rc == CCT_OK && p->n_row > 0 && !terminated)
        return cct_error_at(err, CCT_EINVAL, p->name, lineno, (unsigned)len + 1,
                            "the last row has no line end: the log was cut while nccl-tests "
                            "was writing it");
    if (rc == CCT_OK)
        rc = end_row(p, lineno, (unsigned)len + 1, err);
    return rc;
}

/* Copy one line into buf, refusing what no text log contains. */
static cct_status take_line(nt_parser *p, const char *s, size_t n, unsigned lineno, char *buf,
                            cct_error *err)
{
    if (n > CCT_IMPORT_MAX_LINE)
        return cct_error_at(err, CCT_EINVAL, p->name, lineno, 1,
                            "line longer than %d bytes: not an nccl-tests log",
                            CCT_IMPORT_MAX_LINE);
    if (n > 0 && s[n - 1] == '\r')
        n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return cct_error_at(err, CCT_EINVAL, p->name, lineno, (unsigned)i + 1,
                                "binary data (byte 0x%02x): not a text log", c);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    return CCT_OK;
}

cct_status cct_import_nccltests_text(const char *data, size_t len, const char *name,
                                     const cct_import_opts *opts, cct_import_result *result,
                                     cct_error *err)
{
    nt_parser p = {.name = name, .opts = opts, .result = result, .state = ST_NONE};
    cct_nt_run_init(&p.cur, 0);
    cct_nt_run_init(&p.next, 0);
    /* no line is longer than the input, nor than the limit */
    char *buf = malloc((len < CCT_IMPORT_MAX_LINE ? len : CCT_IMPORT_MAX_LINE) + 1);
    if (!buf)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    cct_status rc = CCT_OK;
    size_t pos = 0;
    unsigned lineno = 0;
    bool blank = true;
    while (pos < len && rc == CCT_OK) {
        if (lineno == UINT_MAX) {
            rc = cct_error_at(err, CCT_EINVAL, name, lineno, 0, "too many lines");
            break;
        }
        lineno++;
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;
        rc = take_line(&p, data + pos, n, lineno, buf, err);
        if (rc == CCT_OK) {
            blank = blank && buf[strspn(buf, " \t")] == '\0';
            rc = process_line(&p, buf, lineno, nl != NULL, err);
        }
        pos += n + (nl ? 1 : 0);
    }
    if (rc == CCT_OK && p.n_row > 0)
        rc = cct_error_at(err, CCT_EINVAL, name, p.row[0].line, 1,
                          "the last row is incomplete (%d of %d fields): the log is truncated",
                          p.n_row, p.layout.n);
    if (rc == CCT_OK)
        rc = finish_run(&p, err);
    if (rc == CCT_OK && !p.any_run)
        rc = cct_error_at(err, CCT_EINVAL, name, 1, 1,
                          blank ? "empty input: no nccl-tests output in it"
                                : "not an nccl-tests log: no \"# nThread N nGpus N ...\" run "
                                  "header");
    if (p.state != ST_NONE)
        cct_nt_run_destroy(&p.cur);
    cct_nt_run_destroy(&p.next);
    free(buf);
    return rc;
}
