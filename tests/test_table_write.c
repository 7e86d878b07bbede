/*
 * test_table_write.c - the deterministic writer: golden bytes, order independence, round
 * trips, string escaping, refusals, the atomic save, and the readable layout (lines of at most
 * 120 characters, a comment in words on every rule, the header, folded strings, evidence).
 *
 * A small table is built in code twice, in opposite orders (sections, models, alignment
 * entries, environment), and both must write exactly tests/data/tables/golden-small.yaml.
 * Round trips (write -> read -> write) must be byte-identical for the golden table and for
 * every table under tests/data/tables.  Strings full of YAML's special characters, controls
 * and non-ASCII text must come back unchanged.  After an intended format change, run with
 * CCT_UPDATE_GOLDEN=1 to rewrite the golden file, and review its diff.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "cct_model.h"
#include "cct_table.h"
#include "fixture_test_util.h"

static char *data_path(const char *rel)
{
    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    size_t n = strlen(src) + strlen(rel) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", src, rel);
    return p;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap) {
            cap = cap * 2 + 8192;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t n = fread(buf + *len, 1, cap - *len - 1, f);
        *len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* The table as written text; fails the test if the writer refuses it. */
static char *write_text(const cct_table *t, size_t *len)
{
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    assert_non_null(mem);
    cct_error err;
    cct_status st = cct_table_write(t, mem, &err);
    fclose(mem);
    if (st != CCT_OK)
        fail_msg("write failed: %s", err.msg);
    return text;
}

static cct_status write_status(const cct_table *t, cct_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    cct_status st = cct_table_write(t, mem, err);
    fclose(mem);
    if (st != CCT_OK)
        assert_int_equal(len, 0); /* nothing reaches the stream on refusal */
    free(text);
    return st;
}

static void set_str(char **slot, const char *value)
{
    free(*slot);
    *slot = value ? strdup(value) : NULL;
    if (value)
        assert_non_null(*slot);
}

static void fill_header(cct_table *t)
{
    set_str(&t->provenance.tool, "ccltune 0.1.0");
    set_str(&t->provenance.created, "2026-11-29T14:00:00Z");
    set_str(&t->provenance.nccl, "2.28.9");
    set_str(&t->provenance.source, "measured");
    set_str(&t->provenance.runs, "3,4");
    set_str(&t->provenance.command, "ccltune search --ranks-per-gpu 4 --ranks 4 --max-bytes 64M "
                                    "--channels nccl,1,2,max --cycles 4 --store /tmp/tune-4.db");
    set_str(&t->fingerprint.gpu, "NVIDIA H200");
    t->fingerprint.cc = 90;
    t->fingerprint.gpus_per_node = 1;
    t->fingerprint.nodes = 1;
    t->fingerprint.ranks_per_gpu = 4;
    set_str(&t->fingerprint.links, "socket");
    set_str(&t->fingerprint.nccl, "2.28.9");
    set_str(&t->fingerprint.cuda, "13.0");
    t->ll128_allowed = false;
    set_str(&t->ll128_reason, "NCCL ignores LL128 over NET/Socket");
}

static cct_rule rule(uint64_t lo, uint64_t hi, int algo, int proto, int channels)
{
    cct_rule r = cct_rule_blank();
    r.min_bytes = lo;
    r.max_bytes = hi;
    r.algo = algo;
    r.proto = proto;
    r.channels = channels;
    return r;
}

static cct_model model(int algo, int proto, int channels, uint64_t buffsize)
{
    cct_model m;
    memset(&m, 0, sizeof m);
    m.algo = algo;
    m.proto = proto;
    m.channels = channels;
    m.buffsize = buffsize;
    m.alpha_us = 30.1;
    m.alpha_ci = 1.25;
    m.beta_gbps = 3.2;
    m.beta_ci = 0.1;
    m.r2 = 0.998;
    m.alpha2_us = m.beta2_gbps = NAN;
    m.n_points = 19;
    return m;
}

/* A three-line model as the fitter leaves it: segments[] plus the mirrored line fields.
 * Values are exact at the written precision, so a round trip must give them back as is. */
static void make_piecewise(cct_model *m)
{
    static const cct_model_segment segs[3] = {
        {0, 20.0, 0.5, NAN, NAN}, {16384, 25.0, NAN, 1.5, 0.0625}, {262144, 80.0, 4.0, 2.75, NAN}};
    m->kind = CCT_MODEL_PIECEWISE;
    m->n_segments = 3;
    memcpy(m->segments, segs, sizeof segs);
    m->alpha_us = segs[0].alpha_us;
    m->alpha_ci = segs[0].alpha_ci;
    m->beta_gbps = segs[0].beta_gbps;
    m->beta_ci = segs[0].beta_ci;
    m->break_bytes = segs[1].from_bytes;
    m->alpha2_us = segs[2].alpha_us;
    m->beta2_gbps = segs[2].beta_gbps;
    m->r2 = 0.99;
    m->n_points = 30;
}

static void add_big_section(cct_table *t, bool reversed)
{
    cct_section *s = cct_table_add_section(t, CCT_COLL_ALLREDUCE, 4, 4);
    assert_non_null(s);
    cct_rule r = rule(0, 4096, CCT_ALGO_TREE, CCT_PROTO_LL, 2);
    r.predicted_us = 89.0;
    r.margin = 0.33;
    r.margin_default = 0.25;
    r.ref_bytes = 2048;
    /* measured: 1.25x over NCCL's choice, 95 % interval 1.125..1.375, 3 % noise, 8 cycles */
    r.gain = 1.25;
    r.gain_lo = 1.125;
    r.gain_hi = 1.375;
    r.noise = 0.03;
    r.cycles = 8;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    r = rule(4096, 65536, CCT_ALGO_TREE, CCT_PROTO_SIMPLE, CCT_TABLE_MAX_CHANNELS);
    r.predicted_us = 190.25;
    r.margin = -0.125; /* a faster runner-up lost a tie: the rules line says what that means */
    r.margin_default = 0.4567;
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
    r = rule(65536, CCT_BYTES_INF, CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0);
    r.chunk_bytes = 131072;
    r.no_baseline = true; /* imported: no NCCL default measured */
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);

    cct_model models[5] = {
        model(CCT_ALGO_TREE, CCT_PROTO_LL, 2, 0), model(CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 0),
        model(CCT_ALGO_RING, CCT_PROTO_SIMPLE, 0, 8388608),
        model(CCT_ALGO_RING, CCT_PROTO_LL, 0, 0), model(CCT_ALGO_RING, CCT_PROTO_LL, 0, 0)};
    models[1].kind = CCT_MODEL_SEGMENTED;
    models[1].break_bytes = 1048576;
    models[1].alpha2_us = 150.0;
    models[1].beta2_gbps = 4.0;
    models[1].poor_fit = true;
    models[2].alpha_ci = NAN; /* unknown: left out */
    /* differs from models[4] only by NCCL_LL_BUFFSIZE: a distinct configuration */
    make_piecewise(&models[3]);
    models[3].ll_buffsize = 1048576;
    models[3].ll128_buffsize = 2097152;
    cct_align_penalty pens[2] = {{CCT_PROTO_LL, 4, 0.03}, {CCT_PROTO_SIMPLE, 4, 0.01}};
    for (int i = 0; i < 5; i++)
        assert_int_equal(cct_section_add_model(s, &models[reversed ? 4 - i : i]), CCT_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(cct_section_add_penalty(s, &pens[reversed ? 1 - i : i]), CCT_OK);
}

static void add_one_rule_section(cct_table *t, int coll, int ranks, int nodes, int pipe_ops,
                                 int reg_buff, int algo, int proto)
{
    cct_section *s = cct_table_add_section(t, coll, ranks, nodes);
    assert_non_null(s);
    s->pipe_ops = pipe_ops;
    s->reg_buff = reg_buff;
    cct_rule r = rule(0, CCT_BYTES_INF, algo, proto, 0);
    assert_int_equal(cct_section_add_rule(s, &r), CCT_OK);
}

/* The golden table; `reversed` builds the same content in the opposite order. */
static void build_small(cct_table *t, bool reversed)
{
    cct_table_init(t);
    fill_header(t);
    if (reversed) {
        assert_int_equal(cct_table_set_env(t, "NCCL_NTHREADS", "256"), CCT_OK);
        assert_int_equal(cct_table_set_env(t, "NCCL_BUFFSIZE", "8388608"), CCT_OK);
        add_one_rule_section(t, CCT_COLL_ALLGATHER, 4, 4, CCT_ANY, 0, CCT_ALGO_RING,
                             CCT_PROTO_SIMPLE);
        add_one_rule_section(t, CCT_COLL_ALLREDUCE, 4, 4, 2, 1, CCT_ALGO_RING, CCT_PROTO_LL);
        add_big_section(t, true);
        add_one_rule_section(t, CCT_COLL_BROADCAST, 2, 2, CCT_ANY, CCT_ANY, CCT_ALGO_RING,
                             CCT_PROTO_SIMPLE);
    } else {
        assert_int_equal(cct_table_set_env(t, "NCCL_BUFFSIZE", "8388608"), CCT_OK);
        assert_int_equal(cct_table_set_env(t, "NCCL_NTHREADS", "256"), CCT_OK);
        add_one_rule_section(t, CCT_COLL_BROADCAST, 2, 2, CCT_ANY, CCT_ANY, CCT_ALGO_RING,
                             CCT_PROTO_SIMPLE);
        add_big_section(t, false);
        add_one_rule_section(t, CCT_COLL_ALLREDUCE, 4, 4, 2, 1, CCT_ALGO_RING, CCT_PROTO_LL);
        add_one_rule_section(t, CCT_COLL_ALLGATHER, 4, 4, CCT_ANY, 0, CCT_ALGO_RING,
                             CCT_PROTO_SIMPLE);
    }
}

static void test_golden_small(void **state)
{
    (void)state;
    cct_table t;
    build_small(&t, false);
    size_t len;
    char *text = write_text(&t, &len);
    char *path = data_path("data/tables/golden-small.yaml");
    if (getenv("CCT_UPDATE_GOLDEN")) { /* after an intended format change; review the diff */
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        fclose(f);
    }
    size_t glen;
    char *golden = read_all(path, &glen);
    if (len != glen || memcmp(text, golden, len) != 0)
        fail_msg("written table differs from %s:\n%s", path, text);
    free(golden);
    free(path);
    free(text);
    cct_table_destroy(&t);
}

static void test_order_independent(void **state)
{
    (void)state;
    cct_table a, b;
    build_small(&a, false);
    build_small(&b, true);
    assert_int_not_equal(a.sections[0].coll, b.sections[0].coll); /* really built differently */
    size_t la, lb;
    char *ta = write_text(&a, &la);
    char *tb = write_text(&b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ta, tb, la);
    free(ta);
    free(tb);
    cct_table_destroy(&a);
    cct_table_destroy(&b);
}

/* write(text of path) == text of path, after one normalising write. */
static void round_trip_file(const char *path)
{
    cct_table t;
    cct_error err;
    if (cct_table_load_file(path, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    size_t l1, l2;
    char *w1 = write_text(&t, &l1);
    cct_table_destroy(&t);
    if (cct_table_load_buffer(w1, l1, "w1", &t, &err) != CCT_OK)
        fail_msg("%s: written text does not load: %s", path, err.msg);
    char *w2 = write_text(&t, &l2);
    cct_table_destroy(&t);
    if (l1 != l2 || memcmp(w1, w2, l1) != 0)
        fail_msg("%s: write->read->write differs:\n%s\n----\n%s", path, w1, w2);
    free(w1);
    free(w2);
}

static void test_round_trip_data_tables(void **state)
{
    (void)state;
    char *dir = data_path("data/tables");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 5, ".yaml") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        round_trip_file(path);
        n++;
    }
    closedir(d);
    free(dir);
    assert_true(n >= 3);
}

static void test_golden_is_a_fixed_point(void **state)
{
    (void)state;
    /* the golden file, read and written again, is byte-identical to itself */
    char *path = data_path("data/tables/golden-small.yaml");
    size_t glen, len;
    char *golden = read_all(path, &glen);
    cct_table t;
    cct_error err;
    if (cct_table_load_buffer(golden, glen, path, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    char *text = write_text(&t, &len);
    assert_int_equal(len, glen);
    assert_memory_equal(text, golden, len);
    free(text);
    free(golden);
    free(path);
    cct_table_destroy(&t);
}

static void test_strings_round_trip(void **state)
{
    (void)state;
    static const char *const strings[] = {
        "say \"hi\": it's a 'test' # not a comment",
        "back\\slash and \\n literally",
        "line one\nline two\r\n\ttabbed",
        "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x9a\x80",
        "controls \x01\x1f\x7f and C1 \xc2\x85\xc2\x9f",
        "separators \xe2\x80\xa8 \xe2\x80\xa9 bom \xef\xbb\xbf nonchar \xef\xbf\xbe",
        "  leading and trailing spaces  ",
        "",
        "null",
        "true",
        "- [a, b]: {c: d} & *e !f %g @h `i",
        "---",
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        cct_table t;
        build_small(&t, false);
        set_str(&t.provenance.note, strings[i]);
        set_str(&t.fingerprint.gpu, strings[i]);
        assert_int_equal(cct_table_set_env(&t, "WEIRD", strings[i]), CCT_OK);
        size_t l1, l2;
        char *w1 = write_text(&t, &l1);
        cct_table_destroy(&t);
        cct_error err;
        if (cct_table_load_buffer(w1, l1, "w1", &t, &err) != CCT_OK)
            fail_msg("string %zu: %s\n%s", i, err.msg, w1);
        assert_string_equal(t.provenance.note, strings[i]);
        assert_string_equal(t.fingerprint.gpu, strings[i]);
        assert_string_equal(t.env[2].key, "WEIRD");
        assert_string_equal(t.env[2].value, strings[i]);
        char *w2 = write_text(&t, &l2);
        assert_int_equal(l1, l2);
        assert_memory_equal(w1, w2, l1);
        /* whatever the string, each written line stays one line */
        assert_null(strstr(w1, "note: \"line one\n"));
        free(w1);
        free(w2);
        cct_table_destroy(&t);
    }
}

static void test_float_formats(void **state)
{
    (void)state;
    cct_table t;
    build_small(&t, false);
    cct_section *s = NULL;
    for (size_t i = 0; i < t.n_sections; i++)
        if (t.sections[i].n_rules == 3)
            s = &t.sections[i];
    assert_non_null(s);
    s->rules[0].predicted_us = 18.5;
    s->rules[0].margin = -0.00001; /* rounds to zero: written without a sign */
    s->rules[0].margin_default = 1.0 / 3.0;
    s->rules[0].noise = 0.0000001;
    size_t len;
    char *text = write_text(&t, &len);
    /* the decision on the rule's first line, the numbers on the next */
    assert_non_null(strstr(text, "        - {min_bytes: 0, max_bytes: 4096, algo: tree, proto: ll, "
                                 "channels: 2,  # 0 B to 4 KiB\n"
                                 "           predicted_us: 18.500, margin: 0.0000, "
                                 "margin_default: 0.3333, ref_bytes: 2048,\n"
                                 "           evidence: {gain: 1.250, ci: [1.125, 1.375], noise: "
                                 "0.0000, cycles: 8}}  # 1.25x faster than NCCL here\n"));
    /* NaN fields are left out, not written as .nan; evidence none; 64 channels are max */
    assert_non_null(strstr(text, "        - {min_bytes: 65536, max_bytes: inf, algo: ring, "
                                 "proto: simple, channels: 0, chunk_bytes: 131072,\n"
                                 "           evidence: none}  # 64 KiB and up: no NCCL baseline "
                                 "(imported)\n"));
    assert_non_null(strstr(text, "algo: tree, proto: simple, channels: max,"));
    assert_null(strstr(text, ": nan"));
    assert_null(strstr(text, ": -nan"));
    free(text);
    cct_table_destroy(&t);
}

static void test_refusals(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;

    build_small(&t, false);
    free(t.provenance.tool);
    t.provenance.tool = NULL;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_string_equal(err.msg, "cannot write the table: provenance.tool is not set");
    cct_table_destroy(&t);

    build_small(&t, false);
    set_str(&t.provenance.note, "bad \xff byte");
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_string_equal(err.msg, "cannot write the table: provenance.note is not valid UTF-8");
    cct_table_destroy(&t);

    build_small(&t, false);
    t.sections[1].rules[0].margin = INFINITY;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "margin is infinite"));
    cct_table_destroy(&t);

    /* unsorted bands: the model's own check refuses them */
    build_small(&t, false);
    cct_rule tmp = t.sections[1].rules[0];
    t.sections[1].rules[0] = t.sections[1].rules[1];
    t.sections[1].rules[1] = tmp;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "rule 1: the first band must start at min_bytes 0"));
    cct_table_destroy(&t);

    /* what only the read-back catches: a duplicate section, a bad env name */
    build_small(&t, false);
    add_one_rule_section(&t, CCT_COLL_BROADCAST, 2, 2, CCT_ANY, CCT_ANY, CCT_ALGO_TREE,
                         CCT_PROTO_LL);
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "refusing to write a table that would not load"));
    assert_non_null(strstr(err.msg, "duplicate section broadcast ranks=2 nodes=2"));
    cct_table_destroy(&t);

    build_small(&t, false);
    assert_int_equal(cct_table_set_env(&t, "NOT-A-NAME", "1"), CCT_OK);
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "'NOT-A-NAME' is not an environment variable name"));
    cct_table_destroy(&t);
}

static void test_write_error_reported(void **state)
{
    (void)state;
    FILE *full = fopen("/dev/full", "w");
    if (!full)
        skip();
    cct_table t;
    build_small(&t, false);
    cct_error err;
    assert_int_equal(cct_table_write(&t, full, &err), CCT_EIO);
    assert_non_null(strstr(err.msg, "write failed"));
    fclose(full);
    cct_table_destroy(&t);
}

static void test_save_atomic(void **state)
{
    (void)state;
    char dir[] = "/tmp/cct-save-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/table.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old content\n", f);
    fclose(f);

    cct_table t;
    build_small(&t, false);
    cct_error err;
    if (cct_table_save(&t, path, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    size_t len, wlen;
    char *saved = read_all(path, &len);
    char *text = write_text(&t, &wlen);
    assert_int_equal(len, wlen);
    assert_memory_equal(saved, text, len);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);

    /* nothing but the table is left in the folder */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int entries = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            entries++;
    closedir(d);
    assert_int_equal(entries, 1);

    /* a refused table leaves the old file and no temporary behind */
    free(t.fingerprint.links);
    t.fingerprint.links = NULL;
    assert_int_equal(cct_table_save(&t, path, &err), CCT_EINVAL);
    char *again = read_all(path, &len);
    assert_int_equal(len, wlen);
    assert_memory_equal(again, text, len);
    d = opendir(dir);
    entries = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            entries++;
    closedir(d);
    assert_int_equal(entries, 1);

    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/table.yaml", dir);
    assert_int_equal(cct_table_save(&t, bad, &err), CCT_EIO);

    unlink(path);
    rmdir(dir);
    free(saved);
    free(again);
    free(text);
    cct_table_destroy(&t);
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

/* A fitter-made piecewise model comes back field for field; linear and segmented ones come
 * back without segments[] but predict the same times (cct_model_predict). */
static void test_models_round_trip(void **state)
{
    (void)state;
    cct_table t;
    build_small(&t, false);
    cct_section *s = &t.sections[1];
    assert_int_equal(s->n_models, 5);
    /* the fitter fills segments[] for every kind; only piecewise needs them in the file */
    cct_model *seg = &s->models[1];
    seg->n_segments = 2;
    seg->segments[0] =
        (cct_model_segment){0, seg->alpha_us, seg->alpha_ci, seg->beta_gbps, seg->beta_ci};
    seg->segments[1] =
        (cct_model_segment){seg->break_bytes, seg->alpha2_us, NAN, seg->beta2_gbps, NAN};
    size_t len;
    char *text = write_text(&t, &len);
    cct_table back;
    cct_error err;
    if (cct_table_load_buffer(text, len, "back", &back, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    const cct_section *b = cct_table_find_section(&back, CCT_COLL_ALLREDUCE, 4, 4, 1, 0);
    assert_non_null(b);
    assert_int_equal(b->n_models, 5);
    for (size_t i = 0; i < s->n_models; i++) {
        const cct_model *m = &s->models[i];
        const cct_model *r = NULL;
        for (size_t j = 0; j < b->n_models; j++)
            if (b->models[j].algo == m->algo && b->models[j].proto == m->proto &&
                b->models[j].buffsize == m->buffsize &&
                b->models[j].ll_buffsize == m->ll_buffsize && b->models[j].kind == m->kind)
                r = &b->models[j];
        assert_non_null(r);
        assert_int_equal(r->ll128_buffsize, m->ll128_buffsize);
        assert_int_equal(r->n_points, m->n_points);
        assert_true(same_double(r->r2, m->r2));
        for (uint64_t bytes = 1; bytes < ((uint64_t)1 << 32); bytes *= 4)
            if (!same_double(cct_model_predict(r, bytes), cct_model_predict(m, bytes)))
                fail_msg("model %zu at %llu bytes: %g after the round trip, %g before", i,
                         (unsigned long long)bytes, cct_model_predict(r, bytes),
                         cct_model_predict(m, bytes));
        if (m->kind == CCT_MODEL_PIECEWISE) {
            assert_int_equal(r->n_segments, m->n_segments);
            for (int k = 0; k < m->n_segments; k++) {
                assert_int_equal(r->segments[k].from_bytes, m->segments[k].from_bytes);
                assert_true(same_double(r->segments[k].alpha_us, m->segments[k].alpha_us));
                assert_true(same_double(r->segments[k].alpha_ci, m->segments[k].alpha_ci));
                assert_true(same_double(r->segments[k].beta_gbps, m->segments[k].beta_gbps));
                assert_true(same_double(r->segments[k].beta_ci, m->segments[k].beta_ci));
            }
            assert_true(same_double(r->alpha_us, m->alpha_us));
            assert_true(same_double(r->beta_gbps, m->beta_gbps));
            assert_int_equal(r->break_bytes, m->break_bytes);
            assert_true(same_double(r->alpha2_us, m->alpha2_us));
            assert_true(same_double(r->beta2_gbps, m->beta2_gbps));
        }
    }
    assert_int_equal(b->rules[0].ref_bytes, 2048);
    free(text);
    cct_table_destroy(&back);
    cct_table_destroy(&t);
}

static void test_ranks_per_gpu_zero_written_as_default(void **state)
{
    (void)state;
    cct_table t;
    build_small(&t, false);
    t.fingerprint.ranks_per_gpu = 0; /* what cct_table_init leaves */
    size_t len;
    char *text = write_text(&t, &len);
    assert_non_null(strstr(text, "\n  ranks_per_gpu: 1\n"));
    free(text);
    cct_table_destroy(&t);
}

/* Saving onto something that is not a regular file writes into it and leaves it what it
 * is: `ccltune fit -o /dev/null` once replaced /dev/null with a regular file (rename).  A
 * private null device in a scratch folder stands in for /dev/null (skipped if mknod is
 * not allowed). */
static void test_save_to_device_keeps_it(void **state)
{
    (void)state;
    char dir[] = "/tmp/cct-savedev-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/null", dir);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0) {
        rmdir(dir);
        skip();
    }
    cct_table t;
    build_small(&t, false);
    cct_error err;
    assert_int_equal(cct_table_save(&t, path, &err), CCT_OK);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    cct_table_destroy(&t);
    unlink(path);
    rmdir(dir);
}

/* Characters (not bytes) of each line; fails on the first line over the writer's width. */
static void assert_lines_within(const char *text, const char *what)
{
    int line = 1;
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n') {
            if (chars > 120)
                fail_msg("%s: line %d has %zu characters (more than 120)", what, line, chars);
            line++;
            chars = 0;
        } else if ((*p & 0xc0) != 0x80) {
            chars++;
        }
    }
}

/* Every rule says in words why it is there: a comment on one of its lines, or on the line
 * above it. */
static void assert_rules_commented(const char *text, const char *what)
{
    int rules = 0;
    for (const char *p = strstr(text, "\n        - {min_bytes: "); p;
         p = strstr(p + 1, "\n        - {min_bytes: ")) {
        rules++;
        const char *line = p + 1, *end = line;
        /* the rule's lines: up to the one whose flow mapping closes */
        for (;;) {
            const char *nl = strchr(end, '\n');
            assert_non_null(nl);
            const char *close = strstr(end, "}  # ");
            if ((close && close < nl) || (nl[-1] == '}' && nl > end))
                break;
            end = nl + 1;
        }
        const char *nl = strchr(end, '\n');
        bool commented = false;
        for (const char *q = line; q < nl; q++)
            commented |= strncmp(q, "  # ", 4) == 0;
        const char *above = p;
        while (above > text && above[-1] != '\n')
            above--;
        commented |= strncmp(above, "        # ", 10) == 0;
        if (!commented)
            fail_msg("%s: a rule without a comment: %.*s", what, (int)(nl - line), line);
    }
    assert_true(rules > 0);
}

/* The readable layout on the golden table and on every committed table: lines of at most
 * 120 characters, a words comment on every rule, a header that says the box, the topology, the
 * measuring command and how to deploy; written twice, the same bytes; and a write -> read ->
 * write round trip gives them again. */
static void test_readable_layout(void **state)
{
    (void)state;
    cct_table t;
    build_small(&t, false);
    size_t len, len2;
    char *text = write_text(&t, &len);
    char *again = write_text(&t, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, again, len);
    assert_lines_within(text, "golden");
    assert_rules_commented(text, "golden");
    assert_true(strncmp(text, "# ccltune tuning table: ", 24) == 0);
    assert_non_null(strstr(text,
                           "\n# Box:        NVIDIA H200, compute capability 9.0, NCCL 2.28.9, "
                           "CUDA driver 13.0\n"));
    assert_non_null(strstr(text, "\n# Topology:   4 rank processes per GPU (MPS), each its own "
                                 "NCCL node: never matches a real deployment\n"));
    assert_non_null(strstr(text, "\n# Command:    ccltune search --ranks-per-gpu 4 --ranks 4 "));
    assert_non_null(strstr(text, "NCCL_TUNER_PLUGIN=ccltune CCLTUNE_TABLE="));
    assert_non_null(strstr(text, "only where NCCL_HOSTID is set"));
    assert_non_null(strstr(text, "      rules:  # margin: runner-up's time / this one's - 1"));
    free(text);
    free(again);
    /* one rank per GPU: no shared-GPU warning, the nodes and GPUs as they are */
    t.fingerprint.ranks_per_gpu = 1;
    t.fingerprint.gpus_per_node = 8;
    text = write_text(&t, &len);
    assert_non_null(strstr(text, "\n# Topology:   1 node with 8 GPUs each, one rank per GPU\n"));
    assert_null(strstr(text, "never matches"));
    assert_null(strstr(text, "NCCL_HOSTID"));
    free(text);
    cct_table_destroy(&t);

    const char *src = getenv("CCT_TEST_SRCDIR");
    assert_non_null(src);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../tables", src);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 5, ".yaml") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t flen;
        char *file = read_all(path, &flen);
        assert_lines_within(file, path);
        if (!strstr(file, "collectives: {}"))
            assert_rules_commented(file, path);
        round_trip_file(path);
        free(file);
        n++;
    }
    closedir(d);
    assert_true(n >= 5);
}

/* Long strings are folded at spaces to keep lines short, and come back exactly: double
 * spaces, spaces next to quotes, escapes and long words included. */
static void test_long_strings_fold(void **state)
{
    (void)state;
    char note[2048] = "";
    for (int i = 0; i < 30; i++)
        strcat(note, i % 7 == 3   ? "two  spaces \"quoted\" back\\slash\ttab "
                     : i % 7 == 5 ? "slash\\ then \"q\" "
                                  : "word ");
    strcat(note, "a-very-long-word-");
    for (int i = 0; i < 12; i++)
        strcat(note, "without-any-space-");
    strcat(note, " end ");
    cct_table t;
    build_small(&t, false);
    set_str(&t.provenance.note, note);
    set_str(&t.ll128_reason, note);
    size_t l1, l2;
    char *w1 = write_text(&t, &l1);
    cct_table_destroy(&t);
    /* only the long word may pass the width */
    for (const char *line = w1; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = (size_t)(nl - line);
        if (n > 120 && !memmem(line, n, "without-any-space-without", 25))
            fail_msg("a line of %zu characters: %.*s", n, (int)n, line);
        line = nl + 1;
    }
    cct_error err;
    if (cct_table_load_buffer(w1, l1, "w1", &t, &err) != CCT_OK)
        fail_msg("%s\n%s", err.msg, w1);
    assert_string_equal(t.provenance.note, note);
    assert_string_equal(t.ll128_reason, note);
    char *w2 = write_text(&t, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(w1, w2, l1);
    free(w1);
    free(w2);
    cct_table_destroy(&t);
}

/* Every place a fold can fall: a word of each length before a run of escapes and spaces, so
 * that the width is reached at each of them in turn. */
static void test_fold_every_position(void **state)
{
    (void)state;
    const char *tail = "a\\ b \"c\" d  e\tf \\\" g \" h x y z";
    for (int k = 1; k < 140; k++) {
        char note[512];
        memset(note, 'w', (size_t)k);
        note[k] = '\0';
        for (int rep = 0; rep < 4; rep++) {
            strcat(note, " ");
            strcat(note, tail);
        }
        cct_table t;
        build_small(&t, false);
        set_str(&t.provenance.note, note);
        size_t len;
        char *text = write_text(&t, &len);
        cct_table_destroy(&t);
        cct_error err;
        if (cct_table_load_buffer(text, len, "fold", &t, &err) != CCT_OK)
            fail_msg("k=%d: %s", k, err.msg);
        if (strcmp(t.provenance.note, note) != 0)
            fail_msg("k=%d: note came back as '%s'", k, t.provenance.note);
        cct_table_destroy(&t);
        free(text);
    }
}

/* The version-1 golden table (the same table before format 2) loads, and today's writer
 * gives it the readable layout; the content is kept (test_table_read checks field by field). */
static void test_version1_golden_loads(void **state)
{
    (void)state;
    char *path = data_path("data/tables/golden-small-v1.yaml");
    size_t len;
    char *v1 = read_all(path, &len);
    assert_true(strncmp(v1, "ccltune_table: 1\n", 17) == 0);
    cct_table t;
    cct_error err;
    if (cct_table_load_buffer(v1, len, path, &t, &err) != CCT_OK)
        fail_msg("%s", err.msg);
    char *text = write_text(&t, &len);
    assert_non_null(strstr(text, "\nccltune_table: 2\n"));
    assert_non_null(strstr(text, "\n  measured: \"2026-11-29T14:00:00Z\"\n"));
    assert_lines_within(text, path);
    assert_rules_commented(text, path);
    free(text);
    free(v1);
    free(path);
    cct_table_destroy(&t);
}

static void test_evidence_refusals(void **state)
{
    (void)state;
    cct_table t;
    cct_error err;
    build_small(&t, false);
    cct_section *s = &t.sections[1];
    assert_int_equal(s->n_rules, 3);
    s->rules[0].gain_hi = 1.2; /* below the gain of 1.25 */
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "cannot write the table: allreduce ranks=4 nodes=4 rule 1: "
                                    "evidence gain is not inside its ci"));
    s->rules[0].gain_hi = 1.375;
    s->rules[0].cycles = 0;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "evidence needs at least one cycle"));
    s->rules[0].cycles = 8;
    s->rules[0].noise = -0.01;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "evidence noise is negative"));
    s->rules[0].noise = NAN;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "evidence is not finite"));
    s->rules[0].noise = 0.03;
    s->rules[0].no_baseline = true;
    assert_int_equal(write_status(&t, &err), CCT_EINVAL);
    assert_non_null(strstr(err.msg, "has no NCCL baseline but a gain"));
    s->rules[0].no_baseline = false;
    assert_int_equal(write_status(&t, &err), CCT_OK);
    cct_table_destroy(&t);
}

int main(void)
{
    if (!fixture_mirror()) /* tables read from private 0644 copies */
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_small),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_round_trip_data_tables),
        cmocka_unit_test(test_golden_is_a_fixed_point),
        cmocka_unit_test(test_strings_round_trip),
        cmocka_unit_test(test_float_formats),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_write_error_reported),
        cmocka_unit_test(test_save_atomic),
        cmocka_unit_test(test_save_to_device_keeps_it),
        cmocka_unit_test(test_models_round_trip),
        cmocka_unit_test(test_ranks_per_gpu_zero_written_as_default),
        cmocka_unit_test(test_readable_layout),
        cmocka_unit_test(test_long_strings_fold),
        cmocka_unit_test(test_fold_every_position),
        cmocka_unit_test(test_version1_golden_loads),
        cmocka_unit_test(test_evidence_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
