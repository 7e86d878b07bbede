/*
 * cct_plot.h - plots of measurements, fitted models and a table's choices, drawn by gnuplot
 * (`ccltune plot`, and the plots `ccltune tune` leaves next to its table).
 *
 * One figure per collective and topology: time (log-log) and bus bandwidth versus size, as
 * PNG and SVG, named COLL-<R>r<N>n-{time,busbw}.{png,svg}.  Each configuration is a series
 * of measured medians with min-max error bars, NCCL's default black and thick; with a table,
 * each series gets its fitted model as a curve and the table's choice per band a thick grey
 * envelope.  Corrupt configurations are drawn red with crosses, titled "(CORRUPT)", their
 * wrong points circled under the legend entry "corrupt".  Data files and the gnuplot script
 * stay next to the images (`gnuplot COLL-<R>r<N>n.gp` redraws them); docs/plots.md.
 *
 * Ownership: inputs are only read; nothing returned needs freeing.  Never prints: gnuplot's
 * own output is captured and its first line ends up in err on failure.
 */
#ifndef CCT_PLOT_H
#define CCT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cct_error.h"
#include "cct_measure.h"
#include "cct_table.h"

#define CCT_PLOT_GNUPLOT_HINT "apt-get install gnuplot-nox"

typedef struct cct_plot_options {
    const char *gnuplot;  /* program: a path, or a name searched on PATH (default "gnuplot") */
    bool run_gnuplot;     /* false: write the data files and scripts only (default true) */
    const char *subtitle; /* second title line ("NVIDIA H200, NCCL 2.28.9"); NULL: none */
    /* with every run: draw runs of production observations (ccltune import of job
     * recordings) too; false (the default) leaves them out, as fit does */
    bool include_production;
} cct_plot_options;

typedef struct cct_plot_summary {
    size_t n_figures;                /* (collective, ranks, nodes) plotted */
    size_t n_images;                 /* PNG and SVG files gnuplot wrote (4 per figure) */
    size_t n_series;                 /* configurations drawn, over all figures */
    size_t n_corrupt;                /* of those, marked corrupt */
    size_t production_runs_left_out; /* cct_plot_store with every run, not include_production */
} cct_plot_summary;

void cct_plot_options_default(cct_plot_options *opt);

/* What `ccltune tune` calls: plot the points of the given runs (n_runs == 0: every run) of
 * the store at store_path, with table's models and choices when table is not NULL, into
 * out_dir (created, with its parents, when missing).  Runs gnuplot; CCT_ENOTFOUND with the
 * install hint when it is not on PATH. */
cct_status cct_plot_all(const char *store_path, const int64_t *run_ids, size_t n_runs,
                        const cct_table *table, const char *out_dir, cct_error *err);

/* cct_plot_all() with options (NULL: defaults; a NULL subtitle is filled from the runs'
 * fingerprint) and a summary (may be NULL).  Every run (n_runs == 0) means every run but
 * those of production observations unless opt->include_production; CCT_EINVAL when those
 * are all the store has. */
cct_status cct_plot_store(const char *store_path, const int64_t *run_ids, size_t n_runs,
                          const cct_table *table, const char *out_dir, const cct_plot_options *opt,
                          cct_plot_summary *summary, cct_error *err);

/* The same from points already loaded.  A figure is made for every (coll, ranks, nodes)
 * the points have, and for every section of the table that has no points (curves only).
 * CCT_EINVAL when there is nothing to plot. */
cct_status cct_plot_points(const cct_point *points, size_t n, const cct_table *table,
                           const char *out_dir, const cct_plot_options *opt,
                           cct_plot_summary *summary, cct_error *err);

/* Resolve the gnuplot program (a path is checked, a name is searched on PATH) into buf.
 * CCT_ENOTFOUND, with CCT_PLOT_GNUPLOT_HINT in the message, when it is not there. */
cct_status cct_plot_find_gnuplot(const char *program, char *buf, size_t len, cct_error *err);

#endif
