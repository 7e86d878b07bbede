/*
 * cmd_search.c - `ccltune search`: measure NCCL collectives into the store.
 *
 * This file only picks the role of the process (see src/search/cct_search.h): a worker
 * started by a launcher, a replay of recorded measurements, a dry run, an MPI rank, or the
 * launcher on one machine.  Builds without CUDA/NCCL keep dry runs and replay.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cct_cli.h"
#include "cct_config.h"
#include "cct_search.h"
#include "cct_search_run.h"

int cct_cmd_search(int argc, char **argv)
{
    cct_search_opts opts;
    cct_error err;
    cct_error_clear(&err);
    bool help = false;
    if (cct_search_parse(argc, argv, &opts, &help, &err) != CCT_OK)
        return cct_cli_usage_error("search", "%s", err.msg);
    if (help) {
        cct_search_print_help(stdout);
        return CCT_EXIT_OK;
    }
    if (opts.n_sizes_from && !getenv("CCLTUNE_WORKER_RANK"))
        fprintf(stderr,
                "ccltune search: --sizes-from: %d ranks, %zu recorded (collective, size) "
                "pairs; %zu sizes off the grid measured exactly, %zu more (less GPU time) only "
                "through their grid neighbours\n",
                opts.ranks, opts.sizes_recorded, opts.space.n_extra_sizes, opts.sizes_dropped);
    if (opts.replay_path)
        return cct_cli_role_result("search", cct_search_replay(&opts, &err), &err);
    if (opts.dry_run) {
        int ranks = opts.ranks ? opts.ranks : (opts.ranks_per_gpu > 1 ? opts.ranks_per_gpu : 2);
        opts.space.ranks = ranks;
        opts.space.nodes = opts.ranks_per_gpu > 1 ? ranks : 1;
        cct_plan plan;
        if (cct_plan_build(&opts.space, &plan, &err) != CCT_OK)
            return cct_cli_usage_error("search", "%s", err.msg);
        cct_search_print_plan(stdout, &plan, &opts.sched);
        cct_plan_destroy(&plan);
        return CCT_EXIT_OK;
    }
#if CCT_HAVE_CUDA
    if (getenv("CCLTUNE_WORKER_RANK"))
        return cct_cli_role_result("search", cct_search_worker(&opts, &err), &err);
    if (cct_search_under_mpi())
        return cct_cli_role_result("search", cct_search_mpi(&opts, &err), &err);
    return cct_cli_role_result("search", cct_search_launch(&opts, &err), &err);
#else
    return cct_cli_fail("search", "this ccltune was built without CUDA and NCCL, so it cannot "
                                  "measure; --dry-run and --replay work, or rebuild where nvcc "
                                  "and NCCL are installed (meson -Dnccl_home=PATH)");
#endif
}
