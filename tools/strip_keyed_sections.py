#!/usr/bin/env python3
"""Write a copy of a ccltune table without its call-mode sections (pipe_ops / reg_buff keys).

Usage: tools/strip_keyed_sections.py IN.yaml OUT.yaml

The copy is what the table would be if the fitter had not keyed any section on numPipeOps or
regBuff: `ccltune bench --pipe-ops K` of both tables shows whether the keyed rules help
(tools/gpu/session.sh stage pipecmp).  Works on the text the deterministic writer produces:
a section is a list item "    - ranks:" under a collective; keyed ones carry "pipe_ops:".
"""
import sys


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    lines = open(argv[1]).read().split("\n")
    out, item, dropped = [], None, 0

    def flush():
        nonlocal item, dropped
        if item is not None:
            if any(l.startswith("      pipe_ops:") or l.startswith("      reg_buff:") for l in item):
                dropped += 1
            else:
                out.extend(item)
        item = None

    for line in lines:
        if line.startswith("    - "):
            flush()
            item = [line]
        elif item is not None and line.startswith("      "):
            item.append(line)
        else:
            flush()
            out.append(line)
    flush()
    open(argv[2], "w").write("\n".join(out))
    print(f"{argv[2]}: {dropped} keyed sections dropped")


if __name__ == "__main__":
    main(sys.argv)
