"""Run the KUnit suites for one arch and one configuration with the kernel's kunit.py under QEMU.

A configuration (kunit_configs/matrix, see kunit/matrix.py) gives the kunitconfig
fragments, extra kernel arguments and the QEMU -smp count. We merge the
kunitconfig ourselves into <build dir>/.kunitconfig and pass kunit.py that one
file. kunit.py builds the kernel and boots it (`run`); when the same build dir
was already built in this invocation, `exec` only boots it. We run it with
--raw_output=all and split its output: build messages are passed through, the
kernel console goes to build/results/<arch>-<config>/console.log while a
compact progress line is printed per finished suite. The console is then
parsed (kunit/ktap.py) and scanned (kunit/logscan.py), and everything lands in
results.json for results/summary.py. The tree's own kunit.py parser parses the
same console (kunit/crosscheck.py): its result tree is printed and kept in
kunit-parser.txt, and any test on which it and ktap.py disagree fails the run.
"""

import datetime
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from setup import ccache
from kunit import crosscheck, ktap, logscan, matrix
from common import steps
from common.arches import get_arch
from common.git import git
from common import KTIMER_WATCHDOG_ARG, KUNIT_BUILD_DIR, REPO_ROOT, RESULTS_DIR, ToolError, format_duration, progress, rel
from setup.tree import kernel_version_in

KUNIT_PY = "tools/testing/kunit/kunit.py"
DEFAULT_TIMEOUT = 1200
HEARTBEAT_SECONDS = 60
BUILD_EXCERPT_LINES = 40
REFERENCE_FILE = "kunit-parser.txt"      # kunit.py's result tree of the console (kunit/crosscheck.py)
# Environment that would leak from our make into kunit.py's kernel make and change it.
MAKE_ENV_LEAKS = ("MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKELEVEL", "GNUMAKEFLAGS",
                  "ARCH", "CROSS_COMPILE", "KBUILD_OUTPUT", "CC", "LLVM", "O")

STAGE_RE = re.compile(r"^\[\d\d:\d\d:\d\d\] (.*)$")
ELAPSED_RE = re.compile(r"^\[\d\d:\d\d:\d\d\] Elapsed time:")
TIMEOUT_RE = re.compile(r"timed out after (\d+) seconds")
QEMU_MESSAGE_RE = re.compile(r"^qemu-system-\w+: ")
KERNEL_VERSION_RE = re.compile(r"Linux version (\S+)")
CONFIG_MISMATCH = "Not all Kconfig options selected in kunitconfig were in the generated .config"
BUILD_ERROR_RE = re.compile(r"error:|Error \d+|undefined reference|\*\*\*|No rule to make target")
SUITE_DEF_RE = re.compile(r"(?:static\s+)?struct\s+kunit_suite\s+\w+\s*=\s*\{")
SUITE_NAME_RE = re.compile(r"\.name\s*=\s*\"([^\"]+)\"")
COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


# ---- inputs -----------------------------------------------------------------

def configuration_for(config, repo=REPO_ROOT):
    """A matrix.Configuration, given one or its name (looked up in <repo>/kunit_configs/matrix)."""
    if isinstance(config, matrix.Configuration):
        return config
    return matrix.load(Path(repo) / "kunit_configs" / "matrix").get(config)


def expected_suites(kernel_dir=REPO_ROOT / "kernel"):
    """Names of every `struct kunit_suite` defined in kernel/**/*.c: each must report results."""
    names = set()
    for source in sorted(Path(kernel_dir).rglob("*.c")):
        text = COMMENT_RE.sub("", source.read_text(errors="replace"))
        for match in SUITE_DEF_RE.finditer(text):
            body = brace_block(text, match.end() - 1)
            depth0 = top_level_text(body)
            name = SUITE_NAME_RE.search(depth0)
            if name:
                names.add(name.group(1))
    return sorted(names)


def brace_block(text, open_index):
    """Text between the brace at open_index and its matching close brace."""
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[open_index + 1:index]
    return text[open_index + 1:]


def top_level_text(body):
    """Drop nested { ... } so `.name` of a nested initializer is not taken for the suite's."""
    out, depth = [], 0
    for char in body:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def ccache_make_option(arch):
    """CC="ccache <prefix>gcc": kbuild supports a multi-word CC, and it works for cross gcc too."""
    if not ccache.available():
        return None
    return f"CC=ccache {arch.gcc}"


def kunit_command(arch, build_dir, kunitconfigs, jobs, timeout, use_ccache=True, python=None,
                  smp=matrix.DEFAULT_SMP, kernel_args=(), boot_only=False, filter_glob=""):
    """kunit.py `run` (configure, build, boot), or `exec` (boot only) when boot_only; filter_glob: only
    the suites it matches run (kunit.py passes it to the kernel as kunit.filter_glob=)."""
    arch = get_arch(arch) if isinstance(arch, str) else arch
    cmd = [python or sys.executable, KUNIT_PY, "exec" if boot_only else "run", f"--arch={arch.name}"]
    if arch.cross_compile:
        cmd.append(f"--cross_compile={arch.cross_compile}")
    cmd.append(f"--build_dir={build_dir}")
    cmd += [f"--kunitconfig={path}" for path in kunitconfigs]
    if arch.qemu:
        cmd.append(f"--qemu_args={' '.join(filter(None, (arch.qemu_args, f'-smp {smp}')))}")
    if not boot_only:
        cmd.append(f"--jobs={jobs}")
    cmd += [f"--timeout={timeout}", "--raw_output=all",
            # Reboot right after a panic: with -no-reboot QEMU then exits instead of
            # sitting out the whole timeout.
            "--kernel_args=panic=-1", f"--kernel_args={KTIMER_WATCHDOG_ARG}"]
    cmd += [f"--kernel_args={arg}" for arg in (*arch.kernel_args, *kernel_args)]
    make_option = ccache_make_option(arch) if use_ccache and not boot_only else None
    if make_option:
        cmd.append(f"--make_options={make_option}")
    if filter_glob:
        cmd.append(filter_glob)
    return cmd


def child_env(environ=None):
    env = dict(os.environ if environ is None else environ)
    for name in MAKE_ENV_LEAKS:
        env.pop(name, None)
    env["PYTHONUNBUFFERED"] = "1"  # see kunit.py's stage messages as they happen
    return env


# ---- output handling ------------------------------------------------------------

@dataclass
class Stream:
    """Splits kunit.py's merged output into build output and the kernel console."""
    phase: str = "build"            # build -> console -> after
    stage: str = None               # configure / build / boot: how far kunit.py got
    build_lines: list = field(default_factory=list)
    console_lines: list = field(default_factory=list)
    qemu_messages: list = field(default_factory=list)
    timeout: int = None
    kernel_version: str = None
    build_seconds: float = None
    _expect_command: bool = False

    def feed(self, line):
        """Classify one line; returns ('stage', msg), ('console', line), ('other', line)."""
        line = line.rstrip("\n")
        match = TIMEOUT_RE.search(line)
        if match and line.startswith("Command "):
            self.timeout = int(match.group(1))
            return "event", line
        if self.phase == "build":
            self.build_lines.append(line)
            if self._expect_command and line.startswith("$ "):
                self.phase = "console"
                return "stage", "booting: " + line[2:]
            if line == "Running tests with:":
                self._expect_command = True
                return "other", line
            stage = STAGE_RE.match(line)
            if stage:
                if "Configuring KUnit Kernel" in line:
                    self.stage = "configure"
                elif "Building KUnit Kernel" in line:
                    self.stage = "build"
                elif "Starting KUnit Kernel" in line:
                    self.stage = "boot"
                return "stage", stage.group(1)
            return "other", line
        if self.phase == "console":
            if ELAPSED_RE.match(line):
                self.phase = "after"
                return "stage", STAGE_RE.match(line).group(1)
            self.console_lines.append(line)
            if QEMU_MESSAGE_RE.match(line):
                self.qemu_messages.append(line)
            if self.kernel_version is None:
                version = KERNEL_VERSION_RE.search(line)
                if version:
                    self.kernel_version = version.group(1)
            return "console", line
        return "other", line


def suite_progress(suite):
    """'ktimer_modes: 24/24 ok' style summary of one finished suite."""
    cases = suite.children
    if not cases:
        return f"{suite.name}: {suite.status} (no test cases reported; see the console log)"
    counts = {status: sum(1 for case in cases if case.status == status) for status in ktap.STATUSES}
    text = f"{suite.name}: {counts['PASS']}/{len(cases)} ok"
    if counts["SKIP"]:
        text += f", {counts['SKIP']} skipped"
    bad = [case.name for case in cases if case.status in (ktap.FAIL, ktap.ERROR)]
    if bad:
        text += f", {len(bad)} FAILED ({', '.join(bad[:5])}{', ...' if len(bad) > 5 else ''})"
    if counts["MISS"]:
        text += f", {counts['MISS']} never reported"
    if suite.status == ktap.ERROR:
        text += " -- suite did not finish"
    return text


def build_excerpt(lines, limit=BUILD_EXCERPT_LINES):
    """The most useful ~40 lines of a failed build: from the first error on, else the tail."""
    first = next((i for i, line in enumerate(lines) if BUILD_ERROR_RE.search(line)), None)
    if first is None:
        return lines[-limit:]
    start = max(0, first - 3)
    return lines[start:start + limit]


# ---- results ---------------------------------------------------------------

def decide(stream, returncode, parsed, findings, missing, reference=None):
    """(status, problems): the run's verdict and what the user should know about it.
    reference: the kunit.py parser's check of the console (CrossCheck.to_dict()), if any."""
    problems = []
    if stream.phase == "build":
        if returncode == 0:
            return "INFRA_ERROR", ["kunit.py ended before booting the kernel without an error code"]
        if stream.stage is None:
            return "INFRA_ERROR", [f"kunit.py failed (exit {returncode}) before configuring or starting "
                                   "the kernel (see build.log)"]
        if stream.stage == "boot":
            return "INFRA_ERROR", [f"kunit.py failed (exit {returncode}) starting the kernel, before QEMU "
                                   "ran (see build.log)"]
        if any(CONFIG_MISMATCH in line for line in stream.build_lines) or stream.stage == "configure":
            return "CONFIG_ERROR", ["the kernel configuration failed: an option in the kunitconfig is "
                                    "missing or has unmet dependencies on this arch (see build.log)"]
        return "BUILD_ERROR", ["the kernel build failed (see the excerpt above or build.log)"]
    status = "PASS"
    if returncode not in (0, None):
        problems.append(f"kunit.py exited with status {returncode} after starting QEMU")
        if any("No such file or directory" in line and "qemu-system" in line for line in stream.console_lines):
            problems.append("QEMU is not installed for this arch: run `make deps` (as root)")
        status = "INFRA_ERROR"
    if stream.qemu_messages and not stream.timeout:
        problems += [f"QEMU: {message}" for message in stream.qemu_messages]
    if stream.timeout:
        problems.append(f"timed out after {stream.timeout}s: the kernel hung or the tests are too slow "
                        "(raise TIMEOUT=... if they are just slow)")
        status = "TIMEOUT"
    panics = [f for f in findings if f.kind == "panic"]
    if panics:
        problems.append(f"kernel panic at console line {panics[0].line}: {panics[0].text}")
        status = "CRASH" if status == "PASS" else status
    if not parsed.started:
        problems.append("the kernel printed no KTAP output: it did not boot far enough to run tests, "
                        "or KUnit is not enabled in the kunitconfig")
        status = "NO_TESTS" if status == "PASS" else status
    elif not parsed.complete:
        problems += parsed.errors
        if status == "PASS" and not panics:
            problems.append("QEMU or the kernel stopped before all suites reported, without a panic "
                            "message: look at the end of the console log")
        status = "CRASH" if status == "PASS" else status
    if missing:
        problems.append(f"suite(s) defined in kernel/ but absent from the results: {', '.join(missing)}")
    problems += crosscheck.problems(reference)
    counts = parsed.case_counts()
    if status == "PASS" and (counts["FAIL"] or counts["ERROR"] or counts["MISS"] or missing or findings
                             or crosscheck.failed(reference)):
        status = "FAIL"
    if findings:
        problems.append(f"{len(findings)} problem(s) in the kernel log (WARNING/BUG/lockdep/...)")
    return status, problems


def results_document(*, arch, config, stream, returncode, parsed, scan, missing, expected,
                     start, end, build_seconds, command, result_dir, series_hash=None, tree_head=None,
                     tree=None, configuration=None, kunitconfig=None, boot_only=False, kind="kunit",
                     base_commit=None, series_patches=(), reference=None):
    status, problems = decide(stream, returncode, parsed, scan.findings, missing, reference)
    suites = [suite.to_dict() for suite in parsed.suites]
    suites += [{"name": name, "number": None, "status": ktap.MISS, "line": None, "log": [],
                "errors": ["defined in kernel/ but never reported"]} for name in missing]
    counts = parsed.case_counts()
    counts["MISS"] += len(missing)
    counts["total"] = sum(counts[s] for s in ktap.STATUSES)
    kernel_version = stream.kernel_version
    if kernel_version is None and tree is not None:
        try:
            kernel_version = kernel_version_in(tree)
        except OSError:
            kernel_version = None
    return {
        "schema": 1,
        "kind": kind,                             # kunit, or bench (ktimers.py bench: not in make report)
        "arch": arch,
        "config": config,
        "configuration": configuration.to_dict() if configuration else None,
        "mode": "exec" if boot_only else "run",   # exec: booted a kernel built earlier in this invocation
        "built": stream.phase != "build",         # a kernel image was there to boot
        "kunitconfig": kunitconfig,
        "status": status,
        "problems": problems,
        "kernel_version": kernel_version,
        "series_hash": series_hash,             # sha256 over the patches' sha256s (KCIDB patchset_hash)
        "tree_head": tree_head,                 # head of branch ktimers: the series applied
        "base_commit": base_commit,             # the tree's `base` commit the series applies to
        "series_patches": list(series_patches),  # kernel/patches/*.patch, in order (KCIDB patchset_files)
        "start_time": datetime.datetime.fromtimestamp(start, datetime.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": round(end - start, 1),
        "build_duration_s": None if build_seconds is None else round(build_seconds, 1),
        "counts": counts,
        "expected_suites": expected,
        "missing_suites": missing,
        "suites": suites,
        "findings": [finding.to_dict() for finding in scan.findings],
        "expected_warnings": [finding.to_dict() for finding in scan.expected],
        "ktap_errors": parsed.errors,
        "kunit_parser": reference,                # kunit.py's parser on the same console (kunit/crosscheck.py)
        "kunitpy_exit": returncode,
        "command": command,
        "console_log": rel(result_dir / "console.log"),
        "build_log": rel(result_dir / "build.log"),
    }


# ---- the run -------------------------------------------------------------------

def _reader(pipe, lines):
    for line in pipe:
        lines.put(line)
    lines.put(None)


class LiveOutput:
    """Consumes kunit.py's output as it comes: files, progress lines, heartbeat."""

    def __init__(self, arch, timeout, console, build_log, on_console=None):
        self.arch, self.timeout = arch, timeout
        self.console, self.build_log = console, build_log
        self.on_console = on_console     # called with each console line as it arrives
        self.stream = Stream()
        self.parser = ktap.Parser(on_suite_done=lambda suite: progress("kunit", suite_progress(suite), arch))
        self.start = time.time()
        self.build_end = None

    def heartbeat(self):
        elapsed = format_duration(time.time() - self.start)
        if self.stream.phase == "build":
            doing = "configuring" if self.stream.stage == "configure" else "building"
            progress("build", f"still {doing} ({elapsed} elapsed)", self.arch)
        else:
            progress("kunit", f"kernel running, {len(self.parser.run.suites)} suite(s) done "
                              f"({elapsed} elapsed, timeout {self.timeout}s)", self.arch)

    def line(self, line):
        kind, text = self.stream.feed(line)
        if kind == "console":
            self.console.write(text + "\n")
            if self.on_console:
                self.on_console(text)
            planned_before = self.parser.run.planned
            self.parser.feed(text)
            if planned_before is None and self.parser.run.planned is not None:
                progress("kunit", f"KTAP started: {self.parser.run.planned} suite(s) planned", self.arch)
            return
        if self.stream.phase == "build" or kind == "stage":
            self.build_log.write(text + "\n")
        if kind == "stage" and self.stream.phase == "console" and self.build_end is None:
            self.build_end = time.time()
            progress("boot", f"{text} (timeout {self.timeout}s)", self.arch)
        elif kind == "stage":
            progress("build" if self.stream.phase == "build" else "kunit", text, self.arch)
        elif kind == "event":
            progress("kunit", f"TIMEOUT: {text}", self.arch)

    def pump(self, proc):
        """Read until kunit.py closes its output; returns its exit status."""
        lines = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=HEARTBEAT_SECONDS)
            except queue.Empty:
                self.heartbeat()
                continue
            if line is None:
                return proc.wait()
            self.line(line)


def run_suites(tree, arch_name, config="default", timeout=DEFAULT_TIMEOUT, jobs=None, use_ccache=True,
               expect="auto", results_root=RESULTS_DIR, kunit_build_root=KUNIT_BUILD_DIR, repo=REPO_ROOT,
               boot_only=False, kind="kunit", on_console=None):
    """Run one arch/configuration; returns the results document (also written to results.json).

    config: a matrix.Configuration or its name. boot_only: the build dir already holds the
    kernel for this configuration's fragments (built earlier in this invocation): only boot it.
    expect "auto": every suite of kernel/ the configuration's `suites` glob matches must report.
    kind: what the run is for, recorded with it ("kunit"; "bench" for `ktimers.py bench`, which
    make report leaves out). on_console: called with each console line as it arrives."""
    tree = Path(tree)
    arch = get_arch(arch_name)
    repo = Path(repo)
    configuration = configuration_for(config, repo)
    label = configuration.results_name(arch.name)   # <arch>-<config>: progress lines and results dir
    result_dir = Path(results_root) / label
    # Whatever happens next, summary must not pick up results of an earlier run.
    (result_dir / "results.json").unlink(missing_ok=True)
    if not (tree / KUNIT_PY).is_file():
        raise ToolError(f"{rel(tree)} is not a prepared kernel tree ({KUNIT_PY} missing)",
                        "run `make tree apply` first")
    build_dir = Path(kunit_build_root) / configuration.build_dir_name(arch.name)
    kunitconfig = build_dir / ".kunitconfig"
    sources = matrix.kunitconfig_sources(configuration, arch.name, repo)
    result_dir.mkdir(parents=True, exist_ok=True)
    build_dir.mkdir(parents=True, exist_ok=True)  # kunit.py only creates the last component
    matrix.write_effective_kunitconfig(configuration, arch.name, kunitconfig, repo)
    expected = [suite for suite in expected_suites(repo / "kernel") if configuration.runs_suite(suite)] \
        if expect == "auto" else ([] if expect == "none" else sorted(s for s in expect.split(",") if s))
    command = kunit_command(arch, build_dir, [kunitconfig], jobs or os.cpu_count() or 1, timeout, use_ccache,
                            smp=configuration.smp, kernel_args=configuration.kernel_args, boot_only=boot_only,
                            filter_glob=configuration.suites)
    progress("kunit", f"config {configuration.name}: {' + '.join(rel(p) for p in sources)}"
                      f" -> {rel(kunitconfig)}"
                      + (f"; kernel args {' '.join(configuration.kernel_args)}" if configuration.kernel_args else "")
                      + (f"; -smp {configuration.smp}" if arch.qemu else "")
                      + (f"; suites {configuration.suites}" if configuration.suites else ""), label)
    if boot_only:
        progress("kunit", f"boot only: reusing the kernel built in {rel(build_dir)} earlier in this run", label)
    progress("kunit", "$ " + shlex.join(command[1:]), label)

    env, stats_log = child_env(), None
    if use_ccache and not boot_only and ccache.available():
        stats_log = ccache.fresh_stats_log(build_dir)
        env = ccache.environment(env, stats_log)
    try:
        proc = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
    except OSError as error:
        raise ToolError(f"cannot start kunit.py: {error}", "check that python3 is installed (make deps)")
    with open(result_dir / "console.log", "w") as console, open(result_dir / "build.log", "w") as build_log:
        live = LiveOutput(label, timeout, console, build_log, on_console)
        try:
            returncode = live.pump(proc)
        except KeyboardInterrupt:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            progress("kunit", f"interrupted; partial console output is in {rel(result_dir / 'console.log')}",
                     label)
            raise
    end = time.time()

    stream = live.stream
    parsed = live.parser.finish()
    scan = logscan.scan_detailed(stream.console_lines)
    found = {suite.name for suite in parsed.suites}
    missing = [suite for suite in expected if suite not in found]
    reference = cross_check(tree, stream, parsed, result_dir)
    series_hash, series_patches = safe_series(repo / "kernel")
    document = results_document(
        arch=arch.name, config=configuration.name, stream=stream, returncode=returncode, parsed=parsed, scan=scan,
        missing=missing, expected=expected, start=live.start, end=end,
        build_seconds=(live.build_end - live.start) if live.build_end and not boot_only else None, command=command,
        result_dir=result_dir, series_hash=series_hash, tree_head=tree_head(tree), base_commit=base_commit(tree),
        series_patches=series_patches, tree=tree, configuration=configuration, kunitconfig=rel(kunitconfig),
        boot_only=boot_only, kind=kind, reference=reference.to_dict() if reference else None)
    hit_rate = ccache.read_stats_log(stats_log) if stats_log else None
    document["ccache"] = hit_rate.to_dict() if hit_rate else None
    if hit_rate:
        progress("build", f"ccache hits: {hit_rate}", label)
    record_steps(label, document, hit_rate)
    (result_dir / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    report(label, document, stream, result_dir, reference)
    return document


def cross_check(tree, stream, parsed, result_dir):
    """kunit.py's parser on the console (None when the kernel never booted); its printed result tree
    goes to <result dir>/kunit-parser.txt."""
    if stream.phase == "build":
        return None
    reference = crosscheck.check(tree, stream.console_lines, parsed)
    (result_dir / REFERENCE_FILE).write_text(reference.printed or f"{reference.note or reference.error}\n")
    return reference


def record_steps(label, document, hit_rate):
    """The step-table rows of one run: its build (with the ccache hit rate), then its boot."""
    build = document["build_duration_s"]
    if build is not None:
        steps.record(f"build {label}", build, f"ccache hits {hit_rate}" if hit_rate else "ccache off")
    counts = document["counts"]
    steps.record(f"boot {label}", document["duration_s"] - (build or 0),
                 f"{document['status']}: {counts['PASS']} passed, {counts['FAIL'] + counts['ERROR']} failed")


def safe_series_hash(kernel_dir):
    """Which series was tested, if the series is consistent (apply would have failed otherwise)."""
    return safe_series(kernel_dir)[0]


def safe_series(kernel_dir):
    """(KCIDB patchset hash, the patches' names in order) of kernel/patches; (None, []) when the
    series is not consistent."""
    try:
        from series import store as series
        paths = series.patch_files(kernel_dir)
        return series.patchset_hash(paths), [path.name for path in paths]
    except (ToolError, OSError):
        return None, []


def tree_head(tree):
    return commit_of(tree, "HEAD")


def base_commit(tree):
    """The commit the series applies to (setup/tree.py tags it `base`): KCIDB's git_commit_hash."""
    return commit_of(tree, "base^{commit}")


def commit_of(tree, revision):
    proc = git(tree, "rev-parse", "--verify", "--quiet", revision, check=False)
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def report(arch, document, stream, result_dir, reference=None):
    """Explain a bad outcome right away; results/summary.py prints the full table later. kunit.py's
    result tree (reference) comes first, as `kunit.py run` shows it, then the problems and the verdict."""
    status = document["status"]
    if reference is not None and reference.printed:
        progress("kunit", f"kunit.py's parser on the console ({rel(result_dir / REFERENCE_FILE)}):", arch)
        print(reference.printed, end="", flush=True)
        if reference.checked and not reference.disagreements:
            progress("kunit", f"kunit.py's parser and ktap.py agree on all {len(reference.statuses)} "
                              "tests, parameters and suites", arch)
    elif reference is not None:
        progress("kunit", f"kunit.py's parser: {reference.note or reference.error}", arch)
    if status in ("BUILD_ERROR", "CONFIG_ERROR"):
        progress("build", f"{'build' if status == 'BUILD_ERROR' else 'configuration'} FAILED; "
                          f"last relevant output (full log: {rel(result_dir / 'build.log')}):", arch)
        for line in build_excerpt([l for l in stream.build_lines if not STAGE_RE.match(l)]):
            print(f"    {line}", flush=True)
    for problem in document["problems"]:
        progress("kunit", problem, arch)
    for finding in document["findings"][:10]:
        progress("kunit", f"log finding at console line {finding['line']}: {finding['text']}", arch)
    counts = document["counts"]
    progress("kunit", f"{status}: {counts['PASS']} passed, {counts['FAIL'] + counts['ERROR']} failed, "
                      f"{counts['SKIP']} skipped, {counts['MISS']} missing; "
                      f"{format_duration(document['duration_s'])}; console: {document['console_log']}", arch)
