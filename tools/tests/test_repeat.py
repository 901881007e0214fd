import json

from helpers import MATRIX_TEXT, TempDirTestCase, quiet, write, write_matrix

import ktimers
from guest import plan as selftest_plan, repeat as guest_repeat
from kunit import matrix, repeat

MATRIX = MATRIX_TEXT + """\
[repeat-realclock]
fragments = watchdog
suites = ktimer_realclock
[armonly]
arches = arm
"""


class FakeBoots:
    """run_suites stand-in: the n-th boot (1-based) gets statuses[n - 1], with a console to keep."""

    def __init__(self, statuses):
        self.statuses, self.calls = statuses, []

    def __call__(self, tree, arch, configuration, timeout=None, results_root=None, boot_only=False, **options):
        self.calls.append(boot_only)
        status = self.statuses[len(self.calls) - 1]
        result_dir = results_root / configuration.results_name(arch)
        write(result_dir / "console.log", f"boot {len(self.calls)} console\n")
        write(result_dir / "results.json", "{}")
        problems = [] if status == "PASS" else [f"boot {len(self.calls)}: no KTAP end"]
        return {"status": status, "problems": problems, "findings": [], "duration_s": 40.0 + len(self.calls),
                "built": status not in ("BUILD_ERROR", "CONFIG_ERROR"),
                "build_duration_s": 100.0 if len(self.calls) == 1 else None}


class RepeatTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.matrix_path = write_matrix(self.tmp, MATRIX)
        write(self.tmp / "kunit_configs" / "watchdog.config", "CONFIG_DETECT_HUNG_TASK=y\n")
        self.configuration = matrix.load(self.matrix_path).get("repeat-realclock")

    def repeat(self, statuses):
        boots = FakeBoots(statuses)
        doc = quiet(repeat.repeat, self.tmp / "tree", "i386", self.configuration, len(statuses), 600,
                    results_root=self.tmp / "results", findings_root=self.tmp / "findings", run_suites=boots)[0]
        return doc, boots

    def test_builds_once_then_only_boots(self):
        doc, boots = self.repeat(["PASS", "PASS", "PASS"])
        self.assertEqual(boots.calls, [False, True, True])
        self.assertEqual((doc["boots"], doc["passed"], doc["failures"]), (3, 3, []))
        # the build's 100 s is not a boot's time
        self.assertEqual(doc["boot_seconds"], {"median": 42.0, "max": 43.0})

    def test_a_failed_build_is_not_followed_by_boots_of_an_older_kernel(self):
        doc, boots = self.repeat(["BUILD_ERROR", "PASS", "PASS"])
        self.assertEqual(boots.calls, [False, False, True])     # builds again; boots only what it built

    def test_a_boot_that_does_not_pass_keeps_its_console(self):
        doc, _ = self.repeat(["PASS", "TIMEOUT", "PASS", "CRASH"])
        self.assertEqual([(f["boot"], f["status"]) for f in doc["failures"]], [(2, "TIMEOUT"), (4, "CRASH")])
        kept = [path for path in (self.tmp / "findings").rglob("console.log")]
        self.assertEqual(sorted(path.read_text() for path in kept), ["boot 2 console\n", "boot 4 console\n"])
        self.assertEqual(doc["failures"][0]["problem"], "boot 2: no KTAP end")
        saved = json.loads((self.tmp / "results" / "i386-repeat-realclock-repeat.json").read_text())
        self.assertEqual(saved["rate"], 0.5)

    def test_the_deepest_kunit_stack_of_all_boots(self):
        boots = FakeBoots(["PASS", "PASS"])
        depth = {1: 6000, 2: 5500}

        def run_suites(tree, arch, configuration, results_root=None, **options):
            document = boots(tree, arch, configuration, results_root=results_root, **options)
            write(results_root / configuration.results_name(arch) / "console.log",
                  f"kunit_try_catch (9) used greatest stack depth: {depth[len(boots.calls)]} bytes left\n")
            return document

        doc = quiet(repeat.repeat, self.tmp / "tree", "i386", self.configuration, 2, 600,
                    results_root=self.tmp / "results", findings_root=self.tmp / "findings", run_suites=run_suites)[0]
        self.assertEqual(doc["deepest_stack"], {"kunit": {"task": "kunit_try_catch", "bytes_left": 5500,
                                                          "used": 2692, "boot": 2}})
        self.assertIn("deepest stack kunit: 2692 B used by kunit_try_catch (boot 2)", repeat.summary_line(doc))

    def test_guest_programs_both_columns(self):
        calls = []

        def run_arch(tree, arch, plan, known, timeout=None, results_root=None, configuration=None):
            calls.append((arch, plan, configuration.name, timeout))
            result_dir = results_root / f"{arch}-selftests-repeat-realclock"
            boot = len(calls)
            for column, left in (("ktimer", 5000 + boot), ("hrtimer", 5100)):
                write(result_dir / f"console-{column}.log",
                      f"posix_timers ({boot}) used greatest stack depth: {left} bytes left\n")
            write(result_dir / "results.json", "{}")
            status = "FAIL" if boot == 2 else "PASS"
            return {"status": status, "problems": ["ktimer column: posix_timers FAIL"] if boot == 2 else [],
                    "findings": [], "duration_s": 100.0}

        plan = selftest_plan.load().only(["posix_timers"])
        doc = quiet(guest_repeat.repeat_selftests, self.tmp / "tree", "arm", self.configuration, plan, "KNOWN", 3,
                    results_root=self.tmp / "results", findings_root=self.tmp / "findings", run_arch=run_arch)[0]
        self.assertEqual(calls, [("arm", plan, "repeat-realclock", None)] * 3)
        self.assertEqual(doc["config"], "selftests repeat-realclock: posix_timers")
        self.assertEqual(doc["deepest_stack"]["ktimer"], {"task": "posix_timers", "bytes_left": 5001,
                                                          "used": 3191, "boot": 1})
        self.assertEqual(doc["deepest_stack"]["hrtimer"]["used"], 3092)
        self.assertEqual([(f["boot"], f["problem"]) for f in doc["failures"]],
                         [(2, "ktimer column: posix_timers FAIL")])
        kept = sorted(p.name for p in (self.tmp / "findings").rglob("boot-002/*"))
        self.assertEqual(kept, ["console-hrtimer.log", "console-ktimer.log", "results.json"])
        self.assertTrue((self.tmp / "results" / "arm-selftests-repeat-realclock-repeat.json").is_file())

    def test_a_failed_case_is_named(self):
        suites = [{"name": "ktimer_realclock", "status": "FAIL", "children": [
            {"name": "ktimer_fires_after_expiry_test", "status": "PASS", "children": []},
            {"name": "ktimer_idle_cpu_wakes_test", "status": "FAIL", "children": [
                {"name": "monotonic", "status": "PASS"}, {"name": "realtime", "status": "FAIL"}]},
            {"name": "ktimer_leap_second_test", "status": "ERROR", "children": []}]}]
        self.assertEqual(repeat.first_problem({"status": "FAIL", "suites": suites}),
                         "failed: ktimer_realclock.ktimer_idle_cpu_wakes_test.realtime, "
                         "ktimer_realclock.ktimer_leap_second_test")

    def test_the_rate_bound(self):
        # no failure in 300 boots: below 1% (the rule of three)
        self.assertAlmostEqual(repeat.upper_bound_95(0, 300), 0.00994, places=4)
        self.assertGreater(repeat.upper_bound_95(1, 30), 1 / 30)
        self.assertEqual(repeat.upper_bound_95(0, 0), 1.0)
        line = repeat.summary_line(repeat.summary("i386", "repeat-realclock", 300, 300, [], [30.0]))
        self.assertIn("0/300, below 1.0% with 95% confidence", line)

    def test_command_line(self):
        code, out, _ = quiet(ktimers.main, ["repeat", "--matrix", str(self.matrix_path), "--config", "armonly",
                                            "--boots", "2", "i386"])
        self.assertIn("does not run on this arch", out)
        code, _, err = quiet(ktimers.main, ["repeat", "--programs", "posix_timers", "i386"])
        self.assertNotEqual(code, 0)
        self.assertIn("it needs --selftests", err)
        code, _, err = quiet(ktimers.main, ["repeat", "--boots", "0", "i386"])
        self.assertNotEqual(code, 0)
        self.assertIn("at least one boot", err)
