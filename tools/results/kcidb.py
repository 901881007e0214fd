"""`ktimers.py export-kcidb`: the results database as one KCIDB v4 JSON document.

KCIDB (kernelci/kcidb-io) is KernelCI's common report format: checkouts ->
builds -> tests, each object with an `origin:`-prefixed id. The export uses the
fields of schema v4.0 plus the MISS test status, so it declares version 4.2
(the first v4 minor with MISS). A checkout is the base commit (git_commit_hash)
plus the series (patchset_hash, sha256 over the patches' sha256s). A build is one
kernel image: the database has a row per run, and the runs that only booted an
image built earlier in the same invocation (lowres, users-off: `kunit.py exec`;
the guest selftests) are tests of the build that made it, each test carrying its
boot's configuration in `environment` (see boots()). v4 builds have no status,
only `valid`: a build that produced a kernel is valid, a build error is not, and
a run that failed before building says nothing. validate() checks what
kcidb-io's JSON schema checks for these fields (required fields, id and path
patterns, the status enum, resources, environments, no nulls, no unknown
fields, references), without the jsonschema package. Log URLs are file:// URLs
of the stored logs unless --log-base-url names where the store directory is
published.
"""

import json
import re
from pathlib import Path

from results import db as results_db
from common import ToolError, progress, rel

VERSION = {"major": 4, "minor": 2}
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
ID_RE = re.compile(r"^[a-z0-9_]+:.*$")
SHA1_RE = re.compile(r"^[0-9a-f]{40}$")
SHA256_RE = re.compile(r"^$|^[0-9a-f]{64}$")
ARCH_RE = re.compile(r"^[a-z0-9_]*$")
PATH_RE = re.compile(r"^[.a-zA-Z0-9_-]*$")
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
STATUSES = ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP")
EXCERPT_MAX = 16384

FIELDS = {
    "checkouts": {"id", "origin", "tree_name", "git_repository_url", "git_commit_hash", "git_commit_name",
                  "git_repository_branch", "patchset_files", "patchset_hash", "message_id", "comment",
                  "start_time", "contacts", "log_url", "log_excerpt", "valid", "misc"},
    "builds": {"checkout_id", "id", "origin", "comment", "start_time", "duration", "architecture", "command",
               "compiler", "input_files", "output_files", "config_name", "config_url", "log_url", "log_excerpt",
               "valid", "misc"},
    "tests": {"build_id", "id", "origin", "environment", "path", "comment", "log_url", "log_excerpt", "status",
              "waived", "start_time", "duration", "output_files", "misc"},
}
REQUIRED = {"checkouts": ("id", "origin"), "builds": ("checkout_id", "id", "origin"),
            "tests": ("build_id", "id", "origin")}
RESOURCE_LISTS = ("patchset_files", "input_files", "output_files")     # [{"name", "url"}], both required
RESOURCE_NAME_RE = re.compile(r"^[^/]+$")
ENVIRONMENT_FIELDS = {"comment", "misc"}


def _drop_nulls(data):
    """KCIDB objects may omit a field but never carry null: drop nulls (and empty objects), also nested ones,
    so each object is cleaned once, as a whole (its misc, environment and boots with it)."""
    if isinstance(data, dict):
        cleaned = {key: _drop_nulls(value) for key, value in data.items() if value is not None}
        return {key: value for key, value in cleaned.items() if value != {}}
    if isinstance(data, list):
        return [_drop_nulls(item) for item in data if item is not None]
    return data


class LogUrls:
    def __init__(self, db, base_url=None):
        self.root = Path(db).resolve().parent
        self.base_url = base_url.rstrip("/") + "/" if base_url else None

    def __call__(self, relative):
        if not relative:
            return None
        return self.base_url + relative if self.base_url else (self.root / relative).as_uri()


def checkout_object(row):
    misc = dict(row.get("misc") or {}, package_version=row.get("package_version"),
                base_version=row.get("base_version"))
    commit, patchset = row.get("git_commit_hash"), row.get("patchset_hash")
    if "tree_head" not in misc:
        # Recorded before the base commit was: its git_commit_hash is the head of branch ktimers and
        # its patchset_hash the tools' earlier series hash. Neither means what KCIDB says: keep them aside.
        misc.update(tree_head=commit, series_hash=patchset)
        commit = patchset = None
    return _drop_nulls({
        "id": row["id"], "origin": row["origin"], "tree_name": row.get("tree_name"),
        "git_commit_hash": commit if SHA1_RE.match(commit or "") else None,
        "patchset_hash": patchset if SHA256_RE.match(patchset or "-") else None,
        "comment": f"{row.get('tree_name')} {row.get('package_version')} with the ktimers series",
        "start_time": row.get("start_time"), "valid": bool(row["valid"]) if row.get("valid") is not None else None,
        "misc": misc})


def build_dir_of(row):
    """The build directory a run's kernel came from (its configuration's `build`; the guest selftests
    boot the default image)."""
    if row["kind"] == "selftests":
        return "default"
    return (row.get("environment") or {}).get("misc", {}).get("build") or row["config_name"]


def booted_only(row):
    return row["kind"] == "selftests" or (row.get("misc") or {}).get("mode") == "exec"


def boots(rows):
    """{run id: the run whose build it booted} over the database's runs: a run that only booted
    (`kunit.py exec`, the selftests) belongs to the latest earlier run of the same arch, build
    directory and checkout that built, if that one built the same kernel release; every other run
    is its own build."""
    builders, owner = {}, {}
    for row in sorted(rows, key=lambda row: (row["start_time"], row["id"])):
        key = (row["architecture"], build_dir_of(row), row["checkout_id"])
        builder = builders.get(key)
        if booted_only(row) and builder and builder.get("kernel_version") == row.get("kernel_version"):
            owner[row["id"]] = builder
        else:
            owner[row["id"]] = builders[key] = row
    return owner


def boot_summary(row, urls):
    """What one run (a boot of the build) adds to the build's misc: its verdict, counts, problems."""
    misc = row.get("misc") or {}
    return {"run": row["id"], "config": row["config_name"], "kind": row["kind"],
            "mode": misc.get("mode"), "start_time": row["start_time"],
            "run_status": row["run_status"], "run_duration": row.get("run_duration"),
            "counts": misc.get("counts"), "problems": misc.get("problems") or None,
            "findings": misc.get("findings") or None, "kunit_parser": misc.get("kunit_parser"),
            "console_url": urls(row.get("console_url"))}


def build_object(row, runs, urls):
    """The KCIDB build of `row` (the run that built the kernel: its id is the build's) and of its boots `runs`."""
    return _drop_nulls({
        "id": row["id"], "checkout_id": row["checkout_id"], "origin": row["origin"],
        "comment": row.get("comment"), "start_time": row["start_time"], "duration": row.get("duration"),
        "architecture": row["architecture"], "command": row.get("command"), "compiler": row.get("compiler"),
        "config_name": build_dir_of(row), "log_url": urls(row.get("log_url")),
        "valid": {"PASS": True, "FAIL": False}.get(row["status"]),
        "misc": {"kind": row["kind"], "status": row["status"], "kernel_version": row.get("kernel_version"),
                 "boots": [boot_summary(run, urls) for run in runs]}})


def environment_of(run):
    """A test's environment: the boot it ran in (QEMU -smp, kernel arguments) and its configuration."""
    environment = dict(run.get("environment") or {})
    misc = dict(environment.get("misc") or {}, config=run["config_name"], run=run["id"])
    comment = f"{run['config_name']}: {environment['comment']}" if environment.get("comment") else run["config_name"]
    return {"comment": comment, "misc": misc}


def test_object(row, environment, urls):
    misc = dict(row.get("misc") or {}, log_line=row.get("log_line"), name=row.get("name"))
    return _drop_nulls({
        "id": row["id"], "build_id": row["build_id"], "origin": row["origin"], "path": row["path"],
        "status": row["status"], "comment": row.get("comment"), "start_time": row.get("start_time"),
        "duration": row.get("duration"), "log_url": urls(row.get("log_url")),
        "log_excerpt": (row.get("log_excerpt") or None) and row["log_excerpt"][:EXCERPT_MAX],
        "environment": environment, "misc": misc})


def export(db, latest_only=False, base_url=None):
    """The KCIDB document of the database (or of the latest run per arch and configuration): one build
    per kernel built, with the tests of every run that booted it."""
    urls = LogUrls(db, base_url)
    connection = results_db.connect(db)
    try:
        runs = results_db.table(connection, "builds")
        owner = boots(runs)
        if latest_only:
            newest = {}
            for row in sorted(runs, key=lambda row: row["start_time"]):
                newest[(row["architecture"], row["config_name"])] = row
            runs = sorted(newest.values(), key=lambda row: (row["start_time"], row["id"]))
        grouped = {}        # the run that built -> the runs that booted it, in order
        for run in runs:
            grouped.setdefault(owner[run["id"]]["id"], (owner[run["id"]], []))[1].append(run)
        builds, tests = [], []
        for builder, booted in grouped.values():
            builds.append(build_object(builder, booted, urls))
            for run in booted:
                environment = environment_of(run)
                tests += [dict(test_object(test, environment, urls), build_id=builder["id"])
                          for test in results_db.table(connection, "tests", run["id"])]
        used = {build["checkout_id"] for build in builds}
        checkouts = [checkout_object(row) for row in results_db.table(connection, "checkouts") if row["id"] in used]
    finally:
        connection.close()
    return {"version": dict(VERSION), "checkouts": checkouts, "builds": builds, "tests": tests}


# ---- validation -----------------------------------------------------------------------------

def _nulls(value, where):
    if value is None:
        return [f"{where} is null"]
    if isinstance(value, dict):
        return [problem for key, item in value.items() for problem in _nulls(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [problem for index, item in enumerate(value) for problem in _nulls(item, f"{where}[{index}]")]
    return []


def _resources(value, where):
    """A v4 resource list: objects with a name (no '/') and a url, nothing else."""
    if not isinstance(value, list):
        return [f"{where} is not a list"]
    problems = []
    for index, item in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(item, dict) or set(item) != {"name", "url"}:
            problems.append(f"{at} must have exactly a name and a url")
        elif not RESOURCE_NAME_RE.match(str(item["name"])):
            problems.append(f"{at}.name {item['name']!r} is empty or has a '/'")
    return problems


def _environment(value, where):
    if not isinstance(value, dict):
        return [f"{where} is not an object"]
    problems = [f"{where} has unknown field {name!r}" for name in value if name not in ENVIRONMENT_FIELDS]
    if "comment" in value and not isinstance(value["comment"], str):
        problems.append(f"{where}.comment is not a string")
    if "misc" in value and not isinstance(value["misc"], dict):
        problems.append(f"{where}.misc is not an object")
    return problems


def validate(document):
    """Problems that would make kcidb-io reject the document (empty: valid)."""
    problems = []
    if document.get("version", {}).get("major") != VERSION["major"]:
        problems.append("version.major must be 4")
    for key in document:
        if key not in ("version", "checkouts", "builds", "tests", "issues", "incidents"):
            problems.append(f"unknown top-level field {key!r}")
    ids = {kind: set() for kind in FIELDS}
    for kind, fields in FIELDS.items():
        for index, item in enumerate(document.get(kind, [])):
            where = f"{kind}[{index}]"
            problems += [f"{where} lacks {name}" for name in REQUIRED[kind] if name not in item]
            problems += [f"{where} has unknown field {name!r}" for name in item if name not in fields]
            problems += _nulls(item, where)
            if not ORIGIN_RE.match(str(item.get("origin", ""))):
                problems.append(f"{where}.origin {item.get('origin')!r} is not [a-z0-9_]+")
            for name in ("id", "checkout_id", "build_id"):
                if name in item and not ID_RE.match(str(item[name])):
                    problems.append(f"{where}.{name} {item[name]!r} is not '<origin>:<id>'")
            if item.get("id") in ids[kind]:
                problems.append(f"{where}.id {item['id']!r} is not unique")
            ids[kind].add(item.get("id"))
            if "start_time" in item and not TIME_RE.match(str(item["start_time"])):
                problems.append(f"{where}.start_time {item['start_time']!r} is not an RFC 3339 date-time")
            if "duration" in item and not isinstance(item["duration"], (int, float)):
                problems.append(f"{where}.duration is not a number")
            if "valid" in item and not isinstance(item["valid"], bool):
                problems.append(f"{where}.valid is not a boolean")
            if len(str(item.get("log_excerpt", ""))) > EXCERPT_MAX:
                problems.append(f"{where}.log_excerpt is longer than {EXCERPT_MAX} characters")
            if "misc" in item and not isinstance(item["misc"], dict):
                problems.append(f"{where}.misc is not an object")
            for name in RESOURCE_LISTS:
                if name in item and name in fields:
                    problems += _resources(item[name], f"{where}.{name}")
    for index, item in enumerate(document.get("checkouts", [])):
        if "git_commit_hash" in item and not SHA1_RE.match(item["git_commit_hash"]):
            problems.append(f"checkouts[{index}].git_commit_hash is not a sha1")
        if "patchset_hash" in item and not SHA256_RE.match(item["patchset_hash"]):
            problems.append(f"checkouts[{index}].patchset_hash is not a sha256")
    for index, item in enumerate(document.get("builds", [])):
        if not ARCH_RE.match(str(item.get("architecture", ""))):
            problems.append(f"builds[{index}].architecture {item.get('architecture')!r} is not [a-z0-9_]*")
        if item.get("checkout_id") not in ids["checkouts"]:
            problems.append(f"builds[{index}].checkout_id {item.get('checkout_id')!r} names no checkout")
    for index, item in enumerate(document.get("tests", [])):
        if not PATH_RE.match(str(item.get("path", ""))):
            problems.append(f"tests[{index}].path {item.get('path')!r} has characters outside [.a-zA-Z0-9_-]")
        if "status" in item and item["status"] not in STATUSES:
            problems.append(f"tests[{index}].status {item['status']!r} is not one of {', '.join(STATUSES)}")
        if item.get("build_id") not in ids["builds"]:
            problems.append(f"tests[{index}].build_id {item.get('build_id')!r} names no build")
        if "environment" in item:
            problems += _environment(item["environment"], f"tests[{index}].environment")
    return problems


def write(db, output, latest_only=False, base_url=None):
    document = export(db, latest_only, base_url)
    problems = validate(document)
    if problems:
        raise ToolError("the KCIDB export does not validate:\n  " + "\n  ".join(problems[:20]),
                        "this is a bug in tools/results/kcidb.py or a hand-edited database: report it")
    text = json.dumps(document, indent=1) + "\n"
    if str(output) == "-":
        print(text, end="")
    else:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text)
        progress("kcidb", f"{rel(output)}: {len(document['checkouts'])} checkout(s), {len(document['builds'])} "
                          f"build(s), {len(document['tests'])} test(s), KCIDB v{VERSION['major']}.{VERSION['minor']}")
    return document
