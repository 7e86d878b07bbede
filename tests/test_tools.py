#!/usr/bin/env python3
"""Tests of the scripts under tools/ that the README and CI run (suite 'unit').

tools/tune.sh, the README's main job, run from a copy of its folder on the build under test,
as a user without root or sudo and with apt/dpkg stand-ins first on PATH: without a GPU it
writes a valid table and PNG plots from the recorded H200 store into out/ beside tools/,
names a missing package and goes on, never calls apt-get, and says where the table, the
plots and the plugin are.  tools/install-deps.sh with the same stand-ins: nothing runs when
every package is installed; missing ones are named without root or sudo, installed with
sudo or as root (CCLTUNE_AS_UID, CCLTUNE_SUDO).  `ccltune tune` without gnuplot on PATH:
a warning and the table, an error with --plots.  `ccltune probe --json` without a GPU:
JSON with the error.  tools/test-counts.py,
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


SHIMS = {
    # every package installed except those named in FAKE_MISSING
    "dpkg-query": """#!/bin/sh
for a; do pkg=$a; done
for p in $FAKE_MISSING; do [ "$p" = "$pkg" ] && exit 1; done
printf 'install ok installed'
""",
    "apt-cache": "#!/bin/sh\nexit 100\n",  # optional packages: not in the archive
    "apt-get": "#!/bin/sh\necho \"apt-get $*\" >> \"$APT_LOG\"\n",
    "fake-sudo": "#!/bin/sh\necho \"sudo $*\" >> \"$APT_LOG\"\nexec \"$@\"\n",
}


def shim_env(d, missing="", uid="1000", sudo=None):
    """PATH with apt/dpkg stand-ins first; APT_LOG records every apt-get and sudo call."""
    shims = os.path.join(d, "shims")
    os.makedirs(shims, exist_ok=True)
    for name, text in SHIMS.items():
        path = os.path.join(shims, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=shims + ":" + os.environ["PATH"], FAKE_MISSING=missing,
               APT_LOG=os.path.join(d, "apt.log"), CCLTUNE_AS_UID=uid,
               CCLTUNE_SUDO=sudo or os.path.join(d, "no-such-sudo"))
    return env


def apt_log(d):
    path = os.path.join(d, "apt.log")
    return open(path).read().splitlines() if os.path.exists(path) else []


class InstallDeps(unittest.TestCase):
    def run_script(self, env):
        return subprocess.run(["bash", os.path.join(ROOT, "tools", "install-deps.sh")], env=env,
                              capture_output=True, text=True, timeout=60)

    def test_nothing_runs_when_everything_is_installed(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.run_script(shim_env(d))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("every package is installed", p.stdout)
            self.assertEqual(apt_log(d), [])

    def test_missing_without_root_or_sudo_names_them(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.run_script(shim_env(d, missing="gnuplot-nox libgsl-dev"))
            self.assertEqual(p.returncode, 1)
            self.assertIn("missing packages: libgsl-dev gnuplot-nox", p.stderr)
            self.assertIn("not root and no sudo here", p.stderr)
            self.assertIn("apt-get install libgsl-dev gnuplot-nox", p.stderr)
            self.assertEqual(apt_log(d), [])

    def test_missing_with_sudo_installs_only_those(self):
        with tempfile.TemporaryDirectory() as d:
            env = shim_env(d, missing="gnuplot-nox")
            env["CCLTUNE_SUDO"] = "fake-sudo"
            p = self.run_script(env)
            self.assertEqual(p.returncode, 0, p.stderr)
            log = apt_log(d)
            self.assertEqual(log[0], "sudo apt-get update -qq")
            self.assertEqual(log[-1], "apt-get install -y -qq --no-install-recommends gnuplot-nox")
            self.assertIn("sudo apt-get install -y -qq --no-install-recommends gnuplot-nox", log)

    def test_missing_as_root_installs_without_sudo(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.run_script(shim_env(d, missing="sqlite3", uid="0"))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(apt_log(d), ["apt-get update -qq",
                                          "apt-get install -y -qq --no-install-recommends sqlite3"])


class TuneScript(unittest.TestCase):
    def test_tune_without_gpu_writes_a_valid_table_and_plots(self):
        if not os.path.exists(os.path.join(BUILD, "src", "cli", "ccltune")):
            self.skipTest("no ccltune in %s" % BUILD)
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "tools"))
            for name in ("tune.sh", "install-deps.sh"):
                shutil.copy(os.path.join(ROOT, "tools", name), os.path.join(d, "tools", name))
            # a user without root or sudo, one package the build does not need missing:
            # tune.sh names it and goes on, and never calls apt-get
            env = shim_env(d, missing="clang-format")
            env["BUILD"] = BUILD
            env.pop("CCLTUNE_RECORDED", None)
            args = []
            if subprocess.run("nvidia-smi -L", shell=True, capture_output=True).returncode == 0:
                # a GPU box would search for real: fit the recorded store as CPU boxes do
                args = ["--recorded", os.path.join(TESTS, "data", "h200", "run-2026-11-29c",
                                                   "coarse", "tune-4.db.gz")]
            p = subprocess.run(["bash", os.path.join(d, "tools", "tune.sh")] + args, env=env,
                               capture_output=True, text=True, timeout=300, cwd=TESTS)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(apt_log(d), [])
            self.assertIn("missing packages: clang-format", p.stderr)
            self.assertIn("trying the build anyway", p.stderr)
            self.assertIn("table: out/table.yaml", p.stdout)
            table = os.path.join(d, "out", "table.yaml")
            self.assertIn("%s: ok (" % "out/table.yaml", p.stdout)
            with open(table) as f:
                self.assertIn("collectives:", f.read())
            plots = os.listdir(os.path.join(d, "out", "plots"))
            self.assertTrue(any(n.endswith("-time.png") for n in plots), plots)
            self.assertIn("plots: out/plots/", p.stdout)
            plugin = os.path.join(BUILD, "src", "plugin", "libnccl-tuner-ccltune.so")
            self.assertIn("plugin: %s" % os.path.realpath(plugin), p.stdout)
            self.assertIn("never matches a real deployment", p.stdout)
            self.assertIn("tune-4.db.gz", p.stderr)  # the recorded store it fitted


class TuneWithoutGnuplot(unittest.TestCase):
    """gnuplot missing: a warning after the table is written; --plots makes it an error."""

    def test_warning_then_error_with_plots(self):
        exe = os.path.join(BUILD, "src", "cli", "ccltune")
        gzip = shutil.which("gzip")
        if not os.path.exists(exe) or not gzip:
            self.skipTest("ccltune and gzip needed")
        store = os.path.join(TESTS, "data", "h200", "run-2026-11-29c", "coarse", "tune-4.db.gz")
        with tempfile.TemporaryDirectory() as d:
            bindir = os.path.join(d, "bin")  # PATH with gzip (the store) and no gnuplot
            os.mkdir(bindir)
            os.symlink(gzip, os.path.join(bindir, "gzip"))
            env = dict(os.environ, PATH=bindir)
            base = [exe, "tune", "--recorded", store, "--store", os.path.join(d, "m.db")]
            p = subprocess.run(base + ["-o", os.path.join(d, "a.yaml")], env=env, cwd=d,
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("warning: no plots: gnuplot not found on PATH", p.stderr)
            self.assertTrue(os.path.exists(os.path.join(d, "a.yaml")))
            self.assertFalse(os.path.exists(os.path.join(d, "plots")))
            p = subprocess.run(base + ["-o", os.path.join(d, "b.yaml"), "--plots",
                                       os.path.join(d, "p")],
                               env=env, cwd=d, capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("error: plots: gnuplot not found on PATH", p.stderr)
            self.assertTrue(os.path.exists(os.path.join(d, "b.yaml")))


class ProbeJson(unittest.TestCase):
    """`ccltune probe --json` answers JSON on failure too (no GPU visible here)."""

    def test_failure_is_json(self):
        exe = os.path.join(BUILD, "src", "cli", "ccltune")
        if not os.path.exists(exe):
            self.skipTest("no ccltune in %s" % BUILD)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # no GPU, even on a GPU box
        p = subprocess.run([exe, "probe", "--json"], env=env, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 1, p.stdout)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["ok"], False)
        self.assertTrue(doc["error"])
        self.assertIn("ccltune probe: error: " + doc["error"], p.stderr)
        # without --json: the error only, nothing on stdout
        p = subprocess.run([exe, "probe"], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stdout), (1, ""))


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
