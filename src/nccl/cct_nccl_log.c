/*
 * cct_nccl_log.c - parse NCCL's TUNING table, GRAPH lines and INIT communicator line out of
 * a debug log (see cct_nccl_log.h).  Lines are "host:pid:tid [dev] NCCL INFO <payload>";
 * everything before "NCCL INFO " is ignored except the pid, which tells ranks apart.
 */
#include "cct_nccl_log.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_file.h"

#define MAX_PIDS 256

typedef struct rank_graphs {
    long pid;
    int n_graphs; /* graph lines seen for this rank: the 1st is the ring, the 2nd the tree */
} rank_graphs;

typedef struct parser {
    const char *name;
    cct_nccl_log *out;
    cct_error *err;
    int line_no;
    /* table state */
    bool table_started, table_done;
    int block_algos[3];
    int n_block_algos;
    long table_pid;
    rank_graphs ranks[MAX_PIDS];
    int n_ranks_seen;
    bool have_graph[2], have_comm;
} parser;

static long line_pid(const char *line)
{
    /* host:pid:tid -- the number after the first ':' */
    const char *c = strchr(line, ':');
    if (!c || !isdigit((unsigned char)c[1]))
        return -1;
    return strtol(c + 1, NULL, 10);
}

static cct_status fail_at(parser *ps, const char *line, const char *at, const char *what)
{
    return cct_error_set(ps->err, CCT_EPARSE, "%s:%d:%d: %s", ps->name, ps->line_no,
                         (int)(at - line) + 1, what);
}

/* "  Algorithm   |   Tree   |   Ring   | ..." : the algorithms of the next rows. */
static cct_status parse_algo_header(parser *ps, const char *line, const char *payload)
{
    const char *p = strchr(payload, '|');
    ps->n_block_algos = 0;
    while (p && ps->n_block_algos < 3) {
        p++;
        while (*p == ' ')
            p++;
        const char *end = p;
        while (*end && *end != ' ' && *end != '|')
            end++;
        if (end == p)
            break;
        char name[32];
        size_t len = (size_t)(end - p) < sizeof name - 1 ? (size_t)(end - p) : sizeof name - 1;
        memcpy(name, p, len);
        name[len] = '\0';
        int a = cct_algo_from_name(name);
        if (a < 0)
            return fail_at(ps, line, p, "unknown algorithm in the TUNING table header");
        ps->block_algos[ps->n_block_algos++] = a;
        p = strchr(end, '|');
    }
    if (ps->n_block_algos == 0)
        return fail_at(ps, line, payload, "TUNING table header names no algorithm");
    return CCT_OK;
}

/* "    AllReduce |    16.8/   0.2 |    31.0/   0.0 | ..." */
static cct_status parse_row(parser *ps, const char *line, const char *payload, int coll)
{
    const char *p = strchr(payload, '|');
    for (int i = 0; i < ps->n_block_algos * CCT_NUM_PROTOS; i++) {
        if (!p)
            return fail_at(ps, line, payload + strlen(payload), "TUNING row has too few columns");
        p++;
        while (*p == ' ')
            p++;
        if (!*p)
            return fail_at(ps, line, p, "TUNING row has too few columns");
        char *end;
        double lat = strtod(p, &end);
        if (end == p || *end != '/')
            return fail_at(ps, line, p, "expected LATENCY/BANDWIDTH in the TUNING row");
        const char *q = end + 1;
        double bw = strtod(q, &end);
        if (end == q)
            return fail_at(ps, line, q, "expected a bandwidth after '/' in the TUNING row");
        /* strtod also reads inf, nan and overflowing numbers, which NCCL never prints */
        if (!isfinite(lat) || !isfinite(bw))
            return fail_at(ps, line, p, "not a finite number in the TUNING row");
        if (lat < 0.0 || bw < 0.0)
            return fail_at(ps, line, p, "negative latency or bandwidth in the TUNING row");
        int a = ps->block_algos[i / CCT_NUM_PROTOS], pr = i % CCT_NUM_PROTOS;
        ps->out->latency_us[coll][a][pr] = lat;
        ps->out->bandwidth_gbps[coll][a][pr] = bw;
        ps->out->printed[coll][a][pr] = true;
        p = strchr(end, '|');
    }
    return CCT_OK;
}

static int path_type(const char *s, size_t len)
{
    static const char *const names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                        "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0)
            return i;
    return -1;
}

static rank_graphs *rank_of(parser *ps, long pid)
{
    for (int i = 0; i < ps->n_ranks_seen; i++)
        if (ps->ranks[i].pid == pid)
            return &ps->ranks[i];
    if (ps->n_ranks_seen >= MAX_PIDS)
        return NULL;
    rank_graphs *r = &ps->ranks[ps->n_ranks_seen++];
    r->pid = pid;
    r->n_graphs = 0;
    return r;
}

/* "Pattern 4, crossNic 0, nChannels 2, bw 0.600000/0.600000, type NVL/PIX, sameChannels 1" */
static cct_status parse_graph(parser *ps, const char *line, const char *payload, long pid)
{
    int pattern, cross, nch, same;
    double bw_intra, bw_inter;
    char ti[8], te[8];
    if (sscanf(payload,
               "Pattern %d, crossNic %d, nChannels %d, bw %lf/%lf, type %7[A-Z0-9]/%7[A-Z0-9], "
               "sameChannels %d",
               &pattern, &cross, &nch, &bw_intra, &bw_inter, ti, te, &same) != 8)
        return fail_at(ps, line, payload,
                       "malformed GRAPH line (expected 'Pattern P, crossNic C, "
                       "nChannels N, bw X/Y, type A/B, sameChannels S')");
    int type_intra = path_type(ti, strlen(ti)), type_inter = path_type(te, strlen(te));
    if (type_intra < 0 || type_inter < 0)
        return fail_at(ps, line, payload, "GRAPH line has an unknown link type");
    if (nch < 0 || !isfinite(bw_intra) || !isfinite(bw_inter) || bw_intra < 0 || bw_inter < 0)
        return fail_at(ps, line, payload, "GRAPH line has a negative or non-finite value");
    rank_graphs *r = rank_of(ps, pid);
    if (!r)
        return fail_at(ps, line, payload, "more ranks than this reader handles");
    int which = r->n_graphs++;
    if (which > 1)
        return CCT_OK; /* CollNet / NVLS graphs: not modelled */
    int algo = which == 0 ? CCT_ALGO_RING : CCT_ALGO_TREE;
    cct_nccl_graph *g = &ps->out->topo.graphs[algo];
    if (!ps->have_graph[which]) {
        g->present = true;
        g->pattern = pattern;
        g->n_channels = nch;
        g->bw_intra = bw_intra;
        g->bw_inter = bw_inter;
        g->type_intra = type_intra;
        g->type_inter = type_inter;
        g->same_channels = same != 0;
        ps->have_graph[which] = true;
    } else { /* combine over ranks as NCCL does after its allgather */
        if (nch < g->n_channels)
            g->n_channels = nch;
        if (bw_intra < g->bw_intra)
            g->bw_intra = bw_intra;
        if (bw_inter < g->bw_inter)
            g->bw_inter = bw_inter;
        if (type_intra > g->type_intra)
            g->type_intra = type_intra;
        if (type_inter > g->type_inter)
            g->type_inter = type_inter;
        g->same_channels = g->same_channels && same != 0;
    }
    if (algo == CCT_ALGO_TREE && pattern > ps->out->topo.max_tree_pattern)
        ps->out->topo.max_tree_pattern = pattern;
    return CCT_OK;
}

static cct_status parse_line(parser *ps, const char *line)
{
    const char *info = strstr(line, "NCCL INFO ");
    if (!info)
        return CCT_OK;
    const char *payload = info + strlen("NCCL INFO ");
    long pid = line_pid(line);
    const char *s = payload;
    while (*s == ' ')
        s++;
    if (strncmp(s, "NCCL version ", 13) == 0 && !ps->out->nccl_version[0]) {
        sscanf(s + 13, "%31[0-9.]", ps->out->nccl_version);
        return CCT_OK;
    }
    if (strncmp(s, "Pattern ", 8) == 0)
        return ps->table_done ? CCT_OK : parse_graph(ps, line, s, pid);
    if (strncmp(s, "comm ", 5) == 0 && strstr(s, " nRanks ") && !ps->have_comm) {
        int nr, nn;
        if (sscanf(strstr(s, " nRanks "), " nRanks %d nNodes %d", &nr, &nn) != 2 || nr < 1 ||
            nn < 1 || nn > nr)
            return fail_at(ps, line, s,
                           "malformed communicator line (expected 'nRanks N nNodes M')");
        ps->out->topo.n_ranks = nr;
        ps->out->topo.n_nodes = nn;
        ps->have_comm = true;
        return CCT_OK;
    }
    int cc, dummy;
    if (sscanf(s, "%d coll channels, %d", &cc, &dummy) == 2 && ps->out->topo.comm_channels == 0) {
        if (cc < 0)
            return fail_at(ps, line, s, "channel count of the 'coll channels' line is negative");
        ps->out->topo.comm_channels = cc;
        return CCT_OK;
    }
    if (ps->table_done)
        return CCT_OK;
    if (strncmp(s, "Algorithm", 9) == 0 && strchr(s, '|')) {
        if (ps->table_started && ps->table_pid != pid)
            return CCT_OK;
        ps->table_started = true;
        ps->table_pid = pid;
        return parse_algo_header(ps, line, s);
    }
    if (!ps->table_started || pid != ps->table_pid)
        return CCT_OK;
    const char *bar = strchr(s, '|');
    if (!bar)
        return CCT_OK;
    char word[32];
    size_t len = 0;
    while (s + len < bar && s[len] != ' ' && len < sizeof word - 1) {
        word[len] = s[len];
        len++;
    }
    word[len] = '\0';
    int coll = cct_coll_from_name(word);
    if (coll < 0)
        return CCT_OK; /* Protocol / Max NThreads rows */
    cct_status st = parse_row(ps, line, s, coll);
    /* the table ends with AllReduce of the last block (PAT) */
    if (st == CCT_OK && coll == CCT_COLL_ALLREDUCE && ps->n_block_algos > 0 &&
        ps->block_algos[ps->n_block_algos - 1] == CCT_ALGO_PAT)
        ps->table_done = true;
    return st;
}

cct_status cct_nccl_log_parse(const char *text, const char *name, cct_nccl_log *out, cct_error *err)
{
    memset(out, 0, sizeof *out);
    parser *ps = calloc(1, sizeof *ps);
    if (!ps)
        return cct_error_set(err, CCT_ENOMEM, "%s: out of memory", name);
    ps->name = name;
    ps->out = out;
    ps->err = err;
    cct_status st = CCT_OK;
    const char *p = text;
    char line[4096];
    while (*p && st == CCT_OK) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t copy = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, p, copy);
        line[copy] = '\0';
        if (copy && line[copy - 1] == '\r')
            line[copy - 1] = '\0';
        ps->line_no++;
        st = parse_line(ps, line);
        p = nl ? nl + 1 : p + len;
    }
    if (st == CCT_OK && !ps->table_started)
        st = cct_error_set(err, CCT_EPARSE,
                           "%s: no TUNING table (run NCCL with NCCL_DEBUG=INFO "
                           "NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING)",
                           name);
    else if (st == CCT_OK && !out->printed[CCT_COLL_ALLREDUCE][CCT_ALGO_RING][CCT_PROTO_SIMPLE])
        st = cct_error_set(err, CCT_EPARSE,
                           "%s: the TUNING table is incomplete (no Ring AllReduce)", name);
    else if (st == CCT_OK && !(ps->have_graph[0] && ps->have_graph[1]))
        st = cct_error_set(err, CCT_EPARSE,
                           "%s: no ring and tree GRAPH lines ('Pattern ...'; add GRAPH to "
                           "NCCL_DEBUG_SUBSYS)",
                           name);
    else if (st == CCT_OK && !ps->have_comm)
        st = cct_error_set(err, CCT_EPARSE,
                           "%s: no communicator line ('comm ... nRanks N nNodes M'; add INIT to "
                           "NCCL_DEBUG_SUBSYS)",
                           name);
    if (st == CCT_OK) {
        /* NCCL equalises the tree's and the ring's channel counts; PAT runs on the tree graph */
        cct_nccl_topo *t = &out->topo;
        int nch = t->graphs[CCT_ALGO_RING].n_channels < t->graphs[CCT_ALGO_TREE].n_channels
                      ? t->graphs[CCT_ALGO_RING].n_channels
                      : t->graphs[CCT_ALGO_TREE].n_channels;
        t->graphs[CCT_ALGO_RING].n_channels = t->graphs[CCT_ALGO_TREE].n_channels = nch;
        t->graphs[CCT_ALGO_PAT] = t->graphs[CCT_ALGO_TREE];
    }
    free(ps);
    return st;
}

cct_status cct_nccl_log_load(const char *path, cct_nccl_log *out, cct_error *err)
{
    char *data = NULL;
    size_t len = 0;
    cct_status st = cct_read_file(path, &data, &len, err);
    if (st != CCT_OK)
        return st;
    st = cct_nccl_log_parse(data, path, out, err);
    free(data);
    return st;
}
