/*
 * cct_search.h - `ccltune search`: options, and the three roles a search process plays.
 *
 *  launcher  the process the user starts.  It opens the store, starts or resumes a run,
 *            and for each session of the plan starts one worker per rank (fork + exec of
 *            itself), relays NCCL's unique id from rank 0 to the others over socketpairs,
 *            and restarts a session whose worker reported a hang (the hang is stored, so
 *            the restarted session goes past it).
 *  mpi       under mpirun each MPI process is the launcher of its own rank's worker; the
 *            unique id travels by MPI_Bcast.  Workers never call MPI, so a session can be
 *            a fresh set of processes (NCCL reads buffer sizes once per process).
 *  worker    one rank of one session: binds to cores near its GPU, joins the communicator,
 *            runs the schedule, and (rank 0) commits points to the store.
 *
 * Workers are started with the launcher's own command line and learn their role from
 * CCLTUNE_WORKER_* environment variables, so every rank rebuilds the identical plan.
 */
#ifndef CCT_SEARCH_H
#define CCT_SEARCH_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cct_error.h"
#include "cct_schedule.h"
#include "cct_space.h"

typedef struct cct_search_opts {
    cct_space space;
    cct_schedule_opts sched;
    const char *store_path;
    int64_t resume_run; /* 0: start a new run */
    bool dry_run;
    int ranks; /* 0: GPUs x ranks_per_gpu */
    int ranks_per_gpu;
    const char *plugin_path; /* NULL: next to the executable */
    double timeout_s;
    int max_restarts;
    uint32_t seed;
    bool check_mps;
    const char *replay_path; /* recorded store to replay instead of a GPU (tests, CI) */
    const char *bench_table; /* ccltune bench: the table under test (absolute path) */
    uint64_t bench_sizes[64];
    size_t n_bench_sizes;
    const char *bench_report;     /* markdown report path; NULL: stdout */
    const char *bench_csv;        /* CSV report path; NULL: none */
    bool bench_rules_off;         /* --rules off: tuned = the table's constants only */
    const char *bench_compare[4]; /* --compare: tables judged in the same run (absolute) */
    size_t n_bench_compare;
    bool no_links;              /* --no-links: do not measure the link matrix */
    const char *links_from;     /* --links-from FILE: store this matrix with the run instead */
    char *links_json;           /* the matrix stored with a new run (cct_search_links_load) */
    const char *sizes_from[16]; /* --sizes-from: recordings (files or folders) */
    size_t n_sizes_from;
    size_t sizes_recorded; /* after parsing: (collective, size) pairs taken from them */
    size_t sizes_dropped;  /* exact sizes left out beyond the space's limit */
    int argc;
    char **argv;
} cct_search_opts;

/* The search's defaults; argc/argv are the command line handed to workers unchanged. */
void cct_search_opts_init(cct_search_opts *opts, int argc, char **argv);

/* Apply one search flag by its long name ("cycles", "colls") and value (NULL for a flag
 * without one), with the search's own rules; CCT_EINVAL with err naming the flag. */
cct_status cct_search_set_flag(cct_search_opts *opts, const char *name, const char *value,
                               cct_error *err);

/* --sizes-from (cct_search_sizes.c): set ranks, collectives and sizes from the recordings
 * in opts->sizes_from; sizes_given says --colls or a size flag was also given (an error).
 * Errors: the reader's FILE:OFFSET messages, or a rank count the recordings lack. */
cct_status cct_search_apply_sizes_from(cct_search_opts *opts, bool sizes_given, cct_error *err);
/* The same for a bench: ranks and collectives as above, bench_sizes the recorded sizes
 * (the 64 with the most GPU time; sizes_dropped the rest). */
cct_status cct_search_bench_sizes_from(cct_search_opts *opts, cct_error *err);

/* The search's getopt_long table (ends with a zero entry), for commands that pass flags on
 * to a search (tune). */
const struct option *cct_search_long_options(void);

/* Parse `ccltune search` flags (argv[0] is "search").  Returns CCT_EXIT_*-style codes via
 * status: CCT_OK, or CCT_EINVAL with err naming the flag.  *help is set for --help. */
cct_status cct_search_parse(int argc, char **argv, cct_search_opts *opts, bool *help,
                            cct_error *err);
void cct_search_print_help(FILE *out);

/* The plan every role builds from the options for ranks/nodes: a search plan, or a bench
 * plan when opts->bench_table is set. */
cct_status cct_search_build_plan(cct_search_opts *opts, int ranks, int nodes, cct_plan *plan,
                                 cct_error *err);

/* The roles; each returns a process exit status (cct_exit.h) and never prints an error:
 * when the status is not CCT_EXIT_OK and err->msg is not empty, the caller reports err
 * (CCT_EXIT_USAGE: the flags do not fit this machine).  Progress lines, notes and the
 * run id go through the command's message sink (cct_say.h); with none installed, nothing.
 * --dry-run is answered by the command before any of these is chosen. */
int cct_search_launch(cct_search_opts *opts, cct_error *err);
int cct_search_worker(cct_search_opts *opts, cct_error *err);
int cct_search_mpi(cct_search_opts *opts, cct_error *err);
int cct_search_replay(cct_search_opts *opts, cct_error *err);

/* The link matrix a new run stores (cct_search_links.c): --links-from's file, checked
 * (FILE:LINE:COL errors), into opts->links_json; nothing without the flag (a GPU launcher
 * then measures one with cct_search_links_probe).  The roles call
 * it before cct_search_begin, which stores opts->links_json with a new run (not a resumed
 * one); cct_search_links_free releases it. */
cct_status cct_search_links_load(cct_search_opts *opts, cct_error *err);
void cct_search_links_free(cct_search_opts *opts);
/* Measure the links for a new run on a GPU: run `EXE probe --links --json` for the topology
 * (exe: "/proc/self/exe" in ccltune) as a child, killed after timeout_s, and keep its checked
 * answer in opts->links_json.  CCT_EIO with the probe's own sentence when it fails. */
#define CCT_LINKS_PROBE_TIMEOUT_S 120.0
cct_status cct_search_links_probe(cct_search_opts *opts, const char *exe, int ranks, int nodes,
                                  double timeout_s, cct_error *err);

/* Fill err with the message and return code (a role's failure, for its caller to print). */
int cct_search_fail(cct_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* True when this process was started under mpirun (OpenMPI/PMIx/Slurm variables). */
bool cct_search_under_mpi(void);

/* Path of libnccl-tuner-ccltune.so: opts->plugin_path, $CCLTUNE_PLUGIN, or found from the
 * executable (build tree: src/cli/../plugin; installed: bindir/../libdir).  cct_plugin_path.c. */
cct_status cct_search_find_plugin(const char *explicit_path, char *out, size_t len, cct_error *err);

/* Exit status a worker uses to say "the watchdog fired; the hang is stored". */
#define CCT_WORKER_EXIT_HANG 3

#endif
