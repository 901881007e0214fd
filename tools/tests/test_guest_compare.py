import unittest

from helpers import TempDirTestCase, write

from guest import compare as guest_compare, known_failures, plan as selftest_plan
from common import ToolError
from guest.compare import OFF, ON
from guest.output import ERROR, FAIL, MISS, PASS, SKIP, GuestRun, TestRun

KNOWN = {"nsleep-lat": known_failures.KnownFailure("40 ms wake-up latency threshold under software emulation",
                                                   ("arm",)),
         "set-timer-lat": known_failures.KnownFailure("same threshold"),
         "posix_timers": known_failures.KnownFailure("6.12 lacks the SIG_IGN rework", (),
                                                     ("check_rearm", "check_delete"))}


def row(on, off, test="nsleep-lat", arch="arm", on_subtests=(), off_subtests=()):
    return guest_compare.compare_row(test, TestRun(test, status=on, subtests=list(on_subtests)),
                                     TestRun(test, status=off, subtests=list(off_subtests)), arch, KNOWN)


def run(statuses, counters):
    guest = GuestRun(tests={name: TestRun(name, status=status) for name, status in statuses.items()})
    guest.counters = counters
    return guest


class RowTest(unittest.TestCase):
    def test_passing_on_both_paths_or_skipped_on_both(self):
        self.assertEqual(row(PASS, PASS).verdict, "PASS")
        self.assertEqual(row(PASS, SKIP).verdict, "PASS")
        self.assertEqual(row(SKIP, SKIP).verdict, "SKIP")

    def test_cases_the_stock_path_refuses_as_documented_pass_as_a_feature(self):
        off = TestRun("kt_ptp", status=SKIP, output=["ok 1 sleep # SKIP feature: stock 6.12 refuses it",
                                                     "ok 2 timer # SKIP feature: stock 6.12 refuses it"])
        result = guest_compare.compare_row("kt_ptp", TestRun("kt_ptp", status=PASS), off, "arm", KNOWN)
        self.assertEqual(result.verdict, "PASS")
        self.assertIn("2 case(s) are a feature of the ktimer path", result.note)
        self.assertEqual(row(PASS, SKIP).note, "")      # an ordinary skip says nothing
        self.assertEqual(guest_compare.compare_row("kt_ptp", TestRun("kt_ptp", status=FAIL), off, "arm",
                                                   KNOWN).verdict, "FAIL")

    def test_failing_only_on_the_ktimer_path_fails_even_when_known(self):
        for on in (FAIL, ERROR, MISS, SKIP):
            with self.subTest(on=on):
                result = row(on, PASS)
                self.assertEqual(result.verdict, "FAIL")
                self.assertIn("not on the ktimer path", result.note)

    def test_failing_on_both_paths_is_excused_only_by_the_known_file_for_that_arch(self):
        known = row(FAIL, FAIL)
        self.assertEqual(known.verdict, "KNOWN")
        self.assertIn("software emulation", known.note)
        self.assertEqual(row(FAIL, FAIL, arch="i386").verdict, "FAIL")        # known on arm only
        self.assertEqual(row(FAIL, FAIL, test="set-timer-lat", arch="i386").verdict, "KNOWN")  # every arch
        self.assertEqual(row(FAIL, FAIL, test="raw_skew").verdict, "FAIL")

    def test_subtests_failing_only_on_the_ktimer_path_fail(self):
        off = [(FAIL, "check_rearm"), (PASS, "ITIMER_REAL")]
        result = row(FAIL, FAIL, "posix_timers", on_subtests=[(FAIL, "check_rearm"), (FAIL, "ITIMER_REAL")],
                     off_subtests=off)
        self.assertEqual(result.verdict, "FAIL")
        self.assertIn("ITIMER_REAL", result.note)
        same = row(FAIL, FAIL, "posix_timers", on_subtests=off, off_subtests=off)
        self.assertEqual(same.verdict, "KNOWN")

    def test_the_known_file_can_excuse_only_some_subtests(self):
        other = [(FAIL, "check_rearm"), (FAIL, "check_overrun")]
        self.assertEqual(row(FAIL, FAIL, "posix_timers", on_subtests=other, off_subtests=other).verdict, "FAIL")

    def test_a_crash_or_missing_test_is_never_excused(self):
        self.assertEqual(row(ERROR, FAIL).verdict, "FAIL")
        self.assertEqual(row(FAIL, MISS).verdict, "FAIL")

    def test_failing_on_the_hrtimer_path_only(self):
        self.assertEqual(row(PASS, FAIL).verdict, "KNOWN")
        self.assertEqual(row(PASS, FAIL, test="raw_skew").verdict, "FAIL")


class CountersTest(unittest.TestCase):
    def test_the_ktimer_column_needs_every_printed_counter_to_grow(self):
        counters = {"before": {"mode": "on", "nanosleep": 0}, "after": {"mode": "on", "nanosleep": 12}}
        self.assertEqual(guest_compare.counter_problems(ON, counters), [])
        counters["after"]["posix_timer"] = 0     # printed by the kernel and still zero: a failure
        problems = guest_compare.counter_problems(ON, counters)
        self.assertEqual(len(problems), 1)
        self.assertIn("posix_timer", problems[0])

    def test_a_counter_needs_to_grow_only_when_a_program_that_uses_it_ran(self):
        # make repeat SELFTESTS=1 PROGRAMS=kt_posix_timers: no itimer program ran, so itimer stays at 0
        counters = {"before": {"mode": "on", "itimer": 0, "posix_timer": 0},
                    "after": {"mode": "on", "itimer": 0, "posix_timer": 40}}
        self.assertEqual(guest_compare.counter_problems(ON, counters, ran=["kt_posix_timers"]), [])
        problems = guest_compare.counter_problems(ON, counters, ran=["kt_posix_timers", "kt_itimer"])
        self.assertEqual(len(problems), 1)
        self.assertIn("`itimer`", problems[0])
        # the hrtimer column stays at 0 whatever ran
        off = {"after": {"mode": "off", "itimer": 2}}
        self.assertEqual(len(guest_compare.counter_problems(OFF, off, ran=["kt_posix_timers"])), 1)

    def test_a_counter_the_kernel_does_not_print_is_not_required(self):
        counters = {"before": {"mode": "on", "nanosleep": 1}, "after": {"mode": "on", "nanosleep": 5}}
        self.assertEqual(guest_compare.counter_problems(ON, counters), [])

    def test_the_hrtimer_column_needs_every_counter_at_zero_and_mode_off(self):
        self.assertEqual(guest_compare.counter_problems(OFF, {"after": {"mode": "off", "nanosleep": 0}}), [])
        problems = guest_compare.counter_problems(OFF, {"after": {"mode": "on", "nanosleep": 3}})
        self.assertEqual(len(problems), 2)
        self.assertIn("expected `off`", problems[0])

    def test_no_counters_line_proves_nothing(self):
        self.assertIn("nothing proves", guest_compare.counter_problems(ON, {})[0])


class CompareTest(TempDirTestCase):
    def test_rows_counts_and_gate(self):
        plan = selftest_plan.load(write(self.tmp / "plan", "[nanosleep]\ntimeout = 10\n[nsleep-lat]\ntimeout = 10\n"
                                        "[valid-adjtimex]\ntimeout = 10\n[rtcpie]\nrun = no\nwhy = no RTC\n"))
        on = run({"nanosleep": PASS, "nsleep-lat": FAIL},
                 {"before": {"mode": "on", "nanosleep": 0}, "after": {"mode": "on", "nanosleep": 9}})
        off = run({"nanosleep": PASS, "nsleep-lat": FAIL},
                  {"before": {"mode": "off", "nanosleep": 0}, "after": {"mode": "off", "nanosleep": 0}})
        result = guest_compare.compare("arm", plan, {}, on, off, KNOWN)
        self.assertEqual([(r.test, r.verdict) for r in result.rows],
                         [("nanosleep", "PASS"), ("nsleep-lat", "KNOWN"), ("valid-adjtimex", "FAIL"),
                          ("rtcpie", "NOT_RUN")])
        counts = result.counts()
        self.assertEqual((counts[PASS], counts[SKIP], counts[MISS], counts["total"]), (2, 2, 2, 6))
        self.assertTrue(result.failed())     # valid-adjtimex never ran
        result = guest_compare.compare("arm", plan, {"valid-adjtimex": "clock_adjtime defined twice"}, on, off,
                                       KNOWN)
        self.assertEqual(result.rows[2].verdict, "NOT_BUILT")
        self.assertIn("defined twice", result.rows[2].note)


class KnownFailuresTest(TempDirTestCase):
    def test_load_and_reason_for(self):
        path = write(self.tmp / "known", "[nsleep-lat]\narches = arm\nreason = slow\n  wake-ups\n"
                                         "[posix_timers]\nsubtests = check_rearm,  check_sig_ign  SIGEV_SIGNAL\n"
                                         "reason = r\n")
        known = known_failures.load(path)
        self.assertEqual(known_failures.reason_for(known, "nsleep-lat", "arm"), "slow wake-ups")
        self.assertIsNone(known_failures.reason_for(known, "nsleep-lat", "i386"))
        self.assertEqual(known["posix_timers"].subtests, ("check_rearm", "check_sig_ign SIGEV_SIGNAL"))
        self.assertEqual(known_failures.reason_for(known, "posix_timers", "arm", {"check_rearm"}), "r")
        self.assertIsNone(known_failures.reason_for(known, "posix_timers", "arm", {"ITIMER_REAL"}))
        self.assertEqual(known_failures.load(self.tmp / "absent"), {})

    def test_a_reason_is_required(self):
        for text in ("[a]\narches = arm\n", "[a]\nreason = r\nwhen = always\n", "[a]\nreason = r\narches = vax\n"):
            with self.subTest(text=text), self.assertRaises(ToolError):
                known_failures.load(write(self.tmp / "known", text))


if __name__ == "__main__":
    unittest.main()
