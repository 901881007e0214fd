"""`ktimers.py bench` end to end, with a fake kunit.py that replays the synthetic consoles."""

import json
import os
import sqlite3
import unittest
from contextlib import closing
from unittest import mock

from helpers import DATA_DIR, TempDirTestCase, data_lines, kunit_result_dir, quiet, write, write_matrix

from bench import run as bench_run
from results import kcidb
import ktimers
from results import record, report, db as results_db

# kunit.py's own lines around the console, as in tools/tests/data/kunitpy-i386-time_test.log.
FAKE_KUNIT = """#!/usr/bin/env python3
import json, os, sys
argv = sys.argv
with open(os.environ["FAKE_KUNIT_ARGV"], "a") as out:
    out.write(json.dumps(argv) + "\\n")
lowres = "--kernel_args=ktimer.highres=0" in argv
console = os.environ["FAKE_CONSOLE_LOWRES" if lowres else "FAKE_CONSOLE_HIGHRES"]
if console == "build-error":
    print("[00:00:00] Configuring KUnit Kernel ...")
    print("[00:00:01] Building KUnit Kernel ...")
    print("kernel/time/ktimer_bench.c:1:1: error: expected ';'")
    sys.exit(1)
if argv[1] == "run":
    print("[00:00:00] Configuring KUnit Kernel ...")
    print("[00:00:01] Building KUnit Kernel ...")
print("[00:00:02] Starting KUnit Kernel (1/1)...")
print("Running tests with:")
print("$ qemu-system-i386 -nodefaults -m 1024 -kernel bzImage -smp 2")
with open(console) as source:
    for line in source:
        sys.stdout.write(line)
print("[00:00:09] Elapsed time: 9.000s total")
"""


class BenchCommandTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.tree = self.tmp / "linux"
        write(self.tree / "tools" / "testing" / "kunit" / "kunit.py", FAKE_KUNIT)
        write(self.tree / "Makefile", "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 118\n")
        self.results = self.tmp / "results"
        self.argv_file = self.tmp / "argv.jsonl"
        patch = mock.patch.dict(os.environ, {"FAKE_KUNIT_ARGV": str(self.argv_file)})
        patch.start()
        self.addCleanup(patch.stop)
        self.consoles("bench-i386-highres.log", "bench-i386-lowres.log")

    def consoles(self, highres, lowres):
        os.environ["FAKE_CONSOLE_HIGHRES"] = highres if highres == "build-error" else str(DATA_DIR / highres)
        os.environ["FAKE_CONSOLE_LOWRES"] = lowres if lowres == "build-error" else str(DATA_DIR / lowres)

    def bench(self, *args, boots=1):
        # the repository's matrix, fragments and kernel/ (the suites the bench boots expect)
        return quiet(ktimers.main, ["bench", "--tree", str(self.tree), "--results-dir", str(self.results),
                                    "--kunit-build-dir", str(self.tmp / "kunit"), "--no-ccache",
                                    "--boots", str(boots), *args])

    def calls(self):
        return [json.loads(line) for line in self.argv_file.read_text().splitlines()]

    def test_two_boots_one_build_and_the_report(self):
        code, out, err = self.bench("i386")
        self.assertEqual(code, 0, err)
        calls = self.calls()
        self.assertEqual([argv[1] for argv in calls], ["run", "exec"])      # one build, booted twice
        self.assertTrue(all(argv[-1] == "ktimer_modes" for argv in calls))
        self.assertIn("--kernel_args=ktimer_bench.run=1", calls[0])
        self.assertNotIn("--kernel_args=ktimer.highres=0", calls[0])
        self.assertIn("--kernel_args=ktimer.highres=0", calls[1])
        self.assertIn(f"--build_dir={self.tmp / 'kunit' / 'i386-bench'}", calls[0])
        effective = (self.tmp / "kunit" / "i386-bench" / ".kunitconfig").read_text().splitlines()
        self.assertIn("CONFIG_KTIMER_BENCH=y", effective)
        self.assertIn("# CONFIG_PROVE_LOCKING is not set", effective)
        self.assertIn("--timeout=3600", calls[0])
        # progress: each benchmark line as it arrives, then the table
        self.assertIn("[bench] [i386-bench] ktimer_bench: result workload=start_stop api=ktimer n=0 median_ns=812 "
                      "p99_ns=1500", out)
        self.assertIn("[bench] [i386-bench-lowres] ktimer_bench: end elapsed_ms=12345", out)
        self.assertIn("=== ktimer_bench, i386 ===", out)
        self.assertIn("emulated: under software emulation (QEMU TCG) absolute figures are meaningless", out)
        self.assertIn("highres boot (bench): complete, 45.7 s in the guest", out)
        self.assertRegex(out, r"highres\s+modify\s+median_ns\s+1000000\s+1530\s+1470\s+-\s+skip: nomem\s+1\.04\s+-\s+-")
        self.assertIn("MISSED", out)
        for name in ("bench.txt", "bench.json", "bench.svg"):
            self.assertTrue((self.results / "i386-bench" / name).is_file(), name)
        saved = json.loads((self.results / "i386-bench" / "bench.json").read_text())
        self.assertTrue(saved["complete"])
        self.assertEqual([boot["name"] for boot in saved["boots"]], ["highres", "lowres"])
        self.assertEqual(saved["boots"][1]["console"],
                         str(self.results / "i386-bench-boots" / "1-bench-lowres" / "console.log"))
        document = json.loads((self.results / "i386-bench" / "results.json").read_text())
        self.assertEqual((document["kind"], document["status"]), ("bench", "PASS"))
        self.assertEqual(document["bench"]["status"], "complete")
        self.assertEqual(document["expected_suites"], ["ktimer_modes"])

    def test_boots_n_times_builds_once_and_reports_the_ratios_range(self):
        code, out, err = self.bench("i386", boots=3)
        self.assertEqual(code, 0, err)
        self.assertEqual([argv[1] for argv in self.calls()], ["run"] + ["exec"] * 5)
        for index in (1, 2, 3):
            self.assertIn(f"[bench] [i386] boot {index} of 3", out)
            self.assertIn(f"highres boot {index} (bench): complete", out)
            self.assertTrue((self.results / "i386-bench-boots" / f"{index}-bench-lowres" / "console.log").is_file())
        # the same console thrice: each ratio's range is that one value
        self.assertRegex(out, r"highres\s+start_stop\s+median_ns\s+0\s+812\s+900\s+-\s+400\s+0\.90 \(0\.90-0\.90\)")
        saved = json.loads((self.results / "i386-bench" / "bench.json").read_text())
        self.assertEqual([(boot["name"], boot["index"]) for boot in saved["boots"]],
                         [(name, index) for index in (1, 2, 3) for name in ("highres", "lowres")])
        row = next(row for row in saved["rows"] if (row["workload"], row["n"]) == ("start_stop", 0))
        self.assertEqual(row["ranges"]["hrtimer"]["boots"], 3)
        # a new run forgets the boots of the last one
        self.bench("i386", boots=1)
        self.assertFalse((self.results / "i386-bench-boots" / "2-bench").exists())

    def test_boots_must_be_positive(self):
        code, _, err = self.bench("i386", boots=0)
        self.assertNotEqual(code, 0)
        self.assertIn("at least one boot", err)

    def test_the_boots_are_recorded_with_their_figures_and_kept_out_of_the_report(self):
        self.bench("i386")
        db = self.tmp / "results.sqlite"       # $KTIMERS_RESULTS_DB of TempDirTestCase
        with closing(sqlite3.connect(str(db))) as connection:
            builds = connection.execute("SELECT config_name, kind, run_status FROM builds ORDER BY config_name").fetchall()
            figures = connection.execute(
                "SELECT b.config_name, r.engine, r.workload, r.api, r.n, r.metric, r.value, r.note, r.log_line "
                "FROM bench_results r JOIN builds b ON b.id = r.build_id").fetchall()
            tests = connection.execute("SELECT DISTINCT path FROM tests WHERE path NOT LIKE '%.%'").fetchall()
        self.assertEqual(builds, [("bench", "bench", "PASS"), ("bench-lowres", "bench", "PASS")])
        self.assertIn(("bench", "highres", "start_stop", "ktimer", 0, "median_ns", 812.0, None, 190), figures)
        self.assertIn(("bench", "highres", "start_stop", "timer_list", 1000000, "skipped", None, "nomem", 202),
                      figures)
        self.assertIn(("bench", "highres", "size", "timer_list", None, "percpu_bytes", None, "not measurable", 189),
                      figures)
        self.assertIn(("bench-lowres", "lowres", "latency", "ktimer", 10000, "max_ns", 3990000.0, None, 190), figures)
        self.assertEqual(tests, [("ktimer_modes",)])
        exported = kcidb.export(db)      # the boots go to KCIDB as builds with their tests, not their figures
        self.assertEqual(kcidb.validate(exported), [])
        # bench-lowres boots the bench image: one KCIDB build, two boots
        self.assertEqual([(b["misc"]["kind"], [x["config"] for x in b["misc"]["boots"]]) for b in exported["builds"]],
                         [("bench", ["bench", "bench-lowres"])])
        with closing(results_db.connect(db)) as connection:
            self.assertEqual(results_db.labels(connection), [])
            self.assertEqual(results_db.runs(connection), [])
            self.assertEqual(len(results_db.runs(connection, kinds=("bench",))), 2)
        # make report: a KUnit run next to the benchmark boots; only the KUnit run is reported
        result_dir, _ = kunit_result_dir(self.tmp / "kunit-results", "real-i386-default.log")
        quiet(record.record, result_dir, db, self.tree)
        baseline = write(self.tmp / "baseline.json", '{"runs": {}}')
        self.assertEqual([run.label for run in report.build(db, baseline, ["i386"]).runs], ["i386-default"])
        code, out, _ = quiet(report.run_report, db, baseline, ["i386"])
        self.assertEqual(code, 0)
        self.assertNotIn("bench", out)

    def test_a_crashed_boot_keeps_its_figures_and_fails_the_command(self):
        self.consoles("bench-i386-crashed.log", "bench-i386-lowres.log")
        code, out, err = self.bench("i386")
        self.assertEqual(code, 1)
        self.assertIn("highres boot (bench): DID NOT FINISH: no `ktimer_bench: end` line, the kernel crashed or "
                      "the run timed out (CRASH: kernel panic at console line", out)
        self.assertIn("the figures below are partial, the last at console line 205", out)
        self.assertIn("WARNING: partial results", out)
        self.assertRegex(out, r"highres\s+modify\s+median_ns\s+100\s+700\s")
        self.assertIn("lowres boot (bench-lowres): complete", out)
        self.assertIn("a boot did not finish the benchmark", err)
        self.assertNotIn("Traceback", out + err)
        saved = json.loads((self.results / "i386-bench" / "bench.json").read_text())
        self.assertFalse(saved["complete"])
        self.assertEqual(saved["boots"][0]["bench"]["status"], "partial")

    def test_a_kernel_without_the_benchmark(self):
        self.consoles("real-i386-default.log", "real-i386-default.log")
        code, out, err = self.bench("i386")
        self.assertEqual(code, 1)
        self.assertIn("NO BENCHMARK OUTPUT: no `ktimer_bench: begin` line", out)
        self.assertIn("no figures: no boot printed the benchmark's lines", out)
        self.assertFalse((self.results / "i386-bench" / "bench.svg").exists())
        document = json.loads((self.results / "i386-bench-lowres" / "results.json").read_text())
        self.assertEqual(document["status"], "NO_BENCH")

    def test_a_build_error(self):
        self.consoles("build-error", "build-error")
        code, out, err = self.bench("i386")
        self.assertEqual(code, 1)
        self.assertIn("highres boot (bench): NOT RUN: no kernel to boot (BUILD_ERROR", out)
        self.assertIn("    kernel/time/ktimer_bench.c:1:1: error: expected ';'", out)
        self.assertNotIn("Traceback", out + err)

    def test_a_build_error_in_the_first_boot_boots_no_stale_kernel(self):
        # The build dir may hold an older kernel: a boot after a failed build must not boot it.
        self.consoles("build-error", "build-error")
        code, out, err = self.bench("i386", boots=3)
        self.assertEqual(code, 1)
        # boot 1's two configurations each try to build; no `exec` of what the build dir holds
        self.assertEqual([argv[1] for argv in self.calls()], ["run", "run"])
        self.assertNotIn("reusing the kernel", out)
        self.assertIn("[bench] [i386] boot 1 built no kernel (see above): boots 2-3 not run", out)
        self.assertNotIn("Traceback", out + err)

    def test_report_only_reads_the_last_consoles_again(self):
        self.bench("i386")
        (self.results / "i386-bench" / "bench.svg").unlink()
        self.argv_file.unlink()
        code, out, _ = self.bench("--report-only", "i386")
        self.assertEqual(code, 0)
        self.assertFalse(self.argv_file.exists())           # nothing built or booted
        self.assertIn("=== ktimer_bench, i386 ===", out)
        self.assertTrue((self.results / "i386-bench" / "bench.svg").is_file())

    def test_bad_input_is_a_message(self):
        code, _, err = self.bench("--report-only", "i386")
        self.assertEqual(code, 2)
        self.assertIn("no benchmark results for i386", err)
        self.assertIn("make bench ARCH=i386", err)
        code, _, err = self.bench("sparc")
        self.assertEqual(code, 2)
        self.assertIn("unknown arch 'sparc'", err)
        write(self.results / "i386-bench" / "results.json", "{not json")
        code, _, err = self.bench("--report-only", "i386")
        self.assertEqual(code, 2)
        self.assertIn("is not valid JSON", err)
        self.assertNotIn("Traceback", err)


class EchoTest(unittest.TestCase):
    def test_only_benchmark_lines_are_echoed(self):
        lines = data_lines("bench-i386-highres.log")
        _, out, _ = quiet(lambda: [bench_run.echo("i386-bench")(line) for line in lines])
        echoed = out.splitlines()
        self.assertEqual(len(echoed), 1 + 3 + 34 + 2 + 1)
        self.assertEqual(echoed[0], "[bench] [i386-bench] ktimer_bench: begin version=1 engine=highres hz=250 cpu=0 "
                                    "ncpus=2 batch=64 batches=101")


class MatrixTest(TempDirTestCase):
    def test_the_bench_configurations_exist_in_the_matrix(self):
        matrix_file = write_matrix(self.tmp)
        code, _, err = quiet(ktimers.main, ["bench", "--matrix", str(matrix_file), "--results-dir",
                                            str(self.tmp / "results"), "i386"])
        self.assertEqual(code, 2)
        self.assertIn("unknown configuration 'bench'", err)


if __name__ == "__main__":
    unittest.main()
