#!/usr/bin/env python3
"""Fail when the tracked tree grows past its budget (default 30 MB).

Every GPU run carries the whole working tree, and a clone should stay quick: recorded
stores are committed gzipped and plots as one image each (tests/data/h200/README.md,
tables/README.md).  Sums the sizes of the files git tracks (as they are in the working tree)
and prints the total and the five largest folders; exit 1 above the limit, 0 otherwise,
77 (skipped) outside a git checkout.
Usage: check-tree-size.py [--limit BYTES] [ROOT]  (ROOT: the checkout, default beside tools/).
"""
import argparse
import os
import subprocess
import sys


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if out.returncode != 0:
        return None
    return [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def main(argv):
    ap = argparse.ArgumentParser(description="fail when the tracked tree passes its budget")
    ap.add_argument("--limit", type=int, default=30 * 1000 * 1000, help="bytes (30 MB)")
    ap.add_argument("root", nargs="?",
                    default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args(argv[1:])
    files = tracked(args.root)
    if files is None:
        print("check-tree-size: %s is not a git checkout: skipped" % args.root)
        return 77
    total, folders = 0, {}
    for rel in files:
        try:
            size = os.lstat(os.path.join(args.root, rel)).st_size
        except FileNotFoundError:
            continue  # deleted in the working tree, not yet committed
        total += size
        top = "/".join(rel.split("/")[:2]) if "/" in rel else "."
        folders[top] = folders.get(top, 0) + size
    largest = sorted(folders.items(), key=lambda kv: -kv[1])[:5]
    print("tracked tree: %d files, %.1f MB (limit %.1f MB); largest: %s" % (
        len(files), total / 1e6, args.limit / 1e6,
        ", ".join("%s %.1f MB" % (k, v / 1e6) for k, v in largest)))
    if total > args.limit:
        print("check-tree-size: the tracked tree is %.1f MB, over its %.1f MB budget: gzip "
              "stores (gzip -9n), commit one image format per plot, remove superseded runs"
              % (total / 1e6, args.limit / 1e6), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
