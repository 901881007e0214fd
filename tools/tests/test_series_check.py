import subprocess
from pathlib import Path
from unittest import mock

from helpers import Completed, TempDirTestCase, git, quiet, write

from series import check as series_check, store as series
from test_series import SeriesTestBase

RST = """Title
=====

.. kernel-doc:: include/linux/ktimer.h

.. kernel-doc:: kernel/time/ktimer.c
   :export:

.. kernel-doc:: kernel/time/ktimer.c
   :identifiers: ktimers_init ktimer_run_queues

Text after.

.. kernel-doc:: kernel/time/ktimer_itimer.c
   :internal:
"""

MAINTAINERS = """KTEST
F:\ttools/testing/ktest

KTIMERS
M:\tsomeone <a@b>
F:\tinclude/linux/ktimer.h
F:\tkernel/time/.kunitconfig
F:\tkernel/time/ktimer*

KVM
F:\tkernel/time/ktimer_test.c
"""


class PureFunctionsTest(TempDirTestCase):
    def test_pattern_matches_like_get_maintainer(self):
        match = series_check.pattern_matches
        self.assertTrue(match("kernel/time/ktimer*", "kernel/time/ktimer_users.c"))
        self.assertTrue(match("kernel/time/", "kernel/time/sub/x.c"))
        self.assertFalse(match("kernel/*", "kernel/time/x.c"))
        self.assertTrue(match("include/linux/ktimer.h", "include/linux/ktimer.h"))
        self.assertFalse(match("include/linux/ktimer.h", "include/linux/ktimer.hh"))
        self.assertTrue(match("kernel/time/ktimer?.c", "kernel/time/ktimers.c"))

    def test_kernel_doc_directives_and_their_arguments(self):
        directives = series_check.kernel_doc_directives(RST)
        self.assertEqual(directives, [
            ("include/linux/ktimer.h", {}),
            ("kernel/time/ktimer.c", {"export": ""}),
            ("kernel/time/ktimer.c", {"identifiers": "ktimers_init ktimer_run_queues"}),
            ("kernel/time/ktimer_itimer.c", {"internal": ""})])
        self.assertEqual(series_check.directive_args({}), ["-rst", "-Wall", "-enable-lineno"])
        self.assertIn("-export", series_check.directive_args({"export": ""}))
        self.assertEqual(series_check.directive_args({"identifiers": "a b"})[-4:], ["-function", "a", "-function", "b"])

    def test_filter_kunitconfig_leaves_out_unknown_symbols(self):
        text = "# comment\nCONFIG_KUNIT=y\nCONFIG_KTIMER_USERS=y\n# CONFIG_SMP is not set\n"
        kept, dropped = series_check.filter_kunitconfig(text, {"KUNIT", "SMP"})
        self.assertEqual(dropped, ["KTIMER_USERS"])
        self.assertIn("CONFIG_KUNIT=y", kept)
        self.assertIn("# CONFIG_SMP is not set", kept)
        self.assertNotIn("CONFIG_KTIMER_USERS=y", kept)
        self.assertIn("# left out: CONFIG_KTIMER_USERS", kept)

    def test_first_problem(self):
        lines = ["  CC      kernel/time/ktimer.o",
                 "../linux/kernel/fork.c:12:3: warning: unused variable 'x' [-Wunused-variable]",
                 "/src/kernel/time/ktimer.c:40:1: warning: no previous prototype for 'f'",
                 "kernel/time/ktimer.c:50:2: error: 'y' undeclared",
                 "make[4]: *** [scripts/Makefile.build:229: kernel/time/ktimer.o] Error 1"]
        errors, warnings = series_check.first_problem(lines, {"kernel/time/ktimer.c"})
        self.assertEqual(len(errors), 1)
        self.assertIn("'y' undeclared", errors[0])
        self.assertEqual(warnings, ["/src/kernel/time/ktimer.c:40:1: warning: no previous prototype for 'f'"])
        self.assertEqual(series_check.first_problem(["all good"], {"a.c"}), ([], []))


class CheckOnTreeTest(SeriesTestBase):
    """The static checks on a small applied series, with checkpatch and kernel-doc faked."""

    def setUp(self):
        super().setUp()
        write(self.kernel / "cover-letter.txt", "subject\n\nbody\n")
        for key, value in (("user.name", "Sender Name"), ("user.email", "sender@example.org")):
            git(self.tree, "config", key, value)
        write(self.tree / "scripts" / "checkpatch.pl", "# untracked stand-in\n")
        self.calls = []
        self.dry_sent = None

    def runner(self, cmd, cwd=None, check=True, **kwargs):
        self.calls.append(cmd)
        if cmd[:2] == ["git", "send-email"]:
            files = [c for c in cmd if c.endswith(".patch")]
            sent = files if self.dry_sent is None else files[:self.dry_sent]
            return Completed(stdout="".join(f"Dry-Sent {name}\n" for name in sent))
        if cmd[1].endswith(series_check.CHECKPATCH):
            if cmd[-1].endswith("0002-ktimers-hook-into-the-softirq.patch"):
                return Completed(stdout=f"{cmd[-1]}:20: CHECK:SPACING: spaces preferred\ntotal: 0 errors\n",
                                 returncode=1)
            return Completed(stdout="total: 0 errors, 0 warnings, 0 checks\n")
        text = Path(cmd[-1]).read_text()
        if "ktimer_run_queues" in text:
            return Completed(stderr=f"{cmd[-1]}:1: warning: missing description of ktimer_run_queues\n")
        return Completed()

    def run_check(self, **kwargs):
        return quiet(series_check.check, self.tree, builds=(), out_dir=self.tmp / "out",
                     results_dir=self.tmp / "results", runner=self.runner, kernel_dir=self.kernel,
                     check_dir=self.tmp / "check", **kwargs)

    def test_static_checks_per_patch(self):
        (results, maintainers), out, _ = self.run_check()
        self.assertEqual([r.number for r in results], [1, 2])
        self.assertTrue(results[0].ok)
        self.assertEqual(results[1].checks, {"checkpatch": "FAIL", "kernel-doc": "FAIL"})
        self.assertIn("CHECK:SPACING", results[1].problems[0])
        self.assertIn("kernel/time/timer.c:1: warning: missing description", results[1].problems[1])
        checkpatch_calls = [c for c in self.calls if c[1].endswith(series_check.CHECKPATCH)]
        self.assertIn("--strict", checkpatch_calls[0])
        self.assertIn("FILE_PATH_CHANGES", checkpatch_calls[0])
        self.assertEqual(maintainers, ["MAINTAINERS has no KTIMERS entry with F: lines"])   # git am and send-email OK
        self.assertIn("02/02 FAIL ktimers: hook into the softirq", out)
        self.assertIn("1 of 2 patches OK, 1 failed", out)
        self.assertTrue((self.tmp / "results" / "series-check.json").is_file())

    def test_send_email_must_take_every_patch(self):
        self.dry_sent = 1
        (_, whole), _, _ = self.run_check()
        self.assertIn("git send-email --dry-run took 1 of 3 patches", whole[-1])
        self.assertIn("git-email", whole[-1])

    def test_git_am_must_give_the_branch_back(self):
        builder = series_check.Builder(self.tree, check_dir=self.tmp / "check", use_ccache=False)
        builder.prepare()
        patches = series.patch_files(self.kernel)
        head = git(self.tree, "rev-parse", "HEAD")
        self.assertEqual(builder.am_reproduces(patches, head), [])
        self.assertIn("gives tree", builder.am_reproduces(patches[:1], head)[0])

    def test_one_patch_only(self):
        (results, maintainers), _, _ = self.run_check(first=1, last=1)
        self.assertEqual([r.number for r in results], [1])
        self.assertEqual(maintainers, [])   # only judged when the last patch is checked

    def test_maintainers_coverage(self):
        write(self.tree / "MAINTAINERS", MAINTAINERS)
        git(self.tree, "add", "MAINTAINERS")
        git(self.tree, "commit", "-q", "-m", "maintainers")
        head = git(self.tree, "rev-parse", "HEAD")
        self.assertEqual(series_check.maintainers_problems(self.tree, "base", head), [])
        write(self.tree / "MAINTAINERS", MAINTAINERS.replace("F:\tkernel/time/ktimer*\n", ""))
        git(self.tree, "commit", "-q", "-am", "less")
        problems = series_check.maintainers_problems(self.tree, "base", "HEAD")
        self.assertEqual(problems, ["kernel/time/ktimer.c is in no F: line of the KTIMERS entry"])


class SeriesOptionsTest(SeriesTestBase):
    def test_options_the_series_adds_are_turned_on(self):
        write(self.tree / "kernel" / "time" / "Kconfig", "config OLD\n\tbool \"old\"\n")
        git(self.tree, "add", "-A")
        git(self.tree, "commit", "-q", "-m", "kconfig at base")
        git(self.tree, "tag", "-f", "base0")
        write(self.tree / "kernel" / "time" / "Kconfig",
              "config OLD\n\tbool \"old\"\n\nconfig KTIMERS\n\tbool \"ktimers\"\n\n"
              "config KTIMER_KUNIT_TEST\n\ttristate \"tests\" if !KUNIT_ALL_TESTS\n\n"
              "config KTIMER_SLOTS\n\tint \"slots\"\n\tdefault 8\n")
        git(self.tree, "commit", "-q", "-am", "options")
        options = series_check.series_options(self.tree, "base0", "HEAD")
        self.assertEqual(options, ["KTIMERS", "KTIMER_KUNIT_TEST"])
        text = series_check.with_series_options("CONFIG_KUNIT=y\nCONFIG_KTIMERS=y\n", options)
        self.assertEqual(text.splitlines()[-1], "CONFIG_KTIMER_KUNIT_TEST=y")
        self.assertEqual(text.count("CONFIG_KTIMERS=y"), 1)
        self.assertEqual(series_check.with_series_options("CONFIG_X=y\n", []), "CONFIG_X=y\n")


class BuilderTest(TempDirTestCase):
    """Builder.build: the steps' output becomes the patch's verdict."""

    def builder(self, script):
        builder = series_check.Builder(self.tmp, check_dir=self.tmp / "check", use_ccache=False)
        builder.worktree = self.tmp
        builder.logs.mkdir(parents=True)
        builder.touched = {"kernel/time/ktimer.c"}
        builder.ktimers_steps = lambda sha: [["sh", "-c", script]]
        return builder

    def test_clean_build(self):
        problems, seconds = self.builder("echo '  CC kernel/time/ktimer.o'").build("ktimers", 3, "sha")
        self.assertEqual(problems, [])
        self.assertGreaterEqual(seconds, 0)
        self.assertIn("CC kernel/time/ktimer.o", (self.tmp / "check" / "logs" / "03-i386-ktimers.log").read_text())

    def test_error_and_warning(self):
        script = ("echo 'kernel/time/ktimer.c:3:1: warning: unused function'; "
                  "echo 'kernel/time/ktimer.c:9:1: error: expected ;'; exit 2")
        problems, _ = self.builder(script).build("ktimers", 1, "sha")
        self.assertIn("error: expected ;", problems[0])
        self.assertIn("warning: unused function", problems[1])
        self.assertIn("01-i386-ktimers.log", problems[-1])

    def test_warning_in_an_untouched_file_is_not_ours(self):
        problems, _ = self.builder("echo 'drivers/x.c:3:1: warning: old news'").build("ktimers", 1, "sha")
        self.assertEqual(problems, [])

    def test_failure_without_compiler_message(self):
        problems, _ = self.builder("exit 3").build("ktimers", 1, "sha")
        self.assertIn("exit 3 without a compiler error", problems[0])

    def test_sparse_builds_a_suite_inside_the_file_that_includes_it(self):
        builder = self.builder("true")
        write(self.tmp / "fs" / "timerfd.c", '#include "timerfd_test.c"\n')
        write(self.tmp / "fs" / "timerfd_test.c", "static void t(void) {}\n")
        write(self.tmp / "check" / "i386-ktimers" / ".config", "CONFIG_KTIMERS=y\n")
        commands = []

        def fake_run(command, **kwargs):
            commands.append(command)
            return subprocess.CompletedProcess(command, 0, stdout="")

        with mock.patch.object(series_check.series, "added_paths", return_value=["fs/timerfd_test.c"]), \
                mock.patch.object(series_check.subprocess, "run", side_effect=fake_run):
            problems, _ = builder.sparse(16, "sha")
        self.assertEqual(problems, [])
        # found in CI-like use: fs/timerfd_test.o alone does not compile (it is built inside timerfd.c)
        self.assertIn("fs/timerfd.o", commands[0])
        self.assertNotIn("fs/timerfd_test.o", commands[0])

    def test_python_step_failure(self):
        builder = self.builder("true")
        builder.ktimers_steps = lambda sha: [lambda: "CONFIG_KTIMERS=y in the stock configuration"]
        problems, _ = builder.build("ktimers", 1, "sha")
        self.assertIn("CONFIG_KTIMERS=y", problems[0])
