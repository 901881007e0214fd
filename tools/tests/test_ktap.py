import unittest

from helpers import data_lines

from kunit import ktap
from kunit.ktap import ERROR, FAIL, MISS, PASS, SKIP


def parse_text(text, **kwargs):
    return ktap.parse(text.splitlines(), **kwargs)


def names_statuses(nodes):
    return [(node.name, node.status) for node in nodes]


class ModernLogTest(unittest.TestCase):
    """KUnit 6.12 console format with printk timestamps (data/modern-mixed.log)."""

    @classmethod
    def setUpClass(cls):
        cls.parsed = ktap.parse(data_lines("modern-mixed.log"))

    def test_suites_and_statuses(self):
        self.assertTrue(self.parsed.started)
        self.assertTrue(self.parsed.complete)
        self.assertEqual(self.parsed.planned, 3)
        self.assertEqual(names_statuses(self.parsed.suites),
                         [("ktimer_modes", FAIL), ("ktimer_errors", PASS), ("ktimer_queue", PASS)])

    def test_cases(self):
        modes = self.parsed.suite("ktimer_modes")
        self.assertEqual(modes.planned, 4)
        self.assertEqual(names_statuses(modes.children),
                         [("ktimer_start_abs", PASS), ("ktimer_start_rel", FAIL),
                          ("ktimer_forward_periods", FAIL), ("ktimer_highres_only", SKIP)])
        self.assertEqual(modes.children[3].directive, "needs CONFIG_HIGH_RES_TIMERS")

    def test_parameterized_case_has_params(self):
        forward = self.parsed.suite("ktimer_modes").children[2]
        self.assertEqual(names_statuses(forward.children),
                         [("period=1ns", PASS), ("period=1ms", PASS), ("period=1s", FAIL)])
        self.assertIn("ASSERTION FAILED", "\n".join(text for _, text in forward.children[2].log))
        self.assertIn("pass:2 fail:1", "\n".join(text for _, text in forward.log))

    def test_first_parameter_keeps_its_diagnostics(self):
        """KUnit 6.12 prints diagnostics 4 spaces deep, shallower than the parameters' results:
        after the case's `# Subtest:` header they are the first parameter's, not the header's."""
        run = parse_text("""KTAP version 1
1..1
    KTAP version 1
    # Subtest: ktimer_fuzz
    1..1
        KTAP version 1
        # Subtest: ktimer_fuzz_test
    # ktimer_fuzz_test: EXPECTATION FAILED at kernel/time/ktimer_fuzz_test.c:609
        not ok 1 seed 1
        ok 2 seed 2
    not ok 1 ktimer_fuzz_test
not ok 1 ktimer_fuzz
""")
        case = run.suites[0].children[0]
        first, second = case.children
        self.assertEqual([text for _, text in first.log],
                         ["    # ktimer_fuzz_test: EXPECTATION FAILED at kernel/time/ktimer_fuzz_test.c:609"])
        self.assertEqual((case.log, second.log), ([], []))

    def test_diagnostics_belong_to_their_case_with_line_numbers(self):
        rel = self.parsed.suite("ktimer_modes").children[1]
        texts = [text for _, text in rel.log]
        self.assertEqual(texts[0], "    # ktimer_start_rel: EXPECTATION FAILED at kernel/time/ktimer_test.c:210")
        self.assertIn("        want == 2000 (0x7d0)", texts)
        self.assertEqual(rel.log[0][0], 11)
        self.assertEqual(rel.line, 15)
        self.assertEqual(self.parsed.suite("ktimer_modes").children[0].log, [])

    def test_attributes_and_totals_go_to_the_suite(self):
        modes = self.parsed.suite("ktimer_modes")
        texts = [text for _, text in modes.log]
        self.assertIn("    # module: ktimer_test", texts)
        self.assertIn("# Totals: pass:3 fail:2 skip:1 total:6", texts)

    def test_case_counts(self):
        self.assertEqual(self.parsed.case_counts(), {PASS: 4, FAIL: 2, SKIP: 1, ERROR: 0, MISS: 0})

    def test_durations_from_timestamps(self):
        modes = self.parsed.suite("ktimer_modes")
        self.assertAlmostEqual(modes.duration, 1.350003 - 1.1001, places=5)
        self.assertAlmostEqual(modes.children[0].duration, 1.2 - 1.100103, places=5)

    def test_warning_splat_lines_are_logged_in_the_case(self):
        case = self.parsed.suite("ktimer_errors").children[0]
        self.assertTrue(any("WARNING: CPU: 1 PID: 42" in text for _, text in case.log))

    def test_to_dict_is_json_friendly(self):
        import json
        data = json.loads(json.dumps(self.parsed.suite("ktimer_modes").to_dict()))
        self.assertEqual(data["children"][2]["children"][2]["status"], FAIL)
        self.assertEqual(data["children"][3]["directive"], "needs CONFIG_HIGH_RES_TIMERS")


class RealRunTest(unittest.TestCase):
    def test_real_kunit_py_output(self):
        """A real kunit.py --raw_output=all run on i386 (build lines, SeaBIOS escapes, console)."""
        run = ktap.parse(data_lines("kunitpy-i386-time_test.log"))
        self.assertTrue(run.complete)
        self.assertEqual(names_statuses(run.suites), [("time_test_cases", PASS)])
        case = run.suites[0].children[0]
        self.assertEqual((case.name, case.status, case.number), ("time64_to_tm_test_date_range", PASS, 1))
        self.assertIn("    # time64_to_tm_test_date_range.speed: slow", [t for _, t in case.log])
        self.assertIn("reboot: Restarting system", [t for _, t in run.log])


class RealTimeoutTest(unittest.TestCase):
    def test_real_hung_run_cut_by_timeout(self):
        """A real i386 run of the ktimer suites that hung mid-suite and was killed."""
        run = ktap.parse(data_lines("real-i386-ktimers-timeout.log"))
        self.assertFalse(run.complete)
        self.assertEqual(run.planned, 5)
        self.assertEqual(names_statuses(run.suites),
                         [("ktimer_modes", PASS), ("ktimer_errors", PASS), ("ktimer_queue", ERROR)])
        queue = run.suite("ktimer_queue")
        self.assertEqual(queue.planned, 23)
        self.assertEqual([c.status for c in queue.children], [PASS] * 13 + [MISS] * 10)
        stalled = queue.children[13]
        self.assertTrue(any("rcu_preempt self-detected stall" in text for _, text in stalled.log))
        self.assertTrue(any("terminating on signal 15" in text for _, text in stalled.log))
        modes = run.suite("ktimer_modes")
        self.assertGreater(len(modes.children[0].children), 1)  # parameterized case
        self.assertTrue(any("5 suite(s) planned, 3 reported" in e for e in run.errors))


class CrashTest(unittest.TestCase):
    def test_oops_mid_suite_gives_error_and_miss(self):
        run = ktap.parse(data_lines("arm-oops-mid-suite.log"))
        self.assertFalse(run.complete)
        self.assertEqual(run.planned, 2)
        self.assertEqual(len(run.suites), 1)
        suite = run.suites[0]
        self.assertEqual((suite.name, suite.status), ("ktimer_modes", ERROR))
        self.assertEqual(names_statuses(suite.children),
                         [("ktimer_start_abs", PASS), ("(unreported #2)", MISS), ("(unreported #3)", MISS)])
        crash_log = [text for _, text in suite.children[1].log]
        self.assertIn("Internal error: Oops: 5 [#1] SMP ARM", crash_log)
        self.assertTrue(any("planned, 1 reported" in e for e in run.errors))
        self.assertTrue(any("cut off" in e for e in run.errors))

    def test_crash_inside_parameterized_case(self):
        run = parse_text("""KTAP version 1
1..1
    KTAP version 1
    # Subtest: ktimer_modes
    1..2
        KTAP version 1
        # Subtest: ktimer_forward
        ok 1 period=1ns
BUG: kernel NULL pointer dereference, address: 00000000
""")
        suite = run.suites[0]
        self.assertEqual(suite.status, ERROR)
        case = suite.children[0]
        self.assertEqual((case.name, case.status), ("ktimer_forward", ERROR))
        self.assertEqual(names_statuses(case.children), [("period=1ns", PASS)])
        self.assertIn("BUG: kernel NULL pointer dereference, address: 00000000", [t for _, t in case.log])
        self.assertEqual(names_statuses(suite.children[1:]), [("(unreported #2)", MISS)])
        self.assertEqual(run.case_counts()[MISS], 1)
        self.assertEqual(run.case_counts()[ERROR], 1)

    def test_kernel_panic_interrupt_from_kernel_test_data(self):
        run = ktap.parse(data_lines("kernel-test_kernel_panic_interrupt.log"))
        self.assertFalse(run.complete)
        suite = run.suites[2]
        self.assertEqual((suite.name, suite.status), ("string-stream-test", ERROR))
        self.assertEqual([c.status for c in suite.children], [PASS, MISS, MISS])

    def test_suite_whose_result_reports_fewer_cases_than_planned(self):
        run = parse_text("KTAP version 1\n1..1\n    # Subtest: s\n    1..3\n    ok 1 a\n    ok 3 c\nok 1 s\n")
        suite = run.suites[0]
        self.assertEqual(suite.status, ERROR)  # "ok" but a case went missing
        self.assertEqual(names_statuses(suite.children), [("a", PASS), ("(unreported #2)", MISS), ("c", PASS)])
        self.assertTrue(run.complete)

    def test_next_suite_starting_without_previous_result(self):
        run = parse_text("""KTAP version 1
1..2
    KTAP version 1
    # Subtest: first
    1..2
    ok 1 a
    KTAP version 1
    # Subtest: second
    1..1
    ok 1 b
ok 2 second
""")
        self.assertEqual(names_statuses(run.suites), [("first", ERROR), ("second", PASS)])
        self.assertEqual(names_statuses(run.suites[0].children), [("a", PASS), ("(unreported #2)", MISS)])

    def test_nothing_after_header(self):
        run = parse_text("KTAP version 1\n1..3\n")
        self.assertFalse(run.complete)
        self.assertEqual(run.suites, [])
        self.assertTrue(any("3 suite(s) planned, 0 reported" in e for e in run.errors))


class FormatTest(unittest.TestCase):
    def test_no_ktap_at_all(self):
        run = parse_text("Linux version 6.12\nKernel panic - not syncing: VFS\n")
        self.assertFalse(run.started)
        self.assertIn("no KTAP output", run.errors[0])

    def test_suite_init_failure_counts_as_one_failed_case(self):
        run = parse_text("KTAP version 1\n1..1\n    # failed to initialize (-12)\nnot ok 1 ktimer_queue\n")
        suite = run.suites[0]
        self.assertEqual((suite.name, suite.status, suite.children), ("ktimer_queue", FAIL, []))
        self.assertEqual(run.case_counts()[FAIL], 1)
        self.assertIn("failed to initialize", suite.log[0][1])

    def test_noise_prefix_ansi_and_crlf(self):
        text = ("\x1bc\x1b[?7l\x1b[2JSeaBIOS\r\nboot noise\r\n"
                "KTAP version 1\r\n1..1\r\n    # Subtest: s\r\n    1..1\r\n    ok 1 t\r\nok 1 s\r\n")
        run = parse_text(text)
        self.assertTrue(run.complete)
        self.assertEqual(names_statuses(run.suites[0].children), [("t", PASS)])

    def test_non_timestamp_prefix_is_stripped(self):
        text = "".join(f"foo: {line}\n" for line in
                       ["KTAP version 1", "1..1", "    # Subtest: s", "    1..1", "    not ok 1 t", "not ok 1 s"])
        run = parse_text(text)
        self.assertEqual(names_statuses(run.suites), [("s", FAIL)])
        self.assertEqual(names_statuses(run.suites[0].children), [("t", FAIL)])

    def test_printk_caller_prefix(self):
        run = ktap.parse(data_lines("kernel-test_multiple_prefixes.log"))
        self.assertTrue(run.complete)
        self.assertEqual(run.case_counts()[PASS], 10)

    def test_interleaved_kernel_messages(self):
        run = ktap.parse(data_lines("kernel-test_interrupted_tap_output.log"))
        self.assertEqual(run.case_counts()[PASS], 10)
        first = run.suites[0].children[3]
        self.assertIn("kAFS: Red Hat AFS client v0.1 registering.", [t for _, t in first.log])

    def test_old_tap14_with_tabs_and_hyphens(self):
        run = ktap.parse(data_lines("kernel-test_is_test_passed-failure.log"))
        self.assertEqual(names_statuses(run.suites), [("sysctl_test", PASS), ("example", FAIL)])
        failed = run.suites[1].children[0]
        self.assertEqual((failed.name, failed.status), ("example_simple_test", FAIL))
        self.assertIn("\t# example_simple_test: EXPECTATION FAILED at lib/kunit/example-test.c:30",
                      [t for _, t in failed.log])

    def test_nested_subtests_with_tabs(self):
        run = ktap.parse(data_lines("kernel-test_is_test_passed-all_passed_nested.log"))
        nested = run.suites[0].children[1]
        self.assertEqual((nested.name, len(nested.children)), ("example", 2))

    def test_skip(self):
        run = ktap.parse(data_lines("kernel-test_skip_tests.log"))
        skipped = run.suites[1].children[1]
        self.assertEqual((skipped.status, skipped.directive), (SKIP, "this test should be skipped"))
        self.assertEqual(run.suites[1].status, PASS)

    def test_not_ok_with_skip_is_skip(self):
        run = parse_text("KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n    not ok 1 t # SKIP why\nok 1 s\n")
        self.assertEqual(run.suites[0].children[0].status, SKIP)

    def test_ktap_without_subtest_names(self):
        run = ktap.parse(data_lines("kernel-test_parse_ktap_output.log"))
        self.assertEqual(names_statuses(run.suites), [("suite", PASS)])
        self.assertEqual(len(run.suites[0].children), 3)

    def test_attributes(self):
        run = ktap.parse(data_lines("kernel-test_parse_attributes.log"))
        self.assertIn("  # module: example", [t for _, t in run.suites[0].log])

    def test_missing_top_level_plan(self):
        run = ktap.parse(data_lines("kernel-test_is_test_passed-missing_plan.log"))
        self.assertFalse(run.complete)
        self.assertEqual(run.case_counts()[PASS], 10)
        self.assertIn("no top-level plan (1..N) found", run.errors)

    def test_results_without_subtest_header_become_params(self):
        run = parse_text("KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n        ok 1 p1\n"
                         "        ok 2 p2\n    ok 1 case\nok 1 s\n")
        case = run.suites[0].children[0]
        self.assertEqual((case.name, names_statuses(case.children)), ("case", [("p1", PASS), ("p2", PASS)]))


class StreamingTest(unittest.TestCase):
    def test_on_suite_done_is_called_as_suites_finish(self):
        done = []
        parser = ktap.Parser(on_suite_done=lambda suite: done.append((suite.name, suite.status)))
        lines = data_lines("modern-mixed.log")
        for number, line in enumerate(lines, 1):
            parser.feed(line)
            if "not ok 1 ktimer_modes" in line:
                self.assertEqual(done, [("ktimer_modes", FAIL)])
        parser.finish()
        self.assertEqual([name for name, _ in done], ["ktimer_modes", "ktimer_errors", "ktimer_queue"])

    def test_abandoned_suite_is_reported_on_finish(self):
        done = []
        ktap.parse(data_lines("arm-oops-mid-suite.log"), on_suite_done=lambda s: done.append(s.status))
        self.assertEqual(done, [ERROR])


if __name__ == "__main__":
    unittest.main()
