"""Kernel coding style without booting: checkpatch.pl and kernel-doc from the kernel tree.

- every kernel/patches/*.patch (a mail, message and Signed-off-by included): checkpatch --strict.
  Only "does MAINTAINERS need updating?" is off, since the MAINTAINERS entry is the last patch.
  The patches carry every line of the new files, so those are not checked a second time with -f;
- every .c/.h kept under kernel/: kernel-doc -none -Wall.

checkpatch runs from the tree's top with codespell's dictionary (--codespell) and its SPDX
check, which runs scripts/spdxcheck.py with the `python3` on PATH: Debian's comes first,
since python3-ply and python3-git are installed for it. If that check cannot run, it is a
problem, not a silent pass.
"""

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from common import REPO_ROOT, ToolError, progress, rel, run

KERNEL_DIR = REPO_ROOT / "kernel"
CHECKPATCH = "scripts/checkpatch.pl"
KERNEL_DOC = "scripts/kernel-doc"
PATCH_FLAGS = ["--strict", "--terse", "--show-types", "--ignore", "FILE_PATH_CHANGES"]
# Debian's codespell package keeps its dictionary here (checkpatch looks in /usr/share/codespell).
CODESPELL_DICTIONARY = Path("/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt")
HELPER_FAILED_RE = re.compile(r"^(Traceback|\w*Error: |No codespell typos will be found)")
ISSUE_RE = re.compile(r"(?:^|: )(ERROR|WARNING|CHECK):")
DOC_ISSUE_RE = re.compile(r"\b(warning|error):", re.IGNORECASE)
# checkpatch's closing boilerplate: not worth repeating per file.
NOISE_RE = re.compile(r"^(NOTE: |      |\S+ has style problems|$)")


@dataclass
class FileReport:
    path: str
    issues: list = field(default_factory=list)

    @property
    def ok(self):
        return not self.issues


def source_files(kernel_dir=KERNEL_DIR):
    from series.store import in_tree_files
    return [Path(kernel_dir) / p for p in in_tree_files(kernel_dir) if p.endswith((".c", ".h"))]


def patch_files(kernel_dir=KERNEL_DIR):
    from series.store import patch_files
    return patch_files(kernel_dir)


def checkpatch_issues(output):
    """The issue lines (and for patches their context) from checkpatch output."""
    lines = []
    for line in output.splitlines():
        if line.startswith("total: "):
            continue
        if NOISE_RE.match(line) and not ISSUE_RE.search(line):
            continue
        lines.append(line)
    return lines


def count_issues(lines):
    return sum(1 for line in lines if ISSUE_RE.search(line) or line.startswith("kernel-doc: "))


def checkpatch(tree, flags, target, runner=run):
    """checkpatch.pl on target, run as the kernel runs it (from the tree's top); its issue lines, plus a
    line for a helper that failed (spdxcheck.py without ply, codespell without its dictionary)."""
    env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
    tree = Path(tree).resolve()
    proc = runner(["perl", str(tree / CHECKPATCH), "--codespell", f"--codespellfile={CODESPELL_DICTIONARY}",
                   *flags, str(Path(target).resolve())], cwd=str(tree), env=env, check=False)
    issues = checkpatch_issues(proc.stdout) if proc.returncode != 0 or ISSUE_RE.search(proc.stdout) else []
    broken = [line for line in proc.stderr.splitlines() if HELPER_FAILED_RE.match(line)]
    if broken:
        issues.append(f"checkpatch could not run all its checks ({broken[-1].strip()}): "
                      "install python3-ply python3-git codespell (`make deps`)")
    if proc.returncode != 0 and not issues:
        issues.append(f"checkpatch exited {proc.returncode}: {proc.stderr.strip()[:200]}")
    return issues


def check_file(tree, path, runner=run):
    report = FileReport(rel(path))
    doc = runner(["perl", str(tree / KERNEL_DOC), "-none", "-Wall", str(path)], check=False)
    doc_lines = [line for line in (doc.stderr + doc.stdout).splitlines() if DOC_ISSUE_RE.search(line)]
    report.issues += [f"kernel-doc: {line}" for line in doc_lines]
    return report


def check_patch(tree, path, runner=run):
    report = FileReport(rel(path))
    report.issues += checkpatch(tree, PATCH_FLAGS, path, runner)
    return report


def check(tree, kernel_dir=KERNEL_DIR, runner=run):
    """Check everything; returns the list of FileReports (empty when there is nothing to check)."""
    tree = Path(tree)
    sources, patches = source_files(kernel_dir), patch_files(kernel_dir)
    if not sources and not patches:
        progress("style", "no kernel files (kernel/**/*.c, *.h, kernel/patches/*.patch) yet: nothing to check")
        return []
    if not (tree / CHECKPATCH).is_file():
        raise ToolError(f"{rel(tree / CHECKPATCH)} not found: style checks use the kernel tree's scripts",
                        "run `make tree` first")
    progress("style", f"kernel-doc on {len(sources)} source file(s), checkpatch --strict --codespell on "
                      f"{len(patches)} patch(es)")
    reports = [check_file(tree, path, runner) for path in sources]
    reports += [check_patch(tree, path, runner) for path in patches]
    for report in reports:
        if report.ok:
            progress("style", f"{report.path}: ok")
        else:
            progress("style", f"{report.path}: {count_issues(report.issues) or len(report.issues)} problem(s)")
            for line in report.issues:
                print(f"    {line}")
    return reports


def record(reports, path, error=None):
    """Write the outcome for results/summary.py."""
    data = {"files": len(reports), "failed_files": [r.path for r in reports if not r.ok],
            "problems": sum(count_issues(r.issues) or len(r.issues) for r in reports if not r.ok)}
    if error:
        data["error"] = error
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
