#!/usr/bin/env python3
"""tools/check-layers.py: the real tree passes, and a folder including one above it fails."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "tools", "check-layers.py")


def run(src):
    return subprocess.run([sys.executable, script, src], capture_output=True, text=True)


def main():
    r = run(os.path.join(here, "..", "src"))
    assert r.returncode == 0, r.stdout + r.stderr
    with tempfile.TemporaryDirectory() as d:
        for folder, name, text in [("core", "cct_a.h", ""), ("fit", "cct_b.h", ""),
                                   ("core", "cct_a.c", '#include "cct_a.h"\n#include "cct_b.h"\n')]:
            os.makedirs(os.path.join(d, folder), exist_ok=True)
            with open(os.path.join(d, folder, name), "w") as f:
                f.write(text)
        r = run(d)
        assert r.returncode == 1, r.stdout
        assert "cct_a.c:2: src/core includes cct_b.h of src/fit" in r.stdout, r.stdout
        with open(os.path.join(d, "core", "cct_a.c"), "w") as f:
            f.write('#include "nowhere.h"\n')
        r = run(d)
        assert r.returncode == 1 and "not under src/" in r.stdout, r.stdout
    print("check_layers: 3 cases ok")


if __name__ == "__main__":
    main()
