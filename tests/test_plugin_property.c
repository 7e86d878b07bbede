/*
 * test_plugin_property.c - 1,000,000 random calls through the built plugin, each checked
 * against an oracle.
 *
 * Random tables (sections per collective with and without pipe_ops/reg_buff, random
 * bands, algorithms, protocols, channels; LL128 verdict true in one half of the run and
 * false in the other) are written as YAML and loaded by the plugin through CCLTUNE_TABLE;
 * the test loads the same file with the shared core for the oracle.  Every call gets a
 * random cost table: ignored (-1.0) entries, other negatives, NaN, zeros, six or seven
 * algorithms, tuner v4/v5/v6.  Properties, per call:
 *   1. no ignored entry changes (bit-for-bit), and no entry other than the chosen one;
 *   2. when the table's rule is admissible (in bounds, entry not ignored, LL128 allowed),
 *      that entry becomes 0.0 and nChannels the rule's channels (when it has some);
 *   3. otherwise nothing changes at all, nChannels included;
 * and the finalize counters agree with the oracle's tally.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "cct_table.h"
#include "plugin_test_util.h"

#define CALLS_PER_TABLE 100000
#define TABLES 10 /* 10 x 100,000 = 1,000,000 calls */
#define NRANKS 4
#define NNODES 1

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, so a failure reproduces */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static unsigned rnd_below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* Random bytes, log-uniform over 1 B .. 4 GiB, plus 0. */
static uint64_t rnd_bytes(void)
{
    if (rnd_below(50) == 0)
        return 0;
    unsigned bits = rnd_below(33);
    return (rnd() & ((1ull << bits) - 1)) | (1ull << bits) >> 1;
}

static const char *algo_names[] = {"tree",      "ring", "collnet_direct", "collnet_chain", "nvls",
                                   "nvls_tree", "pat"};
static const char *proto_names[] = {"ll", "ll128", "simple"};
static const char *coll_names[] = {"broadcast", "reduce", "allgather", "reducescatter",
                                   "allreduce"};

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
        va_end(ap);
        if ((size_t)n < *cap - *len) {
            *len += (size_t)n;
            return;
        }
        *cap *= 2;
        *buf = realloc(*buf, *cap);
    }
}

static void section_yaml(char **b, size_t *l, size_t *c, int pipe_ops, int reg_buff)
{
    append(b, l, c, "    - ranks: %d\n      nodes: %d\n", NRANKS, NNODES);
    if (pipe_ops > 0)
        append(b, l, c, "      pipe_ops: %d\n", pipe_ops);
    if (reg_buff >= 0)
        append(b, l, c, "      reg_buff: %s\n", reg_buff ? "true" : "false");
    append(b, l, c, "      rules:\n");
    int n = 1 + (int)rnd_below(8);
    uint64_t lo = 0;
    for (int i = 0; i < n; i++) {
        uint64_t hi = 0;
        if (i + 1 < n) {
            hi = lo + 1 + (rnd_bytes() >> rnd_below(4));
            if (hi <= lo) /* overflow guard */
                hi = lo + 1;
        }
        append(b, l, c, "        - {min_bytes: %llu, max_bytes: ", (unsigned long long)lo);
        if (i + 1 < n)
            append(b, l, c, "%llu", (unsigned long long)hi);
        else
            append(b, l, c, "inf");
        append(b, l, c, ", algo: %s, proto: %s", algo_names[rnd_below(7)],
               proto_names[rnd_below(3)]);
        if (rnd_below(2))
            append(b, l, c, ", channels: %u", rnd_below(65));
        append(b, l, c, "}\n");
        lo = hi;
    }
}

static char *random_body(void)
{
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    b[0] = '\0';
    for (int coll = 0; coll < 5; coll++) {
        /* broadcast always carries a section of another topology, which the communicator
         * must never match; other collectives are sometimes absent altogether */
        bool other_topology = coll == 0;
        if (!other_topology && rnd_below(5) == 0)
            continue;
        append(&b, &len, &cap, "  %s:\n", coll_names[coll]);
        if (other_topology)
            append(&b, &len, &cap,
                   "    - ranks: 8\n      nodes: 1\n      rules:\n"
                   "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n");
        size_t start = len;
        if (rnd_below(4) != 0)
            section_yaml(&b, &len, &cap, 0, -1);
        if (rnd_below(2))
            section_yaml(&b, &len, &cap, 2, -1);
        if (rnd_below(2))
            section_yaml(&b, &len, &cap, 0, 1);
        if (rnd_below(3) == 0)
            section_yaml(&b, &len, &cap, 3, 0);
        if (len == start && !other_topology) /* keep the collective non-empty */
            section_yaml(&b, &len, &cap, 0, -1);
    }
    return b;
}

static float rnd_cost(void)
{
    switch (rnd_below(20)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
        return -1.0f; /* NCCL_ALGO_PROTO_IGNORE */
    case 6:
        return 0.0f;
    case 7:
        return -2.5f;
    case 8:
        return NAN;
    default:
        return (float)(1 + rnd_below(100000)) / 8.0f;
    }
}

/* One random table, CALLS_PER_TABLE calls; returns how many the oracle expected to be
 * overridden (and checks the plugin's finalize counters agree). */
static uint64_t run_table(bool ll128_allowed)
{
    char *body = random_body();
    char *text = tu_table_yaml("NVIDIA H200", "9.0", "2.28.9", 1, ll128_allowed, body);
    free(body);
    char *path = tu_write_temp(text);
    free(text);
    assert_non_null(path);
    setenv("CCLTUNE_TABLE", path, 1);

    cct_table t;
    cct_error err;
    cct_table_init(&t);
    if (cct_table_load_file(path, &t, &err) != CCT_OK)
        fail_msg("generated table rejected: %s", err.msg);

    void *h = tu_plugin_open();
    assert_non_null(h);
    ncclTuner_v6_t *v6 = tu_sym(h, "ncclTunerPlugin_v6");
    ncclTuner_v5_t *v5 = tu_sym(h, "ncclTunerPlugin_v5");
    ncclTuner_v4_t *v4 = tu_sym(h, "ncclTunerPlugin_v4");
    void *ctx[3];
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, NRANKS, NRANKS};
    assert_int_equal(v6->init(&ctx[0], 0x66, NRANKS, NNODES, tu_logger, &nvl, &k), ncclSuccess);
    assert_int_equal(v5->init(&ctx[1], 0x55, NRANKS, NNODES, tu_logger, &nvl, &k), ncclSuccess);
    assert_int_equal(v4->init(NRANKS, NNODES, tu_logger, &ctx[2]), ncclSuccess);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);

    float c[7 * 3], before[7 * 3];
    uint64_t expected_over = 0;
    for (int i = 0; i < CALLS_PER_TABLE; i++) {
        int na = rnd_below(4) ? 7 : 6, np = 3;
        for (int e = 0; e < na * np; e++)
            c[e] = rnd_cost();
        memcpy(before, c, sizeof c);
        int coll = (int)rnd_below(8) - 1; /* -1 .. 6: out-of-range kinds too */
        uint64_t bytes = rnd_bytes();
        int pipe_ops = 1 + (int)rnd_below(3);
        int reg = (int)rnd_below(2);
        int nch0 = rnd_below(4) ? 0 : 3, nch = nch0;
        int which = (int)rnd_below(3);
        ncclResult_t res;
        if (which == 0)
            res = v6->getCollInfo(ctx[0], coll, bytes, pipe_ops, (float **)c, na, np, reg, &nch);
        else if (which == 1)
            res = v5->getCollInfo(ctx[1], coll, bytes, pipe_ops, (float **)c, na, np, reg, &nch);
        else
            res = v4->getCollInfo(ctx[2], coll, bytes, pipe_ops, (float **)c, na, np, reg, &nch);
        assert_int_equal(res, ncclSuccess);

        /* the oracle */
        const cct_section *s = (coll >= 0 && coll < 5)
                                   ? cct_table_find_section(&t, coll, NRANKS, NNODES, pipe_ops, reg)
                                   : NULL;
        const cct_rule *r = s ? cct_section_lookup(s, bytes) : NULL;
        int want = -1;
        if (r && r->algo < na && before[r->algo * np + r->proto] >= 0.0f &&
            (r->proto != 1 || ll128_allowed))
            want = r->algo * np + r->proto;
        for (int e = 0; e < na * np; e++) {
            if (e == want)
                assert_true(c[e] == 0.0f);
            else if (memcmp(&c[e], &before[e], sizeof(float)) != 0)
                fail_msg("call %d: entry %d changed (%g -> %g), wanted %d", i, e, (double)before[e],
                         (double)c[e], want);
        }
        assert_int_equal(nch, want >= 0 && r->channels > 0 ? r->channels : nch0);
        expected_over += want >= 0;
    }
    v6->finalize(ctx[0]);
    v5->finalize(ctx[1]);
    v4->destroy(ctx[2]);
    uint64_t calls = 0, over = 0;
    for (int i = 0; i < tu_n_log; i++) {
        if (strstr(tu_log[i].text, "finalize comm")) {
            calls += (uint64_t)tu_field(tu_log[i].text, "calls");
            over += (uint64_t)tu_field(tu_log[i].text, "overridden");
        }
    }
    assert_int_equal(calls, CALLS_PER_TABLE);
    assert_int_equal(over, expected_over);
    assert_true(tu_plugin_close(h));
    cct_table_destroy(&t);
    unlink(path);
    free(path);
    return expected_over;
}

static void test_random_tables(void **state)
{
    (void)state;
    assert_true(tu_load_fake_cuda());
    uint64_t total = 0, overridden = 0;
    for (int i = 0; i < TABLES; i++) {
        tu_log_clear();
        overridden += run_table(i % 2 == 0);
        total += CALLS_PER_TABLE;
    }
    assert_int_equal(total, 1000000);
    /* the generator must exercise both branches substantially */
    assert_true(overridden > total / 10);
    assert_true(overridden < total * 9 / 10);
    printf("property: %llu calls, %llu overridden, 0 ignored entries changed\n",
           (unsigned long long)total, (unsigned long long)overridden);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_tables),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_unload_fake_cuda();
    return rc;
}
