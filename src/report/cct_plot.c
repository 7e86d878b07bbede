/*
 * cct_plot.c - from a store (or loaded points) and an optional table to one figure per
 * collective and topology: grouping, the choice of what is drawn, and the driver.
 *
 * What a figure draws: aligned points (align 0) measured with the buffer sizes the table
 * recommends (NCCL's defaults without a table or without recommended_env), of one data type
 * (the one with the most points), whose status is ok or corrupt and whose median is a
 * positive number.  A configuration counts as corrupt when any of its points with those
 * buffers was wrong, at any alignment: the fitter drops the whole configuration for it, so
 * the figure must say so too.  The table's section is the one the plugin uses for an
 * ordinary call (numPipeOps 1, no registered buffers).  The size range is the measured one,
 * widened to show every band of that section at least one factor of two wide.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cct_plot_internal.h"
#include "cct_rule_model.h"
#include "cct_store.h"

#define DEFAULT_XMIN 1024u
#define DEFAULT_XMAX (1u << 30)

void cct_plot_options_default(cct_plot_options *opt)
{
    opt->gnuplot = "gnuplot";
    opt->run_gnuplot = true;
    opt->subtitle = NULL;
    opt->include_production = false;
}

void cct_plot_figure_free(cct_plot_figure *fig)
{
    free(fig->points);
    free(fig->series);
    free(fig->bands);
    memset(fig, 0, sizeof *fig);
}

const char *cct_plot_series_label(const cct_plot_series *s, char *buf, size_t len)
{
    int n;
    if (s->algo == CCT_DEFAULT)
        n = snprintf(buf, len, "NCCL default");
    else
        n = snprintf(buf, len, "%s/%s", cct_algo_name(s->algo), cct_proto_name(s->proto));
    if (n > 0 && (size_t)n < len && s->channels)
        n += snprintf(buf + n, len - (size_t)n, " %d ch", s->channels);
    if (n > 0 && (size_t)n < len && s->corrupt)
        snprintf(buf + n, len - (size_t)n, " (CORRUPT)");
    return buf;
}

cct_status cct_plot_path(char *buf, size_t len, const char *dir, const char *name,
                         const char *suffix, cct_error *err)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len)
        return cct_error_set(err, CCT_EINVAL, "path too long: %s/%s%s", dir, name, suffix);
    return CCT_OK;
}

static bool drawable(const cct_point *p)
{
    return (p->status == CCT_POINT_OK || p->status == CCT_POINT_CORRUPT) &&
           isfinite(p->stats.median_us) && p->stats.median_us > 0;
}

static bool same_topology(const cct_point *p, int coll, int ranks, int nodes)
{
    return p->cfg.coll == coll && p->cfg.ranks == ranks && p->cfg.nodes == nodes;
}

static bool same_buffers(const cct_point *p, const cct_table_buffers *b)
{
    return p->cfg.buffsize == b->buffsize && p->cfg.ll_buffsize == b->ll_buffsize &&
           p->cfg.ll128_buffsize == b->ll128_buffsize;
}

static int cmp_point(const void *pa, const void *pb)
{
    const cct_point *a = *(const cct_point *const *)pa, *b = *(const cct_point *const *)pb;
    const int ka[4] = {a->cfg.algo, a->cfg.proto, a->cfg.channels, a->in_place};
    const int kb[4] = {b->cfg.algo, b->cfg.proto, b->cfg.channels, b->in_place};
    for (int i = 0; i < 3; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes ? -1 : 1;
    return (ka[3] > kb[3]) - (ka[3] < kb[3]);
}

/* The data type with the most drawable points of this topology (ties: the lower one). */
static int pick_dtype(const cct_point *pts, size_t n, const cct_plot_figure *f,
                      const cct_table_buffers *b)
{
    size_t count[CCT_NUM_DTYPES] = {0};
    for (size_t i = 0; i < n; i++)
        if (same_topology(&pts[i], f->coll, f->ranks, f->nodes) && pts[i].cfg.align == 0 &&
            same_buffers(&pts[i], b) && drawable(&pts[i]) && pts[i].cfg.dtype >= 0 &&
            pts[i].cfg.dtype < CCT_NUM_DTYPES)
            count[pts[i].cfg.dtype]++;
    int best = 0;
    for (int d = 1; d < CCT_NUM_DTYPES; d++)
        if (count[d] > count[best])
            best = d;
    return best;
}

static bool config_corrupt(const cct_point *pts, size_t n, const cct_plot_figure *f,
                           const cct_table_buffers *b, int dtype, const cct_point *like)
{
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (p->status == CCT_POINT_CORRUPT && same_topology(p, f->coll, f->ranks, f->nodes) &&
            same_buffers(p, b) && p->cfg.dtype == dtype && p->cfg.algo == like->cfg.algo &&
            p->cfg.proto == like->cfg.proto && p->cfg.channels == like->cfg.channels)
            return true;
    }
    return false;
}

static void size_range(cct_plot_figure *f)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < f->n_points; i++) {
        lo = f->points[i]->bytes < lo ? f->points[i]->bytes : lo;
        hi = f->points[i]->bytes > hi ? f->points[i]->bytes : hi;
    }
    if (f->n_points == 0) {
        lo = DEFAULT_XMIN;
        hi = DEFAULT_XMAX;
    }
    for (size_t i = 0; f->section && i < f->section->n_rules; i++) {
        const cct_rule *r = &f->section->rules[i];
        if (r->min_bytes > 0 && r->min_bytes / 2 < lo)
            lo = r->min_bytes / 2;
        if (r->max_bytes != CCT_BYTES_INF && r->max_bytes <= UINT64_MAX / 2 &&
            r->max_bytes * 2 > hi)
            hi = r->max_bytes * 2;
        if (r->min_bytes > 0 && r->min_bytes <= UINT64_MAX / 2 && r->min_bytes * 2 > hi)
            hi = r->min_bytes * 2;
    }
    f->xmin = lo > 0 ? lo : 1;
    f->xmax = hi > f->xmin ? hi : f->xmin * 2;
}

static cct_status build_figure(const cct_point *pts, size_t n, const cct_table *table, int coll,
                               int ranks, int nodes, cct_plot_figure *f, cct_error *err)
{
    memset(f, 0, sizeof *f);
    f->coll = coll;
    f->ranks = ranks;
    f->nodes = nodes;
    f->table = table;
    f->busbw_factor = cct_busbw_factor(coll, ranks);
    snprintf(f->name, sizeof f->name, "%s-%dr%dn", cct_coll_name(coll), ranks, nodes);
    f->section = table ? cct_table_find_section(table, coll, ranks, nodes, 1, 0) : NULL;
    cct_table_buffers b = cct_table_buffers_of(table);
    int dtype = pick_dtype(pts, n, f, &b);

    f->points = malloc((n ? n : 1) * sizeof *f->points);
    f->series = malloc((n ? n : 1) * sizeof *f->series);
    size_t n_rules = f->section ? f->section->n_rules : 0;
    f->bands = malloc((n_rules ? n_rules : 1) * sizeof *f->bands);
    if (!f->points || !f->series || !f->bands) {
        cct_plot_figure_free(f);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const cct_point *p = &pts[i];
        if (same_topology(p, coll, ranks, nodes) && p->cfg.align == 0 && same_buffers(p, &b) &&
            p->cfg.dtype == dtype && drawable(p))
            f->points[f->n_points++] = p;
    }
    qsort(f->points, f->n_points, sizeof *f->points, cmp_point);
    for (size_t i = 0; i < f->n_points; i++) {
        const cct_point *p = f->points[i];
        f->n_corrupt_points += p->status == CCT_POINT_CORRUPT;
        cct_plot_series *s = f->n_series ? &f->series[f->n_series - 1] : NULL;
        if (s && s->algo == p->cfg.algo && s->proto == p->cfg.proto &&
            s->channels == p->cfg.channels) {
            s->count++;
            continue;
        }
        s = &f->series[f->n_series++];
        memset(s, 0, sizeof *s);
        s->algo = p->cfg.algo;
        s->proto = p->cfg.proto;
        s->channels = p->cfg.channels;
        s->first = i;
        s->count = 1;
        s->corrupt = config_corrupt(pts, n, f, &b, dtype, p);
        s->measured_index = s->model_index = -1;
        if (f->section && s->algo != CCT_DEFAULT)
            s->model = cct_section_find_model(f->section, s->algo, s->proto, s->channels, &b);
    }
    size_range(f);
    for (size_t i = 0; i < n_rules; i++) {
        const cct_rule *r = &f->section->rules[i];
        cct_plot_band *band = &f->bands[f->n_bands++];
        band->rule = r;
        band->lo = r->min_bytes > f->xmin ? r->min_bytes : f->xmin;
        band->hi = r->max_bytes < f->xmax ? r->max_bytes : f->xmax;
        band->index = -1;
        band->nccl = cct_rule_is_nccl_choice(r);
    }
    return CCT_OK;
}

typedef struct topo {
    int coll, ranks, nodes;
} topo;

static int cmp_topo(const void *pa, const void *pb)
{
    const topo *a = pa, *b = pb;
    if (a->coll != b->coll)
        return a->coll < b->coll ? -1 : 1;
    if (a->ranks != b->ranks)
        return a->ranks < b->ranks ? -1 : 1;
    return (a->nodes > b->nodes) - (a->nodes < b->nodes);
}

/* Every (coll, ranks, nodes) of the points and of the table, sorted, each once. */
static topo *topologies(const cct_point *pts, size_t n, const cct_table *t, size_t *count)
{
    size_t cap = n + (t ? t->n_sections : 0), k = 0;
    topo *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (pts[i].cfg.coll >= 0 && pts[i].cfg.coll < CCT_NUM_COLLS)
            v[k++] = (topo){pts[i].cfg.coll, pts[i].cfg.ranks, pts[i].cfg.nodes};
    for (size_t i = 0; t && i < t->n_sections; i++)
        v[k++] = (topo){t->sections[i].coll, t->sections[i].ranks, t->sections[i].nodes};
    qsort(v, k, sizeof *v, cmp_topo);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || cmp_topo(&v[i], &v[u - 1]) != 0)
            v[u++] = v[i];
    *count = u;
    return v;
}

/* mkdir -p: the folder and its missing parents. */
static cct_status make_dirs(const char *dir, cct_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return cct_error_set(err, CCT_EINVAL, "path too long: %s", dir);
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return cct_error_set(err, CCT_EIO, "cannot create %s: %s", path, strerror(errno));
        *p = saved;
        if (saved == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cct_error_set(err, CCT_EIO, "%s is not a folder", dir);
    return CCT_OK;
}

static cct_status plot_figure(const cct_point *pts, size_t n, const cct_table *table,
                              const topo *tp, const char *out_dir, const cct_plot_options *opt,
                              const char *gnuplot, cct_plot_summary *sum, cct_error *err)
{
    cct_plot_figure f;
    cct_status st = build_figure(pts, n, table, tp->coll, tp->ranks, tp->nodes, &f, err);
    if (st != CCT_OK)
        return st;
    if (f.n_points == 0 && !f.section) { /* only unusable points: nothing to draw */
        cct_plot_figure_free(&f);
        return CCT_OK;
    }
    st = cct_plot_write_data(&f, out_dir, err);
    bool drawn = f.n_series > 0;
    for (size_t i = 0; i < f.n_bands; i++)
        drawn |= f.bands[i].index >= 0;
    if (st != CCT_OK || !drawn) { /* a section whose bands predict nothing: no figure */
        cct_plot_figure_free(&f);
        return st;
    }
    st = cct_plot_write_script(&f, out_dir, opt, err);
    if (st == CCT_OK && gnuplot)
        st = cct_plot_run_gnuplot(&f, gnuplot, out_dir, &sum->n_images, err);
    if (st == CCT_OK) {
        sum->n_figures++;
        sum->n_series += f.n_series;
        for (size_t i = 0; i < f.n_series; i++)
            sum->n_corrupt += f.series[i].corrupt;
    }
    cct_plot_figure_free(&f);
    return st;
}

cct_status cct_plot_points(const cct_point *points, size_t n, const cct_table *table,
                           const char *out_dir, const cct_plot_options *opt,
                           cct_plot_summary *summary, cct_error *err)
{
    cct_plot_options def;
    cct_plot_summary local;
    if (!opt) {
        cct_plot_options_default(&def);
        opt = &def;
    }
    if (!summary)
        summary = &local;
    memset(summary, 0, sizeof *summary);
    char gnuplot[4096];
    cct_status st = CCT_OK;
    if (opt->run_gnuplot) /* before anything is written: a missing gnuplot is the usual trouble */
        st = cct_plot_find_gnuplot(opt->gnuplot ? opt->gnuplot : "gnuplot", gnuplot, sizeof gnuplot,
                                   err);
    if (st == CCT_OK)
        st = make_dirs(out_dir, err);
    if (st != CCT_OK)
        return st;
    size_t n_topo = 0;
    topo *tv = topologies(points, n, table, &n_topo);
    if (!tv)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t i = 0; st == CCT_OK && i < n_topo; i++)
        st = plot_figure(points, n, table, &tv[i], out_dir, opt, opt->run_gnuplot ? gnuplot : NULL,
                         summary, err);
    free(tv);
    if (st == CCT_OK && summary->n_figures == 0)
        st = cct_error_set(err, CCT_EINVAL,
                           "nothing to plot: no measured point with a time (status ok or "
                           "corrupt, aligned buffers) and no table section");
    return st;
}

/* "NVIDIA H200, NCCL 2.28.9, socket links, 4 ranks per GPU, run 1". */
static void describe_runs(cct_store *store, const int64_t *run_ids, size_t n_runs, char *buf,
                          size_t len)
{
    buf[0] = '\0';
    cct_store_run *runs = NULL;
    size_t n = 0;
    if (cct_store_list_runs(store, &runs, &n, NULL) != CCT_OK || n == 0) {
        free(runs);
        return;
    }
    const cct_store_run *first = NULL;
    char ids[256] = "";
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        bool wanted = n_runs == 0;
        for (size_t k = 0; k < n_runs && !wanted; k++)
            wanted = run_ids[k] == runs[i].id;
        if (!wanted)
            continue;
        first = first ? first : &runs[i];
        size_t used = strlen(ids);
        if (used + 24 < sizeof ids)
            snprintf(ids + used, sizeof ids - used, "%s%lld", shown++ ? "," : "",
                     (long long)runs[i].id);
    }
    cct_store_fingerprint fp;
    if (first && cct_store_get_fingerprint(store, first->fingerprint_id, &fp, NULL) == CCT_OK) {
        int k = snprintf(buf, len, "%s, NCCL %s, %s links", fp.gpu, fp.nccl, fp.links);
        if (k > 0 && (size_t)k < len && fp.ranks_per_gpu > 1)
            k += snprintf(buf + k, len - (size_t)k, ", %d ranks per GPU", fp.ranks_per_gpu);
        if (k > 0 && (size_t)k < len)
            snprintf(buf + k, len - (size_t)k, ", run%s %s", shown == 1 ? "" : "s", ids);
    }
    free(runs);
}

/* With every run asked for and no include_production: the runs that are not production
 * observations in *sel (malloc'ed; NULL when there is none to leave out, so every run),
 * *left_out those left out. */
static cct_status pick_runs(cct_store *store, bool include_production, int64_t **sel, size_t *n_sel,
                            size_t *left_out, cct_error *err)
{
    *sel = NULL;
    *n_sel = *left_out = 0;
    cct_store_run *runs = NULL;
    size_t n = 0;
    cct_status st = include_production ? CCT_OK : cct_store_list_runs(store, &runs, &n, err);
    int64_t *ids = st == CCT_OK && n ? malloc(n * sizeof *ids) : NULL;
    if (n && !ids && st == CCT_OK)
        st = cct_error_set(err, CCT_ENOMEM, "plot: out of memory");
    for (size_t i = 0; st == CCT_OK && i < n; i++) {
        if (strcmp(runs[i].source, "production") == 0)
            (*left_out)++;
        else
            ids[(*n_sel)++] = runs[i].id;
    }
    free(runs);
    if (st == CCT_OK && *left_out && !*n_sel)
        st = cct_error_set(err, CCT_EINVAL,
                           "the store holds production observations only (ccltune import of "
                           "job recordings): pass --include-production to plot them");
    if (st == CCT_OK && *left_out)
        *sel = ids;
    else
        free(ids);
    return st;
}

cct_status cct_plot_store(const char *store_path, const int64_t *run_ids, size_t n_runs,
                          const cct_table *table, const char *out_dir, const cct_plot_options *opt,
                          cct_plot_summary *summary, cct_error *err)
{
    cct_plot_options o;
    if (opt)
        o = *opt;
    else
        cct_plot_options_default(&o);
    cct_store *store = NULL;
    cct_status st = cct_store_open(store_path, true, &store, err);
    if (st != CCT_OK)
        return st;
    int64_t *sel = NULL;
    size_t n_sel = 0, left_out = 0;
    if (n_runs == 0)
        st = pick_runs(store, o.include_production, &sel, &n_sel, &left_out, err);
    if (sel) {
        run_ids = sel;
        n_runs = n_sel;
    }
    cct_point *points = NULL;
    size_t n = 0;
    if (st == CCT_OK)
        st = cct_store_load_points(store, run_ids, n_runs, &points, &n, err);
    char subtitle[512];
    if (st == CCT_OK && !o.subtitle) {
        describe_runs(store, run_ids, n_runs, subtitle, sizeof subtitle);
        o.subtitle = subtitle[0] ? subtitle : NULL;
    }
    cct_store_close(store);
    size_t n_plain = 0; /* the plots show plain calls (see the top of this file) */
    for (size_t i = 0; st == CCT_OK && i < n; i++)
        if (cct_point_is_plain(&points[i]))
            points[n_plain++] = points[i];
    if (st == CCT_OK)
        st = cct_plot_points(points, n_plain, table, out_dir, &o, summary, err);
    if (st == CCT_OK && summary)
        summary->production_runs_left_out = left_out;
    free(points);
    free(sel);
    return st;
}

cct_status cct_plot_all(const char *store_path, const int64_t *run_ids, size_t n_runs,
                        const cct_table *table, const char *out_dir, cct_error *err)
{
    return cct_plot_store(store_path, run_ids, n_runs, table, out_dir, NULL, NULL, err);
}
