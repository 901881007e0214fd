"""kunit.py's own parser on the same console log: the reference for kunit/ktap.py.

The tree's tools/testing/kunit/kunit_parser.py (the parser of the kernel under test, imported
from the tree) parses every run's console too, as `kunit.py parse console.log` would. What it
prints is the result tree and summary line `kunit.py run` shows; every test whose status differs
between it and ktap.py is a disagreement that the run reports, so a bug in either parser shows
up instead of passing silently.

Kernel messages printed inside a KTAP header are left out of kunit_parser's input (it cannot skip
them there; see without_messages_in_headers()).

Both trees are flattened into {dotted path: status} with the same rules and compared. Where
kunit_parser legitimately says the same thing in another way, the flattening normalises it
(see label(), SAME and ktap_statuses()).
"""

import importlib
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kunit import ktap

KUNIT_DIR = "tools/testing/kunit"
# kunit_parser.TestStatus names -> the KCIDB words ktap.py uses.
NO_TESTS = "NO_TESTS"
STATUS_WORDS = {"SUCCESS": ktap.PASS, "FAILURE": ktap.FAIL, "SKIPPED": ktap.SKIP,
                "TEST_CRASHED": ktap.ERROR, "NO_TESTS": NO_TESTS, "FAILURE_TO_PARSE_TESTS": ktap.ERROR}
# kunit_parser has no "missing": a test planned but never reported is a nameless TEST_CRASHED
# subtest there ("missing expected subtest!"), MISS here. Both say "it never reported".
SAME = {ktap.MISS: ktap.ERROR}
# NO_TESTS is kunit.py's own judgement on top of the KTAP: a test that opened a subtest header and
# reported no subtests is "[NO TESTS RUN]" whatever its result line said (an error in its counts,
# yet not a failure of the run). ktap.py keeps the result line: `ok` (PASS) or `ok ... # SKIP`.
# KUnit 6.12 itself prints such a test (a parameterised case without parameters, a suite without
# cases) as `# SKIP`, so it only differs on hand-made KTAP (kunit.py's test_data no_tests_no_plan).
NO_TESTS_SAME = (ktap.PASS, ktap.SKIP)


@dataclass
class CrossCheck:
    checked: bool = False                               # kunit_parser ran (False: tree without it, or it failed)
    printed: str = ""                                   # kunit.py's result tree and summary line
    statuses: dict = field(default_factory=dict)        # path -> status, kunit_parser's view
    disagreements: list = field(default_factory=list)   # "path: ktap.py X, kunit_parser Y"
    error: str = None                                   # the parser could not be loaded or crashed
    note: str = None                                    # why nothing was checked

    @property
    def summary(self):
        """kunit.py's closing line: 'Testing complete. Ran N tests: passed: N, ...'."""
        found = [line.split("] ", 1)[-1] for line in self.printed.splitlines() if "Testing complete." in line]
        return found[-1] if found else None

    def to_dict(self):
        """What results.json keeps under "kunit_parser"."""
        return {"checked": self.checked, "tests": len(self.statuses), "summary": self.summary,
                "disagreements": list(self.disagreements), "error": self.error, "note": self.note}


def failed(entry):
    """True when a stored check (CrossCheck.to_dict()) is a problem of the run: the parsers disagree,
    or the reference parser failed to load or to parse. A tree without it was simply not checked."""
    return bool(entry and (entry.get("disagreements") or entry.get("error")))


def problems(entry):
    """The run's problem lines for a stored check (empty when it agreed or was not checked)."""
    if not entry:
        return []
    if entry.get("error"):
        return [f"kunit.py's parser could not check this run: {entry['error']}"]
    found = entry.get("disagreements") or []
    if not found:
        return []
    shown = "; ".join(found[:5]) + ("; ..." if len(found) > 5 else "")
    return [f"kunit.py's parser and ktap.py disagree on {len(found)} test(s): {shown}"]


def load_parser(tree):
    """kunit_parser and kunit_printer from the tree (imported once per tree and process)."""
    folder = (Path(tree) / KUNIT_DIR).resolve()
    if not (folder / "kunit_parser.py").is_file():
        raise FileNotFoundError(f"{folder}/kunit_parser.py")
    loaded = sys.modules.get("kunit_parser")
    if loaded is not None and Path(loaded.__file__).resolve().parent == folder:
        return loaded, sys.modules["kunit_printer"]
    sys.path.insert(0, str(folder))
    saved_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True   # no __pycache__ in the tree
    try:
        for name in ("kunit_printer", "kunit_parser"):
            sys.modules.pop(name, None)
        return importlib.import_module("kunit_parser"), importlib.import_module("kunit_printer")
    finally:
        sys.dont_write_bytecode = saved_bytecode
        sys.path.remove(str(folder))


def label(name, number):
    """A test's path component. kunit_parser's missing subtest has no name and ktap.py calls it
    '(unreported #N)': the nameless ones get that name by their position on both sides."""
    return name or f"(unreported #{number})"


def flatten(items, found=None, prefix=""):
    """{dotted path: status} of [(name, number, status, children)] trees (children: the same again,
    lazily). A name repeated among siblings (a re-run suite) gets '#2', '#3' on both sides alike."""
    found = {} if found is None else found
    for name, number, status, children in items:
        path = f"{prefix}.{label(name, number)}" if prefix else label(name, number)
        unique, count = path, 1
        while unique in found:
            count += 1
            unique = f"{path}#{count}"
        found[unique] = status
        flatten(children(), found, unique)
    return found


def kunit_items(test):
    """kunit_parser's Test tree as flatten() items; the root Test is the run, not a test, and a
    subtest's number is its position (kunit_parser numbers them so, missing ones included)."""
    return [(sub.name, number, STATUS_WORDS.get(sub.status.name, sub.status.name),
             lambda sub=sub: kunit_items(sub)) for number, sub in enumerate(test.subtests, 1)]


def ktap_items(nodes):
    return [(node.name, node.number, node.status, lambda node=node: ktap_items(node.children)) for node in nodes]


def ktap_statuses(run):
    """ktap.py's Run flattened. ktap.py names the suites a top-level plan announced but the console
    never reported only in the run's errors (the run is not complete); kunit_parser lists them as
    missing subtests of its root: add them as MISS here, so both describe the same thing."""
    items = ktap_items(run.suites)
    reported = {suite.number for suite in run.suites}
    items += [("", number, ktap.MISS, list) for number in range(1, (run.planned or 0) + 1) if number not in reported]
    return flatten(items)


def compare(ours, theirs):
    """'path: ktap.py X, kunit_parser Y' for every path whose status differs (or one side lacks)."""
    found = []
    for path in sorted(set(ours) | set(theirs)):
        mine, other = ours.get(path, "absent"), theirs.get(path, "absent")
        if other == NO_TESTS and mine in NO_TESTS_SAME:
            continue
        if SAME.get(mine, mine) != SAME.get(other, other):
            found.append(f"{path}: ktap.py {mine}, kunit_parser {other}")
    return found


# What KUnit itself prints, after the indentation of its nesting level
KTAP_LINE = re.compile(r"^\s*(KTAP version |TAP version |1\.\.|ok |not ok |#)")


def without_messages_in_headers(lines):
    """The console without the kernel's own messages that land between a `KTAP version` line and
    the next KTAP line (a test's `# Subtest:` header). kunit_parser expects the header right after
    the version line and loses count of every test after such a message (kunit.py run shows the
    same errors); ktap.py skips them. They are not KTAP, and anywhere else kunit_parser keeps them
    as a test's log."""
    kept, in_header = [], False
    for line in lines:
        if in_header and not KTAP_LINE.match(line):
            continue
        in_header = bool(re.match(r"^\s*KTAP version ", line))
        kept.append(line)
    return kept


def check(tree, console_lines, run):
    """Parse console_lines with the tree's kunit_parser (as `kunit.py parse` would) and compare
    with ktap.py's Run of the same lines."""
    try:
        parser, printer = load_parser(tree)
    except FileNotFoundError as missing:
        return CrossCheck(note=f"not checked: the tree has no kunit.py parser ({missing})")
    except Exception as error:  # noqa: BLE001 -- the reference failing is a finding of the run, not a crash of ours
        return CrossCheck(error=f"loading kunit_parser: {type(error).__name__}: {error}")
    out = io.StringIO()
    saved, parser.stdout = parser.stdout, printer.Printer(out)   # it prints through this module global
    try:
        test = parser.parse_run_tests(without_messages_in_headers(console_lines))
    except Exception as error:  # noqa: BLE001 -- as above
        return CrossCheck(printed=out.getvalue(), error=f"kunit_parser: {type(error).__name__}: {error}")
    finally:
        parser.stdout = saved
    statuses = flatten(kunit_items(test))
    return CrossCheck(checked=True, printed=out.getvalue(), statuses=statuses,
                      disagreements=compare(ktap_statuses(run), statuses))
