"""The project's own guest selftests (selftests/user/*.c): how guest_build compiles them, and that
the repository's programs, plan and /init fit together."""

import re
import shutil
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from helpers import TempDirTestCase, write

from guest import build as guest_build, plan as selftest_plan
from common import REPO_ROOT, ToolError

USER_DIR = REPO_ROOT / "selftests" / "user"

# A stand-in compiler: records its arguments, "compiles" by copying the source, fails on a
# source that says so, as gcc would.
FAKE_CC = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls"
for arg; do case "$arg" in *.c) src="$arg";; esac; done
while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
if grep -q BROKEN "$src"; then echo "$src:3:1: error: expected ';' before '}' token"; exit 1; fi
cp "$src" "$out"
"""


def quiet_build_lock(root):
    from contextlib import redirect_stderr, redirect_stdout
    import contextlib
    import io

    @contextlib.contextmanager
    def held():
        with redirect_stderr(io.StringIO()), redirect_stdout(io.StringIO()):
            with guest_build.exclusive("arm", out_root=root):
                yield
    return held()


class BuildOwnTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.cc = write(self.tmp / "bin" / "fake-gcc", FAKE_CC, mode=0o755)
        self.sources = self.tmp / "user"
        self.out = self.tmp / "out"
        self.out.mkdir()
        write(self.sources / "ktap.h", "/* shared */\n")

    def build(self):
        with open(self.tmp / "build.log", "w") as log:
            return guest_build.build_own(str(self.cc), self.out, log, sources=self.sources)

    def test_each_c_file_becomes_a_static_threaded_program(self):
        write(self.sources / "kt_b.c", "int main(void) { return 0; }\n")
        write(self.sources / "kt_a.c", "int main(void) { return 0; }\n")
        self.assertEqual(self.build(), ["kt_a", "kt_b"])
        self.assertTrue((self.out / "kt_a").is_file())
        self.assertFalse((self.out / "ktap").exists())      # the header is no program
        calls = (self.tmp / "bin" / "calls").read_text().splitlines()
        self.assertEqual(len(calls), 2)
        for flag in ("-static", "-O2", "-Wall", "-Wextra", "-pthread"):
            self.assertIn(flag, calls[0].split())
        self.assertIn("$ " + str(self.cc), (self.tmp / "build.log").read_text())

    def test_a_program_that_does_not_compile_names_the_file_and_the_message(self):
        write(self.sources / "kt_ok.c", "int main(void) { return 0; }\n")
        write(self.sources / "kt_bad.c", "BROKEN\n")
        with self.assertRaises(ToolError) as ctx:
            self.build()
        message = str(ctx.exception)
        self.assertIn("kt_bad.c", message)
        self.assertIn("expected ';' before '}' token", message)

    def test_a_program_may_not_replace_a_kernel_selftest(self):
        write(self.out / "nanosleep", "the kernel's")
        write(self.sources / "nanosleep.c", "int main(void) { return 0; }\n")
        with self.assertRaises(ToolError) as ctx:
            self.build()
        self.assertIn("would replace the kernel's timer selftest `nanosleep`", str(ctx.exception))
        self.assertEqual((self.out / "nanosleep").read_text(), "the kernel's")

    def test_one_run_at_a_time_per_arch(self):
        # make test's ARM selftests once failed while make repeat rebuilt the same build/guest/arm
        import threading
        entered = threading.Event()

        def second():
            with quiet_build_lock(self.tmp):
                entered.set()

        with quiet_build_lock(self.tmp):
            thread = threading.Thread(target=second)
            thread.start()
            self.assertFalse(entered.wait(0.3))
        self.assertTrue(entered.wait(5))
        thread.join()

    def test_no_sources_no_programs(self):
        self.sources = self.tmp / "none"
        self.assertEqual(self.build(), [])


class RepositorySuiteTest(unittest.TestCase):
    programs = sorted(path.stem for path in USER_DIR.glob("*.c"))

    def test_every_program_is_in_the_plan(self):
        plan = selftest_plan.load(full=True)
        planned = {test.name for test in plan.tests} | set(plan.left_out)
        self.assertTrue(self.programs)
        self.assertEqual(sorted(set(self.programs) - planned), [], "add a [section] to selftests/plan")
        own = sorted(name for name in planned if name.startswith("kt_"))
        self.assertEqual(own, self.programs, "a kt_ section of selftests/plan has no selftests/user/<name>.c")

    def test_the_clock_stepper_runs_alone_and_the_others_apart_from_the_latency_tests(self):
        groups = {test.name: test.group for test in selftest_plan.load().tests}
        self.assertEqual(groups["kt_clock_step"], "kt_clock_step")
        for name in self.programs:
            self.assertNotEqual(groups[name], groups["nsleep-lat"], name)

    def test_the_guest_init_sets_the_mark_the_guest_only_programs_require(self):
        init = (REPO_ROOT / "tools" / "guest" / "init.c").read_text()
        ktap = (USER_DIR / "ktap.h").read_text()
        mark = re.search(r'setenv\("(KTIMERS_GUEST)", "1", 1\)', init)
        self.assertIsNotNone(mark, "tools/guest/init.c must set KTIMERS_GUEST=1 for the tests")
        self.assertIn(f'getenv("{mark.group(1)}")', ktap)
        self.assertIn('"/init"', ktap)          # and PID 1 must be the initramfs's /init
        # the programs that step clocks or create devices check it first
        for name in ("kt_clock_step", "kt_ptp"):
            self.assertIn("if (!kt_in_guest())", (USER_DIR / f"{name}.c").read_text(), name)

    def test_kt_break_inverts_each_verdict_but_not_the_control_flow(self):
        if not shutil.which("gcc"):
            self.skipTest("gcc is not installed (make deps)")
        program = """#include "ktap.h"
static void holds(const struct kt_case *c)
{
	(void)c;
	if (kt_expect(1 + 1 == 2, "arithmetic"))
		kt_note("went on");
}
static void two(const struct kt_case *c)
{
	(void)c;
	kt_expect(1, "first");
	kt_expect(2 > 1, "second");
}
static const struct kt_case cases[] = { { "holds", holds, NULL }, { "two", two, NULL } };
int main(void) { return kt_run(cases, 2, 0, 10); }
"""
        tmp = Path(tempfile.mkdtemp(prefix="ktimers-test-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        source = write(tmp / "break.c", program)
        binary = tmp / "break"
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-pthread", "-I", str(USER_DIR), "-o", str(binary),
                        str(source)], check=True)

        def run(**env):
            return subprocess.run([str(binary)], env=dict(os.environ, **env), stdout=subprocess.PIPE,
                                  text=True, timeout=60).stdout

        plain, broken = run(), run(KT_BREAK="1")
        self.assertEqual(re.findall(r"^(?:not )?ok \d+ \w+", plain, re.M), ["ok 1 holds", "ok 2 two"])
        self.assertEqual(re.findall(r"^(?:not )?ok \d+ \w+", broken, re.M), ["not ok 1 holds", "not ok 2 two"])
        self.assertIn("# went on", broken)      # kt_expect() still returned what held
        self.assertIn("# second", broken)

    def test_the_programs_compile_without_warnings_for_the_guest(self):
        compiler = "i686-linux-gnu-gcc"
        if not shutil.which(compiler):
            self.skipTest(f"{compiler} is not installed (make deps)")
        with tempfile.TemporaryDirectory(prefix="ktimers-test-") as tmp:
            for name in self.programs:
                with self.subTest(program=name):
                    proc = subprocess.run([compiler, "-static", "-O2", "-Wall", "-Wextra", "-pthread", "-o",
                                           str(Path(tmp) / name), str(USER_DIR / f"{name}.c")],
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                    self.assertEqual((proc.returncode, proc.stdout), (0, ""))
