import unittest

from helpers import data_lines

from kunit import logscan

SPLAT = """------------[ cut here ]------------
WARNING: CPU: 0 PID: 1 at kernel/time/ktimer.c:123 start_ktimer+0x1a4/0x210
Modules linked in:
CPU: 0 UID: 0 PID: 1 Comm: kunit_try_catch Tainted: G                 N 6.12.118 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
EIP: start_ktimer+0x1a4/0x210
Call Trace:
 ? __warn+0x7c/0x130
 ktimer_test_double_start+0x9c/0x1c0
 kthread+0xd2/0x100
---[ end trace 0000000000000000 ]---"""


def begin(tag):
    return f"    # ktimer_test_x: ktimer-test: expect-warning-begin {tag}"


def end(tag):
    return f"    # ktimer_test_x: ktimer-test: expect-warning-end {tag}"


def scan(text):
    return logscan.scan_detailed(text.splitlines())


def kinds(result):
    return [finding.kind for finding in result.findings]


class WarningTest(unittest.TestCase):
    def test_unexpected_splat_is_one_finding_with_line_number(self):
        result = scan("boot\n" + SPLAT + "\n    ok 1 t")
        self.assertEqual(len(result.findings), 1)  # Call Trace/Hardware name belong to it
        finding = result.findings[0]
        self.assertEqual((finding.kind, finding.line), ("warning", 3))
        self.assertEqual(finding.text, "WARNING: CPU: 0 PID: 1 at kernel/time/ktimer.c:123 start_ktimer+0x1a4/0x210")

    def test_expected_splat_between_markers(self):
        result = scan("\n".join([begin("double-start"), SPLAT, end("double-start"), "    ok 1 t"]))
        self.assertEqual(result.findings, [])
        self.assertEqual(len(result.expected), 1)
        self.assertEqual(result.expected[0].line, 3)

    def test_splat_after_end_marker_is_a_finding(self):
        result = scan("\n".join([begin("a"), end("a"), SPLAT]))
        self.assertEqual(kinds(result), ["warning"])

    def test_two_expected_splats_and_one_unexpected(self):
        text = "\n".join([begin("a"), SPLAT, SPLAT, end("a"), "    ok 1 t", SPLAT])
        result = scan(text)
        self.assertEqual(len(result.expected), 2)
        self.assertEqual(kinds(result), ["warning"])

    def test_warn_message_is_kept_as_detail_and_odebug_can_be_expected(self):
        splat = SPLAT.replace("------------[ cut here ]------------",
                              "------------[ cut here ]------------\n"
                              "ODEBUG: free active (active state 0) object: c1234 object type: ktimer hint: cb")
        self.assertEqual(scan("\n".join([begin("odebug"), splat, end("odebug")])).findings, [])
        result = scan(splat)
        self.assertEqual(kinds(result), ["warning"])
        self.assertIn("ODEBUG: free active", result.findings[0].detail[0])

    def test_arm_prints_the_warn_message_after_the_warning_line(self):
        splat = SPLAT.replace("Modules linked in:\n",
                              "ODEBUG: init active (active state 0) object: 57921f38 object type: ktimer hint: cb\n"
                              "Modules linked in:\n")
        self.assertEqual(scan("\n".join([begin("odebug"), splat, end("odebug")])).findings, [])
        result = scan(splat)
        self.assertEqual(kinds(result), ["warning"])
        self.assertIn("ODEBUG: init active", result.findings[0].detail[0])

    def test_lockdep_message_after_the_warning_line_is_never_expected(self):
        splat = SPLAT.replace("Modules linked in:\n", "DEBUG_LOCKS_WARN_ON(1)\nModules linked in:\n")
        self.assertEqual(kinds(scan("\n".join([begin("a"), splat, end("a")]))), ["lockdep"])

    def test_lockdep_warning_is_never_expected(self):
        splat = SPLAT.replace("------------[ cut here ]------------",
                              "------------[ cut here ]------------\nDEBUG_LOCKS_WARN_ON(1)")
        result = scan("\n".join([begin("a"), splat, end("a")]))
        self.assertEqual(kinds(result), ["lockdep"])

    def test_timestamps_are_handled(self):
        text = "\n".join(f"[    1.{i:06d}] {line}" for i, line in enumerate(SPLAT.splitlines()))
        result = scan(text)
        self.assertEqual(kinds(result), ["warning"])
        self.assertTrue(result.findings[0].text.startswith("WARNING: CPU: 0"))

    def test_warning_in_the_middle_of_a_message_is_not_a_splat(self):
        text = "Spectre V2 : WARNING: Unprivileged eBPF is enabled with eIBRS on, data leaks possible"
        self.assertEqual(scan(text).findings, [])

    def test_modern_mixed_log(self):
        result = logscan.scan_detailed(data_lines("modern-mixed.log"))
        self.assertEqual([(f.kind, f.line) for f in result.findings], [("warning", 58)])
        self.assertEqual([f.line for f in result.expected], [35])


class MarkerTest(unittest.TestCase):
    def test_begin_without_end(self):
        result = scan(begin("lonely") + "\n" + SPLAT)
        self.assertEqual(kinds(result), ["marker"])
        self.assertIn("lonely", result.findings[0].text)
        self.assertIn("no matching end", result.findings[0].text)

    def test_end_without_begin(self):
        result = scan(end("x"))
        self.assertEqual(kinds(result), ["marker"])
        self.assertIn("without a matching begin", result.findings[0].text)

    def test_begin_twice(self):
        result = scan("\n".join([begin("x"), begin("x"), end("x")]))
        self.assertEqual(kinds(result), ["marker"])
        self.assertIn("already open", result.findings[0].text)

    def test_different_tags_nest(self):
        result = scan("\n".join([begin("outer"), begin("inner"), end("inner"), SPLAT, end("outer")]))
        self.assertEqual(result.findings, [])
        self.assertEqual(len(result.expected), 1)


class CrashTest(unittest.TestCase):
    def test_arm_oops_and_panic(self):
        result = logscan.scan_detailed(data_lines("arm-oops-mid-suite.log"))
        self.assertEqual([(f.kind, f.line) for f in result.findings], [("fault", 13), ("panic", 29)])

    def test_x86_null_deref_is_one_finding_even_inside_markers(self):
        text = "\n".join([begin("a"),
                          "BUG: kernel NULL pointer dereference, address: 00000000",
                          "#PF: supervisor read access in kernel mode",
                          "Oops: 0000 [#1] PREEMPT SMP",
                          "CPU: 1 UID: 0 PID: 40 Comm: kunit_try_catch Tainted: G N 6.12.118 #1",
                          "EIP: ktimer_run_queues+0x30/0x1f0",
                          "Call Trace:",
                          " run_timer_softirq+0x1c/0x60",
                          "---[ end trace 0000000000000000 ]---",
                          end("a")])
        self.assertEqual(kinds(scan(text)), ["bug"])

    def test_each_report_kind(self):
        cases = {
            "bug": "BUG: sleeping function called from invalid context at kernel/time/ktimer.c:400",
            "oops": "Internal error: Oops: 5 [#1] SMP ARM",
            "gpf": "general protection fault, probably for non-canonical address 0xdead000000000100",
            "fault": "Unable to handle kernel paging request at virtual address dead000000000100",
            "panic": "Kernel panic - not syncing: Fatal exception",
            "ubsan": "UBSAN: shift-out-of-bounds in kernel/time/ktimer.c:210:15",
            "kasan": "BUG: KASAN: slab-use-after-free in ktimer_run_queues+0x30/0x1f0",
            "kcsan": "BUG: KCSAN: data-race in ktimer_run_queues / start_ktimer",
            "debugobjects": "ODEBUG: free active (active state 0) object: c1234 object type: ktimer",
            "hung-task": "INFO: task kworker/0:1:23 blocked for more than 120 seconds.",
            "rcu-stall": "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
            "lockup": "watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [swapper/0:1]",
        }
        for kind, line in cases.items():
            with self.subTest(kind=kind):
                expected_kind = "bug" if kind == "lockup" else kind
                self.assertEqual(kinds(scan(f"[   12.345678] {line}")), [expected_kind])

    def test_sanitizer_reports_are_never_excused_by_markers(self):
        for line in ("BUG: KASAN: slab-use-after-free in ktimer_run_queues+0x30/0x1f0",
                     "BUG: KCSAN: data-race in ktimer_run_queues / start_ktimer"):
            with self.subTest(line=line):
                text = "\n".join([begin("a"), "==================", line, "==================", end("a")])
                self.assertEqual(len(scan(text).findings), 1)

    def test_kmemleak_objects_are_one_finding_each(self):
        report = ["unreferenced object 0xc2a4f180 (size 64):",
                  '  comm "kt_ptp", pid 93, jiffies 4294952704',
                  "  hex dump (first 32 bytes):",
                  "    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................",
                  "  backtrace (crc 5e5b8d1f):",
                  "    [<c10b4d2a>] __kmalloc_cache_noprof+0x1ba/0x2c0",
                  "    [<c1234567>] ktimer_pclock_create+0x2a/0x1b0"]
        found = scan("\n".join(report + [report[0].replace("f180", "f200")] + report[1:]
                               + ["guest: kmemleak: 2 suspected leak(s)"])).findings
        self.assertEqual([(finding.kind, finding.line) for finding in found], [("kmemleak", 1), ("kmemleak", 8)])

    def test_live_objects_of_a_slab_cache_after_the_programs_are_a_leak(self):
        self.assertEqual(kinds(scan("guest: slab ktimer_pclock: 16 object(s)")), ["leak"])
        self.assertEqual(kinds(scan("guest: slab ktimer_pclock: 0 object(s)")), [])

    def test_ktimer_watchdog_report_is_one_finding(self):
        report = ["ktimer: watchdog: sleeper_fn on CPU 1 (clock realtime) is 12034 ms overdue",
                  "ktimers: high-resolution engine, resolution 1 ns",
                  "cpu 1 clock realtime (clockid 0): 1 pending, now 1733500000000000000",
                  "  #0: sleeper_fn expires 1733499988000000000 (in -12034000000 ns) interval 0 overrun 0",
                  "task:kunit_try_catch state:D stack:0     pid:40    tgid:40    ppid:2      flags:0x00004000",
                  "Call Trace:",
                  " __schedule+0x2a0/0x8c0",
                  "---[ end ktimer watchdog report ]---",
                  "    ok 3 ktimer_sleep_test"]
        found = scan("\n".join(report)).findings
        self.assertEqual([(finding.kind, finding.line) for finding in found], [("ktimer-watchdog", 1)])

    def test_a_leak_count_that_could_not_be_taken_fails_too(self):
        line = "guest: slab ktimer_pclock: merged with another cache, not counted (boot with slab_nomerge)"
        self.assertEqual(kinds(scan(line)), ["leak-check"])

    def test_rcu_self_detected_stall(self):
        self.assertEqual(kinds(scan("rcu: INFO: rcu_sched self-detected stall on CPU")), ["rcu-stall"])


class LockdepTest(unittest.TestCase):
    REPORT = """======================================================
WARNING: possible circular locking dependency detected
6.12.118 #1 Tainted: G                 N
------------------------------------------------------
kunit_try_catch/40 is trying to acquire lock:
c1a2b3c4 (&base->lock){-.-.}-{2:2}, at: start_ktimer+0x30/0x210

but task is already holding lock:
c1a2b3d0 (&cpu_base->lock){-.-.}-{2:2}, at: ktimer_run_queues+0x20/0x1f0

stack backtrace:
CPU: 0 UID: 0 PID: 40 Comm: kunit_try_catch Tainted: G N 6.12.118 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
Call Trace:
 dump_stack_lvl+0x5c/0x80
 __lock_acquire+0x1234/0x2000
    ok 3 ktimer_test_after"""

    def test_circular_dependency_is_one_lockdep_finding(self):
        self.assertEqual(kinds(scan(self.REPORT)), ["lockdep"])

    def test_lockdep_inside_markers_is_still_a_finding(self):
        self.assertEqual(kinds(scan("\n".join([begin("a"), self.REPORT, end("a")]))), ["lockdep"])

    def test_other_lockdep_reports(self):
        for line in ("WARNING: possible recursive locking detected",
                     "WARNING: inconsistent lock state",
                     "INFO: trying to register non-static key.",
                     "DEBUG_LOCKS_WARN_ON(!irqs_disabled())",
                     "WARNING: suspicious RCU usage"):
            with self.subTest(line=line):
                self.assertEqual(kinds(scan(line)), ["lockdep"])

    def test_report_without_end_line_stops_at_test_output(self):
        text = self.REPORT + "\n" + SPLAT
        self.assertEqual(kinds(scan(text)), ["lockdep", "warning"])


class StackOverflowTest(unittest.TestCase):
    def test_arm_vmap_stack_overflow_is_one_report(self):
        # issue 26's ARM crash, as the console printed it (cut)
        text = """guest: begin kt_ptp
Insufficient stack space to handle exception!
Task stack:     [0xf0a04000..0xf0a06000]
Overflow stack: [0xef7b5000..0xef7b6000]
CPU: 0 UID: 0 PID: 97 Comm: kt_posix_timers Not tainted 6.12.118 #2
Hardware name: Generic DT based system
Internal error: kernel stack overflow: 0 [#1] PREEMPT SMP ARM
PC is at __dabt_svc+0x14/0x80
LR is at __schedule+0x34c/0xb44
Call trace: 
Code: e31d0a02 1a002a85 e31d0004 124dd004 (e98d1ffe) 
---[ end trace 0000000000000000 ]---
Kernel panic - not syncing: Fatal exception"""
        findings = scan(text).findings
        self.assertEqual([(f.kind, f.line) for f in findings], [("stack-overflow", 2), ("panic", 13)])
        self.assertEqual(findings[0].text, "Insufficient stack space to handle exception!")


class StackDumpTest(unittest.TestCase):
    def test_bare_dump_stack_is_one_finding(self):
        text = """CPU: 1 UID: 0 PID: 40 Comm: kunit_try_catch Not tainted 6.12.118 #1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
Call Trace:
 dump_stack_lvl+0x5c/0x80
 ktimer_something+0x10/0x20
    ok 1 t"""
        result = scan(text)
        self.assertEqual([(f.kind, f.line) for f in result.findings], [("stack-dump", 2)])

    def test_a_bare_dump_names_who_dumped_and_why(self):
        text = """guest: begin kt_ptp
netdevsim: something odd
CPU: 1 UID: 0 PID: 40 Comm: kt_ptp Not tainted 6.12.118 #1
Hardware name: Generic DT based system
Call trace: 
 unwind_backtrace from show_stack+0x10/0x14
 show_stack from dump_stack_lvl+0x50/0x5c
 dump_stack_lvl from nsim_dev_probe+0x20/0x30
 nsim_dev_probe from really_probe+0x10/0x20
guest: end kt_ptp exit 0 seconds 1.0"""
        (finding,) = scan(text).findings
        self.assertEqual(finding.detail, ["guest: begin kt_ptp", "netdevsim: something odd",
                                          "CPU: 1 UID: 0 PID: 40 Comm: kt_ptp Not tainted 6.12.118 #1",
                                          "dump_stack_lvl from nsim_dev_probe+0x20/0x30",
                                          "nsim_dev_probe from really_probe+0x10/0x20"])

    def test_arm_backtrace(self):
        text = "Hardware name: Generic DT based system\nCall trace: \n unwind_backtrace from show_stack+0x10/0x14\n"
        self.assertEqual(kinds(scan(text)), ["stack-dump"])


class RealTimeoutLogTest(unittest.TestCase):
    def test_real_hung_run(self):
        result = logscan.scan_detailed(data_lines("real-i386-ktimers-timeout.log"))
        self.assertEqual({f.kind for f in result.findings}, {"rcu-stall"})
        self.assertEqual(len(result.findings), 8)
        self.assertEqual(len(result.expected), 14)
        self.assertTrue(all(f.text.startswith("WARNING: CPU:") for f in result.expected))


class CleanLogTest(unittest.TestCase):
    def test_real_clean_boot_has_no_findings(self):
        result = logscan.scan_detailed(data_lines("kunitpy-i386-time_test.log"))
        self.assertEqual(result.findings, [])

    def test_kernel_sample_with_a_boot_warning(self):
        result = logscan.scan_detailed(data_lines("kernel-test_output_isolated_correctly.log"))
        self.assertEqual([(f.kind, f.line) for f in result.findings], [("warning", 11)])
        self.assertIn("kernel/time/clockevents.c:458", result.findings[0].text)

    def test_scan_returns_findings_list(self):
        findings = logscan.scan(SPLAT.splitlines())
        self.assertEqual(len(findings), 1)
        self.assertIn("line 2: [warning]", str(findings[0]))
        self.assertEqual(findings[0].to_dict()["line"], 2)


if __name__ == "__main__":
    unittest.main()
