from pathlib import Path

from helpers import TempDirTestCase, write

from guest import compare as guest_compare, report as guest_report, known_failures, plan as selftest_plan
from guest.compare import OFF, ON
from guest.output import FAIL, PASS, GuestRun, TestRun


def guest(mode, count, statuses):
    run = GuestRun(tests={name: TestRun(name, status=status, how="exit 0" if status == PASS else "exit 1",
                                        seconds=8.1, output=["ok 1 CLOCK_REALTIME"] if status == PASS else
                                        ["Checking tz: [FAILED] expected: -900 got 0"], numbers=[40])
                          for name, status in statuses.items()})
    run.counters = {"before": {"mode": mode, "nanosleep": 0}, "after": {"mode": mode, "nanosleep": count}}
    run.counters_raw = {"after": f"users: {mode}, nanosleep {count}"}
    return run


class ReportTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        plan = selftest_plan.load(write(self.tmp / "plan", "[nanosleep]\ntimeout = 10\n[set-tz]\ntimeout = 10\n"
                                        "[rtcpie]\nrun = no\nwhy = no RTC\n"))
        known = {"set-tz": known_failures.KnownFailure("glibc zeroes the timezone")}
        self.runs = {ON: guest("on", 12, {"nanosleep": PASS, "set-tz": FAIL}),
                     OFF: guest("off", 0, {"nanosleep": PASS, "set-tz": FAIL})}
        self.comparison = guest_compare.compare("i386", plan, {}, self.runs[ON], self.runs[OFF], known)
        self.boots = {ON: 195.0, OFF: 196.0}

    def test_the_two_column_table(self):
        lines = guest_report.report_lines(self.comparison, {c: self.runs[c].counters_raw for c in (ON, OFF)},
                                          self.boots)
        self.assertIn("i386", lines[0])
        self.assertIn("3m15s", lines[0])
        self.assertEqual(lines[1].split(), ["test", "ktimer", "path", "hrtimer", "path", "note"])
        self.assertRegex(lines[3], r"^nanosleep\s+PASS 8s\s+PASS 8s$")
        self.assertRegex(lines[4], r"^set-tz\s+FAIL 8s\s+FAIL 8s\s+known failure on both paths: glibc")
        self.assertRegex(lines[5], r"^rtcpie\s+-\s+-\s+not run: no RTC")
        self.assertIn("`users: on, nanosleep 12`", lines[6])
        self.assertIn("set-tz [ktimer path] measured: Checking tz: [FAILED] expected: -900 got 0", lines[7])

    def test_a_crashed_boot_is_in_the_report(self):
        lines = guest_report.report_lines(self.comparison, {c: self.runs[c].counters_raw for c in (ON, OFF)},
                                          self.boots, ["hrtimer column: QEMU failed (exit 1)"])
        self.assertEqual(lines[-1], "error: hrtimer column: QEMU failed (exit 1)")

    def test_the_results_document_for_summary(self):
        consoles = {ON: Path("c-on.log"), OFF: Path("c-off.log")}
        document = guest_report.results_document(self.comparison, self.runs, self.boots, consoles, [], Path("plan"),
                                                 "PASS", [], 400.0)
        self.assertEqual(document["counts"], {"PASS": 2, "FAIL": 0, "SKIP": 2, "ERROR": 0, "MISS": 0, "total": 4})
        self.assertEqual([suite["name"].split(",")[1].strip().split()[0] for suite in document["suites"]],
                         ["ktimer", "hrtimer"])
        self.assertEqual([case["status"] for case in document["suites"][0]["children"]], ["PASS", "SKIP"])
        self.assertEqual(document["counters"][ON]["after"]["nanosleep"], 12)
        self.assertEqual(document["not_run"], {"rtcpie": "not run: no RTC"})
