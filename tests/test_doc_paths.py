#!/usr/bin/env python3
"""Every repository path the docs name exists in the tree.

Reads README.md, docs/*.md, tables/README.md and each README.md under tests/data; prints
FILE:LINE: PATH and fails for every path they name that git does not track (outside a git
checkout: that is not on disk).  A folder counts when a tracked file lies under it.
Checked: words (prose or `code`) starting with bench/ docs/ src/ tables/ tests/ tools/,
relative [link](...) targets, run folders of tests/data/h200 (`run-2026-11-29c/x.db.gz`),
file names and folders/ in `code` of a README under tests/data or tables/ (relative to it),
and in ``` blocks tests/ and tools/ paths and $VAR/ paths the block sets.  {a,b} expands.
Skipped on purpose: globs and placeholders (* <x> ... and parts such as NAME, TABLE.yaml,
callN), build outputs (build*/, out/, ninja and meson compile targets), tables/ src/ bench/
names inside ``` blocks (command outputs, examples) and NCCL's own source paths.
The same check on a small made-up tree must find exactly its broken paths, so it can fail.
Usage: test_doc_paths.py [ROOT]  (ROOT: the checkout, default the parent of tests/).
"""
import itertools
import os
import re
import subprocess
import sys
import tempfile

PREFIXES = ("bench/", "docs/", "src/", "tables/", "tests/", "tools/")
# Paths in NCCL's and nccl-tests' repositories that the docs cite as sources.
EXTERNAL = {"src/graph/tuning.cc", "src/init.cc", "src/common.cu", "src/util.cu",
            "plugins/tuner/example/scripts/"}
DATA_EXT = re.compile(r"\.(db|gz|log|txt|csv|md|yaml|json|png|svg|py|c|h|sh)$")
PLACEHOLDER = re.compile(r"[*?<>$]|\.\.\.")
# A part that stands for a name the reader picks: NAME, TABLE.yaml, cmd_NAME.c, callN.
CAPITALS = re.compile(r"^[A-Z][A-Z0-9_]*(\.[A-Za-z0-9.]+)?$|NAME|[a-z][A-Z]$")
WORD = re.compile(r"(?:[^\s`'\"(),;=|\[\]{}]|\{[^\s{}]*\})+")
RUN = re.compile(r"^run-\d{4}-\d\d-\d\d[a-z]?(/|$)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def tracked(root):
    """Tracked files (relative, '/') and every folder above them."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True)
    if out.returncode == 0 and out.stdout:
        files = [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    else:
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            rel = os.path.relpath(d, root).replace(os.sep, "/")
            files += [n if rel == "." else rel + "/" + n for n in names]
    have = set(files)
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            have.add("/".join(parts[:i]))
    return have


def docs(have):
    names = ["README.md", "tables/README.md"]
    names += sorted(f for f in have if re.fullmatch(r"docs/[^/]+\.md", f))
    names += sorted(f for f in have if f.startswith("tests/data/") and f.endswith("/README.md"))
    return [n for n in names if n in have]


def expand(word):
    """`a{1,2}b` -> a1b, a2b (every brace group)."""
    parts = re.split(r"\{([^{}]*)\}", word)
    fixed, choices = parts[0::2], [p.split(",") for p in parts[1::2]]
    for pick in itertools.product(*choices):
        yield "".join(a + b for a, b in itertools.zip_longest(fixed, pick, fillvalue=""))


def clean(word):
    word = word.rstrip(".:,;")
    word = re.sub(r"(:\d+)+$", "", word)  # FILE:LINE:COL
    while word.startswith("./"):
        word = word[2:]
    return word.split("#")[0]


def resolve(doc, word, in_code):
    """The tree path a word names, or None when it names none (or one not checked)."""
    if word in EXTERNAL:
        return None
    if word.startswith(PREFIXES):
        return word
    if RUN.match(word):
        return "tests/data/h200/" + word
    here = os.path.dirname(doc)
    if in_code and (here.startswith("tests/data") or here == "tables") and \
            (word.endswith("/") and len(word) > 1 or DATA_EXT.search(word)) and \
            re.match(r"^[\w-][\w.-]*(/[\w.+-]*)*$", word):
        return here + "/" + word
    return None


def skipped(path):
    parts = [p for p in path.split("/") if p]
    return (not parts or PLACEHOLDER.search(path) or path in EXTERNAL
            or any(CAPITALS.search(p) and p != "README.md" for p in parts)
            or parts[0].startswith("build") or parts[0] == "out")


def substitute(word, env):
    """$VAR/rest or ${VAR}/rest with VAR's value, for the variables a ``` block set."""
    m = re.match(r"^\$\{?([A-Za-z_]\w*)\}?(/.*)$", word)
    return env[m.group(1)] + m.group(2) if m and m.group(1) in env else word


def mentions(doc, text):
    """(line, path) for each path a doc names."""
    fenced, build_cmd, env = False, False, {}
    para = []  # (line number, text) of the prose paragraph being collected

    def prose(lines):
        joined = "\n".join(t for _, t in lines)
        starts = [n for n, t in lines for _ in range(len(t) + 1)]
        for m in re.finditer(r"`([^`]+)`|([^`]+)", joined):
            code, plain = m.group(1) is not None, m.group(1) or m.group(2)
            for w in WORD.finditer(plain):
                no = starts[m.start(1 if code else 2) + w.start()]
                yield no, w.group(0), code
        for m in LINK.finditer(joined):
            target = m.group(1)
            if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
                no = starts[m.start(1)]
                path = os.path.normpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
                yield no, "LINK:" + path.replace(os.sep, "/"), True

    def words():
        nonlocal fenced, build_cmd, para
        for no, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                yield from prose(para)
                para, fenced, build_cmd = [], not fenced, False
                env.clear()
                continue
            if not fenced:
                if line.strip():
                    para.append((no, line))
                else:
                    yield from prose(para)
                    para = []
                continue
            if not build_cmd:
                build_cmd = bool(re.search(r"\b(ninja|meson compile)\b", line))
            for name, value in re.findall(r"\b([A-Z]\w*)=([^\s;]+)", line):
                env[name] = substitute(value, env)
            if not build_cmd:
                for w in WORD.finditer(line):
                    word = substitute(w.group(0), env)
                    if word.startswith(("tests/", "tools/")) or \
                            w.group(0).startswith("$") and not word.startswith("$"):
                        yield no, word, True
            build_cmd = build_cmd and line.rstrip().endswith("\\")
        yield from prose(para)

    for no, word, in_code in words():
        if word.startswith("LINK:"):
            yield no, word[5:]
            continue
        for one in expand(clean(word)):
            path = resolve(doc, one, in_code)
            if path is not None and not skipped(path):
                yield no, path.rstrip("/")


def check(root):
    """'FILE:LINE: PATH' for each path a doc names that is not in the tree."""
    have = tracked(root)
    bad = []
    for doc in docs(have):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        for no, path in mentions(doc, text):
            line = f"{doc}:{no}: {path}"
            if path not in have and line not in bad:
                bad.append(line)
    return bad


def must_fail():
    """A made-up tree whose docs name paths that are there, absent, and skipped."""
    with tempfile.TemporaryDirectory() as d:
        for p in ["tools/here.py", "docs/a.md", "tests/data/h200/run-2026-01-01/x.db.gz",
                  "tests/data/h200/run-2026-01-01/README.md"]:
            os.makedirs(os.path.join(d, os.path.dirname(p)), exist_ok=True)
            with open(os.path.join(d, p), "w") as f:
                f.write("")
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write("Run `tools/here.py` and tools/gone.py; see [a](docs/a.md), [b](docs/b.md).\n"
                    "Skipped: `tests/data/NAME.db.gz`, `build/ccltune`, `out/run/*.yaml`,\n"
                    "`src/graph/tuning.cc`.  Stores `run-2026-01-01/{x,y}.db.gz` and the\n"
                    "multi-line `ccltune fit\ntests/gone.db`.\n\n"
                    "```sh\nD=tests/data/h200\nccltune fit $D/run-2026-01-01/x.db -o tables/t.yaml\n"
                    "ninja -C build tests/fuzz/target \\\n  tests/fuzz/other\n```\n")
        with open(os.path.join(d, "docs", "a.md"), "w") as f:
            f.write("[up](../README.md), [gone](../tools/gone.py), `tests/bad/x.yaml:3:4`\n")
        with open(os.path.join(d, "tests/data/h200/run-2026-01-01/README.md"), "w") as f:
            f.write("`x.db.gz`, `x.db`, `sub/`, `NAME.db.gz`, `A/B`, out.csv\n")
        got = sorted(check(d))
        want = sorted(["README.md:1: tools/gone.py", "README.md:1: docs/b.md",
                       "README.md:3: tests/data/h200/run-2026-01-01/y.db.gz",
                       "README.md:5: tests/gone.db",
                       "README.md:9: tests/data/h200/run-2026-01-01/x.db",
                       "docs/a.md:1: tools/gone.py", "docs/a.md:1: tests/bad/x.yaml",
                       "tests/data/h200/run-2026-01-01/README.md:1: "
                       "tests/data/h200/run-2026-01-01/x.db",
                       "tests/data/h200/run-2026-01-01/README.md:1: "
                       "tests/data/h200/run-2026-01-01/sub"])
        assert got == want, "\n".join(got)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = argv[1] if len(argv) > 1 else os.path.dirname(here)
    must_fail()
    bad = check(root)
    for b in bad:
        print(f"{b}: no such path in the tree")
    if bad:
        print(f"doc_paths: {len(bad)} paths the docs name are not in the tree")
        return 1
    print("doc_paths: every path the docs name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
