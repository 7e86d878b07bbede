#!/usr/bin/env python3
"""`ccltune doctor` on the CPU (suite 'unit'): one scenario per reason a table would not apply.

The GPU comes from the stand-in CUDA driver (tests/fake_cuda, put on LD_LIBRARY_PATH as
libcuda.so.1, its GPU named by CCT_FAKE_GPU_NAME / CCT_FAKE_GPU_CC), the job's NCCL from the
stand-in libnccl.so.2 (tests/fake_nccl, handed over with --nccl, its version by
CCT_FAKE_NCCL_VERSION), and the plugin is the built libnccl-tuner-ccltune.so, found by name
through LD_LIBRARY_PATH as NCCL finds it.  The tables are written here, with known rules, so
every blocked rule can be counted.  Checked: a matching table (exit 0), a table from another
GPU (exit 1, gpu-mismatch), NCCL_PROTO=Simple (exit 1, the LL and LL128 rules named), no
plugin on the library path (exit 1), an unsafe table file (exit 1, the plugin's rule), a
newer NCCL (tuner v6, nccl-mismatch), channel caps, --json, and the usage errors.

Run by meson (tests/meson.build) with CCT_CCLTUNE, CCT_PLUGIN, CCT_FAKE_CUDA, CCT_FAKE_NCCL.
"""
import json
import os
import subprocess
import tempfile
import unittest

CCLTUNE = os.environ.get("CCT_CCLTUNE", "")
PLUGIN = os.environ.get("CCT_PLUGIN", "")
FAKE_CUDA = os.environ.get("CCT_FAKE_CUDA", "")
FAKE_NCCL = os.environ.get("CCT_FAKE_NCCL", "")

# allreduce at 8 ranks: two LL rules, one LL128, two Simple; allgather: one LL, one Simple
BODY = """\
  allreduce:
    - ranks: 8
      nodes: 1
      rules:
        - {min_bytes: 0, max_bytes: 4KiB, algo: tree, proto: ll}
        - {min_bytes: 4KiB, max_bytes: 64KiB, algo: ring, proto: ll, channels: 2}
        - {min_bytes: 64KiB, max_bytes: 1MiB, algo: ring, proto: ll128}
        - {min_bytes: 1MiB, max_bytes: 16MiB, algo: tree, proto: simple}
        - {min_bytes: 16MiB, max_bytes: inf, algo: ring, proto: simple, channels: 16}
  allgather:
    - ranks: 8
      nodes: 1
      rules:
        - {min_bytes: 0, max_bytes: 32KiB, algo: ring, proto: ll}
        - {min_bytes: 32KiB, max_bytes: inf, algo: ring, proto: simple}
"""


def table_text(gpu="NVIDIA H200", cc="9.0", nccl="2.28.9", ll128=True, extra=""):
    return ("ccltune_table: 1\nprovenance:\n  tool: \"ccltune test\"\n"
            "  created: \"2026-11-29T14:00:00Z\"\n  source: \"hand-written\"\n"
            "fingerprint:\n  gpu: \"%s\"\n  cc: \"%s\"\n  gpus_per_node: 8\n  nodes: 1\n"
            "  ranks_per_gpu: 1\n  links: nvlink\n  nccl: \"%s\"\nll128:\n  allowed: %s\n"
            "collectives:\n%s%s" % (gpu, cc, nccl, "true" if ll128 else "false", BODY, extra))


# sections with pipe_ops / reg_buff keys, more specific than those of BODY
PIPE_OPS_1 = """\
    - ranks: 8
      nodes: 1
      pipe_ops: 1
      rules:
        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: simple}
"""
REG_BUFF = """\
    - ranks: 8
      nodes: 1
      reg_buff: true
      rules:
        - {min_bytes: 0, max_bytes: inf, algo: ring, proto: ll}
"""


class Doctor(unittest.TestCase):
    def setUp(self):
        for v in (CCLTUNE, PLUGIN, FAKE_CUDA, FAKE_NCCL):
            if not v or not os.path.exists(v):
                self.skipTest("built ccltune, plugin and stand-in libraries needed")
        self.tmp = tempfile.TemporaryDirectory()
        os.chmod(self.tmp.name, 0o700)
        self.table = self.write_table(table_text())

    def tearDown(self):
        self.tmp.cleanup()

    def write_table(self, text, name="box.yaml", mode=0o644):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def env(self, plugin_on_path=True, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NCCL_", "CCLTUNE_", "CCT_FAKE_"))}
        dirs = [os.path.dirname(FAKE_CUDA)]
        if plugin_on_path:
            dirs.append(os.path.dirname(PLUGIN))
        env["LD_LIBRARY_PATH"] = ":".join(dirs)
        env["NCCL_TUNER_PLUGIN"] = "ccltune"
        env["CCLTUNE_TABLE"] = self.table
        env["CCLTUNE_PLUGIN"] = PLUGIN  # this ccltune's own plugin, for the hint
        env.update(extra)
        return env

    def doctor(self, *args, env=None):
        env = env if env is not None else self.env()
        p = subprocess.run([CCLTUNE, "doctor", "--nccl", FAKE_NCCL, *args], env=env,
                           capture_output=True, text=True, timeout=60)
        return p

    def fails(self, out):
        return [l for l in out.splitlines() if l.startswith("fail ")]

    def test_matching_table_applies(self):
        p = self.doctor("--ranks", "8")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.fails(p.stdout), [])
        self.assertIn("NCCL 2.28.9 from %s" % os.path.realpath(FAKE_NCCL), p.stdout)
        self.assertIn("loads %s as ncclTunerPlugin_v5" % os.path.realpath(PLUGIN), p.stdout)
        self.assertIn("GPU 0: NVIDIA H200, compute capability 9.0", p.stdout)
        self.assertIn("ranks=8 nodes=1: match", p.stdout)
        self.assertIn("ranks=8 nodes=1: 2 sections, 7 rules apply", p.stdout)
        self.assertIn("verdict: the table will apply as written (7 rules at 1 shape)", p.stdout)
        # the plugin's own init line, from a real context
        self.assertIn("ccltune: init comm", p.stdout)

    def test_table_from_another_gpu(self):
        p = self.doctor(env=self.env(CCT_FAKE_GPU_NAME="NVIDIA A100-SXM4-80GB",
                                     CCT_FAKE_GPU_CC="80"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("fingerprint", fails[0])
        self.assertIn("gpu-mismatch", fails[0])
        self.assertIn("NVIDIA A100-SXM4-80GB", fails[0])
        self.assertIn("will NOT apply", p.stdout)

    def test_nccl_proto_simple_names_the_ll_rules(self):
        p = self.doctor(env=self.env(NCCL_PROTO="Simple"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        # three LL and one LL128 rule; the Simple ones still apply
        self.assertIn("4 rules blocked by NCCL_ALGO/NCCL_PROTO", fails[0])
        for rule in ("allreduce ranks=8 nodes=1 [0 B, 4 KiB) tree/ll",
                     "allreduce ranks=8 nodes=1 [4 KiB, 64 KiB) ring/ll",
                     "allreduce ranks=8 nodes=1 [64 KiB, 1 MiB) ring/ll128",
                     "allgather ranks=8 nodes=1 [0 B, 32 KiB) ring/ll"):
            self.assertIn(rule, fails[0])
        self.assertNotIn("simple", fails[0])
        self.assertIn("warn env         NCCL_PROTO=Simple", p.stdout)

    def test_a_shadowed_section_is_judged_on_the_calls_it_serves(self):
        # a pipe_ops: 1 section takes single calls; BODY's allreduce section still serves
        # grouped ones, so its LL rules are blocked all the same
        text = table_text().replace("  allgather:\n", PIPE_OPS_1 + "  allgather:\n")
        self.table = self.write_table(text, "shadow.yaml")
        p = self.doctor(env=self.env(NCCL_PROTO="Simple"))
        self.assertEqual(p.returncode, 1, p.stdout)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("4 rules blocked by NCCL_ALGO/NCCL_PROTO", fails[0])
        self.assertIn("allreduce ranks=8 nodes=1 [0 B, 4 KiB) tree/ll", fails[0])

    def test_reg_buff_section_unused_before_tuner_v4(self):
        extra = REG_BUFF.replace("    - ranks", "  reducescatter:\n    - ranks", 1)
        self.table = self.write_table(table_text(nccl="2.23.4", extra=extra), "v3.yaml")
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="22304"))
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("as ncclTunerPlugin_v3", p.stdout)
        self.assertIn("reducescatter ranks=8 nodes=1 reg_buff=1: no call reaches it with tuner "
                      "v3", p.stdout)
        self.assertIn("its 1 rule is never used", p.stdout)
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="22304", NCCL_PROTO="Simple"))
        # the unreachable LL rule is not counted as blocked: it never runs
        self.assertIn("4 rules blocked by NCCL_ALGO/NCCL_PROTO", self.fails(p.stdout)[0])

    def test_ll128_blocked_by_the_table_verdict(self):
        self.table = self.write_table(table_text(ll128=False), "no-ll128.yaml")
        p = self.doctor()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("1 rule on LL128, which is not allowed here", fails[0])
        self.assertIn("[64 KiB, 1 MiB) ring/ll128", fails[0])

    def test_no_plugin_on_the_library_path(self):
        p = self.doctor(env=self.env(plugin_on_path=False))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("plugin", fails[0])
        self.assertIn("would try ccltune libnccl-tuner-ccltune.so and find none", fails[0])
        # the hint names this ccltune's plugin
        self.assertIn("NCCL_TUNER_PLUGIN=%s" % os.path.realpath(PLUGIN), fails[0])
        # with the plugin named by path it loads again
        p = self.doctor(env=self.env(plugin_on_path=False, NCCL_TUNER_PLUGIN=PLUGIN))
        self.assertEqual(p.returncode, 0, p.stdout)
        p = self.doctor(env=self.env(NCCL_TUNER_PLUGIN="none"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("NCCL_TUNER_PLUGIN=none", self.fails(p.stdout)[0])

    def test_unsafe_table_file(self):
        os.chmod(self.table, 0o666)
        p = self.doctor()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("the plugin refuses it", fails[0])
        self.assertIn("rule mode", fails[0])
        self.assertIn("chmod go-w", fails[0])

    def test_no_table(self):
        env = self.env()
        del env["CCLTUNE_TABLE"]
        p = self.doctor(env=env)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no table configured", self.fails(p.stdout)[0])
        # --table names one; the environment lacking it is a warning
        p = self.doctor("--table", self.table, env=env)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("CCLTUNE_TABLE is not set here: a job needs CCLTUNE_TABLE=%s"
                      % os.path.realpath(self.table), p.stdout)

    def test_newer_nccl_picks_v6_and_refuses_the_table(self):
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="23007"))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("NCCL 2.30.7 from", p.stdout)
        self.assertIn("as ncclTunerPlugin_v6", p.stdout)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("nccl-mismatch", fails[0])

    def test_mismatch_says_how_to_retune_or_widen(self):
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="23007"))
        fails = self.fails(p.stdout)
        self.assertIn("re-tune with this NCCL (ccltune tune)", fails[0])
        self.assertIn("ccltune fit --nccl-versions 2.30", fails[0])

    def test_table_widened_to_the_running_nccl_applies(self):
        text = table_text().replace('  nccl: "2.28.9"\n',
                                    '  nccl: "2.28.9"\n  nccl_versions: "2.29..2.30"\n')
        self.table = self.write_table(text, "widened.yaml")
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="23007"))
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("widened at fit time to NCCL 2.29..2.30 (nccl_versions)", p.stdout)
        self.assertIn("match-other-patch", p.stdout)
        self.assertIn("widened to it by nccl_versions 2.29..2.30", p.stdout)
        p = self.doctor(env=self.env(CCT_FAKE_NCCL_VERSION="23101"))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("nccl-mismatch", self.fails(p.stdout)[0])

    def test_other_shape_has_no_section(self):
        p = self.doctor("--ranks", "4")
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("no-topology-section", self.fails(p.stdout)[0])

    def test_channel_cap(self):
        p = self.doctor(env=self.env(NCCL_MAX_NCHANNELS="8"))
        self.assertEqual(p.returncode, 1, p.stdout)
        fails = self.fails(p.stdout)
        self.assertEqual(len(fails), 1, p.stdout)
        self.assertIn("1 rule over NCCL_MAX_NCHANNELS=8 channels (NCCL caps them)", fails[0])
        self.assertIn("[16 MiB, inf) ring/simple", fails[0])

    def test_buffer_size_is_a_warning(self):
        p = self.doctor(env=self.env(NCCL_BUFFSIZE="1048576"))
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("warn env         NCCL_BUFFSIZE=1048576", p.stdout)

    def test_no_gpu(self):
        p = self.doctor(env=self.env(CCT_FAKE_NO_GPU="1"))
        self.assertEqual(p.returncode, 1)
        fails = self.fails(p.stdout)
        self.assertIn("the GPU cannot be read", fails[0])
        self.assertTrue(any("gpu-unknown" in f for f in fails), p.stdout)

    def test_json(self):
        p = self.doctor("--json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        doc = json.loads(p.stdout)
        self.assertTrue(doc["applies"])
        self.assertEqual(doc["nccl"]["version"], 22809)
        self.assertEqual(doc["nccl"]["tuner_abi"], 5)
        self.assertTrue(doc["plugin"]["ours"])
        self.assertEqual(doc["gpu"], {"name": "NVIDIA H200", "cc": 90})
        self.assertEqual(doc["table"]["status"], "ok")
        self.assertEqual(doc["table"]["rules"], 7)
        self.assertEqual(doc["table"]["blocked"], 0)
        p = self.doctor("--json", env=self.env(NCCL_PROTO="Simple"))
        self.assertEqual(p.returncode, 1)
        doc = json.loads(p.stdout)
        self.assertFalse(doc["applies"])
        self.assertEqual(doc["table"]["blocked"], 4)
        self.assertEqual([c["check"] for c in doc["checks"] if c["status"] == "fail"], ["rules"])

    def test_default_nccl_is_found_on_the_library_path(self):
        # no --nccl: libnccl.so.2 from LD_LIBRARY_PATH, as a fresh job's loader finds it
        # (ahead of any copy this ccltune was itself linked with)
        libdir = os.path.join(self.tmp.name, "nccl-lib")
        os.mkdir(libdir)
        os.symlink(os.path.realpath(FAKE_NCCL), os.path.join(libdir, "libnccl.so.2"))
        env = self.env(CCT_FAKE_NCCL_VERSION="22703")
        env.pop("LD_BIND_NOW", None)
        env["LD_LIBRARY_PATH"] = libdir + ":" + env["LD_LIBRARY_PATH"]
        p = subprocess.run([CCLTUNE, "doctor"], env=env, capture_output=True, text=True,
                           timeout=60)
        if "symbol lookup error" in p.stderr:
            self.skipTest("this ccltune links NCCL eagerly; the stand-in cannot replace it")
        self.assertIn("NCCL 2.27.3 from %s" % os.path.join(libdir, "libnccl.so.2"), p.stdout)
        self.assertIn("tuner ABI v4 and older", p.stdout)
        self.assertIn("as ncclTunerPlugin_v4", p.stdout)
        self.assertIn("nccl-mismatch", p.stdout)

    def test_usage(self):
        for args in (["--ranks", "0"], ["--nodes", "x"], ["stray"], ["--json=1"]):
            p = self.doctor(*args)
            self.assertEqual(p.returncode, 2, (args, p.stdout, p.stderr))
            self.assertIn("Try 'ccltune doctor --help'", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
