"""Rewrite kernel/ (series/*.commit, patches/*.patch, the added files) from commits in the tree.

The way back from `make apply`: reorder, split or edit the commits on top of `base` in
build/linux with git (rebase -i, commit --amend), then import them. Per commit:

- a file the commit creates becomes an `add:` line, and kernel/<path> gets the file's
  content at the last imported commit (apply withholds what later commits change in it);
- the changes to files that existed before the commit (kernel files, or files an earlier
  commit added) become one patch, kernel/patches/NNNN-<subject>.patch, and a `patch:` line;
- the commit message goes above the `---` line.

Deleting, renaming or changing the mode of a file, symlinks and merges are refused: the
series format has no way to say them. The result is checked by rebuilding the chain the way
`make apply` does and comparing every commit's tree with the imported one.
"""

import re
from pathlib import Path

from series import store as series
from common import ToolError, progress, rel
from common.git import git

SUBJECT_PREFIX_RE = re.compile(r"^[\w./-]+: ")
MAX_SLUG = 48


def slug(subject):
    """File-name part for a subject: `ktimers: add /sys/kernel/debug/ktimers` -> add-sys-kernel-debug-ktimers."""
    text = SUBJECT_PREFIX_RE.sub("", subject.strip()).lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-") or "commit"
    if len(text) > MAX_SLUG:
        text = text[:MAX_SLUG].rsplit("-", 1)[0]
    return text


class ImportedCommit:
    def __init__(self, sha, message, adds, modified, patch_text):
        self.sha, self.message, self.adds, self.modified, self.patch_text = sha, message, adds, modified, patch_text

    @property
    def subject(self):
        return self.message.splitlines()[0]


def read_commits(tree, rev="HEAD"):
    """The commits base..rev, oldest first, as ImportedCommits."""
    tree = Path(tree)
    if not (tree / ".git").is_dir():
        raise ToolError(f"kernel tree {rel(tree)} not found", "run `make tree` and `make apply` first")
    head = git(tree, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False).stdout.strip()
    if not head:
        raise ToolError(f"{rev!r} is not a commit in {rel(tree)}")
    base = git(tree, "rev-parse", "--verify", "-q", f"{series.BASE_TAG}^{{commit}}", check=False).stdout.strip()
    if not base:
        raise ToolError(f"{rel(tree)} has no tag `{series.BASE_TAG}`", "recreate the tree with `make tree`")
    if git(tree, "merge-base", "--is-ancestor", base, head, check=False).returncode != 0:
        raise ToolError(f"{rev} does not descend from `{series.BASE_TAG}`",
                        f"the series must be commits on top of {series.BASE_TAG} (rebase them onto it)")
    merges = git(tree, "rev-list", "--merges", f"{base}..{head}").stdout.split()
    if merges:
        raise ToolError(f"{rev} has merge commits since {series.BASE_TAG} ({merges[0][:12]}, ...)",
                        "the series is a straight line of commits: rebase without merges")
    shas = git(tree, "rev-list", "--reverse", f"{base}..{head}").stdout.split()
    if not shas:
        raise ToolError(f"no commits between {series.BASE_TAG} and {rev}: nothing to import")
    return [read_commit(tree, sha) for sha in shas]


def read_commit(tree, sha):
    raw = git(tree, "diff-tree", "-r", "--no-renames", "--no-commit-id", "--raw", f"{sha}^", sha).stdout
    adds, modified, problems = [], [], []
    for line in raw.splitlines():
        meta, _, path = line.partition("\t")
        old_mode, new_mode, _, _, status = meta.lstrip(":").split()
        if status == "A" and new_mode in ("100644", "100755"):
            adds.append(path)
        elif status == "M" and old_mode == new_mode:
            modified.append(path)
        else:
            problems.append(f"{path} ({status} {old_mode}->{new_mode})")
    subject = git(tree, "log", "-1", "--format=%s", sha).stdout.strip()
    if problems:
        raise ToolError(f"commit {sha[:12]} \"{subject}\" deletes, renames, retypes or changes the mode of "
                        f"files, which kernel/series cannot express: " + ", ".join(problems),
                        "keep every commit to adding files and editing existing ones")
    message = git(tree, "log", "-1", "--format=%B", sha).stdout.strip() + "\n"
    patch_text = b""
    if modified:
        patch_text = git(tree, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                         "--src-prefix=a/", "--dst-prefix=b/", "--abbrev=12", f"{sha}^", sha, "--", *modified,
                         text=False).stdout
    return ImportedCommit(sha, message, adds, modified, patch_text)


def plan(commits):
    """[(commit file name, patch file name or None, ImportedCommit)], numbered from 01 / 0001."""
    width = max(2, len(str(len(commits))))
    named = []
    for number, commit in enumerate(commits, 1):
        name = f"{number:0{width}d}-{slug(commit.subject)}"
        patch = f"{number:04d}-{slug(commit.subject)}.patch" if commit.modified else None
        named.append((f"{name}.commit", patch, commit))
    return named


def commit_file_text(commit, patch):
    lines = [commit.message.rstrip("\n"), "---"]
    lines += [f"add: {path}" for path in commit.adds]
    if patch:
        lines.append(f"patch: {patch}")
    return "\n".join(lines) + "\n"


def write_kernel_dir(tree, commits, kernel_dir, head):
    """Replace kernel/series/*.commit, kernel/patches/*.patch and the added files."""
    kernel_dir = Path(kernel_dir)
    series_dir = kernel_dir / series.SERIES_SUBDIR
    patches_dir = kernel_dir / series.PATCHES_SUBDIR
    named = plan(commits)
    added = [path for _, _, commit in named for path in commit.adds]
    for old in sorted(series_dir.glob("*.commit")) if series_dir.is_dir() else []:
        old.unlink()
    for old in sorted(patches_dir.glob("*.patch")) if patches_dir.is_dir() else []:
        old.unlink()
    for stale in series.in_tree_files(kernel_dir):
        if stale not in added:
            (kernel_dir / stale).unlink()
            progress("import", f"removed kernel/{stale} (no commit adds it any more)")
    series_dir.mkdir(parents=True, exist_ok=True)
    for commit_name, patch, commit in named:
        (series_dir / commit_name).write_text(commit_file_text(commit, patch))
        if patch:
            patches_dir.mkdir(parents=True, exist_ok=True)
            (patches_dir / patch).write_bytes(commit.patch_text)
        for path in commit.adds:
            mode = git(tree, "ls-tree", head, "--", path).stdout.split()
            if not mode:
                raise ToolError(f"{path}, added by {commit.sha[:12]} \"{commit.subject}\", is gone at the last "
                                f"commit", "the series format cannot delete files: drop the add instead")
            target = kernel_dir / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git(tree, "cat-file", "blob", f"{head}:{path}", text=False).stdout)
            target.chmod(0o755 if mode[0] == "100755" else 0o644)
        progress("import", f"{commit_name}: {commit.subject}")
    return named


def verify(tree, commits, kernel_dir):
    """Rebuild the chain from kernel/ as `make apply` does; every tree must match the imported commit's."""
    chain = series.build_chain(tree, series.load_series(kernel_dir), kernel_dir)
    if len(chain) != len(commits):
        raise ToolError(f"rebuilt {len(chain)} commit(s) from kernel/, imported {len(commits)}")
    for (sha, built), commit in zip(chain, commits):
        want = git(tree, "rev-parse", f"{commit.sha}^{{tree}}").stdout.strip()
        got = git(tree, "rev-parse", f"{sha}^{{tree}}").stdout.strip()
        if want != got:
            diff = git(tree, "diff", "--stat", commit.sha, sha).stdout.strip()
            raise ToolError(f"{built.name} rebuilt from kernel/ differs from the imported commit "
                            f"{commit.sha[:12]}:\n{diff}", "this is a bug in the import; kernel/ is left as written")
    return chain


def import_series(tree, rev="HEAD", kernel_dir=series.KERNEL_DIR):
    """Import base..rev into kernel_dir and check that apply rebuilds the same trees. Returns the chain."""
    tree = Path(tree)
    commits = read_commits(tree, rev)
    head = commits[-1].sha
    progress("import", f"{len(commits)} commit(s) from {series.BASE_TAG}..{rev} ({head[:12]}) into {rel(kernel_dir)}")
    write_kernel_dir(tree, commits, kernel_dir, head)
    chain = verify(tree, commits, kernel_dir)
    progress("import", f"checked: `make apply` rebuilds the same {len(chain)} tree(s); "
                       f"its commits differ only in author and dates")
    return chain
