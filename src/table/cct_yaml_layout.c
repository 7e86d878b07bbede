/*
 * cct_yaml_layout.c - line layout for the table writer (cct_yaml_layout.h).
 *
 * Three layouts, each greedy and a pure function of its input: flow mappings broken between
 * items, double-quoted strings folded at single spaces (never next to another space or a
 * quote, so YAML's folding gives back exactly one space), and comment text wrapped at words.
 * Comments are made safe first: every character YAML takes for a line break (CR, LF, NEL,
 * U+2028, U+2029), every control, the BOM and the non-characters U+FFFE/U+FFFF become '?', so
 * no text can end a comment early (and turn the rest of a note into YAML) or make the file
 * unreadable.
 */
#include "cct_yaml_layout.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LINE_BUF (CCT_FLOW_ITEM_MAX + 2 * CCT_LINE_MAX) /* one item and its indentation */
#define MAX_LINES (CCT_FLOW_MAX_ITEMS + 1)

cct_flow *cct_flow_new(void)
{
    return calloc(1, sizeof(cct_flow));
}

static void flow_vprint(cct_flow *fl, size_t at, const char *fmt, va_list ap)
{
    size_t used = strlen(fl->item[at]);
    int w = vsnprintf(fl->item[at] + used, CCT_FLOW_ITEM_MAX - used, fmt, ap);
    if (w < 0 || (size_t)w >= CCT_FLOW_ITEM_MAX - used)
        fl->overflow = true;
}

void cct_flow_add(cct_flow *fl, const char *fmt, ...)
{
    if (fl->n >= CCT_FLOW_MAX_ITEMS) {
        fl->overflow = true;
        return;
    }
    fl->item[fl->n][0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    flow_vprint(fl, fl->n++, fmt, ap);
    va_end(ap);
}

void cct_flow_append(cct_flow *fl, const char *fmt, ...)
{
    if (fl->n == 0) {
        fl->overflow = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    flow_vprint(fl, fl->n - 1, fmt, ap);
    va_end(ap);
}

/* Append text to a line buffer (cut at its size: items are far shorter). */
static void line_cat(char *line, const char *text)
{
    size_t used = strlen(line);
    snprintf(line + used, LINE_BUF - used, "%s", text);
}

static void line_spaces(char *line, int n)
{
    size_t used = strlen(line);
    for (int i = 0; i < n && used + 1 < LINE_BUF; i++)
        line[used++] = ' ';
    line[used] = '\0';
}

static bool comment_fits(const char *line, const char *comment)
{
    return strlen(line) + 4 + strlen(comment) <= CCT_LINE_MAX;
}

bool cct_flow_write(FILE *f, const cct_flow *fl, int indent, const char *lead,
                    const char *first_comment, const char *last_comment)
{
    if (fl->overflow)
        return false;
    char(*lines)[LINE_BUF] = malloc(MAX_LINES * sizeof *lines);
    if (!lines)
        return false;
    size_t n_lines = 0;
    char *cur = lines[0];
    cur[0] = '\0';
    line_spaces(cur, indent);
    line_cat(cur, lead);
    line_cat(cur, "{");
    int col0 = (int)strlen(cur);
    size_t last_len = last_comment ? strlen(last_comment) + 4 : 0;
    for (size_t i = 0; i < fl->n; i++) {
        char piece[CCT_FLOW_ITEM_MAX + 2];
        snprintf(piece, sizeof piece, "%s%s", fl->item[i], i + 1 == fl->n ? "}" : ",");
        if (i > 0) {
            size_t limit = CCT_LINE_MAX - (i + 1 == fl->n ? last_len : 0);
            bool forced = fl->break_after && i == fl->break_after;
            if (forced || strlen(cur) + 1 + strlen(piece) > limit) {
                cur = lines[++n_lines];
                cur[0] = '\0';
                line_spaces(cur, col0);
            } else {
                line_cat(cur, " ");
            }
        }
        line_cat(cur, piece);
    }
    if (fl->n == 0)
        line_cat(cur, "}");
    n_lines++;
    /* comments: at the end of their line where they fit, else on their own line above */
    char joined[2 * CCT_FLOW_ITEM_MAX];
    const char *first = first_comment, *last = last_comment;
    if (n_lines == 1 && first && last) {
        snprintf(joined, sizeof joined, "%s: %s", first, last);
        first = joined;
        last = NULL;
    } else if (n_lines == 1 && !first) {
        first = last;
        last = NULL;
    }
    bool first_here = first && comment_fits(lines[0], first);
    if (first && !first_here && last) { /* both on the last line, if they fit there */
        snprintf(joined, sizeof joined, "%s: %s", first, last);
        if (comment_fits(lines[n_lines - 1], joined)) {
            first = NULL;
            last = joined;
        }
    }
    bool last_here = last && comment_fits(lines[n_lines - 1], last);
    if (first && !first_here)
        fprintf(f, "%*s# %s\n", indent, "", first);
    if (last && !last_here)
        fprintf(f, "%*s# %s\n", indent, "", last);
    for (size_t i = 0; i < n_lines; i++) {
        fputs(lines[i], f);
        if (i == 0 && first_here)
            fprintf(f, "  # %s", first);
        if (i + 1 == n_lines && last_here)
            fprintf(f, "  # %s", last);
        fputc('\n', f);
    }
    free(lines);
    return true;
}

/* Whether quoted[j] is a space the writer may fold at: single, and not next to a quote. */
static bool foldable(const char *quoted, size_t j, size_t len)
{
    return j > 0 && j + 1 < len && quoted[j] == ' ' && quoted[j - 1] != ' ' &&
           quoted[j - 1] != '"' && quoted[j + 1] != ' ' && quoted[j + 1] != '"';
}

void cct_write_folded(FILE *f, int col, int cont_indent, const char *quoted)
{
    size_t len = strlen(quoted);
    size_t start = 0, line_len = (size_t)col;
    bool on_line = false; /* a word was written on the current line */
    while (start < len) {
        size_t end = start + 1;
        while (end < len && !foldable(quoted, end, len))
            end++;
        size_t wlen = end - start;
        if (on_line && line_len + 1 + wlen > CCT_LINE_MAX) {
            fprintf(f, "\n%*s", cont_indent, "");
            line_len = (size_t)cont_indent;
        } else if (on_line) {
            fputc(' ', f);
            line_len++;
        }
        fwrite(quoted + start, 1, wlen, f);
        line_len += wlen;
        on_line = true;
        start = end + 1; /* past the space folded or kept */
    }
    fputc('\n', f);
}

/* Copy text with every control character and YAML line break (NEL, LS, PS) as '?'. */
static void comment_safe(const char *text, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t k = 0;
    while (*p && k + 1 < cap) {
        if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            out[k++] = '?';
            p += 2;
        } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            out[k++] = '?';
            p += 3;
        } else if (p[0] == 0xef && ((p[1] == 0xbb && p[2] == 0xbf) ||
                                    (p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)))) {
            /* the BOM and the non-characters U+FFFE, U+FFFF, which YAML refuses */
            out[k++] = '?';
            p += 3;
        } else {
            out[k++] = (p[0] < 0x20 && p[0] != '\n') || p[0] == 0x7f ? '?' : (char)p[0];
            p++;
        }
    }
    out[k] = '\0';
}

void cct_write_comment(FILE *f, const char *first_prefix, const char *cont_prefix, const char *text)
{
    char safe[4096];
    comment_safe(text, safe, sizeof safe);
    const char *prefix = first_prefix;
    char *para = safe;
    for (;;) {
        char *nl = strchr(para, '\n');
        if (nl)
            *nl = '\0';
        size_t line_len = strlen(prefix);
        fputs(prefix, f);
        bool on_line = false;
        char *save = NULL;
        for (char *w = strtok_r(para, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            size_t wlen = strlen(w);
            if (on_line && line_len + 1 + wlen > CCT_LINE_MAX) {
                fprintf(f, "\n%s", cont_prefix);
                line_len = strlen(cont_prefix);
            } else if (on_line) {
                fputc(' ', f);
                line_len++;
            }
            fputs(w, f);
            line_len += wlen;
            on_line = true;
        }
        fputc('\n', f);
        if (!nl)
            break;
        para = nl + 1;
        prefix = cont_prefix;
    }
}

void cct_write_comment_command(FILE *f, const char *first_prefix, const char *cont_prefix,
                               const char *command)
{
    char safe[4096];
    comment_safe(command, safe, sizeof safe);
    for (char *p = safe; *p; p++)
        if (*p == '\n')
            *p = '?';
    size_t line_len = strlen(first_prefix);
    fputs(first_prefix, f);
    bool on_line = false;
    char *save = NULL;
    for (char *w = strtok_r(safe, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t wlen = strlen(w);
        if (on_line && line_len + 1 + wlen + 2 > CCT_LINE_MAX) {
            fprintf(f, " \\\n%s", cont_prefix);
            line_len = strlen(cont_prefix);
        } else if (on_line) {
            fputc(' ', f);
            line_len++;
        }
        fputs(w, f);
        line_len += wlen;
        on_line = true;
    }
    fputc('\n', f);
}
