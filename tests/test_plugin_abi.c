/*
 * test_plugin_abi.c - drives the built libnccl-tuner-ccltune.so exactly as NCCL does.
 *
 * The library is opened by path and by the name NCCL derives from NCCL_TUNER_PLUGIN
 * ("ccltune" -> libnccl-tuner-ccltune.so, found here through the test's RUNPATH), the
 * symbols ncclTunerPlugin_v6 down to _v1 are looked up, and each version's init /
 * getCollInfo / finalize (and v6 getChunkSize) run on synthetic cost tables with a
 * recording logger.  Each scenario sets the environment, loads the library (a fresh
 * process-wide state), runs, and unloads it again -- checking that it really unloads,
 * since NCCL dlcloses it after the last communicator.
 *
 * The GPU comes from tests/fake_cuda/fake_libcuda.c and the NCCL version from ncclGetVersion in
 * plugin_test_util.h, so fingerprint matches and mismatches are staged without a GPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ccltune_control.h"
#include "plugin_test_util.h"

enum { A_TREE, A_RING, A_CND, A_CNC, A_NVLS, A_NVLST, A_PAT };
enum { P_LL, P_LL128, P_SIMPLE };
#define NA 7
#define NP 3

typedef struct plugin {
    void *h;
    ncclTuner_v6_t *v6;
    ncclTuner_v5_t *v5;
    ncclTuner_v4_t *v4;
    ncclTuner_v3_t *v3;
    ncclTuner_v2_t *v2;
    ncclTuner_v1_t *v1;
    int (*force)(int, int, int);
    void (*last)(ccltune_observation *);
    void (*reset)(void);
    int (*abi)(void);
    int (*chunk)(uint64_t);
    void (*chunk_last)(ccltune_chunk_observation *);
} plugin;

static plugin P;
static char *table_path;

static const char *good_body =
    "  allreduce:\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: 64KiB, algo: ring, proto: ll, "
    "channels: 2}\n"
    "        - {min_bytes: 64KiB, max_bytes: 1MiB, algo: tree, proto: "
    "ll128}\n"
    "        - {min_bytes: 1MiB, max_bytes: inf, algo: ring, proto: "
    "simple, channels: 8, chunk_bytes: 131072}\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      pipe_ops: 2\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: nvls, proto: simple}\n"
    "  allgather:\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      reg_buff: true\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}\n"
    "    - ranks: 8\n"
    "      nodes: 1\n"
    "      rules:\n"
    "        - {min_bytes: 0, max_bytes: inf, algo: pat, proto: simple}\n";

static const char *env_vars[] = {"CCLTUNE_TABLE",   "NCCL_TUNER_CONFIG_FILE",
                                 "CCLTUNE_STRICT",  "CCLTUNE_FORCE",
                                 "CCLTUNE_MEASURE", "NCCL_HOSTID",
                                 "NCCL_ALGO",       "NCCL_PROTO",
                                 "NCCL_DEBUG",      "CCT_FAKE_GPU_NAME",
                                 "CCT_FAKE_GPU_CC", "CCT_FAKE_NO_CONTEXT",
                                 "NCCL_LL128_C2C"};

static void env_reset(void)
{
    for (size_t i = 0; i < sizeof env_vars / sizeof *env_vars; i++)
        unsetenv(env_vars[i]);
    fake_nccl_version = 22809;
    tu_log_clear();
}

/* Write a table and point CCLTUNE_TABLE at it. */
static void use_table(const char *gpu, const char *cc, const char *nccl, int ranks_per_gpu,
                      bool ll128, const char *body)
{
    char *text = tu_table_yaml(gpu, cc, nccl, ranks_per_gpu, ll128, body);
    if (table_path) {
        unlink(table_path);
        free(table_path);
    }
    table_path = tu_write_temp(text);
    free(text);
    assert_non_null(table_path);
    setenv("CCLTUNE_TABLE", table_path, 1);
}

static void use_good_table(void)
{
    use_table("NVIDIA H200", "9.0", "2.28.9", 1, true, good_body);
}

static void open_plugin(void)
{
    assert_true(tu_load_fake_cuda());
    memset(&P, 0, sizeof P);
    P.h = tu_plugin_open();
    assert_non_null(P.h);
    P.v6 = tu_sym(P.h, "ncclTunerPlugin_v6");
    P.v5 = tu_sym(P.h, "ncclTunerPlugin_v5");
    P.v4 = tu_sym(P.h, "ncclTunerPlugin_v4");
    P.v3 = tu_sym(P.h, "ncclTunerPlugin_v3");
    P.v2 = tu_sym(P.h, "ncclTunerPlugin_v2");
    P.v1 = tu_sym(P.h, "ncclTunerPlugin_v1");
    *(void **)&P.force = tu_sym(P.h, "ccltune_control_force");
    *(void **)&P.last = tu_sym(P.h, "ccltune_control_last");
    *(void **)&P.reset = tu_sym(P.h, "ccltune_control_reset");
    *(void **)&P.abi = tu_sym(P.h, "ccltune_control_abi");
    *(void **)&P.chunk = tu_sym(P.h, "ccltune_control_chunk");
    *(void **)&P.chunk_last = tu_sym(P.h, "ccltune_control_chunk_last");
    assert_true(P.v6 && P.v5 && P.v4 && P.v3 && P.v2 && P.v1 && P.force && P.last && P.reset &&
                P.abi && P.chunk && P.chunk_last);
}

static void close_plugin(void)
{
    assert_true(tu_plugin_close(P.h));
    memset(&P, 0, sizeof P);
}

/* ---- generic drivers over the versions ---- */

static ncclResult_t init_ver(int ver, void **ctx, size_t nranks, size_t nnodes,
                             ncclDebugLogger_t log)
{
    ncclNvlDomainInfo_v5_t nvl = {1, (int)nranks, (int)nranks};
    static ncclTunerConstants_v5_t constants;
    *ctx = NULL;
    switch (ver) {
    case 6:
        return P.v6->init(ctx, 0x6000 + nranks, nranks, nnodes, log, &nvl, &constants);
    case 5:
        return P.v5->init(ctx, 0x5000 + nranks, nranks, nnodes, log, &nvl, &constants);
    case 4:
        return P.v4->init(nranks, nnodes, log, ctx);
    case 3:
        return P.v3->init(nranks, nnodes, log, ctx);
    case 2:
        return P.v2->init(nranks, nnodes, log, ctx);
    case 1:
        *ctx = (void *)1;
        return P.v1->init(nranks, nnodes, log);
    }
    return ncclInternalError;
}

static ncclResult_t fini_ver(int ver, void *ctx)
{
    switch (ver) {
    case 6:
        return P.v6->finalize(ctx);
    case 5:
        return P.v5->finalize(ctx);
    case 4:
        return P.v4->destroy(ctx);
    case 3:
        return P.v3->destroy(ctx);
    case 2:
        return P.v2->destroy(ctx);
    case 1:
        return P.v1->destroy();
    }
    return ncclInternalError;
}

static ncclResult_t costs_ver(int ver, void *ctx, int coll, size_t bytes, int pipe_ops,
                              float *costs, int na, int np, int reg, int *nch)
{
    switch (ver) {
    case 6:
        return P.v6->getCollInfo(ctx, coll, bytes, pipe_ops, (float **)costs, na, np, reg, nch);
    case 5:
        return P.v5->getCollInfo(ctx, coll, bytes, pipe_ops, (float **)costs, na, np, reg, nch);
    case 4:
        return P.v4->getCollInfo(ctx, coll, bytes, pipe_ops, (float **)costs, na, np, reg, nch);
    case 3:
        return P.v3->getCollInfo(ctx, coll, bytes, pipe_ops, (float **)costs, na, np, nch);
    }
    return ncclInternalError;
}

static ncclResult_t v2_ver(int ver, void *ctx, int coll, size_t bytes, int collnet, int nvls,
                           int pipe_ops, int *algo, int *proto, int *nch)
{
    *algo = CCT_NCCL_ALGO_UNDEF;
    *proto = CCT_NCCL_PROTO_UNDEF;
    if (ver == 1)
        return P.v1->getCollInfo(coll, bytes, collnet, nvls, pipe_ops, algo, proto, nch);
    return P.v2->getCollInfo(ctx, coll, bytes, collnet, nvls, pipe_ops, algo, proto, nch);
}

/* Run one call on a fresh cost table and check that exactly (want_a, want_p) became 0.0
 * (nothing changed when want_a < 0) and nChannels became want_ch. */
static void check_call(int ver, void *ctx, int coll, size_t bytes, int pipe_ops, int reg, int na,
                       int ignore_a, int ignore_p, int want_a, int want_p, int want_ch)
{
    float c[NA * NP], before[NA * NP];
    tu_costs_fill(c, na, NP);
    if (ignore_a >= 0)
        c[ignore_a * NP + ignore_p] = TU_IGN;
    memcpy(before, c, sizeof c);
    int nch = 0;
    assert_int_equal(costs_ver(ver, ctx, coll, bytes, pipe_ops, c, na, NP, reg, &nch), ncclSuccess);
    for (int a = 0; a < na; a++) {
        for (int p = 0; p < NP; p++) {
            if (a == want_a && p == want_p)
                assert_true(c[a * NP + p] == 0.0f);
            else
                assert_memory_equal(&c[a * NP + p], &before[a * NP + p], sizeof(float));
        }
    }
    assert_int_equal(nch, want_ch);
}

static void check_v2(int ver, void *ctx, int coll, size_t bytes, int collnet, int nvls,
                     int pipe_ops, int want_a, int want_p, int want_ch)
{
    int a, p, nch = 0;
    assert_int_equal(v2_ver(ver, ctx, coll, bytes, collnet, nvls, pipe_ops, &a, &p, &nch),
                     ncclSuccess);
    assert_int_equal(a, want_a);
    assert_int_equal(p, want_p);
    assert_int_equal(nch, want_ch);
}

static const char *finalize_line(const char *label)
{
    char needle[64];
    snprintf(needle, sizeof needle, "finalize comm %s ", label);
    return tu_log_find(NCCL_LOG_INFO, needle);
}

/* ---- scenarios ---- */

static void test_symbols_by_path_and_name(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    assert_string_equal(P.v6->name, "ccltune");
    assert_string_equal(P.v1->name, "ccltune");
    assert_non_null(P.v6->getChunkSize);
    assert_int_equal(P.abi(), CCLTUNE_CONTROL_ABI);
    /* NCCL >= 2.21: NCCL_TUNER_PLUGIN=ccltune -> dlopen("libnccl-tuner-ccltune.so") */
    char name[128];
    snprintf(name, sizeof name, "libnccl-tuner-%s.so", "ccltune");
    void *by_name = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(by_name);
    assert_ptr_equal(dlsym(by_name, "ncclTunerPlugin_v5"), P.v5);
    /* internals stay private */
    assert_null(dlsym(by_name, "cct_table_load_file"));
    assert_null(dlsym(by_name, "cct_ctx_create"));
    assert_null(dlsym(by_name, "cct_measure_on"));
    /* the profiler half from the same handle (NCCL_PROFILER_PLUGIN naming the same file) */
    static const char *const profilers[] = {"ncclProfiler_v4", "ncclProfiler_v5",
                                            "ncclProfiler_v6"};
    for (size_t i = 0; i < sizeof profilers / sizeof *profilers; i++) {
        /* every version begins with name, init, startEvent, stopEvent, recordEventState,
         * finalize */
        void *const *prof = dlsym(by_name, profilers[i]);
        assert_non_null(prof);
        assert_string_equal((const char *)prof[0], "ccltune");
        for (int f = 1; f <= 5; f++)
            assert_non_null(prof[f]);
    }
    assert_null(dlsym(by_name, "ncclProfiler_v3"));
    assert_null(dlsym(by_name, "cct_recorder_coll"));
    assert_null(dlsym(by_name, "cct_prof_open"));
    dlclose(by_name);
    close_plugin();
}

static void test_name_only_load(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    assert_true(tu_load_fake_cuda());
    void *h = dlopen("libnccl-tuner-ccltune.so", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    ncclTuner_v5_t *v5 = dlsym(h, "ncclTunerPlugin_v5");
    assert_non_null(v5);
    void *ctx = NULL;
    ncclTunerConstants_v5_t k;
    ncclNvlDomainInfo_v5_t nvl = {1, 8, 8};
    assert_int_equal(v5->init(&ctx, 1, 8, 1, tu_logger, &nvl, &k), ncclSuccess);
    float c[NA * NP];
    tu_costs_fill(c, NA, NP);
    int nch = 0;
    assert_int_equal(v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, NA, NP, 0, &nch), ncclSuccess);
    assert_true(c[A_RING * NP + P_LL] == 0.0f);
    assert_int_equal(v5->finalize(ctx), ncclSuccess);
    dlclose(h);
}

static void test_cost_versions(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    for (int ver = 6; ver >= 3; ver--) {
        tu_log_clear();
        void *ctx;
        assert_int_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
        assert_non_null(ctx);
        const char *info = tu_log_find(NCCL_LOG_INFO, "init comm");
        assert_non_null(info);
        assert_non_null(strstr(info, table_path));
        assert_non_null(strstr(info, "fingerprint match"));
        assert_non_null(strstr(info, "4 sections / 6 rules apply"));
        int na = ver == 3 ? 6 : 7; /* before PAT: six algorithms */
        check_call(ver, ctx, 4, 4096, 1, 0, na, -1, 0, A_RING, P_LL, 2);
        check_call(ver, ctx, 4, 256 << 10, 1, 0, na, -1, 0, A_TREE, P_LL128, 0);
        check_call(ver, ctx, 4, 4 << 20, 1, 0, na, -1, 0, A_RING, P_SIMPLE, 8);
        check_call(ver, ctx, 4, 4096, 1, 0, na, A_RING, P_LL, -1, -1, 0);     /* ignored */
        check_call(ver, ctx, 0, 4096, 1, 0, na, -1, 0, -1, -1, 0);            /* broadcast */
        check_call(ver, ctx, 5, 4096, 1, 0, na, -1, 0, -1, -1, 0);            /* send/recv */
        check_call(ver, ctx, 4, 4096, 2, 0, na, A_NVLS, P_SIMPLE, -1, -1, 0); /* ignored */
        check_call(ver, ctx, 4, 4096, 2, 0, na, -1, 0, A_NVLS, P_SIMPLE, 0);
        if (ver >= 4) {
            check_call(ver, ctx, 2, 4096, 1, 1, na, -1, 0, A_RING, P_LL, 0);
            check_call(ver, ctx, 2, 4096, 1, 0, na, -1, 0, A_PAT, P_SIMPLE, 0);
        } else {
            /* v3 has no regBuff; and PAT is out of bounds with six algorithms */
            check_call(ver, ctx, 2, 4096, 1, 1, na, -1, 0, -1, -1, 0);
            check_call(ver, ctx, 2, 4096, 1, 0, na, -1, 0, -1, -1, 0);
        }
        assert_int_equal(fini_ver(ver, ctx), ncclSuccess);
        const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize comm");
        assert_non_null(fin);
        assert_int_equal(tu_field(fin, "calls"), 10);
        assert_int_equal(tu_field(fin, "overridden"), ver >= 4 ? 6 : 4);
        assert_int_equal(tu_field(fin, "ignored_entry"), ver >= 4 ? 2 : 4);
        assert_int_equal(tu_field(fin, "no_section"), 2);
        assert_int_equal(tu_field(fin, "mismatch"), 0);
        assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    }
    close_plugin();
}

static void test_v2_v1(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    for (int ver = 2; ver >= 1; ver--) {
        tu_log_clear();
        void *ctx;
        assert_int_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
        check_v2(ver, ctx, 4, 4096, 0, 0, 1, A_RING, P_LL, 2);
        check_v2(ver, ctx, 4, 256 << 10, 0, 0, 1, A_TREE, P_LL128, 0);
        check_v2(ver, ctx, 4, 4096, 0, 0, 2, -1, -1, 0); /* NVLS unsupported here */
        check_v2(ver, ctx, 4, 4096, 0, 1, 2, A_NVLS, P_SIMPLE, 0);
        check_v2(ver, ctx, 2, 4096, 0, 0, 1, -1, -1, 0); /* PAT never through v1/v2 */
        check_v2(ver, ctx, 0, 4096, 0, 0, 1, -1, -1, 0); /* no section */
        assert_int_equal(fini_ver(ver, ctx), ncclSuccess);
        const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize comm");
        assert_non_null(fin);
        assert_int_equal(tu_field(fin, "calls"), 6);
        assert_int_equal(tu_field(fin, "overridden"), 3);
        assert_int_equal(tu_field(fin, "ignored_entry"), 2);
        assert_int_equal(tu_field(fin, "no_section"), 1);
    }
    close_plugin();
}

static void test_chunk_size_v6(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(6, &ctx, 8, 1, tu_logger), ncclSuccess);
    size_t chunk = 524288;
    assert_int_equal(P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 8, &chunk), ncclSuccess);
    assert_int_equal(chunk, 131072);
    chunk = 524288; /* NCCL chose something else: the rule's chunk size does not apply */
    P.v6->getChunkSize(ctx, 4, 4 << 20, A_TREE, P_SIMPLE, 8, &chunk);
    assert_int_equal(chunk, 524288);
    P.v6->getChunkSize(ctx, 4, 4096, A_RING, P_LL, 2, &chunk); /* no chunk in that rule */
    assert_int_equal(chunk, 524288);
    P.v6->getChunkSize(ctx, 0, 4 << 20, A_RING, P_SIMPLE, 8, &chunk); /* no section */
    assert_int_equal(chunk, 524288);
    /* NCCL asks per channel range: a 4 MiB allreduce on 8 channels asks with 512 KiB, which
     * alone would fall in the tree/ll128 band; the collective's band (ring/simple) decides */
    float c[NA * NP];
    tu_costs_fill(c, NA, NP);
    int nch = 0;
    assert_int_equal(P.v6->getCollInfo(ctx, 4, 4 << 20, 1, (float **)c, NA, NP, 0, &nch),
                     ncclSuccess);
    P.v6->getChunkSize(ctx, 4, 512 << 10, A_RING, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 131072);
    chunk = 524288;
    assert_int_equal(P.v6->getChunkSize(NULL, 4, 4 << 20, A_RING, P_SIMPLE, 8, &chunk),
                     ncclSuccess);
    assert_int_equal(chunk, 524288);
    fini_ver(6, ctx);
    close_plugin();
}

/* NCCL 2.30's ncclTuner_v6_t, as its header lays it out: name, init (context first, then
 * the communicator id, nRanks, nNodes, the logger, the NVL domain info and the constants),
 * getCollInfo, finalize, and getChunkSize last -- five pointers, no padding.  NCCL reads the
 * struct by these offsets, so ours must match them exactly. */
static void test_v6_layout(void **state)
{
    (void)state;
    assert_int_equal(offsetof(ncclTuner_v6_t, name), 0);
    assert_int_equal(offsetof(ncclTuner_v6_t, init), sizeof(void *));
    assert_int_equal(offsetof(ncclTuner_v6_t, getCollInfo), 2 * sizeof(void *));
    assert_int_equal(offsetof(ncclTuner_v6_t, finalize), 3 * sizeof(void *));
    assert_int_equal(offsetof(ncclTuner_v6_t, getChunkSize), 4 * sizeof(void *));
    assert_int_equal(sizeof(ncclTuner_v6_t), 5 * sizeof(void *));
    /* v6 adds getChunkSize behind v5's four members, which keep their places */
    assert_int_equal(sizeof(ncclTuner_v5_t), 4 * sizeof(void *));
    assert_int_equal(offsetof(ncclTuner_v5_t, finalize), offsetof(ncclTuner_v6_t, finalize));
}

/* Measurement mode through the v6 entry point: a forced chunk is answered for the forced
 * algorithm/protocol only (never below the protocol's grain), NCCL's own stays elsewhere,
 * with no forced chunk and while bypassing; every call is recorded for the runner; the
 * table's chunk rules do not apply while forcing. */
static void test_forced_chunk_v6(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(6, &ctx, 8, 1, tu_logger), ncclSuccess);
    ccltune_chunk_observation o;
    P.chunk_last(&o);
    assert_int_equal(o.calls, 0);
    assert_int_equal(P.force(A_RING, P_SIMPLE, 0), 0);
    size_t chunk = 524288;
    /* forcing without a forced chunk: NCCL's own, not the table's rule (131072) */
    P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 524288);
    assert_int_equal(P.chunk(262144), 0);
    P.v6->getChunkSize(ctx, 4, 3 << 20, A_RING, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 262144);
    P.chunk_last(&o);
    assert_int_equal(o.calls, 2);
    assert_int_equal(o.coll, 4);
    assert_int_equal(o.bytes, 3 << 20);
    assert_int_equal(o.algo, A_RING);
    assert_int_equal(o.proto, P_SIMPLE);
    assert_int_equal(o.nccl_chunk, 524288);
    assert_int_equal(o.answered, 262144);
    chunk = 65536; /* NCCL runs another algorithm than the forced one: its own chunk */
    P.v6->getChunkSize(ctx, 4, 3 << 20, A_TREE, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 65536);
    /* below the grain: one grain (LL128: 1920 bytes) */
    assert_int_equal(P.force(A_RING, P_LL128, 0), 0);
    assert_int_equal(P.chunk(1024), 0);
    P.v6->getChunkSize(ctx, 4, 1 << 20, A_RING, P_LL128, 1, &chunk);
    assert_int_equal(chunk, 1920);
    /* bypass (NCCL's defaults): untouched */
    assert_int_equal(P.force(CCLTUNE_CONTROL_BYPASS, 0, 0), 0);
    chunk = 524288;
    P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 524288);
    /* back to the table: its rule's chunk again */
    assert_int_equal(P.force(-1, 0, 0), 0);
    P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 8, &chunk);
    assert_int_equal(chunk, 131072);
    assert_int_equal(P.chunk(CCLTUNE_CONTROL_CHUNK_MAX + 1), -1);
    assert_int_equal(P.chunk(0), 0);
    P.reset();
    P.chunk_last(&o);
    assert_int_equal(o.calls, 0);
    fini_ver(6, ctx);
    close_plugin();
}

/* Three communicators against an unusable table: one WARN, defaults everywhere. */
static void run_unusable(const char *warn_needle, const char *counter)
{
    open_plugin();
    void *ctx[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(init_ver(5, &ctx[i], 8, 1, tu_logger), ncclSuccess);
        check_call(5, ctx[i], 4, 4096, 1, 0, NA, -1, 0, -1, -1, 0);
        check_call(5, ctx[i], 4, 4 << 20, 1, 0, NA, -1, 0, -1, -1, 0);
    }
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, warn_needle), 1);
    for (int i = 0; i < 3; i++)
        fini_ver(5, ctx[i]);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "finalize comm"), 3);
    const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize comm");
    assert_int_equal(tu_field(fin, "calls"), 2);
    assert_int_equal(tu_field(fin, "overridden"), 0);
    assert_int_equal(tu_field(fin, counter), 2);
    close_plugin();
}

static void test_missing_table(void **state)
{
    (void)state;
    env_reset();
    setenv("CCLTUNE_TABLE", "/nonexistent/ccltune/table.yaml", 1);
    run_unusable("/nonexistent/ccltune/table.yaml", "table_error");
}

static void test_no_table_configured(void **state)
{
    (void)state;
    env_reset();
    setenv("NCCL_TUNER_CONFIG_FILE", "/etc/some-other-tuner.conf", 1); /* not YAML: not ours */
    run_unusable("CCLTUNE_TABLE", "table_error");
}

static void test_malformed_table(void **state)
{
    (void)state;
    env_reset();
    use_table("NVIDIA H200", "9.0", "2.28.9", 1, true,
              "  allreduce:\n"
              "    - ranks: 8\n"
              "      nodes: 1\n"
              "      rules:\n"
              "        - {min_bytes: 0, max_bytes: inf, algo: ringg, proto: ll}\n");
    char where[4200];
    snprintf(where, sizeof where, "%s:21:", table_path); /* file:line:column of 'ringg' */
    run_unusable(where, "table_error");
}

static void test_config_file_variable(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    unsetenv("CCLTUNE_TABLE");
    setenv("NCCL_TUNER_CONFIG_FILE", table_path, 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    assert_non_null(tu_log_find(NCCL_LOG_INFO, "NCCL_TUNER_CONFIG_FILE"));
    fini_ver(5, ctx);
    close_plugin();
}

static void test_strict(void **state)
{
    (void)state;
    /* malformed and missing tables fail init in every version */
    const char *bad[] = {"malformed", "missing", "gpu"};
    for (int k = 0; k < 3; k++) {
        env_reset();
        setenv("CCLTUNE_STRICT", "1", 1);
        if (k == 0)
            use_table("NVIDIA H200", "9.0", "2.28.9", 1, true, "  allreduce: 3\n");
        else if (k == 1)
            setenv("CCLTUNE_TABLE", "/nonexistent.yaml", 1);
        else {
            use_good_table();
            setenv("CCT_FAKE_GPU_NAME", "NVIDIA A100-SXM4-80GB", 1);
        }
        open_plugin();
        for (int ver = 6; ver >= 1; ver--) {
            void *ctx = NULL;
            assert_int_not_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
            if (ver != 1)
                assert_null(ctx);
        }
        assert_int_equal(tu_log_count(NCCL_LOG_WARN, "CCLTUNE_STRICT=1"), 6);
        /* a communicator whose init failed never existed: no finalize line for it */
        if (tu_log_count(0, "finalize comm") != 0)
            fail_msg("%s: a finalize line for a failed init: %s", bad[k],
                     tu_log_find(0, "finalize comm"));
        close_plugin();
    }
    /* a communicator shape the table does not cover is not fatal */
    env_reset();
    setenv("CCLTUNE_STRICT", "1", 1);
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 16, 2, tu_logger), ncclSuccess);
    assert_non_null(ctx);
    fini_ver(5, ctx);
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    fini_ver(5, ctx);
    close_plugin();
}

static void test_gpu_mismatch(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    setenv("CCT_FAKE_GPU_NAME", "NVIDIA A100-SXM4-80GB", 1);
    setenv("CCT_FAKE_GPU_CC", "80", 1);
    run_unusable("gpu-mismatch", "mismatch");
}

static void test_cc_mismatch(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    setenv("CCT_FAKE_GPU_CC", "100", 1);
    run_unusable("cc-mismatch", "mismatch");
}

static void test_gpu_unknown(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    setenv("CCT_FAKE_NO_CONTEXT", "1", 1);
    run_unusable("gpu-unknown", "mismatch");
}

static void test_nccl_mismatch(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    fake_nccl_version = 22703;
    run_unusable("nccl-mismatch", "mismatch");
    /* the one WARN says how to get out: re-tune, or widen knowingly (naming the flag) */
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "re-tune with this NCCL (ccltune tune)"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "ccltune fit --nccl-versions 2.27"), 1);
}

static void test_nccl_patch_differs(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    fake_nccl_version = 22803;
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    assert_non_null(tu_log_find(NCCL_LOG_INFO, "patch release differs"));
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    fini_ver(5, ctx);
    close_plugin();
}

static void test_shared_gpu_rule(void **state)
{
    (void)state;
    env_reset();
    use_table("NVIDIA H200", "9.0", "2.28.9", 4, true, good_body);
    run_unusable("shared-gpu", "mismatch");

    env_reset();
    use_table("NVIDIA H200", "9.0", "2.28.9", 4, true, good_body);
    setenv("NCCL_HOSTID", "rank0", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    fini_ver(5, ctx);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0);
    close_plugin();
}

static void test_topology_without_section(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(init_ver(5, &ctx[i], 16, 2, tu_logger), ncclSuccess);
        check_call(5, ctx[i], 4, 4096, 1, 0, NA, -1, 0, -1, -1, 0);
    }
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "no-topology-section"), 1);
    for (int i = 0; i < 3; i++)
        fini_ver(5, ctx[i]);
    assert_int_equal(tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "no_section"), 1);
    close_plugin();
}

static void test_ll128_blocked_by_table(void **state)
{
    (void)state;
    env_reset();
    use_table("NVIDIA H200", "9.0", "2.28.9", 1, false, good_body);
    open_plugin();
    for (int ver = 5; ver >= 2; ver -= 3) {
        tu_log_clear();
        void *ctx;
        assert_int_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
        if (ver == 5) {
            check_call(5, ctx, 4, 256 << 10, 1, 0, NA, -1, 0, -1, -1, 0);
            check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
        } else {
            check_v2(2, ctx, 4, 256 << 10, 0, 0, 1, -1, -1, 0);
            check_v2(2, ctx, 4, 4096, 0, 0, 1, A_RING, P_LL, 2);
        }
        fini_ver(ver, ctx);
        const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize");
        assert_int_equal(tu_field(fin, "ll128_blocked"), 1);
        assert_int_equal(tu_field(fin, "overridden"), 1);
    }
    close_plugin();
}

/* NCCL 2.21 with tuner v2: no cost table, so NCCL_ALGO/NCCL_PROTO and the LL128 rule of
 * 2.21 are the plugin's to respect. */
static void test_v2_on_nccl_2_21(void **state)
{
    (void)state;
    static const char *body = "  allreduce:\n"
                              "    - ranks: 8\n"
                              "      nodes: 1\n"
                              "      rules:\n"
                              "        - {min_bytes: 0, max_bytes: 4KiB, algo: ring, proto: ll}\n"
                              "        - {min_bytes: 4KiB, max_bytes: 64KiB, algo: tree, proto: "
                              "ll128}\n"
                              "        - {min_bytes: 64KiB, max_bytes: inf, algo: ring, proto: "
                              "simple}\n";
    /* cc 9.0: LL128 allowed by 2.21's rule */
    env_reset();
    fake_nccl_version = 22105;
    use_table("NVIDIA H200", "9.0", "2.21.5", 1, true, body);
    setenv("NCCL_PROTO", "^LL", 1);
    setenv("NCCL_ALGO", "tree,Ring", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(2, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_v2(2, ctx, 4, 1024, 0, 0, 1, -1, -1, 0); /* LL excluded by NCCL_PROTO */
    check_v2(2, ctx, 4, 8192, 0, 0, 1, A_TREE, P_LL128, 0);
    check_v2(2, ctx, 4, 1 << 20, 0, 0, 1, A_RING, P_SIMPLE, 0);
    fini_ver(2, ctx);
    close_plugin();

    env_reset();
    fake_nccl_version = 22105;
    use_table("NVIDIA H200", "9.0", "2.21.5", 1, true, body);
    setenv("NCCL_ALGO", "Tree", 1);
    open_plugin();
    assert_int_equal(init_ver(1, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_v2(1, ctx, 4, 1024, 0, 0, 1, -1, -1, 0); /* Ring excluded by NCCL_ALGO */
    check_v2(1, ctx, 4, 8192, 0, 0, 1, A_TREE, P_LL128, 0);
    fini_ver(1, ctx);
    close_plugin();

    /* cc 8.6: NCCL 2.21 never enables LL128 there */
    env_reset();
    fake_nccl_version = 22105;
    setenv("CCT_FAKE_GPU_NAME", "NVIDIA A10", 1);
    setenv("CCT_FAKE_GPU_CC", "86", 1);
    use_table("NVIDIA A10", "8.6", "2.21.5", 1, true, body);
    open_plugin();
    assert_int_equal(init_ver(2, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_v2(2, ctx, 4, 8192, 0, 0, 1, -1, -1, 0);
    check_v2(2, ctx, 4, 1024, 0, 0, 1, A_RING, P_LL, 0);
    fini_ver(2, ctx);
    assert_int_equal(tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "ll128_blocked"), 1);
    close_plugin();
}

static void test_v1_shapes(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(1, &ctx, 8, 1, tu_logger), ncclSuccess);
    assert_int_equal(init_ver(1, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_v2(1, ctx, 4, 4096, 0, 0, 1, A_RING, P_LL, 2);
    assert_int_equal(init_ver(1, &ctx, 4, 1, tu_logger), ncclSuccess);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "tuner v1"), 1);
    check_v2(1, ctx, 4, 4096, 0, 0, 1, -1, -1, 0);
    fini_ver(1, ctx);
    fini_ver(1, ctx);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "finalize"), 0);
    fini_ver(1, ctx);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "finalize"), 1);
    fini_ver(1, ctx); /* one destroy too many: harmless */
    const char *fin = tu_log_find(NCCL_LOG_INFO, "finalize");
    assert_int_equal(tu_field(fin, "overridden"), 1);
    assert_int_equal(tu_field(fin, "mismatch"), 1);
    close_plugin();
}

static void test_measurement_mode(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    ccltune_observation o;
    P.last(&o);
    assert_int_equal(o.calls, 0);
    assert_int_equal(P.force(A_RING, P_SIMPLE, 4), 0);
    float c[NA * NP];
    tu_costs_fill(c, NA, NP);
    c[A_TREE * NP + P_LL] = 50.0f; /* NCCL's default becomes tree/ll128 (11.0) */
    c[A_PAT * NP + P_LL] = TU_IGN;
    int nch = 0;
    P.v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, NA, NP, 0, &nch);
    assert_true(c[A_RING * NP + P_SIMPLE] == 0.0f);
    assert_int_equal(nch, 4);
    P.last(&o);
    assert_int_equal(o.calls, 1);
    assert_int_equal(o.coll, 4);
    assert_int_equal(o.bytes, 4096);
    assert_int_equal(o.default_algo, A_TREE);
    assert_int_equal(o.default_proto, P_LL128);
    assert_int_equal(o.chosen_algo, A_RING);
    assert_int_equal(o.chosen_proto, P_SIMPLE);
    assert_int_equal(o.channels, 4);
    assert_int_equal(o.forced_applied, 1);
    assert_int_equal(o.ignored_mask[A_PAT], 1 << P_LL);
    assert_int_equal(o.pipe_ops, 1);
    assert_int_equal(o.reg_buff, 0);
    /* the keys a section matches are reported as NCCL passed them */
    tu_costs_fill(c, NA, NP);
    P.v5->getCollInfo(ctx, 4, 1 << 20, 3, (float **)c, NA, NP, 1, &nch);
    P.last(&o);
    assert_int_equal(o.pipe_ops, 3);
    assert_int_equal(o.reg_buff, 1);
    assert_int_equal(o.bytes, 1 << 20);
    /* forcing an ignored entry: nothing applied, reported */
    check_call(5, ctx, 4, 4096, 1, 0, NA, A_RING, P_SIMPLE, -1, -1, 0);
    P.last(&o);
    assert_int_equal(o.forced_applied, 0);
    assert_int_equal(o.chosen_algo, -1);
    /* v2 in measurement mode */
    void *ctx2;
    assert_int_equal(init_ver(2, &ctx2, 8, 1, tu_logger), ncclSuccess);
    check_v2(2, ctx2, 4, 4096, 0, 0, 1, A_RING, P_SIMPLE, 4);
    P.last(&o);
    assert_int_equal(o.default_algo, -1);
    assert_int_equal(o.pipe_ops, 1);
    assert_int_equal(o.reg_buff, -1); /* v2 does not pass regBuff */
    assert_int_equal(o.forced_applied, 1);
    fini_ver(2, ctx2);
    /* back to the table */
    assert_int_equal(P.force(-1, 0, 0), 0);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    P.last(&o);
    assert_int_equal(o.forced_applied, 0);
    assert_int_equal(o.chosen_algo, A_RING);
    assert_int_equal(o.chosen_proto, P_LL);
    assert_int_equal(o.calls, 5);
    P.reset();
    P.last(&o);
    assert_int_equal(o.calls, 0);
    assert_int_equal(o.chosen_algo, -1);
    /* bypass: neither table nor forcing, NCCL decides; then back to the table */
    assert_int_equal(P.force(CCLTUNE_CONTROL_BYPASS, 0, 0), 0);
    float cb[NA * NP], cref[NA * NP];
    tu_costs_fill(cb, NA, NP);
    memcpy(cref, cb, sizeof cb);
    int nchb = 0;
    P.v5->getCollInfo(ctx, 4, 4096, 1, (float **)cb, NA, NP, 0, &nchb);
    assert_memory_equal(cb, cref, sizeof cb);
    assert_int_equal(nchb, 0);
    P.last(&o);
    assert_int_equal(o.chosen_algo, -1);
    assert_int_equal(o.forced_applied, 0);
    assert_int_equal(P.force(-1, 0, 0), 0);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    /* out of range */
    assert_int_equal(P.force(-3, 0, 0), -1);
    assert_int_equal(P.force(7, 0, 0), -1);
    assert_int_equal(P.force(0, 3, 0), -1);
    assert_int_equal(P.force(0, 0, 65), -1);
    fini_ver(5, ctx);
    const char *fin = finalize_line("0x5008");
    assert_non_null(fin);
    assert_int_equal(tu_field(fin, "calls"), 6);
    assert_int_equal(tu_field(fin, "overridden"), 4);
    assert_int_equal(tu_field(fin, "bypassed"), 1);
    assert_int_equal(tu_field(fin, "ignored_entry"), 1);
    close_plugin();
}

static void test_measurement_forces_ll128_beyond_allowlist(void **state)
{
    (void)state;
    /* The search unlocks LL128 with NCCL_PROTO and forces it even where NCCL would not
     * enable it by default (here: ring allreduce on 2 ranks at cc 9.0, blocked by the
     * allowlist because NCCL's CUDA version is unknown), to find out whether it corrupts
     * data.  NCCL's ignored entries still win. */
    env_reset();
    setenv("NCCL_PROTO", "LL,LL128,Simple", 1);
    setenv("CCLTUNE_MEASURE", "1", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 2, 2, tu_logger), ncclSuccess);
    assert_int_equal(P.force(A_RING, P_LL128, 0), 0);
    float c[NA * NP];
    tu_costs_fill(c, NA, NP);
    int nch = 0;
    P.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)c, NA, NP, 0, &nch);
    assert_true(c[A_RING * NP + P_LL128] == 0.0f);
    ccltune_observation o;
    P.last(&o);
    assert_int_equal(o.forced_applied, 1);
    tu_costs_fill(c, NA, NP);
    c[A_RING * NP + P_LL128] = TU_IGN;
    P.v5->getCollInfo(ctx, 4, 1 << 20, 1, (float **)c, NA, NP, 0, &nch);
    assert_true(c[A_RING * NP + P_LL128] == TU_IGN);
    P.last(&o);
    assert_int_equal(o.forced_applied, 0);
    assert_int_equal(P.force(-1, 0, 0), 0);
    fini_ver(5, ctx);
    unsetenv("NCCL_PROTO");
    close_plugin();
}

/* Forcing never reaches past NCCL's allowlist for this GPU and release: on a T4 (cc 7.5)
 * under NCCL 2.24.3 no release-2.24 rule enables LL128, so CCLTUNE_FORCE=ring/ll128 must
 * leave every entry alone (counted ll128_blocked, forced_applied 0) through the cost table
 * (v5) and without one (v2) -- with NCCL_PROTO unlocking LL128 or not.  A table whose
 * ll128.allowed is false (the probe saw link paths NCCL's rule refuses) is obeyed too. */
static void force_ll128_refused(int ver, const char *why)
{
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
    ccltune_observation o;
    if (ver >= 3)
        check_call(ver, ctx, 4, 1 << 20, 1, 0, NA, -1, 0, -1, -1, 0);
    else
        check_v2(ver, ctx, 4, 1 << 20, 0, 0, 1, -1, -1, 0);
    P.last(&o);
    if (o.forced_applied != 0 || o.chosen_proto == P_LL128)
        fail_msg("%s (v%d): LL128 forced where NCCL's rule says no", why, ver);
    fini_ver(ver, ctx);
    assert_int_equal(tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "ll128_blocked"), 1);
    close_plugin();
}

static void test_force_never_ll128_where_forbidden(void **state)
{
    (void)state;
    for (int unlock = 0; unlock < 2; unlock++) {
        for (int ver = 5; ver >= 2; ver -= 3) {
            env_reset();
            fake_nccl_version = 22403;
            setenv("CCT_FAKE_GPU_NAME", "Tesla T4", 1);
            setenv("CCT_FAKE_GPU_CC", "75", 1);
            setenv("CCLTUNE_FORCE", "ring/ll128", 1);
            if (unlock)
                setenv("NCCL_PROTO", "LL,LL128,Simple", 1);
            force_ll128_refused(ver, "T4, NCCL 2.24.3");
        }
    }
    /* the table's verdict: a GPU and release NCCL enables LL128 on, paths it does not */
    for (int ver = 5; ver >= 2; ver -= 3) {
        env_reset();
        setenv("CCLTUNE_FORCE", "ring/ll128", 1);
        use_table("NVIDIA H200", "9.0", "2.28.9", 1, false, good_body);
        force_ll128_refused(ver, "table ll128.allowed false");
    }
    /* the same request where NCCL's rule allows it is applied (the entry is not ignored) */
    env_reset();
    setenv("CCLTUNE_FORCE", "ring/ll128", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 1 << 20, 1, 0, NA, -1, 0, A_RING, P_LL128, 0);
    check_call(5, ctx, 4, 1 << 20, 1, 0, NA, A_RING, P_LL128, -1, -1, 0); /* IGNORE wins */
    fini_ver(5, ctx);
    close_plugin();
}

static void test_force_env(void **state)
{
    (void)state;
    env_reset();
    setenv("CCLTUNE_FORCE", "tree/ll/2", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 4, 4, tu_logger), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_TREE, P_LL, 2);
    check_call(5, ctx, 3, 1 << 20, 1, 0, NA, -1, 0, A_TREE, P_LL, 2);
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, NULL), 0); /* no table needed */
    fini_ver(5, ctx);
    assert_int_equal(tu_field(tu_log_find(NCCL_LOG_INFO, "finalize"), "overridden"), 2);
    close_plugin();

    env_reset();
    setenv("CCLTUNE_FORCE", "ring", 1);
    use_good_table();
    open_plugin();
    for (int i = 0; i < 2; i++) {
        assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
        check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2); /* table still applies */
        fini_ver(5, ctx);
    }
    assert_int_equal(tu_log_count(NCCL_LOG_WARN, "CCLTUNE_FORCE"), 1);
    close_plugin();

    /* a chunk from the environment (nccl-tests on NCCL 2.30): answered for the forced
     * configuration, one INFO line under TUNING per answer that changes NCCL's chunk */
    env_reset();
    setenv("CCLTUNE_FORCE", "ring/simple/0/256K", 1);
    open_plugin();
    assert_int_equal(init_ver(6, &ctx, 8, 1, tu_logger), ncclSuccess);
    size_t chunk = 2 << 20;
    P.v6->getChunkSize(ctx, 4, 1 << 20, A_RING, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 262144);
    chunk = 2 << 20;
    P.v6->getChunkSize(ctx, 4, 1 << 20, A_TREE, P_SIMPLE, 1, &chunk);
    assert_int_equal(chunk, 2 << 20);
    assert_int_equal(tu_log_count(NCCL_LOG_INFO, "chunk 2097152 -> 262144 (forced)"), 1);
    fini_ver(6, ctx);
    close_plugin();
    static const char *const bad[] = {"ring/simple/0/big", "ring/simple/0/2G", "ring/simple/0/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        env_reset();
        setenv("CCLTUNE_FORCE", bad[i], 1);
        open_plugin();
        assert_int_equal(init_ver(6, &ctx, 8, 1, tu_logger), ncclSuccess);
        chunk = 2 << 20;
        P.v6->getChunkSize(ctx, 4, 1 << 20, A_RING, P_SIMPLE, 1, &chunk);
        assert_int_equal(chunk, 2 << 20);
        fini_ver(6, ctx);
        assert_int_equal(tu_log_count(NCCL_LOG_WARN, "CCLTUNE_FORCE"), 1);
        close_plugin();
    }
}

static void test_null_logger_and_trace(void **state)
{
    (void)state;
    env_reset();
    setenv("CCLTUNE_TABLE", "/nonexistent.yaml", 1);
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, NULL), ncclSuccess);
    check_call(5, ctx, 4, 4096, 1, 0, NA, -1, 0, -1, -1, 0);
    fini_ver(5, ctx);
    assert_int_equal(tu_log_count(0, NULL), 0);
    close_plugin();

    env_reset();
    use_good_table();
    setenv("NCCL_DEBUG", "TRACE", 1);
    open_plugin();
    assert_int_equal(init_ver(6, &ctx, 8, 1, tu_logger), ncclSuccess);
    check_call(6, ctx, 4, 4096, 1, 0, NA, -1, 0, A_RING, P_LL, 2);
    check_call(6, ctx, 0, 4096, 1, 0, NA, -1, 0, -1, -1, 0);
    size_t chunk = 1 << 20;
    P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 8, &chunk);
    assert_int_equal(tu_log_count(NCCL_LOG_TRACE, "allreduce 4096 bytes"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_TRACE, "-> ring/ll channels=2 (overridden)"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_TRACE, "no_section"), 1);
    assert_int_equal(tu_log_count(NCCL_LOG_TRACE, "chunk 1048576 -> 131072"), 1);
    fini_ver(6, ctx);
    close_plugin();
}

/* NCCL never finalizes twice or calls after finalize, but a poisoned context turns either
 * into an error (one WARN, nothing touched) rather than a use of freed memory -- ASan in CI
 * would report the latter.  Many contexts in between: the poison survives reuse pressure up
 * to the quarantine's depth. */
static void test_calls_after_finalize(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    for (int ver = 6; ver >= 2; ver--) {
        tu_log_clear();
        void *ctx;
        assert_int_equal(init_ver(ver, &ctx, 8, 1, tu_logger), ncclSuccess);
        assert_non_null(ctx);
        assert_int_equal(fini_ver(ver, ctx), ncclSuccess);
        for (int i = 0; i < 8; i++) { /* churn: other communicators come and go */
            void *other;
            assert_int_equal(init_ver(ver, &other, 8, 1, tu_logger), ncclSuccess);
            assert_int_equal(fini_ver(ver, other), ncclSuccess);
        }
        assert_int_not_equal(fini_ver(ver, ctx), ncclSuccess);
        if (ver >= 3) {
            float c[NA * NP], before[NA * NP];
            tu_costs_fill(c, NA, NP);
            memcpy(before, c, sizeof c);
            int nch = 0;
            assert_int_not_equal(costs_ver(ver, ctx, 4, 4096, 1, c, NA, NP, 0, &nch), ncclSuccess);
            assert_memory_equal(c, before, sizeof c);
            assert_int_equal(nch, 0);
        } else {
            int a, p, nch = 0;
            assert_int_not_equal(v2_ver(ver, ctx, 4, 4096, 0, 0, 1, &a, &p, &nch), ncclSuccess);
            assert_int_equal(a, CCT_NCCL_ALGO_UNDEF);
            assert_int_equal(p, CCT_NCCL_PROTO_UNDEF);
        }
        if (ver == 6) {
            size_t chunk = 1 << 20;
            assert_int_not_equal(P.v6->getChunkSize(ctx, 4, 4 << 20, A_RING, P_SIMPLE, 8, &chunk),
                                 ncclSuccess);
            assert_int_equal(chunk, 1 << 20);
        }
        /* one finalize line per real finalize (10), none for the refused ones */
        assert_int_equal(tu_log_count(NCCL_LOG_INFO, "finalize comm"), 9);
        /* one WARN for the process, at the first misuse */
        assert_int_equal(tu_log_count(NCCL_LOG_WARN, "finalized already"), ver == 6);
    }
    close_plugin();
}

/* Odd arguments NCCL never passes still must not crash or touch memory. */
static void test_defensive_arguments(void **state)
{
    (void)state;
    env_reset();
    use_good_table();
    open_plugin();
    void *ctx;
    assert_int_equal(init_ver(5, &ctx, 8, 1, tu_logger), ncclSuccess);
    int nch = 0;
    assert_int_equal(P.v5->getCollInfo(ctx, 4, 4096, 1, NULL, NA, NP, 0, &nch), ncclSuccess);
    float c[NA * NP];
    tu_costs_fill(c, NA, NP);
    assert_int_equal(P.v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, 0, 0, 0, &nch), ncclSuccess);
    assert_int_equal(P.v5->getCollInfo(ctx, -3, 4096, 1, (float **)c, NA, NP, 0, &nch),
                     ncclSuccess);
    assert_int_equal(P.v5->getCollInfo(NULL, 4, 4096, 1, (float **)c, NA, NP, 0, &nch),
                     ncclSuccess);
    assert_int_equal(P.v5->getCollInfo(ctx, 4, 4096, 1, (float **)c, 1, NP, 0, &nch),
                     ncclSuccess); /* ring is out of bounds with one algorithm */
    assert_int_equal(P.v5->getCollInfo(ctx, 4, SIZE_MAX, 1, (float **)c, NA, NP, 0, &nch),
                     ncclSuccess);
    assert_int_equal(nch, 8); /* SIZE_MAX falls in the last band: ring/simple, 8 channels */
    assert_int_equal(P.v5->finalize(NULL), ncclSuccess);
    assert_int_equal(P.v5->init(NULL, 1, 8, 1, tu_logger, NULL, NULL), ncclInvalidArgument);
    fini_ver(5, ctx);
    close_plugin();
}

/* After each scenario, even a failed one: drop the library so the next starts fresh. */
static int teardown(void **state)
{
    (void)state;
    if (P.h)
        dlclose(P.h);
    memset(&P, 0, sizeof P);
    return 0;
}

int main(void)
{
    tu_log_echo = getenv("CCT_TEST_VERBOSE") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_symbols_by_path_and_name, teardown),
        cmocka_unit_test_teardown(test_name_only_load, teardown),
        cmocka_unit_test_teardown(test_cost_versions, teardown),
        cmocka_unit_test_teardown(test_v2_v1, teardown),
        cmocka_unit_test_teardown(test_chunk_size_v6, teardown),
        cmocka_unit_test(test_v6_layout),
        cmocka_unit_test_teardown(test_forced_chunk_v6, teardown),
        cmocka_unit_test_teardown(test_missing_table, teardown),
        cmocka_unit_test_teardown(test_no_table_configured, teardown),
        cmocka_unit_test_teardown(test_malformed_table, teardown),
        cmocka_unit_test_teardown(test_config_file_variable, teardown),
        cmocka_unit_test_teardown(test_strict, teardown),
        cmocka_unit_test_teardown(test_gpu_mismatch, teardown),
        cmocka_unit_test_teardown(test_cc_mismatch, teardown),
        cmocka_unit_test_teardown(test_gpu_unknown, teardown),
        cmocka_unit_test_teardown(test_nccl_mismatch, teardown),
        cmocka_unit_test_teardown(test_nccl_patch_differs, teardown),
        cmocka_unit_test_teardown(test_shared_gpu_rule, teardown),
        cmocka_unit_test_teardown(test_topology_without_section, teardown),
        cmocka_unit_test_teardown(test_ll128_blocked_by_table, teardown),
        cmocka_unit_test_teardown(test_v2_on_nccl_2_21, teardown),
        cmocka_unit_test_teardown(test_v1_shapes, teardown),
        cmocka_unit_test_teardown(test_measurement_mode, teardown),
        cmocka_unit_test_teardown(test_measurement_forces_ll128_beyond_allowlist, teardown),
        cmocka_unit_test_teardown(test_force_env, teardown),
        cmocka_unit_test_teardown(test_force_never_ll128_where_forbidden, teardown),
        cmocka_unit_test_teardown(test_null_logger_and_trace, teardown),
        cmocka_unit_test_teardown(test_defensive_arguments, teardown),
        cmocka_unit_test_teardown(test_calls_after_finalize, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (table_path) {
        unlink(table_path);
        free(table_path);
    }
    tu_unload_fake_cuda();
    return rc;
}
