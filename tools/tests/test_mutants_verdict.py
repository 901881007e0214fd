"""What a run of a mutant's kernel says about it (mutants/verdict.py), on results documents made by the
same code as kunit_run.run_suites's (helpers.kunit_result_dir) and on the guest selftests' shape."""

import copy
import json

from helpers import DATA_DIR, REAL_SUITES, TempDirTestCase, kunit_result_dir

from mutants import verdict as mutant_verdict
from mutants.verdict import ERROR, KILLED, PASS, STILLBORN

USER_DOC = json.loads((DATA_DIR / "real-i386-selftests-results.json").read_text())


def user_document(status="FAIL", failing=(), problems=(), findings=()):
    """The guest selftests' results.json (guest_report.results_document) with these programs failing
    on the ktimer path."""
    document = copy.deepcopy(USER_DOC)
    document.update(status=status, problems=list(problems), findings=list(findings))
    for column in document["suites"]:
        column["children"].append({"name": "kt_itimer", "status": "PASS", "log": []})
    for name in failing:
        child = next(c for c in document["suites"][0]["children"] if c["name"] == name)
        child["status"] = "FAIL"
        document["suites"][0]["status"] = "FAIL"
    return document


class KunitOutcomeTest(TempDirTestCase):
    def outcome(self, console, **kwargs):
        _, document = kunit_result_dir(self.tmp / "results", console, **kwargs)
        return mutant_verdict.outcome(document)

    def test_a_passing_run_kills_nothing(self):
        outcome = self.outcome("real-i386-default.log")
        self.assertEqual((outcome.verdict, outcome.killed_by), (PASS, []))

    def test_failing_cases_and_log_findings_kill(self):
        outcome = self.outcome("modern-mixed.log", expected=())
        self.assertEqual(outcome.verdict, KILLED)
        self.assertEqual(outcome.killed_by, ["ktimer_modes.ktimer_start_rel", "ktimer_modes.ktimer_forward_periods",
                                             "log: warning"])

    def test_a_crash_kills_without_blaming_the_suites_it_cut_off(self):
        outcome = self.outcome("crashed-i386-panic-mid-suite.log")
        self.assertEqual(outcome.verdict, KILLED)
        self.assertEqual(outcome.killed_by, ["crash", "ktimer_realclock.ktimer_real_order_test", "log: bug",
                                             "log: panic"])
        self.assertIn("Kernel panic", outcome.detail)

    def test_a_timeout_kills(self):
        outcome = self.outcome("real-i386-ktimers-timeout.log", timeout=1200, expected=())
        self.assertEqual(outcome.killed_by, ["timeout", "log: rcu-stall"])

    def test_a_suite_that_no_longer_reports_kills(self):
        outcome = self.outcome("real-i386-default.log", expected=REAL_SUITES + ("ktimer_gone",))
        self.assertEqual(outcome.killed_by, ["ktimer_gone (never reported)"])

    def test_a_kernel_that_does_not_build_is_stillborn_with_the_compiler_error(self):
        outcome = self.outcome(None, build_failed=True)
        self.assertEqual((outcome.verdict, outcome.killed_by), (STILLBORN, []))
        self.assertIn("kernel/time/ktimer.c:12:1: error: expected ';'", outcome.detail)

    def test_configuration_errors_are_stillborn_and_infrastructure_errors_judge_nothing(self):
        outcome = mutant_verdict.outcome({"status": "CONFIG_ERROR", "problems": ["bad option"],
                                          "build_log": str(self.tmp / "missing.log")})
        self.assertEqual((outcome.verdict, outcome.detail), (STILLBORN, "bad option"))
        outcome = mutant_verdict.outcome({"status": "INFRA_ERROR", "problems": ["QEMU is not installed"]})
        self.assertEqual((outcome.verdict, outcome.detail), (ERROR, "QEMU is not installed"))


class UserOutcomeTest(TempDirTestCase):
    def test_pass(self):
        self.assertEqual(mutant_verdict.outcome(USER_DOC, user=True).verdict, PASS)

    def test_a_failing_program_kills(self):
        outcome = mutant_verdict.outcome(user_document(failing=["kt_itimer"]), user=True)
        self.assertEqual((outcome.verdict, outcome.killed_by), (KILLED, ["user: kt_itimer"]))

    def test_a_crashed_guest_and_kernel_log_findings_kill(self):
        document = user_document(status="CRASH", problems=["ktimer column: the guest stopped\n  -> details"],
                                 findings=[{"kind": "oops", "line": 3, "text": "Oops", "column": "ktimer"}])
        outcome = mutant_verdict.outcome(document, user=True)
        self.assertEqual(outcome.killed_by, ["user: crash", "user: log: oops"])
        self.assertEqual(outcome.detail, "ktimer column: the guest stopped")

    def test_a_failure_without_a_failing_program_names_the_first_problem(self):
        problem = "ktimer column: the `itimer` counter did not grow (0 after the tests): the itimer syscalls ..."
        outcome = mutant_verdict.outcome(user_document(problems=[problem]), user=True)
        self.assertEqual(outcome.verdict, KILLED)
        self.assertEqual(outcome.killed_by, ["user: " + problem[:100]])


class HelpersTest(TempDirTestCase):
    def test_short(self):
        self.assertEqual(mutant_verdict.short(["a", "b"]), "a, b")
        self.assertEqual(mutant_verdict.short(["a", "b", "c", "d", "e"]), "a, b, c (+2 more)")

    def test_expected_killer(self):
        expect = ("ktimer_user_conv.ktimer_forward_test", "ktimer_modes", "kt_itimer")
        self.assertTrue(mutant_verdict.expected_killer(["ktimer_user_conv.ktimer_forward_test"], expect))
        self.assertTrue(mutant_verdict.expected_killer(["crash", "ktimer_modes.ktimer_start_rel"], expect))
        self.assertTrue(mutant_verdict.expected_killer(["user: kt_itimer"], expect))
        self.assertFalse(mutant_verdict.expected_killer(["ktimer_modes_other.x", "log: warning"], expect))
