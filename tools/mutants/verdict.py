"""What one run of a mutant's kernel says about the mutant: did the tests notice it?

A run is a results document: a KUnit configuration's (kunit_run.run_suites) or the
project's own user-space suite's (guest_selftests.run_arch). outcome() turns it into
an Outcome: `pass` (nothing noticed), `killed` (with what killed it: the failing
case names, `crash`, `timeout`, `log: <finding kind>`), `stillborn` (the kernel did not
build or configure: a defect of the mutant, with the compiler's complaint) or `error`
(the run could not judge it: QEMU or kunit.py failed).
"""

from dataclasses import dataclass, field
from pathlib import Path

from common import REPO_ROOT
from kunit.run import STAGE_RE, build_excerpt
from kunit.ktap import failing_cases

PASS, KILLED, STILLBORN, ERROR = "pass", "killed", "stillborn", "error"
NOT_BUILT = ("BUILD_ERROR", "CONFIG_ERROR")
STATUS_LABELS = {"CRASH": "crash", "TIMEOUT": "timeout", "NO_TESTS": "no KTAP output (did not boot)"}
EXCERPT_LINES = 12
USER_PREFIX = "user: "


@dataclass
class Outcome:
    verdict: str                                    # pass, killed, stillborn, error
    killed_by: list = field(default_factory=list)   # what noticed it (killed)
    detail: str = ""                                # the compiler's complaint, the run's problems


def repo_path(name):
    path = Path(name)
    return path if path.is_absolute() else REPO_ROOT / path


def build_complaint(document, limit=EXCERPT_LINES):
    """The first compiler error lines of a run whose kernel did not build (from its build.log)."""
    path = repo_path(document.get("build_log") or "")
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "; ".join(document.get("problems", [])) or "the kernel did not build (no build.log)"
    excerpt = build_excerpt([line for line in lines if not STAGE_RE.match(line)], limit)
    return "\n".join(excerpt).strip() or "; ".join(document.get("problems", []))


def _dedup(labels):
    return list(dict.fromkeys(labels))


def kill_labels(document, prefix=""):
    """What in the document failed: its status (crash, timeout), the failing cases (and, in a run that
    finished, the missing ones), the kinds of the log findings."""
    unfinished = document.get("status") in STATUS_LABELS
    labels = [STATUS_LABELS[document["status"]]] if unfinished else []
    for suite, case, node, missed in failing_cases(document):
        if unfinished and not case:
            continue    # the suites and cases after a crash or hang never ran: the crash killed it
        if case:
            labels.append(case if prefix else f"{suite}.{case}")
        elif missed:
            labels.append(f"{suite} ({len(missed)} case(s) never reported)")
        else:
            labels.append(f"{suite} (never reported)" if node.get("status") == "MISS" else suite)
    labels += [f"log: {finding.get('kind', 'finding')}" for finding in document.get("findings", [])]
    return _dedup(f"{prefix}{label}" for label in labels)


def outcome(document, user=False):
    """The Outcome of one run; user=True for the user-space suite's document (labels `user: <program>`)."""
    status = document.get("status")
    if status == "PASS":
        return Outcome(PASS)
    problems = document.get("problems", [])
    if status in NOT_BUILT:
        return Outcome(STILLBORN, detail=build_complaint(document))
    if status == "INFRA_ERROR":
        return Outcome(ERROR, detail="; ".join(problems) or "kunit.py failed")
    labels = kill_labels(document, USER_PREFIX if user else "")
    if not labels:
        # a failure without a failing case: the user suite's counters, a missing suite: say the first problem
        first = problems[0].splitlines()[0] if problems else status or "not PASS"
        labels = [f"{USER_PREFIX if user else ''}{first[:100]}"]
    return Outcome(KILLED, labels, "; ".join(problem.splitlines()[0] for problem in problems))


def short(labels, most=3):
    """'a, b, c (+2 more)': the killers for a table cell or a progress line."""
    text = ", ".join(labels[:most])
    return text + (f" (+{len(labels) - most} more)" if len(labels) > most else "")


def expected_killer(labels, expect):
    """Whether one of the labels is (a case of) a suite or case the mutant's `Expect:` names."""
    names = [label.removeprefix(USER_PREFIX) for label in labels]
    return any(name == wanted or name.startswith(wanted + ".") or name.startswith(wanted + " ")
               for name in names for wanted in expect)
