/*
 * cct_search_run.h - the bookkeeping every search role shares: building the plan for the
 * topology, starting or resuming a run in the store, printing the plan for --dry-run.
 *
 * Ownership: cct_search_begin() fills a cct_search_run that owns its plan and store handle;
 * cct_search_end() records the run's final state and releases both.
 */
#ifndef CCT_SEARCH_RUN_H
#define CCT_SEARCH_RUN_H

#include <stdio.h>

#include "cct_search.h"
#include "cct_store.h"

typedef struct cct_search_run {
    cct_plan plan;
    cct_store *store;
    int64_t run_id;
    bool resumed;
    bool ll128_allowed; /* the fingerprint's verdict (cct_search_begin) */
} cct_search_run;

/* Build the plan for ranks/nodes; open the store; start a run with fingerprint fp, or
 * resume opts->resume_run after checking it is the same plan. */
cct_status cct_search_begin(cct_search_opts *opts, int ranks, int nodes,
                            const cct_store_fingerprint *fp, const char *source,
                            cct_search_run *run, cct_error *err);
/* --chunk with a size on an NCCL whose tuner ABI has no getChunkSize (before 2.30, or a
 * version fp does not say): CCT_EUNSUPPORTED naming the version found, before anything is
 * measured; CCT_OK otherwise.  Callers answer it with CCT_EXIT_USAGE. */
cct_status cct_search_check_chunk(const cct_search_opts *opts, const cct_store_fingerprint *fp,
                                  cct_error *err);
/* Whether session s of the run is measured.  The adaptive search skips the sessions that
 * force LL128 (NCCL_PROTO unlocks it) where the fingerprint says NCCL does not enable LL128:
 * `ccltune fit` excludes every LL128 configuration there, so their times could decide
 * nothing.  `--exhaustive` measures them (corruption evidence, `fit --ll128 yes`). */
bool cct_search_session_wanted(const cct_search_opts *opts, const cct_plan *plan, size_t s,
                               bool ll128_allowed);

/* The session's buffer size for protocol `proto` (its *BUFFSIZE variable, cct_facts.h);
 * 0: NCCL's default. */
uint64_t cct_session_buffsize(const cct_session *s, int proto);

/* Record state (CCT_RUN_DONE / CCT_RUN_FAILED) and release. */
cct_status cct_search_end(cct_search_run *run, int state, cct_error *err);

/* --dry-run: sessions, configurations, sizes, points and estimated time. */
void cct_search_print_plan(FILE *out, const cct_plan *plan, const cct_schedule_opts *sched);

/* Fork a worker for rank `rank` of `session` (fork + exec of this binary with the
 * session's environment); sv is a socketpair whose sv[1] end the worker inherits.  Returns
 * the pid in the parent, -1 if fork failed.  Never returns in the child.  probe_dir non-NULL
 * starts the probe of cct_model_capture.h instead (session is ignored): a worker that only
 * sets up a communicator with NCCL's default environment and logs NCCL's model there. */
#include <sys/types.h>
pid_t cct_spawn_worker(const cct_search_opts *o, const cct_search_run *run, size_t session,
                       int rank, int ranks, int nodes, int device, const char *plugin, int sv[2],
                       const char *probe_dir);

/* Run every session with local workers, restarting sessions after hangs; a search (not a
 * bench) first captures NCCL's model printout into the store (cct_model_capture.h). */
int cct_search_run_sessions(const cct_search_opts *o, cct_search_run *run, int ranks, int nodes,
                            const char *plugin, int ngpus);

/* The command line as one string, for the run record. */
void cct_search_command_line(int argc, char **argv, char *buf, size_t len);

#endif
