import unittest

from helpers import TempDirTestCase, write

import figures

LOG = """\
    KTAP version 1
    # Subtest: ktimer_smp
    1..3
    # ktimer_smp_stress_test: figures: cpus=4 ops=1600000 arms=869879 expiries=114666 cancels=755213 lost=0 duplicated=0
    ok 2 ktimer_smp_stress_test
        KTAP version 1
        # Subtest: ktimer_fuzz_test
[   12.345678]     # ktimer_fuzz_test: figures: seed=1 ops=32768 expiries=4907 divergences=0
        ok 1 seed 1
    # ktimer_fuzz_test: figures: seed=2 ops=44 expiries=6 divergences=1
        not ok 2 seed 2
    # ktimer_fuzz_test: EXPECTATION FAILED at kernel/time/ktimer_fuzz_test.c:609
    # ktimer_fuzz_test: figures:
"""


class FiguresTest(unittest.TestCase):
    def test_parses_every_line_with_numbers_as_ints(self):
        found = figures.parse(LOG.splitlines())
        self.assertEqual([test for test, _ in found],
                         ["ktimer_smp_stress_test", "ktimer_fuzz_test", "ktimer_fuzz_test"])
        self.assertEqual(found[0][1]["ops"], 1600000)
        self.assertEqual(found[1][1], {"seed": 1, "ops": 32768, "expiries": 4907, "divergences": 0})

    def test_non_zero_correctness_counts_are_violations(self):
        found = figures.parse(LOG.splitlines())
        self.assertEqual(figures.violations(found), ["ktimer_fuzz_test: divergences=1"])
        lost = figures.parse(["# ktimer_smp_stress_test: figures: lost=2 duplicated=1 expiries=9"])
        self.assertEqual(figures.violations(lost),
                         ["ktimer_smp_stress_test: lost=2", "ktimer_smp_stress_test: duplicated=1"])

    def test_non_numeric_values_are_kept(self):
        self.assertEqual(figures.parse(["# t: figures: engine=high ops=3"]), [("t", {"engine": "high", "ops": 3})])


class FileTest(TempDirTestCase):
    def test_missing_file_has_no_figures(self):
        self.assertEqual(figures.parse_file(self.tmp / "nope.log"), [])

    def test_file(self):
        path = write(self.tmp / "console.log", LOG)
        self.assertEqual(len(figures.parse_file(path)), 3)


if __name__ == "__main__":
    unittest.main()
