/*
 * cct_plot_data.c - the data files of one figure, plain text that gnuplot reads and a
 * reviewer can read too (every block starts with a comment naming it).
 *
 *   NAME-measured.dat  one block per configuration: bytes, median/min/max/P95 time, bus
 *                      bandwidth at the median and at max/min time, corrupt flag, samples
 *   NAME-models.dat    one block per configuration the table has a model of: the model
 *                      evaluated (cct_model_predict) on a log grid of 16 points per octave
 *   NAME-envelope.dat  one block per table band: the chosen configuration's predicted time
 *                      over the band (its model, or the band's predicted_us as a flat line)
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

/* Predicted time at n bytes: the model, or a flat value when there is none. */
static double predict(const cct_model *m, double flat, double n)
{
    if (m)
        return cct_model_predict(m, (uint64_t)llround(n));
    return flat;
}

/* Rows over [lo, hi]: both ends and the figure's grid points strictly between them (the
 * grid starts at xmin, so curves of different blocks share their x values).  f NULL: only
 * count the rows, so that a block that would be empty is never started. */
static size_t curve(FILE *f, const cct_plot_figure *fig, const cct_model *m, double flat,
                    uint64_t lo, uint64_t hi)
{
    size_t rows = 0;
    double step = pow(2.0, 1.0 / GRID_PER_OCTAVE);
    double x = (double)lo;
    double g = (double)fig->xmin;
    while (true) {
        double t = predict(m, flat, x);
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

static void models(FILE *f, cct_plot_figure *fig)
{
    header(f, fig, "the table's fitted models, one block per configuration");
    fputs("# columns: bytes predicted_us busbw\n", f);
    int blocks = 0;
    for (size_t s = 0; s < fig->n_series; s++) {
        cct_plot_series *se = &fig->series[s];
        if (!se->model || curve(NULL, fig, se->model, NAN, fig->xmin, fig->xmax) == 0)
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
        curve(f, fig, se->model, NAN, fig->xmin, fig->xmax);
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
        const cct_model *m = cct_rule_model(fig->table, fig->section, r);
        bool drawn = b->lo < b->hi && curve(NULL, fig, m, r->predicted_us, b->lo, b->hi) > 0;
        if (drawn) {
            begin_block(f, &blocks);
            b->index = blocks - 1;
        }
        char lo[32], hi[32];
        fprintf(f, "# band %zu of %zu: %s to %s: %s/%s, channels %d: %s\n", i + 1, fig->n_bands,
                cct_format_bytes(r->min_bytes, lo, sizeof lo),
                cct_format_bytes(r->max_bytes, hi, sizeof hi), cct_algo_name(r->algo),
                cct_proto_name(r->proto), r->channels,
                !drawn ? "nothing to draw (no model, no predicted_us, or outside the sizes)"
                : m    ? "its fitted model"
                       : "the band's predicted_us (no model)");
        if (drawn)
            curve(f, fig, m, r->predicted_us, b->lo, b->hi);
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
