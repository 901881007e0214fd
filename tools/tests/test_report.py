"""`make report` and `make baseline` (results/report.py, results/report_html.py, results/baseline.py) on real and crashed runs."""

import json
import re
import shutil
import subprocess
import unittest
from contextlib import closing

from helpers import RecordingTestCase, TempDirTestCase, kunit_result_dir, quiet, quiet_raises, write

from results import baseline
import ktimers
from results import record, report, report_html, db as results_db, summary
from common import ToolError

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class ReportTest(RecordingTestCase):
    def setUp(self):
        super().setUp()
        self.baseline = self.tmp / "baseline.json"
        self.html = self.results / "report.html"

    def make_baseline(self, *pairs):
        with closing(results_db.connect(self.db)) as connection:
            return quiet(baseline.update, connection, list(pairs), self.baseline)[0]

    def report(self, *args):
        return quiet(ktimers.main, ["report", "--db", str(self.db), "--baseline", str(self.baseline),
                                    "--html", str(self.html), *args])

    def test_no_change_passes(self):
        self.record_run("real-i386-default.log")
        self.make_baseline(("i386", "default"))
        self.record_run("real-i386-default.log", hours=1)
        code, out, _ = self.report("--config", "default", "i386")
        self.assertEqual(code, 0)
        self.assertRegex(out, r"i386\s+default\s+2025-12-04 02:00\s+PASS\s+\d+\s+0\s+no changes\s+no changes")
        self.assertEqual(out.splitlines()[-1], f"report: 0 regression(s), 0 fix(es), 0 new, 0 removed, 0 changed; "
                                               f"HTML: {self.html}")
        self.assertTrue(self.html.is_file())

    def test_a_crash_regresses_against_the_previous_run_and_the_baseline(self):
        self.record_run("real-i386-default.log")
        self.make_baseline(("i386", "default"))
        self.record_run("real-i386-default.log", hours=1)
        crashed = self.record_run("crashed-i386-panic-mid-suite.log", hours=2)
        counts = self.results / "report.json"
        code, out, _ = self.report("--config", "default", "--record", str(counts), "i386")
        self.assertEqual(code, 1)
        self.assertIn("REGRESSION i386-default: ktimer_realclock.ktimer_real_order_test: PASS -> ERROR "
                      "[vs previous, baseline]", out)
        store = f"{self.results}/store/{crashed['id'][len('ktimers:'):]}/console.log"
        self.assertIn(f"{store}:1214", out)   # the BUG line, where the kernel died
        self.assertRegex(out, r"REGRESSION i386-default: ktimer_fuzz: 4 test\(s\) PASS -> MISS, never ran")
        recorded = json.loads(counts.read_text())
        self.assertEqual(recorded["regressions"], 75)   # 74 tests that never ran and the one running
        self.assertIn("i386-default: ktimer_realclock.ktimer_real_order_test PASS -> ERROR [vs previous, baseline]",
                      recorded["lines"])
        page = self.html.read_text()
        self.assertIn("ktimer_real_order_test", page)
        link = re.search(r'href="(store/[^"]+/console\.log\.html)#L1214"', page)
        self.assertIsNotNone(link)
        log_page = (self.results / link.group(1)).read_text()
        self.assertIn('<span class="l mark" id="L1214">', log_page)
        self.assertIn("BUG: kernel NULL pointer dereference", log_page)

    def test_fixes_new_and_build_failures(self):
        self.record_run("crashed-i386-panic-mid-suite.log")
        self.record_run("real-arm-default.log", arch="arm")
        self.make_baseline(("i386", "default"), ("arm", "default"))
        self.record_run("real-i386-default.log", hours=1)
        self.record_run(None, hours=1, arch="arm", build_failed=True)
        code, out, _ = self.report("i386", "arm", "--all")
        self.assertEqual(code, 1)
        self.assertIn("fixed i386-default: ktimer_realclock.ktimer_real_order_test: ERROR -> PASS", out)
        self.assertIn("new i386-default: ktimer_realclock.ktimer_real_order_test.boottime: new (PASS)", out)
        self.assertIn("BUILD FAILED arm-default at 2025-12-04 02:00: BUILD_ERROR, no tests ran", out)
        self.assertIn("REGRESSION arm-default: the build failed [vs previous, baseline]", out)
        self.assertRegex(out, r"report: 1 regression\(s\), \d+ fix\(es\), \d+ new")
        self.assertIn("build failed", self.html.read_text())

    def test_a_run_without_a_previous_one_or_a_baseline_entry(self):
        self.record_run("real-arm-default.log", arch="arm")
        write(self.baseline, json.dumps({"runs": {}}))
        code, out, _ = self.report("arm")
        self.assertEqual(code, 0)
        self.assertRegex(out, r"arm\s+default\s+.*\(first run\)\s+\(not in the baseline\)")
        code, out, _ = self.report("--config", "up", "arm")
        self.assertIn("no run recorded", out)
        self.assertEqual(code, 0)

    def test_the_selection_follows_the_matrix_like_the_summary(self):
        self.record_run("real-arm-default.log", arch="arm")
        write(self.baseline, json.dumps({"runs": {}}))
        code, out, _ = self.report("--config", "default", "--config", "kasan", "--selftests", "i386", "arm")
        self.assertEqual(code, 0)
        rows = [line.split()[:2] for line in out.splitlines() if line.startswith(("i386 ", "arm "))]
        self.assertEqual(rows, [["i386", "default"], ["arm", "default"], ["arm", "kasan"], ["i386", "selftests"],
                                ["arm", "selftests"]])   # summary's order; kasan has no i386 (kunit_configs/matrix)

    def test_bad_input_is_a_message(self):
        code, _, err = self.report("i386")
        self.assertEqual(code, 2)
        self.assertIn("no baseline at", err)
        self.assertIn("make baseline", err)
        write(self.baseline, "{broken")
        code, _, err = self.report("i386")
        self.assertIn("is not valid JSON", err)
        write(self.baseline, json.dumps({"runs": {"i386-default": {"status": "PASS"}}}))
        code, _, err = self.report("i386")
        self.assertIn("has no 'runs' with 'tests'", err)
        write(self.baseline, json.dumps({"runs": {}}))
        code, _, err = self.report("i386")
        self.assertEqual(code, 2)
        self.assertIn("no results database at", err)
        write(self.db, "not a database " * 100)
        code, _, err = self.report("i386")
        self.assertIn("is not a usable results database", err)
        code, _, err = self.report("sparc")
        self.assertIn("unknown arch 'sparc'", err)
        for text in (err,):
            self.assertNotIn("Traceback", text)

    def test_nothing_to_report(self):
        self.record_run("real-arm-default.log", arch="arm")
        write(self.baseline, json.dumps({"runs": {}}))
        code, _, err = self.report("--all", "x86_64")
        self.assertEqual(code, 2)
        self.assertIn("nothing to report for x86_64", err)


class BaselineTest(TempDirTestCase):
    def test_update_keeps_other_entries_and_lists_paths_per_status(self):
        results = self.tmp / "results"
        db = results / "results.sqlite"
        path = self.tmp / "baseline.json"
        write(path, json.dumps({"runs": {"x86_64-kcsan": {"status": "PASS", "tests": {"PASS": ["a"]}}}}))
        quiet(record.record, kunit_result_dir(results, "crashed-i386-panic-mid-suite.log")[0], db, self.tmp)
        with closing(results_db.connect(db)) as connection:
            _, _, err = quiet(baseline.update, connection, [("i386", "default"), ("arm", "up")], path)
        self.assertIn("no recorded run of arm-up", err)
        self.assertIn("the baseline for i386-default now expects", err)   # a crashed run as baseline: said so
        runs = baseline.load(path)
        self.assertEqual(sorted(runs), ["i386-default", "x86_64-kcsan"])
        entry = runs["i386-default"]
        self.assertEqual((entry["status"], entry["build_status"]), ("CRASH", "PASS"))
        self.assertIn("ktimer_realclock.ktimer_real_order_test", entry["tests"]["ERROR"])
        self.assertEqual(entry["tests"]["PASS"], sorted(entry["tests"]["PASS"]))
        snapshot = baseline.snapshot(entry)
        self.assertEqual(snapshot.tests["ktimer_smp"], "MISS")

    def test_nothing_recorded(self):
        results = self.tmp / "results"
        quiet(record.record, kunit_result_dir(results, "real-arm-default.log", arch="arm")[0],
              results / "results.sqlite", self.tmp)
        with closing(results_db.connect(results / "results.sqlite")) as connection:
            error = quiet_raises(self, ToolError, baseline.update, connection, [("i386", "up")],
                                 self.tmp / "b.json")[0]
        self.assertIn("nothing to write", str(error))
        self.assertFalse((self.tmp / "b.json").exists())

    def test_the_committed_baseline_loads_and_covers_the_ci_runs(self):
        runs = baseline.load()
        for label in ("i386-default", "i386-lowres", "i386-users-off", "i386-up", "i386-selftests",
                      "arm-default", "arm-lowres", "arm-users-off", "arm-up", "arm-kasan", "arm-selftests"):
            self.assertIn(label, runs)
            self.assertEqual(runs[label]["build_status"], "PASS")
            self.assertTrue(runs[label]["tests"].get("PASS"))


class SummaryGateTest(TempDirTestCase):
    """`make test` fails on a regression; the closing line stays last."""

    def test_regressions_are_one_failure_and_the_closing_line_stays_last(self):
        counts = write(self.tmp / "report.json", json.dumps({
            "regressions": 2, "runs": 3, "lines": ["i386-default: s.c PASS -> FAIL [vs baseline]"],
            "html": "build/results/report.html"}))
        write(self.tmp / "i386-default" / "results.json", json.dumps({
            "status": "PASS", "counts": {"PASS": 5, "FAIL": 0, "SKIP": 0, "ERROR": 0, "MISS": 0, "total": 5},
            "findings": [], "suites": [], "problems": []}))
        (_, code), out, _ = quiet(summary.summarize, [("i386", "default")], results_dir=self.tmp, report=counts)
        self.assertEqual(code, 1)
        self.assertRegex(out, r"\nreport\s+regressions\s+FAIL\s+3\s+-\s+2")
        self.assertIn("regression: i386-default: s.c PASS -> FAIL [vs baseline]", out)
        # the regressed tests fail in their own rows already: the report adds one failure
        self.assertEqual(out.splitlines()[-1], "5 passed, 1 failed")
        write(counts, json.dumps({"regressions": 0, "runs": 3, "lines": []}))
        (_, code), out, _ = quiet(summary.summarize, [("i386", "default")], results_dir=self.tmp, report=counts)
        self.assertEqual((code, out.splitlines()[-1]), (0, "5 passed, 0 failed"))
        counts.unlink()   # the report could not run (no database, say): the gate cannot pass blind
        (_, code), out, _ = quiet(summary.summarize, [("i386", "default")], results_dir=self.tmp, report=counts)
        self.assertEqual((code, out.splitlines()[-1]), (1, "5 passed, 1 failed"))


@unittest.skipUnless(CHROMIUM, "chromium is not installed (apt-get install chromium)")
class ChromiumTest(RecordingTestCase):
    """The page renders in a real browser without scripts or network: headless Chromium's DOM."""

    def test_the_page_renders(self):
        self.record_run("real-i386-default.log")
        self.record_run("crashed-i386-panic-mid-suite.log", hours=1)
        write(self.tmp / "baseline.json", json.dumps({"runs": {}}))
        built = report.build(self.db, self.tmp / "baseline.json", ["i386"])
        page = report_html.write(built, self.results / "report.html")
        proc = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom",
                               page.as_uri()], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 0)
        dom = proc.stdout
        self.assertIn("<h1>ktimers results</h1>", dom)
        self.assertIn("Latest run per arch and configuration", dom)
        self.assertRegex(dom, r'<span class="badge bad">CRASH</span>')
        self.assertIn('id="history-i386"', dom)
        self.assertNotIn("<script", dom)
