import json

from helpers import MATRIX_TEXT, TempDirTestCase, quiet, write, write_matrix

import ktimers
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

    def test_a_boot_that_does_not_pass_keeps_its_console(self):
        doc, _ = self.repeat(["PASS", "TIMEOUT", "PASS", "CRASH"])
        self.assertEqual([(f["boot"], f["status"]) for f in doc["failures"]], [(2, "TIMEOUT"), (4, "CRASH")])
        kept = [path for path in (self.tmp / "findings").rglob("console.log")]
        self.assertEqual(sorted(path.read_text() for path in kept), ["boot 2 console\n", "boot 4 console\n"])
        self.assertEqual(doc["failures"][0]["problem"], "boot 2: no KTAP end")
        saved = json.loads((self.tmp / "results" / "i386-repeat-realclock-repeat.json").read_text())
        self.assertEqual(saved["rate"], 0.5)

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
        code, _, err = quiet(ktimers.main, ["repeat", "--boots", "0", "i386"])
        self.assertNotEqual(code, 0)
        self.assertIn("at least one boot", err)
