/*
 * cct_search_run.c - starting, resuming and finishing a search run (see cct_search_run.h).
 *
 * A resume is only allowed onto the same plan: the plan hash recorded when the run started
 * must equal the hash of the plan the current command line builds, otherwise the store
 * would mix two experiments under one run id.  The command line is recorded so a reader of
 * the store can see how each run was produced.
 */
#include "cct_search_run.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cct_bench.h"
#include "cct_chunk.h"
#include "cct_facts.h"
#include "cct_fingerprint.h"
#include "cct_nccl_lib.h"
#include "cct_progress.h"

void cct_search_command_line(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    int n = snprintf(buf, len, "ccltune");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < argc && used + 2 < len; i++) {
        n = snprintf(buf + used, len - used, " %s", argv[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

cct_status cct_search_build_plan(cct_search_opts *o, int ranks, int nodes, cct_plan *plan,
                                 cct_error *err)
{
    o->space.ranks = ranks;
    o->space.nodes = nodes;
    if (!o->bench_table)
        return cct_plan_build(&o->space, plan, err);
    cct_table t;
    cct_status st = cct_table_load_file(o->bench_table, &t, err);
    if (st != CCT_OK)
        return st;
    st = cct_bench_build_plan(o, &t, ranks, nodes, plan, err);
    cct_table_destroy(&t);
    return st;
}

cct_status cct_search_begin(cct_search_opts *o, int ranks, int nodes,
                            const cct_store_fingerprint *fp, const char *source,
                            cct_search_run *run, cct_error *err)
{
    memset(run, 0, sizeof *run);
    run->ll128_allowed = fp->ll128_allowed;
    o->space.ll128_default = fp->ll128_allowed;
    cct_status st = cct_search_build_plan(o, ranks, nodes, &run->plan, err);
    if (st != CCT_OK)
        return st;
    if ((st = cct_store_open(o->store_path, false, &run->store, err)) != CCT_OK)
        goto fail;
    if (o->resume_run) {
        cct_store_run r;
        st = cct_store_resume_run(run->store, o->resume_run, run->plan.hash, &r, err);
        if (st != CCT_OK) {
            if (st == CCT_EINVAL &&
                cct_store_get_run(run->store, o->resume_run, &r, NULL) == CCT_OK)
                cct_error_prefix(err, "resume with the run's own flags (%s)", r.command);
            goto fail;
        }
        run->run_id = r.id;
        run->resumed = true;
        return CCT_OK;
    }
    int64_t fp_id = 0;
    if ((st = cct_store_put_fingerprint(run->store, fp, &fp_id, err)) != CCT_OK)
        goto fail;
    cct_store_run r;
    memset(&r, 0, sizeof r);
    r.fingerprint_id = fp_id;
    snprintf(r.tool, sizeof r.tool, "ccltune %s", CCT_VERSION);
    snprintf(r.source, sizeof r.source, "%s", source);
    snprintf(r.plan_hash, sizeof r.plan_hash, "%s", run->plan.hash);
    cct_search_command_line(o->argc, o->argv, r.command, sizeof r.command);
    if ((st = cct_store_begin_run(run->store, &r, err)) != CCT_OK)
        goto fail;
    run->run_id = r.id;
    /* the links of a new run: measured by the launcher or given with --links-from */
    if (o->links_json && (st = cct_store_put_links(run->store, r.id, o->links_json, err)) != CCT_OK)
        goto fail;
    return CCT_OK;
fail:
    cct_store_close(run->store);
    run->store = NULL;
    cct_plan_destroy(&run->plan);
    return st;
}

cct_status cct_search_check_chunk(const cct_search_opts *o, const cct_store_fingerprint *fp,
                                  cct_error *err)
{
    if (!cct_space_forces_chunk(&o->space))
        return CCT_OK;
    int v = cct_nccl_version_parse(fp->nccl);
    if (cct_chunk_supported(v))
        return CCT_OK;
    char since[16];
    cct_nccl_version_format(CCT_CHUNK_SINCE_NCCL, since, sizeof since);
    if (v <= 0)
        return cct_error_set(err, CCT_EUNSUPPORTED,
                             "--chunk: the NCCL version is unknown ('%s'), and only NCCL %s or "
                             "newer (tuner v6) lets a tuner set the chunk size; use --chunk nccl",
                             fp->nccl, since);
    return cct_error_set(err, CCT_EUNSUPPORTED,
                         "--chunk: NCCL %s does not let a tuner set the chunk size (its tuner "
                         "ABI is v%d; getChunkSize came with v6 in NCCL %s); use --chunk nccl "
                         "or run with NCCL %s or newer",
                         fp->nccl, cct_tuner_abi_for_nccl(v), since, since);
}

bool cct_search_session_wanted(const cct_search_opts *o, const cct_plan *plan, size_t s,
                               bool ll128_allowed)
{
    return !(o->sched.adaptive && !o->bench_table && plan->sessions[s].unlock && !ll128_allowed);
}

cct_status cct_search_end(cct_search_run *run, int state, cct_error *err)
{
    cct_status st = CCT_OK;
    if (run->store)
        st = cct_store_finish_run(run->store, run->run_id, state, err);
    cct_store_close(run->store);
    run->store = NULL;
    cct_plan_destroy(&run->plan);
    return st;
}

uint64_t cct_session_buffsize(const cct_session *s, int proto)
{
    return proto == CCT_PROTO_SIMPLE  ? s->buffsize
           : proto == CCT_PROTO_LL    ? s->ll_buffsize
           : proto == CCT_PROTO_LL128 ? s->ll128_buffsize
                                      : 0;
}

void cct_search_print_plan(FILE *out, const cct_plan *plan, const cct_schedule_opts *sched)
{
    char b1[32], b2[32], dur[32];
    const cct_space *s = &plan->space;
    fprintf(out,
            "plan %s: %d ranks, %d nodes, %zu sessions, %zu configurations, %zu sizes (%s .. %s)\n",
            plan->hash, s->ranks, s->nodes, plan->n_sessions, plan->n_configs, plan->n_sizes,
            cct_format_bytes(plan->sizes[0], b1, sizeof b1),
            cct_format_bytes(plan->sizes[plan->n_sizes - 1], b2, sizeof b2));
    for (size_t i = 0; i < plan->n_sessions; i++) {
        const cct_session *ss = &plan->sessions[i];
        char b[CCT_NUM_PROTOS][32];
        const char *env[CCT_NUM_PROTOS], *val[CCT_NUM_PROTOS];
        for (int k = 0; k < CCT_NUM_PROTOS; k++) {
            int p = cct_buffsize_protos[k];
            uint64_t bytes = cct_session_buffsize(ss, p);
            env[k] = cct_proto_facts_of(p)->buffsize_env;
            val[k] = bytes ? cct_format_bytes(bytes, b[k], sizeof b[k]) : "default";
        }
        fprintf(out, "  session %zu: %s, %s=%s %s=%s %s=%s, %zu configurations\n", i + 1,
                ss->unlock     ? "LL128 forced through the plugin (NCCL_PROTO unlocks it)"
                : ss->baseline ? "NCCL's own choices and forced LL/Simple, interleaved"
                               : "forced LL/Simple through the plugin",
                env[0], val[0], env[1], val[1], env[2], val[2], ss->n_configs);
    }
    for (size_t i = 0; i < plan->n_sessions; i++)
        if (plan->sessions[i].unlock) {
            fprintf(out, "  (where the machine's fingerprint says NCCL enables LL128 by itself -- "
                         "NVLink from Volta on -- the LL128 sessions join the others)\n");
            break;
        }
    fprintf(out, "  sizes:");
    for (size_t i = 0; i < plan->n_sizes; i++)
        fprintf(out, " %s", cct_format_bytes(plan->sizes[i], b1, sizeof b1));
    fputc('\n', out);
    /* a rough model: 40 us per call plus 2 GB/s; the first session's real times replace it */
    cct_estimate e =
        cct_plan_estimate(plan, sched->warmup, sched->cycles, sched->cycle_us, 40.0, 2.0);
    fprintf(out,
            "  %zu points, about %zu NCCL calls; estimated %s (assuming 40 us + bytes / 2 GB/s "
            "per call; plus communicator start-up per session)\n",
            e.points, e.calls, cct_format_duration(e.seconds, dur, sizeof dur));
}

int cct_search_fail(cct_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cct_error_vat(err, CCT_EINVAL, NULL, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}
