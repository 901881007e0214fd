"""The guest selftest plan (selftests/plan): which timer selftests run, with which
arguments, time limit and group, and which are left out and why.

selftests/plan is an INI file, one section per selftest of
tools/testing/selftests/timers (documented at its top). The guest's /init gets
it as plain lines "<group> <timeout> <test> [args...]" (guest_plan()).
"""

import configparser
import re
from dataclasses import dataclass, replace
from pathlib import Path

from common import REPO_ROOT, ToolError, rel

PLAN_FILE = REPO_ROOT / "selftests" / "plan"
KEYS = ("run", "group", "timeout", "args", "why")
RUN_VALUES = ("yes", "full", "no")
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
WORD_RE = re.compile(r"^[^\s|]+$")
HINT = "see the comment at the top of selftests/plan and docs/running.md#timer-selftests-in-the-guest"


@dataclass(frozen=True)
class PlannedTest:
    name: str
    group: str
    timeout: int        # seconds; the guest kills the test (and what it started) after that
    args: tuple = ()


@dataclass(frozen=True)
class Plan:
    tests: tuple            # PlannedTest, in run order
    left_out: dict          # test name -> why it is not run
    path: Path = PLAN_FILE

    def guest_plan(self, names=None):
        """The /plan file of the initramfs, for the tests in `names` (default: all)."""
        lines = [f"# from {rel(self.path)}: <group> <timeout s> <test> [args...]"]
        for test in self.tests:
            if names is None or test.name in names:
                lines.append(" ".join((test.group, str(test.timeout), test.name, *test.args)))
        return "\n".join(lines) + "\n"

    def only(self, names):
        """The plan narrowed to the tests in `names` (run order and groups kept): `make repeat PROGRAMS=`."""
        unknown = sorted(set(names) - {test.name for test in self.tests})
        if unknown:
            raise ToolError(f"{', '.join(unknown)}: not a test that {rel(self.path)} runs",
                            f"name tests of its sections: {' '.join(test.name for test in self.tests)}")
        left_out = dict(self.left_out)
        left_out.update({test.name: "not among the programs asked for" for test in self.tests
                         if test.name not in names})
        return replace(self, tests=tuple(test for test in self.tests if test.name in names), left_out=left_out)

    def worst_case_seconds(self):
        """How long the tests may take in the guest if each group runs into its longest timeout."""
        longest = {}
        for test in self.tests:
            longest[test.group] = max(longest.get(test.group, 0), test.timeout)
        return sum(longest.values())


def load(path=PLAN_FILE, full=False):
    """The plan; full=True also takes the tests marked `run = full` (too slow for every run)."""
    path = Path(path)
    where = rel(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ToolError(f"cannot read the selftest plan {where}: {error.strerror or error}",
                        "restore it from git (`git checkout -- selftests/plan`)") from None
    parser = configparser.ConfigParser(interpolation=None, default_section="\0", strict=True,
                                       empty_lines_in_values=False, inline_comment_prefixes=("#",))
    try:
        parser.read_string(text, source=where)
    except configparser.Error as error:
        raise ToolError(f"{where}: {str(error).splitlines()[0]}", HINT) from None
    tests, left_out, previous_group = [], {}, None
    seen_groups = set()
    for name in parser.sections():
        section = parser[name]

        def fail(message, name=name):
            raise ToolError(f"{where}: [{name}]: {message}", HINT)

        if not NAME_RE.match(name):
            fail("a section names a selftest binary (letters, digits, '_', '-', '.')")
        for key in section:
            if key not in KEYS:
                fail(f"unknown key `{key}` (known: {', '.join(KEYS)})")
        runs = section.get("run", "yes").strip()
        if runs not in RUN_VALUES:
            fail(f"run must be one of {', '.join(RUN_VALUES)}, not {runs!r}")
        why = " ".join(section.get("why", "").split())
        if runs != "yes" and not why:
            fail(f"a test with `run = {runs}` needs `why = <the reason>`: the report prints it")
        if runs == "no" or (runs == "full" and not full):
            left_out[name] = why if runs == "no" else f"only in the full run (`make selftest FULL=1`): {why}"
            continue
        group = section.get("group", name).strip()
        if not WORD_RE.match(group):
            fail(f"group must be one word, not {group!r}")
        if group != previous_group and group in seen_groups:
            # /init runs consecutive lines of one group together: a split group would run twice
            fail(f"group {group!r} is used again after other groups: put its tests next to each other")
        seen_groups.add(group)
        previous_group = group
        timeout = section.get("timeout", "").strip()
        if not timeout.isdigit() or int(timeout) < 1:
            fail(f"timeout must be a number of seconds >= 1, not {timeout!r}")
        args = tuple(section.get("args", "").split())
        if any(not WORD_RE.match(arg) for arg in args):
            fail("args are plain words (no '|'): the guest splits them on blanks")
        tests.append(PlannedTest(name, group, int(timeout), args))
    if not tests:
        raise ToolError(f"{where}: no test to run", HINT)
    return Plan(tuple(tests), left_out, path)
