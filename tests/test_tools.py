#!/usr/bin/env python3
"""Tests of the scripts under tools/ that the README and CI run (suite 'unit').

tools/tune.sh, the README's main job, run from a copy of its folder on the build under test:
without a GPU it writes a valid table and PNG plots from the recorded H200 store into out/
beside tools/, and reuses the existing build (no dependency install).  tools/test-counts.py,
CI's last lines, on meson test logs made here: passes, failures and skips are counted, and
a build whose tests never ran counts one failure.  (tools/check-tree-size.py and
tools/check-layers.py have their own tests; tools/nvlink_questions.py too.)

Run by meson (tests/meson.build) with CCT_TEST_SRCDIR and CCT_TEST_BUILDDIR set.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TESTS = os.environ.get("CCT_TEST_SRCDIR", os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
BUILD = os.path.dirname(os.path.abspath(os.environ.get("CCT_TEST_BUILDDIR", "build/tests")))


class TuneScript(unittest.TestCase):
    def test_tune_without_gpu_writes_a_valid_table_and_plots(self):
        if not os.path.exists(os.path.join(BUILD, "src", "cli", "ccltune")):
            self.skipTest("no ccltune in %s" % BUILD)
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "tools"))
            for name in ("tune.sh", "install-deps.sh"):
                shutil.copy(os.path.join(ROOT, "tools", name), os.path.join(d, "tools", name))
            # install-deps.sh must not run on a configured build: make it fail if it does
            with open(os.path.join(d, "tools", "install-deps.sh"), "w") as f:
                f.write("echo install-deps ran >&2; exit 3\n")
            env = dict(os.environ, BUILD=BUILD)
            env.pop("CCLTUNE_RECORDED", None)
            args = []
            if subprocess.run("nvidia-smi -L", shell=True, capture_output=True).returncode == 0:
                # a GPU box would search for real: fit the recorded store as CPU boxes do
                args = ["--recorded", os.path.join(TESTS, "data", "h200", "run-2026-11-29c",
                                                   "coarse", "tune-4.db.gz")]
            p = subprocess.run(["bash", os.path.join(d, "tools", "tune.sh")] + args, env=env,
                               capture_output=True, text=True, timeout=300, cwd=TESTS)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("install-deps ran", p.stderr)
            self.assertIn("table: out/table.yaml", p.stdout)
            table = os.path.join(d, "out", "table.yaml")
            self.assertIn("%s: ok (" % "out/table.yaml", p.stdout)
            with open(table) as f:
                self.assertIn("collectives:", f.read())
            plots = os.listdir(os.path.join(d, "out", "plots"))
            self.assertTrue(any(n.endswith("-time.png") for n in plots), plots)
            self.assertIn("tune-4.db.gz", p.stderr)  # the recorded store it fitted


def write_log(build, results):
    os.makedirs(os.path.join(build, "meson-logs"))
    with open(os.path.join(build, "meson-logs", "testlog.json"), "w") as f:
        for r in results:
            f.write(json.dumps({"name": "t", "result": r}) + "\n")


class TestCounts(unittest.TestCase):
    def counts(self, *builds):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "test-counts.py")]
                           + list(builds), capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().splitlines()

    def test_results_over_several_builds(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            write_log(a, ["OK", "OK", "SKIP", "FAIL", "EXPECTEDFAIL"])
            write_log(b, ["OK", "TIMEOUT", "UNEXPECTEDPASS"])
            lines = self.counts(a, b)
            self.assertEqual(lines[-1], "4 passed, 3 failed")
            self.assertTrue(lines[-2].startswith("1 skipped"), lines)

    def test_a_build_that_never_tested_is_a_failure(self):
        with tempfile.TemporaryDirectory() as d:
            a = os.path.join(d, "a")
            write_log(a, ["OK"])
            lines = self.counts(a, os.path.join(d, "missing"))
            self.assertEqual(lines[-1], "1 passed, 1 failed")
            self.assertIn("no test log", lines[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
