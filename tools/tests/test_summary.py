import json
import re

from helpers import TempDirTestCase, data_lines, quiet, write

import ktap
import summary

CLOSING_RE = re.compile(r"^\d+ passed, \d+ failed(, \d+ skipped)?$")


def document(status="PASS", counts=None, findings=(), suites=(), problems=()):
    counts = dict({"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0, "MISS": 0}, **(counts or {}))
    counts["total"] = sum(counts.values())
    return {"status": status, "counts": counts, "findings": list(findings), "suites": list(suites),
            "problems": list(problems), "duration_s": 93.2, "console_log": "build/results/x/console.log"}


class SummaryTest(TempDirTestCase):
    def put(self, arch, doc, config="default"):
        write(self.tmp / f"{arch}-{config}" / "results.json", json.dumps(doc))

    def summarize(self, arches=("i386", "arm"), **kwargs):
        (totals, code), out, _ = quiet(summary.summarize, list(arches), results_dir=self.tmp, **kwargs)
        return totals, code, out

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
        self.assertIn("FAIL [i386] ktimer_modes.ktimer_start_rel", out)
        self.assertIn("EXPECTATION FAILED at kernel/time/ktimer_test.c:210", out)
        self.assertIn("FAIL param: period=1s", out)
        self.assert_closing(out, "4 passed, 2 failed, 1 skipped")

    def test_findings_alone_fail_the_run(self):
        finding = {"kind": "warning", "line": 58, "text": "WARNING: CPU: 0 PID: 43 at kernel/time/ktimer.c:512",
                   "detail": []}
        self.put("i386", document("FAIL", counts={"PASS": 5}, findings=[finding]))
        _, code, out = self.summarize(["i386"])
        self.assertEqual(code, 1)
        self.assertIn("line 58: [warning] WARNING: CPU: 0 PID: 43", out)
        self.assert_closing(out, "5 passed, 1 failed")

    def test_missing_results_fail(self):
        self.put("i386", document(counts={"PASS": 5}))
        _, code, out = self.summarize()
        self.assertEqual(code, 1)
        self.assertIn("NO_RESULTS", out)
        self.assertIn("make kunit ARCH=arm", out)
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
        self.assertIn("MISS [arm] ktimer_modes: 2 case(s) planned but never reported (#2, #3)", out)
        self.assertIn("Internal error: Oops: 5 [#1] SMP ARM", out)
        self.assertEqual(out.count("MISS [arm]"), 1)
        self.assert_closing(out, "1 passed, 3 failed")

    def test_missing_suite_is_listed(self):
        suites = [{"name": "ktimer_queue", "status": "MISS", "line": None, "log": [],
                   "errors": ["defined in kernel/ but never reported"]}]
        self.put("i386", document("FAIL", counts={"PASS": 2, "MISS": 1}, suites=suites))
        _, code, out = self.summarize(["i386"])
        self.assertIn("MISS [i386] ktimer_queue", out)
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
