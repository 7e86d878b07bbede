/*
 * cct_plot_data.c - the data files of one figure, plain text that gnuplot reads and a
 * reviewer can read too (every block starts with a comment naming it).
 *
 *   NAME-measured.dat  one block per configuration: bytes, median/min/max/P95 time, bus
 *                      bandwidth at the median and at max/min time, corrupt flag, samples
 *   NAME-models.dat    one block per configuration the table has a model of: the model
 *                      evaluated (cct_model_predict) on a log grid of 16 points per octave
 *   NAME-envelope.dat  one block per table band: the chosen configuration's predicted time
 *                      over the band (its model, or the band's predicted_us as a flat line);
 *                      for a band left to NCCL, NCCL's default as measured there (see
 *                      nccl_source: its forced twin's model is drawn only where measured)
 *   NAME-corrupt.dat   the points whose results were wrong
 *
 * Blocks are separated by two blank lines, so gnuplot's `index N` selects one; a block is
 * only written when it has rows, and the figure records each one's index for the script.
 * Numbers use fixed formats in the C locale: the same input gives the same files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cct_model.h"
#include "cct_plot_internal.h"
#include "cct_rule_model.h"

#define GRID_PER_OCTAVE 16

static cct_status open_file(const char *dir, const cct_plot_figure *fig, const char *suffix,
                            FILE **out, char *path, size_t len, cct_error *err)
{
    cct_status st = cct_plot_path(path, len, dir, fig->name, suffix, err);
    if (st != CCT_OK)
        return st;
    *out = fopen(path, "w");
    if (!*out)
        return cct_error_set(err, CCT_EIO, "cannot write %s: %s", path, strerror(errno));
    return CCT_OK;
}

static cct_status close_file(FILE *f, const char *path, cct_status st, cct_error *err)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        if (st == CCT_OK)
            st = cct_error_set(err, CCT_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    return st;
}

static double busbw(const cct_plot_figure *fig, double bytes, double us)
{
    return us > 0 ? bytes / us / 1e3 * fig->busbw_factor : NAN;
}

static void header(FILE *f, const cct_plot_figure *fig, const char *what)
{
    fprintf(f, "# %s: %s, %d ranks, %d nodes; written by ccltune %s plot\n", what,
            cct_coll_name(fig->coll), fig->ranks, fig->nodes, CCT_VERSION);
    fprintf(f,
            "# times in microseconds, bus bandwidth in GB/s = bytes / time * %.6g "
            "(nccl-tests' busbw factor)\n",
            fig->busbw_factor);
}

/* A block separator (two blank lines) before every block but the first. */
static void begin_block(FILE *f, int *blocks)
{
    if ((*blocks)++ > 0)
        fputs("\n\n", f);
}

static void measured(FILE *f, cct_plot_figure *fig)
{
    header(f, fig, "measured points, one block per configuration");
    fputs("# columns: bytes median_us min_us max_us p95_us busbw busbw_at_max_us "
          "busbw_at_min_us corrupt n_samples\n",
          f);
    int blocks = 0;
    for (size_t s = 0; s < fig->n_series; s++) {
        cct_plot_series *se = &fig->series[s];
        char label[96];
        begin_block(f, &blocks);
        se->measured_index = blocks - 1;
        fprintf(f, "# index %d: %s\n", se->measured_index,
                cct_plot_series_label(se, label, sizeof label));
        for (size_t i = se->first; i < se->first + se->count; i++) {
            const cct_point *p = fig->points[i];
            const cct_stats *st = &p->stats;
            double b = (double)p->bytes;
            fprintf(f, "%llu %.6g %.6g %.6g %.6g %.6g %.6g %.6g %d %d\n",
                    (unsigned long long)p->bytes, st->median_us, st->min_us, st->max_us, st->p95_us,
                    busbw(fig, b, st->median_us), busbw(fig, b, st->max_us),
                    busbw(fig, b, st->min_us), p->status == CCT_POINT_CORRUPT, st->n);
        }
    }
}

/* Where an envelope block takes its times from: NCCL's measured default (def), else a model
 * (m) where span covers the size, else a flat value (flat, NAN: none). */
typedef struct source {
    const cct_plot_series *def;
    const cct_model *m;
    cct_size_span span;
    double flat;
} source;

/* NCCL's default at n bytes: its median where measured, interpolated on log-log axes between
 * two measured sizes; NAN outside the sizes it was measured at. */
static double default_at(const cct_plot_figure *fig, const cct_plot_series *d, double n)
{
    const cct_point *const *p = fig->points + d->first;
    for (size_t i = 0; i < d->count; i++) {
        double x0 = (double)p[i]->bytes;
        if (x0 == n)
            return p[i]->stats.median_us;
        if (i + 1 < d->count && x0 < n && n < (double)p[i + 1]->bytes) {
            double x1 = (double)p[i + 1]->bytes;
            double y0 = log(p[i]->stats.median_us), y1 = log(p[i + 1]->stats.median_us);
            return exp(y0 + (y1 - y0) * (log(n) - log(x0)) / (log(x1) - log(x0)));
        }
    }
    return NAN;
}

static double predict(const cct_plot_figure *fig, const source *src, double n)
{
    if (src->def)
        return default_at(fig, src->def, n);
    uint64_t bytes = (uint64_t)llround(n);
    if (src->m && !src->span.known)
        return cct_model_predict(src->m, bytes);
    if (src->m)
        return cct_model_predict_within(src->m, &src->span, bytes);
    return src->flat;
}

/* Rows over [lo, hi]: both ends and the figure's grid points strictly between them (the
 * grid starts at xmin, so curves of different blocks share their x values).  f NULL: only
 * count the rows, so that a block that would be empty is never started. */
static size_t curve(FILE *f, const cct_plot_figure *fig, const source *src, uint64_t lo,
                    uint64_t hi)
{
    size_t rows = 0;
    double step = pow(2.0, 1.0 / GRID_PER_OCTAVE);
    double x = (double)lo;
    double g = (double)fig->xmin;
    while (true) {
        double t = predict(fig, src, x);
        if (isfinite(t) && t > 0) {
            if (f)
                fprintf(f, "%.0f %.6g %.6g\n", x, t, busbw(fig, x, t));
            rows++;
        }
        if (x >= (double)hi)
            break;
        while (g <= x * (1 + 1e-9)) /* grid points that print as an end are skipped */
            g *= step;
        x = g < (double)hi * (1 - 1e-9) ? g : (double)hi;
    }
    return rows;
}

static source model_source(const cct_model *m)
{
    source s = {NULL, m, {false, 0, 0}, NAN};
    return s;
}

static void models(FILE *f, cct_plot_figure *fig)
{
    header(f, fig, "the table's fitted models, one block per configuration");
    fputs("# columns: bytes predicted_us busbw\n", f);
    int blocks = 0;
    for (size_t s = 0; s < fig->n_series; s++) {
        cct_plot_series *se = &fig->series[s];
        source src = model_source(se->model);
        if (!se->model || curve(NULL, fig, &src, fig->xmin, fig->xmax) == 0)
            continue; /* a stub model predicts nothing */
        char label[96];
        begin_block(f, &blocks);
        se->model_index = blocks - 1;
        fprintf(f, "# index %d: %s (%s model, %d line%s, r2 %.5f%s)\n", blocks - 1,
                cct_plot_series_label(se, label, sizeof label),
                se->model->kind == CCT_MODEL_LINEAR      ? "linear"
                : se->model->kind == CCT_MODEL_SEGMENTED ? "segmented"
                                                         : "piecewise",
                cct_model_segments(se->model), cct_model_segments(se->model) == 1 ? "" : "s",
                se->model->r2, se->model->poor_fit ? ", poor fit" : "");
        curve(f, fig, &src, fig->xmin, fig->xmax);
    }
}

/* The measured series of a configuration, or NULL. */
static const cct_plot_series *series_of(const cct_plot_figure *fig, int algo, int proto,
                                        int channels)
{
    for (size_t i = 0; i < fig->n_series; i++) {
        const cct_plot_series *s = &fig->series[i];
        if (s->algo == algo && s->proto == proto && s->channels == channels && !s->corrupt)
            return s;
    }
    return NULL;
}

/* What a band left to NCCL is drawn from, best first: NCCL's default as measured in the
 * band; the forced twin's model within the sizes it was measured at (from the store when it
 * has them, else what the table shows, cct_rule_model.h); the band's predicted_us (NCCL's
 * default's time at ref_bytes) near ref_bytes.  *what names the choice for the comment. */
static source nccl_source(const cct_plot_figure *fig, const cct_plot_band *b, const char **what)
{
    const cct_rule *r = b->rule;
    source src = {NULL, NULL, {false, 0, 0}, NAN};
    src.def = series_of(fig, CCT_DEFAULT, CCT_DEFAULT, 0);
    if (src.def && curve(NULL, fig, &src, b->lo, b->hi) > 0) {
        *what = "NCCL's choice: NCCL's default as measured (log-log between its sizes)";
        return src;
    }
    src.def = NULL;
    src.m = cct_rule_model(fig->table, fig->section, r);
    if (src.m) {
        const cct_plot_series *twin = series_of(fig, r->algo, r->proto, 0);
        if (twin) {
            src.span.known = true;
            src.span.lo = fig->points[twin->first]->bytes;
            src.span.hi = fig->points[twin->first + twin->count - 1]->bytes;
        } else {
            src.span = cct_model_table_span(fig->table, fig->section, src.m);
        }
        if (curve(NULL, fig, &src, b->lo, b->hi) > 0) {
            *what = twin ? "NCCL's choice: the forced twin's model within the sizes it was "
                           "measured at (NCCL's default not measured here)"
                         : "NCCL's choice: the forced twin's model where the table backs it "
                           "(NCCL's default not measured here)";
            return src;
        }
    }
    src.m = NULL;
    src.span.known = false;
    if (r->ref_bytes > 0 && isfinite(r->predicted_us) && r->predicted_us > 0) {
        src.flat = r->predicted_us;
        uint64_t lo = r->ref_bytes / (uint64_t)CCT_MODEL_SPAN_MARGIN;
        uint64_t hi = r->ref_bytes * (uint64_t)CCT_MODEL_SPAN_MARGIN;
        if (lo < b->hi && hi > b->lo) {
            *what = "NCCL's choice: the band's predicted_us (NCCL's default at ref_bytes), "
                    "near ref_bytes";
            return src;
        }
    }
    src.flat = NAN;
    *what = "NCCL's choice: nothing to draw (NCCL's default not measured here, no model "
            "measured here)";
    return src;
}

/* Sizes of band b that src draws: near ref_bytes for a band's own flat number. */
static void band_sizes(const cct_plot_band *b, const source *src, uint64_t *lo, uint64_t *hi)
{
    *lo = b->lo;
    *hi = b->hi;
    const cct_rule *r = b->rule;
    if (b->nccl && !src->def && !src->m && !isnan(src->flat)) {
        uint64_t a = r->ref_bytes / (uint64_t)CCT_MODEL_SPAN_MARGIN;
        uint64_t z = r->ref_bytes * (uint64_t)CCT_MODEL_SPAN_MARGIN;
        *lo = a > *lo ? a : *lo;
        *hi = z < *hi ? z : *hi;
    }
}

static void envelope(FILE *f, cct_plot_figure *fig)
{
    header(f, fig, "the table's choice per band (the envelope), one block per band");
    fputs("# columns: bytes predicted_us busbw\n", f);
    int blocks = 0;
    for (size_t i = 0; i < fig->n_bands; i++) {
        cct_plot_band *b = &fig->bands[i];
        const cct_rule *r = b->rule;
        const char *what = NULL;
        source src;
        if (b->nccl) {
            src = nccl_source(fig, b, &what);
        } else {
            src = model_source(cct_rule_model(fig->table, fig->section, r));
            src.flat = r->predicted_us;
        }
        uint64_t lo, hi;
        band_sizes(b, &src, &lo, &hi);
        bool drawn = lo < hi && curve(NULL, fig, &src, lo, hi) > 0;
        if (drawn) {
            begin_block(f, &blocks);
            b->index = blocks - 1;
        }
        if (!b->nccl)
            what = !drawn  ? "nothing to draw (no model, no predicted_us, or outside the sizes)"
                   : src.m ? "its fitted model"
                           : "the band's predicted_us (no model)";
        char lo_t[32], hi_t[32];
        fprintf(f, "# band %zu of %zu: %s to %s: %s/%s, channels %d: %s\n", i + 1, fig->n_bands,
                cct_format_bytes(r->min_bytes, lo_t, sizeof lo_t),
                cct_format_bytes(r->max_bytes, hi_t, sizeof hi_t), cct_algo_name(r->algo),
                cct_proto_name(r->proto), r->channels, what);
        if (drawn)
            curve(f, fig, &src, lo, hi);
    }
}

static void corrupt(FILE *f, const cct_plot_figure *fig)
{
    header(f, fig, "points whose results were wrong");
    fputs("# columns: bytes median_us busbw\n", f);
    for (size_t i = 0; i < fig->n_points; i++) {
        const cct_point *p = fig->points[i];
        if (p->status == CCT_POINT_CORRUPT)
            fprintf(f, "%llu %.6g %.6g\n", (unsigned long long)p->bytes, p->stats.median_us,
                    busbw(fig, (double)p->bytes, p->stats.median_us));
    }
}

cct_status cct_plot_write_data(cct_plot_figure *fig, const char *dir, cct_error *err)
{
    char path[4096];
    FILE *f = NULL;
    cct_status st = CCT_OK;
    if (fig->n_series) {
        if ((st = open_file(dir, fig, "-measured.dat", &f, path, sizeof path, err)) != CCT_OK)
            return st;
        measured(f, fig);
        if ((st = close_file(f, path, st, err)) != CCT_OK)
            return st;
    }
    if (fig->section) {
        if ((st = open_file(dir, fig, "-models.dat", &f, path, sizeof path, err)) != CCT_OK)
            return st;
        models(f, fig);
        if ((st = close_file(f, path, st, err)) != CCT_OK)
            return st;
        if ((st = open_file(dir, fig, "-envelope.dat", &f, path, sizeof path, err)) != CCT_OK)
            return st;
        envelope(f, fig);
        if ((st = close_file(f, path, st, err)) != CCT_OK)
            return st;
    }
    if (fig->n_corrupt_points) {
        if ((st = open_file(dir, fig, "-corrupt.dat", &f, path, sizeof path, err)) != CCT_OK)
            return st;
        corrupt(f, fig);
        st = close_file(f, path, st, err);
    }
    return st;
}
