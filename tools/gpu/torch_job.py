#!/usr/bin/env python3
"""A training-step-shaped collective loop for checking the plugin inside PyTorch.

Run one process per rank (tools/gpu/torch_job.sh starts them with RANK, WORLD_SIZE,
MASTER_ADDR/PORT and a per-rank NCCL_HOSTID on one GPU).  Each step does all_reduce,
all_gather and reduce_scatter over a fixed mix of sizes; rank 0 prints one line per size
with the mean time per call.  With JOB=loop1k instead: STEPS back-to-back 1 KiB
all_reduce calls, timed between two synchronisations, three times; rank 0 prints the
per-call time of each (the recording-overhead benchmark).  Usage: torch_job.py [STEPS]
"""
import os
import sys
import time

import torch
import torch.distributed as dist

SIZES = [4 << 10, 64 << 10, 256 << 10, 1 << 20, 8 << 20]  # bytes per call


def steps_loop(rank, world, steps):
    times = {}
    for size in SIZES:
        n = size // 4
        x = torch.ones(n, device="cuda")
        parts = [torch.empty(n // world, device="cuda") for _ in range(world)]
        out = torch.empty(n // world, device="cuda")
        for step in range(steps + 2):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            dist.all_gather(parts, out)
            dist.reduce_scatter(out, parts)
            torch.cuda.synchronize()
            if step >= 2:
                times[size] = times.get(size, 0.0) + (time.perf_counter() - t0)
    if rank == 0:
        for size in SIZES:
            print(f"step size {size} B: {times[size] / steps * 1e6:.1f} us per step (3 calls)")


def loop_1k(rank, steps):
    x = torch.ones(256, device="cuda")
    for _ in range(200):  # warm-up
        dist.all_reduce(x)
    for rep in range(3):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if rank == 0:
            print(f"loop1k rep {rep}: {dt / steps * 1e6:.3f} us per call")


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda:0"))
    if os.environ.get("JOB") == "loop1k":
        loop_1k(rank, steps)
    else:
        steps_loop(rank, world, steps)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
