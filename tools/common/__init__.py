"""Shared helpers for the ktimers tools: paths, progress output, errors, subprocesses.

Every tool raises ToolError for problems a user can hit; the CLI turns it into
a short message with a hint instead of a traceback.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent   # tools/common/__init__.py
BUILD_DIR = REPO_ROOT / "build"
DEFAULT_TREE = BUILD_DIR / "linux"
RESULTS_DIR = BUILD_DIR / "results"
KUNIT_BUILD_DIR = BUILD_DIR / "kunit"
PIN_FILE = REPO_ROOT / "kernel" / "base.pin"
# On every boot: a ktimer that stays 20 s overdue makes the kernel print its bases and the blocked
# tasks (docs/design.md#observability), and the log scan makes that a finding. Kernels without
# the watchdog ignore the parameter.
KTIMER_WATCHDOG_ARG = "ktimer.watchdog=20"


class ToolError(Exception):
    """An expected failure: `message` says what went wrong, `hint` what to do."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self):
        return self.message if not self.hint else f"{self.message}\n  -> {self.hint}"


def progress(stage, message, arch=None):
    """Print one '[stage] [arch] message' line and flush, so make/CI logs stay in order."""
    prefix = f"[{stage}]" + (f" [{arch}]" if arch else "")
    print(f"{prefix} {message}", flush=True)


def warn(message):
    print(f"WARNING: {message}", file=sys.stderr, flush=True)


def format_duration(seconds):
    seconds = int(round(seconds or 0))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def run(cmd, *, cwd=None, env=None, input=None, check=True, what=None, hint=None, text=True):
    """Run a command, capturing its output (text, or bytes with text=False).

    A missing program or a non-zero exit becomes a ToolError naming the command
    and its stderr, so callers only add the "what to do" hint.
    """
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, input=input, text=text,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise ToolError(f"'{cmd[0]}' is not installed or not in PATH",
                        hint or "run `make deps` (as root) to install the required packages")
    if check and proc.returncode != 0:
        detail = proc.stderr or proc.stdout or ""
        detail = (detail if text else detail.decode(errors="replace")).strip()
        raise ToolError(f"{what or ' '.join(map(str, cmd))} failed (exit {proc.returncode})"
                        + (f":\n{detail}" if detail else ""), hint)
    return proc


class Heartbeat:
    """Prints 'still <doing> (Ns elapsed)' every `interval` seconds while a long step runs."""

    def __init__(self, stage, doing, arch=None, interval=30.0):
        self.stage, self.doing, self.arch, self.interval = stage, doing, arch, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)
        self.start_time = time.monotonic()

    def _beat(self):
        while not self._stop.wait(self.interval):
            elapsed = format_duration(time.monotonic() - self.start_time)
            progress(self.stage, f"still {self.doing} ({elapsed} elapsed)", self.arch)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False


def run_with_heartbeat(cmd, stage, doing, *, cwd=None, env=None, what=None, hint=None, interval=30.0):
    """run() for steps that take minutes (tar, git add of the whole kernel)."""
    with Heartbeat(stage, doing, interval=interval):
        return run(cmd, cwd=cwd, env=env, what=what, hint=hint)


def is_root():
    return os.geteuid() == 0


def table_lines(rows, rule=True):
    """Rows (the first one the header) as text columns two spaces apart; rule: dashes under the header."""
    rows = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    return lines[:1] + ["  ".join("-" * width for width in widths)] + lines[1:] if rule else lines


def rel(path):
    """Path relative to the repo when possible: shorter, copy-pasteable messages."""
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
