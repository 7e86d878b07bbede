/*
 * cct_decide.c - one section's decision, orchestrated: the stages of the pipeline
 * (cct_decide_internal.h) called in order, each on the output of the one before:
 *
 *   points -> prepare -> buffers -> bands -> settle -> rules -> a checked section
 *
 * cct_decide_table.c does the same for a whole table (one buffer choice for every
 * section) and cct_decide_modes.c for the call-mode sections.  docs/fitting.md,
 * "Decisions", gives every rule and the reasons.
 */
#include <stdlib.h>
#include <string.h>

#include "cct_decide_internal.h"
#include "cct_fit_internal.h"

void cct_decide_options_default(cct_decide_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->tie = 0.05;
    opt->paired_tie = 0.05;
    opt->channel_tie = 0.10;
    opt->max_loss_default = 0.02;
    opt->evidence_z = 2.0;
    opt->prior_df = 4;
    opt->min_band_factor = 2.0;
    opt->min_band_sizes = 2;
    opt->ll128_allowed = false;
    opt->worst_case_align = false;
    opt->dtype = -1;
    opt->auto_buffers = true;
    cct_fit_options_default(&opt->fit);
}

cct_status cct_dsec_decide(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                           cct_section *out, cct_error *err)
{
    cct_dbands bands;
    cct_status st = cct_decide_bands(sec, opt, b, &bands, err);
    if (st != CCT_OK)
        return st;
    cct_dsettled settled;
    st = cct_decide_settle(&bands, &settled, err);
    if (st == CCT_OK)
        st = cct_decide_rules(&settled, out, err);
    cct_dsettled_free(&settled);
    cct_dbands_free(&bands);
    return st;
}

cct_status cct_dsec_build(const cct_dsec *sec, const cct_decide_options *opt, const cct_buffers *b,
                          cct_table *table, cct_error *err)
{
    cct_section s;
    memset(&s, 0, sizeof s);
    s.coll = sec->coll;
    s.ranks = sec->ranks;
    s.nodes = sec->nodes;
    s.pipe_ops = CCT_ANY;
    s.reg_buff = CCT_ANY;
    cct_status st = cct_dsec_decide(sec, opt, b, &s, err);
    if (st == CCT_OK)
        st = cct_table_check_section(&s, err);
    if (st == CCT_OK) {
        cct_section *dst = cct_table_add_section(table, s.coll, s.ranks, s.nodes);
        if (!dst)
            st = cct_error_set(err, CCT_ENOMEM, "out of memory");
        else
            *dst = s;
    }
    if (st != CCT_OK)
        cct_section_release(&s);
    return st;
}

cct_status cct_build_section(const cct_point *points, size_t n, const cct_decide_options *opt,
                             cct_table *table, cct_error *err)
{
    cct_decide_options def;
    if (!opt) {
        cct_decide_options_default(&def);
        opt = &def;
    }
    cct_dsec sec;
    cct_status st = cct_dsec_prepare(points, n, opt, &sec, err);
    if (st != CCT_OK)
        return st;
    cct_buffers b = {opt->buffsize, opt->ll_buffsize, opt->ll128_buffsize};
    if (opt->auto_buffers)
        st = cct_dsec_choose_buffers(&sec, 1, opt->tie, &b, err);
    size_t before = table->n_sections;
    if (st == CCT_OK)
        st = cct_dsec_build(&sec, opt, &b, table, err);
    if (st == CCT_OK && (st = cct_table_check(table, err)) != CCT_OK) {
        /* e.g. a section for this topology was already there: leave the table as it was */
        cct_section *last = &table->sections[before];
        free(last->rules);
        free(last->models);
        free(last->penalties);
        table->n_sections = before;
    }
    cct_dsec_free(&sec);
    return st;
}
