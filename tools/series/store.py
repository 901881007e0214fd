"""The ktimers series as kept in kernel/: plain `git format-patch` files, applied with `git am`.

    kernel/patches/NNNN-<subject>.patch   the series, one mail per commit (`git am` takes them as they are)
    kernel/cover-letter.txt               the cover letter's subject and text (`make series`)
    kernel/base.pin                       the kernel the series applies to (`make tree`)
    kernel/<in-tree path>                 each file the series adds, in its final form, to read and grep

apply() is `git am kernel/patches/*.patch` onto the tree's `base` commit, on branch `ktimers`;
series/importer.py is the way back (`git format-patch base..HEAD` into kernel/patches). The patches are the series: a file under kernel/<path> that
differs from what they give is copied into the tree as an uncommitted edit, with a warning that
says how to make it part of a commit.
"""

import hashlib
from email import policy
from email.parser import BytesParser
from email.utils import parseaddr
import os
import re
import tempfile
from pathlib import Path

from common import REPO_ROOT, ToolError, progress, rel, warn
from common.git import git

KERNEL_DIR = REPO_ROOT / "kernel"
PATCHES_SUBDIR = "patches"
COVER_LETTER = "cover-letter.txt"
PIN_NAME = "base.pin"
BASE_TAG = "base"
BRANCH = "ktimers"
# Files of kernel/ that are not in-tree files.
NOT_IN_TREE = (PATCHES_SUBDIR, COVER_LETTER, PIN_NAME)
PATCH_NAME_RE = re.compile(r"^\d{4}-[A-Za-z0-9._-]+\.patch$")
# The tree's git config remembers which patch set made branch ktimers, so an apply of the
# same patches is a no-op and commits made by hand are told apart from the series.
APPLIED_PATCHSET_KEY = "ktimers.patchset"
APPLIED_HEAD_KEY = "ktimers.head"
# `git format-patch` as both the store and `make series` run it: 12-digit abbreviations, a/ b/
# prefixes and no renames whatever the user's config says, no git version signature.
FORMAT_CONFIG = ("-c", "core.abbrev=12", "-c", "diff.noprefix=false")
FORMAT_OPTIONS = ("--no-signature", "--no-renames", "--no-color", "--no-ext-diff", "--subject-prefix=PATCH")
# The store's files depend on the commits only: no commit hashes (From 000... lines), no
# [PATCH n/m] numbers (adding a patch changes one file, not all of them), no sign-off added.
STORE_FORMAT = (*FORMAT_CONFIG, "-c", "format.signOff=false", "format-patch", *FORMAT_OPTIONS,
                "--zero-commit", "--no-numbered")
# `diff --git a/<old> b/<new>`: the path a patch changes (paths with spaces are not kernel paths).
DIFF_GIT_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def patch_files(kernel_dir=KERNEL_DIR):
    """kernel/patches/*.patch in order; ToolError if a name is not NNNN-<subject>.patch."""
    folder = Path(kernel_dir) / PATCHES_SUBDIR
    paths = sorted(folder.glob("*.patch")) if folder.is_dir() else []
    odd = [p.name for p in paths if not PATCH_NAME_RE.match(p.name)]
    if odd:
        raise ToolError(f"{rel(folder)}: {', '.join(odd)} not named like `git format-patch` output "
                        "(NNNN-subject.patch)", "rename it, or rewrite the folder with `python3 tools/ktimers.py import`")
    return paths


def patchset_hash(paths):
    """KCIDB's patchset_hash: sha256 over the newline-terminated sha256 of each patch, in order
    (`sha256sum *.patch | cut -c-64 | sha256sum`)."""
    hashes = "".join(hashlib.sha256(Path(p).read_bytes()).hexdigest() + "\n" for p in paths)
    return hashlib.sha256(hashes.encode()).hexdigest()


def series_hash(kernel_dir=KERNEL_DIR):
    return patchset_hash(patch_files(kernel_dir))


def patch_author(path):
    """(name, email) of the patch's From: header (folded or not, as mail allows)."""
    with open(path, "rb") as file:
        name, email = parseaddr(str(BytesParser(policy=policy.default).parse(file, headersonly=True)["From"] or ""))
    if not email:
        raise ToolError(f"{rel(path)} has no `From: Name <email>` header", "it is not `git format-patch` output")
    return name, email


def mirror_files(kernel_dir=KERNEL_DIR):
    """{in-tree path: file under kernel/} for every file kept at its in-tree path."""
    kernel_dir = Path(kernel_dir)
    files = {}
    for path in sorted(kernel_dir.rglob("*")):
        relative = path.relative_to(kernel_dir)
        if path.is_file() and relative.parts[0] not in NOT_IN_TREE and not path.name.endswith("~"):
            files[relative.as_posix()] = path
    return files


def in_tree_files(kernel_dir=KERNEL_DIR):
    """In-tree paths of the files kept under kernel/ in their final form."""
    return list(mirror_files(kernel_dir))


def added_paths(tree, start, end):
    """Files the commits start..end add (the series' new files)."""
    out = git(tree, "diff", "--name-only", "--no-renames", "--diff-filter=A", start, end).stdout
    return sorted(out.split())


def config(tree, key):
    return git(tree, "config", "--get", key, check=False).stdout.strip()


def rev(tree, name):
    return git(tree, "rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False).stdout.strip()


def state(tree):
    """(HEAD, branch, `git status` of tracked files) of the tree."""
    head = rev(tree, "HEAD")
    branch = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no").stdout.rstrip()
    return head, branch, dirty


def require_tree(tree):
    if not (Path(tree) / ".git").exists():
        raise ToolError(f"kernel tree {rel(tree)} not found", "run `make tree` first")
    if not rev(tree, BASE_TAG):
        raise ToolError(f"{rel(tree)} has no `{BASE_TAG}` commit", "run `make tree` (FORCE=1 to extract it again)")


def is_applied(tree, paths):
    """True when branch ktimers is exactly what these patches gave (apply would change nothing)."""
    head, branch, _ = state(tree)
    return (branch == BRANCH and head and head == config(tree, APPLIED_HEAD_KEY)
            and config(tree, APPLIED_PATCHSET_KEY) == patchset_hash(paths))


def remember(tree, paths, head):
    git(tree, "config", APPLIED_PATCHSET_KEY, patchset_hash(paths))
    git(tree, "config", APPLIED_HEAD_KEY, head)


def git_am(tree, paths):
    """`git am` the patches onto HEAD. The committer is the first patch's author and the commit
    dates are the author dates, so the same patches give the same commits on every machine."""
    name, email = patch_author(paths[0])
    env = dict(os.environ, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email)
    proc = git(tree, "am", "--quiet", "--committer-date-is-author-date", "--no-3way",
               *[str(Path(p).resolve()) for p in paths], env=env, check=False)
    if proc.returncode:
        message = (proc.stdout + proc.stderr).strip()
        git(tree, "am", "--abort", env=env, check=False)
        raise ToolError(f"git am stopped in {rel(tree)}:\n{message}",
                        "the patch named above no longer applies to the one before it: fix the series in the "
                        "tree (`git rebase -i base`) and run `python3 tools/ktimers.py import`")


def hand_made_commits(tree):
    """Commits on branch ktimers that no apply made (someone committed in the tree)."""
    head, branch, _ = state(tree)
    applied = config(tree, APPLIED_HEAD_KEY)
    if branch != BRANCH or not head or head == applied:
        return []
    since = applied if applied and git(tree, "merge-base", "--is-ancestor", applied, head,
                                       check=False).returncode == 0 else BASE_TAG
    return git(tree, "log", "--format=%h %s", f"{since}..{head}").stdout.splitlines()


def apply(tree, kernel_dir=KERNEL_DIR, force=False):
    """Bring the tree to `git am kernel/patches/*.patch` on `base`, branch ktimers; returns HEAD."""
    tree = Path(tree)
    require_tree(tree)
    paths = patch_files(kernel_dir)
    if is_applied(tree, paths):
        progress("apply", f"series up to date ({BRANCH} = {rev(tree, 'HEAD')[:12]}, {len(paths)} patches)")
    else:
        _, _, dirty = state(tree)
        if dirty and not force:
            raise ToolError(f"{rel(tree)} has local modifications; applying the series would overwrite them:\n"
                            f"{dirty}", "keep them: commit them in the tree and run `python3 tools/ktimers.py "
                            "import`; drop them: rerun with FORCE=1")
        own = hand_made_commits(tree)
        if own and not force:
            raise ToolError(f"branch {BRANCH} of {rel(tree)} has commits that are not in kernel/patches:\n    "
                            + "\n    ".join(own), "keep them: `python3 tools/ktimers.py import`; drop them: "
                            "rerun with FORCE=1")
        progress("apply", f"git am {len(paths)} patch(es) from {rel(Path(kernel_dir) / PATCHES_SUBDIR)} "
                          f"onto {BASE_TAG} ...")
        git(tree, "checkout", "-q", "-f", "-B", BRANCH, BASE_TAG)
        if paths:
            git_am(tree, paths)
        remember(tree, paths, rev(tree, "HEAD"))
        progress("apply", f"{len(paths)} commit(s); {BRANCH} = {rev(tree, 'HEAD')[:12]}")
    sync_mirror(tree, kernel_dir, force)
    return rev(tree, "HEAD")


def sync_mirror(tree, kernel_dir=KERNEL_DIR, force=False):
    """Copy kernel/<path> files that differ from the series into the tree (uncommitted), with a warning."""
    tree = Path(tree)
    added = set(added_paths(tree, BASE_TAG, "HEAD"))
    mirror = mirror_files(kernel_dir)
    strays = sorted(set(mirror) - added)
    if strays:
        raise ToolError(f"{', '.join('kernel/' + p for p in strays)}: no patch in kernel/patches adds "
                        "this file", "add it in a commit in the tree and run `python3 tools/ktimers.py import`, "
                        "or delete it")
    edited = []
    for path, source in mirror.items():
        committed = git(tree, "show", f"HEAD:{path}", text=False).stdout
        wanted = source.read_bytes()
        if wanted == committed:
            continue
        target = tree / path
        if target.read_bytes() not in (committed, wanted) and not force:
            raise ToolError(f"{rel(source)} differs from the series, and {rel(target)} has other local "
                            "edits: not overwriting them", "keep one of the two, or rerun with FORCE=1 "
                            "(kernel/ wins)")
        target.write_bytes(wanted)
        edited.append(path)
    if edited:
        warn(f"{len(edited)} file(s) under kernel/ differ from kernel/patches and were copied into "
             f"{rel(tree)} as uncommitted edits (the tests include them; `make series` does not): "
             + ", ".join(edited) + ". To make them part of the series: commit them in the tree "
             f"(`git -C {rel(tree)} commit --fixup=<commit>` and `git rebase -i --autosquash {BASE_TAG}`), "
             "then `python3 tools/ktimers.py import`")
    return edited


def replay_tree(tree, paths):
    """The tree object `git am` of the patches onto base gives, by `git apply --cached` on a
    temporary index (no checkout)."""
    with tempfile.TemporaryDirectory(prefix="ktimers-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        git(tree, "read-tree", BASE_TAG, env=env)
        for path in paths:
            proc = git(tree, "apply", "--cached", str(Path(path).resolve()), env=env, check=False)
            if proc.returncode:
                raise ToolError(f"{rel(path)} does not apply after the patches before it:\n{proc.stderr.strip()}")
        return git(tree, "write-tree", env=env).stdout.strip()
