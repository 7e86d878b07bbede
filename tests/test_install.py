#!/usr/bin/env python3
"""`meson install` of the build under test (suite 'unit'), staged with --destdir into a
temporary folder, then used as an operator would use it.

Checked: ccltune lands in bindir, libnccl-tuner-ccltune.so in libdir, the recorded store and
the example tables in share/ccltune, README.md and docs/commands.md in share/doc/ccltune; the
installed plugin loads BY NAME through LD_LIBRARY_PATH (what NCCL_TUNER_PLUGIN=ccltune makes
NCCL do) and exports ncclTunerPlugin_v5; the installed `ccltune --version` runs; and the
installed ccltune finds its own installed plugin (bindir/../libdir) while the build tree's
finds build/src/plugin (`ccltune doctor --json`, "own").

Run by meson (tests/meson.build) with CCT_TEST_BUILDDIR (the build's tests/ folder).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.dirname(os.path.abspath(os.environ.get("CCT_TEST_BUILDDIR", "build/tests")))
PLUGIN = "libnccl-tuner-ccltune.so"
LOAD = """
import ctypes, sys
lib = ctypes.CDLL("%s")
ctypes.c_void_p.in_dll(lib, "ncclTunerPlugin_v5")
with open("/proc/self/maps") as f:
    print([l.split()[-1] for l in f if "%s" in l][0])
""" % (PLUGIN, PLUGIN)


def sanitizer_preload(lib):
    """A sanitizer build's plugin needs its runtime first in the loading process: the
    LD_PRELOAD and ASAN_OPTIONS that let a Python interpreter dlopen it ({} otherwise)."""
    p = subprocess.run(["ldd", lib], capture_output=True, text=True, timeout=60)
    runtimes = [l.split("=>")[1].split()[0] for l in p.stdout.splitlines()
                if "=>" in l and any(r in l for r in ("libasan", "libtsan", "libubsan"))]
    if not runtimes:
        return {}
    return {"LD_PRELOAD": " ".join(runtimes), "ASAN_OPTIONS": "detect_leaks=0"}


def one(pattern):
    found = glob.glob(pattern, recursive=True)
    return found[0] if len(found) == 1 else None


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        meson = shutil.which("meson")
        if not meson or not os.path.exists(os.path.join(BUILD, "build.ninja")):
            raise unittest.SkipTest("meson and a configured build needed")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dest = cls.tmp.name
        p = subprocess.run([meson, "install", "-C", BUILD, "--no-rebuild", "--destdir", cls.dest],
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise AssertionError("meson install failed:\n" + p.stdout + p.stderr)
        cls.exe = one(os.path.join(cls.dest, "**", "bin", "ccltune"))
        cls.plugin = one(os.path.join(cls.dest, "**", PLUGIN))
        cls.share = one(os.path.join(cls.dest, "**", "share", "ccltune"))
        cls.doc = one(os.path.join(cls.dest, "**", "share", "doc", "ccltune"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def clean_env(self, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NCCL_", "CCLTUNE_", "LD_LIBRARY_PATH"))}
        env.update(extra)
        return env

    def test_layout(self):
        self.assertIsNotNone(self.exe, "no bin/ccltune under %s" % self.dest)
        self.assertIsNotNone(self.plugin, "no %s under %s" % (PLUGIN, self.dest))
        self.assertTrue(os.access(self.exe, os.X_OK))
        # bin/ and lib*/ are siblings under one prefix
        prefix = os.path.dirname(os.path.dirname(self.exe))
        self.assertTrue(self.plugin.startswith(os.path.join(prefix, "lib")), self.plugin)
        self.assertIsNotNone(self.share)
        self.assertTrue(os.path.exists(os.path.join(self.share, "tune-4.db.gz")))
        tables = glob.glob(os.path.join(self.share, "tables", "*.yaml"))
        self.assertGreaterEqual(len(tables), 6, tables)
        self.assertIsNotNone(self.doc)
        for name in ("README.md", "commands.md"):
            self.assertTrue(os.path.exists(os.path.join(self.doc, name)), name)

    def test_plugin_loads_by_name_from_the_library_path(self):
        libdir = os.path.dirname(self.plugin)
        preload = sanitizer_preload(self.plugin)
        p = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True,
                           timeout=60, env=self.clean_env(LD_LIBRARY_PATH=libdir, **preload))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), os.path.realpath(self.plugin))
        # without it the staged copy is out of reach (a system-wide install may answer)
        p = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True,
                           timeout=60, env=self.clean_env(**preload))
        self.assertNotIn(self.dest, p.stdout)

    def test_installed_ccltune_runs(self):
        p = subprocess.run([self.exe, "--version"], capture_output=True, text=True, timeout=60,
                           env=self.clean_env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^ccltune \d+\.\d+\.\d+\n$")
        table = sorted(glob.glob(os.path.join(self.share, "tables", "*.yaml")))[0]
        p = subprocess.run([self.exe, "validate", table], capture_output=True, text=True,
                           timeout=60, env=self.clean_env())
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def own_plugin(self, exe):
        p = subprocess.run([exe, "doctor", "--json"], capture_output=True, text=True, timeout=60,
                           env=self.clean_env())
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return json.loads(p.stdout)["plugin"]["own"]

    def test_each_ccltune_finds_its_own_plugin(self):
        self.assertEqual(self.own_plugin(self.exe), os.path.realpath(self.plugin))
        built = os.path.join(BUILD, "src", "cli", "ccltune")
        self.assertEqual(self.own_plugin(built),
                         os.path.realpath(os.path.join(BUILD, "src", "plugin", PLUGIN)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
