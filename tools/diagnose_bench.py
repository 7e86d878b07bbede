#!/usr/bin/env python3
"""Why did a benched table lose at a size?  Classify every loss of a `ccltune bench` store.

Usage: tools/diagnose_bench.py TABLE.yaml BENCH.db SEARCH.db [--limit 0.98] [--quiet] [--replay]

TABLE is the table the bench applied, BENCH the bench store (NCCL's default, the table
applied by the plugin -- algo 'tuned' -- and every candidate forced, in the same cycles),
SEARCH the store the table was fitted from.  Every size where tuned < limit x default
(speed: default time / tuned time) or tuned < limit x oracle is put in the first class
that fits, in this order:

  same-as-default   the plugin ran NCCL's own algorithm and protocol with NCCL's channel
                    count (the rule's channels 0): the two calls are the same configuration,
                    the difference is noise;
  not-significant   the samples of the two calls (tuned and default, or tuned and the
                    oracle's configuration) do not differ at the 5 % level (two-sided
                    Mann-Whitney U, normal approximation with tie correction);
  wrong-decision    the size is on the search grid, and the search store measured the
                    table's choice there slower than the rival (default or oracle
                    configuration) by more than 2 %: a fit/decision bug;
  off-grid          the size is not on the search grid: the band edge or the models'
                    interpolation put the choice there;
  session-noise     on the grid, and the search store measured the choice within 2 % of the
                    rival (or faster): the bench session disagrees with the search session.

--replay judges a table the bench did not apply (a replay estimate, as tools/replay_bench.py):
the table's choice at a size is the bench's forced point of that configuration instead of the
'tuned' point -- or NCCL's default point where the rule is NCCL's own choice (its algorithm and
protocol at channels 0) and the bench did not force it -- and same-as-default is a rule equal
to NCCL's own choice.

Read-only; deterministic.  Prints one line per loss and a count per class.
"""
import math
import sqlite3
import sys

import yaml

INF = float("inf")
CLASSES = ("same-as-default", "not-significant", "wrong-decision", "off-grid", "session-noise")


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    allv = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(allv)
    i = 0
    ties = 0.0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[k] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, allv) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    mu = n1 * n2 / 2.0
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (abs(u - mu) - 0.5) / math.sqrt(var)
    return math.erfc(max(z, 0.0) / math.sqrt(2.0))


def rule_at(section, size):
    for r in section["rules"]:
        hi = INF if r["max_bytes"] == "inf" else r["max_bytes"]
        if r["min_bytes"] <= size < hi:
            return r
    return None


class Store:
    def __init__(self, path):
        self.db = sqlite3.connect("file:%s?immutable=1" % path, uri=True)

    def point(self, coll, size, algo, proto, channels, buffsize=0):
        return self.db.execute(
            "SELECT id, median_us, nccl_algo, nccl_proto FROM points WHERE coll=? AND bytes=? "
            "AND algo=? AND proto=? AND channels=? AND buffsize=? AND ll_buffsize=0 AND "
            "ll128_buffsize=0 AND align=0 AND status='ok' ORDER BY in_place",
            (coll, size, algo, proto, channels, buffsize)).fetchone()

    def median(self, coll, size, algo, proto, channels, buffsize=0):
        row = self.db.execute(
            "SELECT AVG(median_us) FROM points WHERE coll=? AND bytes=? AND algo=? AND proto=? "
            "AND channels=? AND buffsize=? AND ll_buffsize=0 AND ll128_buffsize=0 AND align=0 "
            "AND status='ok'", (coll, size, algo, proto, channels, buffsize)).fetchone()
        return row[0]

    def samples(self, point_id):
        return [r[0] for r in self.db.execute(
            "SELECT time_us FROM samples WHERE point_id=? ORDER BY seq", (point_id,))]

    def grid(self, coll):
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT bytes FROM points WHERE coll=? AND algo<>'default' AND "
            "status='ok'", (coll,))}


def classify(bench, search, grid, coll, size, rule, rival, same_as_default, tuned):
    """rival: (algo, proto, channels) of the configuration the table lost to; tuned: the
    bench point that stands for the table's choice."""
    if same_as_default:
        return "same-as-default"
    other = bench.point(coll, size, *rival)
    if tuned and other and mann_whitney_p(bench.samples(tuned[0]),
                                          bench.samples(other[0])) >= 0.05:
        return "not-significant"
    if size not in grid:
        return "off-grid"
    mine = search.median(coll, size, rule["algo"], rule["proto"], rule.get("channels", 0))
    theirs = search.median(coll, size, *rival)
    if mine is not None and theirs is not None and mine > theirs * 1.02:
        return "wrong-decision"
    return "session-noise"


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    limit = float(argv[argv.index("--limit") + 1]) if "--limit" in argv else 0.98
    if "--limit" in argv:
        args.remove(argv[argv.index("--limit") + 1])
    quiet = "--quiet" in argv
    replay = "--replay" in argv
    if len(args) != 3:
        sys.exit(__doc__)
    table = yaml.safe_load(open(args[0]))
    bench, search = Store(args[1]), Store(args[2])
    counts = {"default": dict.fromkeys(CLASSES, 0), "oracle": dict.fromkeys(CLASSES, 0)}
    grids = {}
    rows = bench.db.execute(
        "SELECT coll, bytes, median_us, nccl_algo, nccl_proto FROM points WHERE algo='default' "
        "AND status='ok' ORDER BY coll, bytes").fetchall()
    for coll, size, t_def, d_algo, d_proto in rows:
        secs = table["collectives"].get(coll, [])
        if not secs:
            continue
        rule = rule_at(secs[0], size)
        if rule is None:
            continue
        choice = (rule["algo"], rule["proto"], rule.get("channels", 0))
        if not replay:
            tuned = bench.point(coll, size, "tuned", "tuned", 0)
        else:
            tuned = bench.point(coll, size, *choice)
            if tuned is None and choice == (d_algo, d_proto, 0):
                tuned = bench.point(coll, size, "default", "default", 0)
        if tuned is None:
            continue
        t_tuned = tuned[1]
        orc = bench.db.execute(
            "SELECT algo, proto, channels, median_us FROM points WHERE coll=? AND bytes=? AND "
            "algo NOT IN ('default','tuned') AND status='ok' AND buffsize=0 ORDER BY median_us, "
            "algo, proto, channels LIMIT 1", (coll, size)).fetchone()
        if coll not in grids:
            grids[coll] = search.grid(coll)
        same = (tuned[2], tuned[3]) == (d_algo, d_proto) and rule.get("channels", 0) == 0
        if replay:
            same = choice == (d_algo, d_proto, 0)
        for what, t_rival, rival in (("default", t_def, ("default", "default", 0)),
                                     ("oracle", orc[3] if orc else None,
                                      orc[:3] if orc else None)):
            if t_rival is None or t_rival / t_tuned >= limit:
                continue
            if what == "oracle" and tuple(orc[:3]) == (rule["algo"], rule["proto"],
                                                        rule.get("channels", 0)):
                cls = classify(bench, search, grids[coll], coll, size, rule,
                               choice if replay else ("tuned", "tuned", 0), False, tuned)
                cls = "not-significant" if cls != "not-significant" else cls
                # the oracle *is* the table's choice, forced: only noise separates them
            else:
                cls = classify(bench, search, grids[coll], coll, size, rule, rival,
                               same and what == "default", tuned)
            counts[what][cls] += 1
            if not quiet:
                print("%-13s %9d B vs %-7s %.3f  %-16s table %s/%s/%d, rival %s/%s/%s"
                      % (coll, size, what, t_rival / t_tuned, cls, rule["algo"], rule["proto"],
                         rule.get("channels", 0), rival[0], rival[1], rival[2]))
    for what in ("default", "oracle"):
        total = sum(counts[what].values())
        print("below %.2f x %s: %d (%s)" % (limit, what, total, ", ".join(
            "%s %d" % (c, counts[what][c]) for c in CLASSES)))


if __name__ == "__main__":
    main(sys.argv)
