"""Run the tools' own unit tests (tools/tests) and record the counts for results/summary.py.

Same tests as `python3 -m unittest discover -s tools/tests -v`; the counts file
lets `make test` add them to the closing `N passed, N failed` line.
"""

import json
import sys
import time
import unittest
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"


def run_tests(record_path=None, verbosity=2):
    start = time.time()
    suite = unittest.defaultTestLoader.discover(str(TESTS_DIR), top_level_dir=str(TESTS_DIR))
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stderr).run(suite)
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    errors = len(result.errors)
    skipped = len(result.skipped)
    counts = {
        "total": result.testsRun,
        "passed": result.testsRun - failed - errors - skipped,
        "failed": failed,
        "errors": errors,
        "skipped": skipped,
        "duration_s": round(time.time() - start, 1),
        "failures": [test.id() for test, _ in result.failures + result.errors],
    }
    if record_path:
        Path(record_path).parent.mkdir(parents=True, exist_ok=True)
        Path(record_path).write_text(json.dumps(counts, indent=1) + "\n")
    return counts
