#!/usr/bin/env python3
"""Check that src/ folders include only the folders below them (docs/architecture.md).

Reads every #include "..." line under src/, finds the folder of the included header by
its name, and fails (exit 1, one line per offence as FILE:LINE: ...) when a folder
includes one it may not.  Usage: check-layers.py [SRC_DIR]  (default: src beside tools/).
"""
import os
import re
import sys

# What each folder may include besides itself: the stages of the pipeline, downward only.
ALLOWED = {
    "core": set(),
    "nccl": {"core"},
    "table": {"core", "nccl"},
    "import": {"core", "nccl", "table"},
    "kernels": set(),
    "plugin": {"core", "nccl", "table"},
    # the search drives the plugin's measurement mode through its control header
    "search": {"core", "nccl", "table", "import", "kernels", "plugin"},
    "fit": {"core", "nccl", "table", "import", "search"},
    "report": {"core", "nccl", "table", "import", "search", "fit"},
    "cli": {"core", "nccl", "table", "import", "kernels", "plugin", "search", "fit", "report"},
}
GENERATED = {"cct_config.h": "core"}  # written by meson into the build root
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
    home = dict(GENERATED)
    files = []
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        if folder not in ALLOWED:
            print(f"{path}: a folder that check-layers.py does not know: add it to ALLOWED")
            return 1
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h", ".cu")):
                files.append((folder, os.path.join(path, name)))
                if name.endswith(".h"):
                    if name in home:
                        print(f"{os.path.join(path, name)}: header name also in src/{home[name]}")
                        return 1
                    home[name] = folder
    bad = 0
    for folder, path in files:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = os.path.basename(m.group(1))
                target = home.get(name)
                if target is None:
                    print(f"{path}:{lineno}: includes {m.group(1)}, which is not under src/")
                    bad += 1
                elif target != folder and target not in ALLOWED[folder]:
                    print(f"{path}:{lineno}: src/{folder} includes {name} of src/{target}")
                    bad += 1
    print(f"check-layers: {len(files)} files, {bad} include(s) against the layers")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
