"""Where the time of a `make` / `make test` goes: each step appends one line to a step log,
and the summary prints the log as a table before its closing line.

The Makefile names the log in KTIMERS_STEP_LOG and empties it when a run starts; every
`ktimers.py` command of the run appends to it (the command itself, or finer steps: each kernel
build with its ccache hit rate, each boot). Without KTIMERS_STEP_LOG nothing is written.
"""

import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

from common import format_duration

ENV = "KTIMERS_STEP_LOG"


def log_path(environ=None):
    path = (os.environ if environ is None else environ).get(ENV)
    return Path(path) if path else None


def record(name, seconds, detail="", path=None, part_of=None):
    """Append one step; a log that cannot be written never fails the run. A step that ran side by side
    with others inside a recorded step names that step in part_of: the table shows it under it and leaves
    it out of the total."""
    path = path or log_path()
    if path is None:
        return
    entry = {"step": name, "seconds": round(seconds, 1), "detail": detail}
    if part_of:
        entry["part_of"] = part_of
    line = json.dumps(entry)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as log:
            log.write(line + "\n")
    except OSError:
        pass


@contextmanager
def timed(name, detail=""):
    """Record the time the with-block takes as one step, even when it raises. The log is the one
    named when the block starts (the tools' own tests, run in-process, unset the variable)."""
    path, start = log_path(), time.time()
    try:
        yield
    finally:
        record(name, time.time() - start, detail, path=path)


def load(path=None):
    path = path or log_path()
    steps = []
    if path is None or not path.is_file():
        return steps
    for line in path.read_text(errors="replace").splitlines():
        try:
            step = json.loads(line)
        except ValueError:
            continue
        if isinstance(step, dict) and "step" in step:
            steps.append(step)
    return steps


def table(steps):
    """The step table's lines: one row per step and a total; [] for no steps. A step that ran inside
    another (part_of) is shown under it, indented, wherever it was recorded, and not added to the total."""
    if not steps:
        return []
    names = {step["step"] for step in steps}

    def children(parent):
        return [step for step in steps if step.get("part_of") == parent]

    ordered = []

    def add(step, depth):
        ordered.append((step, depth))
        for child in children(step["step"]):
            add(child, depth + 1)
    for step in steps:
        if not step.get("part_of") or step["part_of"] not in names:
            add(step, 0)

    def name(step, depth):
        return "  " * depth + step["step"]
    width = max(len("step"), *(len(name(step, depth)) for step, depth in ordered))
    lines = ["where the time went:", f"  {'step'.ljust(width)}  {'time':>7}  detail"]
    for step, depth in ordered:
        lines.append(f"  {name(step, depth).ljust(width)}  {format_duration(step.get('seconds')):>7}  "
                     f"{step.get('detail', '')}".rstrip())
    # steps that ran side by side inside another are in that one's time
    total = sum(step.get("seconds") or 0 for step, depth in ordered if depth == 0)
    lines.append(f"  {'total'.ljust(width)}  {format_duration(total):>7}")
    return lines
