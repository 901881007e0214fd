"""Export the applied series as mail-ready patches: git format-patch --cover-letter into build/series/.

The commits are those of branch `ktimers` in the tree, exactly as `make apply` made them from
kernel/patches (the export refuses a tree that is not applied, out of date or dirty), so the
exported series and the tested branch are the same commits. The sender is the git user (their
Signed-off-by, the cover letter's From:). The cover letter's subject and body come from
kernel/cover-letter.txt; git adds the shortlog, the diffstat and the base-commit trailer (--base).
"""

import shutil
import string
from pathlib import Path

from series import store as series
from common import BUILD_DIR, ToolError, progress, rel
from common.git import git

SERIES_OUT = BUILD_DIR / "series"
COVER_TEMPLATE = series.KERNEL_DIR / series.COVER_LETTER
COVER_NAME = "0000-cover-letter.patch"
SUBJECT_PLACEHOLDER = "*** SUBJECT HERE ***"
BLURB_PLACEHOLDER = "*** BLURB HERE ***"


def applied_head(tree, kernel_dir=series.KERNEL_DIR):
    """(base sha, head sha, commit count) of the applied series; ToolError unless the tree is exactly
    `git am kernel/patches/*.patch` on base, with nothing uncommitted."""
    tree = Path(tree)
    series.require_tree(tree)
    paths = series.patch_files(kernel_dir)
    if not paths:
        raise ToolError(f"{rel(Path(kernel_dir) / series.PATCHES_SUBDIR)} has no patches: there is no series to export")
    if not series.is_applied(tree, paths):
        raise ToolError(f"{rel(tree)} is not the applied series (branch {series.BRANCH} is not what kernel/patches "
                        "give)", "run `make apply` (FORCE=1 if it refuses), or `python3 tools/ktimers.py import` "
                        "first if the commits in the tree are the ones you want")
    _, _, dirty = series.state(tree)
    if dirty:
        raise ToolError(f"{rel(tree)} has local modifications that are not in any commit:\n{dirty}",
                        "the export is the commits only: commit them and import, or drop them with "
                        f"`git -C {rel(tree)} reset --hard`")
    return series.rev(tree, series.BASE_TAG), series.rev(tree, "HEAD"), len(paths)


def user_identity(tree):
    """`Name <email>` of the git user who sends the series (their Signed-off-by and the cover letter's
    From:); ToolError when git has none."""
    proc = git(tree, "var", "GIT_COMMITTER_IDENT", check=False)
    if proc.returncode:
        raise ToolError("git has no identity to sign the series off with",
                        'set yours: git config --global user.name "Your Name"; '
                        "git config --global user.email you@example.org")
    return proc.stdout.rsplit(">", 1)[0] + ">"


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
    base, head, count = applied_head(tree, kernel_dir)
    sender = user_identity(tree)
    values = pin_values(kernel_dir)
    values = {"version": values.get("version", "?"), "kernelversion": values.get("kernelversion", "?"),
              "count": str(count)}
    subject, body = read_template(template or Path(kernel_dir) / series.COVER_LETTER, values)
    if out_dir.exists():
        stale = [p for p in out_dir.iterdir() if not p.name.endswith(".patch")]
        if stale:
            raise ToolError(f"{rel(out_dir)} holds files that are not patches ({stale[0].name}, ...): "
                            "the export would mix with them", f"remove {rel(out_dir)} or choose another directory")
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    progress("series", f"git format-patch --cover-letter --signoff --base={base[:12]} "
                       f"{series.BASE_TAG}..{series.BRANCH} ({count} patches, from {sender}) -> {rel(out_dir)}/")
    # The sender is the git user: the cover letter's From: and, with --signoff, a Signed-off-by on
    # each patch unless it already ends with theirs. Each patch's From: stays its author.
    proc = git(tree, *series.FORMAT_CONFIG, "format-patch", *series.FORMAT_OPTIONS, "--cover-letter", "--signoff",
               f"--base={base}", "-o", str(out_dir), f"{base}..{head}")
    files = [out_dir / Path(line).name for line in proc.stdout.split()]
    if len(files) != count + 1 or files[0].name != COVER_NAME:
        raise ToolError(f"git format-patch wrote {len(files)} file(s) for {count} commit(s) plus a cover letter")
    fill_cover_letter(files[0], subject, body)
    for path in files:
        progress("series", rel(path))
    return files
