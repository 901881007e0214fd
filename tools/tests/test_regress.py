"""Regression logic (results/regress.py): every transition class, crashes, builds and the run's verdict."""

import unittest

import helpers  # noqa: F401 -- puts tools/ on sys.path

from results import regress
from results.regress import Snapshot


def compare(old_tests, new_tests, **kwargs):
    old = Snapshot("previous", tests=old_tests, **{k[4:]: v for k, v in kwargs.items() if k.startswith("old_")})
    new = Snapshot("latest", tests=new_tests, **{k[4:]: v for k, v in kwargs.items() if k.startswith("new_")})
    return regress.compare(old, new)


def kinds(comparison):
    return [(change.kind, change.path, change.old, change.new) for change in comparison.changes]


class TransitionTest(unittest.TestCase):
    def test_pass_to_fail_error_or_miss_is_a_regression(self):
        for bad in ("FAIL", "ERROR", "MISS"):
            with self.subTest(bad=bad):
                comparison = compare({"s.c": "PASS"}, {"s.c": bad})
                self.assertEqual(kinds(comparison), [("regression", "s.c", "PASS", bad)])
                self.assertEqual(comparison.regressions, 1)

    def test_fail_error_or_miss_to_pass_is_a_fix(self):
        for bad in ("FAIL", "ERROR", "MISS"):
            with self.subTest(bad=bad):
                comparison = compare({"s.c": bad}, {"s.c": "PASS"})
                self.assertEqual(kinds(comparison), [("fix", "s.c", bad, "PASS")])
                self.assertEqual(comparison.regressions, 0)

    def test_other_status_changes_are_changed_not_regressions(self):
        for old, new in (("PASS", "SKIP"), ("SKIP", "PASS"), ("SKIP", "FAIL"), ("FAIL", "ERROR"),
                         ("ERROR", "MISS"), ("MISS", "SKIP")):
            with self.subTest(old=old, new=new):
                comparison = compare({"s.c": old}, {"s.c": new})
                self.assertEqual(kinds(comparison), [("changed", "s.c", old, new)])
                self.assertEqual(comparison.regressions, 0)

    def test_unchanged(self):
        for status in ("PASS", "FAIL", "SKIP", "ERROR", "MISS"):
            self.assertEqual(compare({"s.c": status}, {"s.c": status}).changes, [])

    def test_new_and_removed_tests_are_listed_topmost_with_their_count(self):
        comparison = compare({"a": "PASS", "a.x": "PASS", "old": "PASS", "old.c": "PASS", "old.c.p": "PASS"},
                             {"a": "PASS", "a.x": "PASS", "a.y": "FAIL", "fresh": "PASS", "fresh.c": "PASS"})
        self.assertEqual(kinds(comparison), [("new", "a.y", None, "FAIL"), ("new", "fresh", None, "PASS"),
                                             ("removed", "old", "PASS", None)])
        self.assertEqual([change.count for change in comparison.changes], [1, 2, 3])
        self.assertEqual(comparison.regressions, 0)

    def test_regressions_and_fixes_are_listed_most_specific(self):
        comparison = compare({"s": "PASS", "s.c": "PASS", "s.c.p1": "PASS", "s.c.p2": "PASS",
                              "t": "FAIL", "t.c": "FAIL"},
                             {"s": "FAIL", "s.c": "FAIL", "s.c.p1": "FAIL", "s.c.p2": "PASS",
                              "t": "PASS", "t.c": "PASS"})
        self.assertEqual(kinds(comparison), [("regression", "s.c.p1", "PASS", "FAIL"), ("fix", "t.c", "FAIL", "PASS")])
        self.assertEqual(comparison.counts()["regression"], 1)


class CrashTest(unittest.TestCase):
    FULL = {"a": "PASS", "a.c1": "PASS", "a.c2": "PASS", "a.c2.p1": "PASS", "a.c2.p2": "PASS", "a.c3": "PASS",
            "b": "PASS", "b.c1": "PASS"}

    def test_tests_under_a_cut_suite_never_ran_and_the_running_one_is_kept(self):
        # The kernel died in a.c2 after p1: a.c2 and a are ERROR, a.c2's p2 is the parser's unnamed MISS
        # stand-in, a.c3 never started, and suite b is a missing suite (MISS, no cases).
        crashed = {"a": "ERROR", "a.c1": "PASS", "a.c2": "ERROR", "a.c2.p1": "PASS", "a.c2.unreported_2": "MISS",
                   "a.unreported_3": "MISS", "b": "MISS"}
        comparison = compare(self.FULL, crashed, new_run_status="CRASH")
        self.assertEqual(kinds(comparison), [
            ("regression", "a.c2", "PASS", "ERROR"), ("regression", "a.c2.p2", "PASS", "MISS"),
            ("regression", "a.c3", "PASS", "MISS"), ("regression", "b.c1", "PASS", "MISS")])
        self.assertEqual([c.implied for c in comparison.changes], [False, True, True, True])
        self.assertEqual(comparison.of("new"), [])       # the stand-ins are not new tests
        self.assertEqual(comparison.of("removed"), [])   # nor are the tests that never ran removed
        self.assertIsNone(comparison.run)                # the test regressions already say it

    def test_a_test_absent_under_a_passing_suite_is_removed(self):
        self.assertEqual(kinds(compare({"a": "PASS", "a.c": "PASS"}, {"a": "PASS"})),
                         [("removed", "a.c", "PASS", None)])

    def test_a_brand_new_suite_that_never_reported_is_new(self):
        self.assertEqual(kinds(compare({"a": "PASS"}, {"a": "PASS", "z": "MISS"})), [("new", "z", None, "MISS")])


class BuildAndRunTest(unittest.TestCase):
    def test_build_failure_after_a_good_build_is_one_regression_without_test_noise(self):
        comparison = compare({"a": "PASS"}, {}, new_build_status="FAIL", new_run_status="BUILD_ERROR")
        self.assertEqual(comparison.build, "build failed")
        self.assertEqual(comparison.changes, [])
        self.assertEqual(comparison.regressions, 1)

    def test_a_build_that_still_fails_is_not_a_new_regression(self):
        comparison = compare({}, {}, old_build_status="FAIL", new_build_status="FAIL")
        self.assertEqual((comparison.build, comparison.regressions), ("build still fails", 0))

    def test_a_build_fixed(self):
        comparison = compare({}, {"a": "PASS"}, old_build_status="FAIL")
        self.assertEqual((comparison.build, comparison.regressions, comparison.changes), ("build fixed", 0, []))

    def test_a_worse_verdict_without_test_regressions_is_a_run_regression(self):
        comparison = compare({"a": "PASS"}, {"a": "PASS"}, new_run_status="FAIL")   # a new kernel WARNING, say
        self.assertEqual(comparison.run, "PASS -> FAIL")
        self.assertEqual(comparison.regressions, 1)
        self.assertIsNone(compare({"a": "PASS"}, {"a": "PASS"}, old_run_status="FAIL",
                                  new_run_status="FAIL").run)

    def test_nothing_to_compare_with(self):
        comparison = regress.compare(None, Snapshot("latest", tests={"a": "FAIL"}))
        self.assertEqual((comparison.changes, comparison.regressions), ([], 0))
