/*
 * cct_recording.c - the strict reader of profiler recordings (cct_recording.h).
 *
 * The format is line-oriented text: a magic line with the version, a process line, then
 * per communicator a comm line announcing its row count followed by that many row lines,
 * and an end line with the totals.  Each line is a leading word and key=value fields in a
 * fixed order.  A cursor walks the buffer; every check failure names the byte offset of
 * the field (or line) at fault.  Lines starting with '#' are comments.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_file.h"
#include "cct_grow.h"
#include "cct_names.h"
#include "cct_recording.h"

typedef struct cursor {
    const char *d;
    size_t len, pos;
    const char *name;
    cct_error *err;
} cursor;

static cct_status fail_at(cursor *c, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cct_status fail_at(cursor *c, size_t off, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cct_error_set(c->err, CCT_EPARSE, "%s:%zu: %s", c->name, off, msg);
}

/* Skip comment lines; at the start of a line afterwards.  false at the end of the data. */
static bool next_line(cursor *c)
{
    while (c->pos < c->len && c->d[c->pos] == '#') {
        const char *nl = memchr(c->d + c->pos, '\n', c->len - c->pos);
        c->pos = nl ? (size_t)(nl - c->d) + 1 : c->len;
    }
    return c->pos < c->len;
}

/* The leading word of the line is `word` followed by a space or the line's end. */
static bool at_word(const cursor *c, const char *word)
{
    size_t n = strlen(word);
    return c->len - c->pos > n && memcmp(c->d + c->pos, word, n) == 0 &&
           (c->d[c->pos + n] == ' ' || c->d[c->pos + n] == '\n');
}

static cct_status expect_word(cursor *c, const char *word)
{
    if (!next_line(c))
        return fail_at(c, c->pos, "truncated: expected a '%s' line", word);
    if (!at_word(c, word))
        return fail_at(c, c->pos, "expected a '%s' line", word);
    c->pos += strlen(word);
    return CCT_OK;
}

/* " key=VALUE": val and n the value (up to a space or newline), off its offset. */
static cct_status field(cursor *c, const char *key, const char **val, size_t *n, size_t *off)
{
    size_t k = strlen(key);
    if (c->len - c->pos < k + 2 || c->d[c->pos] != ' ' || memcmp(c->d + c->pos + 1, key, k) != 0 ||
        c->d[c->pos + 1 + k] != '=')
        return fail_at(c, c->pos, "expected ' %s=...'", key);
    c->pos += k + 2;
    *off = c->pos;
    *val = c->d + c->pos;
    while (c->pos < c->len && c->d[c->pos] != ' ' && c->d[c->pos] != '\n')
        c->pos++;
    *n = (size_t)(c->d + c->pos - *val);
    if (c->pos >= c->len)
        return fail_at(c, c->pos, "truncated: the line of '%s' has no end", key);
    if (*n == 0)
        return fail_at(c, *off, "empty value of '%s'", key);
    return CCT_OK;
}

static cct_status end_line(cursor *c)
{
    if (c->pos >= c->len || c->d[c->pos] != '\n')
        return fail_at(c, c->pos, "unexpected text at the end of the line");
    c->pos++;
    return CCT_OK;
}

static bool digits_u64(const char *s, size_t n, int base, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0 || n > 20)
        return false;
    for (size_t i = 0; i < n; i++) {
        int d;
        if (s[i] >= '0' && s[i] <= '9')
            d = s[i] - '0';
        else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
            d = s[i] - 'a' + 10;
        else
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

static cct_status field_u64(cursor *c, const char *key, int base, uint64_t *out)
{
    const char *v;
    size_t n, off;
    cct_status st = field(c, key, &v, &n, &off);
    if (st != CCT_OK)
        return st;
    if (!digits_u64(v, n, base, out))
        return fail_at(c, off, "'%s' is not a number in range", key);
    return CCT_OK;
}

static cct_status field_int(cursor *c, const char *key, int lo, int hi, int *out)
{
    uint64_t v;
    size_t off = c->pos + strlen(key) + 2;
    cct_status st = field_u64(c, key, 10, &v);
    if (st != CCT_OK)
        return st;
    if (v < (uint64_t)lo || v > (uint64_t)hi)
        return fail_at(c, off, "'%s' is out of range", key);
    *out = (int)v;
    return CCT_OK;
}

/* A name field: copied (cut) into buf. */
static cct_status field_name(cursor *c, const char *key, char *buf, size_t cap, size_t *off)
{
    const char *v;
    size_t n;
    cct_status st = field(c, key, &v, &n, off);
    if (st != CCT_OK)
        return st;
    if (n >= cap)
        return fail_at(c, *off, "'%s' is too long", key);
    memcpy(buf, v, n);
    buf[n] = '\0';
    return CCT_OK;
}

static cct_status read_magic(cursor *c)
{
    static const char magic[] = "ccltune-recording ";
    if (c->len < sizeof magic - 1 || memcmp(c->d, magic, sizeof magic - 1) != 0)
        return fail_at(c, 0,
                       "not a ccltune recording (the first line is not "
                       "'ccltune-recording VERSION')");
    c->pos = sizeof magic - 1;
    const char *nl = memchr(c->d + c->pos, '\n', c->len - c->pos);
    uint64_t v;
    if (!nl || !digits_u64(c->d + c->pos, (size_t)(nl - c->d) - c->pos, 10, &v))
        return fail_at(c, c->pos, "malformed format version");
    if (v != CCT_RECORDING_VERSION) {
        char num[32];
        snprintf(num, sizeof num, "%llu", (unsigned long long)v);
        return fail_at(c, c->pos, "recording format version %s; this ccltune reads version 1", num);
    }
    c->pos = (size_t)(nl - c->d) + 1;
    return CCT_OK;
}

static cct_status read_process(cursor *c, cct_recording *r)
{
    cct_status st;
    size_t off;
    uint64_t v;
    char clock[16];
    if ((st = expect_word(c, "process")) ||
        (st = field_name(c, "host", r->host, sizeof r->host, &off)))
        return st;
    if ((st = field_u64(c, "pid", 10, &v)))
        return st;
    r->pid = (long)(v > (uint64_t)0x7fffffff ? 0x7fffffff : v);
    if ((st = field_int(c, "nccl", 0, 0x7fffffff, &r->nccl)) ||
        (st = field_u64(c, "started", 10, &v)))
        return st;
    r->started = (long long)(v >> 1 > (uint64_t)INT64_MAX >> 1 ? 0 : v);
    if ((st = field_u64(c, "written", 10, &v)))
        return st;
    r->written = (long long)(v >> 1 > (uint64_t)INT64_MAX >> 1 ? 0 : v);
    if ((st = field_name(c, "clock", clock, sizeof clock, &off)))
        return st;
    if (strcmp(clock, "gpu") != 0)
        return fail_at(c, off, "clock '%s' is not 'gpu'", clock);
    int base, buckets;
    off = c->pos + strlen(" hist_base_ns=");
    if ((st = field_int(c, "hist_base_ns", 0, 1 << 30, &base)))
        return st;
    if (base != 1024)
        return fail_at(c, off, "hist_base_ns must be 1024 in format version 1");
    off = c->pos + strlen(" hist_buckets=");
    if ((st = field_int(c, "hist_buckets", 0, 1000, &buckets)))
        return st;
    if (buckets != CCT_RECORDING_HIST)
        return fail_at(c, off, "hist_buckets must be 20 in format version 1");
    return end_line(c);
}

/* "-" or "B:N,B:N" with rising buckets. */
static cct_status read_hist(cursor *c, cct_rec_row *row)
{
    const char *v;
    size_t n, off;
    cct_status st = field(c, "hist", &v, &n, &off);
    if (st != CCT_OK)
        return st;
    if (n == 1 && v[0] == '-')
        return CCT_OK;
    size_t i = 0;
    int last = -1;
    while (i < n) {
        size_t j = i;
        while (j < n && v[j] != ':')
            j++;
        size_t k = j + 1;
        while (k < n && v[k] != ',')
            k++;
        uint64_t b, cnt;
        if (j >= n || !digits_u64(v + i, j - i, 10, &b) ||
            !digits_u64(v + j + 1, k - j - 1, 10, &cnt))
            return fail_at(c, off + i, "malformed histogram entry (want BUCKET:COUNT)");
        if (b >= CCT_RECORDING_HIST || (int)b <= last || cnt == 0)
            return fail_at(c, off + i, "histogram bucket out of order or range");
        row->hist[b] = cnt;
        last = (int)b;
        i = k + 1;
    }
    if (v[n - 1] == ',')
        return fail_at(c, off + n - 1, "malformed histogram entry (want BUCKET:COUNT)");
    return CCT_OK;
}

static cct_status read_row(cursor *c, cct_rec_row *row)
{
    cct_status st;
    char name[32];
    size_t off;
    memset(row, 0, sizeof *row);
    if ((st = expect_word(c, "row")) || (st = field_name(c, "coll", name, sizeof name, &off)))
        return st;
    row->coll = strcmp(name, "other") == 0 ? CCT_RECORDING_OTHER : cct_coll_from_name(name);
    if (row->coll < 0)
        return fail_at(c, off, "unknown collective '%s'", name);
    if ((st = field_u64(c, "bytes", 10, &row->bytes)) ||
        (st = field_name(c, "algo", name, sizeof name, &off)))
        return st;
    row->algo = strcmp(name, "unknown") == 0 ? -1 : cct_algo_from_name(name);
    if (row->algo < 0 && strcmp(name, "unknown") != 0)
        return fail_at(c, off, "unknown algorithm '%s'", name);
    if ((st = field_name(c, "proto", name, sizeof name, &off)))
        return st;
    row->proto = strcmp(name, "unknown") == 0 ? -1 : cct_proto_from_name(name);
    if (row->proto < 0 && strcmp(name, "unknown") != 0)
        return fail_at(c, off, "unknown protocol '%s'", name);
    size_t line = c->pos;
    if ((st = field_int(c, "channels", 0, 127, &row->channels)) ||
        (st = field_u64(c, "calls", 10, &row->calls)) ||
        (st = field_u64(c, "timed", 10, &row->timed)) ||
        (st = field_u64(c, "total_ns", 10, &row->total_ns)))
        return st;
    size_t hist_off = c->pos;
    if ((st = read_hist(c, row)) || (st = end_line(c)))
        return st;
    if (row->calls == 0 || row->timed > row->calls)
        return fail_at(c, line, "calls must be > 0 and timed <= calls");
    uint64_t sum = 0;
    for (int b = 0; b < CCT_RECORDING_HIST; b++) {
        if (row->hist[b] > UINT64_MAX - sum)
            return fail_at(c, hist_off, "histogram counts overflow");
        sum += row->hist[b];
    }
    if (sum != row->timed)
        return fail_at(c, hist_off, "histogram counts do not add up to timed");
    return CCT_OK;
}

static cct_status read_comm(cursor *c, cct_rec_comm *m)
{
    cct_status st;
    uint64_t rows;
    memset(m, 0, sizeof *m);
    if ((st = expect_word(c, "comm")) || (st = field_u64(c, "id", 16, &m->id)) ||
        (st = field_int(c, "rank", 0, 1 << 24, &m->rank)) ||
        (st = field_int(c, "ranks", 0, 1 << 24, &m->ranks)) ||
        (st = field_int(c, "nodes", 0, 1 << 24, &m->nodes)) ||
        (st = field_int(c, "abi", 1, 1000, &m->abi)) ||
        (st = field_u64(c, "dropped", 10, &m->dropped)) ||
        (st = field_u64(c, "late", 10, &m->late)))
        return st;
    size_t rows_off = c->pos;
    if ((st = field_u64(c, "rows", 10, &rows)) || (st = end_line(c)))
        return st;
    if (rows > (c->len - c->pos) / 8) /* each row line is longer than 8 bytes */
        return fail_at(c, rows_off, "truncated: fewer row lines than the comm announces");
    if (rows && !(m->rows = calloc(rows, sizeof *m->rows)))
        return cct_error_set(c->err, CCT_ENOMEM, "%s: out of memory", c->name);
    for (m->n_rows = 0; m->n_rows < rows; m->n_rows++)
        if ((st = read_row(c, &m->rows[m->n_rows])) != CCT_OK)
            return st;
    return CCT_OK;
}

static cct_status read_body(cursor *c, cct_recording *r)
{
    cct_status st;
    size_t cap = 0, total_rows = 0;
    if ((st = read_magic(c)) || (st = read_process(c, r)))
        return st;
    while (next_line(c) && at_word(c, "comm")) {
        if (!cct_grow((void **)&r->comms, &cap, r->n_comms + 1, sizeof *r->comms))
            return cct_error_set(c->err, CCT_ENOMEM, "%s: out of memory", c->name);
        st = read_comm(c, &r->comms[r->n_comms]);
        r->n_comms++; /* counted even on failure, so destroy frees its rows */
        if (st != CCT_OK)
            return st;
        total_rows += r->comms[r->n_comms - 1].n_rows;
    }
    uint64_t comms, rows;
    size_t off = c->pos;
    if ((st = expect_word(c, "end")) || (st = field_u64(c, "comms", 10, &comms)) ||
        (st = field_u64(c, "rows", 10, &rows)) || (st = end_line(c)))
        return st;
    if (comms != r->n_comms || rows != total_rows)
        return fail_at(c, off, "the end line's totals do not match the file");
    if (next_line(c))
        return fail_at(c, c->pos, "text after the end line");
    return CCT_OK;
}

cct_status cct_recording_load_buffer(const char *data, size_t len, const char *name,
                                     cct_recording *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    cursor c = {data, len, 0, name, err};
    if (len > 0 && memchr(data, '\0', len))
        return fail_at(&c, (size_t)((const char *)memchr(data, '\0', len) - data),
                       "a NUL byte: not a ccltune recording");
    cct_status st = read_body(&c, out);
    if (st == CCT_OK && !(out->name = strdup(name)))
        st = cct_error_set(err, CCT_ENOMEM, "%s: out of memory", name);
    if (st != CCT_OK)
        cct_recording_destroy(out);
    return st;
}

cct_status cct_recording_load_file(const char *path, cct_recording *out, cct_error *err)
{
    char *data;
    size_t len;
    memset(out, 0, sizeof *out);
    cct_status st = cct_read_file(path, &data, &len, err);
    if (st != CCT_OK)
        return st;
    st = cct_recording_load_buffer(data, len, path, out, err);
    free(data);
    return st;
}

void cct_recording_destroy(cct_recording *rec)
{
    for (size_t i = 0; i < rec->n_comms; i++)
        free(rec->comms[i].rows);
    free(rec->comms);
    free(rec->name);
    memset(rec, 0, sizeof *rec);
}

uint64_t cct_recording_bucket_ns(int b)
{
    return b <= 0 ? 0 : UINT64_C(1) << (b + 10);
}

size_t cct_recording_row_count(const cct_recording *recs, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < recs[i].n_comms; c++)
            total += recs[i].comms[c].n_rows;
    return total;
}
