#!/usr/bin/env python3
"""Compare the decisions of two tables size by size, judged by an exhaustive store.

Usage: tools/compare_decisions.py ADAPTIVE.yaml EXHAUSTIVE.yaml EXHAUSTIVE.db [--tie 0.05]

For every section the two tables share and every message size NCCL's default was measured
at in the exhaustive store, the decision of each table is looked up.  They agree when they
name the same configuration (algorithm, protocol, channels), or when the exhaustive store
measured the adaptive table's choice at that size within the tie threshold of the
exhaustive table's choice.  This is issue 5's acceptance measure for the adaptive search.
"""
import sqlite3
import sys

import yaml

INF = float("inf")


def rule_at(rules, size):
    for r in rules:
        hi = INF if r["max_bytes"] == "inf" else r["max_bytes"]
        if r["min_bytes"] <= size < hi:
            return (r["algo"], r["proto"], r.get("channels", 0))
    return None


def main(argv):
    tie = 0.05
    if "--tie" in argv:
        tie = float(argv[argv.index("--tie") + 1])
    adaptive, exhaustive = (yaml.safe_load(open(p)) for p in argv[1:3])
    db = sqlite3.connect("file:%s?immutable=1" % argv[3], uri=True)
    total = agree = same = 0
    for coll, secs in exhaustive["collectives"].items():
        for se in secs:
            sa = next((s for s in adaptive["collectives"].get(coll, [])
                       if s["ranks"] == se["ranks"] and s["nodes"] == se["nodes"]), None)
            if sa is None:
                continue
            sizes = [r[0] for r in db.execute(
                "SELECT DISTINCT bytes FROM points WHERE coll=? AND algo='default' AND ranks=? "
                "AND align=0 AND buffsize=0 ORDER BY bytes", (coll, se["ranks"]))]
            for size in sizes:
                a, e = rule_at(sa["rules"], size), rule_at(se["rules"], size)
                total += 1
                if a == e:
                    agree += 1
                    same += 1
                    continue

                def t(cfg):
                    row = db.execute(
                        "SELECT median_us FROM points WHERE coll=? AND ranks=? AND bytes=? AND "
                        "algo=? AND proto=? AND channels=? AND align=0 AND buffsize=0 AND "
                        "ll_buffsize=0 AND ll128_buffsize=0 AND status='ok' AND in_place=0",
                        (coll, se["ranks"], size, cfg[0], cfg[1], cfg[2])).fetchone()
                    return row[0] if row else None

                ta, te = t(a), t(e)
                if ta is not None and te is not None and ta <= te * (1 + tie):
                    agree += 1
                else:
                    print("differs: %s %d ranks %d B: adaptive %s (%s us) vs exhaustive %s (%s us)"
                          % (coll, se["ranks"], size, a, ta, e, te))
    print("%d of %d size decisions agree (%.1f %%), %d identical, tie %.0f %%"
          % (agree, total, 100.0 * agree / max(total, 1), same, 100 * tie))


if __name__ == "__main__":
    main(sys.argv)
