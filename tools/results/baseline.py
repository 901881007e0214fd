"""results/baseline.json: the committed expected result of every test, per arch and configuration.

`make report` compares each latest run with it (results/regress.py); `make baseline`
(`ktimers.py baseline`) rewrites the entries of the selected arches and
configurations from their latest recorded runs and keeps the others. The file
lists, per run, the test paths under their status, so a refresh shows in a diff
as paths moving between lists:

    {"runs": {"i386-default": {"build_id": ..., "status": "PASS", "build_status": "PASS",
                                "tests": {"PASS": ["ktimer_modes", ...], "SKIP": [...]}}}}
"""

import json
from pathlib import Path

from results import regress, db as results_db
from common import REPO_ROOT, ToolError, progress, rel, warn

BASELINE_FILE = REPO_ROOT / "results" / "baseline.json"
SCHEMA = 1
COMMENT = ("Expected results per <arch>-<config>: the test paths under their KCIDB status. `make report` compares "
           "the latest runs with it; `make baseline` rewrites the entries from the latest recorded runs "
           "(docs/results.md#the-baseline).")


def load(path=BASELINE_FILE, missing_ok=False):
    """{'<arch>-<config>': entry}; a missing file is an error unless missing_ok."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise ToolError(f"no baseline at {rel(path)}",
                        "create it from the latest recorded runs with `make baseline`") from None
    except ValueError as error:
        raise ToolError(f"{rel(path)} is not valid JSON: {error}",
                        "restore it from git (git checkout -- results/baseline.json) or rewrite it with "
                        "`make baseline`") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, dict) or any(not isinstance(entry.get("tests"), dict) for entry in runs.values()):
        raise ToolError(f"{rel(path)} has no 'runs' with 'tests' per <arch>-<config>",
                        "restore it from git or rewrite it with `make baseline`")
    return runs


def snapshot(entry):
    """A regress.Snapshot of one baseline entry."""
    tests = {path: status for status, paths in entry.get("tests", {}).items() for path in paths}
    return regress.Snapshot("baseline", build_status=entry.get("build_status", regress.PASS),
                            run_status=entry.get("status", regress.PASS), tests=tests,
                            start_time=entry.get("start_time"), build_id=entry.get("build_id"))


def entry_for(run, tests):
    """A baseline entry from a database run (results_db.runs row) and its tests."""
    entry = {"build_id": run["id"], "start_time": run["start_time"], "status": run["run_status"],
             "build_status": run["status"], "kernel_version": run.get("kernel_version"),
             "series_hash": run.get("patchset_hash"), "compiler": run.get("compiler"),
             "package_version": run.get("package_version")}
    by_status = {}
    for test in tests:
        by_status.setdefault(test["status"], []).append(test["path"])
    entry["tests"] = {status: sorted(paths) for status, paths in sorted(by_status.items())}
    return entry


def update(connection, selection, path=BASELINE_FILE):
    """Rewrite the entries for `selection` ((arch, config) pairs) from their latest runs; keep the rest."""
    runs = load(path, missing_ok=True)
    written = []
    for arch, config in selection:
        recorded = results_db.runs(connection, arch, config)
        if not recorded:
            warn(f"no recorded run of {arch}-{config}: its baseline entry is left as it was")
            continue
        latest = recorded[-1]
        entry = entry_for(latest, results_db.table(connection, "tests", latest["id"]))
        runs[f"{arch}-{config}"] = entry
        bad = sum(len(entry["tests"].get(status, [])) for status in regress.BAD)
        if bad or latest["status"] != regress.PASS:
            warn(f"the baseline for {arch}-{config} now expects {bad} failing test(s) "
                 f"(run {latest['run_status']}, build {latest['status']})")
        written.append(f"{arch}-{config}")
    if not written:
        raise ToolError("nothing to write: no recorded runs for the selected arches and configurations",
                        "run the tests first (`make test`), or `python3 tools/ktimers.py record` to import results")
    data = {"comment": COMMENT, "schema": SCHEMA, "runs": dict(sorted(runs.items()))}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    progress("baseline", f"{rel(path)}: {', '.join(written)} from their latest runs")
    return written
