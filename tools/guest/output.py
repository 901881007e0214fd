"""Parse the guest's console (the protocol of tools/guest/init.c) into per-test results.

A test's verdict comes from its exit status, as kselftest's runner decides it:
0 passes, 4 (KSFT_SKIP) is skipped, anything else, a signal or the guest's
timeout fails. A test that began but never ended (the guest crashed in it) is
ERROR; a planned test that never began is MISS. KTAP lines in a test's output
("ok 3 CLOCK_MONOTONIC", "not ok ...") are kept as its subtests, for the report.
"""

import re
from dataclasses import dataclass, field

PASS, FAIL, SKIP, ERROR, MISS = "PASS", "FAIL", "SKIP", "ERROR", "MISS"
KSFT_SKIP = 4

BOOT_RE = re.compile(r"^guest: boot (\S+) (\S+)")
BEGIN_RE = re.compile(r"^guest: begin (\S+)(?: (.*))?$")
OUTPUT_RE = re.compile(r"^guest: (\S+)\| ?(.*)$")
# /init prints the seconds with three decimals; a kernel line may be glued to the end of its line
END_RE = re.compile(r"^guest: end (\S+) (exit|signal|timeout|error) (.*?) seconds (\d+(?:\.\d{1,3})?)")
COUNTERS_RE = re.compile(r"^guest: counters (before|after) (.*)$")
DONE = "guest: done"
KTAP_RE = re.compile(r"^(ok|not ok) \d+ (.*?)(?: # (SKIP.*))?$")
# What the latency tests print about themselves: shown for failures ("measured values").
TOTALS_RE = re.compile(r"^# Totals: ")
MEASURE_RE = re.compile(r"latency|FAIL|not ok|ERROR|error|expected|differ", re.IGNORECASE)


@dataclass
class TestRun:
    name: str
    args: str = ""
    status: str = MISS
    how: str = ""               # exit 1, signal 9, timeout 120, ...
    seconds: float = None
    output: list = field(default_factory=list)
    numbers: list = field(default_factory=list)     # console line number of each output line
    subtests: list = field(default_factory=list)    # (status, name) from KTAP lines

    def measured(self, limit=4):
        """The output lines that say what went wrong (latencies, FAILED lines); not kselftest's totals."""
        return [line for line in self.output if MEASURE_RE.search(line) and not TOTALS_RE.match(line)][:limit]

    def numbered_output(self):
        return list(zip(self.numbers, self.output))

    def to_dict(self):
        return {"name": self.name, "args": self.args, "status": self.status, "how": self.how,
                "seconds": self.seconds, "subtests": [list(s) for s in self.subtests],
                "measured": self.measured(), "output": self.output}


@dataclass
class GuestRun:
    tests: dict = field(default_factory=dict)       # name -> TestRun, in begin order
    counters: dict = field(default_factory=dict)    # "before"/"after" -> parsed users line, or None
    counters_raw: dict = field(default_factory=dict)
    kernel: str = None
    machine: str = None
    cmdline: str = None
    done: bool = False


def parse_counters(text):
    """'users: on, nanosleep 12, itimer 3' -> {'mode': 'on', 'nanosleep': 12, 'itimer': 3}; None if not that."""
    if not text.startswith("users: "):
        return None
    parts = [part.strip() for part in text[len("users: "):].split(",")]
    counters = {"mode": parts[0]}
    for part in parts[1:]:
        words = part.split()
        if len(words) == 2 and words[1].isdigit():
            counters[words[0]] = int(words[1])
    return counters


def verdict(how, detail):
    if how == "exit":
        code = int(detail) if detail.strip().isdigit() else -1
        return PASS if code == 0 else SKIP if code == KSFT_SKIP else FAIL
    return FAIL


def parse(lines, planned=()):
    """GuestRun from console lines; planned tests that never began are MISS."""
    run = GuestRun()
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if line == DONE:
            run.done = True
            continue
        if not line.startswith("guest: "):
            continue
        match = OUTPUT_RE.match(line)
        if match and match.group(1) in run.tests:
            test = run.tests[match.group(1)]
            test.output.append(match.group(2))
            test.numbers.append(number)
            ktap = KTAP_RE.match(match.group(2))
            if ktap:
                status = SKIP if ktap.group(3) else PASS if ktap.group(1) == "ok" else FAIL
                test.subtests.append((status, ktap.group(2).strip()))
            continue
        match = BEGIN_RE.match(line)
        if match:
            run.tests[match.group(1)] = TestRun(match.group(1), match.group(2) or "", ERROR,
                                                "began but never ended (the guest stopped)")
            continue
        match = END_RE.match(line)
        if match:
            test = run.tests.setdefault(match.group(1), TestRun(match.group(1)))
            test.status = verdict(match.group(2), match.group(3))
            test.how = f"{match.group(2)} {match.group(3)}"
            test.seconds = float(match.group(4))
            continue
        match = COUNTERS_RE.match(line)
        if match:
            run.counters_raw[match.group(1)] = match.group(2)
            run.counters[match.group(1)] = parse_counters(match.group(2))
            continue
        match = BOOT_RE.match(line)
        if match:
            run.kernel, run.machine = match.group(1), match.group(2)
        elif line.startswith("guest: cmdline "):
            run.cmdline = line[len("guest: cmdline "):]
    for name in planned:
        run.tests.setdefault(name, TestRun(name, status=MISS, how="planned but never started"))
    return run
