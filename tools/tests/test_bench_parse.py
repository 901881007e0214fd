import unittest

from helpers import DATA_DIR, TempDirTestCase, data_lines, quiet_raises

from bench import parse as bench_parse
from common import ToolError

BEGIN = "ktimer_bench: begin version=1 engine=highres hz=250 cpu=0 ncpus=2 batch=64 batches=101"
END = "ktimer_bench: end elapsed_ms=45678"


def parse(*lines):
    return bench_parse.parse(list(lines))


class GoodLogTest(unittest.TestCase):
    """The synthetic console of a complete high-resolution boot (tools/tests/data/bench-i386-highres.log)."""

    @classmethod
    def setUpClass(cls):
        cls.parsed = bench_parse.parse(data_lines("bench-i386-highres.log"))

    def test_complete_with_every_line(self):
        run = self.parsed
        self.assertEqual(run.status(), "complete")
        self.assertTrue(run.complete)
        self.assertEqual(run.begin, {"version": 1, "engine": "highres", "hz": 250, "cpu": 0, "ncpus": 2,
                                     "batch": 64, "batches": 101, "line": 186})
        self.assertEqual(run.end["elapsed_ms"], 45678)
        self.assertEqual(run.engine, "highres")
        self.assertEqual(len(run.results), 4 * 3 * 2 - 2 + 9 + 3)     # cost x2 but two skips, expiry, latency
        self.assertEqual((run.problems, run.notes), ([], []))

    def test_figures_and_line_numbers(self):
        self.assertEqual(self.parsed.result("start_stop", "ktimer", 0), {"median_ns": 812, "p99_ns": 1500})
        self.assertEqual(self.parsed.result("expiry", "timer_list", 100000), {"callbacks_per_s": 170000,
                                                                         "fired": 100000})
        self.assertEqual(self.parsed.result("latency", "hrtimer_soft", 10000),
                         {"p50_ns": 22000, "p99_ns": 95000, "max_ns": 310000, "fired": 10000})
        self.assertIsNone(self.parsed.result("latency", "timer_list", 10000))
        first = self.parsed.results[0]
        self.assertEqual((first["line"], first["workload"], first["api"], first["n"]),
                         (190, "start_stop", "ktimer", 0))

    def test_sizes_and_skips(self):
        self.assertEqual([(s["api"], s["timer_bytes"], s["percpu_bytes"]) for s in self.parsed.sizes],
                         [("ktimer", 64, 2368), ("hrtimer", 48, 320), ("timer_list", 20, -1)])
        self.assertEqual(self.parsed.skip("start_stop", "timer_list", 1000000), "nomem")
        self.assertIsNone(self.parsed.skip("start_stop", "ktimer", 1000000))
        self.assertEqual([(s["workload"], s["n"]) for s in self.parsed.skips],
                         [("start_stop", 1000000), ("modify", 1000000)])

    def test_dict_round_trip(self):
        data = self.parsed.to_dict()
        self.assertEqual(data["status"], "complete")
        self.assertEqual(bench_parse.BenchRun.from_dict(data), self.parsed)
        self.assertEqual(bench_parse.BenchRun.from_dict(None).status(), "absent")


class RealLogTest(unittest.TestCase):
    """The consoles of the first real `make bench ARCH=i386` (tools/tests/data/real-i386-bench-*.log)."""

    def test_highres_boot(self):
        run = bench_parse.parse(data_lines("real-i386-bench-highres.log"))
        self.assertEqual((run.status(), run.problems, run.skips), ("complete", [], []))
        # hrtimer_interrupt() gave up catching up once, just before the hrtimer latency result
        self.assertEqual([note["line"] for note in run.notes], [201])
        self.assertIn("interrupt took 197748 ns", run.notes[0]["text"])
        self.assertEqual(len(run.results), 12 + 12 + 9 + 4)
        self.assertEqual(run.begin["engine"], "highres")
        self.assertEqual(run.result("expiry", "ktimer", 100),
                         {"callbacks_per_s": 1079866, "span_ns": 91678, "fired": 100})
        self.assertEqual(run.result("latency", "timer_list", 10000)["min_ns"], 5228765)
        self.assertEqual(run.end, {"elapsed_ms": 23478, "line": 206})

    def test_lowres_boot(self):
        run = bench_parse.parse(data_lines("real-i386-bench-lowres.log"))
        self.assertEqual((run.status(), run.engine, run.begin["hz"]), ("complete", "lowres", 250))
        self.assertEqual([(r["workload"], r["api"]) for r in run.results],
                         [("latency", "ktimer"), ("latency", "timer_list")])


class LineFormatTest(unittest.TestCase):
    def test_anything_before_the_prefix_is_dropped(self):
        for prefix in ("", "[   12.345678] ", "[    0.000000][    T1] ", "<6>[ 1.5] ", "\x1b[0m"):
            with self.subTest(prefix=prefix):
                run = parse(prefix + BEGIN, prefix + "ktimer_bench: result workload=modify api=ktimer n=100 "
                            "median_ns=700 p99_ns=1300\r", prefix + END)
                self.assertTrue(run.complete)
                self.assertEqual(run.result("modify", "ktimer", 100), {"median_ns": 700, "p99_ns": 1300})

    def test_other_lines_are_ignored(self):
        run = parse("random: crng init done", BEGIN, "ok 1 ktimer_modes", "    # ktimer_bench note", END)
        self.assertEqual((run.results, run.notes, run.problems), ([], [], []))

    def test_hrtimer_hang_protection_during_the_run_is_a_note(self):
        hang = "[   20.1] hrtimer: interrupt took 101074 ns"
        run = parse(hang, BEGIN, hang, END, hang)
        self.assertEqual(len(run.notes), 1)
        self.assertEqual(run.notes[0]["line"], 3)
        self.assertTrue(run.notes[0]["text"].startswith("hrtimer: interrupt took 101074 ns: "))
        self.assertIn("hang protection", run.notes[0]["text"])

    def test_a_skip_line(self):
        run = parse(BEGIN, "ktimer_bench: skip workload=start_stop api=timer_list n=1000000 reason=nomem", END)
        self.assertEqual(run.skips, [{"workload": "start_stop", "api": "timer_list", "n": 1000000,
                                      "reason": "nomem", "line": 2}])
        self.assertEqual(run.results, [])

    def test_garbage_is_left_out_and_named_never_raised(self):
        garbage = [
            "ktimer_bench: result workload=modify api=ktimer n=100 median_ns=fast",     # not a number
            "ktimer_bench: result workload=modify api=ktimer median_ns=700",            # no n
            "ktimer_bench: result workload=modify api=ktimer n=100",                    # no figure
            "ktimer_bench: result workload=modify api=ktimer n=-5 median_ns=1",         # not a count
            "ktimer_bench: result workload=modify api=ktimer n=1.5 median_ns=1",        # not a count
            "ktimer_bench: result workload=modify api=ktimer n=100 median_ns=7 0",      # a space in a value
            "ktimer_bench: result workload=modify api=ktimer n=100 median_ns=",         # empty value
            "ktimer_bench: result workload=modify api=ktimer n=100 n=200 median_ns=1",  # key twice
            "ktimer_bench: size api=ktimer timer_bytes=64",                             # no percpu_bytes
            "ktimer_bench: skip workload=modify api=ktimer n=100",                      # no reason
            "ktimer_bench: result workload=modify api=ktim\x00er n=100 median_ns=1 garbage",
        ]
        run = parse(BEGIN, *garbage, "ktimer_bench: result workload=modify api=hrtimer n=100 median_ns=760", END)
        self.assertTrue(run.complete)
        self.assertEqual([(r["api"], r["n"]) for r in run.results], [("hrtimer", 100)])
        self.assertEqual((run.sizes, run.skips), ([], []))
        self.assertEqual(len(run.problems), len(garbage))
        self.assertIn("console line 2: malformed result line left out (median_ns=fast is not a number)",
                      run.problems[0])
        self.assertIn("lacks n", run.problems[1])
        self.assertIn("has no figure", run.problems[2])
        self.assertIn("n=-5 is not a timer count", run.problems[3])
        self.assertIn("lacks percpu_bytes", run.problems[8])

    def test_floats_are_figures_too(self):
        run = parse(BEGIN, "ktimer_bench: result workload=expiry api=ktimer n=100 callbacks_per_s=2.5e5 fired=100")
        self.assertEqual(run.result("expiry", "ktimer", 100), {"callbacks_per_s": 250000.0, "fired": 100})

    def test_unknown_kinds_are_notes(self):
        run = parse(BEGIN, "[ 3.0] ktimer_bench: warmup done", END)
        self.assertEqual(run.notes, [{"line": 2, "text": "ktimer_bench: warmup done"}])
        self.assertEqual(run.problems, [])

    def test_lines_outside_begin_and_end_are_left_out(self):
        run = parse("ktimer_bench: result workload=modify api=ktimer n=0 median_ns=1", BEGIN, END,
                    "ktimer_bench: result workload=modify api=ktimer n=0 median_ns=2")
        self.assertEqual(run.results, [])
        self.assertIn("before its `begin`", run.problems[0])
        self.assertIn("after its `end`", run.problems[1])

    def test_a_measurement_printed_twice_keeps_the_later_one(self):
        run = parse(BEGIN, "ktimer_bench: result workload=modify api=ktimer n=0 median_ns=1",
                    "ktimer_bench: result workload=modify api=ktimer n=0 median_ns=2", END)
        self.assertEqual(run.result("modify", "ktimer", 0), {"median_ns": 2})
        self.assertEqual(len(run.results), 1)
        self.assertIn("measured again (first at line 2)", run.problems[0])

    def test_a_second_begin_starts_over(self):
        run = parse(BEGIN, "ktimer_bench: result workload=modify api=ktimer n=0 median_ns=1", BEGIN, END)
        self.assertEqual((run.results, run.begin["line"]), ([], 3))
        self.assertIn("a second `begin`", run.problems[0])

    def test_another_format_version_is_read_with_a_warning(self):
        run = parse(BEGIN.replace("version=1", "version=4"), END)
        self.assertTrue(run.complete)
        self.assertIn("format version 4", run.problems[0])
        self.assertEqual(parse(BEGIN.replace("version=1", "version=2"), END).problems, [])
        self.assertEqual(parse(BEGIN.replace("version=1", "version=3"), END).problems, [])


class PartialRunTest(TempDirTestCase):
    def test_a_crashed_run_keeps_its_figures(self):
        run = bench_parse.parse_file(DATA_DIR / "bench-i386-crashed.log")
        self.assertEqual(run.status(), "partial")
        self.assertFalse(run.complete)
        self.assertIsNone(run.end)
        self.assertEqual(len(run.results), 15)
        self.assertEqual(run.result("modify", "ktimer", 100), {"median_ns": 700, "p99_ns": 1300})
        self.assertIsNone(run.result("modify", "hrtimer", 100))

    def test_no_benchmark_lines(self):
        run = bench_parse.parse(data_lines("real-i386-default.log"))
        self.assertEqual((run.status(), run.started, run.engine), ("absent", False, None))

    def test_missing_log_is_a_tool_error(self):
        error = quiet_raises(self, ToolError, bench_parse.parse_file, self.tmp / "console.log")[0]
        self.assertIn("no console log at", str(error))
        self.assertIn("make bench", str(error))


if __name__ == "__main__":
    unittest.main()
