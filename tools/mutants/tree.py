"""The kernel tree during a mutant run: is it ready, put a mutant in, take it out again.

A mutant is applied with `git apply` to the working tree of the prepared tree
(build/linux, branch ktimers) and taken out by restoring the files its diff
touches from HEAD (and deleting those HEAD does not have). Afterwards the tree
must be clean again (`git status --porcelain` empty); if it is not, the run
stops with an error that says how to restore it by hand.
"""

from pathlib import Path

from common import ToolError, rel
from common.git import git
from kunit.run import KUNIT_PY
from series.store import BASE_TAG, BRANCH


def dirt(tree):
    """`git status --porcelain` of the tree: '' when clean (untracked files count too)."""
    return git(tree, "status", "--porcelain", locks=False).stdout.rstrip()


def restore_hint(tree, files=()):
    paths = " ".join(files) if files else "."
    return (f"restore it by hand: `git -C {rel(tree)} checkout HEAD -- {paths}` (and delete the files it lists "
            f"as untracked, `??`), or `python3 tools/ktimers.py apply --tree {rel(tree)} --force`; then "
            f"`git -C {rel(tree)} status` must show nothing")


def check(tree):
    """A ToolError unless the tree is prepared, has the series applied on branch ktimers and is clean."""
    tree = Path(tree)
    if not (tree / KUNIT_PY).is_file():
        raise ToolError(f"{rel(tree)} is not a prepared kernel tree ({KUNIT_PY} missing)",
                        "run `make tree apply` first")
    branch = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False, locks=False).stdout.strip()
    commits = git(tree, "rev-list", f"{BASE_TAG}..HEAD", check=False, locks=False)
    if branch != BRANCH or commits.returncode != 0 or not commits.stdout.strip():
        raise ToolError(f"the ktimers series is not applied in {rel(tree)} (HEAD is "
                        f"{'on ' + branch if branch else 'detached'}, not on branch {BRANCH} above `{BASE_TAG}`)",
                        "run `make tree apply` (the mutants are patches against the applied series)")
    dirty = dirt(tree)
    if dirty:
        raise ToolError(f"{rel(tree)} has local modifications; mutants need a clean tree (each one is taken "
                        f"out again by restoring files from HEAD):\n{dirty}",
                        f"keep edits by moving them into kernel/ (`make apply` says how), or drop them with "
                        f"`python3 tools/ktimers.py apply --tree {rel(tree)} --force` (delete untracked `??` "
                        f"files yourself)")


def apply(tree, mutant):
    """git apply the mutant in the tree; returns None, or git's message when it does not apply (stale)."""
    proc = git(tree, "apply", "--whitespace=nowarn", str(Path(mutant.path).resolve()), check=False, locks=False)
    if proc.returncode == 0:
        return None
    return (proc.stderr or proc.stdout or f"git apply exited with {proc.returncode}").strip()


def restore(tree, mutant):
    """Take the mutant out: its files back from HEAD, the files it created deleted; then the tree must be
    clean, else a ToolError that says how to restore it by hand."""
    tree = Path(tree)
    tracked, problems = [], []
    for name in mutant.files:
        if git(tree, "cat-file", "-e", f"HEAD:{name}", check=False, locks=False).returncode == 0:
            tracked.append(name)
        elif (tree / name).is_file() or (tree / name).is_symlink():
            (tree / name).unlink()
    if tracked:
        proc = git(tree, "checkout", "HEAD", "--", *tracked, check=False, locks=False)
        if proc.returncode:
            problems.append(proc.stderr.strip())
    dirty = dirt(tree)
    if dirty or problems:
        raise ToolError(f"could not restore {rel(tree)} after mutant {mutant.id}"
                        + (f" ({'; '.join(problems)})" if problems else "") + f"; still modified:\n{dirty}",
                        restore_hint(tree, mutant.files))
