/*
 * cct_plot_script.c - the gnuplot script of one figure, NAME.gp, which draws
 * NAME-time.{png,svg} and NAME-busbw.{png,svg} from the figure's data files.
 *
 * The script is written to be read and rerun by a reviewer: it only refers to files next to
 * it, and picks its PNG terminal when it runs (pngcairo where that gnuplot has it, else the
 * libgd png terminal that every gnuplot build, gnuplot-nox included, carries), so it works
 * on another machine than the one that wrote it.  Text is set noenhanced: algorithm names
 * such as nvls_tree would otherwise print with subscripts.
 *
 * Styles: a colour per algorithm/protocol, a point and dash type per channel count, NCCL's
 * default thick and black, the table's envelope a wide grey band drawn first (underneath),
 * light amber where the table leaves the band to NCCL (the envelope follows NCCL's default),
 * corrupt configurations red with crosses, and their wrong points circled in red on top.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cct_plot_internal.h"

#define WIDTH 1400
#define HEIGHT 860
#define CORRUPT_RGB "#e00000"
#define NCCL_CHOICE_RGB "#f2d49b" /* light amber: bands left to NCCL */

/* Colours for algorithm x protocol (no red: red marks corrupt points). */
static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79"};

static const char *colour(const cct_plot_series *s)
{
    int k = s->algo * CCT_NUM_PROTOS + s->proto;
    return colours[(unsigned)k % (sizeof colours / sizeof colours[0])];
}

/* Point and dash type by channel count: NCCL's, 1, 2, max (64), other. */
static void channel_style(int channels, int *pt, int *dt)
{
    static const int pts[] = {7, 9, 5, 13, 11}, dts[] = {1, 2, 3, 4, 5};
    int k = channels == 0 ? 0 : channels == 1 ? 1 : channels == 2 ? 2 : channels == 64 ? 3 : 4;
    *pt = pts[k];
    *dt = dts[k];
}

/* A gnuplot single-quoted string: a quote is written twice. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if (*s != '\n' && *s != '\r')
            fputc(*s, f);
    }
    fputc('\'', f);
}

static void xtics(FILE *f, const cct_plot_figure *fig)
{
    /* every even power of two in range (1 KiB, 4 KiB, ...), every power when it is narrow */
    int per = fig->xmax / fig->xmin >= 64 ? 2 : 1;
    int e = 0;
    while (e < 63 && ((uint64_t)1 << e) < fig->xmin)
        e++;
    e += per == 2 && e % 2 != 0;
    char lab[32];
    int n = 0;
    fputs("set xtics (", f);
    for (; e < 64 && ((uint64_t)1 << e) <= fig->xmax; e += per, n++) {
        uint64_t x = (uint64_t)1 << e;
        fprintf(f, "%s\"%s\" %llu", n ? ", " : "", cct_format_bytes(x, lab, sizeof lab),
                (unsigned long long)x);
    }
    if (n == 0) /* no power of two inside: label the start */
        fprintf(f, "\"%s\" %llu", cct_format_bytes(fig->xmin, lab, sizeof lab),
                (unsigned long long)fig->xmin);
    fputs(")\n", f);
}

static void band_marks(FILE *f, const cct_plot_figure *fig)
{
    int tag = 1;
    for (size_t i = 0; i < fig->n_bands; i++) {
        const cct_plot_band *b = &fig->bands[i];
        if (b->index < 0)
            continue;
        const cct_rule *r = b->rule;
        if (b->lo > fig->xmin)
            fprintf(f,
                    "set arrow %d from first %llu, graph 0 to first %llu, graph 1 nohead dt 3 "
                    "lc rgb '#909090' back\n",
                    tag, (unsigned long long)b->lo, (unsigned long long)b->lo);
        char text[64];
        if (b->nccl)
            snprintf(text, sizeof text, "left to NCCL (%s/%s)", cct_algo_name(r->algo),
                     cct_proto_name(r->proto));
        else if (r->channels)
            snprintf(text, sizeof text, "%s/%s %d ch", cct_algo_name(r->algo),
                     cct_proto_name(r->proto), r->channels);
        else
            snprintf(text, sizeof text, "%s/%s", cct_algo_name(r->algo), cct_proto_name(r->proto));
        fprintf(f, "set label %d ", tag);
        put_quoted(f, text);
        fprintf(f,
                " at first %llu, graph 0.98 rotate by 90 right offset character 1,0 font ',8' "
                "tc rgb '#505050' front\n",
                (unsigned long long)b->lo);
        tag++;
    }
}

typedef struct clauses {
    FILE *f;
    int n;
} clauses;

static void clause(clauses *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void clause(clauses *c, const char *fmt, ...)
{
    fputs(c->n++ ? ", \\\n         " : "    plot ", c->f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->f, fmt, ap);
    va_end(ap);
}

static void titled(clauses *c, const char *label)
{
    fputs(" title ", c->f);
    put_quoted(c->f, label);
}

/* The envelope: runs of consecutive drawn bands of one kind share a clause; bands of the
 * table's own choice are grey, bands left to NCCL (NCCL's default) light amber, each kind
 * titled once. */
static void envelope_clauses(clauses *c, const cct_plot_figure *fig, bool bw)
{
    bool titled_kind[2] = {false, false};
    size_t i = 0;
    while (i < fig->n_bands) {
        const cct_plot_band *b = &fig->bands[i];
        if (b->index < 0) {
            i++;
            continue;
        }
        int first = b->index, last = b->index;
        bool nccl = b->nccl;
        for (i++; i < fig->n_bands; i++) {
            const cct_plot_band *n = &fig->bands[i];
            if (n->index < 0)
                continue;
            if (n->nccl != nccl)
                break;
            last = n->index;
        }
        clause(c, "'%s-envelope.dat' index %d", fig->name, first);
        if (last != first)
            fprintf(c->f, ":%d", last);
        fprintf(c->f, " using 1:%d with lines lw 9 lc rgb '%s'", bw ? 3 : 2,
                nccl ? NCCL_CHOICE_RGB : "#c8c8c8");
        if (titled_kind[nccl])
            fputs(" notitle", c->f);
        else
            titled(c, nccl ? "NCCL's choice (band left to NCCL)" : "chosen by the table");
        titled_kind[nccl] = true;
    }
}

/* One plot command: busbw selects the bandwidth columns. */
static void plot(FILE *f, const cct_plot_figure *fig, bool bw)
{
    clauses c = {f, 0};
    const char *name = fig->name;
    envelope_clauses(&c, fig, bw);
    for (size_t i = 0; i < fig->n_series; i++) {
        const cct_plot_series *s = &fig->series[i];
        char label[96];
        cct_plot_series_label(s, label, sizeof label);
        const char *cols = bw ? "1:6:7:8" : "1:2:3:4";
        if (s->algo == CCT_DEFAULT) {
            clause(&c,
                   "'%s-measured.dat' index %d using %s with yerrorlines lw 3 pt 7 ps 1.1 "
                   "lc rgb 'black'",
                   name, s->measured_index, cols);
            titled(&c, label);
            continue;
        }
        int pt, dt;
        channel_style(s->channels, &pt, &dt);
        const char *rgb = colour(s);
        if (s->corrupt) { /* crosses in the corrupt red: this configuration gave wrong results */
            pt = 2;
            rgb = CORRUPT_RGB;
        }
        clause(&c, "'%s-measured.dat' index %d using %s with %s lc rgb '%s' pt %d ps 0.8 dt %d",
               name, s->measured_index, cols, s->model_index >= 0 ? "yerrorbars" : "yerrorlines",
               rgb, pt, dt);
        titled(&c, label);
        if (s->model_index >= 0)
            clause(&c,
                   "'%s-models.dat' index %d using 1:%d with lines lw 1.5 lc rgb '%s' dt %d "
                   "notitle",
                   name, s->model_index, bw ? 3 : 2, rgb, dt);
    }
    if (fig->n_corrupt_points)
        clause(&c,
               "'%s-corrupt.dat' using 1:%d with points pt 6 ps 3 lw 2 lc rgb '%s' "
               "title 'corrupt'",
               name, bw ? 3 : 2, CORRUPT_RGB);
    fputs("\n", f);
}

static void title_var(FILE *f, const char *var, const cct_plot_figure *fig, const char *what,
                      const cct_plot_options *opt)
{
    char head[160];
    snprintf(head, sizeof head, "%s, %d rank%s (%d node%s): %s", cct_coll_name(fig->coll),
             fig->ranks, fig->ranks == 1 ? "" : "s", fig->nodes, fig->nodes == 1 ? "" : "s", what);
    fprintf(f, "%s = ", var);
    put_quoted(f, head);
    if (opt->subtitle) {
        fputs(" . \"\\n\" . ", f);
        put_quoted(f, opt->subtitle);
    }
    fputs("\n", f);
}

static void script(FILE *f, const cct_plot_figure *fig, const cct_plot_options *opt)
{
    const char *name = fig->name;
    fprintf(f,
            "# %s.gp - written by ccltune %s plot.  Redraw with `gnuplot %s.gp` in this folder:\n"
            "# it reads %s-*.dat and writes %s-time.{png,svg} and %s-busbw.{png,svg}.\n"
            "# Measured: median per size, error bars min..max; lines without points: the\n"
            "# table's fitted models; wide grey: the table's choice per band (light amber:\n"
            "# left to NCCL, following NCCL's default).\n",
            name, CCT_VERSION, name, name, name, name);
    fputs("set encoding utf8\n", f);
    fprintf(f,
            "png_terminal = strstrt(GPVAL_TERMINALS . ' ', ' pngcairo ') > 0 ? "
            "\"pngcairo size %d,%d noenhanced font 'Sans,10'\" : "
            "\"png size %d,%d noenhanced\"\n",
            WIDTH, HEIGHT, WIDTH, HEIGHT);
    fprintf(f,
            "svg_terminal = \"svg size %d,%d dynamic noenhanced font 'Sans,10' "
            "background rgb 'white'\"\n",
            WIDTH, HEIGHT);
    title_var(f, "time_title", fig, "time per call", opt);
    title_var(f, "busbw_title", fig, "bus bandwidth", opt);
    fprintf(f, "set logscale x 2\nset xrange [%llu:%llu]\n",
            (unsigned long long)(fig->xmin - fig->xmin / 8),
            (unsigned long long)(fig->xmax + fig->xmax / 8));
    xtics(f, fig);
    fputs("set xlabel 'message size (bytes NCCL passes its tuner)'\n"
          "set grid xtics ytics mytics lc rgb '#e0e0e0'\n"
          "set key outside right top vertical noenhanced font ',9' spacing 1.1\n"
          "set bars small\n",
          f);
    band_marks(f, fig);
    fputs("do for [fmt in 'png svg'] {\n"
          "    eval 'set terminal ' . (fmt eq 'png' ? png_terminal : svg_terminal)\n",
          f);
    fprintf(f, "    set output '%s-time.' . fmt\n", name);
    fputs("    set title time_title\n"
          "    set logscale y 10\n"
          "    set yrange [*:*]\n"
          "    set ylabel 'time per call (µs)'\n",
          f);
    plot(f, fig, false);
    fprintf(f, "    set output '%s-busbw.' . fmt\n", name);
    fputs("    set title busbw_title\n"
          "    unset logscale y\n"
          "    set yrange [0:*]\n"
          "    set ylabel 'bus bandwidth (GB/s, nccl-tests busbw)'\n",
          f);
    plot(f, fig, true);
    fputs("    unset output\n}\n", f);
}

cct_status cct_plot_write_script(const cct_plot_figure *fig, const char *dir,
                                 const cct_plot_options *opt, cct_error *err)
{
    char path[4096];
    cct_status st = cct_plot_path(path, sizeof path, dir, fig->name, ".gp", err);
    if (st != CCT_OK)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return cct_error_set(err, CCT_EIO, "cannot write %s: %s", path, strerror(errno));
    script(f, fig, opt);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return cct_error_set(err, CCT_EIO, "cannot write %s: %s", path, strerror(errno));
    return CCT_OK;
}
