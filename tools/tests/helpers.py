"""Shared test helpers; importing this puts tools/ on sys.path (unittest and pytest alike)."""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

# `make test` exports the step log (tools/common/steps.py) to the commands it runs, these tests
# among them: what they run with fakes must not land in the run's step table.
os.environ.pop("KTIMERS_STEP_LOG", None)

TOOLS_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(__file__).resolve().parent / "data"
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

# Tests must not depend on the developer's git identity or config.
GIT_ENV = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@localhost",
               GIT_COMMITTER_NAME="test", GIT_COMMITTER_EMAIL="test@localhost")


def git(repo, *args, env=None):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or GIT_ENV).stdout.strip()


def write(path, text, mode=None):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)
    return path


def data_lines(name):
    return (DATA_DIR / name).read_text().splitlines()


class Completed:
    """Stand-in for subprocess.CompletedProcess returned by mocked runners."""

    def __init__(self, stdout="", stderr="", returncode=0):
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="ktimers-test-")
        self.tmp = Path(self._tmp.name)
        self.addCleanup(self._tmp.cleanup)
        # Our tools' git calls inherit the environment: keep them off the user's git config.
        # Runs recorded by the code under test go to a database in the test's directory, never the user's.
        isolation = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
                     "KTIMERS_RESULTS_DB": str(self.tmp / "results.sqlite")}
        saved = {k: os.environ.get(k) for k in isolation}
        os.environ.update(isolation)

        def restore():
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.addCleanup(restore)


def quiet(func, *args, **kwargs):
    """Call func with stdout/stderr captured; returns (result, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        result = func(*args, **kwargs)
    return result, out.getvalue(), err.getvalue()


def quiet_raises(testcase, exc, func, *args, **kwargs):
    """assertRaises with output captured; returns (exception, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        with testcase.assertRaises(exc) as ctx:
            func(*args, **kwargs)
    return ctx.exception, out.getvalue(), err.getvalue()


def write_matrix(directory, text=None):
    """<directory>/kunit_configs/matrix (MATRIX_TEXT by default) and the up.config it names; returns the matrix."""
    write(Path(directory) / "kunit_configs" / "up.config", "# CONFIG_SMP is not set\n")
    return write(Path(directory) / "kunit_configs" / "matrix", MATRIX_TEXT if text is None else text)


# A matrix like kunit_configs/matrix: default, lowres (boot only) and up.
MATRIX_TEXT = """\
[default]
by_default = yes
[lowres]
kernel_args = ktimer.highres=0
by_default = yes
[up]
fragments = up
smp = 1
by_default = yes
"""


# ---- runs for the results database tests (record, report, kcidb) ----------------------------

# The suites of the real i386/arm `default` runs in tools/tests/data (real-*-default.log).
REAL_SUITES = ("ktimer_modes", "ktimer_errors", "ktimer_queue", "ktimer_stop_query", "ktimer_hotplug",
               "ktimer_realclock", "ktimer_smp", "ktimer_observe", "ktimer_debugobjects", "ktimer_fuzz",
               "ktimer_users", "ktimer_itimer", "ktimer_user_conv")
SERIES = "b6f6799881610a4ab64d7b4d1b0c6b05c3b3a4e9f3c0b1d2e3f4a5b6c7d8e9f0"
HEAD = "1def00b2cd05a8d0c1e2f3a4b5c6d7e8f9a0b1c2"


def kunit_result_dir(results_dir, console_name, arch="i386", config="default", start=1_764_810_000,
                     expected=REAL_SUITES, timeout=None, build_failed=False, series=SERIES, head=HEAD):
    """<results_dir>/<arch>-<config>/ as kunit_run.run_suites writes it, from a console fixture (or none:
    build_failed), through the same parser, log scan and verdict; returns (result dir, document)."""
    from kunit import ktap, run as kunit_run, logscan
    lines = [] if build_failed else data_lines(console_name)
    stream = kunit_run.Stream(phase="build" if build_failed else "after", stage="build" if build_failed else None,
                              console_lines=lines, timeout=timeout)
    stream.kernel_version = None if build_failed else "6.12.118-g" + head[:12]
    parsed = ktap.parse(lines)
    scan = logscan.scan_detailed(lines)
    found = {suite.name for suite in parsed.suites}
    result_dir = Path(results_dir) / f"{arch}-{config}"
    result_dir.mkdir(parents=True, exist_ok=True)
    document = kunit_run.results_document(
        arch=arch, config=config, stream=stream, returncode=2 if build_failed else 0, parsed=parsed, scan=scan,
        missing=[s for s in expected if s not in found], expected=list(expected), start=start, end=start + 42.5,
        build_seconds=None if build_failed else 30.0,
        command=["python3", "tools/testing/kunit/kunit.py", "run", f"--arch={arch}",
                 f"--build_dir={results_dir}/no-such-build-dir"],
        result_dir=result_dir, series_hash=series, tree_head=head)
    (result_dir / "console.log").write_text("\n".join(lines) + ("\n" if lines else ""))
    (result_dir / "build.log").write_text("Building KUnit Kernel ...\n" + (
        "kernel/time/ktimer.c:12:1: error: expected ';' before '}' token\n" if build_failed else ""))
    (result_dir / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    return result_dir, document


class RecordingTestCase(TempDirTestCase):
    """A results directory with its database (results/results.sqlite) and runs recorded into it."""

    START = 1_764_810_000   # 2025-12-04 01:00 UTC

    def setUp(self):
        super().setUp()
        self.results = self.tmp / "results"
        self.db = self.results / "results.sqlite"

    def record_run(self, console, hours=0, **kwargs):
        """Write <arch>-<config>/ from a console fixture (kunit_result_dir) and record it; returns the build row."""
        from results import record
        result_dir, _ = kunit_result_dir(self.results, console, start=self.START + hours * 3600, **kwargs)
        return quiet(record.record, result_dir, self.db, self.tmp / "no-tree")[0]
