"""Apply the ktimers series (kernel/series/*.commit) to the tree as git commits on `base`.

Each .commit file is a commit message, a line `---`, then `add: <in-tree path>`
(copy kernel/<path> into the tree) and `patch: <file in kernel/patches/>` lines.

kernel/<path> is always a file's final content. When a later patch changes a file that
an `add:` line introduced (the debug objects patch adding hooks to ktimer.c, say), the
add takes those hunks back out: it applies the later patches in reverse, latest first,
to that file only. So each commit shows the file as it was at that point of the series,
and the hunks are stored once, in the patch of the commit that adds them.
The commit chain is built with plumbing on a temporary index with fixed
author/dates, so the same input always gives the same commit hashes and the
working tree is only touched once, by `git reset --hard` at the end (git only
rewrites files whose content changed, so kbuild rebuilds incrementally).
"""

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from common import REPO_ROOT, ToolError, progress, rel, warn
from common.git import git

KERNEL_DIR = REPO_ROOT / "kernel"
SERIES_SUBDIR = "series"
PATCHES_SUBDIR = "patches"
PIN_NAME = "base.pin"
BASE_TAG = "base"
BRANCH = "ktimers"
AUTHOR = ("ktimers project", "ktimers@localhost")
# Editor leftovers are never kernel files; everything else under kernel/ must be claimed.
IGNORED_SUFFIXES = ("~", ".swp", ".swo", ".orig", ".rej")
IGNORED_NAMES = (".DS_Store", ".gitkeep")
# `diff --git a/<old> b/<new>`: the path a patch changes (paths with spaces are not kernel paths).
DIFF_GIT_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


@dataclass
class Step:
    kind: str      # "add" or "patch"
    arg: str       # in-tree path (add) or patch file name (patch)
    lineno: int


@dataclass
class SeriesCommit:
    path: Path
    message: str
    steps: list = field(default_factory=list)

    @property
    def subject(self):
        return self.message.splitlines()[0]

    @property
    def name(self):
        return self.path.name


def parse_commit_file(path):
    """Split a .commit file into its message and add:/patch: steps."""
    path = Path(path)
    lines = path.read_text().splitlines()
    if "---" not in lines:
        raise ToolError(f"{rel(path)}: no line `---` separating the commit message from add:/patch: lines",
                        "see the format described in tools/series/store.py")
    cut = lines.index("---")
    message = "\n".join(lines[:cut]).strip("\n")
    if not message.strip() or not lines[0].strip():
        raise ToolError(f"{rel(path)}: the commit message must start with a subject line",
                        "first line: subject, then a blank line, the body and Signed-off-by trailers")
    commit = SeriesCommit(path=path, message=message.rstrip() + "\n")
    for lineno, raw in enumerate(lines[cut + 1:], cut + 2):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        kind, sep, arg = line.partition(":")
        if not sep or kind.strip() not in ("add", "patch") or not arg.strip():
            raise ToolError(f"{rel(path)}:{lineno}: expected `add: <in-tree path>` or `patch: <file>`, got {raw!r}")
        arg = arg.strip()
        if arg.startswith("/") or ".." in Path(arg).parts:
            raise ToolError(f"{rel(path)}:{lineno}: {arg!r} must be a relative path inside the tree")
        commit.steps.append(Step(kind.strip(), arg, lineno))
    return commit


def is_ignored(name):
    return name in IGNORED_NAMES or name.endswith(IGNORED_SUFFIXES) or name.startswith(".#")


def in_tree_files(kernel_dir=KERNEL_DIR):
    """Files under kernel/ that belong in the kernel tree (relative, posix paths)."""
    kernel_dir = Path(kernel_dir)
    found = []
    for root, dirs, files in os.walk(kernel_dir):
        rel_root = Path(root).relative_to(kernel_dir)
        if rel_root == Path("."):
            dirs[:] = [d for d in dirs if d not in (SERIES_SUBDIR, PATCHES_SUBDIR)]
        for name in files:
            relpath = (rel_root / name).as_posix()
            if relpath != PIN_NAME and not is_ignored(name):
                found.append(relpath)
    return sorted(found)


def load_series(kernel_dir=KERNEL_DIR):
    """Parse and validate the whole series; all problems are reported at once."""
    kernel_dir = Path(kernel_dir)
    series_dir = kernel_dir / SERIES_SUBDIR
    commit_files = sorted(series_dir.glob("*.commit")) if series_dir.is_dir() else []
    commits = [parse_commit_file(path) for path in commit_files]
    validate(kernel_dir, commits)
    return commits


def validate(kernel_dir, commits):
    kernel_dir = Path(kernel_dir)
    problems = []
    claimed = {}
    used_patches = set()
    for commit in commits:
        for step in commit.steps:
            where = f"{rel(commit.path)}:{step.lineno}"
            if step.kind == "add":
                if not (kernel_dir / step.arg).is_file():
                    problems.append(f"{where}: add: {step.arg}: kernel/{step.arg} does not exist")
                elif step.arg in claimed:
                    problems.append(f"{where}: add: {step.arg} is already claimed by {claimed[step.arg]}")
                else:
                    claimed[step.arg] = where
            else:
                if not (kernel_dir / PATCHES_SUBDIR / step.arg).is_file():
                    problems.append(f"{where}: patch: {step.arg}: kernel/{PATCHES_SUBDIR}/{step.arg} does not exist")
                used_patches.add(step.arg)
    for path in in_tree_files(kernel_dir):
        if path not in claimed:
            problems.append(f"kernel/{path} is not claimed by any `add:` line")
    if problems:
        raise ToolError("the series in kernel/series/ is inconsistent:\n    " + "\n    ".join(problems),
                        "every file under kernel/ (except base.pin, series/, patches/) needs exactly one "
                        "`add: <in-tree path>` line in the .commit file that introduces it")
    patches_dir = kernel_dir / PATCHES_SUBDIR
    if patches_dir.is_dir():
        for patch in sorted(p.name for p in patches_dir.iterdir() if p.is_file() and not is_ignored(p.name)):
            if patch not in used_patches:
                warn(f"kernel/{PATCHES_SUBDIR}/{patch} is not used by any `patch:` line")


def series_hash(kernel_dir=KERNEL_DIR, commits=None):
    """sha256 over everything that defines the series: pin, .commit files, added files, patches."""
    kernel_dir = Path(kernel_dir)
    commits = load_series(kernel_dir) if commits is None else commits
    digest = hashlib.sha256()

    def feed(label, data):
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    pin = kernel_dir / PIN_NAME
    if pin.is_file():
        feed("pin", pin.read_bytes())
    for commit in commits:
        feed(f"commit {commit.name}", commit.path.read_bytes())
        for step in commit.steps:
            source = kernel_dir / step.arg if step.kind == "add" else kernel_dir / PATCHES_SUBDIR / step.arg
            feed(f"{step.kind} {step.arg} {file_mode(source)}", source.read_bytes())
    return digest.hexdigest()


def patch_paths(patch):
    """The in-tree paths a patch file changes, in order."""
    text = Path(patch).read_text(errors="replace")
    paths = [match.group(2) for match in DIFF_GIT_RE.finditer(text)]
    if not paths:
        paths = [line[6:].split("\t")[0].strip() for line in text.splitlines() if line.startswith("+++ b/")]
    return list(dict.fromkeys(paths))


def file_mode(path):
    return "100755" if os.access(path, os.X_OK) else "100644"


class ChainBuilder:
    """Builds the commit chain on a temporary index; never touches the working tree."""

    def __init__(self, tree, kernel_dir, index_file):
        self.tree = Path(tree)
        self.kernel_dir = Path(kernel_dir)
        date = self.git("log", "-1", "--format=%ad|%cd", "--date=raw", BASE_TAG,
                        hint=f"{rel(tree)} has no tag `{BASE_TAG}`: recreate it with `make tree`").stdout.strip()
        author_date, committer_date = date.split("|")
        self.env = dict(os.environ, GIT_INDEX_FILE=str(index_file),
                        GIT_AUTHOR_NAME=AUTHOR[0], GIT_AUTHOR_EMAIL=AUTHOR[1], GIT_AUTHOR_DATE=author_date,
                        GIT_COMMITTER_NAME=AUTHOR[0], GIT_COMMITTER_EMAIL=AUTHOR[1],
                        GIT_COMMITTER_DATE=committer_date)

    def git(self, *args, **options):
        return git(self.tree, *args, env=getattr(self, "env", None), **options)

    def build(self, commits):
        """Return [(sha, commit)] for the series on top of base."""
        parent = self.git("rev-parse", f"{BASE_TAG}^{{commit}}").stdout.strip()
        self.git("read-tree", parent)
        # Every patch step with the commit it belongs to and the paths it changes, in series order.
        patch_steps = [(index, commit, step, patch_paths(self.kernel_dir / PATCHES_SUBDIR / step.arg))
                       for index, commit in enumerate(commits) for step in commit.steps
                       if step.kind == "patch"]
        chain = []
        for index, commit in enumerate(commits):
            later = [entry for entry in patch_steps if entry[0] > index]
            pending_adds = []
            for step in commit.steps:
                if step.kind == "add":
                    pending_adds.append(step.arg)
                else:
                    self.add_files(pending_adds, commit, later)
                    pending_adds = []
                    self.apply_patch(commit, step)
            self.add_files(pending_adds, commit, later)
            tree_sha = self.git("write-tree").stdout.strip()
            parent = self.git("commit-tree", tree_sha, "-p", parent, input=commit.message).stdout.strip()
            chain.append((parent, commit))
        return chain

    def add_files(self, paths, commit=None, later=()):
        """Add kernel/<path> for each path, then withhold what later patches change in them."""
        if not paths:
            return
        sources = [str(self.kernel_dir / path) for path in paths]
        shas = self.git("hash-object", "-w", "--no-filters", "--stdin-paths",
                        input="\n".join(sources) + "\n").stdout.split()
        index_info = "".join(f"{file_mode(src)} {sha}\t{path}\n" for src, sha, path in zip(sources, shas, paths))
        self.git("update-index", "--add", "--index-info", input=index_info)
        for _, later_commit, step, touched in reversed(later):
            mine = [path for path in paths if path in touched]
            if mine:
                self.withhold_patch(commit, mine, later_commit, step)

    def withhold_patch(self, commit, paths, later_commit, step):
        """Reverse-apply a later commit's patch to files this commit adds (final -> as of now)."""
        patch = self.kernel_dir / PATCHES_SUBDIR / step.arg
        includes = [f"--include={path}" for path in paths]
        proc = self.git("apply", "--cached", "--reverse", "--whitespace=nowarn", *includes, str(patch),
                        check=False)
        if proc.returncode != 0:
            names = ", ".join(f"kernel/{path}" for path in paths)
            raise ToolError(
                f"{rel(commit.path)} adds {names}, and the later patch kernel/{PATCHES_SUBDIR}/{step.arg} "
                f"(from {rel(later_commit.path)}) changes it, but that patch cannot be taken back out "
                f"of the final file:\n{proc.stderr.strip()}",
                "the file was edited where the later patch's hunks are; redo the edit in the commit that "
                "owns those lines (git rebase -i in the tree) and rewrite kernel/ from the branch with "
                "`python3 tools/ktimers.py import`")

    def apply_patch(self, commit, step):
        patch = self.kernel_dir / PATCHES_SUBDIR / step.arg
        proc = self.git("apply", "--cached", "--whitespace=nowarn", str(patch), check=False)
        if proc.returncode != 0:
            raise ToolError(
                f"patch kernel/{PATCHES_SUBDIR}/{step.arg} (from {rel(commit.path)}, \"{commit.subject}\") "
                f"does not apply:\n{proc.stderr.strip()}",
                f"regenerate it against the tree as left by the earlier commits, e.g. edit in {rel(self.tree)} "
                f"and run `git -C {rel(self.tree)} diff > kernel/{PATCHES_SUBDIR}/{step.arg}`")


def build_chain(tree, commits, kernel_dir=KERNEL_DIR):
    with tempfile.TemporaryDirectory(prefix="ktimers-index-") as tmp:
        return ChainBuilder(tree, kernel_dir, Path(tmp) / "index").build(commits)


def foreign_commits(tree):
    """Commits on HEAD since base that these tools did not make (someone committed by hand)."""
    proc = git(tree, "log", "--format=%H %an|%s", f"{BASE_TAG}..HEAD", check=False)
    foreign = []
    for line in proc.stdout.splitlines():
        sha, _, rest = line.partition(" ")
        author, _, subject = rest.partition("|")
        if author != AUTHOR[0]:
            foreign.append(f"{sha[:12]} {subject}")
    return foreign


def apply(tree, kernel_dir=KERNEL_DIR, force=False):
    """Bring the tree to the series' final commit on branch `ktimers`. Returns the final sha."""
    tree = Path(tree)
    if not (tree / ".git").is_dir():
        raise ToolError(f"kernel tree {rel(tree)} not found", "run `make tree` first")
    commits = load_series(kernel_dir)
    if not commits:
        progress("apply", "kernel/series/ has no .commit files: the tree stays at base")
    progress("apply", f"building {len(commits)} commit(s) on {BASE_TAG} ...")
    chain = build_chain(tree, commits, kernel_dir)
    final = chain[-1][0] if chain else git(tree, "rev-parse", f"{BASE_TAG}^{{commit}}").stdout.strip()
    head = git(tree, "rev-parse", "-q", "--verify", "HEAD", check=False).stdout.strip()
    branch = git(tree, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    dirty = git(tree, "status", "--porcelain", "--untracked-files=no").stdout.rstrip()
    if head == final and branch == BRANCH:
        progress("apply", f"series up to date ({BRANCH} = {final[:12]})")
        if dirty and force:
            git(tree, "reset", "-q", "--hard", final)
            progress("apply", f"FORCE: discarded the local modifications:\n{dirty}")
        elif dirty:
            warn(f"{rel(tree)} has local modifications that are not in kernel/ (tests will include them):\n{dirty}")
        return final
    if dirty and not force:
        raise ToolError(
            f"{rel(tree)} has local modifications; applying the series would overwrite them:\n{dirty}",
            f"keep them: copy new files to kernel/ (with an `add:` line) or save edits as a patch "
            f"(`git -C {rel(tree)} diff > kernel/patches/NN-name.patch` + a `patch:` line); "
            f"drop them: `git -C {rel(tree)} reset --hard`; or rerun with FORCE=1 to discard them")
    foreign = foreign_commits(tree) if head else []
    if foreign and not force:
        raise ToolError(
            f"{rel(tree)} has commits not made from kernel/series/; applying would drop them:\n    "
            + "\n    ".join(foreign),
            f"save them with `git -C {rel(tree)} format-patch {BASE_TAG}..HEAD` and move them into "
            f"kernel/, or rerun with FORCE=1 to drop them")
    already = set(git(tree, "rev-list", f"{BASE_TAG}..HEAD", check=False).stdout.split()) if head else set()
    applied = 0
    for sha, commit in chain:
        if sha not in already:
            applied += 1
            progress("apply", f"{commit.name}: {commit.subject}")
    # `checkout -B` without a start point only renames HEAD's branch (files stay);
    # reset --hard then rewrites just the files that differ.
    git(tree, "checkout", "-q", "-B", BRANCH)
    git(tree, "reset", "-q", "--hard", final)
    progress("apply", f"{applied} commit(s) applied, {len(chain) - applied} unchanged; "
                      f"{BRANCH} = {final[:12]}")
    return final
