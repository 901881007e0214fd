from pathlib import Path

from helpers import TempDirTestCase, quiet

import ktimers
from guest import breaks, output as guest_output
from guest.plan import Plan, PlannedTest


def console(*programs):
    """Guest console lines: each (name, [KTAP case lines])."""
    lines = ["guest: boot 6.12.118 i686"]
    for name, cases in programs:
        lines.append(f"guest: begin {name}")
        lines += [f"guest: {name}| TAP version 13", f"guest: {name}| 1..{len(cases)}"]
        lines += [f"guest: {name}| {case}" for case in cases]
        lines.append(f"guest: end {name} exit 1 seconds 1.000")
    return lines + ["guest: done"]


class BreaksTest(TempDirTestCase):
    def test_only_the_own_programs_are_planned(self):
        plan = Plan((PlannedTest("posix_timers", "a", 60), PlannedTest("kt_itimer", "own", 60),
                     PlannedTest("kt_ptp", "own", 120)), {"rtcpie": "no RTC"}, Path("plan"))
        self.assertEqual([test.name for test in breaks.own_plan(plan).tests], ["kt_itimer", "kt_ptp"])

    def test_a_case_that_passes_with_its_expectations_inverted_is_a_problem(self):
        run = guest_output.parse(console(
            ("kt_itimer", ["not ok 1 one-shot", "not ok 2 periodic"]),
            ("kt_ptp", ["ok 1 sleeps # SKIP feature: stock Linux has no timers on PTP clocks", "ok 2 bad input"])))
        programs, problems = breaks.judge(run, ["kt_itimer", "kt_ptp", "kt_timerfd"])
        self.assertEqual(programs["kt_itimer"], {"cases": 2, "failed": 2, "skipped": [], "passed": []})
        self.assertEqual(programs["kt_ptp"]["passed"], ["bad input"])
        self.assertEqual(len(programs["kt_ptp"]["skipped"]), 1)
        self.assertEqual(problems, ["kt_ptp: case passed with every expectation inverted: bad input",
                                    "kt_timerfd: no KTAP cases in its output (never started)"])
        self.assertIn("kt_itimer         ktimer       2       2        0       0",
                      breaks.report_lines({"ktimer": programs}))

    def test_the_break_reaches_the_kernel_command_line(self):
        from guest import qemu
        params = qemu.QemuParams("i386", "arch/x86/boot/bzImage", "console=ttyS0", (), "stdio")
        command = qemu.qemu_command(params, "bzImage", "initramfs.cpio", True, extra_args=(breaks.BREAK_ARG,))
        self.assertTrue(command[command.index("-append") + 1].endswith("ktimer.users=1 KT_BREAK=1"))

    def test_command_line_rejects_an_unknown_arch(self):
        code, _, err = quiet(ktimers.main, ["breaks", "--results-dir", str(self.tmp), "sparc"])
        self.assertNotEqual(code, 0)
