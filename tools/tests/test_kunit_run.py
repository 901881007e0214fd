import hashlib
import json
import os
import shutil
import unittest
from unittest import mock

from helpers import DATA_DIR, MATRIX_TEXT, TempDirTestCase, data_lines, git, quiet, quiet_raises, write

from common import arches
from kunit import crosscheck, ktap, run as kunit_run, logscan, matrix
from common import ToolError

MATRIX = MATRIX_TEXT
UP_CONFIG = "# CONFIG_SMP is not set\n# CONFIG_HOTPLUG_CPU is not set\n"

SUITES_C = """
// SPDX-License-Identifier: GPL-2.0
static struct ktimer_clock fake_clock = {
	.name		= "kunit-fake",
};

static struct kunit_case modes_cases[] = { KUNIT_CASE(a), {} };

static struct kunit_suite ktimer_modes_suite = {
	.name = "ktimer_modes",
	.init = modes_init,
	.test_cases = modes_cases,
};

/* static struct kunit_suite old_suite = { .name = "commented_out" }; */
// static struct kunit_suite other = { .name = "line_commented" };

static struct kunit_suite ktimer_errors_suite = {
	.attr = { .speed = KUNIT_SPEED_SLOW },
	.name		= "ktimer_errors",
	.test_cases	= error_cases,
};
kunit_test_suites(&ktimer_modes_suite, &ktimer_errors_suite);
"""


class InputsTest(TempDirTestCase):
    def test_configuration_by_name_comes_from_the_repo_matrix(self):
        write(self.tmp / "kunit_configs" / "matrix", MATRIX)
        write(self.tmp / "kunit_configs" / "up.config", UP_CONFIG)
        up = kunit_run.configuration_for("up", self.tmp)
        self.assertEqual((up.name, up.fragments, up.smp), ("up", ("up",), 1))
        self.assertIs(kunit_run.configuration_for(up, self.tmp), up)

    def test_unknown_configuration(self):
        write(self.tmp / "kunit_configs" / "matrix", MATRIX)
        write(self.tmp / "kunit_configs" / "up.config", UP_CONFIG)
        error = quiet_raises(self, ToolError, kunit_run.configuration_for, "nope", self.tmp)[0]
        self.assertIn("unknown configuration 'nope'", str(error))
        self.assertIn("default, lowres, up", str(error))
        self.assertIn("CONFIG=", str(error))

    def test_expected_suites(self):
        write(self.tmp / "kernel" / "kernel" / "time" / "ktimer_test.c", SUITES_C)
        write(self.tmp / "kernel" / "kernel" / "time" / "ktimer.c", "static int x;\n")
        write(self.tmp / "kernel" / "kernel" / "time" / "other_test.c",
              'struct kunit_suite exported_suite = {\n\t.name = "ktimer_exported",\n};\n')
        self.assertEqual(kunit_run.expected_suites(self.tmp / "kernel"),
                         ["ktimer_errors", "ktimer_exported", "ktimer_modes"])


class CommandTest(unittest.TestCase):
    def test_i386_command(self):
        with mock.patch.object(kunit_run.ccache, "available", return_value=True):
            cmd = kunit_run.kunit_command("i386", "/r/build/kunit/i386-default", ["/r/.kunitconfig"], 2, 1200,
                                          python="python3")
        self.assertEqual(cmd, [
            "python3", "tools/testing/kunit/kunit.py", "run", "--arch=i386",
            "--build_dir=/r/build/kunit/i386-default", "--kunitconfig=/r/.kunitconfig",
            "--qemu_args=-smp 2", "--jobs=2", "--timeout=1200", "--raw_output=all",
            "--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=tsc=reliable", "--make_options=CC=ccache gcc"])

    def test_arm_command_cross_compiles_through_ccache(self):
        with mock.patch.object(kunit_run.ccache, "available", return_value=True):
            cmd = kunit_run.kunit_command("arm", "/b", ["/r/.kunitconfig", "/r/kunit_configs/arch/arm.config"],
                                          4, 300)
        self.assertIn("--cross_compile=arm-linux-gnueabihf-", cmd)
        self.assertIn("--make_options=CC=ccache arm-linux-gnueabihf-gcc", cmd)
        self.assertIn("--kunitconfig=/r/kunit_configs/arch/arm.config", cmd)
        self.assertIn("--timeout=300", cmd)

    def test_without_ccache(self):
        with mock.patch.object(kunit_run.ccache, "available", return_value=False):
            cmd = kunit_run.kunit_command("arm", "/b", ["/k"], 1, 1)
        self.assertFalse(any(arg.startswith("--make_options") for arg in cmd))
        cmd = kunit_run.kunit_command("arm", "/b", ["/k"], 1, 1, use_ccache=False)
        self.assertFalse(any(arg.startswith("--make_options") for arg in cmd))

    def test_um_has_no_qemu_args(self):
        cmd = kunit_run.kunit_command("um", "/b", ["/k"], 1, 1, use_ccache=False)
        self.assertFalse(any(arg.startswith("--qemu_args") for arg in cmd))
        cmd = kunit_run.kunit_command("um", "/b", ["/k"], 1, 1, use_ccache=False, smp=1)
        self.assertFalse(any(arg.startswith("--qemu_args") for arg in cmd))

    def test_smp_and_kernel_args_per_configuration(self):
        cmd = kunit_run.kunit_command("arm", "/b", ["/k"], 2, 60, use_ccache=False, smp=1,
                                      kernel_args=("ktimer.highres=0", "foo=a b"))
        self.assertIn("--qemu_args=-smp 1", cmd)
        self.assertNotIn("--qemu_args=-smp 2", cmd)
        kernel_args = [arg for arg in cmd if arg.startswith("--kernel_args=")]
        self.assertEqual(kernel_args, ["--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=ktimer.highres=0",
                                       "--kernel_args=foo=a b"])

    def test_filter_glob_comes_last(self):
        cmd = kunit_run.kunit_command("i386", "/b", ["/k"], 1, 1, use_ccache=False, filter_glob="ktimer_modes")
        self.assertEqual(cmd[-1], "ktimer_modes")
        self.assertNotIn("ktimer_modes", kunit_run.kunit_command("i386", "/b", ["/k"], 1, 1, use_ccache=False))

    def test_arch_kernel_args_follow_panic(self):
        arch = arches.Arch("x", kernel_args=("tsc=reliable",))
        cmd = kunit_run.kunit_command(arch, "/b", ["/k"], 1, 1, use_ccache=False, kernel_args=("ktimer.highres=0",))
        self.assertEqual([a for a in cmd if a.startswith("--kernel_args")],
                         ["--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=tsc=reliable", "--kernel_args=ktimer.highres=0"])

    def test_x86_guests_trust_their_tsc(self):
        self.assertEqual(arches.get_arch("i386").kernel_args, ("tsc=reliable",))
        self.assertEqual(arches.get_arch("arm").kernel_args, ())

    def test_arch_qemu_args_come_before_smp(self):
        arch = arches.Arch("x", qemu_args="-cpu max")
        cmd = kunit_run.kunit_command(arch, "/b", ["/k"], 1, 1, use_ccache=False, smp=4)
        self.assertIn("--qemu_args=-cpu max -smp 4", cmd)

    def test_boot_only_uses_exec_without_build_options(self):
        with mock.patch.object(kunit_run.ccache, "available", return_value=True):
            cmd = kunit_run.kunit_command("i386", "/r/build/kunit/i386-default", ["/k"], 2, 1200, python="python3",
                                          kernel_args=("ktimer.highres=0",), boot_only=True)
        self.assertEqual(cmd, [
            "python3", "tools/testing/kunit/kunit.py", "exec", "--arch=i386",
            "--build_dir=/r/build/kunit/i386-default", "--kunitconfig=/k",
            "--qemu_args=-smp 2", "--timeout=1200", "--raw_output=all",
            "--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=tsc=reliable", "--kernel_args=ktimer.highres=0"])

    def test_every_arch_entry_is_complete(self):
        for arch in arches.ARCHES.values():
            with self.subTest(arch=arch.name):
                self.assertTrue(arch.gcc.endswith("gcc"))
                if arch.cross_compile:
                    self.assertTrue(arch.cross_compile.endswith("-"))

    def test_child_env_drops_make_leaks(self):
        env = kunit_run.child_env({"MAKEFLAGS": "-j2 -- ARCH=arm", "ARCH": "arm", "MAKELEVEL": "1",
                                   "PATH": "/usr/bin", "CROSS_COMPILE": "x-"})
        self.assertEqual(env["PATH"], "/usr/bin")
        for name in ("MAKEFLAGS", "ARCH", "MAKELEVEL", "CROSS_COMPILE"):
            self.assertNotIn(name, env)


class StreamTest(unittest.TestCase):
    def feed_all(self, lines):
        stream = kunit_run.Stream()
        kinds = [stream.feed(line)[0] for line in lines]
        return stream, kinds

    def test_real_log_is_split_into_build_and_console(self):
        lines = data_lines("kunitpy-i386-time_test.log")
        stream, kinds = self.feed_all(lines)
        self.assertEqual(stream.phase, "after")
        self.assertEqual(stream.stage, "boot")
        self.assertEqual(stream.build_lines[0], "[07:57:46] Configuring KUnit Kernel ...")
        self.assertTrue(stream.build_lines[-1].startswith("$ qemu-system-i386"))
        self.assertIn("SeaBIOS", stream.console_lines[0])
        self.assertIn("Linux version 6.12.118", stream.console_lines[1])
        self.assertEqual(stream.console_lines[-1], "reboot: machine restart")
        self.assertEqual(stream.kernel_version, "6.12.118-g50ae34ac4020")
        self.assertEqual(kinds.count("stage"), 5)  # configuring, building, starting, booting, elapsed
        self.assertTrue(ktap.parse(stream.console_lines).complete)

    def test_timeout_and_qemu_messages(self):
        stream, _ = self.feed_all([
            "Running tests with:", "$ qemu-system-arm -machine virt",
            "KTAP version 1", "1..1",
            "Command '['qemu-system-arm', '-nodefaults']' timed out after 30 seconds",
            "qemu-system-arm: terminating on signal 15 from pid 1234 (python3)",
        ])
        self.assertEqual(stream.timeout, 30)
        self.assertEqual(stream.qemu_messages, ["qemu-system-arm: terminating on signal 15 from pid 1234 (python3)"])
        self.assertNotIn("timed out", "\n".join(stream.console_lines))


class ProgressTest(unittest.TestCase):
    def test_suite_progress_lines(self):
        run = ktap.parse(data_lines("modern-mixed.log"))
        self.assertEqual(kunit_run.suite_progress(run.suite("ktimer_errors")), "ktimer_errors: 2/2 ok")
        self.assertEqual(kunit_run.suite_progress(run.suite("ktimer_modes")),
                         "ktimer_modes: 1/4 ok, 1 skipped, 2 FAILED (ktimer_start_rel, ktimer_forward_periods)")
        crashed = ktap.parse(data_lines("arm-oops-mid-suite.log")).suites[0]
        self.assertEqual(kunit_run.suite_progress(crashed),
                         "ktimer_modes: 1/3 ok, 2 never reported -- suite did not finish")
        init_failed = ktap.parse(["KTAP version 1", "1..1", "not ok 1 s"]).suites[0]
        self.assertIn("no test cases reported", kunit_run.suite_progress(init_failed))

    def test_build_excerpt_starts_at_first_error(self):
        lines = [f"noise {i}" for i in range(100)] + [
            "kernel/time/ktimer.c: In function 'start_ktimer':",
            "kernel/time/ktimer.c:12:5: error: 'foo' undeclared (first use in this function)",
            "make[4]: *** [scripts/Makefile.build:229: kernel/time/ktimer.o] Error 1"] + ["tail"] * 50
        excerpt = kunit_run.build_excerpt(lines)
        self.assertEqual(len(excerpt), 40)
        self.assertEqual(excerpt[3], "kernel/time/ktimer.c:12:5: error: 'foo' undeclared (first use in this function)")
        self.assertEqual(kunit_run.build_excerpt(["a"] * 100)[-1], "a")


class DecideTest(unittest.TestCase):
    def decide(self, lines, returncode=0, console=None, missing=()):
        stream = kunit_run.Stream()
        for line in lines:
            stream.feed(line)
        parsed = ktap.parse(console if console is not None else stream.console_lines)
        findings = logscan.scan(stream.console_lines)
        return kunit_run.decide(stream, returncode, parsed, findings, list(missing))

    BOOT = ["[00:00:00] Configuring KUnit Kernel ...", "[00:00:01] Building KUnit Kernel ...",
            "[00:00:02] Starting KUnit Kernel (1/1)...", "Running tests with:", "$ qemu-system-i386"]
    GOOD = ["KTAP version 1", "1..1", "    # Subtest: s", "    1..1", "    ok 1 t", "ok 1 s"]

    def test_pass(self):
        self.assertEqual(self.decide(self.BOOT + self.GOOD), ("PASS", []))

    def test_build_error(self):
        status, problems = self.decide(self.BOOT[:2] + ["ktimer.c:1: error: x"], returncode=1)
        self.assertEqual(status, "BUILD_ERROR")
        self.assertIn("build failed", problems[0])

    def test_config_error(self):
        status, _ = self.decide(self.BOOT[:2] + [kunit_run.CONFIG_MISMATCH, "Missing: CONFIG_KTIMERS=y"],
                                returncode=1)
        self.assertEqual(status, "CONFIG_ERROR")

    def test_kunit_py_failing_before_anything(self):
        self.assertEqual(self.decide(["Traceback (most recent call last):"], returncode=1)[0], "INFRA_ERROR")

    def test_kunit_py_failing_while_starting_the_kernel(self):
        status, problems = self.decide(["[00:00:00] Starting KUnit Kernel (1/1)...", "Traceback (most recent"],
                                       returncode=1)
        self.assertEqual(status, "INFRA_ERROR")
        self.assertIn("starting the kernel", problems[0])

    def test_timeout(self):
        status, problems = self.decide(self.BOOT + self.GOOD[:3] + [
            "Command '['qemu-system-i386']' timed out after 1200 seconds"])
        self.assertEqual(status, "TIMEOUT")
        self.assertIn("TIMEOUT=", problems[0])

    def test_crash(self):
        status, problems = self.decide(self.BOOT + self.GOOD[:4] + ["Kernel panic - not syncing: Fatal exception"])
        self.assertEqual(status, "CRASH")
        self.assertTrue(any("kernel panic at console line" in p for p in problems))

    def test_silent_stop_is_a_crash(self):
        status, problems = self.decide(self.BOOT + self.GOOD[:5])
        self.assertEqual(status, "CRASH")
        self.assertTrue(any("QEMU or the kernel stopped" in p for p in problems))

    def test_qemu_missing(self):
        status, problems = self.decide(self.BOOT + [
            "FileNotFoundError: [Errno 2] No such file or directory: 'qemu-system-i386'"], returncode=1)
        self.assertEqual(status, "INFRA_ERROR")
        self.assertTrue(any("make deps" in p for p in problems))

    def test_no_ktap(self):
        self.assertEqual(self.decide(self.BOOT + ["Linux version 6.12.118"])[0], "NO_TESTS")

    def test_real_timeout(self):
        console = data_lines("real-i386-ktimers-timeout.log")
        status, problems = self.decide(self.BOOT + console + [
            "Command '['qemu-system-i386', '-nodefaults']' timed out after 600 seconds"])
        self.assertEqual(status, "TIMEOUT")
        self.assertTrue(any("timed out after 600s" in p for p in problems))
        self.assertTrue(any("problem(s) in the kernel log" in p for p in problems))

    def test_the_parsers_disagreeing_fails_the_run(self):
        disagreeing = {"checked": True, "tests": 2, "disagreements": ["s.t: ktap.py PASS, kunit_parser FAIL"]}
        stream = kunit_run.Stream()
        for line in self.BOOT + self.GOOD:
            stream.feed(line)
        parsed = ktap.parse(stream.console_lines)
        status, problems = kunit_run.decide(stream, 0, parsed, [], [], disagreeing)
        self.assertEqual(status, "FAIL")
        self.assertEqual(problems, ["kunit.py's parser and ktap.py disagree on 1 test(s): "
                                    "s.t: ktap.py PASS, kunit_parser FAIL"])
        failing = {"checked": False, "tests": 0, "disagreements": [], "error": "kunit_parser: ValueError: x"}
        self.assertEqual(kunit_run.decide(stream, 0, parsed, [], [], failing)[0], "FAIL")
        not_checked = {"checked": False, "tests": 0, "disagreements": [], "error": None, "note": "not checked: x"}
        self.assertEqual(kunit_run.decide(stream, 0, parsed, [], [], not_checked), ("PASS", []))

    def test_failures_findings_and_missing_suites(self):
        failing = self.GOOD[:4] + ["    not ok 1 t", "not ok 1 s"]
        self.assertEqual(self.decide(self.BOOT + failing)[0], "FAIL")
        splat = ["WARNING: CPU: 0 PID: 1 at kernel/time/ktimer.c:1 f+0x0/0x1", "---[ end trace 0 ]---"]
        self.assertEqual(self.decide(self.BOOT + self.GOOD + splat)[0], "FAIL")
        status, problems = self.decide(self.BOOT + self.GOOD, missing=["ktimer_queue"])
        self.assertEqual(status, "FAIL")
        self.assertIn("ktimer_queue", problems[0])


FAKE_KUNIT = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_KUNIT_ARGV"], "w") as out:
    json.dump({"argv": sys.argv, "cwd": os.getcwd(), "makeflags": os.environ.get("MAKEFLAGS")}, out)
with open(os.environ["FAKE_KUNIT_OUTPUT"]) as source:
    for line in source:
        sys.stdout.write(line)
sys.exit(int(os.environ.get("FAKE_KUNIT_RC", "0")))
"""


class RunSuitesTest(TempDirTestCase):
    """run_suites() end to end with a fake kunit.py that replays a recorded output."""

    def setUp(self):
        super().setUp()
        self.tree = self.tmp / "linux"
        write(self.tree / "tools" / "testing" / "kunit" / "kunit.py", FAKE_KUNIT)
        write(self.tree / "Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\n")
        self.repo = self.tmp / "repo"
        write(self.repo / "kernel" / "kernel" / "time" / ".kunitconfig", "CONFIG_KUNIT=y\nCONFIG_SMP=y\n")
        write(self.repo / ".kunitconfig", "CONFIG_HOTPLUG_CPU=y\n")
        write(self.repo / "kunit_configs" / "matrix", MATRIX)
        write(self.repo / "kunit_configs" / "up.config", UP_CONFIG)
        write(self.repo / "kernel" / "kernel" / "time" / "t.c",
              'static struct kunit_suite s = {\n\t.name = "time_test_cases",\n};\n'
              'static struct kunit_suite q = {\n\t.name = "ktimer_queue",\n};\n')
        self.argv_file = self.tmp / "argv.json"
        self.env = mock.patch.dict(os.environ, {"FAKE_KUNIT_ARGV": str(self.argv_file), "MAKEFLAGS": "-j2"})
        self.env.start()
        self.addCleanup(self.env.stop)

    def run_with(self, output_lines, rc=0, **kwargs):
        output = write(self.tmp / "output.log", "\n".join(output_lines) + "\n")
        os.environ["FAKE_KUNIT_OUTPUT"] = str(output)
        os.environ["FAKE_KUNIT_RC"] = str(rc)
        return quiet(kunit_run.run_suites, self.tree, "i386", results_root=self.tmp / "results",
                     kunit_build_root=self.tmp / "kunit", repo=self.repo, **kwargs)

    def test_real_output_replayed(self):
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"))
        result_dir = self.tmp / "results" / "i386-default"
        saved = json.loads((result_dir / "results.json").read_text())
        self.assertEqual(saved, json.loads(json.dumps(document)))
        self.assertEqual(document["status"], "FAIL")  # ktimer_queue never reported
        self.assertEqual(document["missing_suites"], ["ktimer_queue"])
        self.assertEqual(document["counts"]["PASS"], 1)
        self.assertEqual(document["counts"]["MISS"], 1)
        self.assertEqual(document["kernel_version"], "6.12.118-g50ae34ac4020")
        self.assertEqual((document["arch"], document["config"]), ("i386", "default"))
        self.assertIsNotNone(document["build_duration_s"])
        console = (result_dir / "console.log").read_text()
        self.assertTrue(console.startswith("\x1bc"))
        self.assertIn("ok 1 time_test_cases", console)
        self.assertNotIn("Building KUnit Kernel", console)
        self.assertIn("Building KUnit Kernel", (result_dir / "build.log").read_text())
        # compact progress, not the console
        self.assertIn("[kunit] [i386-default] time_test_cases: 1/1 ok", out)
        self.assertIn("[build] [i386-default] Building KUnit Kernel ...", out)
        self.assertNotIn("BIOS-e820", out)
        recorded = json.loads(self.argv_file.read_text())
        self.assertEqual(recorded["cwd"], str(self.tree))
        self.assertIsNone(recorded["makeflags"])
        self.assertEqual(recorded["argv"][1], "run")
        self.assertIn(f"--build_dir={self.tmp / 'kunit' / 'i386-default'}", recorded["argv"])
        effective = self.tmp / "kunit" / "i386-default" / ".kunitconfig"
        self.assertIn(f"--kunitconfig={effective}", recorded["argv"])
        self.assertEqual([a for a in recorded["argv"] if a.startswith("--kunitconfig")], [f"--kunitconfig={effective}"])
        self.assertIn("--qemu_args=-smp 2", recorded["argv"])
        self.assertIn("CONFIG_SMP=y", effective.read_text().splitlines())
        self.assertEqual(document["configuration"], {"name": "default", "fragments": [], "kernel_args": [],
                                                     "smp": 2, "build": "default", "suites": None})
        self.assertEqual(document["kind"], "kunit")
        self.assertEqual((document["mode"], document["built"]), ("run", True))

    def test_lowres_shares_the_default_build_dir(self):
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), config="lowres")
        argv = json.loads(self.argv_file.read_text())["argv"]
        self.assertIn(f"--build_dir={self.tmp / 'kunit' / 'i386-default'}", argv)
        self.assertIn(f"--kunitconfig={self.tmp / 'kunit' / 'i386-default' / '.kunitconfig'}", argv)
        self.assertEqual(argv[-5:-1], ["--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=tsc=reliable",
                                       "--kernel_args=ktimer.highres=0"])
        self.assertIn("--qemu_args=-smp 2", argv)
        self.assertTrue((self.tmp / "results" / "i386-lowres" / "results.json").is_file())
        self.assertFalse((self.tmp / "results" / "i386-default").exists())
        self.assertFalse((self.tmp / "kunit" / "i386-lowres").exists())
        self.assertEqual(document["config"], "lowres")
        self.assertIn("[kunit] [i386-lowres] time_test_cases: 1/1 ok", out)

    def test_boot_only_execs_the_shared_build(self):
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), config="lowres", boot_only=True)
        argv = json.loads(self.argv_file.read_text())["argv"]
        self.assertEqual(argv[1], "exec")
        self.assertFalse(any(arg.startswith(("--jobs", "--make_options")) for arg in argv))
        self.assertEqual(document["mode"], "exec")
        self.assertIsNone(document["build_duration_s"])
        self.assertIn("boot only", out)

    def test_a_suites_glob_filters_the_run_and_the_expected_suites(self):
        write(self.repo / "kunit_configs" / "matrix", MATRIX + "[modes]\nsuites = time_test_*\n")
        seen = []
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), config="modes", kind="bench",
                                         on_console=seen.append)
        argv = json.loads(self.argv_file.read_text())["argv"]
        self.assertEqual(argv[-1], "time_test_*")       # kunit.py's filter_glob, after the options
        self.assertEqual(document["expected_suites"], ["time_test_cases"])     # ktimer_queue does not match
        self.assertEqual((document["status"], document["missing_suites"]), ("PASS", []))
        self.assertEqual(document["kind"], "bench")
        self.assertEqual(document["configuration"]["suites"], "time_test_*")
        self.assertIn("suites time_test_*", out)
        console = (self.tmp / "results" / "i386-modes" / "console.log").read_text().splitlines()
        self.assertEqual(seen, console)             # every console line, as it arrived

    def test_up_builds_its_own_kernel_with_one_cpu(self):
        document, _, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), config="up")
        argv = json.loads(self.argv_file.read_text())["argv"]
        effective = self.tmp / "kunit" / "i386-up" / ".kunitconfig"
        self.assertIn(f"--build_dir={self.tmp / 'kunit' / 'i386-up'}", argv)
        self.assertIn(f"--kunitconfig={effective}", argv)
        self.assertIn("--qemu_args=-smp 1", argv)
        self.assertEqual([a for a in argv if a.startswith("--kernel_args")],
                         ["--kernel_args=panic=-1", "--kernel_args=ktimer.watchdog=20", "--kernel_args=tsc=reliable"])
        lines = effective.read_text().splitlines()
        self.assertIn("# CONFIG_SMP is not set", lines)
        self.assertIn("# CONFIG_HOTPLUG_CPU is not set", lines)
        self.assertNotIn("CONFIG_SMP=y", lines)
        self.assertTrue((self.tmp / "results" / "i386-up" / "results.json").is_file())
        self.assertEqual(document["configuration"]["build"], "up")

    def test_unknown_configuration_runs_nothing(self):
        error = quiet_raises(self, ToolError, kunit_run.run_suites, self.tree, "i386", config="lowers",
                             results_root=self.tmp / "results", kunit_build_root=self.tmp / "kunit",
                             repo=self.repo)[0]
        self.assertIn("unknown configuration 'lowers'", str(error))
        self.assertFalse(self.argv_file.exists())

    def test_all_expected_suites_present_passes(self):
        document, _, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), expect="time_test_cases")
        self.assertEqual(document["status"], "PASS")
        self.assertEqual(document["problems"], [])

    def with_kunit_parser(self):
        """The fake tree gets Linux 6.12's kunit_parser.py and kunit_printer.py."""
        kunit_dir = self.tree / "tools" / "testing" / "kunit"
        for name in ("kunit_parser.py", "kunit_printer.py"):
            shutil.copyfile(DATA_DIR / "kunit-6.12" / "tools" / "testing" / "kunit" / name, kunit_dir / name)

    def test_kunit_pys_parser_checks_the_run_and_its_tree_is_shown(self):
        self.with_kunit_parser()
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), expect="time_test_cases")
        self.assertEqual(document["kunit_parser"], {
            "checked": True, "tests": 2, "summary": "Testing complete. Ran 1 tests: passed: 1",
            "disagreements": [], "error": None, "note": None})
        self.assertEqual((document["status"], document["problems"]), ("PASS", []))
        printed = (self.tmp / "results" / "i386-default" / "kunit-parser.txt").read_text()
        self.assertIn("[PASSED] time_test_cases", printed)
        self.assertIn("kunit.py's parser on the console", out)
        self.assertIn(printed, out)
        # the tree comes after the run's own progress lines, before its verdict
        self.assertLess(out.index("time_test_cases: 1/1 ok"), out.index(printed))
        self.assertLess(out.index(printed), out.index("PASS: 1 passed"))

    def test_a_disagreement_fails_the_run(self):
        self.with_kunit_parser()
        real_parse = ktap.Parser.finish

        def wrong(parser):                  # ktap.py misreading the one case
            run = real_parse(parser)
            run.suites[0].children[0].status = ktap.SKIP
            return run
        with mock.patch.object(ktap.Parser, "finish", wrong):
            document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), expect="time_test_cases")
        self.assertEqual(document["status"], "FAIL")
        self.assertEqual(document["kunit_parser"]["disagreements"],
                         ["time_test_cases.time64_to_tm_test_date_range: ktap.py SKIP, kunit_parser PASS"])
        self.assertIn("disagree on 1 test(s)", document["problems"][0])
        self.assertIn("disagree on 1 test(s)", out)

    def test_a_tree_without_kunit_parser_is_not_checked_plainly(self):
        document, out, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"), expect="time_test_cases")
        self.assertEqual(document["status"], "PASS")
        self.assertFalse(document["kunit_parser"]["checked"])
        self.assertIn("kunit.py's parser: not checked", out)
        self.assertIn("not checked", (self.tmp / "results" / "i386-default" / "kunit-parser.txt").read_text())

    def test_the_base_commit_and_the_patches_are_recorded(self):
        git(self.tree, "init", "-q")
        git(self.tree, "add", "-A")
        git(self.tree, "commit", "-q", "-m", "base: linux-source-6.12 6.12.118-1~deb12u1")
        git(self.tree, "tag", "base")
        base = git(self.tree, "rev-parse", "HEAD")
        git(self.tree, "commit", "-q", "--allow-empty", "-m", "ktimers: the series")
        patches = self.repo / "kernel" / "patches"
        write(patches / "0002-b.patch", "second\n")
        write(patches / "0001-a.patch", "first\n")
        document, _, _ = self.run_with(data_lines("kunitpy-i386-time_test.log"))
        self.assertEqual(document["base_commit"], base)
        self.assertEqual(document["tree_head"], git(self.tree, "rev-parse", "HEAD"))
        self.assertEqual(document["series_patches"], ["0001-a.patch", "0002-b.patch"])
        # sha256sum 0001-a.patch 0002-b.patch | cut -c-64 | sha256sum
        digests = "".join(hashlib.sha256(text).hexdigest() + "\n" for text in (b"first\n", b"second\n"))
        self.assertEqual(document["series_hash"], hashlib.sha256(digests.encode()).hexdigest())

    def test_build_failure_shows_compiler_errors(self):
        lines = ["[00:00:00] Configuring KUnit Kernel ...", "[00:00:01] Building KUnit Kernel ...",
                 "Building with:", "$ make all ARCH=i386",
                 "kernel/time/ktimer.c:12:5: error: 'foo' undeclared",
                 "make[2]: *** [scripts/Makefile.build:229: kernel/time/ktimer.o] Error 1"]
        document, out, _ = self.run_with(lines, rc=1)
        self.assertEqual(document["status"], "BUILD_ERROR")
        self.assertIn("build FAILED", out)
        self.assertIn("    kernel/time/ktimer.c:12:5: error: 'foo' undeclared", out)
        self.assertEqual(document["missing_suites"], ["ktimer_queue", "time_test_cases"])
        self.assertIsNone(document["kunit_parser"])     # no console: nothing to check

    def test_stale_results_are_removed_first(self):
        stale = write(self.tmp / "results" / "i386-default" / "results.json", '{"status": "PASS"}')
        self.run_with(["[00:00:00] Configuring KUnit Kernel ..."], rc=1)
        self.assertNotEqual(json.loads(stale.read_text())["status"], "PASS")

    def test_stale_results_are_removed_even_on_setup_errors(self):
        stale = write(self.tmp / "results" / "i386-default" / "results.json", '{"status": "PASS"}')
        (self.repo / ".kunitconfig").unlink()
        quiet_raises(self, ToolError, kunit_run.run_suites, self.tree, "i386", results_root=self.tmp / "results",
                     kunit_build_root=self.tmp / "kunit", repo=self.repo)
        self.assertFalse(stale.exists())

    def test_not_a_tree(self):
        error = quiet_raises(self, ToolError, kunit_run.run_suites, self.tmp / "nope", "i386",
                             results_root=self.tmp / "results", repo=self.repo)[0]
        self.assertIn("make tree apply", str(error))


if __name__ == "__main__":
    unittest.main()
