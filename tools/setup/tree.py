"""Prepare the kernel tree (build/linux): the pinned tarball as a git repo tagged `base`.

The tree is extracted once; later runs only compare the tarball checksum
recorded in .git with the installed one (cached by size+mtime, so no 150MB
hash per run) and re-extract only when the installed tarball changed.
"""

import os
import shutil
import tempfile
from pathlib import Path

from common import ToolError, progress, rel, run_with_heartbeat
from common.git import git
from setup.pin import remember_tarball_sha

TOP_DIR_IN_TARBALL = "linux-source-6.12"
BASE_TAG = "base"
# Who made the `base` commit (the tarball as extracted): fixed, so `base` has the same hash on every
# machine. Only that commit: the commits in the tree are the patches' authors' and the user's own.
GIT_USER = ("ktimers tools", "ktimers@localhost")
SHA_RECORD = "ktimers-base-sha256"          # sha256 of the tarball the tree was made from
TARBALL_CACHE = "ktimers-tarball-stat.json"  # size+mtime -> sha256 cache for the tarball


def tarball_cache_file(tree):
    """Where pin.tarball_sha256 caches its result: the tree's .git, if there is one."""
    git_dir = Path(tree) / ".git"
    return git_dir / TARBALL_CACHE if git_dir.is_dir() else None


def recorded_sha(tree):
    path = Path(tree) / ".git" / SHA_RECORD
    return path.read_text().strip() if path.is_file() else None


def record_sha(tree, sha):
    (Path(tree) / ".git" / SHA_RECORD).write_text(sha + "\n")


def base_subject(package, version):
    return f"base: {package} {version}"


def is_dirty(tree):
    return bool(git(tree, "status", "--porcelain", "--untracked-files=no").stdout.strip())


def adopt_existing(tree, check_result):
    """A tree made before the checksum was recorded: trust it if its base commit names our version."""
    proc = git(tree, "log", "-1", "--format=%s", BASE_TAG, check=False)
    subject = proc.stdout.strip()
    if proc.returncode == 0 and subject == base_subject(check_result.pin.package,
                                                         check_result.installed_version):
        record_sha(tree, check_result.sha256)
        progress("tree", f"{rel(tree)}: adopted existing tree ({subject}), recorded tarball sha256")
        return True
    return False


def ensure(tree, check_result, tmp_parent=None):
    """Make `tree` match the installed tarball; return True if it was (re)extracted."""
    tree = Path(tree)
    if tree.exists() and not (tree / ".git").is_dir():
        raise ToolError(f"{rel(tree)} exists but is not a git repository made by these tools",
                        f"move it away or delete it (rm -rf {rel(tree)}), then rerun `make tree`")
    if tree.exists():
        sha = recorded_sha(tree)
        if sha is None and adopt_existing(tree, check_result):
            return False
        if sha == check_result.sha256:
            progress("tree", f"{rel(tree)} matches {check_result.tarball.name} ({check_result.installed_version})")
            return False
        progress("tree", f"{rel(tree)} was made from a different tarball "
                         f"(recorded sha256 {str(sha)[:16]}..., installed {check_result.sha256[:16]}...); re-extracting")
        remove_or_move_aside(tree)
    extract(tree, check_result, tmp_parent)
    return True


def remove_or_move_aside(tree):
    """Local edits in the old tree are kept (moved to <tree>.old); a clean tree is just deleted."""
    if is_dirty(tree):
        old = tree.with_name(tree.name + ".old")
        if old.exists():
            progress("tree", f"deleting previous {rel(old)}")
            shutil.rmtree(old)
        tree.rename(old)
        progress("tree", f"the old tree had local modifications: moved it to {rel(old)} (delete it when done)")
    else:
        progress("tree", f"deleting old tree {rel(tree)} (no local modifications)")
        shutil.rmtree(tree)


def extract(tree, check_result, tmp_parent=None):
    tarball = check_result.tarball
    tree.parent.mkdir(parents=True, exist_ok=True)
    # Extract next to the destination so the final rename is atomic and an
    # interrupted extraction never leaves a half tree at build/linux.
    staging = Path(tempfile.mkdtemp(prefix=".extract-", dir=tmp_parent or tree.parent))
    try:
        progress("tree", f"extracting {tarball} into {rel(tree)} (1-3 minutes) ...")
        run_with_heartbeat(["tar", "-xf", str(tarball), "-C", str(staging)], "tree", "extracting",
                           what=f"tar -xf {tarball}",
                           hint="check free disk space (about 1.5 GB needed) and the tarball "
                                f"(apt-get install --reinstall {check_result.pin.package})")
        top = staging / TOP_DIR_IN_TARBALL
        if not top.is_dir():
            raise ToolError(f"{tarball} does not contain {TOP_DIR_IN_TARBALL}/",
                            "the package layout changed; update TOP_DIR_IN_TARBALL in tools/setup/tree.py")
        check_kernel_version(top, check_result.kernelversion)
        make_base_commit(top, check_result)
        top.rename(tree)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    record_sha(tree, check_result.sha256)
    remember_tarball_sha(check_result.tarball, check_result.sha256, tarball_cache_file(tree))
    progress("tree", f"{rel(tree)} ready: tag {BASE_TAG} = "
                     f"{base_subject(check_result.pin.package, check_result.installed_version)}")


def kernel_version_in(tree):
    """VERSION.PATCHLEVEL.SUBLEVEL from the top Makefile."""
    values = {}
    with open(Path(tree) / "Makefile") as makefile:
        for line in makefile:
            key, sep, value = line.partition("=")
            if sep and key.strip() in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
                values[key.strip()] = value.strip()
            if len(values) == 3:
                break
    return "{VERSION}.{PATCHLEVEL}.{SUBLEVEL}".format(**values) if len(values) == 3 else None


def check_kernel_version(tree, expected):
    found = kernel_version_in(tree)
    if found is None or found.split(".")[:2] != expected.split(".")[:2]:
        raise ToolError(f"the extracted kernel is {found}, expected {expected}",
                        "the installed linux-source package is not the 6.12 series; see kernel/base.pin")


def make_base_commit(top, check_result):
    # Commit dates come from the tarball's mtime, so the same tarball always
    # gives the same `base` commit hash.
    stamp = f"{int(os.stat(check_result.tarball).st_mtime)} +0000"
    env = dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp,
               GIT_AUTHOR_NAME=GIT_USER[0], GIT_AUTHOR_EMAIL=GIT_USER[1],
               GIT_COMMITTER_NAME=GIT_USER[0], GIT_COMMITTER_EMAIL=GIT_USER[1])
    git(top, "init", "-q")
    progress("tree", "git add of the whole kernel tree (1-2 minutes) ...")
    # Debian's top-level .gitignore ignores everything (`/*`), hence -f.
    run_with_heartbeat(["git", "-C", str(top), "add", "-f", "-A", "."], "tree", "adding files to git",
                       what="git add -f -A .")
    git(top, "commit", "-q", "-m", base_subject(check_result.pin.package, check_result.installed_version),
        env=env, what="git commit (base)")
    git(top, "tag", BASE_TAG)
