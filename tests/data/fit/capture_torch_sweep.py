# Evidence capture for the fitter: time NCCL collectives through PyTorch with forced
# algorithm/protocol/channels, several rank processes sharing the one GPU (NCCL_HOSTID + MPS).
# Output CSV: coll,ranks,algo,proto,channels,align,bytes,n,median_us,p95_us,min_us,max_us,mean_us,cv
import os, sys, time, statistics, socket
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def worker(rank, world, port, env, coll, sizes, aligns, q):
    os.environ.update(env)
    os.environ["NCCL_HOSTID"] = "ccthost%d" % rank
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world, device_id=torch.device("cuda:0"))
    maxb = max(sizes)
    buf = torch.ones(maxb // 4 + 64, dtype=torch.float32, device="cuda")
    out = torch.empty(maxb // 4 + 64, dtype=torch.float32, device="cuda")
    rows = []
    for align in aligns:
        off = align // 4
        for nbytes in sizes:
            count = max(1, nbytes // 4)
            if coll == "allreduce":
                t = buf[off:off + count]
                op = lambda: dist.all_reduce(t)
            else:  # allgather: nbytes is the whole gathered buffer
                per = max(1, count // world)
                src = buf[off:off + per]
                dst = out[off:off + per * world]
                op = lambda: dist.all_gather_into_tensor(dst, src)
            for _ in range(3):
                op()
            torch.cuda.synchronize()
            # iterations per sample: ~2 ms
            t0 = time.perf_counter()
            op()
            torch.cuda.synchronize()
            one = time.perf_counter() - t0
            iters = int(max(1, min(40, 0.002 / max(one, 1e-6))))
            it = torch.tensor([iters], device="cuda")
            dist.all_reduce(it, op=dist.ReduceOp.MAX)
            iters = int(it.item())
            nsamp = 15 if nbytes <= (16 << 20) else 8
            samples = []
            for _ in range(nsamp):
                dist.barrier(device_ids=[0])
                s = torch.cuda.Event(enable_timing=True)
                e = torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(iters):
                    op()
                e.record()
                e.synchronize()
                samples.append(s.elapsed_time(e) * 1000.0 / iters)
            st = torch.tensor(samples, device="cuda")
            dist.all_reduce(st, op=dist.ReduceOp.MAX)
            samples = sorted(st.tolist())
            if rank == 0:
                n = len(samples)
                med = statistics.median(samples)
                p95 = samples[min(n - 1, int(round(0.95 * (n - 1))))]
                mean = statistics.fmean(samples)
                cv = statistics.pstdev(samples) / mean
                rows.append((align, nbytes, n, med, p95, samples[0], samples[-1], mean, cv))
    if rank == 0:
        q.put(rows)
    dist.destroy_process_group()


def main():
    outpath = sys.argv[1]
    sizes = [8 << i for i in range(0, 26)]  # 8 B .. 256 MiB
    plan = []
    A4 = [0, 4]
    for algo, proto, ch, al in [("default", "default", 0, [0]), ("Ring", "LL", 0, A4),
                                ("Ring", "LL128", 0, [0]), ("Ring", "Simple", 0, A4),
                                ("Tree", "LL", 0, [0]), ("Tree", "LL128", 0, [0]),
                                ("Tree", "Simple", 0, A4), ("Ring", "Simple", 1, [0]),
                                ("Ring", "Simple", 2, [0]), ("Tree", "LL", 1, [0])]:
        plan.append(("allreduce", 4, algo, proto, ch, al))
    for algo, proto in [("default", "default"), ("Ring", "LL"), ("Ring", "Simple"),
                        ("Tree", "LL"), ("Tree", "Simple")]:
        plan.append(("allreduce", 2, algo, proto, 0, [0]))
    for algo, proto in [("default", "default"), ("Ring", "LL"), ("Ring", "LL128"),
                        ("Ring", "Simple")]:
        plan.append(("allgather", 4, algo, proto, 0, [0]))
    with open(outpath, "w") as f:
        f.write("coll,ranks,algo,proto,channels,align,bytes,n,median_us,p95_us,min_us,max_us,mean_us,cv\n")
    ctx = mp.get_context("spawn")
    for coll, world, algo, proto, ch, aligns in plan:
        env = {}
        if algo != "default":
            env["NCCL_ALGO"] = algo
            env["NCCL_PROTO"] = proto
        if ch:
            env["NCCL_MIN_NCHANNELS"] = str(ch)
            env["NCCL_MAX_NCHANNELS"] = str(ch)
        q = ctx.Queue()
        port = free_port()
        t0 = time.time()
        procs = [ctx.Process(target=worker, args=(r, world, port, env, coll, sizes, aligns, q))
                 for r in range(world)]
        for p in procs:
            p.start()
        try:
            rows = q.get(timeout=240)
        except Exception as ex:
            print("FAILED", coll, world, algo, proto, ch, ex, flush=True)
            for p in procs:
                p.kill()
            continue
        for p in procs:
            p.join(60)
        with open(outpath, "a") as f:
            for r in rows:
                f.write("%s,%d,%s,%s,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f\n" %
                        ((coll, world, algo.lower(), proto.lower(), ch) + r))
        print("done %s %d %s/%s ch%d in %.1fs: %s" % (coll, world, algo, proto, ch, time.time() - t0,
              " ".join("%.0f" % r[3] for r in rows[::4])), flush=True)


if __name__ == "__main__":
    main()
