import math
import unittest

from helpers import data_lines

from bench import analysis as bench_analysis, parse as bench_parse
from bench.analysis import MET, MISSED, UNMEASURED

BEGIN = "ktimer_bench: begin version=1 engine={engine} hz=250 cpu=0 ncpus=2 batch=64 batches=101"


def boot(*lines, engine="highres", end=True):
    return bench_parse.parse([BEGIN.format(engine=engine), *lines] + (["ktimer_bench: end elapsed_ms=1"] if end else []))


def cost(workload, api, n, median, p99=None):
    return (f"ktimer_bench: result workload={workload} api={api} n={n} median_ns={median}"
            + (f" p99_ns={p99}" if p99 is not None else ""))


def latency(api, p99, maximum, n=10000, fired=10000):
    return (f"ktimer_bench: result workload=latency api={api} n={n} p50_ns=1 p99_ns={p99} max_ns={maximum} "
            f"fired={fired}")


def goal(goals, name):
    return next(g for g in goals if g.name == name)


class RatioTest(unittest.TestCase):
    def test_ratio(self):
        self.assertEqual(bench_analysis.ratio(812, 900), 812 / 900)
        self.assertEqual(bench_analysis.ratio(900, 900), 1.0)
        self.assertEqual(bench_analysis.ratio(250000, 300000.0), 250000 / 300000)
        for numerator, denominator in ((1, 0), (1, -3), (None, 2), (2, None), ("skip: nomem", 2), (2, "skip: x")):
            with self.subTest(numerator=numerator, denominator=denominator):
                self.assertIsNone(bench_analysis.ratio(numerator, denominator))

    def test_format(self):
        self.assertEqual(bench_analysis.format_ratio(812 / 900), "0.90")
        self.assertEqual(bench_analysis.format_ratio(None), "-")
        self.assertEqual(bench_analysis.format_ratio(99282 / 37004612), "0.0027")     # not 0.00
        self.assertEqual(bench_analysis.format_ratio(0.1), "0.10")
        self.assertEqual(bench_analysis.format_ratio(0.0), "0.00")

    def test_growth_bound(self):
        self.assertAlmostEqual(bench_analysis.growth_bound(1000000), 3.0)
        self.assertAlmostEqual(bench_analysis.growth_bound(10000), 2.0)
        self.assertAlmostEqual(bench_analysis.growth_bound(100), 1.0)


class RowsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.boots = {"highres": bench_parse.parse(data_lines("bench-i386-highres.log")),
                     "lowres": bench_parse.parse(data_lines("bench-i386-lowres.log"))}
        cls.rows = bench_analysis.rows(cls.boots)

    def row(self, boot, workload, n):
        return next(r for r in self.rows if (r.boot, r.workload, r.n) == (boot, workload, n))

    def test_order_boot_workload_n(self):
        self.assertEqual([(r.boot, r.workload, r.n) for r in self.rows], [
            ("highres", "start_stop", 0), ("highres", "start_stop", 100), ("highres", "start_stop", 10000),
            ("highres", "start_stop", 1000000), ("highres", "modify", 0), ("highres", "modify", 100),
            ("highres", "modify", 10000), ("highres", "modify", 1000000), ("highres", "expiry", 100),
            ("highres", "expiry", 10000), ("highres", "expiry", 100000), ("highres", "latency", 10000),
            ("lowres", "latency", 10000)])

    def test_values_and_ratios_of_one_row(self):
        row = self.row("highres", "start_stop", 0)
        self.assertEqual(row.metric, "median_ns")
        self.assertEqual(row.values, {"ktimer": 812, "hrtimer": 900, "timer_list": 400})
        self.assertAlmostEqual(row.ratios["hrtimer"], 0.902222, places=5)
        self.assertAlmostEqual(row.ratios["timer_list"], 2.03)
        self.assertNotIn("hrtimer_soft", row.ratios)

    def test_each_workload_shows_its_figure(self):
        self.assertEqual(self.row("highres", "expiry", 10000).metric, "callbacks_per_s")
        self.assertAlmostEqual(self.row("highres", "expiry", 10000).ratios["hrtimer"], 250000 / 300000)
        latency_row = self.row("highres", "latency", 10000)
        self.assertEqual((latency_row.metric, latency_row.values["hrtimer_soft"]), ("p99_ns", 95000))
        self.assertAlmostEqual(latency_row.ratios["hrtimer"], 90000 / 70000)
        self.assertAlmostEqual(latency_row.ratios["hrtimer_soft"], 90000 / 95000)
        self.assertAlmostEqual(self.row("lowres", "latency", 10000).ratios["timer_list"], 0.5)

    def test_a_skipped_api_has_no_ratio(self):
        row = self.row("highres", "modify", 1000000)
        self.assertEqual(row.values["timer_list"], "skip: nomem")
        self.assertIsNone(row.ratios["timer_list"])
        self.assertAlmostEqual(row.ratios["hrtimer"], 1530 / 1470)

    def test_unknown_workloads_and_apis_come_last(self):
        run = boot("ktimer_bench: result workload=cancel api=posix n=5 cost_ns=3", cost("modify", "ktimer", 0, 1))
        rows = bench_analysis.rows({"highres": run})
        self.assertEqual([(r.workload, r.metric) for r in rows], [("modify", "median_ns"), ("cancel", "cost_ns")])
        self.assertEqual(bench_analysis.apis_of({"highres": run}), ["ktimer", "posix"])


class GoalsTest(unittest.TestCase):
    def test_the_synthetic_boots(self):
        goals = bench_analysis.goals({"highres": bench_parse.parse(data_lines("bench-i386-highres.log")),
                                      "lowres": bench_parse.parse(data_lines("bench-i386-lowres.log"))})
        self.assertEqual([(g.name, g.status) for g in goals], [
            ("cost start_stop", MET), ("cost modify", MISSED), ("equal-size start_stop", UNMEASURED),
            ("equal-size modify", UNMEASURED), ("growth start_stop", MET),
            ("growth modify", MET), ("expiry", UNMEASURED), ("equal-size expiry", UNMEASURED), ("latency", MET),
            ("reprograms", UNMEASURED),
            ("lowres", MET)])
        self.assertEqual(goal(goals, "cost start_stop").detail, "worst 0.93 at n=1000000")
        self.assertEqual(goal(goals, "cost modify").detail, "ratio > 1.0 at n=1000000 (1.04)")
        self.assertEqual(goal(goals, "growth start_stop").detail,
                         "n=1000000: grew 1.98x, bound 3.00x (hrtimer grew 1.93x)")
        self.assertIn("ktimer/hrtimer_soft p99 0.95 (0.95-0.95), 0 of 1 boots above 1.0 (sign test p=1): at 1.0; "
                      "ktimer/hrtimer (hard irq) 1.29", goal(goals, "latency").detail)
        self.assertEqual(goal(goals, "lowres").detail, "max 3990000 ns, jiffy 4000000 ns (hz=250): 1.00 jiffy")

    def test_cost_limit_is_inclusive_and_names_each_miss(self):
        run = boot(cost("modify", "ktimer", 0, 100), cost("modify", "hrtimer", 0, 100),
                   cost("modify", "ktimer", 100, 121), cost("modify", "hrtimer", 100, 110),
                   cost("modify", "ktimer", 10000, 50), cost("modify", "hrtimer", 10000, 40))
        found = bench_analysis.cost_goal(run, "modify")
        self.assertEqual(found.status, MISSED)
        self.assertEqual(found.detail, "ratio > 1.0 at n=100 (1.10), n=10000 (1.25)")
        self.assertEqual(bench_analysis.cost_goal(boot(cost("modify", "ktimer", 0, 100),
                                                       cost("modify", "hrtimer", 0, 100)), "modify").status, MET)

    def test_cost_names_what_was_not_measured(self):
        run = boot(cost("start_stop", "ktimer", 0, 1), cost("start_stop", "hrtimer", 0, 2),
                   "ktimer_bench: skip workload=start_stop api=hrtimer n=1000000 reason=nomem")
        found = bench_analysis.cost_goal(run, "start_stop")
        self.assertEqual((found.status, found.detail), (MET, "worst 0.50 at n=0; not measured at n=1000000"))
        self.assertEqual(bench_analysis.cost_goal(boot(), "start_stop").status, UNMEASURED)

    def test_growth_rule(self):
        def growth(at_million, largest=1000000):
            return bench_analysis.growth_goal(boot(cost("modify", "ktimer", 100, 1000),
                                                   cost("modify", "ktimer", largest, at_million)), "modify")
        self.assertEqual(growth(3000).status, MET)              # log: exactly ln(1e6)/ln(100) = 3
        self.assertEqual(growth(3010).status, MISSED)
        self.assertEqual(growth(2000, largest=10000).detail, "n=10000: grew 2.00x, bound 2.00x")
        self.assertEqual(growth(2100, largest=10000).status, MISSED)
        self.assertIn("ln(n)/ln(100)", growth(1).rule)
        only_small = bench_analysis.growth_goal(boot(cost("modify", "ktimer", 100, 5)), "modify")
        self.assertEqual(only_small.status, UNMEASURED)

    def test_growth_tells_logarithmic_from_linear(self):
        """A cost a + b*log(n) passes at any a, b >= 0; a cost linear in n does not."""
        def goal_for(function):
            return bench_analysis.growth_goal(boot(*(cost("start_stop", "ktimer", n, function(n))
                                                     for n in (100, 10000, 1000000))), "start_stop").status
        for a, b in ((0, 1), (500, 1), (10, 300)):
            self.assertEqual(goal_for(lambda n: a + b * math.log(n)), MET)
        self.assertEqual(goal_for(lambda n: 100 + n / 1000), MISSED)
        self.assertEqual(goal_for(lambda n: 50 * math.sqrt(n)), MISSED)

    def test_latency_against_softirq_hrtimers(self):
        def latency_goal(ktimer, soft):
            return bench_analysis.latency_goal(boot(latency("ktimer", ktimer, 1), latency("hrtimer_soft", soft, 1),
                                                    latency("hrtimer", 1, 1)))
        self.assertEqual(latency_goal(100, 100).status, MET)
        # one boot cannot place a median off 1.0: a single ratio above it is "at"
        self.assertEqual(latency_goal(101, 100).status, MET)
        self.assertEqual(latency_goal(101, 100).detail,
                         "ktimer/hrtimer_soft p99 1.01 (1.01-1.01), 1 of 1 boots above 1.0 (sign test p=1): at 1.0; "
                         "ktimer/hrtimer (hard irq) 101.00")
        only_hard = boot(latency("ktimer", 1, 1), latency("hrtimer", 1, 1))
        self.assertEqual(bench_analysis.latency_goal(only_hard).status, UNMEASURED)

    def test_latency_is_missed_when_the_boots_put_it_above(self):
        from bench.boots import BootSet
        def boots(ratios):
            return BootSet([boot(latency("ktimer", 100 * value, 1), latency("hrtimer_soft", 100, 1))
                            for value in ratios])
        above = bench_analysis.latency_goal(boots([1.1] * 12 + [0.9] * 3))
        self.assertEqual(above.status, MISSED)
        self.assertIn("12 of 15 boots above 1.0 (sign test p=0.035): above 1.0", above.detail)
        self.assertEqual(bench_analysis.latency_goal(boots([1.1] * 11 + [0.9] * 4)).status, MET)   # p=0.12: at
        self.assertIn(": below 1.0", bench_analysis.latency_goal(boots([0.9] * 15)).detail)

    def test_expiry_against_softirq_hrtimers(self):
        from bench.boots import BootSet
        def expiry(api, n, per_s):
            return f"ktimer_bench: result workload=expiry api={api} n={n} callbacks_per_s={per_s} fired={n}"
        slower = BootSet([boot(expiry("ktimer", 100, 1000), expiry("hrtimer_soft", 100, 1000),
                               expiry("ktimer", 10000, 900), expiry("hrtimer_soft", 10000, 1000),
                               expiry("hrtimer", 10000, 1)) for _ in range(6)])
        found = bench_analysis.expiry_goal(slower)
        self.assertEqual(found.status, MISSED)
        self.assertEqual(found.detail, "n=100: 1.00 (1.00-1.00), every boot at the limit (sign test p=1): at 1.0; "
                                       "n=10000: 0.90 (0.90-0.90), 0 of 6 boots above 1.0 (sign test p=0.031): "
                                       "below 1.0")
        found = bench_analysis.expiry_goal(boot(expiry("ktimer", 100, 1000), expiry("hrtimer_soft", 100, 900)))
        self.assertEqual(found.status, MET)
        self.assertEqual(bench_analysis.expiry_goal(boot(expiry("ktimer", 100, 1))).status, UNMEASURED)

    def test_expiry_at_equal_size_judges_the_padded_soft_hrtimers(self):
        from bench.boots import BootSet
        def expiry(api, per_s):
            return f"ktimer_bench: result workload=expiry api={api} n=100000 callbacks_per_s={per_s} fired=100000"
        # slower than hrtimers in their smaller element, as fast as them in the ktimer element's size
        run = BootSet([boot(expiry("ktimer", 950), expiry("hrtimer_soft", 1000), expiry("hrtimer_padded", 940))
                       for _ in range(6)])
        self.assertEqual(bench_analysis.expiry_goal(run).status, MISSED)
        equal = bench_analysis.expiry_goal(run, bench_analysis.EQUAL_SIZE)
        self.assertEqual((equal.name, equal.status), ("equal-size expiry", MET))
        self.assertIn("ktimer/hrtimer_padded callbacks per second", equal.rule)
        self.assertIn("6 of 6 boots above 1.0", equal.detail)
        slower = BootSet([boot(expiry("ktimer", 900), expiry("hrtimer_padded", 1000)) for _ in range(6)])
        self.assertEqual(bench_analysis.expiry_goal(slower, bench_analysis.EQUAL_SIZE).status, MISSED)

    def test_in_order_workloads_have_cost_goals_when_measured(self):
        run = boot(cost("start_stop_inorder", "ktimer", 100, 90), cost("start_stop_inorder", "hrtimer", 100, 100),
                   cost("start_stop_inorder", "hrtimer_padded", 100, 80),
                   cost("modify_inorder", "ktimer", 100, 90), cost("modify_inorder", "hrtimer", 100, 100))
        goals = bench_analysis.goals({"highres": run})
        self.assertEqual(goal(goals, "cost start_stop_inorder").status, MET)
        self.assertEqual(goal(goals, "equal-size start_stop_inorder").detail, "ratio > 1.0 at n=100 (1.12)")
        self.assertEqual(goal(goals, "equal-size modify_inorder").status, UNMEASURED)
        self.assertIn("growth modify_inorder", [g.name for g in goals])
        # a benchmark from before them: no goals, rather than "not measured" ones
        older = bench_analysis.goals({"highres": boot(cost("start_stop", "ktimer", 100, 90))})
        self.assertFalse([g.name for g in older if "inorder" in g.name])

    def test_sign_test(self):
        self.assertEqual(bench_analysis.sign_test(0, 0), 1.0)
        self.assertEqual(bench_analysis.sign_test(5, 0), 2 / 32)        # 5 boots can never be significant
        self.assertAlmostEqual(bench_analysis.sign_test(12, 3), 0.0352, places=4)
        self.assertEqual(bench_analysis.sign_test(3, 12), bench_analysis.sign_test(12, 3))
        self.assertEqual(bench_analysis.sign_test(7, 8), 1.0)

    def test_reprograms_against_softirq_hrtimers(self):
        def counted(workload, api, n, count):
            return f"ktimer_bench: result workload={workload} api={api} n={n} median_ns=1 reprograms_per_1k={count}"
        found = bench_analysis.reprograms_goal(boot(counted("start_stop", "ktimer", 0, 0),
                                                    counted("start_stop", "hrtimer_soft", 0, 0),
                                                    counted("modify", "ktimer", 0, 0.5),
                                                    counted("modify", "hrtimer_soft", 0, 0.25),
                                                    counted("modify", "hrtimer", 0, 1)))
        self.assertEqual((found.status, found.detail),
                         (MISSED, "more at modify n=0 (0.5 > 0.25); <= hrtimer's (hard irq) everywhere too"))
        found = bench_analysis.reprograms_goal(boot(counted("wakeups", "ktimer", 1000, 1766),
                                                    counted("wakeups", "hrtimer", 1000, 896),
                                                    counted("wakeups", "hrtimer_soft", 1000, 1770),
                                                    counted("expiry", "ktimer", 100, 3)))
        self.assertEqual((found.status, found.detail),
                         (MET, "1 workload and n pairs compared; hrtimer (hard irq), information: more at wakeups "
                               "n=1000 (1766 > 896); no hrtimer_soft count at expiry n=100"))
        only_hard = boot(counted("modify", "ktimer", 0, 1), counted("modify", "hrtimer", 0, 1))
        self.assertEqual(bench_analysis.reprograms_goal(only_hard).status, UNMEASURED)

    def test_equal_size_cost_is_its_own_goal(self):
        run = boot(cost("start_stop", "ktimer", 0, 105), cost("start_stop", "hrtimer", 0, 100),
                   cost("start_stop", "hrtimer_padded", 0, 110))
        goals = bench_analysis.goals({"highres": run})
        self.assertEqual(goal(goals, "cost start_stop").status, MISSED)
        equal = goal(goals, "equal-size start_stop")
        self.assertEqual((equal.status, equal.detail), (MET, "worst 0.95 at n=0"))
        self.assertEqual(equal.rule, "ktimer/hrtimer_padded median <= 1.0 at every n")

    def test_growth_rows_give_the_slope_per_doubling(self):
        run = boot(*(cost("modify", api, n, 10 + 2 * math.log2(n) * (1.5 if api == "hrtimer" else 1))
                     for api in ("ktimer", "hrtimer") for n in (100, 10000, 1000000)),
                   cost("modify", "ktimer", 0, 5))
        rows = bench_analysis.growth_rows(run)
        self.assertEqual([row.n for row in rows], [100, 10000, 1000000])      # n=0 has no log2
        self.assertEqual(rows[0].slopes, {"ktimer": None, "hrtimer": None})
        self.assertAlmostEqual(rows[1].slopes["ktimer"], 2.0)
        self.assertAlmostEqual(rows[2].slopes["hrtimer"], 3.0)
        self.assertEqual(rows[1].to_dict()["log2_n"], 13.288)

    def test_several_boots_judge_the_median_of_their_ratios(self):
        from bench.boots import BootSet
        boots = BootSet([boot(cost("modify", "ktimer", 0, ktimer), cost("modify", "hrtimer", 0, hrtimer))
                         for ktimer, hrtimer in ((90, 100), (200, 100), (99, 100))])
        # median of the ratios 0.90, 2.00, 0.99, not the ratio of the medians (99/100)
        found = bench_analysis.spread(boots, "modify", 0, "median_ns", "hrtimer")
        self.assertEqual((found.median, found.low, found.high, found.boots), (0.99, 0.9, 2.0, 3))
        self.assertEqual(bench_analysis.cost_goal(boots, "modify").status, MET)
        row = bench_analysis.rows({"highres": boots})[0]
        self.assertEqual((row.values["ktimer"], row.ratios["hrtimer"]), (99, 0.99))
        self.assertEqual(row.to_dict()["ranges"], {"hrtimer": {"low": 0.9, "high": 2.0, "boots": 3}})

    def test_lowres_bound_is_one_jiffy_of_that_boot(self):
        def lowres(maximum, hz=250):
            run = bench_parse.parse([BEGIN.format(engine="lowres").replace("hz=250", f"hz={hz}"),
                                     latency("ktimer", 1, maximum)])
            return bench_analysis.lowres_goal(run)
        self.assertEqual(lowres(4000000).status, MET)
        self.assertEqual(lowres(4000001).status, MISSED)
        self.assertEqual(lowres(9000000, hz=100).status, MET)    # ARM's HZ=100: 10 ms
        self.assertEqual(lowres(1).status, MET)
        self.assertEqual(bench_analysis.lowres_goal(None).status, UNMEASURED)
        no_hz = bench_parse.parse(["ktimer_bench: begin version=1 engine=lowres", latency("ktimer", 1, 1)])
        self.assertEqual(bench_analysis.lowres_goal(no_hz).status, UNMEASURED)

    def test_without_a_highres_boot(self):
        goals = bench_analysis.goals({"lowres": boot(latency("ktimer", 1, 1), engine="lowres")})
        self.assertEqual([g.status for g in goals], [UNMEASURED] * 10 + [MET])

    def test_callbacks_that_did_not_fire(self):
        notes = bench_analysis.fired_notes({"highres": boot(latency("ktimer", 1, 1, fired=9990))})
        self.assertEqual(notes, ["highres latency ktimer n=10000: fired=9990 of 10000 (console line 2)"])
        self.assertEqual(bench_analysis.fired_notes({"highres": bench_parse.parse(
            data_lines("bench-i386-highres.log"))}), [])


if __name__ == "__main__":
    unittest.main()
