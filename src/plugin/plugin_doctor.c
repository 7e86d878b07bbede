/*
 * plugin_doctor.c - the checks behind `ccltune doctor` (plugin_doctor.h), in the order a
 * job meets them: NCCL, the tuner library NCCL_TUNER_PLUGIN names, the GPU, the table
 * (loaded by the plugin's loader), then per communicator shape a plugin context and every
 * rule through the plugin's per-call decision, then the environment NCCL reads itself
 * (channel limits, buffer sizes) against what the table was measured with.
 *
 * The logger handed to the plugin's contexts has NCCL's signature, which carries no user
 * pointer, so the report being filled is reached through one static pointer while a
 * context is created (the doctor runs once per process).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_facts.h"
#include "plugin_doctor.h"
#include "plugin_internal.h"

#define MAX_NAMED 8 /* blocked rules named one by one per reason */

const char *cct_doc_level_name(int level)
{
    static const char *const n[] = {"ok", "info", "warn", "fail"};
    return level >= 0 && level <= 3 ? n[level] : "?";
}

static bool add(cct_doctor_report *r, const char *check, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool add(cct_doctor_report *r, const char *check, int level, const char *fmt, ...)
{
    if (r->n_items == r->cap_items) {
        size_t cap = r->cap_items ? 2 * r->cap_items : 32;
        cct_doc_item *items = realloc(r->items, cap * sizeof *items);
        if (!items) {
            r->oom = true;
            return false;
        }
        r->items = items;
        r->cap_items = cap;
    }
    cct_doc_item *it = &r->items[r->n_items++];
    snprintf(it->check, sizeof it->check, "%s", check);
    it->level = level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->text, sizeof it->text, fmt, ap);
    va_end(ap);
    if (level == CCT_DOC_FAIL)
        r->applies = false;
    return true;
}

/* ---------- NCCL and the tuner library ---------- */

static void check_nccl(const cct_doctor_opts *o, cct_doctor_report *r)
{
    cct_nccl_lib_probe(o->nccl, &r->nccl);
    const char *name = o->nccl ? o->nccl : "libnccl.so.2";
    char ver[32];
    if (!r->nccl.found) {
        add(r, "nccl", CCT_DOC_FAIL, "%s does not load here (%s): the job's NCCL is unknown", name,
            r->nccl.why);
        return;
    }
    if (!r->nccl.version) {
        add(r, "nccl", CCT_DOC_FAIL, "%s: %s", r->nccl.path, r->nccl.why);
        return;
    }
    r->nccl_abi = cct_tuner_abi_for_nccl(r->nccl.version);
    add(r, "nccl", CCT_DOC_OK, "NCCL %s from %s (it looks up tuner ABI v%d and older)",
        cct_nccl_version_format(r->nccl.version, ver, sizeof ver), r->nccl.path, r->nccl_abi);
}

static void check_plugin(const cct_doctor_opts *o, cct_doctor_report *r)
{
    const char *env = getenv("NCCL_TUNER_PLUGIN");
    cct_tuner_lib_resolve(env, r->nccl.version, &r->tuner);
    const cct_tuner_lib *t = &r->tuner;
    char hint[4400] = "";
    if (o->own_plugin) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", o->own_plugin);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        snprintf(hint, sizeof hint,
                 "; set NCCL_TUNER_PLUGIN=ccltune with %s on LD_LIBRARY_PATH, or "
                 "NCCL_TUNER_PLUGIN=%s",
                 dir, o->own_plugin);
    }
    if (o->own_plugin)
        add(r, "plugin", CCT_DOC_INFO, "this ccltune's own plugin: %s", o->own_plugin);
    if (t->disabled) {
        add(r, "plugin", CCT_DOC_FAIL, "NCCL_TUNER_PLUGIN=none: NCCL loads no tuner%s", hint);
    } else if (!t->found) {
        add(r, "plugin", CCT_DOC_FAIL, "%s: NCCL would try %s and find none (%s)%s",
            env ? "NCCL_TUNER_PLUGIN set" : "NCCL_TUNER_PLUGIN unset", t->tried, t->why, hint);
    } else if (!t->ours) {
        add(r, "plugin", CCT_DOC_FAIL, "NCCL would load %s (%s), which is not ccltune's plugin%s",
            t->path, t->name, hint);
    } else if (!t->abi) {
        add(r, "plugin", CCT_DOC_FAIL, "%s exports no tuner symbol this NCCL looks up", t->path);
    } else {
        add(r, "plugin", CCT_DOC_OK, "NCCL_TUNER_PLUGIN=%s loads %s as ncclTunerPlugin_v%d",
            env ? env : "(unset)", t->path, t->abi);
    }
}

/* ---------- the GPU, as the plugin reads it ---------- */

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_device_get_fn)(int *dev, int ordinal);
typedef int (*cu_retain_fn)(void **ctx, int dev);
typedef int (*cu_set_current_fn)(void *ctx);

/* Make device 0's primary context current, as NCCL has before tuner init.  The driver
 * stays loaded (the plugin finds it with RTLD_NOLOAD). */
static bool make_context_current(char *why, size_t len)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_GLOBAL);
    if (!lib) {
        snprintf(why, len, "the CUDA driver (libcuda.so.1) does not load: %s", dlerror());
        return false;
    }
    cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_device_get_fn get = (cu_device_get_fn)dlsym(lib, "cuDeviceGet");
    cu_retain_fn retain = (cu_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    cu_set_current_fn set = (cu_set_current_fn)dlsym(lib, "cuCtxSetCurrent");
    int dev = 0, rc;
    void *ctx = NULL;
    if (!init || !get || !retain || !set) {
        snprintf(why, len, "the CUDA driver lacks cuInit/cuDevicePrimaryCtxRetain");
        return false;
    }
    if ((rc = init(0)) != 0 || (rc = get(&dev, 0)) != 0) {
        snprintf(why, len, "no GPU: the CUDA driver answers %d", rc);
        return false;
    }
    if ((rc = retain(&ctx, dev)) != 0 || (rc = set(ctx)) != 0) {
        snprintf(why, len, "cannot make GPU 0's context current (CUDA error %d)", rc);
        return false;
    }
    return true;
}

static void check_gpu(cct_doctor_report *r, cct_gpu_facts *g)
{
    memset(g, 0, sizeof *g);
    if (make_context_current(g->why, sizeof g->why))
        g->known = cct_device_current_gpu(g->name, sizeof g->name, &g->cc, g->why, sizeof g->why);
    r->gpu_known = g->known;
    r->cc = g->known ? g->cc : -1;
    snprintf(r->gpu, sizeof r->gpu, "%s", g->known ? g->name : "");
    if (g->known)
        add(r, "gpu", CCT_DOC_OK, "GPU 0: %s, compute capability %d.%d", g->name, g->cc / 10,
            g->cc % 10);
    else
        add(r, "gpu", CCT_DOC_FAIL, "the GPU cannot be read: %s", g->why);
}

/* ---------- the table, through the plugin's loader ---------- */

static const cct_pstate *check_table(const cct_doctor_opts *o, cct_doctor_report *r)
{
    const char *job = getenv("CCLTUNE_TABLE");
    if (o->table) {
        if (job && strcmp(job, o->table) != 0)
            add(r, "table", CCT_DOC_WARN,
                "checking %s, but this environment's CCLTUNE_TABLE names %s: a job started "
                "from it loads that one",
                o->table, job);
        else if (!job) {
            char full[4096];
            add(r, "table", CCT_DOC_WARN,
                "CCLTUNE_TABLE is not set here: a job needs CCLTUNE_TABLE=%s",
                realpath(o->table, full) ? full : o->table);
        }
        setenv("CCLTUNE_TABLE", o->table, 1);
    }
    const cct_pstate *ps = cct_pstate_get();
    snprintf(r->table_path, sizeof r->table_path, "%s", ps->path);
    if (ps->status == CCT_TABLE_NONE) {
        r->table_status = "none";
        add(r, "table", CCT_DOC_FAIL, "%s; or pass --table", ps->err.msg);
        return NULL;
    }
    if (ps->status != CCT_TABLE_OK) {
        r->table_status = "failed";
        add(r, "table", CCT_DOC_FAIL, "the plugin refuses it: %s", ps->err.msg);
        return NULL;
    }
    r->table_status = "ok";
    if (ps->waived.msg[0])
        add(r, "table", CCT_DOC_WARN, "%s; loaded only because CCLTUNE_TABLE_UNSAFE_OK=1",
            ps->waived.msg);
    /* with --table the doctor put it in CCLTUNE_TABLE itself: name the flag, not the variable
     * the warning above says is unset */
    add(r, "table", CCT_DOC_OK, "%s (from %s) loads: %zu sections, %zu rules", ps->path,
        o->table ? "--table" : ps->path_from, ps->table.n_sections, ps->n_rules);
    if (ps->table.fingerprint.nccl_versions)
        add(r, "table", CCT_DOC_INFO,
            "measured with NCCL %s; widened at fit time to NCCL %s (nccl_versions)",
            ps->table.fingerprint.nccl, ps->table.fingerprint.nccl_versions);
    if (ps->rules_off)
        add(r, "env", CCT_DOC_FAIL, "CCLTUNE_RULES=0: every call is left to NCCL (constants only)");
    if (ps->force_set || ps->force_env_bad)
        add(r, "env", CCT_DOC_FAIL, "CCLTUNE_FORCE=%s overrides the table on every call",
            getenv("CCLTUNE_FORCE"));
    return ps;
}

/* ---------- per shape: a plugin context, and every rule through its decision ---------- */

static cct_doctor_report *logging_to;
static const char *logging_shape;

static void capture(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                    const char *fmt, ...)
{
    (void)flags;
    (void)file;
    (void)line;
    if (!logging_to || (level != NCCL_LOG_WARN && level != NCCL_LOG_INFO))
        return;
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    add(logging_to, "log", level == NCCL_LOG_WARN ? CCT_DOC_WARN : CCT_DOC_INFO, "%s: %s",
        logging_shape, text);
}

/* A cost table as NCCL hands it over: NCCL_ALGO/NCCL_PROTO exclusions arrive ignored. */
static void nccl_costs(const cct_env_mask *env, float costs[CCT_NUM_ALGOS][CCT_NUM_PROTOS])
{
    for (int a = 0; a < CCT_NUM_ALGOS; a++)
        for (int p = 0; p < CCT_NUM_PROTOS; p++)
            costs[a][p] = env->algo[a] && env->proto[p] ? 1.0f : -1.0f;
}

static int env_channels_cap(const char **which)
{
    static const char *const vars[] = {"NCCL_MAX_NCHANNELS", "NCCL_NCHANNELS"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long x = v && *v ? strtol(v, &end, 0) : 0;
        if (v && *v && *end == '\0' && x > 0) {
            *which = vars[i];
            return (int)x;
        }
    }
    return 0;
}

typedef struct blocked {
    size_t n;
    char names[MAX_NAMED][160];
} blocked;

static void note(blocked *b, const cct_section *s, const cct_rule *rule)
{
    if (b->n < MAX_NAMED) {
        char key[128], lo[32], hi[32];
        snprintf(b->names[b->n], sizeof b->names[b->n], "%s [%s, %s) %s/%s",
                 cct_section_describe(s, key, sizeof key),
                 cct_format_bytes_exact(rule->min_bytes, lo, sizeof lo),
                 cct_format_bytes_exact(rule->max_bytes, hi, sizeof hi), cct_algo_name(rule->algo),
                 cct_proto_name(rule->proto));
    }
    b->n++;
}

static void report_blocked(cct_doctor_report *r, const blocked *b, const char *why)
{
    if (!b->n)
        return;
    char list[MAX_NAMED * 170] = "";
    for (size_t i = 0; i < b->n && i < MAX_NAMED; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? "; " : "", b->names[i]);
    }
    add(r, "rules", CCT_DOC_FAIL, "%zu rule%s %s: %s%s", b->n, b->n == 1 ? "" : "s", why, list,
        b->n > MAX_NAMED ? "; ..." : "");
}

typedef struct rule_checks {
    blocked env, ll128, other, capped;
} rule_checks;

/* A call (numPipeOps, regBuff) that the plugin serves from section s -- a section with
 * CCT_ANY keys is shadowed by more specific ones for some calls -- or false when every call
 * goes elsewhere (e.g. a reg_buff section under tuner v3 and older, which pass no regBuff). */
static bool call_for(const cct_table *t, const cct_section *s, int abi, int *pipe_ops,
                     int *reg_buff)
{
    int max_pipe = 1;
    for (size_t i = 0; i < t->n_sections; i++)
        if (t->sections[i].pipe_ops > max_pipe)
            max_pipe = t->sections[i].pipe_ops;
    static const int with_reg[] = {0, 1}, without_reg[] = {-1};
    const int *regs = abi >= 4 ? with_reg : without_reg;
    size_t n_regs = abi >= 4 ? 2 : 1;
    for (int p = s->pipe_ops == CCT_ANY ? 1 : s->pipe_ops;
         p <= (s->pipe_ops == CCT_ANY ? max_pipe + 1 : s->pipe_ops); p++)
        for (size_t k = 0; k < n_regs; k++)
            if (cct_table_find_section(t, s->coll, s->ranks, s->nodes, p, regs[k]) == s) {
                *pipe_ops = p;
                *reg_buff = regs[k];
                return true;
            }
    return false;
}

static void check_rules(cct_doctor_report *r, cct_pctx *ctx, const cct_pstate *ps, size_t lo,
                        size_t hi, int abi, rule_checks *rc)
{
    const char *cap_var = NULL;
    int cap = env_channels_cap(&cap_var);
    for (size_t i = lo; i < hi; i++) {
        const cct_section *s = ps->index.ix[i].sec;
        int pipe_ops, reg_buff;
        if (!call_for(&ps->table, s, abi, &pipe_ops, &reg_buff)) {
            char key[128];
            add(r, "sections", CCT_DOC_WARN,
                "%s: no call reaches it with tuner v%d (more specific sections, or no regBuff "
                "before v4); its %zu rule%s never used",
                cct_section_describe(s, key, sizeof key), abi, s->n_rules,
                s->n_rules == 1 ? " is" : "s are");
            continue;
        }
        for (size_t k = 0; k < s->n_rules; k++) {
            const cct_rule *rule = &s->rules[k];
            float costs[CCT_NUM_ALGOS][CCT_NUM_PROTOS];
            nccl_costs(&ps->env, costs);
            int nch = 0, algo = -1, proto = -1;
            cct_decision d =
                abi >= 3 ? cct_ctx_decide_costs(ctx, s->coll, rule->min_bytes, pipe_ops, reg_buff,
                                                &costs[0][0], CCT_NUM_ALGOS, CCT_NUM_PROTOS, &nch)
                         : cct_ctx_decide_v2(ctx, s->coll, rule->min_bytes, 0, 0, pipe_ops, &algo,
                                             &proto, &nch);
            r->n_rules++;
            if (d.outcome == CCT_OUT_OVERRIDDEN) {
                if (cap && rule->channels > cap)
                    note(&rc->capped, s, rule);
                continue;
            }
            r->n_blocked++;
            if (d.outcome == CCT_OUT_LL128)
                note(&rc->ll128, s, rule);
            else if (d.outcome == CCT_OUT_IGNORED && (ps->env.algo_set || ps->env.proto_set))
                note(&rc->env, s, rule);
            else
                note(&rc->other, s, rule);
        }
    }
}

static void ll128_summary(cct_doctor_report *r, const cct_pstate *ps, const cct_gpu_facts *g,
                          int ranks)
{
    cct_ll128_query q = cct_ll128_query_blank();
    q.nccl_version = ps->nccl_version;
    q.min_cc = q.max_cc = g->known ? g->cc : -1;
    q.ll128_c2c = ps->ll128_c2c;
    q.coll = CCT_COLL_ALLREDUCE;
    q.algo = CCT_ALGO_RING;
    q.nranks = ranks;
    char why[512];
    cct_ll128_verdict v = cct_ll128_check(&q, why, sizeof why);
    const cct_table *t = &ps->table;
    add(r, "ll128", CCT_DOC_INFO,
        "NCCL's rule here (GPU and release; link paths unseen): %s (%s); the table: %s%s%s",
        v == CCT_LL128_BLOCKED ? "blocked" : "allowed", why,
        t->ll128_allowed ? "allowed" : "not allowed", t->ll128_reason ? ": " : "",
        t->ll128_reason ? t->ll128_reason : "");
}

static bool shape_seen(const int (*shapes)[2], size_t n, int ranks, int nodes)
{
    for (size_t i = 0; i < n; i++)
        if (shapes[i][0] == ranks && shapes[i][1] == nodes)
            return true;
    return false;
}

/* The shapes to check: the one asked for, or every (ranks, nodes) of the table. */
static int (*pick_shapes(const cct_doctor_opts *o, const cct_table *t, size_t *n))[2]
{
    int(*shapes)[2] = calloc(t->n_sections + 1, sizeof *shapes);
    *n = 0;
    if (!shapes)
        return NULL;
    for (size_t i = 0; i < t->n_sections; i++) {
        const cct_section *s = &t->sections[i];
        if ((o->ranks && s->ranks != o->ranks) || (o->nodes && s->nodes != o->nodes))
            continue;
        if (!shape_seen((const int(*)[2])shapes, *n, s->ranks, s->nodes)) {
            shapes[*n][0] = s->ranks;
            shapes[(*n)++][1] = s->nodes;
        }
    }
    if (*n == 0 && o->ranks) { /* none: the asked shape, to report the mismatch */
        shapes[0][0] = o->ranks;
        shapes[(*n)++][1] = o->nodes ? o->nodes : 1;
    }
    return shapes;
}

static void check_shape(cct_doctor_report *r, const cct_pstate *ps, const cct_gpu_facts *g, int abi,
                        int ranks, int nodes, rule_checks *rc)
{
    char shape[64];
    snprintf(shape, sizeof shape, "ranks=%d nodes=%d", ranks, nodes);
    size_t lo, hi;
    cct_table_index_shape(&ps->index, ranks, nodes, &lo, &hi);
    cct_runtime rt = {
        g->known ? g->name : NULL, g->cc, ps->nccl_version, ranks, nodes, ps->hostid_set};
    char msg[512];
    cct_fp_verdict v = cct_fingerprint_check_shape(&ps->table, &rt, hi > lo, msg, sizeof msg);
    bool same = strcmp(msg, cct_fp_verdict_name(v)) == 0;
    add(r, "fingerprint", cct_fp_usable(v) ? CCT_DOC_OK : CCT_DOC_FAIL, "%s: %s%s%s", shape,
        cct_fp_verdict_name(v), same ? "" : ": ", same ? "" : msg);
    logging_to = r;
    logging_shape = shape;
    bool fail = false;
    cct_pctx *ctx =
        cct_ctx_create_with(ps, g, abi, 0, (size_t)ranks, (size_t)nodes, capture, &fail);
    if (fail)
        add(r, "fingerprint", CCT_DOC_FAIL, "%s: CCLTUNE_STRICT=1 fails communicator init", shape);
    if (ctx && cct_fp_usable(v) && !ps->rules_off) {
        size_t rules = ps->index.rules_before[hi] - ps->index.rules_before[lo];
        add(r, "sections", CCT_DOC_OK, "%s: %zu section%s, %zu rules apply", shape, hi - lo,
            hi - lo == 1 ? "" : "s", rules);
        check_rules(r, ctx, ps, lo, hi, abi, rc);
    }
    logging_to = NULL; /* the finalize line says nothing new */
    cct_ctx_destroy(ctx);
    ll128_summary(r, ps, g, ranks);
}

/* ---------- what NCCL reads itself ---------- */

static void check_nccl_env(cct_doctor_report *r, const cct_table *t)
{
    for (int i = 0; i < CCT_NUM_PROTOS; i++) {
        const char *var = cct_proto_facts_of(cct_buffsize_protos[i])->buffsize_env;
        const char *now = getenv(var), *want = NULL;
        for (size_t k = 0; k < t->n_env; k++)
            if (strcmp(t->env[k].key, var) == 0)
                want = t->env[k].value;
        if (now && (!want || strcmp(now, want) != 0))
            add(r, "env", CCT_DOC_WARN,
                "%s=%s: the table's rules were measured with %s; its predictions may not hold", var,
                now, want ? want : "NCCL's default");
        else if (!now && want)
            add(r, "env", CCT_DOC_WARN, "the table recommends %s=%s (recommended_env); unset here",
                var, want);
    }
    const char *min = getenv("NCCL_MIN_NCHANNELS");
    if (min)
        add(r, "env", CCT_DOC_INFO,
            "NCCL_MIN_NCHANNELS=%s: NCCL sets up at least that many channels; rules asking for "
            "fewer still apply per call",
            min);
}

static void check_algo_proto_env(cct_doctor_report *r)
{
    const char *vars[] = {"NCCL_ALGO", "NCCL_PROTO"};
    for (size_t i = 0; i < 2; i++)
        if (getenv(vars[i]))
            add(r, "env", CCT_DOC_WARN,
                "%s=%s: NCCL marks every other choice ignored, and the plugin never picks an "
                "ignored one",
                vars[i], getenv(vars[i]));
}

cct_status cct_doctor_run(const cct_doctor_opts *o, cct_doctor_report *r, cct_error *err)
{
    memset(r, 0, sizeof *r);
    r->applies = true;
    r->table_status = "none";
    r->own_plugin = o->own_plugin;
    check_nccl(o, r);
    check_plugin(o, r);
    cct_gpu_facts g;
    check_gpu(r, &g);
    const cct_pstate *loaded = check_table(o, r);
    if (loaded) {
        /* the job's NCCL, not whichever this process may have linked */
        cct_pstate ps = *loaded;
        ps.nccl_version = r->nccl.version;
        int abi = r->tuner.abi ? r->tuner.abi : (r->nccl_abi ? r->nccl_abi : 6);
        check_algo_proto_env(r);
        size_t n = 0;
        int(*shapes)[2] = pick_shapes(o, &ps.table, &n);
        if (!shapes)
            return cct_error_set(err, CCT_ENOMEM, "out of memory");
        rule_checks rc;
        memset(&rc, 0, sizeof rc);
        for (size_t i = 0; i < n; i++)
            check_shape(r, &ps, &g, abi, shapes[i][0], shapes[i][1], &rc);
        r->n_shapes = n;
        free(shapes);
        if (n == 0)
            add(r, "sections", CCT_DOC_FAIL, "the table has no sections");
        report_blocked(r, &rc.env, "blocked by NCCL_ALGO/NCCL_PROTO (left to NCCL)");
        report_blocked(r, &rc.ll128, "on LL128, which is not allowed here (left to NCCL)");
        report_blocked(r, &rc.other, "left to NCCL");
        const char *cap_var = NULL;
        int cap = env_channels_cap(&cap_var);
        if (rc.capped.n) {
            char why[96];
            snprintf(why, sizeof why, "over %s=%d channels (NCCL caps them)", cap_var, cap);
            report_blocked(r, &rc.capped, why);
        }
        check_nccl_env(r, &ps.table);
    }
    if (r->oom)
        return cct_error_set(err, CCT_ENOMEM, "out of memory");
    return CCT_OK;
}

void cct_doctor_report_free(cct_doctor_report *r)
{
    free(r->items);
    memset(r, 0, sizeof *r);
}
