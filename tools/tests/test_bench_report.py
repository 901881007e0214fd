import json
import unittest

from helpers import TempDirTestCase, data_lines

from bench import parse as bench_parse, report as bench_report
from bench.analysis import TCG_NOTE
from bench.report import Boot


def boot(name, log, status="PASS", problems=()):
    config = "bench" if name == "highres" else "bench-lowres"
    return Boot(name, config, f"build/results/i386-{config}/console.log", status, list(problems),
                bench_parse.parse(data_lines(log)))


class TextTest(unittest.TestCase):
    def test_complete_boots(self):
        lines = bench_report.text_lines("i386", [boot("highres", "bench-i386-highres.log"),
                                                 boot("lowres", "bench-i386-lowres.log")])
        self.assertEqual(lines[:2], ["=== ktimer_bench, i386 ===", TCG_NOTE])
        self.assertEqual(lines[-1], TCG_NOTE)
        self.assertIn("highres boot (bench): complete, 45.7 s in the guest; engine=highres hz=250 cpu=0 ncpus=2 "
                      "batch=64 batches=101 (console: build/results/i386-bench/console.log)", lines)
        self.assertNotIn("WARNING: partial results: a boot did not finish the benchmark (see above)", lines)
        header = next(line for line in lines if line.startswith("boot "))
        self.assertEqual(header.split(), ["boot", "workload", "metric", "n", "ktimer", "hrtimer", "hrtimer_soft",
                                          "timer_list", "kt/hr", "kt/hr_soft", "kt/tl"])
        start_stop_0 = next(line for line in lines if line.startswith("highres  start_stop  median_ns        "
                                                                       "      0"))
        self.assertEqual(start_stop_0.split()[4:], ["812", "900", "-", "400", "0.90", "-", "2.03"])
        self.assertIn("per-CPU (bytes)    2368      320         n/a", lines)
        goals = [line for line in lines if line.startswith("  ")]
        self.assertEqual([line.split()[0] for line in goals], ["met", "MISSED", "not", "not", "met", "met", "not", "not", "met", "not",
                                                              "met"])
        self.assertIn("cost modify", goals[1])

    def test_equal_size_column_element_sizes_and_growth(self):
        lines = ["ktimer_bench: begin version=3 engine=highres hz=100 cpu=0 ncpus=1 batch=4096 batches=101",
                 "ktimer_bench: size api=ktimer timer_bytes=80 elem_bytes=88 percpu_bytes=1000",
                 "ktimer_bench: size api=hrtimer timer_bytes=64 elem_bytes=72 percpu_bytes=500",
                 "ktimer_bench: size api=hrtimer_padded timer_bytes=64 elem_bytes=88 percpu_bytes=500"]
        costs = {"ktimer": (20, 30, 40), "hrtimer": (19, 29, 42), "hrtimer_padded": (21, 31, 41)}
        for api, figures in costs.items():
            lines += [f"ktimer_bench: result workload=modify api={api} n={n} median_ns={ns}"
                      for n, ns in zip((100, 10000, 1000000), figures)]
        run = bench_parse.parse(lines + ["ktimer_bench: end elapsed_ms=1"])
        text = bench_report.text_lines("um", [Boot("highres", "bench", None, "PASS", [], run)])
        self.assertIn("element (bytes)      88       72              88", text)
        header = next(line for line in text if line.startswith("boot "))
        self.assertEqual(header.split()[-2:], ["kt/hr", "kt/hr_pad"])
        growth = text[text.index(next(line for line in text if line.startswith("cost per operation"))) + 1:]
        self.assertEqual(growth[0].split(), ["workload", "n", "log2", "n", "ktimer", "ns/doubling", "hrtimer",
                                             "ns/doubling", "hrtimer_padded", "ns/doubling"])
        self.assertEqual(growth[2].split(), ["modify", "100", "6.6", "20", "-", "19", "-", "21", "-"])
        self.assertEqual(growth[3].split(), ["modify", "10000", "13.3", "30", "+1.51", "29", "+1.51", "31",
                                             "+1.51"])

    def test_a_boot_before_the_high_resolution_switch_is_named(self):
        run = bench_parse.parse(["ktimer_bench: begin version=2 engine=highres hz=250 hres=0 hres_wait_ms=10000",
                                 "ktimer_bench: end elapsed_ms=1"])
        lines = bench_report.text_lines("i386", [bench_report.Boot("highres", "bench", "c.log", "PASS", [], run)])
        self.assertTrue(any(line.startswith("  warning: hrtimers had not switched to high resolution")
                            for line in lines))

    def test_the_first_real_run(self):
        lines = bench_report.text_lines("i386", [boot("highres", "real-i386-bench-highres.log"),
                                                 boot("lowres", "real-i386-bench-lowres.log")])
        goals = [line.split()[0] for line in lines if line.startswith("  ")]
        self.assertEqual(goals, ["MISSED", "MISSED", "not", "not", "MISSED", "MISSED", "not", "not", "met", "not",
                                 "MISSED"])
        latency = next(line for line in lines if line.startswith("highres  latency"))
        self.assertEqual(latency.split()[4:], ["99282", "109929", "226843", "37004612", "0.90", "0.44", "0.0027"])
        self.assertIn("(hrtimer grew 4.16x)", next(line for line in lines if "growth start_stop" in line))
        self.assertIn("max 5003690 ns, jiffy 4000000 ns (hz=250): 1.25 jiffy", lines[-4])
        self.assertIn("hrtimer: interrupt took 197748 ns", lines[-3])

    def test_a_crashed_boot_is_named_and_its_figures_kept(self):
        crashed = boot("highres", "bench-i386-crashed.log", "CRASH", ["kernel panic at console line 219: ..."])
        lines = bench_report.text_lines("i386", [crashed, boot("lowres", "bench-i386-lowres.log")])
        self.assertTrue(lines[2].startswith("highres boot (bench): DID NOT FINISH: no `ktimer_bench: end` line"))
        self.assertIn("(CRASH: kernel panic at console line 219: ...)", lines[2])
        self.assertIn("WARNING: partial results: a boot did not finish the benchmark (see above)", lines)
        self.assertTrue(any(line.startswith("highres  modify      median_ns      100") for line in lines))
        self.assertFalse(bench_report.finished([crashed]))

    def test_boots_without_figures(self):
        missing = Boot("highres", "bench", problems=["no results in build/results/i386-bench: run `make bench`"])
        built_badly = Boot("lowres", "bench-lowres", "c.log", "BUILD_ERROR", ["the kernel build failed"])
        no_bench = boot("highres", "real-i386-default.log")
        lines = bench_report.text_lines("arm", [missing, built_badly])
        self.assertIn("highres boot (bench): NOT RUN (no results in build/results/i386-bench: run `make bench`)",
                      lines)
        self.assertIn("lowres boot (bench-lowres): NOT RUN: no kernel to boot (BUILD_ERROR: the kernel build failed)",
                      lines)
        self.assertEqual(lines[-1], "no figures: no boot printed the benchmark's lines")
        self.assertIn("NO BENCHMARK OUTPUT", no_bench.state())
        self.assertFalse(bench_report.finished([]))

    def test_engine_mismatch_notes_and_problems(self):
        run = bench_parse.parse(["ktimer_bench: begin version=1 engine=highres hz=250",
                                 "ktimer_bench: calibrating", "ktimer_bench: result workload=modify api=x n=a",
                                 "ktimer_bench: end elapsed_ms=1"])
        lines = bench_report.text_lines("i386", [Boot("lowres", "bench-lowres", "c.log", "PASS", [], run)])
        self.assertIn("  warning: the bench-lowres boot was meant to run the lowres engine, its begin line says "
                      "engine=highres: its figures are shown as highres", lines)
        self.assertIn("note: [lowres boot] console line 2: ktimer_bench: calibrating", lines)
        self.assertTrue(any(line.startswith("warning: [lowres boot] console line 3: malformed result") for line in lines))


class WriteTest(TempDirTestCase):
    def test_files(self):
        boots = [boot("highres", "bench-i386-highres.log"), boot("lowres", "bench-i386-lowres.log")]
        lines = bench_report.write(self.tmp / "i386-bench", "i386", boots)
        self.assertEqual((self.tmp / "i386-bench" / "bench.txt").read_text(), "\n".join(lines) + "\n")
        saved = json.loads((self.tmp / "i386-bench" / "bench.json").read_text())
        self.assertEqual((saved["arch"], saved["note"], saved["complete"]), ("i386", TCG_NOTE, True))
        self.assertEqual(len(saved["rows"]), 13)
        self.assertEqual(saved["rows"][0], {"boot": "highres", "workload": "start_stop", "n": 0,
                                            "metric": "median_ns",
                                            "values": {"ktimer": 812, "hrtimer": 900, "timer_list": 400},
                                            "ratios": {"hrtimer": 812 / 900, "timer_list": 812 / 400},
                                            "ranges": {}})
        self.assertEqual([goal["status"] for goal in saved["goals"]],
                         ["met", "missed", "not measured", "not measured", "met", "met", "not measured",
                          "not measured", "met", "not measured", "met"])
        self.assertEqual([row["n"] for row in saved["growth"] if row["workload"] == "start_stop"],
                         [100, 10000, 1000000])
        self.assertEqual(saved["boots"][1]["bench"]["begin"]["engine"], "lowres")
        self.assertTrue((self.tmp / "i386-bench" / "bench.svg").read_text().startswith("<svg"))

    def test_no_highres_figures_no_plot(self):
        stale = self.tmp / "i386-bench" / "bench.svg"
        stale.parent.mkdir()
        stale.write_text("<svg/>")
        bench_report.write(self.tmp / "i386-bench", "i386", [boot("lowres", "bench-i386-lowres.log")])
        self.assertFalse(stale.exists())
        saved = json.loads((self.tmp / "i386-bench" / "bench.json").read_text())
        self.assertEqual(saved["goals"][-1]["status"], "met")


if __name__ == "__main__":
    unittest.main()
