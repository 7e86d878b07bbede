#!/usr/bin/env python3
"""Estimate a table's bench result from a recorded `ccltune bench` store, without a GPU.

Usage: tools/replay_bench.py TABLE.yaml BENCH.db [--twin-as-default]

A bench store holds, per collective and size, NCCL's default, the benched table's choice,
and every candidate configuration forced.  For another table that chooses among the same
candidates, its choice at each size was measured too (forced, in the same cycles): this
prints that table's would-be ratios against the default and the oracle.  It is an
estimate -- the plugin applying a rule and the same configuration forced through the
plugin are the same NCCL call, but the table was not loaded when the numbers were taken --
and it is labelled so wherever it is quoted.

A rule that names NCCL's own choice at a size (the algorithm and protocol the bench's default
point recorded, NCCL's channel count) is NCCL's default: where the bench did not force that
configuration (e.g. PAT, which the bench never forces), the default's own time stands for it.  With --twin-as-default it stands for it everywhere: the
plugin applying such a rule makes the very call NCCL makes by itself, so the forced twin's
difference from the default is only the bench's noise between two identical calls.
"""
import math
import sqlite3
import sys

import yaml

INF = float("inf")


def main(argv):
    table = yaml.safe_load(open(argv[1]))
    db = sqlite3.connect("file:%s?immutable=1" % argv[2], uri=True)
    twin_as_default = "--twin-as-default" in argv
    rows = []
    as_default = 0
    for coll, bytes_, dflt, nalgo, nproto in db.execute(
            "SELECT coll, bytes, median_us, nccl_algo, nccl_proto FROM points WHERE "
            "algo='default' AND status='ok' ORDER BY coll, bytes"):
        secs = table["collectives"].get(coll, [])
        sec = secs[0] if secs else None
        if sec is None:
            continue
        rule = next(r for r in sec["rules"]
                    if r["min_bytes"] <= bytes_ < (INF if r["max_bytes"] == "inf" else r["max_bytes"]))
        forced = db.execute(
            "SELECT median_us FROM points WHERE coll=? AND bytes=? AND algo=? AND proto=? AND "
            "channels=? AND status='ok'",
            (coll, bytes_, rule["algo"], rule["proto"], rule.get("channels", 0))).fetchone()
        if (forced is None or twin_as_default) and \
                (rule["algo"], rule["proto"], rule.get("channels", 0)) == (nalgo, nproto, 0):
            forced = (dflt,)
            as_default += 1
        oracle = db.execute(
            "SELECT MIN(median_us) FROM points WHERE coll=? AND bytes=? AND algo NOT IN "
            "('default','tuned') AND status='ok'", (coll, bytes_)).fetchone()[0]
        if forced is None or oracle is None:
            print("%s %d: the table's choice %s/%s/%s was not among the bench's candidates"
                  % (coll, bytes_, rule["algo"], rule["proto"], rule.get("channels", 0)))
            continue
        rows.append((coll, bytes_, dflt / forced[0], oracle / forced[0]))
    if not rows:
        print("no comparable sizes")
        return
    gm = math.exp(sum(math.log(r[2]) for r in rows) / len(rows))
    print("%d sizes: geometric-mean speed-up over NCCL's default %.3fx; worst vs default %.3f; "
          "worst vs oracle %.3f; below 0.98 x default: %d; below 0.98 x oracle: %d"
          % (len(rows), gm, min(r[2] for r in rows), min(r[3] for r in rows),
             sum(r[2] < 0.98 for r in rows), sum(r[3] < 0.98 for r in rows)))
    if as_default:
        print("(%d sizes: the rule is NCCL's own choice%s: the default's time)"
              % (as_default, "" if twin_as_default else ", not forced in the bench"))
    for coll, b, vd, vo in rows:
        if vd < 0.98 or vo < 0.98:
            print("  %s %d B: vs default %.3f, vs oracle %.3f" % (coll, b, vd, vo))


if __name__ == "__main__":
    main(sys.argv)
