/*
 * cct_plot_internal.h - one figure as the plot modules share it: cct_plot.c groups points
 * into figures, cct_plot_data.c writes a figure's data files, cct_plot_script.c its gnuplot
 * script, cct_plot_gnuplot.c runs gnuplot on it.
 *
 * Ownership: a figure owns its arrays (points holds pointers into the caller's points,
 * series and bands are its own), freed by cct_plot_figure_free(); table, section and the
 * models it points at belong to the caller's table.
 */
#ifndef CCT_PLOT_INTERNAL_H
#define CCT_PLOT_INTERNAL_H

#include "cct_plot.h"

#define CCT_PLOT_NAME_MAX 64

/* One configuration drawn: its points are figure->points[first .. first + count). */
typedef struct cct_plot_series {
    int algo, proto; /* CCT_DEFAULT: NCCL's own choice */
    int channels;
    bool corrupt;           /* some point of the configuration was wrong */
    size_t first, count;    /* points with a median, sorted by size */
    const cct_model *model; /* the table's fitted model of it, or NULL */
    int measured_index;     /* gnuplot index of its block in NAME-measured.dat; -1: none */
    int model_index;        /* ... in NAME-models.dat; -1: none */
} cct_plot_series;

/* The part of one table band inside the plotted size range. */
typedef struct cct_plot_band {
    const cct_rule *rule;
    uint64_t lo, hi; /* clipped to [xmin, xmax] */
    int index;       /* gnuplot index of its block in NAME-envelope.dat; -1: nothing drawn */
    bool nccl;       /* left to NCCL (cct_rule_is_nccl_choice): drawn as "NCCL's choice" */
} cct_plot_band;

typedef struct cct_plot_figure {
    int coll, ranks, nodes;
    char name[CCT_PLOT_NAME_MAX]; /* "allreduce-4r4n": the prefix of every file */
    const cct_point **points;     /* drawn points, grouped by series */
    size_t n_points;
    cct_plot_series *series;
    size_t n_series;
    size_t n_corrupt_points;
    const cct_table *table;     /* NULL without a table */
    const cct_section *section; /* the section the plugin uses for an ordinary call; NULL */
    cct_plot_band *bands;
    size_t n_bands;
    uint64_t xmin, xmax; /* plotted size range, bytes */
    double busbw_factor;
} cct_plot_figure;

void cct_plot_figure_free(cct_plot_figure *fig);

/* Series label as in the legends: "NCCL default", "ring/ll", "tree/simple 2 ch". */
const char *cct_plot_series_label(const cct_plot_series *s, char *buf, size_t len);

/* Write NAME-measured.dat, NAME-models.dat, NAME-envelope.dat and NAME-corrupt.dat (the
 * last three only when they have something) into dir; fills the figure's gnuplot indexes. */
cct_status cct_plot_write_data(cct_plot_figure *fig, const char *dir, cct_error *err);

/* Write NAME.gp into dir (after cct_plot_write_data). */
cct_status cct_plot_write_script(const cct_plot_figure *fig, const char *dir,
                                 const cct_plot_options *opt, cct_error *err);

/* Run gnuplot (resolved path) on NAME.gp inside dir; check and count the four images. */
cct_status cct_plot_run_gnuplot(const cct_plot_figure *fig, const char *gnuplot, const char *dir,
                                size_t *n_images, cct_error *err);

/* Join dir and a file name into buf; CCT_EINVAL when it does not fit. */
cct_status cct_plot_path(char *buf, size_t len, const char *dir, const char *name,
                         const char *suffix, cct_error *err);

#endif
