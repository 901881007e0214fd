"""sparse (C=2) and W=1 on the files the series adds: they must print nothing.

The .c files kept under kernel/ (the series' new files) are compiled as single objects with
`make C=2 W=1 <dir>/<file>.o` in a build dir of their own per arch
(build/compile-check/<arch>, configured once from the `default` configuration's kunitconfig with
kunit.py config), so the KUnit build dirs keep their flags. A warning or error that names any
file the series adds (headers included) is a problem; what other kernel files print is not ours.
"""

import os
import re
from pathlib import Path

from common import BUILD_DIR, REPO_ROOT, Heartbeat, ToolError, progress, rel, run
from common.arches import get_arch
from kunit import matrix
from series import store

CHECK_DIR = BUILD_DIR / "compile-check"
KUNIT_PY = "tools/testing/kunit/kunit.py"
DIAGNOSTIC_RE = re.compile(r"^(?:\.\./)*(\S+?):\d+(?::\d+)?: (?:warning|error):")


def includer(tree, path):
    """The .c file of the same folder in the tree that #includes path (KUnit suites such as
    fs/timerfd_test.c are built inside the file they test), or None."""
    if tree is None:
        return None
    name, folder = Path(path).name, Path(tree, path).parent
    pattern = re.compile(r'^#include "%s"' % re.escape(name), re.M)
    for source in sorted(folder.glob("*.c")):
        if source.name != name and pattern.search(source.read_text(errors="replace")):
            return str(Path(path).parent / source.name)
    return None


def objects(files, tree=None):
    """The objects to build: one per .c file, the includer's for a file built inside another."""
    targets = []
    for path in files:
        if path.endswith(".c"):
            target = (includer(tree, path) or path)[:-2] + ".o"
            if target not in targets:
                targets.append(target)
    return targets


def ours(output, files):
    """The compiler and sparse lines that name one of files (the continuation lines of sparse's
    `expected`/`got` notes follow their warning)."""
    found, keep = [], False
    for line in output.splitlines():
        match = DIAGNOSTIC_RE.match(line.strip())
        if match:
            keep = any(match.group(1).endswith(path) for path in files)
        elif not line.startswith(" "):
            keep = False
        if keep:
            found.append(line.strip())
    return found


def make_command(arch, build_dir, targets, jobs=None):
    """`make C=2 W=1` of the given objects in build_dir (sparse even on objects that are up to date)."""
    command = ["make", f"ARCH={arch.name}", f"O={Path(build_dir).resolve()}", "C=2", "W=1",
               f"-j{jobs or os.cpu_count() or 1}"]
    if arch.cross_compile:
        command.append(f"CROSS_COMPILE={arch.cross_compile}")
    return command + list(targets)


def configure(tree, arch, build_dir, repo=REPO_ROOT, runner=run):
    """kunit.py config with the `default` kunitconfig, when the build dir has none yet."""
    if (build_dir / ".config").is_file():
        return
    build_dir.mkdir(parents=True, exist_ok=True)
    default = matrix.load(repo / "kunit_configs" / "matrix").get("default")
    kunitconfig = build_dir / "compile-check.kunitconfig"
    matrix.write_effective_kunitconfig(default, arch.name, kunitconfig, repo)
    command = ["python3", KUNIT_PY, "config", f"--arch={arch.name}", f"--build_dir={build_dir.resolve()}",
               f"--kunitconfig={kunitconfig.resolve()}"]
    if arch.cross_compile:
        command.append(f"--cross_compile={arch.cross_compile}")
    progress("compile-check", f"{arch.name}: configuring {rel(build_dir)} (once)")
    runner(command, cwd=str(tree), what=f"kunit.py config for {arch.name}",
           hint="check the kunitconfig messages above; `make kunit` configures the same way")


def check_arch(tree, arch_name, kernel_dir=store.KERNEL_DIR, check_dir=CHECK_DIR, runner=run):
    """Problem lines (empty: clean) for one arch."""
    tree, arch = Path(tree), get_arch(arch_name)
    files = store.in_tree_files(kernel_dir)
    targets = objects(files, tree)
    if not targets:
        return []
    build_dir = Path(check_dir) / arch.name
    configure(tree, arch, build_dir, runner=runner)
    with Heartbeat("compile-check", f"{arch.name}: sparse and W=1 on {len(targets)} files", interval=60):
        proc = runner(make_command(arch, build_dir, targets), cwd=str(tree), check=False)
    problems = ours(proc.stdout + proc.stderr, files)
    if proc.returncode and not problems:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        problems = [f"make exited {proc.returncode}: " + " | ".join(tail)]
    return problems


def check(tree, arch_names, kernel_dir=store.KERNEL_DIR, check_dir=CHECK_DIR, runner=run):
    """{arch: problems} for each arch; ToolError unless the tree has the series applied."""
    tree = Path(tree)
    if not store.is_applied(tree, store.patch_files(kernel_dir)):
        raise ToolError(f"{rel(tree)} does not have the series applied: sparse and W=1 compile its files",
                        "run `make apply` first")
    results = {}
    for name in arch_names:
        results[name] = check_arch(tree, name, kernel_dir, check_dir, runner)
        verdict = "clean" if not results[name] else f"{len(results[name])} line(s)"
        progress("compile-check", f"{name}: sparse + W=1 on the series' files: {verdict}")
        for line in results[name]:
            print(f"    {line}", flush=True)
    return results
