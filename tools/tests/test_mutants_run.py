"""The mutant run (mutants/run.py, mutants/tree.py) with a fake runner in a throw-away git tree: what runs in
which order, the statuses, and that the tree is restored whatever happens. No kernel is built or booted."""

import json
import unittest
import shutil
from contextlib import closing
from pathlib import Path
from unittest import mock

from helpers import DATA_DIR, TempDirTestCase, git, quiet, quiet_raises, write, write_matrix

import ktimers
from kunit import matrix
from mutants import catalogue as mutant_catalogue, tree as mutant_tree, run as mutants
from results import db as results_db
from common import ToolError

CATALOGUE = DATA_DIR / "mutants" / "catalogue"
SOURCE = "kernel/time/ktimer.c"
# What each catalogue mutant does to the fixture's ktimer.c, as the fake tests see it.
MUTATION = {"01": "now <= timer->expires", "02": "timer->expired = 1;", "03": "u64 overrun;\n",
            "10": "overrun * timer->interval + 1;"}


def document(status="PASS", failing=(), findings=(), built=True):
    """A results document in run_suites's shape, as far as the verdict reads it."""
    children = [{"name": name, "status": "FAIL", "log": []} for name in failing]
    return {"status": status, "built": built, "problems": [] if status == "PASS" else [f"{status} problem"],
            "suites": [{"name": "ktimer_modes", "status": "FAIL" if failing else "PASS", "children": children}],
            "findings": [{"kind": kind} for kind in findings], "console_log": "console.log",
            "build_log": "no-such-build.log"}


def mutated(source):
    """Which catalogue mutant the source carries (None: the original)."""
    return next((number for number, text in MUTATION.items() if text in source), None)


class FakeRunner:
    """Stands in for mutants.KernelRunner: records each call with the mutant the tree carried then, and
    answers with kunit(config, mutant) / user(mutant) -> results document."""
    arch = "i386"
    user_build = "default"

    def __init__(self, tree, kunit=None, user=None, user_supported=True):
        self.tree, self.user_supported, self.calls = Path(tree), user_supported, []
        self._kunit = kunit or (lambda config, mutant: document())
        self._user = user or (lambda mutant: document())

    def mutant(self):
        return mutated((self.tree / SOURCE).read_text())

    def kunit(self, configuration, boot_only, results_root):
        self.calls.append((self.mutant(), configuration.name, boot_only, Path(results_root).name))
        return self._kunit(configuration.name, self.mutant())

    def user(self, results_root):
        self.calls.append((self.mutant(), "user", None, Path(results_root).name))
        return self._user(self.mutant())


def default_kills(config, mutant):
    """01 dies in lowres only, 02 in nothing KUnit runs, 10 in up; 03 (equivalent) in nothing."""
    if (mutant, config) == ("01", "lowres"):
        return document("FAIL", failing=["ktimer_forward_periods"])
    if mutant == "10":
        return document("CRASH", findings=["panic"])
    return document()


def user_kills(mutant):
    return document("FAIL", failing=["kt_itimer"]) if mutant == "02" else document()


class MutantRunTestCase(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.tree = self.make_tree(self.tmp / "linux")
        self.matrix_path = write_matrix(self.tmp)
        self.configurations = matrix.load(self.matrix_path).configurations
        self.catalogue = mutant_catalogue.load(CATALOGUE)
        self.results = self.tmp / "results"
        self.db = self.results / "results.sqlite"

    @staticmethod
    def make_tree(tree):
        """The fixture tree as `make apply` leaves build/linux: `base`, then a series commit on ktimers."""
        shutil.copytree(DATA_DIR / "mutants" / "tree", tree)
        write(tree / "tools" / "testing" / "kunit" / "kunit.py", "# stand-in\n")
        git(tree, "init", "-q")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "base: linux-source-6.12 6.12.118-1~deb12u1")
        git(tree, "tag", "base")
        git(tree, "checkout", "-q", "-b", "ktimers")
        write(tree / "Documentation" / "timers" / "ktimers.rst", "ktimers\n")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "ktimers: document them")
        return tree

    def assert_clean(self):
        self.assertEqual(git(self.tree, "status", "--porcelain"), "")
        self.assertFalse((self.tree / "kernel" / "time" / "ktimer_extra.c").exists())

    def main(self, runner, only=None, **kwargs):
        chosen = mutant_catalogue.select(self.catalogue, only)
        return mutants.main(self.tree, "i386", chosen, db=self.db, results_dir=self.results,
                            work_dir=self.tmp / "work", matrix_path=self.matrix_path, runner=runner,
                            series_hash="f" * 64, **kwargs)

    def statuses(self, run):
        return [(result.mutant.number, result.status, result.killed_by, result.config) for result in run.results]

    def run_loop(self, runner, only=None):
        chosen = mutant_catalogue.select(self.catalogue, only)
        return quiet(mutants.run_mutants, self.tree, "i386", chosen, runner, self.configurations,
                     self.tmp / "work")[0]


class RunTest(MutantRunTestCase):
    def test_the_whole_run(self):
        runner = FakeRunner(self.tree, default_kills, user_kills)
        code, out, _ = quiet(self.main, runner)
        self.assertEqual(code, 0)   # every mutant killed, or a known equivalent that survived
        self.assert_clean()
        self.assertEqual(runner.calls, [
            # the baseline: the union of the configurations, default's build dir built once, and the user suite
            (None, "default", False, "baseline"), (None, "lowres", True, "baseline"), (None, "up", False, "baseline"),
            (None, "user", None, "baseline"),
            # 01 survives default and dies in lowres (a boot of the build dir default built for it)
            ("01", "default", False, "01-forward-off-by-one"), ("01", "lowres", True, "01-forward-off-by-one"),
            # 02 passes KUnit, the user-space suite kills it
            ("02", "default", False, "02-rearm-keeps-expired"), ("02", "user", None, "02-rearm-keeps-expired"),
            ("03", "default", False, "03-forward-no-init"),
            ("10", "up", False, "10-forward-late-new-file"),
        ])
        report = json.loads((self.results / "mutants.json").read_text())
        self.assertEqual([(m["id"][:2], m["status"], m["killed_by"], m["decided_by"]) for m in report["mutants"]], [
            ("01", "killed", ["ktimer_modes.ktimer_forward_periods"], "lowres"),
            ("02", "killed", ["user: kt_itimer"], "user"),
            ("03", "equivalent", [], None),
            ("10", "killed", ["crash", "log: panic"], "up")])
        self.assertEqual((report["killed"], report["judged"], report["score"], report["complete"]), (3, 3, 1.0, True))
        self.assertEqual(report["baseline"], ["i386-default", "i386-lowres", "i386-up", "i386-user"])
        self.assertIn("[1/4] 01-forward-off-by-one: ktimer_forward() treats a timer due right now as not yet due "
                      "(default lowres)", out)
        self.assertIn("[1/4] 01-forward-off-by-one: killed by ktimer_modes.ktimer_forward_periods [lowres] (0s)", out)
        self.assertIn("[2/4] 02-rearm-keeps-expired: ktimer_rearm() leaves the timer marked expired (default, user)",
                      out)
        self.assertIn("score: 3/3 killed (100.0%)", out)
        with closing(results_db.connect(self.db)) as connection:
            rows = results_db.mutant_results(connection)
        self.assertEqual([(row["mutant"], row["status"]) for row in rows],
                         [("01-forward-off-by-one", "killed"), ("02-rearm-keeps-expired", "killed"),
                          ("03-forward-no-init", "equivalent"), ("10-forward-late-new-file", "killed")])
        self.assertEqual(rows[0]["tree_head"], git(self.tree, "rev-parse", "HEAD"))
        self.assertEqual(rows[0]["series_hash"], "f" * 64)

    def test_survivors_and_exit_status(self):
        runner = FakeRunner(self.tree)
        code, out, _ = quiet(self.main, runner, only=["01", "03"])
        self.assertEqual(code, 1)
        self.assertIn("survived (no test noticed them", out)
        self.assertIn("  01-forward-off-by-one: ktimer_forward() treats a timer due right now as not yet due "
                      "(Expect: ktimer_user_conv.ktimer_forward_test)", out)
        self.assertIn("score: 0/1 killed (0.0%)", out)
        self.assert_clean()
        code, _, _ = quiet(self.main, FakeRunner(self.tree, default_kills), only=["03"])
        self.assertEqual(code, 0)   # a known equivalent mutant that survives is no failure

    def test_the_first_configuration_that_kills_ends_the_mutant(self):
        runner = FakeRunner(self.tree, lambda config, mutant: document("TIMEOUT") if mutant else document())
        run = self.run_loop(runner, only=["01", "02"])
        self.assertEqual(self.statuses(run), [(1, "killed", ["timeout"], "default"),
                                              (2, "killed", ["timeout"], "default")])
        self.assertEqual([call[:2] for call in runner.calls if call[0]], [("01", "default"), ("02", "default")])

    def test_a_killed_mutant_marked_equivalent_or_killed_by_the_unexpected_gets_a_note(self):
        runner = FakeRunner(self.tree, lambda config, mutant: document("FAIL", failing=["x"]) if mutant else
                            document())
        run = self.run_loop(runner, only=["01", "03"])
        self.assertEqual([result.status for result in run.results], ["killed", "killed"])
        self.assertIn("not by what `Expect:` names (ktimer_user_conv.ktimer_forward_test)", run.results[0].note)
        self.assertIn("drop that line", run.results[1].note)

    def test_a_user_mutant_whose_configurations_do_not_build_default_gets_default_added(self):
        up, default = self.configurations["up"], self.configurations["default"]
        mutant = mutant_catalogue.Mutant("07-x", 7, "x", Path("07-x.patch"), configs=("up",), user=True)
        self.assertEqual(mutants.configurations_for(mutant, self.configurations, "i386", True), [up, default])
        self.assertEqual(mutants.configurations_for(mutant, self.configurations, "i386", False), [up])
        lowres = mutant_catalogue.Mutant("08-x", 8, "x", Path("08-x.patch"), configs=("lowres",), user=True)
        self.assertEqual(mutants.configurations_for(lowres, self.configurations, "i386", True),
                         [self.configurations["lowres"]])

    def test_without_a_user_space_suite_on_the_arch_user_mutants_run_kunit_only(self):
        runner = FakeRunner(self.tree, user_supported=False)
        _, out, _ = quiet(self.main, runner, only=["02"])
        self.assertIn("`User: yes` mutants run KUnit only", out)
        self.assertNotIn("user", [call[1] for call in runner.calls])

    def test_configurations_of_another_arch_skip_the_mutant(self):
        self.matrix_path.write_text(self.matrix_path.read_text() + "[kasan]\narches = arm\n")
        write(self.tmp / "catalogue" / "04-arm-only.patch",
              "Mutant: only on arm\nConfigs: kasan\n" + (CATALOGUE / "01-forward-off-by-one.patch").read_text()
              .split("\n\n", 1)[1])
        self.catalogue = mutant_catalogue.load(self.tmp / "catalogue")
        runner = FakeRunner(self.tree)
        code, out, _ = quiet(self.main, runner)
        self.assertEqual(code, 0)
        self.assertIn("[1/1] 04-arm-only: skipped (0s)", out)
        self.assertIn("its configurations (kasan) do not run on i386", out)
        self.assertEqual(runner.calls, [])

    def test_an_unknown_configuration_is_an_error_before_anything_runs(self):
        self.matrix_path.write_text("[default]\nby_default = yes\n")
        runner = FakeRunner(self.tree)
        error, _, _ = quiet_raises(self, ToolError, self.main, runner)
        self.assertIn("01-forward-off-by-one.patch: unknown configuration 'lowres'", error.message)
        self.assertEqual(runner.calls, [])


class PanickingTest(unittest.TestCase):
    def test_mutant_boots_panic_on_an_oops_and_keep_their_own_arguments(self):
        plain = matrix.Configuration(name="users-off", kernel_args=("ktimer.users=0",))
        booted = mutants.panicking(plain)
        self.assertEqual(booted.kernel_args, ("ktimer.users=0", "oops=panic"))
        self.assertEqual((booted.name, booted.build_name), ("users-off", "default"))
        self.assertEqual(plain.kernel_args, ("ktimer.users=0",))


class StatusTest(MutantRunTestCase):
    def test_a_mutant_that_does_not_apply_is_stale_and_the_run_goes_on(self):
        source = self.tree / SOURCE
        source.write_text(source.read_text().replace("if (now < timer->expires)", "if (now < timer->expires + 0)"))
        git(self.tree, "commit", "-q", "-am", "ktimers: change the line mutant 01 changes")
        run = self.run_loop(FakeRunner(self.tree, default_kills, user_kills), only=["01", "02"])
        self.assertEqual([result.status for result in run.results], ["stale", "killed"])
        self.assertIn("patch failed: kernel/time/ktimer.c", run.results[0].detail)
        self.assert_clean()

    def test_a_mutant_whose_kernel_does_not_build_is_stillborn(self):
        build_log = write(self.tmp / "build.log", "CC kernel/time/ktimer.c\nktimer.c:9: error: 'overrun' undeclared\n")

        def kunit(config, mutant):
            return dict(document("BUILD_ERROR", built=False), build_log=str(build_log)) if mutant else document()

        runner = FakeRunner(self.tree, kunit)
        code, out, _ = quiet(self.main, runner, only=["01"])
        self.assertEqual(code, 1)
        self.assertEqual([call[1] for call in runner.calls if call[0]], ["default"])   # lowres not tried
        self.assertIn("stillborn (the mutated kernel does not build: fix the mutant):\n"
                      "  01-forward-off-by-one: ktimer_forward() treats a timer due right now as not yet due\n"
                      "      CC kernel/time/ktimer.c\n      ktimer.c:9: error: 'overrun' undeclared", out)

    def test_a_run_that_cannot_judge_is_an_error(self):
        runner = FakeRunner(self.tree, lambda config, mutant: document("INFRA_ERROR") if mutant else document())
        run = self.run_loop(runner, only=["01"])
        self.assertEqual((run.results[0].status, run.results[0].detail), ("error", "INFRA_ERROR problem"))


class RestoreTest(MutantRunTestCase):
    def test_a_runner_that_raises_a_tool_error_leaves_a_clean_tree_and_the_run_goes_on(self):
        def kunit(config, mutant):
            if mutant == "03":
                raise ToolError("cannot start kunit.py")
            return document()

        run = self.run_loop(FakeRunner(self.tree, kunit), only=["03", "10"])
        self.assertEqual([(r.status, r.detail) for r in run.results],
                         [("error", "cannot start kunit.py"), ("survived", "")])
        self.assert_clean()

    def test_ctrl_c_restores_the_tree_and_keeps_the_results_so_far(self):
        def kunit(config, mutant):
            if mutant == "10":
                raise KeyboardInterrupt
            return document()

        _, out, _ = quiet_raises(self, KeyboardInterrupt, self.main, FakeRunner(self.tree, kunit))
        self.assert_clean()
        report = json.loads((self.results / "mutants.json").read_text())
        self.assertFalse(report["complete"])
        self.assertEqual([m["id"][:2] for m in report["mutants"]], ["01", "02", "03"])
        self.assertIn("stopped; the mutants done so far are in", out)
        self.assertFalse(self.db.exists())      # only complete runs are recorded

    def test_a_tree_that_cannot_be_restored_stops_the_run_with_instructions(self):
        def kunit(config, mutant):
            if mutant:
                write(self.tree / "MAINTAINERS", "edited behind the mutant's back\n")
            return document()

        runner = FakeRunner(self.tree, kunit)
        error, _, _ = quiet_raises(self, ToolError, self.main, runner, only=["01", "02"])
        self.assertIn("could not restore", error.message)
        self.assertIn("after mutant 01-forward-off-by-one", error.message)
        self.assertIn("?? MAINTAINERS", error.message)
        self.assertIn("checkout HEAD -- kernel/time/ktimer.c", error.hint)
        self.assertIn("apply --tree", error.hint)
        self.assertEqual({call[0] for call in runner.calls}, {None, "01"})   # 02 never applied
        self.assertEqual(git(self.tree, "status", "--porcelain"), "?? MAINTAINERS")  # the mutant itself is out

    def test_a_failing_baseline_stops_before_any_mutant(self):
        runner = FakeRunner(self.tree, lambda config, mutant: document("FAIL", failing=["flaky"]))
        error, _, _ = quiet_raises(self, ToolError, self.main, runner, only=["01"])
        self.assertIn("the baseline i386-default on the unmutated tree is FAIL", error.message)
        self.assertIn("measures nothing", error.message)
        self.assertEqual(runner.calls, [(None, "default", False, "baseline")])
        error, _, _ = quiet_raises(self, ToolError, self.main, FakeRunner(self.tree, user=lambda m: document("CRASH")),
                                   only=["02"])
        self.assertIn("the baseline i386 own user-space suite on the unmutated tree is CRASH", error.message)
        self.assertFalse((self.results / "mutants.json").exists())


class TreeCheckTest(MutantRunTestCase):
    def test_a_tree_that_is_not_prepared(self):
        (self.tree / "tools" / "testing" / "kunit" / "kunit.py").unlink()
        git(self.tree, "commit", "-q", "-am", "no kunit.py")
        error, _, _ = quiet_raises(self, ToolError, mutant_tree.check, self.tree)
        self.assertIn("is not a prepared kernel tree", error.message)
        self.assertIn("make tree apply", error.hint)

    def test_a_tree_without_the_series(self):
        git(self.tree, "checkout", "-q", "base")
        error, _, _ = quiet_raises(self, ToolError, mutant_tree.check, self.tree)
        self.assertIn("the ktimers series is not applied", error.message)
        self.assertIn("HEAD is detached", error.message)
        git(self.tree, "checkout", "-q", "-b", "other")
        self.assertIn("HEAD is on other", quiet_raises(self, ToolError, mutant_tree.check, self.tree)[0].message)

    def test_a_dirty_tree(self):
        write(self.tree / SOURCE, "edited\n")
        runner = FakeRunner(self.tree)
        error, _, _ = quiet_raises(self, ToolError, self.main, runner)
        self.assertIn("has local modifications", error.message)
        self.assertIn(f" M {SOURCE}", error.message)
        self.assertIn("apply --tree", error.hint)
        self.assertEqual(runner.calls, [])
        mutant_tree.restore(self.tree, self.catalogue[0])   # restore takes the edit out, too
        mutant_tree.check(self.tree)


class CliTest(MutantRunTestCase):
    def cli(self, *args):
        return quiet(ktimers.main, ["mutants", "--mutants-dir", str(CATALOGUE), *args])

    def test_list_needs_no_kernel(self):
        code, out, _ = self.cli("--list", "--tree", str(self.tmp / "no-tree"))
        self.assertEqual(code, 0)
        self.assertEqual(len(out.splitlines()), 5)
        self.assertIn("03-forward-no-init", out)
        code, out, _ = self.cli("--list", "--only", "3", "10")
        self.assertEqual([line.split()[0] for line in out.splitlines()], ["03-forward-no-init",
                                                                          "10-forward-late-new-file", "2"])

    def test_catalogue_errors(self):
        code, _, err = quiet(ktimers.main, ["mutants", "--list", "--mutants-dir", str(self.tmp / "none")])
        self.assertEqual(code, 2)
        self.assertIn("no mutant catalogue", err)
        code, _, err = self.cli("--list", "--only", "99")
        self.assertEqual(code, 2)
        self.assertIn("no mutant 99 in the catalogue", err)

    def test_a_run_through_the_command_line(self):
        created = {}

        def runner(tree, arch, **options):
            created.update(options, tree=tree, arch=arch)
            return FakeRunner(tree, default_kills, user_kills)

        with mock.patch.object(mutants, "KernelRunner", runner):
            code, out, _ = self.cli("--tree", str(self.tree), "--matrix", str(self.matrix_path), "--results-dir",
                                    str(self.results), "--work-dir", str(self.tmp / "work"), "--db", str(self.db),
                                    "--only", "01", "--timeout", "77", "--no-ccache")
        self.assertEqual(code, 0)
        self.assertEqual((created["tree"], created["arch"], created["timeout"], created["use_ccache"]),
                         (self.tree, "i386", 77, False))
        self.assertIn("score: 1/1 killed (100.0%)", out)
        self.assertTrue((self.results / "mutants.json").is_file())
        self.assertTrue(self.db.is_file())
        self.assert_clean()

    def test_an_unknown_arch(self):
        code, _, err = self.cli("--arch", "vax", "--tree", str(self.tree))
        self.assertEqual(code, 2)
        self.assertIn("vax", err)


class KernelRunnerTest(MutantRunTestCase):
    def test_the_own_user_space_suite_is_group_own_of_the_plan(self):
        plan = mutants.own_plan()
        self.assertTrue(plan.tests)
        self.assertTrue(all(test.name.startswith("kt_") for test in plan.tests))
        self.assertIn("kt_timerfd", [test.name for test in plan.tests if test.group == "own"])
        self.assertIn("kt_clock_step", [test.name for test in plan.tests if test.group != "own"])
        self.assertEqual(plan.left_out, {})
        other = write(self.tmp / "plan", "[posix_timers]\ntimeout = 60\n")
        error, _, _ = quiet_raises(self, ToolError, mutants.own_plan, other)
        self.assertIn("has no test in group `own`", error.message)

    def test_what_it_hands_run_suites_and_run_arch(self):
        runner = mutants.KernelRunner(self.tree, "i386", timeout=77, kunit_build_root=self.tmp / "kunit", jobs=3,
                                      use_ccache=False)
        self.assertEqual((runner.user_supported, runner.user_build), (True, "default"))
        self.assertFalse(mutants.KernelRunner(self.tree, "x86_64").user_supported)
        configuration = self.configurations["lowres"]
        with mock.patch("kunit.run.run_suites", return_value=document()) as run_suites:
            runner.kunit(configuration, True, self.tmp / "work" / "01-x")
        run_suites.assert_called_once_with(self.tree, "i386", config=mutants.panicking(configuration), timeout=77, jobs=3,
                                           use_ccache=False, results_root=self.tmp / "work" / "01-x",
                                           kunit_build_root=self.tmp / "kunit", boot_only=True)
        with mock.patch("guest.selftests.run_arch", return_value=document()) as run_arch:
            runner.user(self.tmp / "work" / "01-x")
        (tree, arch, plan, known), options = run_arch.call_args
        self.assertEqual((tree, arch), (self.tree, "i386"))
        self.assertEqual({test.group for test in plan.tests}, {"own", "kt_clock_step"})
        self.assertIsInstance(known, dict)
        self.assertEqual(options, {"results_root": self.tmp / "work" / "01-x", "kunit_build_root": self.tmp / "kunit"})
