import json
import re

from helpers import TempDirTestCase, data_lines, quiet, write

from kunit import ktap
from results import summary

CLOSING_RE = re.compile(r"^\d+ passed, \d+ failed(, \d+ skipped)?$")


def document(status="PASS", counts=None, findings=(), suites=(), problems=()):
    counts = dict({"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0, "MISS": 0}, **(counts or {}))
    counts["total"] = sum(counts.values())
    return {"status": status, "counts": counts, "findings": list(findings), "suites": list(suites),
            "problems": list(problems), "duration_s": 93.2, "console_log": "build/results/x/console.log"}


def run_summary(results_dir, arches, configs, **kwargs):
    """summary.summarize over every arch x configuration: (totals, exit code, output)."""
    runs = [(arch, config) for arch in arches for config in configs]
    (totals, code), out, _ = quiet(summary.summarize, runs, results_dir=results_dir, **kwargs)
    return totals, code, out


class SummaryTest(TempDirTestCase):
    def put(self, arch, doc, config="default"):
        write(self.tmp / f"{arch}-{config}" / "results.json", json.dumps(doc))

    def summarize(self, arches=("i386", "arm"), configs=("default",), **kwargs):
        return run_summary(self.tmp, arches, configs, **kwargs)

    def assert_closing(self, out, text):
        last = out.rstrip("\n").splitlines()[-1]
        self.assertRegex(last, CLOSING_RE)
        self.assertEqual(last, text)

    def test_all_pass(self):
        self.put("i386", document(counts={"PASS": 24}))
        self.put("arm", document(counts={"PASS": 24, "SKIP": 1}))
        totals, code, out = self.summarize()
        self.assertEqual(code, 0)
        self.assert_closing(out, "48 passed, 0 failed, 1 skipped")
        self.assertIn("i386", out)
        self.assertIn("1m33s", out)

    def test_no_skips_omits_skipped(self):
        self.put("i386", document(counts={"PASS": 3}))
        _, code, out = self.summarize(["i386"])
        self.assert_closing(out, "3 passed, 0 failed")

    def test_failures_print_cases_and_diagnostics(self):
        parsed = ktap.parse(data_lines("modern-mixed.log"))
        doc = document("FAIL", counts=parsed.case_counts(), suites=[s.to_dict() for s in parsed.suites])
        self.put("i386", doc)
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assertIn("FAIL [i386-default] ktimer_modes.ktimer_start_rel", out)
        self.assertIn("EXPECTATION FAILED at kernel/time/ktimer_test.c:210", out)
        self.assertIn("FAIL param: period=1s", out)
        self.assert_closing(out, "4 passed, 2 failed, 1 skipped")

    def test_findings_alone_fail_the_run(self):
        finding = {"kind": "warning", "line": 58, "text": "WARNING: CPU: 0 PID: 43 at kernel/time/ktimer.c:512",
                   "detail": []}
        self.put("i386", document("FAIL", counts={"PASS": 5}, findings=[finding]))
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assertIn(":58: [warning] WARNING: CPU: 0 PID: 43", out)
        self.assert_closing(out, "5 passed, 1 failed")

    def test_each_finding_names_its_own_console(self):
        # CI named the ktimer column's console for the hrtimer column's crash
        doc = document("FAIL", counts={"PASS": 5}, findings=[
            {"kind": "stack-overflow", "line": 270, "text": "Insufficient stack space to handle exception!",
             "detail": [], "console": "build/results/arm-selftests/console-hrtimer.log", "column": "hrtimer"}])
        doc["console_log"] = "build/results/arm-selftests/console-ktimer.log"
        self.put("arm", doc)
        _, _, out = self.summarize(["arm"])
        self.assertIn("build/results/arm-selftests/console-hrtimer.log:270: [stack-overflow]", out)
        self.assertNotIn("console-ktimer.log:270", out)

    def test_a_failing_case_names_its_own_columns_console(self):
        # CI pointed at console-ktimer.log for a case that failed in the hrtimer column
        log = [[431 + i, f"guest: kt_posix_timers| line {i}"] for i in range(40)]
        failing = {"name": "kt_posix_timers", "status": "FAIL", "log": log,
                   "console": "build/results/i386-selftests/console-hrtimer.log"}
        doc = document("FAIL", counts={"PASS": 5, "FAIL": 1},
                       suites=[{"name": "hrtimer_path", "status": "FAIL", "children": [failing], "log": [],
                                "errors": []}])
        doc["console_log"] = "build/results/i386-selftests/console-ktimer.log"
        self.put("i386", doc)
        _, _, out = self.summarize(["i386"])
        self.assertIn("(full log: build/results/i386-selftests/console-hrtimer.log lines 431-470)", out)
        self.assertNotIn("console-ktimer.log lines", out)

    def test_the_parsers_disagreeing_is_a_failure(self):
        problem = "kunit.py's parser and ktap.py disagree on 1 test(s): s.t: ktap.py PASS, kunit_parser FAIL"
        disagreeing = document("FAIL", counts={"PASS": 5}, problems=[problem])
        disagreeing["kunit_parser"] = {"checked": True, "tests": 6, "disagreements": [problem.split(": ", 1)[1]],
                                       "error": None}
        self.put("i386", disagreeing)
        also_failing = dict(disagreeing, counts=dict(disagreeing["counts"], FAIL=2))
        self.put("arm", also_failing)       # counted on top of its failed cases
        _, code, out = self.summarize()
        self.assertEqual(code, 1)
        self.assertIn(f"[i386-default] {problem}", out)
        self.assert_closing(out, "10 passed, 4 failed")

    def test_not_checked_by_kunit_pys_parser_is_no_failure(self):
        doc = document(counts={"PASS": 5})
        doc["kunit_parser"] = {"checked": False, "tests": 0, "disagreements": [], "error": None,
                               "note": "not checked: the tree has no kunit.py parser"}
        self.put("i386", doc)
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 0)
        self.assert_closing(out, "5 passed, 0 failed")

    def test_missing_results_fail(self):
        self.put("i386", document(counts={"PASS": 5}))
        _, code, out = self.summarize()
        self.assertEqual(code, 1)
        self.assertIn("NO_RESULTS", out)
        self.assertIn("make kunit ARCH=arm CONFIG=default", out)
        self.assert_closing(out, "5 passed, 1 failed")

    def test_build_error_and_crash_count_as_failures(self):
        self.put("i386", document("BUILD_ERROR", problems=["the kernel build failed"]))
        self.put("arm", document("CRASH", counts={"PASS": 1, "MISS": 2}))
        _, code, out = self.summarize()
        self.assertEqual(code, 1)
        self.assertIn("the kernel build failed", out)
        self.assert_closing(out, "1 passed, 4 failed")

    def test_unreported_cases_are_grouped_with_the_crash_log(self):
        parsed = ktap.parse(data_lines("arm-oops-mid-suite.log"))
        counts = parsed.case_counts()
        self.put("arm", document("CRASH", counts=counts, suites=[s.to_dict() for s in parsed.suites]))
        _, code, out = self.summarize(["arm"])
        self.assertIn("MISS [arm-default] ktimer_modes: 2 case(s) planned but never reported (#2, #3)", out)
        self.assertIn("Internal error: Oops: 5 [#1] SMP ARM", out)
        self.assertEqual(out.count("MISS [arm-default]"), 1)
        self.assert_closing(out, "1 passed, 3 failed")

    def test_missing_suite_is_listed(self):
        suites = [{"name": "ktimer_queue", "status": "MISS", "line": None, "log": [],
                   "errors": ["defined in kernel/ but never reported"]}]
        self.put("i386", document("FAIL", counts={"PASS": 2, "MISS": 1}, suites=suites))
        _, code, out = self.summarize(["i386"])
        self.assertIn("MISS [i386-default] ktimer_queue", out)
        self.assert_closing(out, "2 passed, 1 failed")

    def test_tools_tests_and_style_are_added(self):
        self.put("i386", document(counts={"PASS": 10}))
        tools = write(self.tmp / "tools.json", json.dumps({"total": 120, "passed": 119, "failed": 1, "errors": 0,
                                                           "skipped": 0, "failures": ["test_x.T.test_y"]}))
        style = write(self.tmp / "style.json", json.dumps({"files": 4, "failed_files": ["kernel/a.c"],
                                                           "problems": 3}))
        _, code, out = self.summarize(["i386"], tools_tests=tools, style=style)
        self.assertEqual(code, 1)
        self.assertIn("tools test failed: test_x.T.test_y", out)
        self.assertIn("style: kernel/a.c", out)
        self.assert_closing(out, "129 passed, 2 failed")

    def test_missing_tools_counts_file_fails(self):
        self.put("i386", document(counts={"PASS": 10}))
        _, code, out = self.summarize(["i386"], tools_tests=self.tmp / "nope.json")
        self.assertEqual(code, 1)
        self.assert_closing(out, "10 passed, 1 failed")

    def test_non_pass_status_never_sums_to_zero_failed(self):
        self.put("i386", document("INFRA_ERROR"))
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assert_closing(out, "0 passed, 1 failed")

    def test_corrupt_results(self):
        write(self.tmp / "i386-default" / "results.json", "{oops")
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assertIn("not valid JSON", out)


class MatrixSummaryTest(TempDirTestCase):
    """One row per arch x configuration; the closing line totals them all."""

    CONFIGS = ("default", "lowres", "up")

    def put(self, arch, config, doc):
        write(self.tmp / f"{arch}-{config}" / "results.json", json.dumps(doc))

    def summarize(self, arches=("i386", "arm"), configs=CONFIGS, **kwargs):
        return run_summary(self.tmp, arches, configs, **kwargs)

    def table_rows(self, out):
        return [line.split()[:4] for line in out.splitlines() if line.startswith(("i386 ", "arm "))]

    def test_rows_arch_major_and_totals_over_all(self):
        for arch in ("i386", "arm"):
            self.put(arch, "default", document(counts={"PASS": 62}))
            self.put(arch, "lowres", document(counts={"PASS": 61, "SKIP": 1}))
            self.put(arch, "up", document(counts={"PASS": 60, "SKIP": 2}))
        totals, code, out = self.summarize()
        self.assertEqual(code, 0)
        self.assertEqual(self.table_rows(out), [
            ["i386", "default", "PASS", "62"], ["i386", "lowres", "PASS", "62"], ["i386", "up", "PASS", "62"],
            ["arm", "default", "PASS", "62"], ["arm", "lowres", "PASS", "62"], ["arm", "up", "PASS", "62"]])
        self.assertEqual((totals.passed, totals.failed, totals.skipped), (366, 0, 6))
        self.assertEqual(out.rstrip("\n").splitlines()[-1], "366 passed, 0 failed, 6 skipped")

    def test_one_bad_configuration_fails_the_whole_run(self):
        parsed = ktap.parse(data_lines("modern-mixed.log"))
        for config in self.CONFIGS:
            self.put("i386", config, document(counts={"PASS": 5}))
        self.put("i386", "lowres", document("FAIL", counts=parsed.case_counts(),
                                            suites=[s.to_dict() for s in parsed.suites]))
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assertIn("FAIL [i386-lowres] ktimer_modes.ktimer_start_rel", out)
        self.assertNotIn("[i386-default] ktimer_modes", out)
        self.assertEqual(out.rstrip("\n").splitlines()[-1], "14 passed, 2 failed, 1 skipped")

    def test_missing_configuration_results_are_named(self):
        self.put("arm", "default", document(counts={"PASS": 7}))
        self.put("arm", "up", document("BUILD_ERROR", problems=["the kernel build failed"]))
        _, code, out = self.summarize(["arm"])
        self.assertEqual(code, 1)
        self.assertEqual(self.table_rows(out), [["arm", "default", "PASS", "7"],
                                                ["arm", "lowres", "NO_RESULTS", "0"],
                                                ["arm", "up", "BUILD_ERROR", "0"]])
        self.assertIn("[arm-lowres] no results: run `make kunit ARCH=arm CONFIG=lowres`", out)
        self.assertIn("[arm-up] the kernel build failed", out)
        self.assertEqual(out.rstrip("\n").splitlines()[-1], "7 passed, 2 failed")

    def test_figures_are_listed_and_lost_expiries_fail(self):
        stress = {"name": "ktimer_smp_stress_test", "status": "PASS", "log": [],
                  "figures": [{"cpus": 2, "ops": 8000, "lost": 1, "duplicated": 0}]}
        self.put("i386", "default", document(counts={"PASS": 3}, suites=[
            {"name": "ktimer_smp", "status": "PASS", "log": [], "children": [stress]}]))
        self.put("i386", "lowres", document(counts={"PASS": 3}))
        _, code, out = self.summarize(["i386"], configs=["default", "lowres"])
        self.assertEqual(code, 1)
        lines = out.splitlines()
        block = lines.index("figures (counted by the tests; see docs/running.md#figures):")
        self.assertEqual(lines[block + 1],
                         "  i386-default  ktimer_smp.ktimer_smp_stress_test  cpus=2 ops=8000 lost=1 duplicated=0")
        self.assertIn("error: [i386-default] ktimer_smp.ktimer_smp_stress_test: lost=1", out)
        self.assertEqual(lines[-1], "6 passed, 1 failed")

    def test_no_figures_no_block(self):
        self.put("i386", "default", document(counts={"PASS": 3}))
        _, code, out = self.summarize(["i386"], configs=["default"])
        self.assertEqual(code, 0)
        self.assertNotIn("figures", out)

    def test_skipped_runs_are_one_note_not_failures(self):
        self.put("arm", "kasan", document(counts={"PASS": 4}))
        (totals, code), out, _ = quiet(summary.summarize, [("arm", "kasan")], results_dir=self.tmp,
                                       skipped=["i386-kasan"])
        self.assertEqual(code, 0)
        self.assertEqual(self.table_rows(out), [["arm", "kasan", "PASS", "4"]])
        self.assertIn("not run, by their `arches` in kunit_configs/matrix: i386-kasan", out)
        self.assertNotIn("NO_RESULTS", out)
        self.assertEqual(out.splitlines()[-1], "4 passed, 0 failed")

    def test_setup_errors_count_and_keep_the_closing_line_last(self):
        self.put("i386", "default", document(counts={"PASS": 3}))
        tools = write(self.tmp / "tools.json", json.dumps({"total": 4, "passed": 4, "failed": 0, "errors": 0}))
        _, code, out = self.summarize(["i386"], configs=["default"], tools_tests=tools,
                                      errors=["kunit_configs/matrix:3: smp must be a CPU count"])
        self.assertEqual(code, 1)
        self.assertIn("error: kunit_configs/matrix:3: smp must be a CPU count", out)
        self.assertEqual(out.rstrip("\n").splitlines()[-1], "7 passed, 1 failed")
