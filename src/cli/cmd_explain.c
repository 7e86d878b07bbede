/*
 * cmd_explain.c - `ccltune explain FILE --coll C --ranks R ...`: what a table decides, and why.
 *
 * Prints a header (provenance, hardware fingerprint, LL128 verdict) and then, for each
 * section that applies, one line per size band: range, algorithm, protocol, channels and
 * chunk ("nccl" where the table leaves NCCL's choice), predicted time, and the predicted
 * gain over the runner-up and over NCCL's default.  A band the table leaves to NCCL
 * altogether (cct_rule_is_nccl_choice: NCCL's own algorithm/protocol, NCCL's channels and
 * chunk, margin_default 0) ends in "left to NCCL (its default here: ring/simple)": its
 * predicted time is NCCL's default's, not that of the forced configuration of that name.
 * A rule with a chunk size says so after its verdict (only NCCL 2.30+ asks a tuner for it).
 *
 * Which sections apply: those of the collective (or of every collective with --coll all)
 * with the given ranks, and nodes when --nodes is given.  Without --pipe-ops/--regbuff every
 * such section is shown; with either, only the one the plugin would pick for a call with
 * numPipeOps P (default 1) and regBuff B (default 0), through the same cct_table_find_section.
 * No match is an error that lists the topologies the table does have.
 *
 * --weights-from RECORDING (repeatable; a folder is its *.rec files) weighs the table by a
 * recorded job: under each rule the job's calls, GPU time and estimated saving in that
 * band (the audit's lines, cct_recording_audit.h), and the job's total saving per rank
 * process (per step with --steps) from the rules' evidence, or from --store DB.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_cli.h"
#include "cct_cli_job.h"
#include "cct_recording_set.h"
#include "cct_parse.h"
#include "cct_constants.h"
#include "cct_probe_links.h"
#include "cct_rule_model.h"
#include "cct_store.h"
#include "cct_table.h"
#include "cct_table_words.h"

static const char *const NAME = "explain";
#define MAX_LISTED 20 /* topologies named in a "no section" error */

typedef struct query {
    int coll;                              /* -1: all */
    long ranks, nodes, pipe_ops, reg_buff; /* -1: not given */
    const char *store;                     /* --links: the full link matrix from it; NULL */
    const char *weights_from[16];          /* --weights-from recordings */
    size_t n_weights_from;
    cct_job_weighting w;
} query;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ccltune explain FILE --coll C --ranks R [--nodes N] [--pipe-ops P]\n"
            "                            [--regbuff no|yes] [--links DB]\n"
            "                            [--weights-from REC... [--steps N] [--store DB]]\n\n"
            "Show the decision of a tuning table for every size band.\n\n"
            "  --coll C       broadcast, reduce, allgather, reducescatter, allreduce, or all\n"
            "  --ranks R      ranks in the communicator\n"
            "  --nodes N      nodes in the communicator (default: every node count in the table)\n"
            "  --pipe-ops P   show the section the plugin picks for numPipeOps P (default 1)\n"
            "  --regbuff B    ... and for registered buffers (regBuff), no or yes (default no)\n"
            "  --links DB     also print the whole link matrix stored in DB with the table's\n"
            "                 run (its link_matrix), pair by pair\n"
            "  --weights-from REC  weigh by a recorded job (CCLTUNE_RECORD file or folder;\n"
            "                 repeatable): under each rule its calls, GPU time and estimated\n"
            "                 saving there; then the job's saving, as ccltune audit gives it\n"
            "  --steps N      the recorded job's steps: the saving per step\n"
            "  --store DB     gains from DB's measurements at each recorded size instead of\n"
            "                 the rules' evidence\n"
            "  -h, --help     show this help\n\n"
            "Exit status: 0 shown, 1 unreadable table or recording or no matching section, 2\n"
            "usage error.\n");
}

static const char *percent(double frac, char *buf, size_t len)
{
    if (isnan(frac))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f %%", frac * 100.0);
    return buf;
}

static void print_header(const char *path, const cct_table *t)
{
    const cct_provenance *p = &t->provenance;
    const cct_fingerprint *f = &t->fingerprint;
    char cc[16];
    printf("table:       %s\n", path);
    printf("provenance:  %s, source %s, measurements of %s", p->tool, p->source, p->created);
    if (p->nccl)
        printf(", NCCL %s", p->nccl);
    if (p->runs)
        printf(", runs %s", p->runs);
    printf("\n");
    if (p->note)
        printf("note:        %s\n", p->note);
    for (const char *c = p->command, *nl; c && *c; c = nl ? nl + 1 : "") {
        nl = strchr(c, '\n');
        printf("measured by: %.*s\n", nl ? (int)(nl - c) : (int)strlen(c), c);
    }
    char topo[256];
    printf("fingerprint: %s (cc %s), NCCL %s", f->gpu, cct_cc_format(f->cc, cc, sizeof cc),
           f->nccl);
    if (f->cuda)
        printf(", CUDA %s", f->cuda);
    if (f->nccl_versions)
        printf("\nNCCL:        applies to the measured release's patches and, widened at fit "
               "time, to %s (nccl_versions)",
               f->nccl_versions);
    printf("\ntopology:    %s; links %s: %s", cct_words_topology(f, topo, sizeof topo), f->links,
           cct_words_links(f->links));
    printf("\nLL128:       %s%s%s\n", t->ll128_allowed ? "allowed" : "not allowed",
           t->ll128_reason ? ": " : "", t->ll128_reason ? t->ll128_reason : "");
}

/* The nccl_constants block: one line per family, the entries the table sets. */
/* "a-b unit", "a unit" when they agree, "-" when not measured. */
static const char *span(double lo, double hi, const char *fmt, char *buf, size_t len)
{
    char a[32], b[32];
    if (isnan(lo)) {
        snprintf(buf, len, "-");
        return buf;
    }
    snprintf(a, sizeof a, fmt, lo);
    snprintf(b, sizeof b, fmt, hi);
    if (strcmp(a, b) == 0)
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s-%s", a, b);
    return buf;
}

/* The whole matrix stored in `store` with the table's run, as `probe --links` prints it. */
static int print_stored_links(const char *store, const cct_table *t)
{
    if (!t->link_matrix.present)
        return cct_cli_fail(NAME, "the table has no link_matrix: no run to look up in %s", store);
    cct_store *s = NULL;
    cct_error err;
    char *json = NULL;
    if (cct_store_open(store, true, &s, &err) == CCT_OK)
        cct_store_get_links(s, t->link_matrix.run, &json, &err);
    cct_store_close(s);
    if (!s || (!json && err.msg[0]))
        return cct_cli_fail(NAME, "%s", err.msg);
    if (!json)
        return cct_cli_fail(NAME, "%s has no link matrix for run %d (another store?)", store,
                            t->link_matrix.run);
    cct_links *l = malloc(sizeof *l);
    cct_probe_info *paths = malloc(sizeof *paths);
    char name[4200];
    snprintf(name, sizeof name, "%s run %d", store, t->link_matrix.run);
    cct_status st = l && paths ? cct_links_parse(json, strlen(json), name, l, paths, &err)
                               : cct_error_set(&err, CCT_ENOMEM, "out of memory");
    if (st == CCT_OK) {
        printf("\n");
        int per_gpu = t->fingerprint.ranks_per_gpu > 0 ? t->fingerprint.ranks_per_gpu : 1;
        cct_links_print(stdout, l, paths, per_gpu);
    }
    free(paths);
    free(l);
    free(json);
    return st == CCT_OK ? CCT_EXIT_OK : cct_cli_fail(NAME, "%s", err.msg);
}

/* The link matrix measured with the table's run (docs/table-format.md, link_matrix). */
static void print_links(const cct_link_summary *l)
{
    if (!l->present)
        return;
    char bw[64], lat[64], h2d[32], d2h[32], hl[32];
    printf("links:       stored with run %d, %d GPU%s", l->run, l->gpus, l->gpus == 1 ? "" : "s");
    if (!isnan(l->pair_gbps_min) || !isnan(l->pair_latency_us_min))
        printf("; GPU pairs %s GB/s, %s us one way",
               span(l->pair_gbps_min, l->pair_gbps_max, "%.1f", bw, sizeof bw),
               span(l->pair_latency_us_min, l->pair_latency_us_max, "%.2f", lat, sizeof lat));
    printf("\n             host (slowest GPU): %s GB/s H2D, %s GB/s D2H, %s us one way",
           span(l->h2d_gbps, l->h2d_gbps, "%.1f", h2d, sizeof h2d),
           span(l->d2h_gbps, l->d2h_gbps, "%.1f", d2h, sizeof d2h),
           span(l->host_latency_us, l->host_latency_us, "%.2f", hl, sizeof hl));
    if (l->socket)
        printf("; sockets over %s", l->socket);
    printf("\n");
}

static void print_constants(const cct_constants *c)
{
    if (!c->present)
        return;
    size_t n = cct_constants_count(c);
    printf("NCCL model:  %zu constant%s written into NCCL's cost model at communicator init "
           "(tuner v5/v6, any rank count; the rest stay NCCL's)\n",
           n, n == 1 ? "" : "s");
    for (int f = 0; f < CCT_CONST_NUM_FAMILIES; f++) {
        size_t first = cct_const_family_first((cct_const_family)f);
        size_t k = cct_const_family_size((cct_const_family)f), shown = 0;
        for (size_t i = 0; i < k; i++) {
            cct_const_slot s = cct_const_slot_at(first + i);
            double v = cct_const_get(c, s);
            if (isnan(v))
                continue;
            char name[64];
            if (shown++ == 0)
                printf("  %s:", cct_const_family_key((cct_const_family)f));
            printf(" %s %.4g", cct_const_slot_name(s, name, sizeof name), v);
        }
        if (shown)
            printf("\n");
    }
}

/* The job's calls under rule r of section s: one line, or nothing without calls there. */
static void print_job_band(const cct_audit *a, const cct_section *s, const cct_rule *r,
                           const cct_job_weighting *w)
{
    uint64_t calls = 0, other = 0, ns = 0;
    double saved = 0;
    for (size_t i = 0; a && i < a->n_lines; i++) {
        const cct_audit_line *l = &a->lines[i];
        if (l->coll != s->coll || l->ranks != s->ranks || l->nodes != s->nodes ||
            l->lo != r->min_bytes || l->want_algo < 0)
            continue;
        calls += l->calls;
        ns += l->total_ns;
        saved += l->saved_ns;
        if (l->verdict == CCT_AUDIT_MISMATCH)
            other += l->calls;
    }
    if (!calls)
        return;
    double n = a->n_recordings ? (double)a->n_recordings : 1.0;
    double per = n * (w->steps > 0 ? (double)w->steps : 1.0);
    printf("      job: %.1f calls, %.3f ms GPU %s per rank process", (double)calls / per,
           (double)ns / per / 1e6, w->steps ? "per step" : "over the recording");
    if (saved > 0)
        printf(", saves %.3f ms", saved / per / 1e6);
    if (other)
        printf("; %llu calls ran something else (ccltune audit lists them)",
               (unsigned long long)other);
    printf("\n");
}

static void print_section(const cct_section *s, const cct_audit *a, const cct_job_weighting *w)
{
    char key[128];
    printf("\n%s\n", cct_section_describe(s, key, sizeof key));
    printf("  %-12s %-12s %-14s %-7s %8s %10s %12s %8s %8s\n", "from", "to", "algo", "proto",
           "channels", "chunk", "predicted", "margin", "vs NCCL");
    for (size_t i = 0; i < s->n_rules; i++) {
        const cct_rule *r = &s->rules[i];
        char lo[32], hi[32], ch[16], chunk[32], pred[32], m1[16], m2[16];
        if (r->channels == CCT_TABLE_MAX_CHANNELS)
            snprintf(ch, sizeof ch, "max");
        else if (r->channels)
            snprintf(ch, sizeof ch, "%d", r->channels);
        else
            snprintf(ch, sizeof ch, "nccl");
        if (r->chunk_bytes)
            cct_format_bytes_exact(r->chunk_bytes, chunk, sizeof chunk);
        else
            snprintf(chunk, sizeof chunk, "nccl");
        if (isnan(r->predicted_us))
            snprintf(pred, sizeof pred, "-");
        else
            snprintf(pred, sizeof pred, "%.3f us", r->predicted_us);
        printf("  %-12s %-12s %-14s %-7s %8s %10s %12s %8s %8s",
               cct_format_bytes_exact(r->min_bytes, lo, sizeof lo),
               cct_format_bytes_exact(r->max_bytes, hi, sizeof hi), cct_algo_name(r->algo),
               cct_proto_name(r->proto), ch, chunk, pred, percent(r->margin, m1, sizeof m1),
               percent(r->margin_default, m2, sizeof m2));
        if (cct_rule_is_nccl_choice(r))
            printf("  left to NCCL (its default here: %s/%s)", cct_algo_name(r->algo),
                   cct_proto_name(r->proto));
        char evidence[256], verdict[96];
        if (cct_words_evidence(r, evidence, sizeof evidence)[0] && !r->no_baseline)
            printf("  %s: %s", cct_words_verdict(r, verdict, sizeof verdict), evidence);
        else if (r->no_baseline)
            printf("  %s", evidence);
        if (r->chunk_bytes)
            printf("  chunk %s for %s/%s: applied where NCCL asks the tuner (2.30+, tuner v6)",
                   chunk, cct_algo_name(r->algo), cct_proto_name(r->proto));
        printf("\n");
        print_job_band(a, s, r, w);
    }
    if (s->n_models) {
        size_t poor = 0;
        for (size_t i = 0; i < s->n_models; i++)
            poor += s->models[i].poor_fit;
        printf("  (%zu fitted model%s behind these rules, %zu flagged poor_fit)\n", s->n_models,
               s->n_models == 1 ? "" : "s", poor);
    }
}

static int cmp_section_ptr(const void *a, const void *b)
{
    const cct_section *x = *(const cct_section *const *)a, *y = *(const cct_section *const *)b;
    if (x->coll != y->coll)
        return x->coll - y->coll;
    if (x->nodes != y->nodes)
        return x->nodes < y->nodes ? -1 : 1;
    if (x->pipe_ops != y->pipe_ops)
        return x->pipe_ops < y->pipe_ops ? -1 : 1;
    return (x->reg_buff > y->reg_buff) - (x->reg_buff < y->reg_buff);
}

/* The sections the query selects, in a stable order; *n is their count.  NULL and n = 0
 * when none (or out of memory, reported by the caller as an error too). */
static const cct_section **select_sections(const cct_table *t, const query *q, size_t *n)
{
    *n = 0;
    const cct_section **out = t->n_sections ? malloc(t->n_sections * sizeof *out) : NULL;
    if (!out)
        return NULL;
    bool pick = q->pipe_ops >= 0 || q->reg_buff >= 0;
    int pipe_ops = q->pipe_ops >= 0 ? (int)q->pipe_ops : 1;
    int reg_buff = q->reg_buff >= 0 ? (int)q->reg_buff : 0;
    for (size_t i = 0; i < t->n_sections; i++) {
        const cct_section *s = &t->sections[i];
        if ((q->coll >= 0 && s->coll != q->coll) || s->ranks != q->ranks ||
            (q->nodes >= 0 && s->nodes != q->nodes))
            continue;
        if (pick) {
            /* the plugin's choice for this (collective, nodes); add it once */
            s = cct_table_find_section(t, s->coll, s->ranks, s->nodes, pipe_ops, reg_buff);
            bool dup = false;
            for (size_t k = 0; s && k < *n; k++)
                dup |= out[k] == s;
            if (!s || dup)
                continue;
        }
        out[(*n)++] = s;
    }
    qsort(out, *n, sizeof *out, cmp_section_ptr);
    return out;
}

static void list_topologies(const cct_table *t)
{
    if (t->n_sections == 0) {
        fprintf(stderr, "  (the table has no sections)\n");
        return;
    }
    fprintf(stderr, "the table has:\n");
    for (size_t i = 0; i < t->n_sections && i < MAX_LISTED; i++) {
        char key[128];
        fprintf(stderr, "  %s\n", cct_section_describe(&t->sections[i], key, sizeof key));
    }
    if (t->n_sections > MAX_LISTED)
        fprintf(stderr, "  ... and %zu more\n", t->n_sections - MAX_LISTED);
}

/* The audit of the --weights-from recordings against t; false (printed) when they do not
 * load. */
static bool weigh(const query *q, const cct_table *t, cct_audit *a, bool *have)
{
    *have = false;
    if (!q->n_weights_from)
        return true;
    cct_recording_set set;
    cct_error err;
    cct_status st = cct_recording_set_load(q->weights_from, q->n_weights_from, &set, &err);
    if (st == CCT_OK) {
        st = cct_cli_job_audit(set.recs, set.n, t, &q->w, a, &err);
        cct_recording_set_destroy(&set);
    }
    if (st != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return false;
    }
    *have = true;
    return true;
}

static int explain(const char *path, const query *q)
{
    cct_table t;
    cct_error err;
    if (cct_table_load_file(path, &t, &err) != CCT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return CCT_EXIT_FAIL;
    }
    cct_audit audit;
    bool weighed;
    if (!weigh(q, &t, &audit, &weighed)) {
        cct_table_destroy(&t);
        return CCT_EXIT_FAIL;
    }
    size_t n = 0;
    const cct_section **sel = select_sections(&t, q, &n);
    int status = CCT_EXIT_OK;
    if (n == 0 && t.constants.present) {
        /* rules off here, but the constants still steer NCCL's own choice */
        print_header(path, &t);
        print_links(&t.link_matrix);
        print_constants(&t.constants);
        printf("\nno section for %s ranks=%ld: NCCL chooses, with the constants above\n",
               q->coll >= 0 ? cct_coll_name(q->coll) : "any collective", q->ranks);
    } else if (n == 0) {
        char nodes[32] = "";
        if (q->nodes >= 0)
            snprintf(nodes, sizeof nodes, " nodes=%ld", q->nodes);
        status =
            cct_cli_fail(NAME, "%s has no section for %s ranks=%ld%s", path,
                         q->coll >= 0 ? cct_coll_name(q->coll) : "any collective", q->ranks, nodes);
        list_topologies(&t);
    } else {
        print_header(path, &t);
        print_links(&t.link_matrix);
        print_constants(&t.constants);
        for (size_t i = 0; i < n; i++)
            print_section(sel[i], weighed ? &audit : NULL, &q->w);
        if (weighed) {
            printf("\n");
            cct_cli_print_job(&audit, &q->w);
        }
    }
    if (status == CCT_EXIT_OK && q->store)
        status = print_stored_links(q->store, &t);
    if (weighed)
        cct_audit_destroy(&audit);
    free(sel);
    cct_table_destroy(&t);
    return status;
}

int cct_cmd_explain(int argc, char **argv)
{
    enum {
        OPT_COLL = 256,
        OPT_RANKS,
        OPT_NODES,
        OPT_PIPE_OPS,
        OPT_REGBUFF,
        OPT_STEPS,
        OPT_WEIGHTS,
        OPT_STORE,
        OPT_LINKS
    };
    static const cct_enum_name no_yes[] = {{"no", 0}, {"yes", 1}, {NULL, 0}};
    static const struct option options[] = {
        {"coll", required_argument, NULL, OPT_COLL},
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"pipe-ops", required_argument, NULL, OPT_PIPE_OPS},
        {"regbuff", required_argument, NULL, OPT_REGBUFF},
        {"steps", required_argument, NULL, OPT_STEPS},
        {"weights-from", required_argument, NULL, OPT_WEIGHTS},
        {"store", required_argument, NULL, OPT_STORE},
        {"links", required_argument, NULL, OPT_LINKS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    query q = {-2, -1, -1, -1, -1, NULL, {NULL}, 0, {0, NULL}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        long *slot = NULL;
        long lo = 1, hi = CCT_TABLE_MAX_RANKS;
        cct_error perr;
        switch (c) {
        case 'h':
            usage(stdout);
            return CCT_EXIT_OK;
        case OPT_COLL:
            q.coll = strcmp(optarg, "all") == 0 ? -1 : cct_coll_from_name(optarg);
            if (q.coll == -1 && strcmp(optarg, "all") != 0)
                return cct_cli_usage_error(NAME,
                                           "unknown collective '%s' (expected broadcast, reduce, "
                                           "allgather, reducescatter, allreduce or all)",
                                           optarg);
            continue;
        case OPT_RANKS:
            slot = &q.ranks;
            break;
        case OPT_NODES:
            slot = &q.nodes;
            break;
        case OPT_PIPE_OPS:
            slot = &q.pipe_ops;
            hi = 1 << 30;
            break;
        case OPT_LINKS:
            q.store = optarg;
            continue;
        case OPT_STEPS:
            slot = &q.w.steps;
            hi = 1000000000000L;
            break;
        case OPT_WEIGHTS:
            if (q.n_weights_from == sizeof q.weights_from / sizeof q.weights_from[0])
                return cct_cli_usage_error(NAME, "--weights-from: at most 16 (name a folder)");
            q.weights_from[q.n_weights_from++] = optarg;
            continue;
        case OPT_STORE:
            q.w.store = optarg;
            continue;
        case OPT_REGBUFF: {
            int yes;
            if (cct_parse_enum("--regbuff", optarg, no_yes, &yes, &perr) != CCT_OK)
                return cct_cli_usage_error(NAME, "%s", perr.msg);
            q.reg_buff = yes;
            continue;
        }
        default:
            return cct_cli_flag_error(NAME, c, argv);
        }
        char flag[32];
        snprintf(flag, sizeof flag, "--%s", options[c - OPT_COLL].name);
        if (cct_parse_flag_long(flag, optarg, lo, hi, slot, &perr) != CCT_OK)
            return cct_cli_usage_error(NAME, "%s", perr.msg);
    }
    if (optind >= argc)
        return cct_cli_usage_error(NAME, "no table given");
    if (argc - optind > 1)
        return cct_cli_usage_error(NAME, "unexpected argument '%s' (one table at a time)",
                                   argv[optind + 1]);
    if (q.coll == -2)
        return cct_cli_usage_error(NAME, "--coll is required");
    if (q.ranks < 0)
        return cct_cli_usage_error(NAME, "--ranks is required");
    if ((q.w.steps || q.w.store) && !q.n_weights_from)
        return cct_cli_usage_error(NAME, "%s weighs by a recorded job: it needs --weights-from",
                                   q.w.steps ? "--steps" : "--store");
    return explain(argv[optind], &q);
}
