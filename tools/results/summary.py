"""Summarize this run's results.json files (plus tool tests and style, when given) for people and CI.

Prints a table with one row per arch and configuration (kunit_configs/matrix),
the failing cases with their diagnostic lines and the log findings, and ends
with exactly one line `N passed, N failed[, N skipped]` totalled over all rows
(CI reads it). The exit status is non-zero exactly when "failed" is non-zero:
failed counts failed/errored/missing cases, missing suites, log findings, runs
that did not finish (build error, crash, timeout, missing results), runs on whose
console kunit.py's own parser and ktap.py disagree (or kunit.py's parser failed), failed tool
tests, style problems and the regressions `make report` found against the
previous runs and the baseline.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from common import RESULTS_DIR, format_duration, rel, table_lines
from kunit import crosscheck, figures
from kunit.ktap import BAD, diagnostic_lines, failing_cases, node_log
from common import steps

MAX_LOG_LINES = 25
SELFTESTS = "selftests"     # the guest selftests' rows (guest_selftests.RESULTS_NAME), next to KUnit's


@dataclass
class Totals:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def closing_line(self):
        line = f"{self.passed} passed, {self.failed} failed"
        return line + (f", {self.skipped} skipped" if self.skipped else "")


@dataclass
class Row:
    arch: str
    config: str
    status: str
    cases: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    missed: int = 0
    findings: int = 0
    disagreed: bool = False    # kunit.py's parser disagreed with ktap.py on the console, or failed
    duration: float = None
    problems: list = field(default_factory=list)


def load(path):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except ValueError as error:
        return {"status": "INFRA_ERROR", "problems": [f"{rel(path)} is not valid JSON: {error}"]}


def row_for(arch, config, document):
    if document is None:
        command = f"make selftest ARCH={arch}" if config == SELFTESTS else f"make kunit ARCH={arch} CONFIG={config}"
        return Row(arch, config, "NO_RESULTS",
                   problems=[f"no results: run `{command}` (or it failed before writing results.json)"])
    counts = document.get("counts", {})
    return Row(arch, config, document.get("status", "INFRA_ERROR"),
               cases=counts.get("total", 0), passed=counts.get("PASS", 0),
               failed=counts.get("FAIL", 0) + counts.get("ERROR", 0), skipped=counts.get("SKIP", 0),
               missed=counts.get("MISS", 0), findings=len(document.get("findings", [])),
               disagreed=crosscheck.failed(document.get("kunit_parser")), duration=document.get("duration_s"), problems=document.get("problems", []))


def run_failures(row):
    """Failures the case counts cannot show: findings, a run that never finished, and the parsers
    disagreeing about its console (one failure however many tests they disagree on)."""
    unfinished = row.status not in ("PASS", "FAIL")
    extra = row.findings + (1 if unfinished else 0) + (1 if row.disagreed else 0)
    if row.status != "PASS" and row.failed + row.missed + extra == 0:
        extra = 1  # a failed run must never add up to "0 failed"
    return extra


def head_and_tail(lines, limit=MAX_LOG_LINES):
    """Where it started going wrong and where it ended, for long logs."""
    if len(lines) <= limit:
        return lines
    head = limit // 3
    return lines[:head] + [(None, f"... {len(lines) - limit} line(s) ...")] + lines[-(limit - head):]


def print_table(rows, extra_rows):
    header = ("arch", "config", "status", "cases", "passed", "failed", "skipped", "missed", "findings", "time")
    table = [header] + [
        (r.arch, r.config, r.status, r.cases, r.passed, r.failed, r.skipped, r.missed, r.findings,
         format_duration(r.duration) if r.duration is not None else "-")
        for r in rows] + extra_rows
    for line in table_lines(table):
        print(line)


def print_details(arch, config, document):
    if not document:
        return
    label = f"{arch}-{config}"
    for problem in document.get("problems", []):
        print(f"[{label}] {problem}")
    for suite, case, node, missed in failing_cases(document):
        if missed:
            numbers = ", ".join(f"#{m.get('number')}" for m in missed)
            print(f"\nMISS [{label}] {suite}: {len(missed)} case(s) planned but never reported ({numbers})")
            log = node_log(node)
            shown = log  # what the kernel printed when the suite stopped: the crash itself
        else:
            print(f"\n{node.get('status')} [{label}] {suite}.{case}" if case else
                  f"\n{node.get('status')} [{label}] {suite}")
            for error in node.get("errors", []):
                print(f"    ({error})")
            bad_params = [c for c in node.get("children", []) or [] if c.get("status") in BAD]
            for param in bad_params[:10]:
                print(f"    {param.get('status')} param: {param.get('name')}")
            log = node_log(node)
            shown = diagnostic_lines(log)
        for number, text in head_and_tail(shown):
            print(f"    {number:>6}| {text}" if number else f"    {text}")
        if log and (len(shown) > MAX_LOG_LINES or len(shown) < len(log)):
            # a selftest case names its column's console; a KUnit case has the run's one
            console = node.get("console") or document.get("console_log")
            print(f"    (full log: {console} lines {log[0][0]}-{log[-1][0]})")
    findings = document.get("findings", [])
    if findings:
        # each finding names its own console: a selftest run has one per column
        print(f"\nkernel log findings [{label}] (console:line):")
        for finding in findings[:20]:
            console = finding.get("console") or document.get("console_log")
            print(f"    {console}:{finding['line']}: [{finding['kind']}] {finding['text']}")
            for detail in finding.get("detail", [])[:6]:
                print(f"        {detail}")
        if len(findings) > 20:
            print(f"    ... and {len(findings) - 20} more")


def print_figures(run_figures):
    """What the counting cases counted, and which correctness counts failed."""
    lines = [figures.format_line(label, test, pairs) for label, found in run_figures for test, pairs in found]
    if not lines:
        return
    print("\nfigures (counted by the tests; see docs/running.md#figures):")
    for line in lines:
        print(f"  {line}")
    fuzz_ops = figures.total(run_figures, "ktimer_fuzz", "ops")
    if fuzz_ops:
        print(f"  fuzz operations, all runs: {fuzz_ops:,} (each boot a new seed)")
    for label, found in run_figures:
        for violation in figures.violations(found):
            print(f"error: [{label}] {violation}: expiries were lost, duplicated or diverged from the model")


def print_selftest_reports(runs, results_dir):
    """The two-column reports of the guest selftests (guest_report), as `make selftest` wrote them."""
    for arch, config in runs:
        report = Path(results_dir) / f"{arch}-{config}" / "report.txt"
        if config == SELFTESTS and report.is_file():
            print()
            print(report.read_text().rstrip("\n"))


def step_counts(path, result, key, label, extra, totals):
    """The counts another step wrote (tools-test, style, report --record; result: the file loaded), or None:
    not asked for, or missing or unreadable, which adds a NO_RESULTS row that counts as one failure."""
    if not path:
        return None
    if result is None or key not in result:
        extra.append((label, "-", "NO_RESULTS", "-", "-", "-", "-", "-", "-", "-"))
        totals.failed += 1
        return None
    return result


def summarize(runs, results_dir=RESULTS_DIR, tools_tests=None, style=None, errors=(), skipped=(), report=None):
    """Print everything; return (Totals, exit code).

    runs: (arch, configuration name) pairs, one row each, in the order `make test` ran
    them; errors are setup problems (a broken matrix file) that each count as one failure;
    skipped: '<arch>-<config>' labels the matrix leaves out for that arch, named in one note;
    report: the counts file of `report --record`; any regression makes it one failure (the
    regressed tests themselves are already counted in their run's row)."""
    totals = Totals()
    rows, documents, extra = [], [], []
    run_figures = []
    for arch, config in runs:
        document = load(Path(results_dir) / f"{arch}-{config}" / "results.json")
        row = row_for(arch, config, document)
        documents.append((row, document))
        rows.append(row)
        totals.passed += row.passed
        totals.skipped += row.skipped
        totals.failed += row.failed + row.missed + run_failures(row)
        found = figures.in_results((document or {}).get("suites", []))
        run_figures.append((f"{arch}-{config}", found))
        totals.failed += len(figures.violations(found))
    for _ in errors:
        extra.append(("setup", "-", "ERROR", "-", "-", 1, "-", "-", "-", "-"))
        totals.failed += 1
    tools_result, style_result, report_result = (load(path) if path else None for path in (tools_tests, style, report))
    counts = step_counts(tools_tests, tools_result, "passed", "tools", extra, totals)
    if counts:
        failed = counts.get("failed", 0) + counts.get("errors", 0)
        extra.append(("tools", "unittest", "PASS" if not failed else "FAIL", counts.get("total", 0),
                      counts["passed"], failed, counts.get("skipped", 0), 0, "-",
                      format_duration(counts.get("duration_s", 0))))
        totals.passed += counts["passed"]
        totals.failed += failed
        totals.skipped += counts.get("skipped", 0)
    result = step_counts(style, style_result, "files", "style", extra, totals)
    if result:
        bad = len(result.get("failed_files", [])) + (1 if result.get("error") else 0)
        extra.append(("style", "checkpatch", "PASS" if not bad else "FAIL", result["files"],
                      result["files"] - len(result.get("failed_files", [])), bad, 0, 0,
                      result.get("problems", 0), "-"))
        totals.failed += bad
    result = step_counts(report, report_result, "regressions", "report", extra, totals)
    if result:
        regressions = result["regressions"]
        extra.append(("report", "regressions", "PASS" if not regressions else "FAIL", result.get("runs", 0),
                      "-", regressions, "-", "-", "-", "-"))
        totals.failed += 1 if regressions else 0

    print("\n=== ktimers test summary ===")
    print_table(rows, extra)
    if skipped:
        print(f"not run, by their `arches` in kunit_configs/matrix: {' '.join(skipped)}")
    print_figures(run_figures)
    print_selftest_reports(runs, results_dir)
    for row, document in documents:
        print_details(row.arch, row.config, document)
        if document is None:
            print(f"[{row.arch}-{row.config}] {row.problems[0]}")
    for error in errors:
        print(f"error: {error}")
    if style:
        result = style_result or {}
        for name in result.get("failed_files", []):
            print(f"style: {name} has checkpatch/kernel-doc problems (run `make style`)")
        if result.get("error"):
            print(f"style: {result['error']}")
    if report:
        result = report_result or {}
        for line in result.get("lines", []):
            print(f"regression: {line}")
        if result.get("html"):
            print(f"report: {result['html']} (`make report` prints it again)")
        if "regressions" not in result:
            print("report: no regression report (the results database could not be read; see `make report`)")
    if tools_tests:
        for name in (tools_result or {}).get("failures", []):
            print(f"tools test failed: {name}")
    for line in steps.table(steps.load()):
        print(line)
    print(totals.closing_line(), flush=True)
    return totals, (1 if totals.failed else 0)
