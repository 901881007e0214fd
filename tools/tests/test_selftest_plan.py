from helpers import TempDirTestCase, write

from common import ToolError

from guest import plan as selftest_plan

PLAN = """\
# comment
[posix_timers]
timeout = 120

[raw_skew]
group   = sleepers
timeout = 200

[nanosleep]
group   = sleepers   # runs next to raw_skew
timeout = 60

[leap-a-day]
args    = -i 2
timeout = 120

[rtcpie]
run = no
why = no RTC in the guest

[set-2038]
run = full
why = 4 minutes
timeout = 400
"""


class PlanTest(TempDirTestCase):
    def load(self, text):
        return selftest_plan.load(write(self.tmp / "plan", text))

    def test_tests_in_order_with_groups_args_and_left_out(self):
        plan = self.load(PLAN)
        self.assertEqual([t.name for t in plan.tests], ["posix_timers", "raw_skew", "nanosleep", "leap-a-day"])
        self.assertEqual(plan.tests[0].group, "posix_timers")   # default: alone
        self.assertEqual(plan.tests[2].group, "sleepers")
        self.assertEqual(plan.tests[3].args, ("-i", "2"))
        self.assertEqual(plan.left_out, {"rtcpie": "no RTC in the guest",
                                         "set-2038": "only in the full run (`make selftest FULL=1`): 4 minutes"})

    def test_the_full_run_adds_the_slow_tests(self):
        plan = selftest_plan.load(write(self.tmp / "plan", PLAN), full=True)
        self.assertEqual(plan.tests[-1].name, "set-2038")
        self.assertEqual(list(plan.left_out), ["rtcpie"])

    def test_guest_plan_lines(self):
        lines = self.load(PLAN).guest_plan().splitlines()
        self.assertTrue(lines[0].startswith("#"))
        self.assertEqual(lines[1:], ["posix_timers 120 posix_timers", "sleepers 200 raw_skew",
                                     "sleepers 60 nanosleep", "leap-a-day 120 leap-a-day -i 2"])
        self.assertEqual(self.load(PLAN).guest_plan(["nanosleep"]).splitlines()[1:], ["sleepers 60 nanosleep"])

    def test_only_some_programs(self):
        plan = self.load(PLAN).only(["nanosleep", "posix_timers"])
        self.assertEqual([(t.name, t.group) for t in plan.tests], [("posix_timers", "posix_timers"),
                                                                    ("nanosleep", "sleepers")])
        self.assertEqual(plan.left_out["raw_skew"], "not among the programs asked for")
        self.assertEqual(plan.left_out["rtcpie"], "no RTC in the guest")
        with self.assertRaises(ToolError) as caught:
            self.load(PLAN).only(["nanosleep", "rtcpie", "nope"])
        self.assertIn("nope, rtcpie: not a test that", str(caught.exception))

    def test_worst_case_counts_a_group_once(self):
        self.assertEqual(self.load(PLAN).worst_case_seconds(), 120 + 200 + 120)

    def test_mistakes_name_the_section(self):
        cases = {
            "[a]\ntimeout = soon\n": "timeout",
            "[a]\ntimeout = 5\ncolour = red\n": "unknown key `colour`",
            "[a]\nrun = no\n": "why",
            "[a]\nrun = maybe\n": "one of yes, full, no",
            "[a]\nrun = full\ntimeout = 5\n": "why",
            "[a]\ngroup = g\ntimeout = 1\n[b]\ntimeout = 1\n[c]\ngroup = g\ntimeout = 1\n": "used again",
            "[a]\ntimeout = 1\nargs = x|y\n": "plain words",
            "[a]\nrun = no\nwhy = w\n": "no test to run",
        }
        for text, expected in cases.items():
            with self.subTest(text=text):
                with self.assertRaises(ToolError) as ctx:
                    self.load(text)
                self.assertIn(expected, str(ctx.exception))

    def test_missing_file(self):
        with self.assertRaises(ToolError) as ctx:
            selftest_plan.load(self.tmp / "nope")
        self.assertIn("git checkout", str(ctx.exception))

    def test_the_repository_plan_loads(self):
        plan = selftest_plan.load()
        self.assertIn("nanosleep", [t.name for t in plan.tests])
