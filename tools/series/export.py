"""Export the applied series as mail-ready patches: git format-patch --cover-letter into build/series/.

The commits are those of branch `ktimers` in the tree, exactly as `make apply` made them from
kernel/series (the export refuses a tree that is not applied, out of date or dirty), so the
exported series and the tested branch are the same commits. The cover letter's subject and
body come from kernel/series/cover-letter.txt; git adds the shortlog, the diffstat and the
base-commit trailer (--base).
"""

import shutil
import string
from pathlib import Path

from series import store as series
from common import BUILD_DIR, ToolError, progress, rel
from common.git import git

SERIES_OUT = BUILD_DIR / "series"
COVER_TEMPLATE = series.KERNEL_DIR / series.SERIES_SUBDIR / "cover-letter.txt"
COVER_NAME = "0000-cover-letter.patch"
SUBJECT_PLACEHOLDER = "*** SUBJECT HERE ***"
BLURB_PLACEHOLDER = "*** BLURB HERE ***"


def applied_head(tree, kernel_dir=series.KERNEL_DIR):
    """(base sha, head sha, commits) of the applied series; ToolError unless the tree is exactly applied."""
    tree = Path(tree)
    if not (tree / ".git").is_dir():
        raise ToolError(f"kernel tree {rel(tree)} not found", "run `make tree` and `make apply` first")
    commits = series.load_series(kernel_dir)
    if not commits:
        raise ToolError("kernel/series/ has no .commit files: there is no series to export")
    chain = series.build_chain(tree, commits, kernel_dir)
    final = chain[-1][0]
    base = git(tree, "rev-parse", f"{series.BASE_TAG}^{{commit}}").stdout.strip()
    head = git(tree, "rev-parse", "-q", "--verify", "HEAD", check=False).stdout.strip()
    branch = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if head != final or branch != series.BRANCH:
        where = f"branch {branch}" if branch else "a detached HEAD"
        raise ToolError(f"{rel(tree)} is not the applied series: HEAD is {head[:12] or 'nothing'} on {where}, "
                        f"kernel/series gives {final[:12]} on {series.BRANCH}",
                        "run `make apply` (FORCE=1 if it refuses), or `python3 tools/ktimers.py import` first "
                        "if the commits in the tree are the ones you want")
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no").stdout.rstrip()
    if dirty:
        raise ToolError(f"{rel(tree)} has local modifications that are not in any commit:\n{dirty}",
                        "the export is the commits only: save the edits into kernel/ (or commit them and "
                        "import), or drop them with `git -C build/linux reset --hard`")
    return base, final, chain


def pin_values(kernel_dir=series.KERNEL_DIR):
    values = {}
    pin = Path(kernel_dir) / series.PIN_NAME
    if pin.is_file():
        for line in pin.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and not line.lstrip().startswith("#"):
                values[key.strip()] = value.strip()
    return values


def read_template(path, values):
    """(subject, body) from the cover-letter template, $placeholders filled in."""
    path = Path(path)
    if not path.is_file():
        raise ToolError(f"{rel(path)} not found: it holds the cover letter's subject and text",
                        "restore it from git")
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        raise ToolError(f"{rel(path)} has no subject line", "first line: the subject; then a blank line and the body")
    try:
        text = string.Template("\n".join(lines)).substitute(values)
    except (KeyError, ValueError) as error:
        raise ToolError(f"{rel(path)}: unknown or malformed placeholder {error}",
                        f"known: {', '.join('$' + key for key in sorted(values))}; write $$ for a dollar sign")
    subject, _, body = text.partition("\n")
    if body.strip() and body.splitlines()[0].strip():
        raise ToolError(f"{rel(path)}: the subject must be followed by a blank line")
    return subject.strip(), body.strip("\n") + "\n"


def fill_cover_letter(path, subject, body):
    text = Path(path).read_text()
    if SUBJECT_PLACEHOLDER not in text or BLURB_PLACEHOLDER not in text:
        raise ToolError(f"{rel(path)}: git format-patch wrote no {SUBJECT_PLACEHOLDER!r}/{BLURB_PLACEHOLDER!r} "
                        "to fill in", "check `git format-patch --cover-letter` by hand")
    text = text.replace(SUBJECT_PLACEHOLDER, subject, 1).replace(BLURB_PLACEHOLDER, body.rstrip("\n"), 1)
    Path(path).write_text(text)


def export(tree, out_dir=SERIES_OUT, kernel_dir=series.KERNEL_DIR, template=None):
    """Write the cover letter and one patch per commit into out_dir; returns the files, cover first."""
    tree, out_dir = Path(tree), Path(out_dir).resolve()
    base, head, chain = applied_head(tree, kernel_dir)
    values = pin_values(kernel_dir)
    values = {"version": values.get("version", "?"), "kernelversion": values.get("kernelversion", "?"),
              "count": str(len(chain))}
    subject, body = read_template(template or Path(kernel_dir) / series.SERIES_SUBDIR / "cover-letter.txt", values)
    if out_dir.exists():
        stale = [p for p in out_dir.iterdir() if not p.name.endswith(".patch")]
        if stale:
            raise ToolError(f"{rel(out_dir)} holds files that are not patches ({stale[0].name}, ...): "
                            "the export would mix with them", f"remove {rel(out_dir)} or choose another directory")
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    progress("series", f"git format-patch --cover-letter --base={base[:12]} {series.BASE_TAG}..{series.BRANCH} "
                       f"({len(chain)} patches) -> {rel(out_dir)}/")
    # The cover letter's From: is the committer identity: the series' author, not the tree's user.
    proc = git(tree, "-c", f"user.name={series.AUTHOR[0]}", "-c", f"user.email={series.AUTHOR[1]}",
               "-c", "core.abbrev=12", "-c", "diff.noprefix=false", "-c", "format.signOff=false",
               "format-patch", "--cover-letter", f"--base={base}", "--no-signature", "--subject-prefix=PATCH",
               "--no-renames", "--no-color", "--no-ext-diff", "-o", str(out_dir), f"{base}..{head}")
    files = [out_dir / Path(line).name for line in proc.stdout.split()]
    if len(files) != len(chain) + 1 or files[0].name != COVER_NAME:
        raise ToolError(f"git format-patch wrote {len(files)} file(s) for {len(chain)} commit(s) plus a cover letter")
    fill_cover_letter(files[0], subject, body)
    for path in files:
        progress("series", rel(path))
    return files
