"""Check the exported series patch by patch, as a maintainer applying it one commit at a time would.

For each patch of `make series` (build/series/NNNN-*.patch, the commits of branch ktimers):

- checkpatch: scripts/checkpatch.pl --strict on the mail-ready patch, commit message included.
  Only FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is ignored: the MAINTAINERS
  entry is the last patch by design; instead every file the series adds must be matched by
  an F: line of the KTIMERS entry at the end;
- kernel-doc: scripts/kernel-doc -none -Wall on each .c/.h the commit adds or changes, as of
  that commit (a warning the file already had at `base` does not count), and for an .rst it
  adds, kernel-doc -rst on every `.. kernel-doc::` directive with the directive's options;
- sparse and W=1 (after the ktimers build, in its build dir): `make C=2 W=1` on the .c files the
  series has added by that commit; a line naming one of the series' files fails the patch;
- builds, in a worktree of the tree (build/series-check/linux) checked out at the commit:
  `ktimers`: i386 with the root .kunitconfig (as `make kunit` builds it) plus every bool or
  tristate option the series adds (CONFIG_KTIMER_BENCH, say), through kunit.py build;
  options the series has not introduced yet at that commit are left out, every other must
  be met. `stock`: i386 tinyconfig plus POSIX_TIMERS, so CONFIG_KTIMERS=n, the edits to
  existing files must leave the stock kernel building. Both link vmlinux and bzImage, and a
  compiler warning in a file the series touches fails the patch like an error.

Then, for the whole series: `git am` of the exported patches onto `base` (in the worktree) must
give exactly the tree of branch ktimers, and `git send-email --dry-run` must take the patches.

Every patch is checked even after one fails. Results: one line per patch, a table at the end,
build/results/series-check.json, and per-patch build logs in build/series-check/logs/.
"""

import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kunit import matrix
from series import compile_check, export as series_export, store as series, style
from common import (BUILD_DIR, REPO_ROOT, RESULTS_DIR, Heartbeat, ToolError, format_duration, progress, rel,
                    run)
from setup import ccache
from kunit.run import ccache_make_option, child_env
from common.git import git

CHECK_DIR = BUILD_DIR / "series-check"
ARCH = "i386"
BUILDS = ("ktimers", "stock")
CHECKPATCH = "scripts/checkpatch.pl"
KERNEL_DOC = "scripts/kernel-doc"
CHECKPATCH_FLAGS = style.PATCH_FLAGS
STOCK_EXTRA = "CONFIG_POSIX_TIMERS=y\n"
MAINTAINERS_SECTION = "KTIMERS"
SEND_TO = "linux-kernel@vger.kernel.org"

DOC_ISSUE_RE = re.compile(r"\b(warning|error):", re.IGNORECASE)
LINE_NO_RE = re.compile(r":\d+:")
SYMBOL_DEF_RE = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$", re.MULTILINE)
KUNIT_OPTION_RE = re.compile(r"^(?:CONFIG_(\w+)=.*|# CONFIG_(\w+) is not set)$")
DIRECTIVE_RE = re.compile(r"^\.\. kernel-doc::\s*(\S+)\s*$")
OPTION_RE = re.compile(r"^\s+:(\w+):\s*(.*)$")
BUILD_ERROR_RE = re.compile(r"\berror:|Error \d+|undefined reference|\*\*\*|No rule to make target")
WARNING_RE = re.compile(r"^(\S+?):\d+(?::\d+)?: warning:")


@dataclass
class PatchResult:
    number: int
    subject: str
    sha: str
    patch: str
    checks: dict = field(default_factory=dict)      # name -> "OK" | "FAIL" | "SKIP"
    problems: list = field(default_factory=list)    # "name: first line of the problem"
    seconds: dict = field(default_factory=dict)

    @property
    def ok(self):
        return all(status != "FAIL" for status in self.checks.values())

    def record(self, name, problems, seconds=None, skipped=False):
        self.checks[name] = "SKIP" if skipped else ("FAIL" if problems else "OK")
        self.problems += [f"{name}: {problem}" for problem in problems]
        if seconds is not None:
            self.seconds[name] = round(seconds, 1)


# ---- static checks -------------------------------------------------------------------

def checkpatch(tree, patch, runner=run):
    """checkpatch problems (lines) of one exported patch, run as style.py runs it (codespell, SPDX)."""
    return style.checkpatch(tree, CHECKPATCH_FLAGS, patch, runner)


def changed_files(tree, sha):
    """[(status, path)] the commit adds (A) or modifies (M)."""
    out = git(tree, "diff-tree", "-r", "--no-renames", "--no-commit-id", "--name-status", f"{sha}^", sha).stdout
    return [tuple(line.split("\t", 1)) for line in out.splitlines() if line]


def file_at(tree, rev, path):
    proc = git(tree, "show", f"{rev}:{path}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def doc_warnings(tree, text, name, args=("-none", "-Wall"), runner=run):
    """kernel-doc warnings for `text` (a file's content), reported under `name`, line numbers dropped."""
    with tempfile.TemporaryDirectory(prefix="ktimers-doc-") as tmp:
        path = Path(tmp) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        proc = runner(["perl", str(Path(tree) / KERNEL_DOC), *args, str(path)], check=False)
    found = []
    for line in (proc.stderr + proc.stdout).splitlines():
        if DOC_ISSUE_RE.search(line) and "Sphinx version" not in line:
            found.append(line.replace(str(path), name))
    return found


def without_line_numbers(line):
    return LINE_NO_RE.sub(":", line)


def kerneldoc_problems(tree, sha, runner=run):
    """New kernel-doc warnings in the .c/.h files commit sha adds or changes."""
    problems = []
    for status, path in changed_files(tree, sha):
        if not path.endswith((".c", ".h")):
            continue
        now = doc_warnings(tree, file_at(tree, sha, path), path, runner=runner)
        if now and status == "M":
            before = doc_warnings(tree, file_at(tree, series.BASE_TAG, path) or "", path, runner=runner)
            known = {without_line_numbers(line) for line in before}
            now = [line for line in now if without_line_numbers(line) not in known]
        problems += now
    return problems


def kernel_doc_directives(rst_text):
    """[(file, {option: value})] of the `.. kernel-doc::` directives in an .rst file."""
    directives, current = [], None
    for line in rst_text.splitlines():
        match = DIRECTIVE_RE.match(line)
        if match:
            current = (match.group(1), {})
            directives.append(current)
            continue
        option = OPTION_RE.match(line) if current else None
        if option:
            current[1][option.group(1)] = option.group(2).strip()
        elif line.strip() or current is None:
            current = None
    return directives


def directive_args(options):
    """kernel-doc arguments for a directive's options, as Documentation/sphinx/kerneldoc.py passes them."""
    args = ["-rst", "-Wall", "-enable-lineno"]
    if "export" in options:
        args.append("-export")
    elif "internal" in options:
        args.append("-internal")
    for key in ("identifiers", "functions"):
        for name in options.get(key, "").split():
            args += ["-function", name]
    for name in options.get("no-identifiers", "").split():
        args += ["-nosymbol", name]
    return args


def rst_problems(tree, sha, runner=run):
    """kernel-doc -rst warnings for each directive of the .rst files the commit adds or changes,
    and an added .rst that no index.rst in its directory names (Sphinx: not in any toctree)."""
    problems = []
    for status, path in changed_files(tree, sha):
        if not path.endswith(".rst") or path.endswith("index.rst"):
            continue
        text = file_at(tree, sha, path)
        for source, options in kernel_doc_directives(text):
            content = file_at(tree, sha, source)
            if content is None:
                problems.append(f"{path}: kernel-doc:: {source}: no such file at this commit")
                continue
            output = doc_warnings(tree, content, source, directive_args(options), runner=runner)
            problems += [f"{path}: {line}" for line in output]
        if status == "A":
            index = file_at(tree, sha, str(Path(path).parent / "index.rst")) or ""
            if Path(path).stem not in index.split():
                problems.append(f"{path}: not listed in {Path(path).parent / 'index.rst'} (no toctree has it)")
    return problems


def maintainers_problems(tree, base, head):
    """Files the series adds that no F: line of the KTIMERS entry matches, at head."""
    text = file_at(tree, head, "MAINTAINERS") or ""
    patterns, inside = [], False
    for line in text.splitlines():
        if line == MAINTAINERS_SECTION:
            inside = True
            continue
        if inside and not line.strip():
            break
        if inside and line.startswith("F:"):
            patterns.append(line[2:].strip())
    if not patterns:
        return [f"MAINTAINERS has no {MAINTAINERS_SECTION} entry with F: lines"]
    added = git(tree, "diff", "--name-only", "--diff-filter=A", base, head).stdout.split()
    missing = []
    for path in added:
        if path == "MAINTAINERS":
            continue
        if not any(pattern_matches(pattern, path) for pattern in patterns):
            missing.append(f"{path} is in no F: line of the {MAINTAINERS_SECTION} entry")
    return missing


def pattern_matches(pattern, path):
    """get_maintainer.pl's F: semantics: `dir/` covers everything below dir, `*` and `?` stay within
    one path component."""
    if pattern.endswith("/"):
        return path.startswith(pattern)
    regex = "".join("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in pattern)
    return re.fullmatch(regex, path) is not None


# ---- builds --------------------------------------------------------------------------

def kconfig_symbols(tree, sha):
    """Every config symbol defined in a Kconfig file at commit sha."""
    proc = git(tree, "grep", "-h", "-E", r"^\s*(menu)?config\s+\w+\s*$", sha, "--", "*Kconfig*",
               check=False)
    return set(SYMBOL_DEF_RE.findall(proc.stdout))


def series_options(tree, base, head):
    """The bool/tristate options the series adds to Kconfig files, in order."""
    diff = git(tree, "diff", "--no-color", "-U0", base, head, "--", "*Kconfig*").stdout
    options, current = [], None
    for line in diff.splitlines():
        match = re.match(r"^\+\s*(?:menu)?config\s+(\w+)\s*$", line)
        if match:
            current = match.group(1)
        elif current and re.match(r"^\+\s*(bool|tristate)\b", line):
            options.append(current)
            current = None
        elif not line.startswith("+"):
            current = None
    return list(dict.fromkeys(options))


def with_series_options(text, options):
    """The kunitconfig plus `CONFIG_X=y` for each series option it does not set already."""
    present = {match.group(1) or match.group(2) for match in map(KUNIT_OPTION_RE.match, text.splitlines())
               if match}
    extra = [f"CONFIG_{option}=y" for option in options if option not in present]
    if not extra:
        return text
    return text + "# every option the series adds is on (series-check)\n" + "\n".join(extra) + "\n"


def filter_kunitconfig(text, symbols):
    """(kept text, [left-out symbols]): drop `CONFIG_X=` lines whose symbol does not exist yet."""
    kept, dropped = [], []
    for line in text.splitlines():
        match = KUNIT_OPTION_RE.match(line.strip())
        symbol = match and (match.group(1) or match.group(2))
        if symbol and symbol not in symbols:
            dropped.append(symbol)
            kept.append(f"# left out: CONFIG_{symbol} does not exist at this commit")
        else:
            kept.append(line)
    return "\n".join(kept) + "\n", dropped


def touched_paths(tree, base, head):
    return set(git(tree, "diff", "--name-only", base, head).stdout.split())


def first_problem(lines, touched):
    """(errors, warnings): the first build error (with a few lines of context) and the first compiler
    warning in a file the series touches."""
    errors = []
    for index, line in enumerate(lines):
        if BUILD_ERROR_RE.search(line):
            errors = [" | ".join(lines[max(0, index - 1):index + 2])]
            break
    warnings = []
    for line in lines:
        match = WARNING_RE.match(line)
        if match and any(match.group(1).endswith(path) for path in touched):
            warnings.append(line)
            break
    return errors, warnings


class Builder:
    """Checks out commits in a worktree of the tree and builds them incrementally."""

    def __init__(self, tree, check_dir=CHECK_DIR, jobs=None, use_ccache=True, repo=REPO_ROOT):
        self.tree = Path(tree)
        self.check_dir = Path(check_dir)
        self.worktree = self.check_dir / "linux"
        self.logs = self.check_dir / "logs"
        self.jobs = jobs or os.cpu_count() or 1
        self.repo = Path(repo)
        self.make_cc = ccache_make_option(_arch()) if use_ccache else None
        self.touched = set()        # paths the series changes: their compiler warnings count
        self.left_out = []          # kunitconfig options the last ktimers build left out
        self.series_options = []    # options the series adds: all on in the ktimers build

    def prepare(self):
        """A worktree of the tree at build/series-check/linux (made once, reused)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        if (self.worktree / ".git").exists():
            ok = git(self.worktree, "rev-parse", "--git-dir", check=False).returncode == 0
            if ok:
                return
            git(self.tree, "worktree", "prune")
            run(["rm", "-rf", str(self.worktree)])
        progress("series-check", f"creating the worktree {rel(self.worktree)} (once)")
        git(self.tree, "worktree", "prune")
        git(self.tree, "worktree", "add", "--detach", "-q", str(self.worktree), f"{series.BASE_TAG}^{{commit}}")

    def checkout(self, sha):
        git(self.worktree, "checkout", "-q", "--force", "--detach", sha)

    def build(self, name, number, sha):
        """(problems, seconds) for build `name` of the checked-out commit."""
        log = self.logs / f"{number:02d}-{ARCH}-{name}.log"
        start = time.monotonic()
        steps = self.ktimers_steps(sha) if name == "ktimers" else self.stock_steps()
        lines, failed = [], False
        with Heartbeat("series-check", f"building {ARCH}-{name} for patch {number}", interval=60):
            for step in steps:
                if callable(step):
                    problem = step()
                    if problem:
                        lines += [f"error: {problem}", "exit 1"]
                        failed = True
                        break
                    continue
                proc = subprocess.run(step, cwd=self.worktree, env=ccache.environment(child_env()), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, errors="replace")
                lines += [f"$ {' '.join(step)}", *proc.stdout.splitlines()]
                if proc.returncode != 0:
                    lines.append(f"exit {proc.returncode}")
                    failed = True
                    break
        log.write_text("\n".join(lines) + "\n")
        seconds = time.monotonic() - start
        errors, warnings = first_problem(lines, self.touched)
        problems = errors if failed else []
        if failed and not problems:
            problems = [f"{lines[-1]} without a compiler error"]
        problems += [f"warning: {line}" for line in warnings]
        if problems:
            problems[-1] += f" (log: {rel(log)})"
        return problems, seconds

    def sparse(self, number, sha):
        """(problems, seconds): sparse and W=1 on the .c files the series has added by this commit,
        in the ktimers build dir (configured by that build)."""
        build_dir = self.check_dir / f"{ARCH}-ktimers"
        added = series.added_paths(self.tree, series.BASE_TAG, sha)
        # a KUnit suite built inside the file it tests (fs/timerfd_test.c) is checked as that object
        targets = compile_check.objects(added, self.worktree)
        start = time.monotonic()
        if not targets:
            return [], 0.0
        if not (build_dir / ".config").is_file():
            return [f"needs the {ARCH}-ktimers build first"], 0.0
        command = compile_check.make_command(_arch(), build_dir, targets, self.jobs)
        proc = subprocess.run(command, cwd=self.worktree, env=child_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
        log = self.logs / f"{number:02d}-{ARCH}-sparse.log"
        log.write_text(f"$ {' '.join(command)}\n{proc.stdout}")
        problems = compile_check.ours(proc.stdout, added)
        if proc.returncode and not problems:
            problems = [f"make exited {proc.returncode}"]
        if problems:
            problems[-1] += f" (log: {rel(log)})"
        return problems, time.monotonic() - start

    def am_reproduces(self, patches, head):
        """Problems of `git am` of the exported patches onto base in the worktree: it must apply and
        give exactly head's tree."""
        git(self.worktree, "checkout", "-q", "--force", "--detach", series.BASE_TAG)
        try:
            series.git_am(self.worktree, patches)   # as `make apply` runs it
        except ToolError as error:
            return [f"git am onto {series.BASE_TAG} failed: {str(error)[:300]}"]
        made = git(self.worktree, "rev-parse", "HEAD^{tree}").stdout.strip()
        wanted = git(self.tree, "rev-parse", f"{head}^{{tree}}").stdout.strip()
        if made != wanted:
            return [f"git am onto {series.BASE_TAG} gives tree {made[:12]}, branch {series.BRANCH} has {wanted[:12]}"]
        return []

    def ktimers_steps(self, sha):
        """kunit.py build with the default kunitconfig, less the options not in the tree yet."""
        build_dir = self.check_dir / f"{ARCH}-ktimers"
        build_dir.mkdir(parents=True, exist_ok=True)
        default = matrix.load(self.repo / "kunit_configs" / "matrix").get("default")
        text, _ = matrix.effective_kunitconfig(default, ARCH, self.repo)
        text = with_series_options(text, self.series_options)
        text, self.left_out = filter_kunitconfig(text, kconfig_symbols(self.tree, sha))
        kunitconfig = build_dir / "series-check.kunitconfig"
        if not kunitconfig.is_file() or kunitconfig.read_text() != text:
            kunitconfig.write_text(text)
        command = ["python3", "tools/testing/kunit/kunit.py", "build", f"--arch={ARCH}",
                   f"--build_dir={build_dir}", f"--kunitconfig={kunitconfig}", f"--jobs={self.jobs}"]
        if self.make_cc:
            command.append(f"--make_options={self.make_cc}")
        return [command]

    def stock_steps(self):
        """tinyconfig + POSIX_TIMERS (made once), olddefconfig, check KTIMERS is off, make."""
        build_dir = self.check_dir / f"{ARCH}-stock"
        build_dir.mkdir(parents=True, exist_ok=True)
        config = build_dir / ".config"
        make = ["make", f"O={build_dir}", f"ARCH={ARCH}", "-s"]
        steps = []

        def add_posix_timers():
            config.write_text(config.read_text() + STOCK_EXTRA)

        def ktimers_off():
            if "\nCONFIG_KTIMERS=y" in config.read_text():
                return "CONFIG_KTIMERS=y in the stock configuration"
            return None

        if not config.is_file() or STOCK_EXTRA not in config.read_text():
            steps += [[*make, "tinyconfig"], add_posix_timers]
        steps += [[*make, "olddefconfig"], ktimers_off]
        steps.append([*make, f"-j{self.jobs}"] + ([self.make_cc] if self.make_cc else []))
        return steps


def _arch():
    from common.arches import get_arch
    return get_arch(ARCH)


# ---- the whole check -------------------------------------------------------------------

def send_email_problems(tree, files, runner=run):
    """`git send-email --dry-run` must take every file (cover letter included); nothing is sent."""
    sender = series_export.user_identity(tree)
    proc = runner(["git", "send-email", "--dry-run", "--confirm=never", "--quiet", "--suppress-cc=all",
                   f"--from={sender}", f"--to={SEND_TO}", *map(str, files)], cwd=str(tree), check=False)
    sent = [line for line in proc.stdout.splitlines() if line.startswith("Dry-Sent")]
    if proc.returncode == 0 and len(sent) == len(files):
        return []
    tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])
    return [f"git send-email --dry-run took {len(sent)} of {len(files)} patches (exit {proc.returncode}): {tail}; "
            "is git-email (and libmailtools-perl) installed? `make deps`"]


def commits(tree, base, head):
    """[(sha, subject)] of base..head, oldest first."""
    out = git(tree, "log", "--reverse", "--format=%H %s", f"{base}..{head}").stdout
    return [tuple(line.split(" ", 1)) for line in out.splitlines()]


def check(tree, builds=BUILDS, first=1, last=None, out_dir=series_export.SERIES_OUT, check_dir=CHECK_DIR,
          jobs=None, use_ccache=True, results_dir=RESULTS_DIR, builder=None, runner=run,
          kernel_dir=series.KERNEL_DIR):
    """Export, then check each patch, then the whole series; returns (results, series problems)."""
    tree = Path(tree)
    start = time.monotonic()
    base, head, _ = series_export.applied_head(tree, kernel_dir)
    if not (tree / CHECKPATCH).is_file():
        raise ToolError(f"{rel(tree / CHECKPATCH)} not found", "run `make tree` first")
    files = series_export.export(tree, out_dir, kernel_dir)
    patches, chain = files[1:], commits(tree, base, head)
    last = last or len(chain)
    if not 1 <= first <= last <= len(chain):
        raise ToolError(f"patch range {first}-{last} is outside 1-{len(chain)}")
    builder = builder or Builder(tree, check_dir, jobs, use_ccache)
    builder.prepare()
    if builds:
        builder.touched = touched_paths(tree, base, head)
        builder.series_options = series_options(tree, base, head)
    progress("series-check", f"patches {first}-{last} of {len(chain)}: checkpatch --strict --codespell, kernel-doc"
                             + (f", builds {', '.join(f'{ARCH}-{b}' for b in builds)}" if builds else
                                " (no builds)"))
    results = []
    for number, ((sha, subject), patch) in enumerate(zip(chain, patches), 1):
        if not first <= number <= last:
            continue
        result = PatchResult(number, subject, sha, rel(patch))
        result.record("checkpatch", checkpatch(tree, patch, runner))
        result.record("kernel-doc", kerneldoc_problems(tree, sha, runner) + rst_problems(tree, sha, runner))
        if builds:
            builder.checkout(sha)
            for name in builds:
                problems, seconds = builder.build(name, number, sha)
                result.record(f"{ARCH}-{name}", problems, seconds)
                if name == "ktimers":
                    problems, seconds = builder.sparse(number, sha)
                    result.record("sparse+W=1", problems, seconds)
        left_out = getattr(builder, "left_out", None) if builds else None
        report_patch(result, len(chain), left_out)
        results.append(result)
    whole = []
    if last == len(chain):
        whole += maintainers_problems(tree, base, head)
        whole += builder.am_reproduces(patches, head)
        whole += send_email_problems(tree, files, runner)
    for problem in whole:
        progress("series-check", f"series: {problem}")
    elapsed = time.monotonic() - start
    write_results(results, whole, elapsed, results_dir)
    print_table(results, whole, elapsed)
    return results, whole


def report_patch(result, total, left_out=None):
    checks = ", ".join(f"{name} {status}" + (f" {format_duration(result.seconds[name])}"
                                             if name in result.seconds else "")
                       for name, status in result.checks.items())
    progress("series-check", f"{result.number:02d}/{total:02d} {'OK  ' if result.ok else 'FAIL'} "
                             f"{result.subject}: {checks}")
    if left_out:
        progress("series-check", f"      not in the tree yet, left out of the kunitconfig: "
                                 f"{' '.join('CONFIG_' + s for s in left_out)}")
    for problem in result.problems:
        print(f"      {problem}", flush=True)


def print_table(results, whole, elapsed):
    names = list(dict.fromkeys(name for result in results for name in result.checks))
    print("\nseries-check:", flush=True)
    print("  #   " + "  ".join(f"{name:<12}" for name in names) + "  subject")
    for result in results:
        cells = "  ".join(f"{result.checks.get(name, '-'):<12}" for name in names)
        print(f"  {result.number:02d}  {cells}  {result.subject}")
    bad = [result for result in results if not result.ok]
    print("  series (MAINTAINERS covers every added file, git am reproduces the branch, git send-email "
          f"--dry-run): {'OK' if not whole else f'{len(whole)} problem(s)'}")
    print(f"{len(results) - len(bad)} of {len(results)} patches OK, {len(bad)} failed "
          f"({format_duration(elapsed)})", flush=True)


def write_results(results, whole, elapsed, results_dir=RESULTS_DIR):
    document = {
        "patches": [{"number": r.number, "subject": r.subject, "sha": r.sha, "patch": r.patch, "ok": r.ok,
                     "checks": r.checks, "seconds": r.seconds, "problems": r.problems} for r in results],
        "series": whole, "duration_s": round(elapsed, 1),
        "status": "PASS" if all(r.ok for r in results) and not whole else "FAIL"}
    path = Path(results_dir) / "series-check.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1) + "\n")
    return document
