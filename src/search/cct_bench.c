/*
 * cct_bench.c - the bench plan (default, tuned, forced candidates) and its report
 * (see cct_bench.h).
 *
 * The candidates for the oracle are every algorithm/protocol NCCL offers on the path (as the
 * search forces them, at NCCL's channel count), plus, where the table has a section, the
 * configurations it has models for at its buffer sizes and the ones its rules apply -- so a
 * table without models (hand-written, or the per-size argmin) has an oracle too.  A table
 * with NCCL model constants is also benched where it has no section (with --rules off,
 * everywhere), and 'default' runs on a communicator initialised with NCCL's own constants, so
 * tuned vs default is the table's constants (and rules) against untouched NCCL.  The report
 * joins the three kinds of points per collective and size; ratios are speed ratios
 * (default time / tuned time), so 1.10 means the table is 10 % faster.
 */
#include "cct_bench.h"
#include "cct_bench_compare.h"
#include "cct_facts.h"
#include "cct_say.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cct_constants.h"
#include "cct_stats.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void cct_bench_sort_sizes(uint64_t *sizes, size_t n)
{
    qsort(sizes, n, sizeof *sizes, cmp_u64); /* ascending: groups run small to large */
}

size_t cct_bench_default_sizes(uint64_t max_bytes, uint64_t *sizes, size_t cap)
{
    static const uint64_t off_grid[] = {100000, 3u << 20, 5767168, 12000000};
    size_t n = 0;
    for (uint64_t s = 1024; s <= max_bytes && n < cap; s *= 4)
        sizes[n++] = s;
    for (size_t i = 0; i < sizeof off_grid / sizeof off_grid[0] && n < cap; i++)
        if (off_grid[i] <= max_bytes)
            sizes[n++] = off_grid[i];
    cct_bench_sort_sizes(sizes, n);
    return n;
}

static bool have_config(const cct_config *list, size_t n, const cct_config *c)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].coll == c->coll && list[i].algo == c->algo && list[i].proto == c->proto &&
            list[i].channels == c->channels)
            return true;
    return false;
}

static uint64_t env_bytes(const cct_table *t, const char *key)
{
    for (size_t i = 0; i < t->n_env; i++)
        if (strcmp(t->env[i].key, key) == 0)
            return strtoull(t->env[i].value, NULL, 10);
    return 0;
}

static bool same_topology(const cct_section *s, int coll, int ranks, int nodes)
{
    return s->coll == coll && s->ranks == ranks && s->nodes == nodes;
}

/* Append c unless the collective's group (from `first`) has it already. */
static cct_status push_config(cct_config **cfgs, size_t *n, size_t *cap, size_t first,
                              const cct_config *c, cct_error *err)
{
    if (c->algo >= 0 && have_config(*cfgs + first, *n - first, c))
        return CCT_OK;
    if (*n == *cap) {
        cct_config *p = realloc(*cfgs, *cap * 2 * sizeof *p);
        if (!p)
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
        *cfgs = p;
        *cap *= 2;
    }
    (*cfgs)[(*n)++] = *c;
    return CCT_OK;
}

bool cct_bench_generic_candidate(const cct_table *t, int coll, int algo, int proto)
{
    if (algo != CCT_ALGO_RING && !(algo == CCT_ALGO_TREE && cct_coll_has_algo(coll, algo)))
        return false;
    if (proto == CCT_PROTO_LL128 && !t->ll128_allowed)
        return false;
    return proto >= 0 && proto < CCT_NUM_PROTOS;
}

/* Whether the search's space forces (algo, proto) (its --algos and --protos). */
static bool in_space(const cct_space *s, int algo, int proto)
{
    bool a = false, p = false;
    for (size_t i = 0; i < s->n_algos; i++)
        a |= s->algos[i] == algo;
    for (size_t i = 0; i < s->n_protos; i++)
        p |= s->protos[i] == proto;
    return a && p;
}

/* The oracle's forced candidates for c's collective, appended to its group: the
 * configurations the table has models for (at its buffer sizes) and the ones its rules
 * apply (but LL128 where the verdict forbids it), in any section of this collective and
 * topology (keyed by call mode or not), where it has a section; then every algorithm/protocol of
 * the search's space that NCCL offers on this path at its channel count (Ring, Tree for allreduce;
 * LL128 where the table's verdict allows it), so a table without models -- hand-written, or the
 * per-size argmin -- has an oracle too. */
static cct_status push_candidates(const cct_search_opts *o, const cct_table *t, bool has_section,
                                  cct_config **cfgs, size_t *n, size_t *cap, size_t first,
                                  cct_config *c, cct_error *err)
{
    cct_status st = CCT_OK;
    for (size_t si = 0; st == CCT_OK && has_section && si < t->n_sections; si++) {
        const cct_section *s = &t->sections[si];
        if (!same_topology(s, c->coll, c->ranks, c->nodes))
            continue;
        for (size_t m = 0; st == CCT_OK && m < s->n_models; m++) {
            if (s->models[m].buffsize != c->buffsize)
                continue;
            c->algo = s->models[m].algo;
            c->proto = s->models[m].proto;
            c->channels = s->models[m].channels;
            st = push_config(cfgs, n, cap, first, c, err);
        }
        for (size_t r = 0; st == CCT_OK && r < s->n_rules; r++) {
            if (s->rules[r].proto == CCT_PROTO_LL128 && !t->ll128_allowed)
                continue; /* not in the session's protocol set: NCCL would not run it */
            c->algo = s->rules[r].algo;
            c->proto = s->rules[r].proto;
            c->channels = s->rules[r].channels;
            st = push_config(cfgs, n, cap, first, c, err);
        }
    }
    c->channels = 0;
    for (int a = 0; st == CCT_OK && a < CCT_NUM_ALGOS; a++)
        for (int p = 0; st == CCT_OK && p < CCT_NUM_PROTOS; p++) {
            if (!in_space(&o->space, a, p) || !cct_bench_generic_candidate(t, c->coll, a, p))
                continue;
            c->algo = a;
            c->proto = p;
            st = push_config(cfgs, n, cap, first, c, err);
        }
    return st;
}

/* The plan's group of one collective, for the compared tables' rules. */
typedef struct group {
    cct_config **cfgs;
    size_t *n, *cap, first;
    cct_config c;
} group;

static cct_status push_rule(void *ctx, int algo, int proto, int channels, cct_error *err)
{
    group *g = ctx;
    g->c.algo = algo;
    g->c.proto = proto;
    g->c.channels = channels;
    return push_config(g->cfgs, g->n, g->cap, g->first, &g->c, err);
}

/* Loads the --compare tables (n of them into cmp); on failure, those loaded are freed. */
static cct_status load_compared(const cct_search_opts *o, cct_table *cmp, cct_error *err)
{
    for (size_t i = 0; i < o->n_bench_compare; i++) {
        cct_status st = cct_table_load_file(o->bench_compare[i], &cmp[i], err);
        if (st != CCT_OK) {
            while (i-- > 0)
                cct_table_destroy(&cmp[i]);
            return st;
        }
    }
    return CCT_OK;
}

static cct_status build_plan(const cct_search_opts *o, const cct_table *t, const cct_table *cmp,
                             int ranks, int nodes, cct_plan *plan, cct_error *err);

cct_status cct_bench_build_plan(const cct_search_opts *o, const cct_table *t, int ranks, int nodes,
                                cct_plan *plan, cct_error *err)
{
    cct_table cmp[CCT_BENCH_MAX_COMPARE];
    memset(plan, 0, sizeof *plan);
    if (o->n_bench_compare > CCT_BENCH_MAX_COMPARE)
        return cct_error_set(err, CCT_EINVAL, "--compare: at most %d tables",
                             CCT_BENCH_MAX_COMPARE);
    cct_status st = load_compared(o, cmp, err);
    if (st != CCT_OK)
        return st;
    st = build_plan(o, t, cmp, ranks, nodes, plan, err);
    for (size_t i = 0; i < o->n_bench_compare; i++)
        cct_table_destroy(&cmp[i]);
    return st;
}

static cct_status build_plan(const cct_search_opts *o, const cct_table *t, const cct_table *cmp,
                             int ranks, int nodes, cct_plan *plan, cct_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->space = o->space;
    plan->space.ranks = ranks;
    plan->space.nodes = nodes;
    plan->space.n_colls = 0;
    uint64_t buf = env_bytes(t, cct_proto_facts_of(CCT_PROTO_SIMPLE)->buffsize_env),
             llbuf = env_bytes(t, cct_proto_facts_of(CCT_PROTO_LL)->buffsize_env),
             ll128buf = env_bytes(t, cct_proto_facts_of(CCT_PROTO_LL128)->buffsize_env);
    /* a table with constants is benchable everywhere: NCCL's model carries it where no
     * section does (and everywhere with --rules off) */
    bool constants = t->constants.present;
    size_t cap = 16, n = 0;
    cct_config *cfgs = malloc(cap * sizeof *cfgs);
    if (!cfgs)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    for (size_t ci = 0; ci < o->space.n_colls; ci++) {
        int coll = o->space.colls[ci];
        const cct_section *sec = cct_table_find_section(t, coll, ranks, nodes, 1, 0);
        if (!sec && !constants)
            continue;
        plan->space.colls[plan->space.n_colls++] = coll;
        size_t first = n;
        cct_config c;
        memset(&c, 0, sizeof c);
        c.coll = coll;
        c.ranks = ranks;
        c.nodes = nodes;
        c.dtype = CCT_DTYPE_FLOAT;
        c.buffsize = buf;
        c.ll_buffsize = llbuf;
        c.ll128_buffsize = ll128buf;
        /* the call mode under test (--pipe-ops, --regbuff) */
        int pipe_ops = o->space.n_pipe_ops ? o->space.pipe_ops[0] : 1;
        c.pipe_ops = pipe_ops > 1 ? pipe_ops : 0;
        c.reg_buff = o->space.n_reg_buffs ? o->space.reg_buffs[0] : false;
        cct_status st = CCT_OK;
        for (int kind = 0; st == CCT_OK && kind < 2; kind++) {
            c.algo = c.proto = kind == 0 ? CCT_DEFAULT : CCT_TUNED;
            st = push_config(&cfgs, &n, &cap, first, &c, err);
        }
        if (st == CCT_OK)
            st = push_candidates(o, t, sec != NULL, &cfgs, &n, &cap, first, &c, err);
        for (size_t k = 0; st == CCT_OK && k < o->n_bench_compare; k++) {
            group g = {&cfgs, &n, &cap, first, c};
            st = cct_bench_compare_configs(&cmp[k], t->ll128_allowed, coll, ranks, nodes, push_rule,
                                           &g, err);
        }
        if (st != CCT_OK) {
            free(cfgs);
            return st;
        }
    }
    if (plan->space.n_colls == 0) {
        free(cfgs);
        char have[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < t->n_sections && used + 64 < sizeof have; i++) {
            char key[128];
            int w = snprintf(have + used, sizeof have - used, "%s%s", i ? "; " : "",
                             cct_section_describe(&t->sections[i], key, sizeof key));
            used += w > 0 ? (size_t)w : 0;
        }
        return cct_error_set(err, CCT_ENOTFOUND,
                             "the table has no section for %d ranks on %d nodes (it has: %s)",
                             ranks, nodes, have[0] ? have : "none");
    }
    plan->configs = cfgs;
    plan->n_configs = n;
    plan->sizes = malloc(o->n_bench_sizes * sizeof *plan->sizes);
    plan->sessions = calloc(1, sizeof *plan->sessions);
    if (!plan->sizes || !plan->sessions) {
        cct_plan_destroy(plan);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    memcpy(plan->sizes, o->bench_sizes, o->n_bench_sizes * sizeof *plan->sizes);
    plan->n_sizes = o->n_bench_sizes;
    plan->n_sessions = 1;
    plan->sessions[0].baseline = true; /* untouched protocol set: the real defaults */
    plan->sessions[0].bench = true;
    plan->sessions[0].buffsize = buf;
    plan->sessions[0].ll_buffsize = llbuf;
    plan->sessions[0].ll128_buffsize = ll128buf;
    plan->sessions[0].first_config = 0;
    plan->sessions[0].n_configs = n;
    plan->sessions[0].no_rules = o->bench_rules_off;
    plan->sessions[0].default_no_constants = constants && cct_constants_count(&t->constants) > 0;
    /* the tag keeps plans of different comparisons apart (a resume must match) */
    cct_plan_rehash(plan, !constants           ? "bench"
                          : o->bench_rules_off ? "bench-constants-rules-off"
                                               : "bench-constants");
    return CCT_OK;
}

typedef struct row {
    int coll;
    uint64_t bytes;
    double dflt, tuned, oracle;
    int d_algo, d_proto, t_algo, t_proto, o_algo, o_proto, o_channels;
    cct_config d_cfg, t_cfg, o_cfg; /* the points' keys, for their samples */
} row;

/* p-value of "the samples of a and b differ" for two points of the run (1.0 when either has
 * no stored samples). */
static double points_differ_p(cct_store *store, int64_t run_id, const cct_config *a,
                              const cct_config *b, uint64_t bytes)
{
    double *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    cct_error ignored;
    double p = 1.0;
    if (cct_store_load_samples(store, run_id, a, bytes, false, &sa, &na, &ignored) == CCT_OK &&
        cct_store_load_samples(store, run_id, b, bytes, false, &sb, &nb, &ignored) == CCT_OK)
        p = cct_mann_whitney_p(sa, na, sb, nb);
    free(sa);
    free(sb);
    return p;
}

static int find_row(row *rows, size_t n, int coll, uint64_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].coll == coll && rows[i].bytes == bytes)
            return (int)i;
    return -1;
}

static const char *choice(int algo, int proto, char *buf, size_t len)
{
    if (algo < 0)
        snprintf(buf, len, "?");
    else
        snprintf(buf, len, "%s/%s", cct_algo_name(algo), cct_proto_name(proto));
    return buf;
}

/* Joins the run's out-of-place points with a time into one row per collective and size:
 * NCCL's default, the tuned point and the fastest forced one (the oracle).  rows holds n;
 * returns how many rows were filled. */
static size_t collect_rows(const cct_point *p, size_t n, row *rows)
{
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].in_place || p[i].status != CCT_POINT_OK || !(p[i].stats.median_us > 0))
            continue;
        int r = find_row(rows, nr, p[i].cfg.coll, p[i].bytes);
        if (r < 0) {
            r = (int)nr++;
            memset(&rows[r], 0, sizeof rows[r]);
            rows[r].coll = p[i].cfg.coll;
            rows[r].bytes = p[i].bytes;
            rows[r].dflt = rows[r].tuned = rows[r].oracle = NAN;
            rows[r].d_algo = rows[r].d_proto = rows[r].t_algo = rows[r].t_proto = -1;
            rows[r].o_algo = rows[r].o_proto = -1;
        }
        row *w = &rows[r];
        double t = p[i].stats.median_us;
        if (p[i].cfg.algo == CCT_DEFAULT) {
            w->dflt = t;
            w->d_algo = p[i].nccl_algo;
            w->d_proto = p[i].nccl_proto;
            w->d_cfg = p[i].cfg;
        } else if (p[i].cfg.algo == CCT_TUNED) {
            w->tuned = t;
            w->t_algo = p[i].nccl_algo;
            w->t_proto = p[i].nccl_proto;
            w->t_cfg = p[i].cfg;
        } else if (isnan(w->oracle) || t < w->oracle) {
            w->oracle = t;
            w->o_algo = p[i].cfg.algo;
            w->o_proto = p[i].cfg.proto;
            w->o_channels = p[i].cfg.channels;
            w->o_cfg = p[i].cfg;
        }
    }
    return nr;
}

/* Rows in plan order: collective, then size. */
static void sort_rows(row *rows, size_t nr)
{
    for (size_t i = 1; i < nr; i++)
        for (size_t j = i;
             j > 0 && (rows[j].coll < rows[j - 1].coll ||
                       (rows[j].coll == rows[j - 1].coll && rows[j].bytes < rows[j - 1].bytes));
             j--) {
            row t = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = t;
        }
}

static void report_header(FILE *out, FILE *csv)
{
    fprintf(out, "| collective | size | NCCL default (us) | tuned (us) | oracle (us) | tuned vs "
                 "default | tuned vs oracle | default ran | tuned ran | oracle | loss significant "
                 "(p < 0.05) |\n"
                 "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |\n");
    if (csv)
        fprintf(csv, "coll,bytes,default_us,tuned_us,oracle_us,speedup_vs_default,ratio_vs_oracle,"
                     "default_choice,tuned_choice,oracle_choice,oracle_channels,p_vs_default,"
                     "p_vs_oracle\n");
}

/* Sums of log(default / tuned) over the rows: all, NCCL's choice kept, NCCL's choice changed. */
typedef struct log_sums {
    double all, same, changed;
} log_sums;

/* One complete row (default, tuned and oracle measured): adds it to sum and logs, tests its
 * losses, and prints it. */
static void report_row(cct_store *store, int64_t run_id, const row *w, FILE *out, FILE *csv,
                       cct_bench_summary *sum, log_sums *logs)
{
    double vs_d = w->dflt / w->tuned, vs_o = w->oracle / w->tuned;
    sum->rows++;
    logs->all += log(vs_d);
    if (vs_d < sum->worst_vs_default)
        sum->worst_vs_default = vs_d;
    if (vs_o < sum->worst_vs_oracle)
        sum->worst_vs_oracle = vs_o;
    sum->below_098_default += vs_d < 0.98;
    sum->below_098_oracle += vs_o < 0.98;
    /* only the losses are tested: a two-sided p below 0.05 with tuned slower */
    double p_d = vs_d < 0.98 ? points_differ_p(store, run_id, &w->t_cfg, &w->d_cfg, w->bytes) : NAN;
    double p_o = vs_o < 0.98 ? points_differ_p(store, run_id, &w->t_cfg, &w->o_cfg, w->bytes) : NAN;
    bool sig_d = p_d < 0.05, sig_o = p_o < 0.05;
    sum->below_098_default_sig += sig_d;
    sum->below_098_oracle_sig += sig_o;
    if (w->d_algo >= 0 && w->d_algo == w->t_algo && w->d_proto == w->t_proto) {
        sum->same_choice++;
        logs->same += log(vs_d);
    } else {
        sum->changed++;
        logs->changed += log(vs_d);
        sum->below_098_changed += vs_d < 0.98;
    }
    char b[32], c1[32], c2[32], c3[32];
    fprintf(out, "| %s | %s | %.1f | %.1f | %.1f | %.3f | %.3f | %s | %s | %s ch=%d | %s |\n",
            cct_coll_name(w->coll), cct_format_bytes(w->bytes, b, sizeof b), w->dflt, w->tuned,
            w->oracle, vs_d, vs_o, choice(w->d_algo, w->d_proto, c1, sizeof c1),
            choice(w->t_algo, w->t_proto, c2, sizeof c2),
            choice(w->o_algo, w->o_proto, c3, sizeof c3), w->o_channels,
            sig_d && sig_o ? "vs default and oracle"
            : sig_d        ? "vs default"
            : sig_o        ? "vs oracle"
                           : "");
    if (csv)
        fprintf(csv, "%s,%llu,%.3f,%.3f,%.3f,%.4f,%.4f,%s,%s,%s,%d,%.4g,%.4g\n",
                cct_coll_name(w->coll), (unsigned long long)w->bytes, w->dflt, w->tuned, w->oracle,
                vs_d, vs_o, c1, c2, c3, w->o_channels, p_d, p_o);
}

/* The geometric means, then the summary paragraphs under the table. */
static void report_footer(FILE *out, cct_bench_summary *sum, const log_sums *logs)
{
    sum->geomean_vs_default = exp(logs->all / (double)sum->rows);
    sum->geomean_same = sum->same_choice ? exp(logs->same / (double)sum->same_choice) : NAN;
    sum->geomean_changed = sum->changed ? exp(logs->changed / (double)sum->changed) : NAN;
    fprintf(out,
            "\n%zu sizes: geometric-mean speed-up over NCCL's default %.3fx; worst tuned/default "
            "%.3f; worst tuned/oracle %.3f; sizes below 0.98 x default: %zu (%zu of them a "
            "significant loss), below 0.98 x oracle: %zu (%zu significant)\n",
            sum->rows, sum->geomean_vs_default, sum->worst_vs_default, sum->worst_vs_oracle,
            sum->below_098_default, sum->below_098_default_sig, sum->below_098_oracle,
            sum->below_098_oracle_sig);
    fprintf(out,
            "\nA loss is significant when the two points' per-cycle samples differ at the 5 %% "
            "level (two-sided Mann-Whitney U); the others are inside the bench's own noise.\n");
    fprintf(out,
            "\nWhere the table changed NCCL's algorithm or protocol: %zu sizes, geometric mean "
            "%.3fx, %zu below 0.98 x default.  Where NCCL ran the same algorithm and protocol "
            "both times: %zu sizes, geometric mean %.3fx -- the table changed at most the "
            "channel count there; where it changed nothing, the ratio is the bench's own "
            "noise.\n",
            sum->changed, sum->geomean_changed, sum->below_098_changed, sum->same_choice,
            sum->geomean_same);
}

cct_status cct_bench_report(cct_store *store, int64_t run_id, FILE *out, FILE *csv,
                            cct_bench_summary *sum, cct_error *err)
{
    cct_point *p = NULL;
    size_t n = 0;
    cct_status st = cct_store_load_points(store, &run_id, 1, &p, &n, err);
    if (st != CCT_OK)
        return st;
    row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) {
        free(p);
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    }
    size_t nr = collect_rows(p, n, rows);
    free(p);
    memset(sum, 0, sizeof *sum);
    sum->worst_vs_default = sum->worst_vs_oracle = INFINITY;
    log_sums logs = {0.0, 0.0, 0.0};
    report_header(out, csv);
    sort_rows(rows, nr);
    for (size_t i = 0; i < nr; i++) {
        const row *w = &rows[i];
        if (isnan(w->dflt) || isnan(w->tuned) || isnan(w->oracle))
            continue;
        report_row(store, run_id, w, out, csv, sum, &logs);
    }
    free(rows);
    if (sum->rows == 0)
        return cct_error_set(err, CCT_ENOTFOUND,
                             "run %lld has no size where default, tuned and a forced configuration "
                             "were all measured",
                             (long long)run_id);
    report_footer(out, sum, &logs);
    return CCT_OK;
}

/* The --compare tables judged on the run's points, appended to the report. */
static cct_status compare_section(const cct_search_opts *o, cct_store *store, int64_t run_id,
                                  FILE *out, cct_error *err)
{
    cct_table main_t, cmp[CCT_BENCH_MAX_COMPARE];
    cct_status st = cct_table_load_file(o->bench_table, &main_t, err);
    if (st != CCT_OK)
        return st;
    st = load_compared(o, cmp, err);
    if (st == CCT_OK) {
        st = cct_bench_compare_report(store, run_id, &main_t, cmp, o->bench_compare,
                                      o->n_bench_compare, out, true, err);
        for (size_t i = 0; i < o->n_bench_compare; i++)
            cct_table_destroy(&cmp[i]);
    }
    cct_table_destroy(&main_t);
    return st;
}

int cct_bench_finish(const cct_search_opts *o, int64_t run_id)
{
    cct_error err;
    cct_store *store = NULL;
    if (cct_store_open(o->store_path, true, &store, &err) != CCT_OK) {
        cct_say(CCT_SAY_ERR, "ccltune bench: error: %s\n", err.msg);
        return 1;
    }
    FILE *out = o->bench_report ? fopen(o->bench_report, "w") : stdout;
    FILE *csv = o->bench_csv ? fopen(o->bench_csv, "w") : NULL;
    int code = 0;
    if (!out || (o->bench_csv && !csv)) {
        cct_say(CCT_SAY_ERR, "ccltune bench: error: cannot write %s\n",
                !out ? o->bench_report : o->bench_csv);
        code = 1;
    } else {
        cct_bench_summary sum;
        if (cct_bench_report(store, run_id, out, csv, &sum, &err) != CCT_OK) {
            cct_say(CCT_SAY_ERR, "ccltune bench: error: %s\n", err.msg);
            code = 1;
        } else {
            cct_say(CCT_SAY_ERR,
                    "ccltune bench: run %lld: %zu sizes, geometric-mean speed-up over NCCL's "
                    "default %.3fx, worst vs default %.3f, worst vs oracle %.3f; where the table "
                    "changed NCCL's algorithm/protocol %zu sizes at %.3fx, kept them %zu at %.3fx; "
                    "significant losses (p < 0.05, below 0.98x): %zu vs default, %zu vs oracle\n",
                    (long long)run_id, sum.rows, sum.geomean_vs_default, sum.worst_vs_default,
                    sum.worst_vs_oracle, sum.changed, sum.geomean_changed, sum.same_choice,
                    sum.geomean_same, sum.below_098_default_sig, sum.below_098_oracle_sig);
            if (o->n_bench_compare && compare_section(o, store, run_id, out, &err) != CCT_OK) {
                cct_say(CCT_SAY_ERR, "ccltune bench: error: %s\n", err.msg);
                code = 1;
            }
        }
    }
    if (out && out != stdout)
        fclose(out);
    if (csv)
        fclose(csv);
    cct_store_close(store);
    return code;
}
