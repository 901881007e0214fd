"""`make breaks`: every case of the project's own user-space programs must be able to fail.

The project's rule is that a test is done only once it was seen to fail. For the
own programs (selftests/user/kt_*.c) this boots the `default` image with only
them in the plan and the kernel argument KT_BREAK=1, which the kernel hands to
/init's environment and so to every program: ktap.h then inverts the verdict of
each kt_expect(), while the case runs as always. A case that still passes checks nothing that ran; a case that
skipped could not be shown (kt_ptp on the hrtimer path, time32 cases on a 64-bit
arch). Both columns are booted, as in `make selftest`. Writes
build/results/<arch>-breaks/ (both consoles and breaks.json).
"""

import json
from pathlib import Path

from guest import build as guest_build, qemu as guest_qemu
from guest.compare import OFF, ON
from guest.output import FAIL, PASS, SKIP
from guest.plan import Plan
from guest.selftests import boot_column, kernel_image
from common.arches import get_arch
from common import KUNIT_BUILD_DIR, RESULTS_DIR, format_duration, progress, rel

OWN_PREFIX = "kt_"
BREAK_ARG = "KT_BREAK=1"
RESULTS_NAME = "breaks"


def own_plan(plan):
    """The plan with only the project's own programs, in their groups and order."""
    return Plan(tuple(test for test in plan.tests if test.name.startswith(OWN_PREFIX)), {}, plan.path)


def judge(run, names):
    """Per program: the cases that failed (as they must), skipped, and passed (could not fail)."""
    programs, problems = {}, []
    for name in names:
        test = run.tests.get(name)
        if test is None or not test.subtests:
            problems.append(f"{name}: no KTAP cases in its output ({test.how if test else 'never started'})")
            continue
        by_status = {status: [case for s, case in test.subtests if s == status] for status in (FAIL, SKIP, PASS)}
        programs[name] = {"cases": len(test.subtests), "failed": len(by_status[FAIL]),
                          "skipped": by_status[SKIP], "passed": by_status[PASS]}
        problems += [f"{name}: case passed with every expectation inverted: {case}" for case in by_status[PASS]]
    return programs, problems


def report_lines(columns):
    lines = ["program           column   cases  failed  skipped  passed (could not fail)"]
    for column, programs in columns.items():
        for name, result in programs.items():
            lines.append(f"{name:<17} {column:<8} {result['cases']:>5}  {result['failed']:>6}  "
                         f"{len(result['skipped']):>7}  {len(result['passed']):>6}")
    return lines


def run_arch(tree, arch_name, plan, results_root=RESULTS_DIR, kunit_build_root=KUNIT_BUILD_DIR, timeout=None):
    """Boot both columns with KT_BREAK=1; returns the document (also in breaks.json)."""
    arch = get_arch(arch_name)
    own = own_plan(plan)
    result_dir = Path(results_root) / f"{arch_name}-{RESULTS_NAME}"
    result_dir.mkdir(parents=True, exist_ok=True)
    params = guest_qemu.qemu_params(tree, arch_name)
    kernel = kernel_image(arch_name, params, kunit_build_root)
    # a build dir of its own: `make selftest` may be building the full plan's at the same time
    image = guest_build.build(tree, arch_name, own, out_root=guest_build.GUEST_BUILD_DIR / RESULTS_NAME)
    timeout = timeout or own.worst_case_seconds() + guest_qemu.BOOT_ALLOWANCE_SECONDS
    columns, problems = {}, []
    for column, users_on in ((ON, True), (OFF, False)):
        label = f"{arch_name}-{column}"
        console = result_dir / f"console-{column}.log"
        boot, run, trouble = boot_column(params, kernel, image.initramfs, arch, users_on, console, timeout, label,
                                         image.built, extra_args=(BREAK_ARG,))
        if trouble:
            problems.append(f"{column} column: {trouble[1]}")
        columns[column], found = judge(run, image.built)
        problems += [f"{column} column: {problem}" for problem in found]
        progress("breaks", f"{column} path done in {format_duration(boot.seconds)}", label)
    document = {"arch": arch_name, "status": "FAIL" if problems else "PASS", "columns": columns,
                "problems": problems, "consoles": [rel(result_dir / f"console-{c}.log") for c in (ON, OFF)]}
    (result_dir / "breaks.json").write_text(json.dumps(document, indent=1) + "\n")
    for line in report_lines(columns) + problems:
        progress("breaks", line, arch_name)
    failed = sum(result["failed"] for programs in columns.values() for result in programs.values())
    progress("breaks", f"{document['status']}: {failed} case(s) failed with their expectations inverted, "
                       f"{len(problems)} problem(s); {rel(result_dir / 'breaks.json')}", arch_name)
    return document
