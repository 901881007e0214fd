import unittest

from helpers import TempDirTestCase  # noqa: F401  (puts tools/ on sys.path)

from guest import output as guest_output
from guest.output import ERROR, FAIL, MISS, PASS, SKIP

CONSOLE = """\
[    0.000000] Linux version 6.12.118 ...
guest: boot 6.12.118-gf4500818024e i686
guest: cmdline kunit.enable=0 rdinit=/init panic=-1 ktimer.watchdog=20 console=ttyS0 ktimer.users=1
guest: counters before users: on, nanosleep 0
guest: begin nanosleep
guest: begin nsleep-lat
guest: nanosleep| TAP version 13
guest: nanosleep| 1..12
guest: nanosleep| ok 1 CLOCK_REALTIME
guest: nanosleep| ok 3 CLOCK_PROCESS_CPUTIME_ID # SKIP
guest: end nanosleep exit 0 seconds 8.133
[   20.123456] some kernel message
guest: nsleep-lat| # Large rel latency: 50000000 ns :not ok 1 CLOCK_REALTIME
guest: end nsleep-lat exit 1 seconds 85.041
guest: begin set-tz
guest: end set-tz exit 4 seconds 0.010
guest: begin threadtest -t 5
guest: end threadtest timeout 60 seconds 60.100
guest: begin set-tai
guest: end set-tai signal 11 seconds 0.5
guest: begin set-2038
guest: counters after users: on, nanosleep 1234, itimer 7, posix_timer 0
guest: done
"""


class ParseTest(unittest.TestCase):
    def setUp(self):
        self.run = guest_output.parse(CONSOLE.splitlines(), planned=["nanosleep", "leapcrash"])

    def test_statuses_from_exit_status_signal_and_timeout(self):
        statuses = {name: test.status for name, test in self.run.tests.items()}
        self.assertEqual(statuses, {"nanosleep": PASS, "nsleep-lat": FAIL, "set-tz": SKIP, "threadtest": FAIL,
                                    "set-tai": FAIL, "set-2038": ERROR, "leapcrash": MISS})
        self.assertEqual(self.run.tests["threadtest"].how, "timeout 60")
        self.assertEqual(self.run.tests["threadtest"].args, "-t 5")
        self.assertEqual(self.run.tests["set-tai"].how, "signal 11")
        self.assertAlmostEqual(self.run.tests["nanosleep"].seconds, 8.133)

    def test_output_ktap_subtests_and_measured_values(self):
        nanosleep = self.run.tests["nanosleep"]
        self.assertEqual(nanosleep.output[0], "TAP version 13")
        self.assertEqual(nanosleep.subtests, [(PASS, "CLOCK_REALTIME"), (SKIP, "CLOCK_PROCESS_CPUTIME_ID")])
        self.assertEqual(nanosleep.numbered_output()[0], (7, "TAP version 13"))
        self.assertEqual(self.run.tests["nsleep-lat"].measured(),
                         ["# Large rel latency: 50000000 ns :not ok 1 CLOCK_REALTIME"])

    def test_boot_lines_and_counters(self):
        self.assertTrue(self.run.done)
        self.assertEqual(self.run.kernel, "6.12.118-gf4500818024e")
        self.assertIn("ktimer.users=1", self.run.cmdline)
        self.assertEqual(self.run.counters["before"], {"mode": "on", "nanosleep": 0})
        self.assertEqual(self.run.counters["after"], {"mode": "on", "nanosleep": 1234, "itimer": 7,
                                                      "posix_timer": 0})

    def test_a_kernel_line_glued_to_the_end_line(self):
        # ARM soak (issue 26): the kernel's stack record landed at the end of /init's line
        lines = ["guest: begin kt_timerfd",
                 "guest: end kt_timerfd exit 0 seconds 4.692kt_ptp (47) used greatest stack depth: 5540 bytes left"]
        run = guest_output.parse(lines, planned=["kt_timerfd"])
        self.assertEqual(run.tests["kt_timerfd"].status, PASS)
        self.assertAlmostEqual(run.tests["kt_timerfd"].seconds, 4.692)

    def test_an_unfinished_guest(self):
        run = guest_output.parse(CONSOLE.splitlines()[:6], planned=["nanosleep"])
        self.assertFalse(run.done)
        self.assertEqual(run.tests["nanosleep"].status, ERROR)
        self.assertNotIn("after", run.counters)


class CountersTest(unittest.TestCase):
    def test_any_name_number_pairs(self):
        self.assertEqual(guest_output.parse_counters("users: off, nanosleep 0"), {"mode": "off", "nanosleep": 0})
        self.assertEqual(guest_output.parse_counters("users: on, nanosleep 3, timerfd 2"),
                         {"mode": "on", "nanosleep": 3, "timerfd": 2})
        self.assertIsNone(guest_output.parse_counters("cpu 0"))


if __name__ == "__main__":
    unittest.main()


class MeasuredTest(unittest.TestCase):
    def test_failed_lines_and_latencies_but_not_the_totals(self):
        test = guest_output.TestRun("set-timer-lat", output=[
            "Setting timers for every 1 seconds",
            "CLOCK_REALTIME ABSTIME PERIODIC max latency:   52000000 ns : [FAILED]",
            "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"])
        self.assertEqual(test.measured(), ["CLOCK_REALTIME ABSTIME PERIODIC max latency:   52000000 ns : [FAILED]"])
