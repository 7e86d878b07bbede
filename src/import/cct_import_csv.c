/*
 * cct_import_csv.c - the performance CSV of NCCL's example tuner scripts (see
 * cct_import_csv.h).
 *
 * Fields are split per line (RFC 4180 quoting, but no line ends inside quotes: none of
 * the format's values can contain one), blanks around unquoted fields are dropped as
 * Python's int()/float() in the example's script would, and every value is checked
 * strictly: the script skips rows it cannot read with a warning, ccltune stops at the
 * first one with its line and column, because a skipped row is a silently missing
 * measurement.
 */
#include "cct_import_csv.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_import_check.h"
#include "cct_table.h"

enum {
    C_COLL,
    C_SIZE,
    C_ALGO,
    C_PROTO,
    C_CHANNELS,
    C_NODES,
    C_RANKS,
    C_PIPEOPS,
    C_REGBUFF,
    C_COST,
    C_BW,
    C_LATENCY,
    C_NUM
};

static const char *const col_names[C_NUM] = {
    "collective", "size_bytes", "algorithm", "protocol",    "channels",       "nodes",
    "ranks",      "pipeOps",    "regBuff",   "cost_metric", "bandwidth_gbps", "latency_us"};

#define MAX_FIELDS 32
#define MAX_FIELD 128

typedef struct field {
    char text[MAX_FIELD];
    unsigned col;
} field;

typedef struct csv {
    const char *name;
    const cct_import_opts *opts;
    unsigned line;
    int index[C_NUM]; /* field position of each column, -1 when absent */
    int n_header;
    cct_error *err;
} csv;

/* Split one line (NUL-terminated, no line end) into fields. */
static cct_status split(csv *c, const char *s, field *out, int *n_out)
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        if (n >= MAX_FIELDS)
            return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, (unsigned)i + 1,
                                "more than %d fields", MAX_FIELDS);
        field *f = &out[n++];
        size_t k = 0;
        while (s[i] == ' ' || s[i] == '\t')
            i++;
        f->col = (unsigned)i + 1;
        if (s[i] == '"') {
            i++;
            for (;;) {
                if (!s[i])
                    return cct_error_at(c->err, CCT_EPARSE, c->name, c->line, f->col,
                                        "unterminated quoted field");
                if (s[i] == '"' && s[i + 1] != '"')
                    break;
                if (s[i] == '"')
                    i++;
                if (k + 1 >= MAX_FIELD)
                    return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f->col,
                                        "field longer than %d bytes", MAX_FIELD - 1);
                f->text[k++] = s[i++];
            }
            i++;
            while (s[i] == ' ' || s[i] == '\t')
                i++;
            if (s[i] && s[i] != ',')
                return cct_error_at(c->err, CCT_EPARSE, c->name, c->line, (unsigned)i + 1,
                                    "text after a quoted field");
        } else {
            while (s[i] && s[i] != ',') {
                if (s[i] == '"')
                    return cct_error_at(c->err, CCT_EPARSE, c->name, c->line, (unsigned)i + 1,
                                        "quote inside an unquoted field");
                if (k + 1 >= MAX_FIELD)
                    return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f->col,
                                        "field longer than %d bytes", MAX_FIELD - 1);
                f->text[k++] = s[i++];
            }
            while (k > 0 && (f->text[k - 1] == ' ' || f->text[k - 1] == '\t'))
                k--;
        }
        f->text[k] = '\0';
        if (!s[i])
            break;
        i++; /* the comma */
    }
    *n_out = n;
    return CCT_OK;
}

static cct_status header(csv *c, const field *f, int n)
{
    for (int k = 0; k < C_NUM; k++)
        c->index[k] = -1;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < C_NUM && strcmp(f[i].text, col_names[k]) != 0)
            k++;
        if (k == C_NUM)
            return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f[i].col,
                                "unknown column '%s' (the example tuner scripts' CSV has "
                                "collective,size_bytes,algorithm,protocol,channels,nodes,ranks,"
                                "pipeOps,regBuff,cost_metric,bandwidth_gbps,latency_us)",
                                f[i].text);
        if (c->index[k] >= 0)
            return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f[i].col,
                                "column '%s' appears twice", f[i].text);
        c->index[k] = i;
    }
    for (int k = 0; k < C_NUM; k++)
        if (c->index[k] < 0 && k != C_COST && k != C_BW)
            return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, 1,
                                "the header lacks column '%s'%s", col_names[k],
                                k == C_LATENCY ? " (ccltune needs a time; bandwidth_gbps "
                                                 "alone does not say which bandwidth)"
                                               : "");
    c->n_header = n;
    return CCT_OK;
}

static cct_status bad_field(csv *c, const field *f, const char *what)
{
    return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f->col, "%s: '%s'", what, f->text);
}

static cct_status int_field(csv *c, const field *f, const char *what, long min, long max, long *out)
{
    if (cct_parse_long(f->text, min, max, out))
        return CCT_OK;
    char msg[96];
    snprintf(msg, sizeof msg, "%s must be a whole number from %ld to %ld", what, min, max);
    return bad_field(c, f, msg);
}

static cct_status real_field(csv *c, const field *f, const char *what, bool positive, double *out)
{
    if (!cct_parse_double(f->text, out))
        return bad_field(c, f,
                         positive ? "not a number (expected a positive time)" : "not a number");
    if (*out < 0 || (positive && *out == 0)) {
        char msg[64];
        snprintf(msg, sizeof msg, "%s must be %s", what, positive ? "positive" : "non-negative");
        return bad_field(c, f, msg);
    }
    return CCT_OK;
}

/* ranks/nodes: -1 ("any") takes the flag, if there is one. */
static cct_status topo_field(csv *c, const field *f, const char *what, int flag, int *out)
{
    long v;
    cct_status rc = int_field(c, f, what, -1, CCT_TABLE_MAX_RANKS, &v);
    if (rc != CCT_OK)
        return rc;
    if (v == 0)
        return bad_field(c, f, "0 is not a count (use -1 for any)");
    if (v == -1 && flag == CCT_IMPORT_FROM_INPUT)
        return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f->col,
                            "%s is -1 (any), but a measurement was taken on a definite number "
                            "of %s: pass --%s",
                            what, what, what);
    if (v != -1 && flag != CCT_IMPORT_FROM_INPUT && v != flag)
        return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, f->col,
                            "%s is %ld here but --%s %d was given", what, v, what, flag);
    *out = v == -1 ? flag : (int)v;
    return CCT_OK;
}

/* The latency against size / bandwidth_gbps, which the scripts leave unnamed: algbw or
 * busbw (algbw x the collective's factor) may fit; and no absurd latency. */
static cct_status check_latency(csv *c, const field *lat, const field *bw, const cct_point *p,
                                double gbps, double latency)
{
    if (bw) {
        double lat_res = cct_import_resolution(lat->text), bw_res = cct_import_resolution(bw->text);
        double f = cct_busbw_factor(p->cfg.coll, p->cfg.ranks);
        bool as_algbw = cct_import_time_fits(p->bytes, latency, lat_res, gbps, bw_res);
        bool as_busbw =
            f > 0 && cct_import_time_fits(p->bytes, latency, lat_res, gbps / f, bw_res / f);
        if (!as_algbw && !as_busbw)
            return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, lat->col,
                                "latency_us %g contradicts the row: size %llu B at %g GB/s "
                                "takes %.3g us (as algbw; %.3g us as busbw)",
                                latency, (unsigned long long)p->bytes, gbps,
                                gbps > 0 ? (double)p->bytes / (gbps * 1e3) : INFINITY,
                                gbps > 0 && f > 0 ? (double)p->bytes * f / (gbps * 1e3) : INFINITY);
    }
    if (latency > CCT_IMPORT_MAX_TIME_US)
        return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, lat->col,
                            "latency_us %g is more than 1e12 us (11.6 days): not a measurement",
                            latency);
    return CCT_OK;
}

static cct_status row(csv *c, const field *f, int n, cct_import_result *result)
{
    if (n != c->n_header)
        return cct_error_at(c->err, CCT_EINVAL, c->name, c->line,
                            n > c->n_header ? f[c->n_header].col : 1,
                            "%d fields, but the header has %d", n, c->n_header);
    const field *col[C_NUM];
    for (int k = 0; k < C_NUM; k++)
        col[k] = c->index[k] >= 0 ? &f[c->index[k]] : NULL;
    cct_point p = {0};
    p.cfg.coll = cct_coll_from_name(col[C_COLL]->text);
    if (p.cfg.coll < 0)
        return bad_field(c, col[C_COLL],
                         "unknown collective (broadcast, reduce, allgather, "
                         "reducescatter or allreduce)");
    if (!cct_parse_u64(col[C_SIZE]->text, &p.bytes))
        return bad_field(c, col[C_SIZE],
                         col[C_SIZE]->text[0] == '-' ? "negative size_bytes"
                                                     : "size_bytes is not a whole number of bytes");
    if (p.bytes > CCT_IMPORT_MAX_BYTES)
        return cct_error_at(c->err, CCT_EINVAL, c->name, c->line, col[C_SIZE]->col,
                            "size_bytes %s is above 2^63 - 1 bytes, the most a measurement "
                            "can have (the store cannot hold it)",
                            col[C_SIZE]->text);
    p.cfg.algo = cct_algo_from_name(col[C_ALGO]->text);
    if (p.cfg.algo < 0)
        return bad_field(c, col[C_ALGO],
                         "unknown algorithm (tree, ring, collnet_direct, "
                         "collnet_chain, nvls, nvls_tree, pat)");
    p.cfg.proto = cct_proto_from_name(col[C_PROTO]->text);
    if (p.cfg.proto < 0)
        return bad_field(c, col[C_PROTO], "unknown protocol (ll, ll128, simple)");
    long v;
    cct_status rc = int_field(c, col[C_CHANNELS], "channels", -1, CCT_TABLE_MAX_CHANNELS, &v);
    if (rc != CCT_OK)
        return rc;
    if (v == 0)
        return bad_field(c, col[C_CHANNELS], "channels 0 is not a count (use -1 for NCCL's)");
    p.cfg.channels = v == -1 ? 0 : (int)v;
    rc = topo_field(c, col[C_NODES], "nodes", c->opts->nodes, &p.cfg.nodes);
    if (rc == CCT_OK)
        rc = topo_field(c, col[C_RANKS], "ranks", c->opts->ranks, &p.cfg.ranks);
    if (rc == CCT_OK && p.cfg.nodes > p.cfg.ranks)
        return bad_field(c, col[C_NODES], "more nodes than ranks");
    if (rc == CCT_OK)
        rc = int_field(c, col[C_PIPEOPS], "pipeOps", -1, INT_MAX, &v);
    if (rc == CCT_OK && v == 0)
        return bad_field(c, col[C_PIPEOPS], "pipeOps 0 is not a count (use -1 for any)");
    if (rc == CCT_OK)
        rc = int_field(c, col[C_REGBUFF], "regBuff", -1, 1, &v);
    double ignored, bandwidth = NAN, latency = 0;
    if (rc == CCT_OK && col[C_COST])
        rc = real_field(c, col[C_COST], "cost_metric", false, &ignored);
    if (rc == CCT_OK && col[C_BW])
        rc = real_field(c, col[C_BW], "bandwidth_gbps", false, &bandwidth);
    if (rc == CCT_OK)
        rc = real_field(c, col[C_LATENCY], "latency_us", true, &latency);
    if (rc == CCT_OK)
        rc = check_latency(c, col[C_LATENCY], col[C_BW], &p, bandwidth, latency);
    if (rc != CCT_OK)
        return rc;
    p.cfg.dtype = CCT_DTYPE_FLOAT;
    p.stats = (cct_stats){.n = 1,
                          .median_us = latency,
                          .mean_us = latency,
                          .p95_us = NAN,
                          .min_us = NAN,
                          .max_us = NAN,
                          .cv = NAN};
    p.status = CCT_POINT_OK;
    p.nccl_algo = p.cfg.algo; /* forced, so known */
    p.nccl_proto = p.cfg.proto;
    return cct_import_add_point(result, &p, c->line, 1, NULL, 0, c->err);
}

cct_status cct_import_csv(const char *data, size_t len, const char *name,
                          const cct_import_opts *opts, cct_import_result *result, cct_error *err)
{
    csv c = {.name = name, .opts = opts, .err = err, .n_header = 0};
    if (opts->coll != CCT_IMPORT_FROM_INPUT || opts->algo != CCT_IMPORT_FROM_INPUT ||
        opts->proto != CCT_IMPORT_FROM_INPUT)
        return cct_error_at(err, CCT_EINVAL, name, 0, 0,
                            "--coll, --algo and --proto do not apply to CSV input: each row "
                            "names its collective, algorithm and protocol");
    field *f = malloc(MAX_FIELDS * sizeof *f);
    char *buf = malloc((len < CCT_IMPORT_MAX_LINE ? len : CCT_IMPORT_MAX_LINE) + 1);
    cct_status rc = CCT_OK;
    if (!f || !buf)
        rc = cct_error_set(err, CCT_ENOMEM, "out of memory");
    size_t pos = (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    size_t rows = 0;
    while (rc == CCT_OK && pos < len) {
        if (c.line == UINT_MAX) {
            rc = cct_error_at(err, CCT_EINVAL, name, c.line, 0, "too many lines");
            break;
        }
        c.line++;
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;
        const char *s = data + pos;
        pos += n + (nl ? 1 : 0);
        if (n > CCT_IMPORT_MAX_LINE) {
            rc = cct_error_at(err, CCT_EINVAL, name, c.line, 1, "line longer than %d bytes",
                              CCT_IMPORT_MAX_LINE);
            break;
        }
        if (n > 0 && s[n - 1] == '\r')
            n--;
        for (size_t i = 0; i < n && rc == CCT_OK; i++) {
            unsigned char ch = (unsigned char)s[i];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                rc = cct_error_at(err, CCT_EINVAL, name, c.line, (unsigned)i + 1,
                                  "binary data (byte 0x%02x): not a CSV file", ch);
        }
        if (rc != CCT_OK)
            break;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (buf[strspn(buf, " \t")] == '\0')
            continue; /* blank lines, as Python's csv module skips them */
        int nf = 0;
        rc = split(&c, buf, f, &nf);
        if (rc == CCT_OK && c.n_header == 0) {
            rc = header(&c, f, nf);
        } else if (rc == CCT_OK && !nl) {
            /* "6." of a cut "6.5" is a valid number: a row must end to be believed */
            rc = cct_error_at(err, CCT_EINVAL, name, c.line, (unsigned)n + 1,
                              "the last row has no line end: the file may be truncated (end "
                              "it with a newline if it is complete)");
        } else if (rc == CCT_OK && (rc = row(&c, f, nf, result)) == CCT_OK) {
            rows++;
        }
    }
    if (rc == CCT_OK && c.n_header == 0)
        rc = cct_error_at(err, CCT_EINVAL, name, 1, 1, "empty input: no CSV header");
    else if (rc == CCT_OK && rows == 0)
        rc = cct_error_at(err, CCT_EINVAL, name, c.line, 1, "a header but no data rows");
    if (rc == CCT_OK)
        result->runs++;
    free(f);
    free(buf);
    return rc;
}
