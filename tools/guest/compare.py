"""Compare the two columns of one arch: the same kernel booted with the ktimer path on
(ktimer.users=1) and off (ktimer.users=0, the stock hrtimer path).

The gate, per test: passing on the hrtimer path and not on the ktimer path
fails; failing on both paths (or on the hrtimer path alone) is accepted only
when selftests/known-failures explains it for this arch, and is then
counted as skipped and listed with its measured values; every other failure,
crash, timeout or missing test fails. The debugfs counters must prove the
path: on the ktimer column every counter the kernel prints has grown, on the
hrtimer column every counter is zero.
"""

from dataclasses import dataclass, field

from guest.output import ERROR, FAIL, MISS, PASS, SKIP, TestRun
from guest.known_failures import reason_for

ON, OFF = "ktimer", "hrtimer"       # column names: which path served the user timers
BAD = (FAIL, ERROR, MISS)
# A case the stock path cannot serve (timers on PTP clocks, docs/design.md) checks the stock refusal on
# the hrtimer column and then skips with a reason that starts "feature:" (selftests/user/kt_ptp.c).
FEATURE_SKIP = "# SKIP feature:"


@dataclass
class Row:
    test: str
    on: TestRun = None
    off: TestRun = None
    verdict: str = PASS         # PASS, SKIP, KNOWN (selftests/known-failures), FAIL, NOT_RUN, NOT_BUILT
    note: str = ""

    def cells(self):
        return (self.on, self.off)


@dataclass
class Comparison:
    arch: str
    rows: list = field(default_factory=list)
    problems: list = field(default_factory=list)    # gate failures that are not a test row (counters, boots)

    def counts(self):
        """Per cell, in the KUnit results' vocabulary; a known failure counts as SKIP."""
        counts = {PASS: 0, FAIL: 0, SKIP: 0, ERROR: 0, MISS: 0}
        for row in self.rows:
            if row.verdict == "NOT_RUN":
                continue
            if row.verdict == "NOT_BUILT":
                counts[MISS] += 2
                continue
            for cell in row.cells():
                status = cell.status if cell else MISS
                if status in BAD and row.verdict == "KNOWN":
                    status = SKIP
                counts[status] += 1
        counts["total"] = sum(counts.values())
        return counts

    def failed(self):
        return any(row.verdict in ("FAIL", "NOT_BUILT") for row in self.rows) or bool(self.problems)


def failed_subtests(cell):
    return {name for status, name in cell.subtests if status == FAIL}


def compare_row(test, on, off, arch, known):
    row = Row(test, on, off)
    on_bad, off_bad = on.status in BAD, off.status in BAD
    # With KTAP subtests, "passes on the hrtimer path" holds per subtest too.
    only_on = failed_subtests(on) - failed_subtests(off) if on_bad and off_bad and off.subtests else set()
    reason = reason_for(known, test, arch, failed_subtests(on) | failed_subtests(off))
    if only_on:
        row.verdict = "FAIL"
        row.note = f"subtest(s) pass on the hrtimer path, not on the ktimer path: {', '.join(sorted(only_on))}"
    elif on.status == PASS and off.status in (PASS, SKIP):
        row.verdict = PASS
        features = sum(FEATURE_SKIP in line for line in off.output)
        if features:
            row.note = (f"{features} case(s) are a feature of the ktimer path, not a regression: the stock "
                        "path refused them as 6.12 does")
    elif on.status == SKIP and off.status == SKIP:
        row.verdict = SKIP
    elif (on_bad or on.status == SKIP) and off.status == PASS:
        row.verdict, row.note = "FAIL", "passes on the hrtimer path, not on the ktimer path"
    elif reason and on.status in (PASS, SKIP, FAIL) and off_bad and off.status != MISS \
            and on.status not in (ERROR, MISS):
        row.verdict = "KNOWN"
        where = "both paths" if on_bad else "the hrtimer path"
        row.note = f"known failure on {where}: {reason}"
    elif on_bad and off_bad:
        row.verdict = "FAIL"
        row.note = "fails on both paths" + (" (crash, timeout or missing: not excused by the known-failures "
                                            "file)" if reason else "; not in selftests/known-failures")
    else:
        row.verdict = "FAIL"
        row.note = "fails on the hrtimer path only; not in selftests/known-failures"
    return row


# The project's program that uses each counter's syscalls. A run of some programs only (make repeat
# SELFTESTS=1 PROGRAMS=...) needs a counter to grow only when its program ran; the full plan runs them all.
COUNTER_PROGRAMS = {"nanosleep": "kt_nanosleep", "itimer": "kt_itimer", "posix_timer": "kt_posix_timers",
                    "timerfd": "kt_timerfd", "pclock": "kt_ptp"}


def counter_problems(column, counters, ran=None):
    """Why the debugfs counters do not prove the column's path ([] when they do). ran: the programs that
    ran (None: the whole plan)."""
    before, after = counters.get("before"), counters.get("after")
    if not after:
        return [f"{column} column: no `users: ` line in /sys/kernel/debug/ktimers after the tests, so nothing "
                "proves which path served them"]
    problems = []
    expected_mode = "on" if column == ON else "off"
    if after.get("mode") != expected_mode:
        problems.append(f"{column} column: debugfs says `users: {after.get('mode')}`, expected `{expected_mode}` "
                        "(was the ktimer.users= argument ignored?)")
    for name, value in after.items():
        if name == "mode":
            continue
        grown = value - (before or {}).get(name, 0)
        used = ran is None or name not in COUNTER_PROGRAMS or COUNTER_PROGRAMS[name] in ran
        if column == ON and grown <= 0 and used:
            problems.append(f"ktimer column: the `{name}` counter did not grow ({value} after the tests): "
                            f"the {name} syscalls did not go through ktimers")
        if column == OFF and value != 0:
            problems.append(f"hrtimer column: the `{name}` counter is {value}, not 0: ktimers served "
                            "syscalls with ktimer.users=0")
    return problems


def compare(arch, plan, not_built, on_run, off_run, known):
    """A Comparison of the two GuestRuns (guest_output.parse) of one arch."""
    result = Comparison(arch)
    for test in plan.tests:
        if test.name in not_built:
            result.rows.append(Row(test.name, verdict="NOT_BUILT", note=f"not built: {not_built[test.name]}"))
            continue
        on = on_run.tests.get(test.name) or TestRun(test.name)
        off = off_run.tests.get(test.name) or TestRun(test.name)
        result.rows.append(compare_row(test.name, on, off, arch, known))
    for name, why in plan.left_out.items():
        result.rows.append(Row(name, verdict="NOT_RUN", note=f"not run: {why}"))
    ran = [test.name for test in plan.tests]
    result.problems += counter_problems(ON, on_run.counters, ran)
    result.problems += counter_problems(OFF, off_run.counters, ran)
    return result
