"""`make repeat SELFTESTS=1`: boot the guest programs many times in a row, both columns each time.

The user-space side of kunit/repeat.py: each boot is one `make selftest` run of
the programs of the plan (all, or PROGRAMS=) on a configuration's image
(guest/selftests.py: same comparison of the columns and log scan), and the
summary gives the rate and the deepest kernel stack per column.
"""

from pathlib import Path

from common import RESULTS_DIR
from guest import selftests as guest_selftests
from guest.compare import OFF, ON
from kunit.repeat import FINDINGS_DIR, repeat_boots

SELFTEST_FILES = ("console-ktimer.log", "console-hrtimer.log", "results.json", "report.txt")


def repeat_selftests(tree, arch, configuration, plan, known, boots, timeout=None, results_root=RESULTS_DIR,
                     findings_root=FINDINGS_DIR, run_arch=None):
    """Boot the guest programs of `plan` `boots` times on `arch`, both columns each time, on the image of
    `configuration`; returns the summary document. A boot is one run of both columns."""
    run_arch = run_arch or guest_selftests.run_arch
    label = guest_selftests.results_name(arch, configuration.name)
    work_root = Path(results_root) / f"{label}-repeat.boots"
    result_dir = work_root / label

    def boot_once(boot, stacks):
        document = run_arch(tree, arch, plan, known, timeout=timeout, results_root=work_root,
                            configuration=configuration)
        for column in (ON, OFF):
            stacks.add(column, result_dir / f"console-{column}.log", boot)
        return document, document.get("duration_s") or 0

    programs = " ".join(test.name for test in plan.tests)
    return repeat_boots(arch, f"selftests {configuration.name}: {programs}", label, boots, boot_once, result_dir,
                        SELFTEST_FILES, results_root, findings_root)
