#!/usr/bin/env python3
"""Answer the hardware questions of an NVLink box (crossovers, Tree/LL128, misalignment, busbw, noise) from one measurement store, as a markdown report.

Usage: tools/nvlink_questions.py STORE [--ranks N] [--run ID] [--dtype T] [--in-place]
                                 [--sizes 1M,64M] [--bw-size 1G] [--tie 0.05]

The store is a ccltune search store (docs/store.md), ideally `ccltune search --exhaustive`
with `--align 0,4,8,12`, so that every configuration was measured at every size.  The report
answers, with medians read from the store (nothing is hard-coded):

  1. per collective, aligned (align 0), default buffer size (buffsize 0), NCCL's channel count
     (channels 0): the fastest algorithm/protocol at each size, where the fastest protocol of
     Ring changes (LL -> LL128 -> Simple) with the medians on either side, and the sizes where
     NCCL's own choice (algo 'default') is more than --tie away from the fastest;
  2. allreduce: whether Tree/LL128 wins a size band against the best Ring protocol;
  3. misalignment: each protocol at send/receive offsets 4/8/12 B against offset 0, at the
     --sizes (default 1 MiB and 64 MiB), and every misaligned point that failed verification
     (status corrupt) or that NCCL did not run (unsupported, hang, error);
  4. bus bandwidth at --bw-size (default 1 GiB) per protocol, with nccl-tests' conventions;
  5. the noise behind the numbers cited: cv and the spread of the raw samples.

Exit status: 0 report written; 1 the store cannot be read or holds nothing to report
(a clear message on stderr, no traceback); 2 usage error.
"""
import argparse
import gzip
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
COLLS = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce")
RING_PROTOS = ("ll", "ll128", "simple")
PROTO_NAME = {"ll": "LL", "ll128": "LL128", "simple": "Simple", "default": "default"}
ALGO_NAME = {"ring": "Ring", "tree": "Tree", "default": "default", "nvls": "NVLS",
             "nvls_tree": "NVLS-Tree", "collnet_direct": "CollNet-Direct",
             "collnet_chain": "CollNet-Chain", "pat": "PAT"}
MISALIGNED_OFFSETS = (4, 8, 12)


class StoreError(Exception):
    """An input problem: reported as one line on stderr with exit status 1."""


def fmt_size(n):
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n >= unit and n % unit == 0:
            return "%d %s" % (n // unit, name)
    return "%d B" % n


def parse_size(text):
    t = text.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": KIB, "M": MIB, "G": GIB}.get(t[-1:], 1)
    if mult != 1:
        t = t[:-1]
    try:
        value = int(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a size (e.g. 1M, 64M, 1G, 4096)" % text)
    if value <= 0:
        raise argparse.ArgumentTypeError("'%s' is not a positive size" % text)
    return value


def parse_sizes(text):
    return [parse_size(s) for s in text.split(",") if s.strip()]


def fmt_us(us):
    return "%s" % ("{:,.0f}".format(us) if us >= 1000 else "%.1f" % us)


def fmt_pct(x):
    return "%+.1f %%" % (100.0 * x)


def cfg_name(algo, proto):
    return "%s/%s" % (ALGO_NAME.get(algo, algo), PROTO_NAME.get(proto, proto))


class Store:
    """The points of one run, one rank count, one data type and placement, plain calls."""

    def __init__(self, path, ranks, run, dtype, in_place):
        self.path = path
        self.db = self._open(path)
        cols = self._columns("points")
        need = {"run_id", "coll", "algo", "proto", "channels", "buffsize", "align", "ranks",
                "dtype", "bytes", "in_place", "status", "median_us", "cv", "n_samples",
                "nccl_algo", "nccl_proto", "min_us", "max_us", "noisy"}
        missing = sorted(need - cols)
        if missing:
            raise StoreError("%s: table 'points' lacks column(s) %s: not a ccltune store "
                             "(docs/store.md)" % (path, ", ".join(missing)))
        self.has_samples = bool(self._columns("samples"))
        where, args = ["1 = 1"], []
        for col in ("ll_buffsize", "ll128_buffsize"):
            if col in cols:
                where.append("%s = 0" % col)
        if "pipe_ops" in cols:
            where.append("pipe_ops = 1")
        if "reg_buff" in cols:
            where.append("reg_buff = 0")
        self.run = self._choose("run_id", run, "--run", where, args)
        where.append("run_id = ?")
        args.append(self.run)
        self.ranks = self._choose("ranks", ranks, "--ranks", where, args)
        where.append("ranks = ?")
        args.append(self.ranks)
        self.dtype = self._choose("dtype", dtype, "--dtype", where, args)
        where.append("dtype = ?")
        args.append(self.dtype)
        where.append("in_place = ?")
        args.append(1 if in_place else 0)
        self.points = {}
        q = ("SELECT id, coll, algo, proto, channels, buffsize, align, bytes, status, median_us, "
             "cv, n_samples, nccl_algo, nccl_proto, min_us, max_us, noisy FROM points WHERE "
             + " AND ".join(where))
        for row in self.db.execute(q, args):
            p = dict(zip(("id", "coll", "algo", "proto", "channels", "buffsize", "align",
                          "bytes", "status", "median_us", "cv", "n_samples", "nccl_algo",
                          "nccl_proto", "min_us", "max_us", "noisy"), row))
            key = (p["coll"], p["algo"], p["proto"], p["channels"], p["buffsize"], p["align"],
                   p["bytes"])
            self.points[key] = p
        if not self.points:
            raise StoreError("%s: run %d holds no %s %s-place points for %d ranks"
                             % (path, self.run, self.dtype, "in" if in_place else "out-of",
                                self.ranks))
        self.sizes = sorted({k[6] for k in self.points})
        self.cited = {}
        self.cited_table = {}

    @staticmethod
    def _gunzip(path):
        """A committed store NAME.db.gz decompressed into a private temporary file."""
        fd, plain = tempfile.mkstemp(suffix=".db")
        try:
            with gzip.open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
                shutil.copyfileobj(src, dst)
        except (OSError, EOFError) as e:
            os.unlink(plain)
            raise StoreError("%s cannot be decompressed: %s" % (path, e))
        return plain

    @staticmethod
    def _open(path):
        if not os.path.exists(path):
            raise StoreError("store %s does not exist" % path)
        if os.path.isdir(path):
            raise StoreError("store %s is a directory, not a ccltune store" % path)
        if os.path.getsize(path) == 0:
            raise StoreError("%s is empty, not a ccltune store" % path)
        # Immutable (no locks, no -wal/-shm created) only when no writer left a WAL behind.
        mode = "ro" if os.path.exists(path + "-wal") else "ro&immutable=1"
        plain = Store._gunzip(path) if path.endswith(".gz") else path
        try:
            db = sqlite3.connect("file:%s?mode=%s" % (plain, mode), uri=True)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as e:
            raise StoreError("%s is not a ccltune store (not an SQLite database: %s)" % (path, e))
        finally:
            if plain != path:
                os.unlink(plain)  # the open connection keeps reading it
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "points" not in tables:
            raise StoreError("%s is an SQLite database without a 'points' table: not a ccltune "
                             "store (docs/store.md)" % path)
        return db

    def _columns(self, table):
        return {r[1] for r in self.db.execute("PRAGMA table_info(%s)" % table)}

    def _choose(self, col, wanted, flag, where, args):
        values = [r[0] for r in self.db.execute(
            "SELECT DISTINCT %s FROM points WHERE %s ORDER BY 1" % (col, " AND ".join(where)),
            args)]
        if not values:
            total = self.db.execute("SELECT count(*) FROM points").fetchone()[0]
            raise StoreError("%s holds no points%s" % (self.path, "" if not total else (
                " of plain calls (its %d points are all grouped calls (pipe_ops > 1), registered "
                "buffers or non-default LL/LL128 buffer sizes)" % total)))
        if wanted is None:
            if len(values) > 1:
                raise StoreError("%s holds several values of %s (%s): choose one with %s"
                                 % (self.path, col, ", ".join(map(str, values)), flag))
            return values[0]
        if wanted not in values:
            raise StoreError("%s %s: the store holds no such points (it has %s)"
                             % (flag, wanted, ", ".join(map(str, values))))
        return wanted

    def get(self, coll, algo, proto, size, channels=0, buffsize=0, align=0):
        """The point, or None if it was not measured."""
        return self.points.get((coll, algo, proto, channels, buffsize, align, size))

    def ok(self, coll, algo, proto, size, channels=0, buffsize=0, align=0):
        """The point if it was timed correctly (status ok with a median), else None."""
        p = self.get(coll, algo, proto, size, channels, buffsize, align)
        if p is None or p["status"] != "ok" or not p["median_us"]:
            return None
        return p

    def cite(self, p, answer=True):
        """Record that a number of this point appears in the report (for the noise paragraph):
        in an answer (crossovers, Tree, misalignment, bandwidth) or only in a per-size table."""
        if p is not None:
            (self.cited if answer else self.cited_table)[p["id"]] = p
        return p

    def configs(self, coll):
        """Forced algorithm/protocol pairs measured for this collective (not 'default')."""
        return sorted({(k[1], k[2]) for k in self.points if k[0] == coll and k[1] != "default"},
                      key=lambda ap: (ap[0] != "ring", ap[0], RING_PROTOS.index(ap[1])
                                      if ap[1] in RING_PROTOS else 9, ap[1]))

    def fastest(self, coll, size, configs, **kw):
        """The fastest ok point among configs at one size (base settings unless kw), or None."""
        best = None
        for algo, proto in configs:
            p = self.ok(coll, algo, proto, size, **kw)
            if p is not None and (best is None or p["median_us"] < best["median_us"]):
                best = p
        return best

    def fastest_any(self, coll, size, algo=None):
        """The fastest ok forced point at align 0 over every channel count and buffer size
        (of one algorithm if algo is given)."""
        best = None
        for k, p in self.points.items():
            if (k[0] == coll and k[1] != "default" and (algo is None or k[1] == algo)
                    and k[5] == 0 and k[6] == size
                    and p["status"] == "ok" and p["median_us"]
                    and (best is None or p["median_us"] < best["median_us"])):
                best = p
        return best

    def samples(self, point_id):
        if not self.has_samples:
            return []
        return [r[0] for r in self.db.execute(
            "SELECT time_us FROM samples WHERE point_id = ? ORDER BY seq", (point_id,))]


def bands(seq):
    """[(label, first_size, last_size)] for runs of equal labels in [(size, label)]."""
    out = []
    for size, label in seq:
        if out and out[-1][0] == label:
            out[-1][2] = size
        else:
            out.append([label, size, size])
    return out


def fmt_bands(seq):
    parts = []
    for label, lo, hi in bands(seq):
        parts.append("%s %s" % (label, fmt_size(lo) if lo == hi
                                else "%s–%s" % (fmt_size(lo), fmt_size(hi))))
    return ", ".join(parts)


def noise_note(a, b):
    """' (within noise)' when the margin between two medians is below the larger cv."""
    margin = abs(a["median_us"] - b["median_us"]) / min(a["median_us"], b["median_us"])
    cv = max(a["cv"] or 0.0, b["cv"] or 0.0)
    return " (within noise: margin %.1f %% < cv %.1f %%)" % (100 * margin, 100 * cv) \
        if margin < cv else ""


def point_cfg(p):
    s = cfg_name(p["algo"], p["proto"])
    extra = []
    if p["channels"]:
        extra.append("%d ch" % p["channels"])
    if p["buffsize"]:
        extra.append("buf %s" % fmt_size(p["buffsize"]))
    return s + (" (%s)" % ", ".join(extra) if extra else "")


def section_fastest(st, coll, tie, out):
    configs = st.configs(coll)
    if not configs:
        out.append("No forced configuration of %s was measured.\n" % coll)
        return
    out.append("| size | fastest | µs | runner-up | µs | fastest, any channels/buffsize | µs "
               "| NCCL default ran | µs | default vs fastest |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    fastest_seq, ring_seq, default_off = [], [], []
    for size in st.sizes:
        ranked = sorted((p for p in (st.ok(coll, a, pr, size) for a, pr in configs) if p),
                        key=lambda p: p["median_us"])
        if not ranked:
            out.append("| %s | (nothing ran) | | | | | | | | |" % fmt_size(size))
            continue
        best = st.cite(ranked[0], False)
        second = st.cite(ranked[1], False) if len(ranked) > 1 else None
        anyb = st.cite(st.fastest_any(coll, size), False)
        dflt = st.cite(st.ok(coll, "default", "default", size), False)
        fastest_seq.append((size, cfg_name(best["algo"], best["proto"])))
        ring = st.fastest(coll, size, [("ring", p) for p in RING_PROTOS])
        if ring is not None:
            ring_seq.append((size, ring))
        if dflt is not None:
            rel = dflt["median_us"] / best["median_us"] - 1
            ran = cfg_name(dflt["nccl_algo"] or "?", dflt["nccl_proto"] or "?")
            dcells = "%s | %s | %s" % (ran, fmt_us(dflt["median_us"]), fmt_pct(rel))
            if abs(rel) > tie:
                default_off.append((size, ran, dflt, best, rel))
                st.cite(dflt)
                st.cite(best)
        else:
            dcells = "(not measured) | | "
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            fmt_size(size), cfg_name(best["algo"], best["proto"]), fmt_us(best["median_us"]),
            cfg_name(second["algo"], second["proto"]) if second else "",
            fmt_us(second["median_us"]) if second else "",
            point_cfg(anyb), fmt_us(anyb["median_us"]), dcells))
    out.append("")
    out.append("Fastest at channels 0, buffsize 0, align 0: %s.\n" % fmt_bands(fastest_seq))
    if ring_seq:
        out.append("Ring's fastest protocol: %s.\n" % fmt_bands(
            [(s, PROTO_NAME[p["proto"]]) for s, p in ring_seq]))
        out.append("Ring protocol crossovers (medians on either side):\n")
        n = 0
        for (s0, p0), (s1, p1) in zip(ring_seq, ring_seq[1:]):
            if p0["proto"] == p1["proto"]:
                continue
            n += 1
            # The same two protocols on both sides of the change.
            a0 = st.cite(st.ok(coll, "ring", p1["proto"], s0))
            b1 = st.cite(st.ok(coll, "ring", p0["proto"], s1))
            st.cite(p0)
            st.cite(p1)
            left = ("at %s %s %s µs vs %s %s µs%s" % (
                fmt_size(s0), PROTO_NAME[p0["proto"]], fmt_us(p0["median_us"]),
                PROTO_NAME[p1["proto"]], fmt_us(a0["median_us"]), noise_note(p0, a0))
                if a0 else "at %s only %s ran" % (fmt_size(s0), PROTO_NAME[p0["proto"]]))
            right = ("at %s %s %s µs vs %s %s µs%s" % (
                fmt_size(s1), PROTO_NAME[p1["proto"]], fmt_us(p1["median_us"]),
                PROTO_NAME[p0["proto"]], fmt_us(b1["median_us"]), noise_note(p1, b1))
                if b1 else "at %s only %s ran" % (fmt_size(s1), PROTO_NAME[p1["proto"]]))
            out.append("- %s -> %s between %s and %s: %s; %s" % (
                PROTO_NAME[p0["proto"]], PROTO_NAME[p1["proto"]], fmt_size(s0), fmt_size(s1),
                left, right))
        if n == 0:
            out.append("- none: Ring/%s is the fastest Ring protocol at every size"
                       % PROTO_NAME[ring_seq[0][1]["proto"]])
        out.append("")
    if default_off:
        out.append("NCCL's default more than %.0f %% away from the fastest:\n" % (100 * tie))
        for size, ran, dflt, best, rel in default_off:
            out.append("- %s: default (ran %s) %s µs vs %s %s µs: default %s" % (
                fmt_size(size), ran, fmt_us(dflt["median_us"]),
                cfg_name(best["algo"], best["proto"]), fmt_us(best["median_us"]),
                "%.1f %% slower" % (100 * rel) if rel > 0 else "%.1f %% faster" % (-100 * rel)))
    else:
        out.append("NCCL's default is within %.0f %% of the fastest at every size measured."
                   % (100 * tie))
    out.append("")


def section_tree(st, out):
    coll = "allreduce"
    ring_cfgs = [("ring", p) for p in RING_PROTOS]
    rows = []
    for size in st.sizes:
        tree = st.ok(coll, "tree", "ll128", size)
        ring = st.fastest(coll, size, ring_cfgs)
        ring128 = st.ok(coll, "ring", "ll128", size)
        if tree and ring:
            rows.append((size, tree, ring, ring128))
    if not rows:
        out.append("Tree/LL128 and Ring were not both measured for allreduce: no answer.\n")
        return
    out.append("| size | Tree/LL128 µs | best Ring | µs | Tree/LL128 vs best Ring "
               "| Ring/LL128 µs | Tree/LL128 vs Ring/LL128 |")
    out.append("|---|---|---|---|---|---|---|")
    for size, tree, ring, ring128 in rows:
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            fmt_size(size), fmt_us(tree["median_us"]), cfg_name("ring", ring["proto"]),
            fmt_us(ring["median_us"]), fmt_pct(tree["median_us"] / ring["median_us"] - 1),
            fmt_us(ring128["median_us"]) if ring128 else "",
            fmt_pct(tree["median_us"] / ring128["median_us"] - 1) if ring128 else ""))
    out.append("")
    wins = [(s, "wins" if t["median_us"] < r["median_us"] else "loses")
            for s, t, r, _ in rows]
    won = [r for r in rows if r[1]["median_us"] < r[2]["median_us"]]
    if won:
        out.append("Tree/LL128 beats the best Ring protocol (channels 0, buffsize 0, align 0): %s."
                   % fmt_bands(wins))
        for size, tree, ring, _ in won:
            st.cite(tree)
            st.cite(ring)
            out.append("- %s: Tree/LL128 %s µs vs %s %s µs (%.1f %% faster)%s" % (
                fmt_size(size), fmt_us(tree["median_us"]), cfg_name("ring", ring["proto"]),
                fmt_us(ring["median_us"]), 100 * (1 - tree["median_us"] / ring["median_us"]),
                noise_note(tree, ring)))
    else:
        size, tree, ring, _ = min(rows, key=lambda r: r[1]["median_us"] / r[2]["median_us"])
        st.cite(tree)
        st.cite(ring)
        out.append("Tree/LL128 never beats the best Ring protocol (channels 0, buffsize 0, "
                   "align 0). Closest at %s: Tree/LL128 %s µs vs %s %s µs (%s)."
                   % (fmt_size(size), fmt_us(tree["median_us"]), cfg_name("ring", ring["proto"]),
                      fmt_us(ring["median_us"]),
                      fmt_pct(tree["median_us"] / ring["median_us"] - 1)))
    vs128 = [(s, "beats" if t["median_us"] < r["median_us"] else "loses to")
             for s, t, _, r in rows if r]
    if vs128:
        out.append("")
        out.append("Against Ring/LL128 alone, Tree/LL128 %s." % fmt_bands(vs128))
        # The largest margins either way, with numbers.
        diffs = [(t["median_us"] / r["median_us"] - 1, s, t, r) for s, t, _, r in rows if r]
        lo, hi = min(diffs, key=lambda d: d[0]), max(diffs, key=lambda d: d[0])
        for rel, s, t, r in (lo, hi):
            st.cite(t)
            st.cite(r)
        out.append("Its best margin: %s at %s (%s vs %s µs); its worst: %s at %s (%s vs %s µs)."
                   % (fmt_pct(lo[0]), fmt_size(lo[1]), fmt_us(lo[2]["median_us"]),
                      fmt_us(lo[3]["median_us"]), fmt_pct(hi[0]), fmt_size(hi[1]),
                      fmt_us(hi[2]["median_us"]), fmt_us(hi[3]["median_us"])))
    best_tree = [(s, st.fastest_any(coll, s, "tree"), st.fastest_any(coll, s, "ring"))
                 for s in st.sizes]
    tree_any_wins = [(s, t, r) for s, t, r in best_tree if t and r
                     and t["median_us"] < r["median_us"]]
    out.append("")
    if tree_any_wins:
        out.append("Over every protocol, channel count and buffer size (align 0), Tree beats "
                   "Ring at: %s." % ", ".join(
                       "%s (%s %s µs vs %s %s µs)" % (
                           fmt_size(s), point_cfg(st.cite(t)), fmt_us(t["median_us"]),
                           point_cfg(st.cite(r)), fmt_us(r["median_us"]))
                       for s, t, r in tree_any_wins))
    else:
        out.append("Over every protocol, channel count and buffer size (align 0), Tree never "
                   "beats Ring.")
    out.append("")


def section_misalignment(st, sizes, out):
    out.append("Penalty = median at the offset / median aligned − 1 (channels 0, buffsize 0); "
               "negative = faster than aligned.\n")
    out.append("| collective | config | size | aligned µs | +4 B | +8 B | +12 B |")
    out.append("|---|---|---|---|---|---|---|")
    worst = {}
    missing_sizes = [s for s in sizes if s not in st.sizes]
    for coll in COLLS:
        for algo, proto in st.configs(coll):
            for size in sizes:
                if size in missing_sizes:
                    continue
                base = st.get(coll, algo, proto, size)
                if base is None or not any(st.get(coll, algo, proto, size, align=o)
                                           for o in MISALIGNED_OFFSETS):
                    continue
                if base["status"] != "ok":
                    if all(st.get(coll, algo, proto, size, align=o) is None
                           or st.get(coll, algo, proto, size, align=o)["status"] == base["status"]
                           for o in MISALIGNED_OFFSETS):
                        continue  # e.g. Tree for broadcast: unsupported at every offset
                cells = []
                for o in MISALIGNED_OFFSETS:
                    p = st.get(coll, algo, proto, size, align=o)
                    if p is None:
                        cells.append("—")
                    elif p["status"] != "ok" or not p["median_us"]:
                        cells.append("**%s**" % p["status"])
                    elif base["status"] != "ok" or not base["median_us"]:
                        cells.append("%s µs" % fmt_us(p["median_us"]))
                    else:
                        st.cite(p)
                        rel = p["median_us"] / base["median_us"] - 1
                        cells.append("%s (%s)" % (fmt_us(p["median_us"]), fmt_pct(rel)))
                        k = (algo, proto, size)
                        if k not in worst or rel > worst[k][0]:
                            worst[k] = (rel, coll, o, p, base)
                out.append("| %s | %s | %s | %s | %s |" % (
                    coll, cfg_name(algo, proto), fmt_size(size),
                    fmt_us(st.cite(base)["median_us"]) if base["status"] == "ok"
                    else "**%s**" % base["status"], " | ".join(cells)))
    out.append("")
    for s in missing_sizes:
        out.append("The store has no %s point: no misalignment answer at that size." % fmt_size(s))
    if worst:
        out.append("Largest penalty per configuration and size (over collectives and offsets):\n")
        for (algo, proto, size), (rel, coll, o, p, base) in sorted(
                worst.items(), key=lambda kv: (kv[0][2], kv[0][0], RING_PROTOS.index(kv[0][1])
                                               if kv[0][1] in RING_PROTOS else 9)):
            out.append("- %s at %s: %s (%s, +%d B: %s vs %s µs)%s" % (
                cfg_name(algo, proto), fmt_size(size), fmt_pct(rel), coll, o,
                fmt_us(p["median_us"]), fmt_us(base["median_us"]), noise_note(p, base)))
        out.append("")
    bad = sorted((p for k, p in st.points.items()
                  if k[5] != 0 and p["status"] != "ok"
                  and not (st.get(k[0], k[1], k[2], k[6], k[3], k[4], 0) or {}).get("status")
                  == p["status"] == "unsupported"),
                 key=lambda p: (COLLS.index(p["coll"]) if p["coll"] in COLLS else 9,
                                p["algo"], p["proto"], p["align"], p["bytes"]))
    if bad:
        out.append("Misaligned points that failed or did not run (where the aligned one did):\n")
        for p in bad:
            out.append("- %s %s +%d B at %s: %s" % (p["coll"], point_cfg(p), p["align"],
                                                     fmt_size(p["bytes"]), p["status"]))
    else:
        n_mis = sum(1 for k in st.points if k[5] != 0)
        n_unsup = sum(1 for k, p in st.points.items() if k[5] != 0 and p["status"] != "ok")
        out.append("No misaligned point failed verification or was refused where its aligned "
                   "twin ran: %d misaligned points in the store, %d of them not ok, all of "
                   "configurations NCCL does not support at any alignment (e.g. Tree outside "
                   "allreduce)." % (n_mis, n_unsup))
    out.append("")


def section_bandwidth(st, bw_size, out):
    if bw_size in st.sizes:
        size = bw_size
    else:
        size = st.sizes[-1]
        out.append("**The store has no %s point** (largest size measured: %s); bus bandwidth "
                   "at %s instead.\n" % (fmt_size(bw_size), fmt_size(size), fmt_size(size)))
    n = st.ranks
    factor = {"allreduce": 2.0 * (n - 1) / n, "allgather": (n - 1.0) / n,
              "reducescatter": (n - 1.0) / n, "broadcast": 1.0, "reduce": 1.0}
    out.append("Convention (nccl-tests'): `bytes` is nccl-tests' \"size\" — the buffer NCCL's "
               "tuner sees; for allgather and reducescatter the whole gathered/scattered buffer "
               "(%d × the per-rank chunk), for the others the per-rank buffer. algbw = bytes / "
               "time (GB/s, 1e9 B/s); busbw = algbw × factor: allreduce 2(n−1)/n = %.3f, "
               "allgather and reducescatter (n−1)/n = %.3f, broadcast and reduce 1 (n = %d). "
               "Times are medians, channels 0, buffsize 0, align 0.\n"
               % (n, factor["allreduce"], factor["allgather"], n))
    out.append("| collective | config | µs | algbw GB/s | busbw GB/s |")
    out.append("|---|---|---|---|---|")
    for coll in COLLS:
        rows = [(cfg_name(a, p), st.ok(coll, a, p, size)) for a, p in st.configs(coll)]
        d = st.ok(coll, "default", "default", size)
        if d is not None:
            rows.append(("NCCL default (ran %s)" % cfg_name(d["nccl_algo"] or "?",
                                                            d["nccl_proto"] or "?"), d))
        anyb = st.fastest_any(coll, size)
        if anyb is not None and (anyb["channels"] or anyb["buffsize"]):
            rows.append(("fastest of any channels/buffsize: %s" % point_cfg(anyb), anyb))
        for name, p in rows:
            if p is None:
                continue
            st.cite(p)
            algbw = size / (p["median_us"] * 1e3)
            out.append("| %s | %s | %s | %.1f | %.1f |" % (
                coll, name, fmt_us(p["median_us"]), algbw, algbw * factor.get(coll, 1.0)))
    out.append("")


def noise_stats(st, points):
    """One sentence on the cv and the raw-sample spread of these points."""
    cvs = sorted(p["cv"] for p in points if p["cv"] is not None)
    ns = [p["n_samples"] for p in points]
    worst = max(points, key=lambda p: p["cv"] or 0)
    text = ("%d points, each the median of %d–%d samples; cv median %.1f %%, 90th percentile "
            "%.1f %%, max %.1f %% (%s %s at %s%s)" % (
                len(points), min(ns), max(ns), 100 * statistics.median(cvs),
                100 * cvs[int(0.9 * (len(cvs) - 1))], 100 * cvs[-1], worst["coll"],
                point_cfg(worst), fmt_size(worst["bytes"]),
                ", +%d B" % worst["align"] if worst["align"] else ""))
    spreads, spiked = [], 0
    for p in points:
        s = st.samples(p["id"])
        if len(s) >= 2 and p["median_us"]:
            spreads.append((max(s) - min(s)) / p["median_us"])
            spiked += max(s) > 1.5 * p["median_us"]
    if spreads:
        text += ("; (max − min) / median of the raw samples: median %.1f %%, max %.1f %%; "
                 "%d of them hold a sample above 1.5 × their median (a single slow cycle, which "
                 "the median ignores but the cv does not)" % (
                     100 * statistics.median(spreads), 100 * max(spreads), spiked))
    else:
        text += "; the store holds no raw samples for them"
    noisy = sum(1 for p in points if p["noisy"])
    return text + "; %d flagged noisy by the search" % noisy


def section_noise(st, out):
    answers = list(st.cited.values())
    tables = [p for i, p in st.cited_table.items() if i not in st.cited]
    out.append("Medians of few samples from one lease (one sample = the mean of one cycle of "
               "iterations; run %d, %d ranks, %s).\n" % (st.run, st.ranks, st.dtype))
    if answers:
        out.append("- Points behind the answers (crossovers, NCCL default gaps, Tree, "
                   "misalignment, bandwidth): %s." % noise_stats(st, answers))
        high = sorted((p for p in answers if (p["cv"] or 0) > 0.05), key=lambda p: -p["cv"])
        if high:
            out.append("  Of these, cv above 5 %%: %s." % ", ".join(
                "%s %s %s%s %.0f %%" % (p["coll"], point_cfg(p), fmt_size(p["bytes"]),
                                        " +%d B" % p["align"] if p["align"] else "",
                                        100 * p["cv"]) for p in high[:10])
                + (" and %d more" % (len(high) - 10) if len(high) > 10 else ""))
    if tables:
        out.append("- The other points of the per-size tables: %s." % noise_stats(st, tables))
    # NCCL's default and the forced configuration it ran are the same work measured as two
    # points in the same cycles: their gap is an empirical noise floor for any comparison.
    twins = []
    for k, d in st.points.items():
        if k[1] != "default" or k[3] or k[4] or k[5] or d["status"] != "ok" or not d["median_us"]:
            continue
        f = st.ok(k[0], d["nccl_algo"], d["nccl_proto"], k[6])
        if f is not None:
            twins.append((d["median_us"] / f["median_us"] - 1, k[0], k[6], d, f))
    if twins:
        gaps = sorted(abs(t[0]) for t in twins)
        w = max(twins, key=lambda t: abs(t[0]))
        out.append("- Noise floor: NCCL's default and the forced configuration it ran (same "
                   "algorithm and protocol, channels 0) are the same work measured as two "
                   "points. Over %d such pairs their medians differ by %.1f %% on average "
                   "(default minus forced), |gap| median %.1f %%, 90th percentile %.1f %%, max "
                   "%.1f %% (%s at %s: %s vs %s µs). Gaps below a few per cent are not "
                   "evidence." % (
                       len(twins), 100 * statistics.mean(t[0] for t in twins),
                       100 * statistics.median(gaps), 100 * gaps[int(0.9 * (len(gaps) - 1))],
                       100 * gaps[-1], w[1], fmt_size(w[2]), fmt_us(w[3]["median_us"]),
                       fmt_us(w[4]["median_us"])))
    out.append("")
    out.append("\"Within noise\" above marks a margin smaller than the larger cv of the two "
               "points compared (conservative: the cv of the samples, not the standard error "
               "of the median).")
    out.append("")


def report(st, sizes, bw_size, tie):
    out = []
    fp = st.db.execute("SELECT f.gpu, f.links, f.nccl, f.gpus_per_node, f.ranks_per_gpu, "
                       "r.command FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id "
                       "WHERE r.id = ?", (st.run,)).fetchone() if st._columns("runs") and \
        st._columns("fingerprints") else None
    out.append("# Hardware questions: %s, %d ranks\n" % (os.path.basename(st.path), st.ranks))
    if fp:
        out.append("Run %d: %s, links %s, NCCL %s, %d GPU(s) per node, %d rank(s) per GPU; "
                   "`%s`.\n" % (st.run, fp[0], fp[1], fp[2], fp[3], fp[4], fp[5]))
    out.append("Sizes measured: %d, %s–%s. All times are medians in µs of one collective "
               "(the slowest rank's), %s, out-of-place unless stated.\n"
               % (len(st.sizes), fmt_size(st.sizes[0]), fmt_size(st.sizes[-1]), st.dtype))
    out.append("## 1. Fastest configuration and Ring protocol crossovers\n")
    out.append("Aligned, NCCL's default buffer size, NCCL's channel count; the NCCL default is "
               "algo 'default' measured in the same cycles.\n")
    for coll in COLLS:
        if not any(k[0] == coll for k in st.points):
            continue
        out.append("### %s\n" % coll)
        section_fastest(st, coll, tie, out)
    out.append("## 2. Allreduce: does Tree/LL128 win a band?\n")
    section_tree(st, out)
    out.append("## 3. Misalignment penalty (Ring, and Tree for allreduce)\n")
    section_misalignment(st, sizes, out)
    out.append("## 4. Bus bandwidth at %s\n" % fmt_size(bw_size))
    section_bandwidth(st, bw_size, out)
    out.append("## 5. Noise\n")
    section_noise(st, out)
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="nvlink_questions.py",
        description="Answer an NVLink box's hardware questions (crossovers, Tree/LL128, "
                    "misalignment, busbw) from a ccltune store as markdown.")
    ap.add_argument("store", help="a ccltune measurement store (docs/store.md)")
    ap.add_argument("--ranks", type=int, help="rank count (default: the only one in the store)")
    ap.add_argument("--run", type=int, help="run id (default: the only run in the store)")
    ap.add_argument("--dtype", help="data type (default: the only one in the store)")
    ap.add_argument("--in-place", action="store_true", help="in-place points instead")
    ap.add_argument("--sizes", type=parse_sizes, default=[MIB, 64 * MIB],
                    help="sizes of the misalignment comparison (default 1M,64M)")
    ap.add_argument("--bw-size", type=parse_size, default=GIB,
                    help="size of the bus bandwidth table (default 1G)")
    ap.add_argument("--tie", type=float, default=0.05,
                    help="report NCCL's default where it is this far from the fastest "
                         "(default 0.05)")
    args = ap.parse_args(argv[1:])
    if args.ranks is not None and args.ranks < 1:
        ap.error("--ranks %d: must be at least 1" % args.ranks)
    if not 0 <= args.tie < 1:
        ap.error("--tie %g: must be in [0, 1)" % args.tie)
    try:
        st = Store(args.store, args.ranks, args.run, args.dtype, args.in_place)
        text = report(st, args.sizes, args.bw_size, args.tie)
    except StoreError as e:
        print("nvlink_questions.py: error: %s" % e, file=sys.stderr)
        return 1
    except sqlite3.Error as e:
        print("nvlink_questions.py: error: %s: %s" % (args.store, e), file=sys.stderr)
        return 1
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
