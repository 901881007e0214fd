"""kunit/crosscheck.py: kunit.py's own parser (Linux 6.12's, tests/data/kunit-6.12) against ktap.py."""

import sys
import unittest
from unittest import mock

from helpers import DATA_DIR, TempDirTestCase, data_lines, write

from kunit import crosscheck, ktap

TREE = DATA_DIR / "kunit-6.12"       # stands in for build/linux: tools/testing/kunit/kunit_parser.py


def check(lines, run=None):
    return crosscheck.check(TREE, lines, run if run is not None else ktap.parse(lines))


class AgreeTest(unittest.TestCase):
    """The consoles both parsers read right: no disagreement, and what kunit.py prints is kept."""

    def test_real_console_agrees(self):
        result = check(data_lines("real-i386-default.log"))
        self.assertTrue(result.checked)
        self.assertEqual((result.disagreements, result.error), ([], None))
        self.assertEqual(len(result.statuses), 364)      # 13 suites, their cases and parameters
        self.assertEqual(result.summary, "Testing complete. Ran 330 tests: passed: 320, skipped: 10")
        self.assertIn("[PASSED] ktimer_modes", result.printed)
        self.assertEqual(result.to_dict(), {"checked": True, "tests": 364, "summary": result.summary,
                                            "disagreements": [], "error": None, "note": None})
        self.assertFalse(crosscheck.failed(result.to_dict()))
        self.assertEqual(crosscheck.problems(result.to_dict()), [])

    def test_a_kernel_message_inside_a_ktap_header(self):
        # i386 soak boot 132 (issue 26): the TSC's late calibration printed between a case's
        # "KTAP version 1" and its "# Subtest:", and kunit_parser lost count of every case after it
        lines = """KTAP version 1
1..1
    KTAP version 1
    # Subtest: suite
    1..2
        KTAP version 1
        # Subtest: first_test
        ok 1 a
    ok 1 first_test
        KTAP version 1
tsc: Refined TSC clocksource calibration: 2095.978 MHz
        # Subtest: second_test
clocksource: Switched to clocksource tsc
        ok 1 a
kunit_try_catch (50) used greatest stack depth: 6592 bytes left
    ok 2 second_test
ok 1 suite
""".splitlines()
        result = check(lines)
        self.assertEqual((result.disagreements, result.error), ([], None))
        self.assertEqual(result.statuses["suite.second_test.a"], ktap.PASS)

    def test_every_fixture_console_agrees(self):
        for path in sorted(DATA_DIR.glob("*.log")):
            with self.subTest(path.name):
                lines = path.read_text(errors="replace").splitlines()
                self.assertEqual(check(lines).disagreements, [])

    def test_a_crash_mid_suite_compares_the_unreported_cases_and_suites(self):
        result = check(data_lines("crashed-i386-panic-mid-suite.log"))
        self.assertEqual(result.disagreements, [])
        # kunit_parser's nameless crashed subtests are ktap.py's MISS, named alike on both sides
        self.assertEqual(result.statuses["ktimer_realclock.(unreported #10)"], ktap.ERROR)
        self.assertEqual(result.statuses["(unreported #7)"], ktap.ERROR)      # a suite that never started
        ours = crosscheck.ktap_statuses(ktap.parse(data_lines("crashed-i386-panic-mid-suite.log")))
        self.assertEqual((ours["ktimer_realclock.(unreported #10)"], ours["(unreported #7)"]),
                         (ktap.MISS, ktap.MISS))
        self.assertEqual(set(ours), set(result.statuses))

    def test_no_ktap_at_all(self):
        result = check(data_lines("bench-i386-crashed.log"))
        self.assertEqual((result.statuses, result.disagreements), ({}, []))
        self.assertIn("Could not find any KTAP output", result.printed)

    def test_no_tests_run_is_kunit_pys_own_judgement(self):
        lines = ["TAP version 14", "1..1", "  # Subtest: suite", "  1..1", "    # Subtest: case", "  ok 1 - case",
                 "ok 1 - suite"]
        result = check(lines)
        self.assertEqual(result.statuses["suite.case"], crosscheck.NO_TESTS)
        self.assertEqual(result.disagreements, [])

    def test_the_parser_prints_to_us_and_leaves_its_stdout_alone(self):
        check(data_lines("kunitpy-i386-time_test.log"))
        parser = sys.modules["kunit_parser"]
        self.assertIs(parser.stdout, sys.modules["kunit_printer"].stdout)
        self.assertFalse(list(TREE.rglob("__pycache__")))     # nothing written into the tree


class DisagreeTest(unittest.TestCase):
    def test_a_status_ktap_py_got_wrong_is_reported(self):
        lines = data_lines("real-i386-default.log")
        run = ktap.parse(lines)
        case = run.suite("ktimer_modes").children[0]
        case.status = ktap.FAIL
        result = check(lines, run)
        self.assertEqual(result.disagreements, [f"ktimer_modes.{case.name}: ktap.py FAIL, kunit_parser PASS"])
        entry = result.to_dict()
        self.assertTrue(crosscheck.failed(entry))
        self.assertIn("disagree on 1 test(s): ktimer_modes.", crosscheck.problems(entry)[0])

    def test_a_test_only_one_parser_saw(self):
        lines = data_lines("crashed-i386-panic-mid-suite.log")
        run = ktap.parse(lines)
        suite = run.suite("ktimer_realclock")
        suite.children = [child for child in suite.children if child.status != ktap.MISS]
        result = check(lines, run)
        self.assertIn("ktimer_realclock.(unreported #10): ktap.py absent, kunit_parser ERROR", result.disagreements)
        run.planned = len(run.suites)     # ktap.py forgetting the suites that never started
        self.assertIn("(unreported #7): ktap.py absent, kunit_parser ERROR", check(lines, run).disagreements)


class NotCheckedTest(TempDirTestCase):
    def test_a_tree_without_kunit_parser_is_not_checked(self):
        write(self.tmp / "tools" / "testing" / "kunit" / "kunit.py", "")
        lines = data_lines("kunitpy-i386-time_test.log")
        result = crosscheck.check(self.tmp, lines, ktap.parse(lines))
        self.assertFalse(result.checked)
        self.assertIn("not checked", result.note)
        self.assertFalse(crosscheck.failed(result.to_dict()))
        self.assertEqual(crosscheck.problems(result.to_dict()), [])
        self.assertFalse(crosscheck.failed(None))

    def test_the_reference_parser_failing_is_a_problem(self):
        lines = data_lines("kunitpy-i386-time_test.log")
        parser, _ = crosscheck.load_parser(TREE)
        with mock.patch.object(parser, "parse_run_tests", side_effect=ValueError("bad line")):
            result = check(lines)
        self.assertFalse(result.checked)
        self.assertEqual(result.error, "kunit_parser: ValueError: bad line")
        self.assertTrue(crosscheck.failed(result.to_dict()))
        self.assertIn("could not check this run", crosscheck.problems(result.to_dict())[0])

    def test_a_parser_that_does_not_import_is_a_problem(self):
        write(self.tmp / "tools" / "testing" / "kunit" / "kunit_parser.py", "import no_such_module_here\n")
        write(self.tmp / "tools" / "testing" / "kunit" / "kunit_printer.py", "")
        self.addCleanup(lambda: [sys.modules.pop(name, None) for name in ("kunit_parser", "kunit_printer")])
        result = crosscheck.check(self.tmp, [], ktap.parse([]))
        self.assertIn("ModuleNotFoundError", result.error)
        self.assertTrue(crosscheck.failed(result.to_dict()))


if __name__ == "__main__":
    unittest.main()
