"""Kernel coding style without booting: checkpatch.pl and kernel-doc from the kernel tree.

- every .c/.h under kernel/: checkpatch --strict --no-tree --terse -f, and kernel-doc -none -Wall
- every kernel/patches/*.patch: checkpatch --strict --no-tree --no-signoff; patches made with
  `git diff` have no commit message, so the message checks (signoff, commit description) and
  the "does MAINTAINERS need updating?" question are switched off: only the code is checked.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from common import REPO_ROOT, ToolError, progress, rel, run

KERNEL_DIR = REPO_ROOT / "kernel"
CHECKPATCH = "scripts/checkpatch.pl"
KERNEL_DOC = "scripts/kernel-doc"
FILE_FLAGS = ["--strict", "--no-tree", "--terse", "--show-types", "-f"]
PATCH_FLAGS = ["--strict", "--no-tree", "--no-signoff", "--show-types",
               "--ignore", "FILE_PATH_CHANGES,COMMIT_MESSAGE,GERRIT_CHANGE_ID"]
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
    patches = Path(kernel_dir) / "patches"
    return sorted(patches.glob("*.patch")) if patches.is_dir() else []


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


def check_file(tree, path, runner=run):
    report = FileReport(rel(path))
    proc = runner(["perl", str(tree / CHECKPATCH), *FILE_FLAGS, str(path)], check=False)
    if proc.returncode != 0 or ISSUE_RE.search(proc.stdout):
        report.issues += checkpatch_issues(proc.stdout + proc.stderr) or [f"checkpatch exited {proc.returncode}"]
    doc = runner(["perl", str(tree / KERNEL_DOC), "-none", "-Wall", str(path)], check=False)
    doc_lines = [line for line in (doc.stderr + doc.stdout).splitlines() if DOC_ISSUE_RE.search(line)]
    report.issues += [f"kernel-doc: {line}" for line in doc_lines]
    return report


def check_patch(tree, path, runner=run):
    report = FileReport(rel(path))
    proc = runner(["perl", str(tree / CHECKPATCH), *PATCH_FLAGS, str(path)], check=False)
    if proc.returncode != 0 or ISSUE_RE.search(proc.stdout):
        report.issues += checkpatch_issues(proc.stdout + proc.stderr) or [f"checkpatch exited {proc.returncode}"]
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
    progress("style", f"checkpatch + kernel-doc on {len(sources)} source file(s), "
                      f"checkpatch on {len(patches)} patch(es)")
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
