#!/usr/bin/env python3
"""docs/commands.md holds every command's --help as the built ccltune (CCT_CCLTUNE) prints it,
and tools/gen-commands-md.py --check notices a page that drifted from the binary."""
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "tools", "gen-commands-md.py")
doc = os.path.join(here, "..", "docs", "commands.md")


def check(exe, path):
    return subprocess.run([sys.executable, script, "--check", exe, path],
                          capture_output=True, text=True)


def main():
    exe = os.environ["CCT_CCLTUNE"]
    r = check(exe, doc)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    names = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
    listed = [l.split()[0] for l in names.split("Commands:\n")[1].splitlines()
              if l.startswith("  ") and not l.startswith("   ")]
    assert len(listed) >= 13, listed
    for name in listed:
        assert f"## `ccltune {name}`" in text, f"docs/commands.md lacks {name}"
    with tempfile.TemporaryDirectory() as d:
        stale = os.path.join(d, "commands.md")
        shutil.copy(doc, stale)
        with open(stale, "w", encoding="utf-8") as f:
            f.write(text.replace("usage: ccltune fit", "usage: ccltune fitt", 1))
        r = check(exe, stale)
        assert r.returncode == 1 and "differs from ccltune --help" in r.stdout, r.stdout
        # regenerating puts it right
        subprocess.run([sys.executable, script, exe, stale], check=True)
        assert check(exe, stale).returncode == 0
    print("ok")


if __name__ == "__main__":
    main()
