"""The two columns of `make selftest` boot side by side, and the step table counts their time once."""

import contextlib
import threading
from types import SimpleNamespace
from unittest import mock

from helpers import TempDirTestCase, quiet

from common import steps
from guest import selftests as guest_selftests
from guest.compare import OFF, ON


def fake_plan():
    return SimpleNamespace(tests=[SimpleNamespace(name="nanosleep")], worst_case_seconds=lambda: 60, path=None)


class ColumnsTest(TempDirTestCase):
    def run_columns(self, side_by_side, fake_boot):
        comparison = SimpleNamespace(problems=[], failed=lambda: False)
        log = self.tmp / "steps.jsonl"
        with contextlib.ExitStack() as stack:
            enter = stack.enter_context
            enter(mock.patch.dict("os.environ", {steps.ENV: str(log)}))
            enter(mock.patch.object(guest_selftests.guest_qemu, "qemu_params", return_value=None))
            enter(mock.patch.object(guest_selftests, "kernel_image", return_value=None))
            enter(mock.patch.object(guest_selftests.guest_build, "exclusive",
                                    side_effect=lambda arch: contextlib.nullcontext()))
            enter(mock.patch.object(guest_selftests.guest_build, "build",
                                    return_value=SimpleNamespace(built=["nanosleep"], initramfs=None, not_built=[])))
            enter(mock.patch.object(guest_selftests, "boot_column", side_effect=fake_boot))
            enter(mock.patch.object(guest_selftests.guest_compare, "compare", return_value=comparison))
            enter(mock.patch.object(guest_selftests.guest_report, "results_document",
                                    return_value={"counts": {"PASS": 1, "FAIL": 0, "ERROR": 0, "SKIP": 0, "MISS": 0}}))
            enter(mock.patch.object(guest_selftests.guest_report, "report_lines", return_value=[]))
            quiet(guest_selftests.run_arch, self.tmp, "i386", fake_plan(), {}, results_root=self.tmp / "results",
                  side_by_side=side_by_side)
        return steps.load(log)

    def fake_boot(self, meeting):
        """A boot that waits (at most 2 s) for the other column's: only side by side do both arrive."""
        def boot(params, kernel, initramfs, arch, users_on, console, timeout, label, planned, **kwargs):
            with contextlib.suppress(threading.BrokenBarrierError):
                meeting.wait(timeout=2)
            return SimpleNamespace(seconds=200.0 if users_on else 210.0, lines=[]), SimpleNamespace(counters_raw=None), None
        return boot

    def test_the_columns_boot_side_by_side(self):
        meeting = threading.Barrier(2)
        recorded = self.run_columns(True, self.fake_boot(meeting))
        self.assertFalse(meeting.broken)       # both boots were running at once
        self.assertEqual([(step["step"], step.get("part_of")) for step in recorded],
                         [("selftests i386", None), (f"selftests i386-{ON}", "selftests i386"),
                          (f"selftests i386-{OFF}", "selftests i386")])
        self.assertLess(recorded[0]["seconds"], 2)

    def test_one_at_a_time_on_request(self):
        meeting = threading.Barrier(2)
        recorded = self.run_columns(False, self.fake_boot(meeting))
        self.assertTrue(meeting.broken)        # the first boot waited alone
        self.assertEqual([(step["step"], step.get("part_of")) for step in recorded],
                         [(f"selftests i386-{ON}", None), (f"selftests i386-{OFF}", None)])
