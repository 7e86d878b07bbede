/*
 * cct_probe_links_store.c - the link matrix as it goes with a run: read back from the JSON
 * `ccltune probe --links --json` prints (stored per run, or given with --links-from), and
 * summarised in a few figures for the table (cct_link_summary, the YAML `link_matrix`).
 *
 * The reader accepts the probe's whole answer (it uses its "link_matrix" member) or that
 * member alone, and checks what it uses: GPUs numbered 0..n-1 in order in "host", every
 * pair naming two different GPUs of those, figures finite and >= 0 or null (not measured).
 * Anything else is refused as NAME:LINE:COL: ..., so a matrix recorded by hand or on
 * another box cannot put nonsense into a store.  Members it does not use are ignored, so a
 * later probe may add some.
 */
#include "cct_probe_links.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cct_json.h"
#include "cct_ll128.h"

typedef struct links_reader {
    const cct_json_doc *doc;
    const char *name;
    cct_error *err;
} links_reader;

static cct_status bad(const links_reader *r, const cct_json_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cct_status bad(const links_reader *r, const cct_json_node *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cct_status st = cct_error_vat(r->err, CCT_EINVAL, r->name, at->line, at->col, fmt, ap);
    va_end(ap);
    return st;
}

/* The member key of obj: required (an error when absent) or not (*out NULL). */
static cct_status member(const links_reader *r, const cct_json_node *obj, const char *key, int type,
                         bool required, const cct_json_node **out)
{
    *out = cct_json_member(r->doc, obj, key);
    if (!*out)
        return required ? bad(r, obj, "the link matrix needs a member \"%s\" here", key) : CCT_OK;
    if ((*out)->type != type) {
        return bad(r, *out, "\"%s\" must be %s, not %s", key, cct_json_type_name(type),
                   cct_json_type_name((*out)->type));
    }
    return CCT_OK;
}

/* A figure: a finite number >= 0, or null / absent (NAN). */
static cct_status figure(const links_reader *r, const cct_json_node *obj, const char *key,
                         double *out)
{
    *out = NAN;
    const cct_json_node *n = cct_json_member(r->doc, obj, key);
    if (!n || n->type == CCT_JSON_NULL)
        return CCT_OK;
    if (n->type != CCT_JSON_NUMBER)
        return bad(r, n, "\"%s\" must be a number or null", key);
    const char *text = cct_json_text(r->doc, n);
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (*end || errno == ERANGE || !isfinite(v) || v < 0.0)
        return bad(r, n, "\"%s\" must be a finite number >= 0 (or null: not measured)", key);
    *out = v;
    return CCT_OK;
}

/* A GPU index: an integer 0..limit-1. */
static cct_status gpu_index(const links_reader *r, const cct_json_node *obj, const char *key,
                            int limit, int *out)
{
    const cct_json_node *n;
    cct_status st = member(r, obj, key, CCT_JSON_NUMBER, true, &n);
    if (st != CCT_OK)
        return st;
    const char *text = cct_json_text(r->doc, n);
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*end || errno || v < 0 || v >= limit) {
        return bad(r, n, "\"%s\" must be a GPU index 0..%d", key, limit - 1);
    }
    *out = (int)v;
    return CCT_OK;
}

static cct_status read_host(const links_reader *r, const cct_json_node *host, cct_links *l)
{
    if (host->count == 0 || host->count > CCT_PROBE_MAX_GPUS)
        return bad(r, host, "\"host\" must list 1 to 64 GPUs, one object each");
    l->n_gpus = (int)host->count;
    int i = 0;
    cct_status st = CCT_OK;
    for (const cct_json_node *g = cct_json_first(r->doc, host); g && st == CCT_OK;
         g = cct_json_next(r->doc, g), i++) {
        int idx;
        if (g->type != CCT_JSON_OBJECT)
            return bad(r, g, "each \"host\" entry must be an object, {\"gpu\": N, ...}");
        if ((st = gpu_index(r, g, "gpu", l->n_gpus, &idx)) != CCT_OK)
            return st;
        if (idx != i)
            return bad(r, g, "\"host\" must list the GPUs in order 0, 1, ...");
        if ((st = figure(r, g, "h2d_gbps", &l->h2d_gbps[i])) == CCT_OK &&
            (st = figure(r, g, "d2h_gbps", &l->d2h_gbps[i])) == CCT_OK)
            st = figure(r, g, "latency_us", &l->host_lat_us[i]);
    }
    return st;
}

static cct_status read_pair(const links_reader *r, const cct_json_node *p, cct_links *l,
                            cct_probe_info *paths)
{
    int src, dst;
    cct_status st;
    if (p->type != CCT_JSON_OBJECT)
        return bad(r, p, "each \"pairs\" entry must be an object, {\"src\": N, \"dst\": M, ...}");
    if ((st = gpu_index(r, p, "src", l->n_gpus, &src)) != CCT_OK ||
        (st = gpu_index(r, p, "dst", l->n_gpus, &dst)) != CCT_OK)
        return st;
    if (src == dst)
        return bad(r, p, "a pair joins two different GPUs");
    const cct_json_node *access, *path;
    if ((st = member(r, p, "peer_access", CCT_JSON_BOOL, false, &access)) != CCT_OK ||
        (st = member(r, p, "nccl_path", CCT_JSON_STRING, false, &path)) != CCT_OK ||
        (st = figure(r, p, "copy_gbps", &l->peer_gbps[src][dst])) != CCT_OK ||
        (st = figure(r, p, "latency_us", &l->peer_lat_us[src][dst])) != CCT_OK)
        return st;
    l->peer_access[src][dst] = access && access->boolean;
    if (paths && path)
        paths->path[src][dst] = cct_path_from_name(cct_json_text(r->doc, path));
    return CCT_OK;
}

static cct_status read_matrix(const links_reader *r, const cct_json_node *m, cct_links *l,
                              cct_probe_info *paths)
{
    const cct_json_node *host, *pairs, *sock, *n;
    cct_status st;
    if ((st = member(r, m, "host", CCT_JSON_ARRAY, true, &host)) != CCT_OK ||
        (st = member(r, m, "pairs", CCT_JSON_ARRAY, true, &pairs)) != CCT_OK ||
        (st = member(r, m, "socket", CCT_JSON_OBJECT, false, &sock)) != CCT_OK)
        return st;
    double copy_bytes, reps, iters, wall;
    if ((st = figure(r, m, "copy_bytes", &copy_bytes)) != CCT_OK ||
        (st = figure(r, m, "reps", &reps)) != CCT_OK ||
        (st = figure(r, m, "pingpong_iters", &iters)) != CCT_OK ||
        (st = figure(r, m, "wall_s", &wall)) != CCT_OK)
        return st;
    if ((st = read_host(r, host, l)) != CCT_OK)
        return st;
    l->copy_bytes = isnan(copy_bytes) ? 0 : (size_t)copy_bytes;
    l->reps = isnan(reps) || reps > 1e6 ? 0 : (int)reps;
    l->pingpong_iters = isnan(iters) || iters > 1e9 ? 0 : (int)iters;
    l->wall_s = isnan(wall) ? 0.0 : wall;
    if (paths)
        paths->n_gpus = l->n_gpus;
    for (const cct_json_node *p = cct_json_first(r->doc, pairs); p; p = cct_json_next(r->doc, p))
        if ((st = read_pair(r, p, l, paths)) != CCT_OK)
            return st;
    if (sock && (st = member(r, sock, "interface", CCT_JSON_STRING, false, &n)) == CCT_OK && n)
        snprintf(l->socket_if, sizeof l->socket_if, "%s", cct_json_text(r->doc, n));
    if (st == CCT_OK && sock &&
        (st = member(r, sock, "why", CCT_JSON_STRING, false, &n)) == CCT_OK && n)
        snprintf(l->socket_why, sizeof l->socket_why, "%s", cct_json_text(r->doc, n));
    return st;
}

cct_status cct_links_parse(const char *data, size_t len, const char *name, cct_links *l,
                           cct_probe_info *paths, cct_error *err)
{
    cct_links_init(l, 0, 0, 0, 0);
    if (paths) {
        memset(paths, 0, sizeof *paths);
        for (int i = 0; i < CCT_PROBE_MAX_GPUS; i++)
            for (int j = 0; j < CCT_PROBE_MAX_GPUS; j++)
                paths->path[i][j] = CCT_PATH_UNKNOWN;
    }
    cct_json_doc doc;
    cct_json_init(&doc);
    cct_status st = cct_json_parse(&doc, data, len, name, err);
    if (st == CCT_OK) {
        links_reader r = {&doc, name, err};
        const cct_json_node *root = cct_json_root(&doc);
        const cct_json_node *m = NULL;
        if (root->type != CCT_JSON_OBJECT)
            st = bad(&r, root, "a link matrix is a JSON object (`ccltune probe --links --json`)");
        else if (!cct_json_member(&doc, root, "link_matrix") && cct_json_member(&doc, root, "host"))
            m = root; /* the member alone */
        else if (!cct_json_member(&doc, root, "link_matrix"))
            st = bad(&r, root,
                     "not a link matrix: no \"link_matrix\" member (the JSON of `ccltune probe "
                     "--links --json`)");
        else
            st = member(&r, root, "link_matrix", CCT_JSON_OBJECT, true, &m);
        if (st == CCT_OK)
            st = read_matrix(&r, m, l, paths);
    }
    cct_json_destroy(&doc);
    return st;
}

static void range(double v, double *lo, double *hi)
{
    if (isnan(v))
        return;
    if (isnan(*lo) || v < *lo)
        *lo = v;
    if (isnan(*hi) || v > *hi)
        *hi = v;
}

cct_status cct_links_summarize(const cct_links *l, int run, cct_link_summary *s, cct_error *err)
{
    cct_link_summary_clear(s);
    s->run = run;
    s->gpus = l->n_gpus;
    double unused = NAN;
    for (int i = 0; i < l->n_gpus; i++) {
        for (int j = 0; j < l->n_gpus; j++) {
            range(l->peer_gbps[i][j], &s->pair_gbps_min, &s->pair_gbps_max);
            range(l->peer_lat_us[i][j], &s->pair_latency_us_min, &s->pair_latency_us_max);
        }
        range(l->h2d_gbps[i], &s->h2d_gbps, &unused);
        range(l->d2h_gbps[i], &s->d2h_gbps, &unused);
        range(l->host_lat_us[i], &unused, &s->host_latency_us);
    }
    if (l->socket_if[0] && !(s->socket = strdup(l->socket_if)))
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    s->present = true;
    return CCT_OK;
}
