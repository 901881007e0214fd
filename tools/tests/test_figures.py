import json
import unittest

import helpers  # noqa: F401  (puts tools/ on sys.path)

from kunit import figures, ktap

# KUnit 6.12 as it prints the two counting suites (build/results/arm-default/console.log),
# with printk timestamps: a plain case, then a parameterized case whose diagnostics
# sit 4 spaces deep, shallower than its parameters' results.
CONSOLE = """\
[    1.000000] KTAP version 1
[    1.000001] 1..2
[    1.100000]     KTAP version 1
[    1.100001]     # Subtest: ktimer_smp
[    1.100002]     # module: ktimer_smp_test
[    1.100003]     1..2
[    1.200000]     ok 1 ktimer_runs_on_starting_cpu_test
[    2.300000]     # ktimer_smp_stress_test: figures: cpus=4 ops=800000 arms=123 expiries=100 cancels=23 lost=0 duplicated=0
[    2.300001]     # ktimer_smp_stress_test.speed: slow
[    2.300002]     ok 2 ktimer_smp_stress_test
[    2.300003] # ktimer_smp: pass:2 fail:0 skip:0 total:2
[    2.300004] # Totals: pass:2 fail:0 skip:0 total:2
[    2.300005] ok 1 ktimer_smp
[    2.400000]     KTAP version 1
[    2.400001]     # Subtest: ktimer_fuzz
[    2.400002]     # module: ktimer_fuzz_test
[    2.400003]     1..1
[    2.400004]         KTAP version 1
[    2.400005]         # Subtest: ktimer_fuzz_test
[    3.000000]     # ktimer_fuzz_test: figures: seed=1 ops=32768 expiries=5000 divergences=0
[    3.000001]         ok 1 seed 1
[    3.100000]     # ktimer_fuzz_test: EXPECTATION FAILED at kernel/time/ktimer_fuzz_test.c:609
[    3.100001]     # ktimer_fuzz_test: figures: seed=2 ops=44 expiries=6 divergences=1
[    3.100002]         not ok 2 seed 2
[    3.100003]     # ktimer_fuzz_test.speed: slow
[    3.100004]     # ktimer_fuzz_test: pass:1 fail:1 skip:0 total:2
[    3.100005]     not ok 1 ktimer_fuzz_test
[    3.100006] # Totals: pass:1 fail:1 skip:0 total:2
[    3.100007] not ok 2 ktimer_fuzz
"""


def stored_suites(text):
    """The suites as results.json stores them."""
    return json.loads(json.dumps([suite.to_dict() for suite in ktap.parse(text.splitlines()).suites]))


class LineTest(unittest.TestCase):
    def test_values_are_ints_where_they_are_numbers(self):
        self.assertEqual(figures.parse_line("    # ktimer_fuzz_test: figures: seed=1 ops=32768 engine=high"),
                         {"seed": 1, "ops": 32768, "engine": "high"})

    def test_other_lines_and_empty_figures_are_none(self):
        for text in ("    # ktimer_fuzz_test: EXPECTATION FAILED at x.c:1", "    # t: figures:",
                     "    # ktimer_fuzz_test.speed: slow", "figures: a=1"):
            with self.subTest(text=text):
                self.assertIsNone(figures.parse_line(text))

    def test_from_log_keeps_log_order(self):
        log = [(3, "    # t: figures: a=1"), (4, "    Expected x"), (5, "    # t: figures: a=2 b=x")]
        self.assertEqual(figures.from_log(log), [{"a": 1}, {"a": 2, "b": "x"}])


class StoredUnderTheTestTest(unittest.TestCase):
    """ktap keeps each figures line with the case or parameter that printed it; results.json has them there."""

    @classmethod
    def setUpClass(cls):
        cls.suites = stored_suites(CONSOLE)

    def test_plain_case(self):
        stress = self.suites[0]["children"][1]
        self.assertEqual(stress["name"], "ktimer_smp_stress_test")
        self.assertEqual(stress["figures"], [{"cpus": 4, "ops": 800000, "arms": 123, "expiries": 100,
                                              "cancels": 23, "lost": 0, "duplicated": 0}])
        self.assertNotIn("figures", self.suites[0])
        self.assertNotIn("figures", self.suites[0]["children"][0])

    def test_each_parameter_gets_its_own_including_the_first(self):
        case = self.suites[1]["children"][0]
        self.assertNotIn("figures", case)
        self.assertEqual([(param["name"], param["figures"]) for param in case["children"]], [
            ("seed 1", [{"seed": 1, "ops": 32768, "expiries": 5000, "divergences": 0}]),
            ("seed 2", [{"seed": 2, "ops": 44, "expiries": 6, "divergences": 1}])])

    def test_in_results_names_suite_case_and_parameter(self):
        found = figures.in_results(self.suites)
        self.assertEqual([test for test, _ in found], [
            "ktimer_smp.ktimer_smp_stress_test", "ktimer_fuzz.ktimer_fuzz_test[seed 1]",
            "ktimer_fuzz.ktimer_fuzz_test[seed 2]"])
        self.assertEqual(found[0][1]["ops"], 800000)

    def test_non_zero_correctness_counts_are_violations(self):
        self.assertEqual(figures.violations(figures.in_results(self.suites)),
                         ["ktimer_fuzz.ktimer_fuzz_test[seed 2]: divergences=1"])
        lost = [("s.t", {"lost": 2, "duplicated": 1, "expiries": 9})]
        self.assertEqual(figures.violations(lost), ["s.t: lost=2", "s.t: duplicated=1"])

    def test_total_sums_one_suites_count_over_runs(self):
        runs = [("i386-default", figures.in_results(self.suites)),
                ("arm-default", [("ktimer_fuzz.ktimer_fuzz_test[run 1]", {"ops": 10, "seed": "x"})])]
        self.assertEqual(figures.total(runs, "ktimer_fuzz", "ops"), 32768 + 44 + 10)
        self.assertEqual(figures.total(runs, "ktimer_smp", "ops"), 800000)
        self.assertEqual(figures.total(runs, "ktimer_fuzz", "seed"), 3)   # ints only
        self.assertEqual(figures.total([], "ktimer_fuzz", "ops"), 0)

    def test_no_figures(self):
        self.assertEqual(figures.in_results([{"name": "s", "status": "MISS", "log": []}]), [])

    def test_format_line(self):
        self.assertEqual(figures.format_line("i386-soak", "s.t", {"cpus": 4, "lost": 0}),
                         "i386-soak  s.t  cpus=4 lost=0")


if __name__ == "__main__":
    unittest.main()
