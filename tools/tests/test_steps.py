import os
import re
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import helpers  # noqa: F401  (puts tools/ on sys.path)

from common import steps


class StepLogTest(unittest.TestCase):
    def test_records_in_order_and_prints_a_table_with_a_total(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "results" / "steps.jsonl"
            with mock.patch.dict("os.environ", {steps.ENV: str(log)}):
                steps.record("deps", 12.0)
                steps.record("build i386-default", 370.4, "ccache hits 3% of 1416 (1370 compiled)")
                loaded = steps.load()
            lines = steps.table(loaded)
        self.assertEqual([step["step"] for step in loaded], ["deps", "build i386-default"])
        self.assertEqual(lines[0], "where the time went:")
        self.assertIn("build i386-default", lines[3])
        self.assertIn("6m10s", lines[3])
        self.assertIn("ccache hits 3%", lines[3])
        self.assertTrue(lines[-1].strip().startswith("total"))
        self.assertIn("6m22s", lines[-1])

    def test_steps_side_by_side_show_under_their_step_and_count_once(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "steps.jsonl"
            steps.record("selftests i386", 210.0, "both columns side by side", path=log)
            steps.record("selftests i386-ktimer", 205.0, path=log, part_of="selftests i386")
            steps.record("selftests i386-hrtimer", 208.0, path=log, part_of="selftests i386")
            lines = steps.table(steps.load(log))
        self.assertTrue(lines[2].startswith("  selftests i386   "))
        self.assertTrue(lines[3].startswith("    selftests i386-ktimer"))
        self.assertIn("3m30s", lines[-1])       # 210 s, not 623

    def test_a_step_recorded_after_its_parts_is_shown_above_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "steps.jsonl"
            steps.record("build arm", 300.0, path=log)
            steps.record("selftests i386-ktimer", 205.0, path=log, part_of="selftests i386")
            steps.record("selftests i386", 206.0, path=log, part_of="selftests")
            steps.record("selftests arm", 207.0, path=log, part_of="selftests")
            steps.record("selftests", 208.0, "arches side by side", path=log)
            lines = steps.table(steps.load(log))
        # the step's name with its indentation: the table's two-space margin stripped, up to the time column
        self.assertEqual([re.match(r"  ( *\S+(?: \S+)*)", line).group(1) for line in lines[2:7]],
                         ["build arm", "selftests", "  selftests i386", "    selftests i386-ktimer",
                          "  selftests arm"])
        self.assertIn("8m28s", lines[-1])       # 300 + 208 s

    def test_without_the_variable_nothing_is_written(self):
        with mock.patch.dict("os.environ", {}, clear=True):
            steps.record("deps", 1.0)
            self.assertEqual(steps.load(), [])
            self.assertEqual(steps.table([]), [])

    def test_timed_records_a_step_that_raises(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "steps.jsonl"
            with mock.patch.dict("os.environ", {steps.ENV: str(log)}):
                with self.assertRaises(RuntimeError):
                    with steps.timed("tree"):
                        raise RuntimeError("tarball missing")
                self.assertEqual([step["step"] for step in steps.load()], ["tree"])

    def test_timed_keeps_the_log_named_when_it_started(self):
        # `tools-test` runs the tests in-process, and they unset the variable meanwhile
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "steps.jsonl"
            with mock.patch.dict("os.environ", {steps.ENV: str(log)}):
                with steps.timed("tools-test"):
                    del os.environ[steps.ENV]
            self.assertEqual([step["step"] for step in steps.load(log)], ["tools-test"])

    def test_a_broken_line_is_skipped(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "steps.jsonl"
            log.write_text('{"step": "deps", "seconds": 3}\nnot json\n')
            self.assertEqual(len(steps.load(log)), 1)


if __name__ == "__main__":
    unittest.main()
