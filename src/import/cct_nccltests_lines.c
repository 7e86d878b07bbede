/*
 * cct_nccltests_lines.c - recognising single lines of an nccl-tests text log (see
 * cct_nccltests_lines.h).
 *
 * nccl-tests prints a row in pieces: the size columns, then (after running the
 * collective) the out-of-place timing, then the in-place timing, then the line end.
 * NCCL writes its log lines to the same stdout, so with NCCL_DEBUG_SUBSYS=TUNING a row is
 * interrupted by "host:pid:tid [0] NCCL INFO AllReduce: 1024 Bytes -> ..." lines that
 * begin right after a field with no blank between them.  nt_find_log() therefore
 * recognises the prefix from its end ("[dev] NCCL INFO") backwards, and uses the host
 * names of the run's rank lines to see where the row's last field ends.
 */
#include "cct_nccltests_lines.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_table.h"

size_t nt_fields(const char *line, size_t from, nt_span *out, size_t max)
{
    size_t n = 0, i = from;
    for (;;) {
        while (line[i] == ' ' || line[i] == '\t')
            i++;
        if (!line[i])
            return n;
        size_t start = i;
        while (line[i] && line[i] != ' ' && line[i] != '\t')
            i++;
        if (n < max)
            out[n] = (nt_span){line + start, i - start, (unsigned)(start + 1)};
        n++;
    }
}

bool nt_span_is(const nt_span *t, const char *word)
{
    return strlen(word) == t->n && memcmp(t->s, word, t->n) == 0;
}

/* Copy a span into a bounded buffer; false when it does not fit. */
static bool span_copy(const nt_span *t, char *buf, size_t cap)
{
    if (t->n >= cap)
        return false;
    memcpy(buf, t->s, t->n);
    buf[t->n] = '\0';
    return true;
}

static bool span_long(const nt_span *t, long min, long max, long *out)
{
    char buf[32];
    return span_copy(t, buf, sizeof buf) && cct_parse_long(buf, min, max, out);
}

bool nt_find_log(const char *line, char *const *hosts, size_t n_hosts, size_t *start, size_t *msg,
                 bool *info)
{
    static const char *const whole_line[] = {" NCCL WARN ", " NCCL TRACE ", "NCCL CALL "};
    /* WARN lines follow a line end NCCL writes first; TRACE and CALL are debug builds'.
     * Either way the whole line is NCCL's. */
    for (size_t k = 0; k < sizeof whole_line / sizeof whole_line[0]; k++) {
        const char *m = strstr(line, whole_line[k]);
        if (m) {
            *start = 0;
            *msg = (size_t)(m - line) + strlen(whole_line[k]);
            *info = false;
            return true;
        }
    }
    const char *m = strstr(line, " NCCL INFO ");
    if (!m)
        return false;
    size_t i = (size_t)(m - line); /* the blank before "NCCL" */
    /* "[dev]" */
    if (i < 4 || line[i - 1] != ']')
        return false;
    size_t k = i - 2;
    while (k > 0 && isdigit((unsigned char)line[k]))
        k--;
    if (line[k] != '[' || k == i - 2 || k < 2 || line[k - 1] != ' ')
        return false;
    /* "host:pid:tid" before the blank */
    size_t j = k - 1; /* the blank */
    for (int part = 0; part < 2; part++) {
        size_t d = j;
        while (d > 0 && isdigit((unsigned char)line[d - 1]))
            d--;
        if (d == j || d == 0 || line[d - 1] != ':')
            return false;
        j = d - 1; /* the ':' */
    }
    size_t host_end = j, host_start = j;
    size_t best = 0;
    for (size_t h = 0; h < n_hosts; h++) {
        size_t n = strlen(hosts[h]);
        if (n > best && n <= host_end && memcmp(line + host_end - n, hosts[h], n) == 0) {
            best = n;
            host_start = host_end - n;
        }
    }
    if (!best)
        while (host_start > 0 && line[host_start - 1] != ' ' && line[host_start - 1] != '\t')
            host_start--;
    *start = host_start;
    *msg = i + strlen(" NCCL INFO ");
    *info = true;
    return true;
}

bool nt_nccl_version(cct_nt_run *run, const char *text)
{
    if (strncmp(text, "NCCL version ", 13) != 0)
        return false;
    const char *v = text + 13;
    size_t n = 0;
    while (v[n] && (isdigit((unsigned char)v[n]) || v[n] == '.') && n < 31)
        n++;
    if (n == 0)
        return false;
    memcpy(run->nccl_version, v, n);
    run->nccl_version[n] = '\0';
    return true;
}

/* "NCCL_ALGO set by environment to Ring" and the like. */
static cct_status info_env(cct_nt_run *run, const char *line, size_t msg, const char *name,
                           unsigned lineno, bool *done, cct_error *err)
{
    const char *text = line + msg;
    const char *at = strstr(text, " set by environment to ");
    *done = false;
    if (!at || strncmp(text, "NCCL_", 5) != 0)
        return CCT_OK;
    char key[64];
    size_t n = (size_t)(at - text);
    if (n >= sizeof key || memchr(text, ' ', n))
        return CCT_OK;
    memcpy(key, text, n);
    key[n] = '\0';
    const char *value = at + strlen(" set by environment to ");
    *done = true;
    return cct_nccl_env_record(&run->env, key, value, name, lineno, (unsigned)(value - line) + 1,
                               err);
}

/* "comm 0x55d0 rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0 MNNVL 0" (NCCL >= 2.21) */
static cct_status info_comm(cct_nt_run *run, const char *line, size_t msg, const char *name,
                            unsigned lineno, cct_error *err)
{
    nt_span f[8];
    size_t n = nt_fields(line, msg, f, 8);
    if (n < 8 || !nt_span_is(&f[0], "comm") || !nt_span_is(&f[2], "rank") ||
        !nt_span_is(&f[4], "nRanks") || !nt_span_is(&f[6], "nNodes"))
        return CCT_OK;
    long ranks, nodes;
    if (!span_long(&f[5], 1, CCT_TABLE_MAX_RANKS, &ranks))
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[5].col, "bad nRanks in NCCL's line");
    if (!span_long(&f[7], 1, ranks, &nodes))
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[7].col, "bad nNodes in NCCL's line");
    if (run->nccl_ranks && (run->nccl_ranks != ranks || run->nccl_nodes != nodes))
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[5].col,
                            "NCCL reports nRanks %ld nNodes %ld here but nRanks %d nNodes %d at "
                            "line %u: one run, two communicators?",
                            ranks, nodes, run->nccl_ranks, run->nccl_nodes, run->nccl_line);
    if (!run->nccl_ranks) {
        run->nccl_ranks = (int)ranks;
        run->nccl_nodes = (int)nodes;
        run->nccl_line = lineno;
        run->nccl_col = f[5].col;
    }
    return CCT_OK;
}

/* Algo/proto in a TUNING line: a name (NCCL >= 2.24: "RING", "SIMPLE") or an index. */
static int tuning_choice(const nt_span *t, int (*lookup)(const char *), int n)
{
    char buf[32];
    long v;
    if (!span_copy(t, buf, sizeof buf))
        return -1;
    if (cct_parse_long(buf, 0, n - 1, &v))
        return (int)v;
    return lookup(buf);
}

/* "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..3}" (NCCL >=
 * 2.24), "AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 12.5" (2.23).  Older lines do
 * not name the collective and are not used. */
static void info_tuning(cct_nt_run *run, const char *line, size_t msg)
{
    nt_span f[8];
    size_t n = nt_fields(line, msg, f, 8);
    if (n < 8 || f[0].n < 2 || f[0].s[f[0].n - 1] != ':' || !nt_span_is(&f[2], "Bytes") ||
        !nt_span_is(&f[3], "->") || !nt_span_is(&f[4], "Algo") || !nt_span_is(&f[6], "proto"))
        return;
    char func[32], bytes_text[32];
    nt_span fn = f[0];
    fn.n--;
    uint64_t bytes;
    if (!span_copy(&fn, func, sizeof func) || !span_copy(&f[1], bytes_text, sizeof bytes_text) ||
        !cct_parse_u64(bytes_text, &bytes))
        return;
    int coll = cct_coll_from_name(func);
    int algo = tuning_choice(&f[5], cct_algo_from_name, CCT_NUM_ALGOS);
    int proto = tuning_choice(&f[7], cct_proto_from_name, CCT_NUM_PROTOS);
    if (coll >= 0 && algo >= 0 && proto >= 0)
        cct_nt_run_add_tuning(run, coll, bytes, algo, proto);
}

cct_status nt_info(cct_nt_run *run, const char *line, size_t msg, const char *name, unsigned lineno,
                   cct_error *err)
{
    bool done;
    cct_status rc = info_env(run, line, msg, name, lineno, &done, err);
    if (rc != CCT_OK || done)
        return rc;
    if (nt_nccl_version(run, line + msg))
        return CCT_OK;
    rc = info_comm(run, line, msg, name, lineno, err);
    if (rc == CCT_OK)
        info_tuning(run, line, msg);
    return rc;
}

cct_status nt_run_header(cct_nt_run *run, const char *line, const char *name, unsigned lineno,
                         cct_error *err)
{
    nt_span f[48];
    size_t n = nt_fields(line, 1, f, 48);
    if (n > 48)
        n = 48;
    bool have_gpus = false;
    for (size_t i = 0; i + 1 < n; i++) {
        long v;
        const nt_span *val = &f[i + 1];
        if (nt_span_is(&f[i], "nThread")) {
            if (!span_long(val, 1, 4096, &v))
                return cct_error_at(err, CCT_EINVAL, name, lineno, val->col,
                                    "nThread must be a number from 1 to 4096");
            run->threads = (int)v;
        } else if (nt_span_is(&f[i], "nGpus")) {
            if (!span_long(val, 1, 4096, &v))
                return cct_error_at(err, CCT_EINVAL, name, lineno, val->col,
                                    "nGpus must be a number from 1 to 4096");
            run->gpus = (int)v;
            have_gpus = true;
        } else if (nt_span_is(&f[i], "iters:") &&
                   !(i > 0 && (nt_span_is(&f[i - 1], "warmup") || nt_span_is(&f[i - 1], "agg")))) {
            if (!span_long(val, 0, INT32_MAX, &v))
                return cct_error_at(err, CCT_EINVAL, name, lineno, val->col,
                                    "iters must be a non-negative number");
            run->iters = (int)v;
        } else if (nt_span_is(&f[i], "unalign:")) {
            if (!span_long(val, 0, INT32_MAX, &v))
                return cct_error_at(err, CCT_EINVAL, name, lineno, val->col,
                                    "unalign must be a non-negative number");
            run->unalign = v;
        }
    }
    if (!run->threads || !have_gpus)
        return cct_error_at(err, CCT_EINVAL, name, lineno, 1,
                            "run header without \"nThread N nGpus N\"");
    return CCT_OK;
}

cct_status nt_rank_line(cct_nt_run *run, const char *line, const char *name, unsigned lineno,
                        cct_error *err)
{
    nt_span f[12];
    size_t n = nt_fields(line, 1, f, 12);
    size_t len = strlen(line);
    bool cut = len >= 3 && strcmp(line + len - 3, "...") == 0;
    size_t i = 2;
    long rank, v;
    char host[128];
    bool ok = n >= 2 && span_long(&f[1], 0, CCT_TABLE_MAX_RANKS - 1, &rank);
    if (ok && n > i + 1 && nt_span_is(&f[i], "Group"))
        i += 2;
    ok = ok && n > i + 6 && nt_span_is(&f[i], "Pid") && span_long(&f[i + 1], 0, INT32_MAX, &v) &&
         nt_span_is(&f[i + 2], "on") && span_copy(&f[i + 3], host, sizeof host) &&
         nt_span_is(&f[i + 4], "device") && span_long(&f[i + 5], 0, INT32_MAX, &v) &&
         f[i + 6].s[0] == '[';
    if (!ok) {
        if (cut) {
            /* nccl-tests cuts a process's device list at 2048 bytes */
            run->ranks_truncated = true;
            return CCT_OK;
        }
        return cct_error_at(err, CCT_EINVAL, name, lineno, 1,
                            "malformed rank line (expected \"#  Rank N [Group N] Pid N on HOST "
                            "device N [BUSID] GPU\")");
    }
    const char *gpu = strchr(f[i + 6].s, ']');
    char bus[64];
    size_t bus_len = gpu ? (size_t)(gpu - f[i + 6].s) + 1 : 0;
    if (!gpu || bus_len >= sizeof bus)
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[i + 6].col,
                            "malformed bus id in rank line");
    memcpy(bus, f[i + 6].s, bus_len);
    bus[bus_len] = '\0';
    gpu++;
    while (*gpu == ' ' || *gpu == '\t')
        gpu++;
    if (!run->gpu[0])
        snprintf(run->gpu, sizeof run->gpu, "%s", gpu);
    if (!run->ranks_line) {
        run->ranks_line = lineno;
        run->ranks_col = 1;
    }
    return cct_nt_run_add_rank(run, (int)rank, host, bus, err);
}

/* One timing group: time|cputime algbw busbw #wrong|error [i_min i_max i_p99 i_cv%] */
static size_t timing_group(const nt_span *f, size_t n, size_t i, nt_layout *l, int side,
                           bool *per_iter, const char *name, unsigned lineno, cct_error *err,
                           cct_status *rc)
{
    static const char *const base[] = {"time", "algbw", "busbw", "#wrong"};
    static const int base_kind[] = {NT_TIME, NT_ALGBW, NT_BUSBW, NT_WRONG};
    static const char *const iter[] = {"i_min", "i_max", "i_p99", "i_cv%"};
    static const int iter_kind[] = {NT_IMIN, NT_IMAX, NT_IP99, NT_ICV};
    *rc = CCT_OK;
    for (int k = 0; k < 4; k++, i++) {
        bool ok = i < n && nt_span_is(&f[i], base[k]);
        int kind = base_kind[k];
        if (!ok && k == 0 && i < n && nt_span_is(&f[i], "cputime")) {
            *rc = cct_error_at(err, CCT_EUNSUPPORTED, name, lineno, f[i].col,
                               "this log reports CPU time (nccl-tests -C 1), not the time of "
                               "the collective: rerun without -C");
            return i;
        }
        if (!ok && k == 3 && i < n && nt_span_is(&f[i], "error")) {
            ok = true;
            kind = NT_ERROR;
            l->old_error = true;
        }
        if (!ok) {
            *rc = cct_error_at(err, CCT_EINVAL, name, lineno, i < n ? f[i].col : 1,
                               "unexpected results header: expected column \"%s\"", base[k]);
            return i;
        }
        l->kind[l->n] = (unsigned char)kind;
        l->side[l->n++] = (unsigned char)side;
    }
    bool has_iter = i < n && nt_span_is(&f[i], "i_min");
    if (side == 1 && has_iter != *per_iter) {
        *rc = cct_error_at(err, CCT_EINVAL, name, lineno, i < n ? f[i].col : 1,
                           "the in-place columns differ from the out-of-place ones");
        return i;
    }
    *per_iter = has_iter;
    for (int k = 0; has_iter && k < 4; k++, i++) {
        if (i >= n || !nt_span_is(&f[i], iter[k])) {
            *rc = cct_error_at(err, CCT_EINVAL, name, lineno, i < n ? f[i].col : 1,
                               "unexpected results header: expected column \"%s\"", iter[k]);
            return i;
        }
        l->kind[l->n] = (unsigned char)iter_kind[k];
        l->side[l->n++] = (unsigned char)side;
    }
    return i;
}

cct_status nt_table_header(nt_layout *l, const char *line, const char *name, unsigned lineno,
                           cct_error *err)
{
    nt_span f[NT_MAX_COLS + 1];
    size_t n = nt_fields(line, 1, f, NT_MAX_COLS + 1);
    if (n > NT_MAX_COLS)
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[NT_MAX_COLS].col,
                            "results header with more than %d columns", NT_MAX_COLS);
    memset(l, 0, sizeof *l);
    l->redop_col = -1;
    size_t i = 0;
    static const char *const keys[] = {"size", "count", "type", "redop", "root"};
    static const int key_kind[] = {NT_SIZE, NT_COUNT, NT_TYPE, NT_REDOP, NT_ROOT};
    for (int k = 0; k < 5; k++) {
        bool optional = k >= 3; /* old all_gather has neither, broadcast only root */
        if (i < n && nt_span_is(&f[i], keys[k])) {
            l->kind[l->n] = (unsigned char)key_kind[k];
            l->side[l->n++] = 0;
            i++;
        } else if (!optional) {
            return cct_error_at(err, CCT_EINVAL, name, lineno, i < n ? f[i].col : 1,
                                "unexpected results header: expected column \"%s\"", keys[k]);
        }
    }
    for (int k = 0; k + 1 < l->n; k++)
        if (l->kind[k] == NT_REDOP && l->kind[k + 1] == NT_ROOT)
            l->redop_col = k;
    bool per_iter = false;
    cct_status rc;
    i = timing_group(f, n, i, l, 0, &per_iter, name, lineno, err, &rc);
    if (rc == CCT_OK)
        i = timing_group(f, n, i, l, 1, &per_iter, name, lineno, err, &rc);
    if (rc != CCT_OK)
        return rc;
    if (i < n && nt_span_is(&f[i], "timestamp")) {
        l->kind[l->n++] = NT_TS_DATE;
        l->kind[l->n++] = NT_TS_TIME;
        i++;
    }
    if (i < n)
        return cct_error_at(err, CCT_EINVAL, name, lineno, f[i].col,
                            "unexpected column \"%.*s\" in the results header",
                            (int)(f[i].n > 32 ? 32 : f[i].n), f[i].s);
    return CCT_OK;
}
