"""`make selftest`: the kernel's timer selftests in the guest, per arch, in two columns.

For one arch: build the guest userspace (guest_build), boot the `default` KUnit
image (or another configuration's, `--config kmemleak`) twice with it (guest_qemu), ktimer.users=1 and ktimer.users=0, parse both
consoles (guest_output), compare the columns (guest_compare), scan the kernel
logs (logscan), and write build/results/<arch>-selftests/ (guest_report).

The two columns boot side by side: each guest sleeps for most of its run (the
plan's long tests wait on timers), so two QEMU processes on two host cores take
the time of one (docs/running.md#times); `side_by_side=False` boots them one
after the other.
"""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from guest import build as guest_build, compare as guest_compare, output as guest_output, qemu as guest_qemu
from guest import report as guest_report
from kunit import logscan
from common import steps
from common.arches import get_arch
from common import KUNIT_BUILD_DIR, RESULTS_DIR, ToolError, format_duration, progress, rel
from guest.compare import OFF, ON
from results.summary import SELFTESTS as RESULTS_NAME   # build/results/<arch>-selftests
KERNEL_BUILD = "default"            # the KUnit build whose image the guest boots
# What the image needs for the guest, beyond KUnit (.kunitconfig "userspace for the guest selftests").
NEEDED_OPTIONS = ("CONFIG_BLK_DEV_INITRD=y", "CONFIG_DEVTMPFS=y", "CONFIG_TMPFS=y", "CONFIG_POSIX_MQUEUE=y",
                  "CONFIG_NETDEVSIM=y", "CONFIG_PTP_1588_CLOCK_MOCK=y")


def supported(arch_name):
    """Whether tools/common/arches.py knows how to build the arch's user space (i386 and arm today)."""
    return bool(get_arch(arch_name).user_cross_compile)


def run_config(config=KERNEL_BUILD):
    """`selftests` for the default image, `selftests-<config>` for another: the results database's
    configuration name, and the results dir's after the arch."""
    return RESULTS_NAME if config == KERNEL_BUILD else f"{RESULTS_NAME}-{config}"


def results_name(arch_name, config=KERNEL_BUILD):
    """build/results/<arch>-selftests for the default image, <arch>-selftests-<config> for another."""
    return f"{arch_name}-{run_config(config)}"


def kernel_image(arch_name, params, kunit_build_root=KUNIT_BUILD_DIR, config=KERNEL_BUILD, build=KERNEL_BUILD):
    """The image of configuration `config`, built in build/kunit/<arch>-<build>."""
    build_dir = Path(kunit_build_root) / f"{arch_name}-{build}"
    image = build_dir / params.kernel_path
    make_kunit = f"make kunit CONFIG={config} ARCH={arch_name}"
    if not image.is_file():
        raise ToolError(f"no kernel image {rel(image)}: the guest boots the KUnit `{config}` build",
                        f"run `{make_kunit}` first (`make test` does it before the selftests)")
    if (build_dir / ".config").is_file() and (build_dir / ".config").stat().st_mtime > image.stat().st_mtime:
        # configured again since the image was built, and the build did not follow (it failed)
        raise ToolError(f"{rel(image)} is older than its {rel(build_dir / '.config')}: the last configuration "
                        "or build of it failed, and the image is a stale one",
                        f"run `{make_kunit}` and fix what it reports")
    config = (build_dir / ".config").read_text(errors="replace").splitlines() \
        if (build_dir / ".config").is_file() else []
    missing = [option for option in NEEDED_OPTIONS if option not in config]
    if missing:
        raise ToolError(f"{rel(build_dir)} was built without {', '.join(missing)}: it cannot run the guest",
                        f"run `{make_kunit}` to rebuild it with the root .kunitconfig")
    return image


def echo(label):
    """Progress from the guest's console: its /init's own lines (boot, each test's begin and end,
    counters, warnings), not the tests' output."""
    def on_line(line):
        if line.startswith("guest: ") and not guest_output.OUTPUT_RE.match(line):
            progress("selftest", line[len("guest: "):], label)
    return on_line


def boot_column(params, kernel, initramfs, arch, users_on, console, timeout, label, planned, extra_args=(),
                on_line=None):
    """Boot one column (ktimer.users=1 or 0); returns (the boot, its parsed run, trouble or None)."""
    command = guest_qemu.qemu_command(params, kernel, initramfs, users_on, arch=arch, extra_args=extra_args)
    boot = guest_qemu.run(command, console, timeout, label, on_line)
    run = guest_output.parse(boot.lines, planned)
    return boot, run, guest_qemu.trouble(boot, run.done, console)


def run_arch(tree, arch_name, plan, known, timeout=None, results_root=RESULTS_DIR,
             kunit_build_root=KUNIT_BUILD_DIR, configuration=None, side_by_side=True, step_parent=None):
    """Run both columns on one arch, side by side unless side_by_side is False; returns the results
    document (also in results.json). step_parent: the step of the step table this arch's run is part of
    (several arches side by side).

    configuration (of kunit_configs/matrix) picks the image, and its kernel_args are added to both
    columns' command lines; None is `default`."""
    start = time.time()
    arch = get_arch(arch_name)
    config = configuration.name if configuration else KERNEL_BUILD
    build = configuration.build_name if configuration else KERNEL_BUILD
    result_dir = Path(results_root) / results_name(arch_name, config)
    (result_dir / "results.json").unlink(missing_ok=True)   # never report an earlier run
    result_dir.mkdir(parents=True, exist_ok=True)
    params = guest_qemu.qemu_params(tree, arch_name)
    kernel = kernel_image(arch_name, params, kunit_build_root, config, build)
    with guest_build.exclusive(arch_name):
        image = guest_build.build(tree, arch_name, plan)
        timeout = timeout or plan.worst_case_seconds() + guest_qemu.BOOT_ALLOWANCE_SECONDS
        planned = [test.name for test in plan.tests if test.name in image.built]
        # the configuration's own kernel_args (the hang detectors of repeat-posix)
        extra_args = configuration.kernel_args if configuration else ()
        runs, boots, consoles, problems, findings, statuses = {}, {}, {}, [], [], []

        def column_boot(column, users_on):
            label = f"{arch_name}-{column}"
            consoles[column] = result_dir / f"console-{column}.log"
            progress("selftest", f"{column} path: ktimer.users={int(users_on)}, {len(planned)} test(s), "
                                 f"timeout {timeout}s", label)
            return boot_column(params, kernel, image.initramfs, arch, users_on, consoles[column], timeout, label,
                               planned, extra_args=extra_args, on_line=echo(label))

        columns = ((ON, True), (OFF, False))
        both_start = time.time()
        with ThreadPoolExecutor(max_workers=len(columns) if side_by_side else 1) as pool:
            futures = [pool.submit(column_boot, column, users_on) for column, users_on in columns]
        both_seconds = time.time() - both_start
        together = f"selftests {arch_name}" if side_by_side else step_parent
        if side_by_side:
            steps.record(together, both_seconds, "both columns side by side", part_of=step_parent)
        for (column, users_on), future in zip(columns, futures):
            label = f"{arch_name}-{column}"
            boot, runs[column], trouble = future.result()
            boots[column] = boot.seconds
            if trouble:
                statuses.append(trouble[0])
                problems.append(f"{column} column: {trouble[1]}")
            for finding in logscan.scan_detailed(boot.lines).findings:
                findings.append(dict(finding.to_dict(), console=rel(consoles[column]), column=column))
            progress("selftest", f"{column} path done in {format_duration(boot.seconds)}", label)
            steps.record(f"selftests {label}", boot.seconds,
                         f"ktimer.users={int(users_on)}, {len(planned)} programs", part_of=together)
    comparison = guest_compare.compare(arch_name, plan, image.not_built, runs[ON], runs[OFF], known)
    problems += comparison.problems
    if findings:
        problems.append(f"{len(findings)} problem(s) in the kernel logs (WARNING/BUG/lockdep/...)")
    status = statuses[0] if statuses else "FAIL" if comparison.failed() or findings else "PASS"
    document = guest_report.results_document(
        comparison, runs, boots, consoles, findings, plan.path, status, problems, time.time() - start,
        config=run_config(config))
    (result_dir / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    lines = guest_report.report_lines(comparison, {c: runs[c].counters_raw for c in (ON, OFF)}, boots, problems)
    (result_dir / "report.txt").write_text("\n".join(lines) + "\n")
    counts = document["counts"]
    progress("selftest", f"{status}: {counts['PASS']} passed, {counts['FAIL'] + counts['ERROR']} failed, "
                         f"{counts['SKIP']} skipped, {counts['MISS']} missing; report: {rel(result_dir / 'report.txt')}",
             arch_name)
    return document
