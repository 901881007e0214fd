"""Record a finished run in the results database (results/db.py) and keep its logs.

After every `ktimers.py kunit` and `ktimers.py selftest` run, ktimers.py calls
record_quietly() with the run's results directory (build/results/<arch>-<config>/)
and its results document. This module

- copies the directory's files (console.log or the two selftest consoles, build.log,
  kunit-parser.txt, report.txt, results.json) to <database dir>/store/<arch>-<config>-<UTC start>/, so
  the raw console stays re-parsable (`kunit.py parse store/.../console.log`) after the
  next run overwrites build/results;
- turns the document into one checkout, one build and its tests (suite, suite.case,
  suite.case.param) with KCIDB statuses and the KTAP line of each result, and a
  benchmark boot's figures (the document's "bench", from bench_parse) into
  bench_results rows;
- adds the compiler (from the kernel's "Linux version" banner, else the build dir's
  CONFIG_CC_VERSION_TEXT, else `<cross>gcc --version`) and the Debian package version
  (from the tree's `base` commit, else kernel/base.pin).

A run whose kernel did not build is a build with status FAIL and no tests. Recording
never decides a run's verdict: record_quietly() turns any failure into a warning.
`ktimers.py record` imports existing results directories the same way.
"""

import datetime
import json
import re
import shutil
from pathlib import Path

from results import db as results_db
from common import DEFAULT_TREE, PIN_FILE, ToolError, progress, rel, run, warn
from common.arches import get_arch
from common.git import git
from kunit.ktap import BAD, diagnostic_lines, node_log
from setup import pin

BANNER_RE = re.compile(r"Linux version \S+ \(\S+\) \((.+?), (?:GNU ld|LLD|ld)\b")
CC_TEXT_RE = re.compile(r'^CONFIG_CC_VERSION_TEXT="(.*)"$', re.MULTILINE)
BUILD_DIR_RE = re.compile(r"^--build_dir=(.+)$")
BASE_SUBJECT_RE = re.compile(r"^base: (\S+) (\S+)$")
PATH_JUNK_RE = re.compile(r"[^A-Za-z0-9_-]+")
NOT_BUILT = ("BUILD_ERROR", "CONFIG_ERROR")
EXCERPT_LINES = 60
EXCERPT_CHARS = 16384       # KCIDB's limit for log_excerpt
SELFTEST_SUITES = ("ktimer_path", "hrtimer_path")   # guest_report.SUITE_NAMES, in the same order (ON, OFF)


# ---- identities -------------------------------------------------------------------

def start_time_of(document, result_dir):
    """The run's start (ISO 8601 UTC). Selftest documents have none: their results.json was
    written at the end of the run, so its mtime minus the run's duration."""
    if document.get("start_time"):
        return document["start_time"]
    path = Path(result_dir) / "results.json"
    end = path.stat().st_mtime if path.is_file() else datetime.datetime.now().timestamp()
    start = end - float(document.get("duration_s") or 0)
    return datetime.datetime.fromtimestamp(start, datetime.timezone.utc).isoformat(timespec="seconds")


def run_name(arch, config, start_time):
    """'i386-default-20261204T011127Z': the store directory and the build id after 'ktimers:'."""
    moment = datetime.datetime.fromisoformat(start_time).astimezone(datetime.timezone.utc)
    return f"{arch}-{config}-{moment.strftime('%Y%m%dT%H%M%SZ')}"


def path_component(name, number=None):
    """A test name as one KCIDB path component: letters, digits, '_' and '-' only."""
    cleaned = PATH_JUNK_RE.sub("_", name or "").strip("_")
    return cleaned or f"test_{number if number is not None else 'unnamed'}"


# ---- where the facts come from ----------------------------------------------------------

def compiler_of(console_lines, command, arch_name):
    """The compiler that built the kernel: its banner, else the build dir's .config, else gcc --version."""
    banner = next(filter(None, map(BANNER_RE.search, console_lines)), None)
    if banner:
        return banner.group(1)
    for word in command or []:
        match = BUILD_DIR_RE.match(str(word))
        config = Path(match.group(1)) / ".config" if match else None
        if config and config.is_file():
            text = CC_TEXT_RE.search(config.read_text(errors="replace"))
            if text:
                return text.group(1)
    try:
        proc = run([get_arch(arch_name).gcc, "--version"], check=False)
    except ToolError:
        return None
    first = proc.stdout.splitlines()[:1]
    return first[0].strip() if proc.returncode == 0 and first else None


def package_version(tree):
    """The Debian package version the tree was extracted from (its `base` commit), else the pin's."""
    proc = git(tree, "log", "-1", "--format=%s", "base", check=False)
    match = BASE_SUBJECT_RE.match(proc.stdout.strip()) if proc.returncode == 0 else None
    if match:
        return match.group(2)
    try:
        return pin.read_pin(PIN_FILE).version
    except ToolError:
        return None


def base_commit_of(document, tree):
    """The commit the tested series applied to: the document's (kunit/run.py records it), else, for
    runs recorded before it did, the tree's `base` commit if the run's tree head descends from it."""
    if document.get("base_commit") or not document.get("tree_head"):
        return document.get("base_commit")
    base = git(tree, "rev-parse", "--verify", "--quiet", "base^{commit}", check=False)
    if base.returncode != 0 or not Path(tree).is_dir():
        return None
    found = base.stdout.strip()
    descends = git(tree, "merge-base", "--is-ancestor", found, document["tree_head"], check=False)
    return found if descends.returncode == 0 else None


def base_version(package):
    try:
        return pin.kernel_version_of(package) if package else None
    except ToolError:
        return None


def read_lines(path):
    path = Path(path)
    return path.read_text(errors="replace").splitlines() if path.is_file() else []


def booted_build(document, result_dir):
    """For the guest selftests: the KUnit run whose image the guest booted (the same kernel release;
    `<arch>-default` first, then the other configurations sharing its build), which knows the series
    hash, the tree head and the command."""
    arch, release = document.get("arch"), document.get("kernel")
    root = Path(result_dir).parent
    candidates = [root / f"{arch}-default" / "results.json"] + sorted(root.glob(f"{arch}-*/results.json"))
    for path in candidates:
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if release and found.get("kernel_version") == release and found.get("kind", "kunit") == "kunit":
            return found
    return {}


# ---- rows ----------------------------------------------------------------------------------

def excerpt(node):
    lines = [text for _, text in diagnostic_lines(node_log(node))][:EXCERPT_LINES]
    text = "\n".join(list(node.get("errors", [])) + lines)
    return text[:EXCERPT_CHARS] or None


def test_rows(build_id, nodes, prefix, log_url, inherited_url, seen):
    """One row per node (suite, case, parameter), depth first, in console order. A node that names
    its own console (the selftests' two boots) logs there, every other one where its parent does."""
    rows = []
    for node in nodes:
        component = path_component(node.get("name"), node.get("number"))
        path = f"{prefix}.{component}" if prefix else component
        unique, count = path, 1
        while unique in seen:
            count += 1
            unique = f"{path}-{count}"
        seen.add(unique)
        status = node.get("status") if node.get("status") in results_db.TEST_STATUSES else "ERROR"
        log = node.get("log") or []
        misc = {key: node[key] for key in ("number", "directive", "errors", "figures", "how", "measured")
                if node.get(key)}
        url = log_url(node["console"]) if node.get("console") else inherited_url
        rows.append({"id": f"{build_id}:{unique}", "build_id": build_id, "origin": results_db.ORIGIN,
                     "path": unique, "name": node.get("name"), "status": status,
                     "duration": node.get("duration_s", node.get("seconds")), "log_url": url,
                     "log_line": node.get("line") or (log[0][0] if log else None),
                     "log_excerpt": excerpt(node) if status in BAD else None,
                     "comment": node.get("directive") or node.get("note") or "; ".join(node.get("errors", []))
                     or None, "misc": json.dumps(misc) if misc else None})
        rows += test_rows(build_id, node.get("children") or [], unique, log_url, url, seen)
    return rows


def bench_rows(build_id, bench):
    """bench_results rows of a benchmark boot's figures (bench_parse.BenchRun.to_dict()), console order."""
    if not bench:
        return []
    engine = (bench.get("begin") or {}).get("engine")
    rows = []

    def add(workload, api, n, metric, value, line, note=None):
        rows.append({"build_id": build_id, "engine": engine, "workload": workload, "api": api, "n": n,
                     "metric": metric, "value": value, "note": note, "log_line": line})

    for size in bench.get("sizes", []):
        for metric in ("timer_bytes", "percpu_bytes"):
            measurable = size.get(metric) != -1
            add("size", size["api"], None, metric, size.get(metric) if measurable else None, size.get("line"),
                None if measurable else "not measurable")
    for result in bench.get("results", []):
        for metric, value in result["metrics"].items():
            add(result["workload"], result["api"], result["n"], metric, value, result.get("line"))
    for skip in bench.get("skips", []):
        add(skip["workload"], skip["api"], skip["n"], "skipped", None, skip.get("line"), skip.get("reason"))
    return sorted(rows, key=lambda row: row["log_line"] or 0)


def checkout_id(base, patchset, tree_head=None):
    """'ktimers:<base commit>+<patchset hash>': what was tested, the commit and the patches on it."""
    source = base or tree_head or "unknown"
    return f"{results_db.ORIGIN}:{source}+{patchset}" if patchset else f"{results_db.ORIGIN}:{source}"


def checkout_row(document, package, start):
    """KCIDB v4's checkout: git_commit_hash is the base commit the series applies to, patchset_hash
    the sha256 over the patches' sha256s; the head of branch ktimers (base + series as local
    commits) is kept in misc, as are the patches' names."""
    base, series, head = document.get("base_commit"), document.get("series_hash"), document.get("tree_head")
    misc = {"tree_head": head, "patches": document.get("series_patches") or []}
    return {"id": checkout_id(base, series, head), "origin": results_db.ORIGIN, "tree_name": "linux-source-6.12",
            "git_commit_hash": base, "git_repository_branch": None, "patchset_hash": series,
            "base_version": base_version(package), "package_version": package, "start_time": start, "valid": 1,
            "misc": json.dumps(misc)}       # tree_head present, even null: kcidb.py tells new rows from old by it


def build_status(document):
    if document.get("kind") == "selftests" or document.get("built", True):
        return "PASS"
    return "FAIL" if document.get("status") in NOT_BUILT else "ERROR"


def environment(document):
    configuration = document.get("configuration") or {}
    if document.get("kind") == "selftests":
        return {"comment": "QEMU: the default KUnit image booted twice, ktimer.users=1 and ktimer.users=0",
                "misc": {"boots_s": document.get("boots_s"), "plan": document.get("plan")}}
    args = configuration.get("kernel_args") or []
    comment = f"QEMU -smp {configuration.get('smp', '?')}" + (f", kernel args {' '.join(args)}" if args else "")
    return {"comment": comment, "misc": {key: configuration.get(key) for key in ("smp", "kernel_args", "fragments",
                                                                                 "build")}}


def rows_for(document, result_dir, tree, store_root):
    """(checkout, build, tests, files to store) for one results document."""
    arch, config = document.get("arch"), document.get("config")
    if not arch or not config:
        raise ToolError(f"{rel(result_dir)}: the results document names no arch or configuration",
                        "it was not written by kunit/run.py or guest/selftests.py; run the tests again")
    selftests = document.get("kind") == "selftests"
    booted = booted_build(document, result_dir) if selftests else document
    start = start_time_of(document, result_dir)
    name = run_name(arch, config, start)
    build_id = f"{results_db.ORIGIN}:{name}"
    store = f"{results_db.STORE_NAME}/{name}"
    files = sorted(path for path in Path(result_dir).iterdir() if path.is_file()) \
        if Path(result_dir).is_dir() else []
    stored = {path.name for path in files}

    def log_url(console):
        base = Path(console).name if console else ("console-ktimer.log" if selftests else "console.log")
        return f"{store}/{base}" if base in stored else None

    console_file = Path(result_dir) / ("console-ktimer.log" if selftests else "console.log")
    package = package_version(tree)
    checkout = checkout_row(dict(booted, base_commit=base_commit_of(booted, tree)), package, start)
    status = build_status(document)
    counts = document.get("counts") or {}
    misc = {"counts": counts, "problems": document.get("problems", []),
            "findings": [{key: f.get(key) for key in ("line", "kind", "text", "console")}
                         for f in document.get("findings", [])],
            "mode": document.get("mode"), "missing_suites": document.get("missing_suites", []),
            "results_dir": rel(result_dir)}
    if document.get("kunit_parser") is not None:    # kunit.py's parser on the console (kunit/crosscheck.py)
        misc["kunit_parser"] = document["kunit_parser"]
    if document.get("bench") is not None:   # the figures themselves go to bench_results
        misc["bench"] = {key: document["bench"].get(key) for key in ("status", "begin", "end", "problems")}
    build = {"id": build_id, "checkout_id": checkout["id"], "origin": results_db.ORIGIN, "architecture": arch,
             "config_name": config, "kind": document.get("kind") or "kunit",
             "compiler": compiler_of(read_lines(console_file), booted.get("command"), arch),
             "kernel_version": document.get("kernel_version") or document.get("kernel"), "start_time": start,
             "duration": document.get("build_duration_s"), "run_duration": document.get("duration_s"),
             "status": status, "run_status": document.get("status") or "INFRA_ERROR",
             "command": " ".join(map(str, document["command"])) if document.get("command") else None,
             "log_url": log_url("build.log"), "console_url": log_url(None),
             "environment": json.dumps(environment(document)),
             "comment": "; ".join(document.get("problems", [])[:3]) or None, "misc": json.dumps(misc)}
    suites = document.get("suites", [])
    if selftests:   # "timer selftests, ktimer path (ktimer.users=1)" -> ktimer_path
        suites = [dict(suite, name=short) for suite, short in zip(suites, SELFTEST_SUITES)] + suites[2:]
    tests = test_rows(build_id, suites, "", log_url, log_url(None), set()) if status == "PASS" else []
    return checkout, build, tests, (files, Path(store_root) / name)


def keep_files(files, destination, document):
    destination.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copyfile(path, destination / path.name)
    (destination / "results.json").write_text(json.dumps(document, indent=1) + "\n")


# ---- entry points ------------------------------------------------------------------------

def record(result_dir, db, tree=DEFAULT_TREE, document=None):
    """Record the run in result_dir (its results.json unless `document` is given); returns the build row."""
    result_dir = Path(result_dir)
    if document is None:
        try:
            document = json.loads((result_dir / "results.json").read_text())
        except FileNotFoundError:
            raise ToolError(f"no results in {rel(result_dir)} (results.json is missing)",
                            "run the tests first (`make kunit`, `make selftest`)") from None
        except ValueError as error:
            raise ToolError(f"{rel(result_dir / 'results.json')} is not valid JSON: {error}",
                            "run the tests again to rewrite it") from None
    checkout, build, tests, (files, destination) = rows_for(document, result_dir, tree,
                                                            results_db.store_dir(db))
    keep_files(files, destination, document)
    results_db.write_run(db, checkout, build, tests, bench_rows(build["id"], document.get("bench")))
    return build


def record_quietly(result_dir, db, tree=DEFAULT_TREE, document=None):
    """record() for the hook after each run: any failure is a warning and never the run's verdict."""
    try:
        build = record(result_dir, db, tree, document)
    except Exception as error:  # noqa: BLE001 -- recording must not fail or hide a test run
        warn(f"could not record {rel(result_dir)} in the results database {rel(db)}: {error}\n"
             "  the test run itself is not affected; `python3 tools/ktimers.py record` retries")
        return None
    progress("record", f"{build['id']} ({build['run_status']}) -> {rel(db)}", build["architecture"])
    return build


def record_all(results_dir, db, tree=DEFAULT_TREE, names=None):
    """`ktimers.py record`: every <results_dir>/*/results.json, or those of the named runs."""
    results_dir = Path(results_dir)
    found = sorted(path.parent for path in results_dir.glob("*/results.json")
                   if names is None or path.parent.name in names)
    if names:
        missing = sorted(set(names) - {path.name for path in found})
        if missing:
            raise ToolError(f"no results for {', '.join(missing)} in {rel(results_dir)}",
                            "name runs as <arch>-<config> (e.g. i386-default), or run them first")
    if not found:
        raise ToolError(f"no results in {rel(results_dir)} (no */results.json)",
                        "run the tests first (`make test`, `make kunit`), or pass --results-dir")
    recorded = []
    for result_dir in found:
        build = record(result_dir, db, tree)
        progress("record", f"{rel(result_dir)} -> {build['id']} ({build['run_status']})")
        recorded.append(build)
    return recorded
