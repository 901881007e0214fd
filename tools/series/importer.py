"""Rewrite kernel/patches (and the files the series adds, under kernel/) from commits in the tree.

The way back from `make apply`: reorder, split or edit the commits on top of `base` in
build/linux with git (rebase -i, commit --amend), then import them. It is
`git format-patch base..REV` into kernel/patches, in a form that depends on the commits only
(store.STORE_FORMAT), checked first: the patches, applied to `base` in order, must give REV's
tree back, or kernel/ is left as it was.
"""

import tempfile
from pathlib import Path

from common import ToolError, progress, rel
from common.git import git
from series import store
from series.store import BASE_TAG, BRANCH, KERNEL_DIR, PATCHES_SUBDIR


def commits_to_import(tree, rev_name):
    """(sha of REV, number of commits base..REV); ToolError for what format-patch cannot carry."""
    head = store.rev(tree, rev_name)
    if not head:
        raise ToolError(f"{rev_name!r} is not a commit in {rel(tree)}")
    if git(tree, "rev-list", "--merges", f"{BASE_TAG}..{head}").stdout.strip():
        raise ToolError(f"{BASE_TAG}..{rev_name} has merge commits", "make the history linear (`git rebase base`)")
    count = len(git(tree, "rev-list", f"{BASE_TAG}..{head}").stdout.split())
    if not count:
        raise ToolError(f"{BASE_TAG}..{rev_name} has no commits: nothing to import")
    return head, count


def write_patches(folder, new):
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.patch"):
        old.unlink()
    for path in new:
        (folder / path.name).write_bytes(path.read_bytes())


def write_added_files(tree, head, kernel_dir):
    """kernel/<path> := the file at REV, for each file the series adds; others under kernel/ go."""
    for source in store.mirror_files(kernel_dir).values():
        source.unlink()
    for path in store.added_paths(tree, BASE_TAG, head):
        target = Path(kernel_dir) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(git(tree, "show", f"{head}:{path}", text=False).stdout)
    for folder in sorted((p for p in Path(kernel_dir).rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def import_series(tree, rev="HEAD", kernel_dir=KERNEL_DIR):
    """Rewrite kernel/ from the commits base..REV; returns the patch files."""
    tree, kernel_dir = Path(tree), Path(kernel_dir)
    store.require_tree(tree)
    head, count = commits_to_import(tree, rev)
    with tempfile.TemporaryDirectory(prefix="ktimers-import-") as tmp:
        git(tree, *store.STORE_FORMAT, "-o", tmp, f"{BASE_TAG}..{head}")
        new = sorted(Path(tmp).glob("*.patch"))
        if store.replay_tree(tree, new) != git(tree, "rev-parse", f"{head}^{{tree}}").stdout.strip():
            raise ToolError(f"the patches of {BASE_TAG}..{rev} do not give its tree back (a binary file, "
                            "a mode change or a rename?)", "kernel/ was not changed")
        write_patches(kernel_dir / PATCHES_SUBDIR, new)
    write_added_files(tree, head, kernel_dir)
    paths = store.patch_files(kernel_dir)
    current, branch, _ = store.state(tree)
    if branch == BRANCH and current == head:
        store.remember(tree, paths, head)   # the tree is this series: the next apply changes nothing
    progress("import", f"{count} commit(s) of {BASE_TAG}..{rev} -> {rel(kernel_dir / PATCHES_SUBDIR)}/ "
                       f"(patchset {store.patchset_hash(paths)[:12]})")
    return paths
