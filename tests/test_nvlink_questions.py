#!/usr/bin/env python3
"""Tests of tools/nvlink_questions.py on the recorded H200 stores (suite 'replay').

The script's report is checked against SQL run here on the same store: the 1 GiB bus
bandwidth against the store's own point_summary view, every reported Ring crossover against
the fastest Ring protocol on either side, the Tree/LL128 verdict and a misalignment penalty
against the medians; the 2-GPU store (no 1 GiB point) must say so; bad input must give one
clear line on stderr and exit status 1 (2 for usage errors), never a traceback.

Run by meson (tests/meson.build) with CCT_TEST_SRCDIR set to this directory.
"""
import gzip
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

TESTS = os.environ.get("CCT_TEST_SRCDIR", os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
SCRIPT = os.path.join(ROOT, "tools", "nvlink_questions.py")
STORE4 = os.path.join(TESTS, "data", "h200", "run-2026-11-29d", "exhaustive-nvlink-4.db.gz")
STORE2 = os.path.join(TESTS, "data", "h200", "run-2026-11-29c", "coarse",
                      "exhaustive-nvlink-2.db.gz")
GIB, MIB = 1 << 30, 1 << 20
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": MIB, "GiB": GIB}


def run(*args, env=None):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True,
                       timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


def size_of(text):
    n, unit = text.split()
    return int(n) * UNITS[unit]


def section(report, heading):
    """The text of a '### heading' or '## heading' section, up to the next heading."""
    m = re.search(r"^#+ %s\n(.*?)(?=^#+ |\Z)" % re.escape(heading), report, re.M | re.S)
    return m.group(1) if m else None


def db():
    """The 4-GPU store, decompressed into a private file the connection keeps open."""
    fd, plain = tempfile.mkstemp(suffix=".db")
    with gzip.open(STORE4, "rb") as src, os.fdopen(fd, "wb") as dst:
        shutil.copyfileobj(src, dst)
    con = sqlite3.connect("file:%s?mode=ro&immutable=1" % plain, uri=True)
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    os.unlink(plain)
    return con


def base_median(con, coll, algo, proto, size, align=0):
    row = con.execute(
        "SELECT median_us FROM points WHERE coll = ? AND algo = ? AND proto = ? AND bytes = ? "
        "AND channels = 0 AND buffsize = 0 AND align = ? AND status = 'ok'",
        (coll, algo, proto, size, align)).fetchone()
    return row[0] if row else None


def fastest_ring_proto(con, coll, size):
    return con.execute(
        "SELECT proto FROM points WHERE coll = ? AND algo = 'ring' AND bytes = ? AND "
        "channels = 0 AND buffsize = 0 AND align = 0 AND status = 'ok' ORDER BY median_us "
        "LIMIT 1", (coll, size)).fetchone()[0]


class FourGpuReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rc, cls.out, cls.err = run(STORE4)
        cls.con = db()

    def test_exits_zero_with_every_section(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertEqual(self.err, "")
        for coll in ("broadcast", "reduce", "allgather", "reducescatter", "allreduce"):
            self.assertIsNotNone(section(self.out, coll), coll)
        for h in ("2. Allreduce", "3. Misalignment", "4. Bus bandwidth at 1 GiB", "5. Noise"):
            self.assertIn("## " + h, self.out)

    def test_busbw_at_1gib_matches_the_store_view(self):
        bw = section(self.out, "4. Bus bandwidth at 1 GiB")
        self.assertNotIn("no 1 GiB point", bw)
        for coll in ("allreduce", "allgather", "broadcast"):
            m = re.search(r"^\| %s \| Ring/Simple \| ([\d,.]+) \| ([\d.]+) \| ([\d.]+) \|$"
                          % coll, bw, re.M)
            self.assertIsNotNone(m, coll)
            want_us, want_busbw = self.con.execute(
                "SELECT median_us, busbw_gbps FROM point_summary WHERE coll = ? AND "
                "algo = 'ring' AND proto = 'simple' AND channels = 0 AND buffsize = 0 AND "
                "align = 0 AND bytes = ?", (coll, GIB)).fetchone()
            self.assertAlmostEqual(float(m.group(3)), want_busbw, delta=0.01 * want_busbw)
            self.assertAlmostEqual(float(m.group(1).replace(",", "")), want_us,
                                   delta=0.01 * want_us)
        # Allreduce on 4 ranks: busbw = 1.5 x algbw.
        m = re.search(r"^\| allreduce \| Ring/Simple \| [\d,.]+ \| ([\d.]+) \| ([\d.]+) \|$",
                      bw, re.M)
        self.assertAlmostEqual(float(m.group(2)) / float(m.group(1)), 1.5, delta=0.01)

    def test_every_reported_crossover_holds_in_the_store(self):
        found = 0
        for coll in ("broadcast", "reduce", "allgather", "reducescatter", "allreduce"):
            text = section(self.out, coll)
            for m in re.finditer(r"^- (LL|LL128|Simple) -> (LL|LL128|Simple) between "
                                 r"(\d+ \w+) and (\d+ \w+): at \3 \1 ([\d,.]+) µs vs \2 "
                                 r"([\d,.]+) µs", text, re.M):
                found += 1
                lo, hi = size_of(m.group(3)), size_of(m.group(4))
                self.assertLess(lo, hi)
                self.assertEqual(fastest_ring_proto(self.con, coll, lo), m.group(1).lower())
                self.assertEqual(fastest_ring_proto(self.con, coll, hi), m.group(2).lower())
                want = base_median(self.con, coll, "ring", m.group(1).lower(), lo)
                self.assertAlmostEqual(float(m.group(5).replace(",", "")), want, delta=0.06)
        self.assertGreaterEqual(found, 5)
        # The allreduce answer itself: LL at 1 KiB, Simple at 1 GiB, LL128 in between.
        self.assertRegex(section(self.out, "allreduce"),
                         r"Ring's fastest protocol: LL 1 KiB–[^,]+, LL128 [^,]+, Simple [^,]+"
                         r"–1 GiB\.")

    def test_tree_ll128_verdict_matches_the_medians(self):
        sizes = [r[0] for r in self.con.execute(
            "SELECT DISTINCT bytes FROM points WHERE coll = 'allreduce' ORDER BY bytes")]
        wins = 0
        for s in sizes:
            tree = base_median(self.con, "allreduce", "tree", "ll128", s)
            ring = min(base_median(self.con, "allreduce", "ring", p, s)
                       for p in ("ll", "ll128", "simple"))
            wins += tree < ring
        text = section(self.out, "2. Allreduce: does Tree/LL128 win a band?")
        if wins:
            self.assertIn("Tree/LL128 beats the best Ring protocol", text)
        else:
            self.assertIn("Tree/LL128 never beats the best Ring protocol", text)

    def test_misalignment_penalty_matches_the_medians(self):
        text = section(self.out, "3. Misalignment penalty (Ring, and Tree for allreduce)")
        m = re.search(r"^\| allgather \| Ring/Simple \| 64 MiB \| [\d,.]+ \| [\d,.]+ "
                      r"\(([+-][\d.]+) %\)", text, re.M)
        self.assertIsNotNone(m)
        aligned = base_median(self.con, "allgather", "ring", "simple", 64 * MIB)
        off4 = base_median(self.con, "allgather", "ring", "simple", 64 * MIB, align=4)
        self.assertAlmostEqual(float(m.group(1)), 100 * (off4 / aligned - 1), delta=0.06)
        self.assertIn("No misaligned point failed verification", text)

    def test_noise_paragraph_counts_samples(self):
        text = section(self.out, "5. Noise")
        n_min, n_max = self.con.execute(
            "SELECT min(n_samples), max(n_samples) FROM points WHERE status = 'ok'").fetchone()
        m = re.search(r"each the median of (\d+)–(\d+) samples", text)
        self.assertIsNotNone(m)
        self.assertGreaterEqual(int(m.group(1)), n_min)
        self.assertLessEqual(int(m.group(2)), n_max)
        self.assertIn("Noise floor", text)


class TwoGpuReport(unittest.TestCase):
    def test_no_1gib_point_is_said_not_crashed(self):
        rc, out, err = run(STORE2)
        self.assertEqual(rc, 0, err)
        self.assertIn("**The store has no 1 GiB point** (largest size measured: 64 MiB)", out)
        self.assertRegex(out, r"\| allreduce \| Ring/Simple \| [\d,.]+ \| [\d.]+ \| [\d.]+ \|")


class BadInput(unittest.TestCase):
    def assert_error(self, args, rc, *fragments, env=None):
        got_rc, out, err = run(*args, env=env)
        self.assertEqual(got_rc, rc, err)
        self.assertEqual(out, "")
        self.assertNotIn("Traceback", err)
        self.assertEqual(len(err.strip().splitlines()) if rc == 1 else 1, 1, err)
        for f in fragments:
            self.assertIn(f, err)

    def test_missing_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "nope.db")
            self.assert_error([path], 1, "store %s does not exist" % path)
            self.assertFalse(os.path.exists(path))

    def assert_error_for_schema(self, ddl, *fragments):
        """A SQLite store made by `ddl` alone is refused with exit 1 and the fragments."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "other.db")
            con = sqlite3.connect(path)
            con.execute(ddl)
            con.commit()
            con.close()
            self.assert_error([path], 1, *[f.replace("{path}", path) for f in fragments])

    def test_sqlite_without_points_table(self):
        self.assert_error_for_schema("CREATE TABLE notes (a TEXT)", "{path}",
                                     "without a 'points' table")

    def test_points_table_without_our_columns(self):
        self.assert_error_for_schema("CREATE TABLE points (id INTEGER, coll TEXT)",
                                     "lacks column(s)", "median_us")

    def test_truncated_gz(self):
        """A store cut short in its gzip stream: one clear line, no temporary file left."""
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(d, "cut.db.gz")
            with open(STORE2, "rb") as src, open(path, "wb") as dst:
                dst.write(src.read(4096))
            env = dict(os.environ, TMPDIR=tmp)
            self.assert_error([path], 1, "%s cannot be decompressed" % path, env=env)
            self.assertEqual(os.listdir(tmp), [])

    def test_not_sqlite(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "table.yaml")
            with open(path, "w") as f:
                f.write("version: 1\ncollectives: {}\n")
            self.assert_error([path], 1, "not an SQLite database")

    def test_ranks_not_in_store(self):
        self.assert_error([STORE4, "--ranks", "3"], 1, "--ranks 3", "it has 4")

    def test_usage_errors(self):
        self.assert_error([STORE4, "--ranks", "x"], 2, "--ranks")
        self.assert_error([STORE4, "--sizes", "1Q"], 2, "--sizes")


if __name__ == "__main__":
    unittest.main(verbosity=2)
