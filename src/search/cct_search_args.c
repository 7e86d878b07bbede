/*
 * cct_search_args.c - command-line parsing and help of `ccltune search`.
 *
 * Dimension flags are handed to cct_space_parse, which owns their syntax; this file owns
 * the measurement and launch flags, the options' defaults (cct_search_opts_init, shared by
 * bench) and the help text, which lists every dimension with its default so `--help` is the
 * reference a user needs at the machine.  Values are read by the one parser (cct_parse.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cct_parse.h"
#include "cct_search.h"

void cct_search_print_help(FILE *out)
{
    fprintf(
        out,
        "usage: ccltune search [DIMENSIONS] [MEASUREMENT] [LAUNCH] [--store DB] [--resume RUN]\n"
        "                      [--dry-run]\n"
        "\n"
        "Measure NCCL's collectives on this machine over a space of configurations and\n"
        "store every measurement, as it is taken, in a SQLite store. Every result is\n"
        "verified; a configuration that produces one wrong element is recorded as corrupt.\n"
        "Before the first session, one short-lived communicator in processes of its own logs\n"
        "NCCL's cost-model printout (NCCL_DEBUG=INFO, INIT,GRAPH,TUNING), stored with the run\n"
        "for ccltune calibrate/tune; the measuring processes keep your NCCL_DEBUG.\n"
        "\n"
        "Dimensions (comma-separated lists; defaults in brackets):\n"
        "  --colls LIST          collectives: allreduce,allgather,reducescatter,broadcast,\n"
        "                        reduce, or all [all]\n"
        "  --algos LIST          algorithms: tree,ring,collnet_direct,collnet_chain,nvls,\n"
        "                        nvls_tree,pat, or all [ring,tree,pat: PAT only for\n"
        "                        allgather/reducescatter with Simple at one rank per node,\n"
        "                        where NCCL offers it]; named ones NCCL does not offer\n"
        "                        here are recorded as unsupported\n"
        "  --protos LIST         protocols: ll,ll128,simple, or all [all]\n"
        "  --channels LIST       channel counts: 1..64, max (all the communicator has),\n"
        "                        nccl (NCCL's own count) [nccl,1,2,4,max]\n"
        "  --buffsize LIST       NCCL_BUFFSIZE values, or default [default]\n"
        "  --ll-buffsize LIST    NCCL_LL_BUFFSIZE values [default]\n"
        "  --ll128-buffsize LIST NCCL_LL128_BUFFSIZE values [default]\n"
        "  --align LIST          buffer offsets in bytes, as nccl-tests -u [0]\n"
        "  --dtype LIST          float, bf16 [float]\n"
        "  --pipe-ops LIST       group sizes: k collectives of one kind and size, each with\n"
        "                        its own buffers, in one ncclGroupStart/End; the time\n"
        "                        stored is the group's / k [1]\n"
        "  --regbuff LIST        no, yes: buffers registered with ncclCommRegister [no]\n"
        "  --chunk LIST          chunk sizes the plugin answers NCCL (e.g. 64K,256K), or\n"
        "                        nccl (NCCL's own); crossed with algorithm/protocol/\n"
        "                        channels at default buffers; NCCL caps a chunk to its\n"
        "                        buffers and rounds it to the protocol's grain, and the\n"
        "                        store records the chunk it ran; needs NCCL >= 2.30\n"
        "                        (tuner v6) [nccl]\n"
        "  --min-bytes SIZE      smallest message [1K]\n"
        "  --max-bytes SIZE      largest message [256M]\n"
        "  --factor F            size step [2]\n"
        "  --extra-sizes LIST    further sizes, e.g. 100000,3M [none]\n"
        "  --no-off-grid         drop the 1.5x midpoints of every other octave\n"
        "  --no-baseline         do not measure NCCL's default choice\n"
        "  --sizes-from REC      a recorded job (CCLTUNE_RECORD file, or a folder of *.rec;\n"
        "                        repeatable): its collectives, its rank count (--ranks picks\n"
        "                        one where it has several) and its sizes, exactly, plus the\n"
        "                        grid from one step below to one step above them; replaces\n"
        "                        --colls and the size flags\n"
        "  --cross MODE          factorial: buffer sizes, alignments and data types at\n"
        "                        NCCL's channel count only; full: the whole product\n"
        "                        [factorial]\n"
        "\n"
        "Measurement:\n"
        "  --warmup N            untimed calls per point [1]\n"
        "  --cycles N            timed cycles per point, order mirrored [4]\n"
        "  --cycle-us US         target length of one cycle [2000]\n"
        "  --max-iters N         iterations per cycle at most [200]\n"
        "  --cv X                re-measure points with a coefficient of variation above X\n"
        "                        [0.05]\n"
        "  --remeasure N         extra rounds for noisy points [2]\n"
        "  --confirm-cycles N    adaptive: where the fastest configuration beats NCCL's\n"
        "                        default by more than 3 %%, N more cycles for it, the\n"
        "                        default and its twin at NCCL's channel count, so the fit\n"
        "                        can tell a real gain from noise; 0: off [0]\n"
        "  --time-in-place       also time in-place calls (always verified) [off]\n"
        "  --timeout S           watchdog: a call that takes longer is a hang [60]\n"
        "  --seed N              verification pattern seed [1]\n"
        "\n"
        "Launch:\n"
        "  --ranks N             rank processes [GPUs x ranks-per-gpu]\n"
        "  --ranks-per-gpu N     rank processes per GPU; > 1 needs the MPS daemon and joins\n"
        "                        ranks over sockets (results are labelled so) [1]\n"
        "  --plugin PATH         libnccl-tuner-ccltune.so [beside ccltune]\n"
        "  --no-mps-check        do not insist on a running MPS daemon\n"
        "  --max-restarts N      restarts of a session after hangs [8]\n"
        "  Under mpirun, run one process per rank: the same flags apply.\n"
        "\n"
        "Store:\n"
        "  --store PATH          measurement store [measurements.db]\n"
        "  --resume RUN          continue run RUN; nothing stored is measured again\n"
        "  --dry-run             print the plan and the estimated time, measure nothing\n"
        "  --replay DB           answer from a recorded store instead of a GPU (testing)\n"
        "  --no-links            do not measure the link matrix (`ccltune probe --links`)\n"
        "                        that a run on a GPU stores before its first session\n"
        "  --links-from FILE     store this matrix (`probe --links --json`) with the run\n"
        "                        instead of measuring one (with --replay: the recorded box's;\n"
        "                        a replay stores none without it)\n"
        "\n"
        "Exit status: 0 the run is complete (its id is printed on stdout), 1 a measurement,\n"
        "the store or a worker failed (what was measured stays; --resume continues), 2 usage\n"
        "error or flags that do not fit this machine.\n");
}

enum {
    OPT_COLLS = 1000,
    OPT_ALGOS,
    OPT_PROTOS,
    OPT_CHANNELS,
    OPT_BUFFSIZE,
    OPT_LL_BUFFSIZE,
    OPT_LL128_BUFFSIZE,
    OPT_ALIGN,
    OPT_DTYPE,
    OPT_PIPE_OPS,
    OPT_REGBUFF,
    OPT_CHUNK,
    OPT_MIN_BYTES,
    OPT_MAX_BYTES,
    OPT_FACTOR,
    OPT_EXTRA,
    OPT_NO_OFF_GRID,
    OPT_NO_BASELINE,
    OPT_CROSS,
    OPT_SIZES_FROM,
    OPT_WARMUP,
    OPT_CYCLES,
    OPT_CYCLE_US,
    OPT_MAX_ITERS,
    OPT_CV,
    OPT_REMEASURE,
    OPT_CONFIRM,
    OPT_TIME_IN_PLACE,
    OPT_TIMEOUT,
    OPT_EXHAUSTIVE,
    OPT_PRUNE_MARGIN,
    OPT_SEED,
    OPT_RANKS,
    OPT_RANKS_PER_GPU,
    OPT_PLUGIN,
    OPT_NO_MPS_CHECK,
    OPT_MAX_RESTARTS,
    OPT_STORE,
    OPT_RESUME,
    OPT_DRY_RUN,
    OPT_REPLAY,
    OPT_NO_LINKS,
    OPT_LINKS_FROM,
    OPT_HELP
};

static const struct option long_opts[] = {
    {"colls", required_argument, NULL, OPT_COLLS},
    {"algos", required_argument, NULL, OPT_ALGOS},
    {"protos", required_argument, NULL, OPT_PROTOS},
    {"channels", required_argument, NULL, OPT_CHANNELS},
    {"buffsize", required_argument, NULL, OPT_BUFFSIZE},
    {"ll-buffsize", required_argument, NULL, OPT_LL_BUFFSIZE},
    {"ll128-buffsize", required_argument, NULL, OPT_LL128_BUFFSIZE},
    {"align", required_argument, NULL, OPT_ALIGN},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"pipe-ops", required_argument, NULL, OPT_PIPE_OPS},
    {"regbuff", required_argument, NULL, OPT_REGBUFF},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"min-bytes", required_argument, NULL, OPT_MIN_BYTES},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"factor", required_argument, NULL, OPT_FACTOR},
    {"extra-sizes", required_argument, NULL, OPT_EXTRA},
    {"no-off-grid", no_argument, NULL, OPT_NO_OFF_GRID},
    {"no-baseline", no_argument, NULL, OPT_NO_BASELINE},
    {"cross", required_argument, NULL, OPT_CROSS},
    {"sizes-from", required_argument, NULL, OPT_SIZES_FROM},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"cycles", required_argument, NULL, OPT_CYCLES},
    {"cycle-us", required_argument, NULL, OPT_CYCLE_US},
    {"max-iters", required_argument, NULL, OPT_MAX_ITERS},
    {"cv", required_argument, NULL, OPT_CV},
    {"remeasure", required_argument, NULL, OPT_REMEASURE},
    {"confirm-cycles", required_argument, NULL, OPT_CONFIRM},
    {"time-in-place", no_argument, NULL, OPT_TIME_IN_PLACE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"exhaustive", no_argument, NULL, OPT_EXHAUSTIVE},
    {"prune-margin", required_argument, NULL, OPT_PRUNE_MARGIN},
    {"seed", required_argument, NULL, OPT_SEED},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"ranks-per-gpu", required_argument, NULL, OPT_RANKS_PER_GPU},
    {"plugin", required_argument, NULL, OPT_PLUGIN},
    {"no-mps-check", no_argument, NULL, OPT_NO_MPS_CHECK},
    {"max-restarts", required_argument, NULL, OPT_MAX_RESTARTS},
    {"store", required_argument, NULL, OPT_STORE},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"replay", required_argument, NULL, OPT_REPLAY},
    {"no-links", no_argument, NULL, OPT_NO_LINKS},
    {"links-from", required_argument, NULL, OPT_LINKS_FROM},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

const struct option *cct_search_long_options(void)
{
    return long_opts;
}

void cct_search_opts_init(cct_search_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    cct_space_defaults(&o->space);
    cct_schedule_defaults(&o->sched);
    o->sched.adaptive = true; /* the search's default; --exhaustive for the full sweep */
    o->store_path = "measurements.db";
    o->ranks_per_gpu = 1;
    o->timeout_s = 60.0;
    o->max_restarts = 8;
    o->seed = 1;
    o->check_mps = true;
    o->argc = argc;
    o->argv = argv;
}

static cct_status set_int(const char *flag, const char *text, long min, long max, int *out,
                          cct_error *err)
{
    long v;
    cct_status st = cct_parse_flag_long(flag, text, min, max, &v, err);
    if (st == CCT_OK)
        *out = (int)v;
    return st;
}

/* Apply the flag whose getopt value is c; flag is its name with the dashes. */
static cct_status apply(cct_search_opts *o, int c, const char *flag, const char *arg,
                        cct_error *err)
{
    long v;
    cct_status st = CCT_OK;
    switch (c) {
    case OPT_COLLS:
    case OPT_ALGOS:
    case OPT_PROTOS:
    case OPT_CHANNELS:
    case OPT_BUFFSIZE:
    case OPT_LL_BUFFSIZE:
    case OPT_LL128_BUFFSIZE:
    case OPT_ALIGN:
    case OPT_DTYPE:
    case OPT_PIPE_OPS:
    case OPT_REGBUFF:
    case OPT_CHUNK:
    case OPT_MIN_BYTES:
    case OPT_MAX_BYTES:
    case OPT_FACTOR:
    case OPT_EXTRA:
    case OPT_CROSS:
        return cct_space_parse(&o->space, flag, arg, err);
    case OPT_SIZES_FROM:
        if (o->n_sizes_from == sizeof o->sizes_from / sizeof o->sizes_from[0])
            return cct_error_set(err, CCT_EINVAL, "%s: at most 16 times (name a folder)", flag);
        o->sizes_from[o->n_sizes_from++] = arg;
        return CCT_OK;
    case OPT_NO_OFF_GRID:
        o->space.off_grid = false;
        return CCT_OK;
    case OPT_NO_BASELINE:
        o->space.baseline = false;
        return CCT_OK;
    case OPT_WARMUP:
        return set_int(flag, arg, 0, 100, &o->sched.warmup, err);
    case OPT_CYCLES:
        return set_int(flag, arg, 2, 1000, &o->sched.cycles, err);
    case OPT_CYCLE_US:
        return cct_parse_flag_double(flag, arg, 1.0, 1e7, &o->sched.cycle_us, err);
    case OPT_MAX_ITERS:
        return set_int(flag, arg, 1, 100000, &o->sched.max_iters, err);
    case OPT_CV:
        return cct_parse_flag_double(flag, arg, 0.0, 10.0, &o->sched.cv_threshold, err);
    case OPT_REMEASURE:
        return set_int(flag, arg, 0, 20, &o->sched.max_remeasure, err);
    case OPT_CONFIRM:
        return set_int(flag, arg, 0, 100, &o->sched.confirm_cycles, err);
    case OPT_TIME_IN_PLACE:
        o->sched.time_in_place = true;
        return CCT_OK;
    case OPT_EXHAUSTIVE:
        o->sched.adaptive = false;
        return CCT_OK;
    case OPT_PRUNE_MARGIN:
        return cct_parse_flag_double(flag, arg, 0.0, 100.0, &o->sched.prune_margin, err);
    case OPT_TIMEOUT:
        return cct_parse_flag_double(flag, arg, 0.1, 86400.0, &o->timeout_s, err);
    case OPT_SEED:
        if ((st = cct_parse_flag_long(flag, arg, 0, 0x7fffffff, &v, err)) == CCT_OK)
            o->seed = (uint32_t)v;
        return st;
    case OPT_RANKS:
        return set_int(flag, arg, 1, 4096, &o->ranks, err);
    case OPT_RANKS_PER_GPU:
        return set_int(flag, arg, 1, 64, &o->ranks_per_gpu, err);
    case OPT_PLUGIN:
        o->plugin_path = arg;
        return CCT_OK;
    case OPT_NO_MPS_CHECK:
        o->check_mps = false;
        return CCT_OK;
    case OPT_MAX_RESTARTS:
        return set_int(flag, arg, 0, 1000, &o->max_restarts, err);
    case OPT_STORE:
        o->store_path = arg;
        return CCT_OK;
    case OPT_RESUME:
        if ((st = cct_parse_flag_long(flag, arg, 1, 0x7fffffffL, &v, err)) == CCT_OK)
            o->resume_run = v;
        return st;
    case OPT_DRY_RUN:
        o->dry_run = true;
        return CCT_OK;
    case OPT_REPLAY:
        o->replay_path = arg;
        return CCT_OK;
    case OPT_NO_LINKS:
        o->no_links = true;
        return CCT_OK;
    case OPT_LINKS_FROM:
        o->links_from = arg;
        return CCT_OK;
    default:
        return cct_error_set(err, CCT_EINVAL, "%s is not a search flag", flag);
    }
}

cct_status cct_search_set_flag(cct_search_opts *o, const char *name, const char *value,
                               cct_error *err)
{
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", name);
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (strcmp(lo->name, name) == 0 && lo->val != OPT_HELP)
            return apply(o, lo->val, flag, value, err);
    return cct_error_set(err, CCT_EINVAL, "unknown flag '%s'", flag);
}

cct_status cct_search_parse(int argc, char **argv, cct_search_opts *o, bool *help, cct_error *err)
{
    cct_search_opts_init(o, argc, argv);
    *help = false;
    optind = 1;
    opterr = 0;
    int c;
    cct_status st = CCT_OK;
    bool sizes_given = false;
    while (st == CCT_OK && (c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
        if (c == OPT_HELP) {
            *help = true;
            return CCT_OK;
        }
        if (c == ':' || c == '?') {
            st = cct_parse_flag_error(c, argv, err);
            break;
        }
        char flag[64] = "--?";
        for (const struct option *lo = long_opts; lo->name; lo++)
            if (lo->val == c)
                snprintf(flag, sizeof flag, "--%s", lo->name);
        sizes_given = sizes_given || c == OPT_COLLS || c == OPT_MIN_BYTES || c == OPT_MAX_BYTES ||
                      c == OPT_EXTRA;
        st = apply(o, c, flag, optarg, err);
    }
    if (st == CCT_OK && optind < argc)
        st = cct_error_set(err, CCT_EINVAL, "unexpected argument '%s'", argv[optind]);
    if (st == CCT_OK)
        st = cct_search_apply_sizes_from(o, sizes_given, err);
    return st;
}
