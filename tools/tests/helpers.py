"""Shared test helpers; importing this puts tools/ on sys.path (unittest and pytest alike)."""

import io
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

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
        isolation = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
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
