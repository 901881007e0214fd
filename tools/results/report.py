"""`make report`: each arch and configuration's latest run against the previous one and the baseline.

For every selected <arch>-<config> the report takes the latest run recorded in the
results database and compares it (results/regress.py) with the run before it and with the
entry of results/baseline.json. It prints one table row per run, then the
regressions, build failures, fixes, new, removed and otherwise changed tests with
the stored log and line of each, writes the same as a static HTML page
(results/report_html.py, build/results/report.html by default) and exits non-zero on any
regression. `--record FILE` writes the counts for results/summary.py, so `make test`
counts regressions in its closing line.
"""

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path

from results import baseline, regress, db as results_db
from common import ToolError, rel, table_lines

MAX_LISTED = 20     # per run and class on the terminal; the HTML page lists everything


@dataclass
class RunReport:
    arch: str
    config: str
    runs: list = field(default_factory=list)        # every recorded run, oldest first
    tests: dict = field(default_factory=dict)       # path -> test row of the latest run
    baseline: dict = None                           # the baseline entry, if any
    vs_previous: regress.Comparison = None
    vs_baseline: regress.Comparison = None

    @property
    def label(self):
        return f"{self.arch}-{self.config}"

    @property
    def latest(self):
        return self.runs[-1] if self.runs else None

    @property
    def previous(self):
        return self.runs[-2] if len(self.runs) > 1 else None

    def comparisons(self):
        return [(name, comparison) for name, comparison in (("previous", self.vs_previous),
                                                            ("baseline", self.vs_baseline))
                if comparison is not None and comparison.old is not None]

    def merged(self, kind):
        """[(change, names)]: the changes of one class over both comparisons, each once, with the names of
        the comparisons ('previous', 'baseline') that show it."""
        found = {}
        for name, comparison in self.comparisons():
            for change in comparison.of(kind):
                key = (change.path, change.old, change.new)
                found.setdefault(key, (change, []))[1].append(name)
        return list(found.values())

    def run_level(self):
        """[(what, names)]: a failed build and a worse verdict without a test regression, once each."""
        found = {}
        for name, comparison in self.comparisons():
            if comparison.build == "build failed":
                found.setdefault("the build failed", []).append(name)
            if comparison.run:
                found.setdefault(f"the run's verdict went {comparison.run}", []).append(name)
        return list(found.items())

    @property
    def regressions(self):
        """Distinct regressions: a test that regressed against both the previous run and the baseline is one."""
        return len(self.merged("regression")) + len(self.run_level())

    def failing(self):
        """The latest run's tests that did not pass, most specific only (as regress lists them)."""
        bad = [path for path, test in self.tests.items() if test["status"] in regress.BAD]
        return [self.tests[path] for path in bad if not any(p.startswith(path + ".") for p in bad)]

    def stop_line(self):
        """Where the kernel log says things went wrong first (a panic, an oops, a warning), if anywhere."""
        findings = ((self.latest or {}).get("misc") or {}).get("findings") or []
        lines = [f.get("line") for f in findings if isinstance(f, dict) and f.get("line")]
        return min(lines) if lines else None

    def where(self, path, implied=False):
        """(log_url, line) of a test in the latest run. A test that never ran (implied MISS, or recorded
        without a line of its own) points at the first kernel log finding, else its nearest parent's line."""
        latest = self.latest or {}
        test = self.tests.get(path)
        if test and test.get("log_line") and not implied:
            return test.get("log_url") or latest.get("console_url"), test["log_line"]
        if self.stop_line():
            return latest.get("console_url"), self.stop_line()
        for candidate in regress.parents(path):
            parent = self.tests.get(candidate)
            if parent and parent.get("log_line"):
                return parent.get("log_url") or latest.get("console_url"), parent["log_line"]
        return (test or {}).get("log_url") or latest.get("console_url"), None


@dataclass
class Report:
    db: Path
    baseline_path: Path
    runs: list                                      # RunReport per selected <arch>-<config>
    history: dict                                   # arch -> every run of the selected configs, newest first
    generated: str = None

    @property
    def regressions(self):
        return sum(run.regressions for run in self.runs)

    def totals(self):
        """Per class, the distinct changes over all runs (a change seen against both references counts once)."""
        totals = dict.fromkeys(regress.CLASSES, 0)
        for run in self.runs:
            for kind in regress.CLASSES:
                totals[kind] += len(run.merged(kind))
            totals["regression"] += len(run.run_level())
        return totals


def snapshot(run, tests, label):
    return regress.Snapshot(label, build_status=run["status"], run_status=run["run_status"],
                            tests={test["path"]: test["status"] for test in tests},
                            start_time=run["start_time"], build_id=run["id"])


def selection(connection, arches, runs, entries):
    """(arch, config) pairs: the given ones, or every one of these arches recorded or in the baseline."""
    if runs is not None:
        return list(runs)
    known = set(results_db.labels(connection))
    for label in entries:
        arch, _, config = label.partition("-")
        known.add((arch, config))
    return sorted(pair for pair in known if pair[0] in arches)


def build(db, baseline_path, arches, runs=None):
    """The Report for these (arch, config) runs; None: every one of the arches recorded or in the baseline."""
    entries = baseline.load(baseline_path)
    connection = results_db.connect(db)
    try:
        reports = []
        for arch, config in selection(connection, arches, runs, entries):
            run = RunReport(arch, config, runs=results_db.runs(connection, arch, config),
                            baseline=entries.get(f"{arch}-{config}"))
            if run.latest:
                latest_tests = results_db.table(connection, "tests", run.latest["id"])
                run.tests = {test["path"]: test for test in latest_tests}
                new = snapshot(run.latest, latest_tests, "latest")
                if run.previous:
                    run.vs_previous = regress.compare(
                        snapshot(run.previous, results_db.table(connection, "tests", run.previous["id"]), "previous"),
                        new)
                if run.baseline:
                    run.vs_baseline = regress.compare(baseline.snapshot(run.baseline), new)
            reports.append(run)
    finally:
        connection.close()
    history = {}
    for run in reports:
        history.setdefault(run.arch, []).extend(run.runs)
    for arch in history:
        history[arch].sort(key=lambda row: (row["start_time"], row["id"]), reverse=True)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return Report(Path(db), Path(baseline_path), reports, history, generated=now)


# ---- text ------------------------------------------------------------------------------------

def when(start_time):
    """'2026-12-04 01:11' (UTC) from an ISO time."""
    return (start_time or "")[:16].replace("T", " ") or "-"


def counts_text(comparison):
    if comparison is None or comparison.old is None:
        return "-"
    return ", ".join(text + (" (regression)" if comparison.build and kind == "regression" else "")
                     for kind, text in comparison.described()) or "no changes"


def location(report, run, change):
    log_url, line = run.where(change.path, change.implied)
    if not log_url or change.kind == "removed":
        return ""
    return f"{rel(report.db.parent / log_url)}" + (f":{line}" if line else "")


def change_text(change):
    if change.kind == "new":
        return f"new ({change.new})" + (f", {change.count} tests" if change.count > 1 else "")
    if change.kind == "removed":
        return f"removed (was {change.old})" + (f", {change.count} tests" if change.count > 1 else "")
    return f"{change.old} -> {change.new}" + (" (never ran: the run stopped before it)" if change.implied else "")


def change_line(report, run, change, names):
    where = location(report, run, change)
    text = f"{run.label}: {change.path}: {change_text(change)} [vs {', '.join(names)}]"
    return text + (f"  {where}" if where else "")


def text_lines(report):
    lines = [f"=== ktimers results report ({rel(report.db)}, baseline {rel(report.baseline_path)}) ==="]
    header = ("arch", "config", "latest run (UTC)", "status", "tests", "not passed", "vs previous", "vs baseline")
    table = [header]
    for run in report.runs:
        if not run.latest:
            table.append((run.arch, run.config, "no run recorded", "-", "-", "-", "-", "-"))
            continue
        table.append((run.arch, run.config, when(run.latest["start_time"]), run.latest["run_status"],
                      len(run.tests), sum(1 for test in run.tests.values() if test["status"] in regress.BAD),
                      counts_text(run.vs_previous) if run.previous else "(first run)",
                      counts_text(run.vs_baseline) if run.baseline else "(not in the baseline)"))
    lines += table_lines(table)
    for run in report.runs:
        latest = run.latest
        if latest and latest["status"] != regress.PASS:
            log = rel(report.db.parent / latest["log_url"]) if latest.get("log_url") else "no build log"
            lines.append(f"BUILD FAILED {run.label} at {when(latest['start_time'])}: {latest['run_status']}, "
                         f"no tests ran ({log})")
    for kind, title in (("regression", "REGRESSION"), ("fix", "fixed"), ("new", "new"), ("removed", "removed"),
                        ("changed", "changed")):
        for run in report.runs:
            if kind == "regression":
                for what, names in run.run_level():
                    lines.append(f"{title} {run.label}: {what} [vs {', '.join(names)}]")
            listed = run.merged(kind)
            if kind == "regression":
                listed, never_ran = regress.grouped(listed)
                for (suite, names), changes in never_ran.items():
                    where = location(report, run, changes[0])
                    text = (f"{title} {run.label}: {suite}: {len(changes)} test(s) PASS -> MISS, never ran: "
                            f"the run stopped before them [vs {', '.join(names)}]")
                    lines.append(text + (f"  {where}" if where else ""))
            for change, names in listed[:MAX_LISTED]:
                lines.append(f"{title} {change_line(report, run, change, names)}")
            if len(listed) > MAX_LISTED:
                lines.append(f"  ... and {len(listed) - MAX_LISTED} more ({kind}, {run.label}): see the HTML report")
    return lines


def closing_line(report, html):
    totals = report.totals()
    return (f"report: {totals['regression']} regression(s), {totals['fix']} fix(es), {totals['new']} new, "
            f"{totals['removed']} removed, {totals['changed']} changed" + (f"; HTML: {rel(html)}" if html else ""))


def record(report, path, html):
    """The counts results/summary.py adds to `make test`'s table and closing line."""
    lines = []
    for run in report.runs:
        lines += [f"{run.label}: {what} [vs {', '.join(names)}]" for what, names in run.run_level()]
        explicit, never_ran = regress.grouped(run.merged("regression"))
        lines += [f"{run.label}: {change.path} {change_text(change)} [vs {', '.join(names)}]"
                  for change, names in explicit]
        lines += [f"{run.label}: {suite}: {len(changes)} test(s) PASS -> MISS, never ran [vs {', '.join(names)}]"
                  for (suite, names), changes in never_ran.items()]
    if len(lines) > MAX_LISTED:
        lines[MAX_LISTED:] = [f"... and {len(lines) - MAX_LISTED} more: `make report`"]
    data = {"regressions": report.regressions, "runs": sum(1 for run in report.runs if run.latest),
            "totals": report.totals(), "lines": lines, "html": rel(html) if html else None}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def run_report(db, baseline_path, arches, runs=None, html=None, record_path=None):
    """Print the report, write the HTML page (and the counts file); returns the exit status."""
    if record_path:
        Path(record_path).unlink(missing_ok=True)   # never leave an earlier run's counts behind
    report = build(db, baseline_path, arches, runs)
    if not report.runs:
        raise ToolError(f"nothing to report for {' '.join(arches)}: no recorded runs and no baseline entries",
                        "run the tests first (`make test`), or `python3 tools/ktimers.py record` to import results")
    if html:
        from results import report_html
        report_html.write(report, Path(html))
    for line in text_lines(report):
        print(line)
    if record_path:
        record(report, record_path, html)
    print(closing_line(report, html), flush=True)
    return 1 if report.regressions else 0
