"""The two-column report of one arch's guest selftests, and its results.json for results/summary.py.

build/results/<arch>-selftests/ gets report.txt (the table below), results.json
(the same shape as a KUnit run's: status, counts, suites with one case per test
and column, problems, findings) and the two consoles, console-ktimer.log and
console-hrtimer.log.
"""

from common import format_duration, rel
from guest.compare import OFF, ON

SUITE_NAMES = {ON: "timer selftests, ktimer path (ktimer.users=1)",
               OFF: "timer selftests, hrtimer path (ktimer.users=0)"}


def cell_text(cell):
    if cell is None:
        return "-"
    text = cell.status
    if cell.seconds is not None:
        text += f" {cell.seconds:.0f}s"
    if cell.status not in ("PASS", "SKIP") and cell.how and not cell.how.startswith("exit"):
        text += f" ({cell.how})"
    return text


def counters_text(raw):
    return raw.get("after") or "unavailable"


def report_lines(comparison, counters_raw, boots, problems=None):
    """The table: test | ktimer path | hrtimer path | note, then counters, measured values, problems
    (default: the comparison's; the caller adds a crashed or hung boot and kernel log findings)."""
    header = ("test", "ktimer path", "hrtimer path", "note")
    table = [header]
    for row in comparison.rows:
        table.append((row.test, cell_text(row.on), cell_text(row.off), row.note))
    widths = [max(len(line[i]) for line in table) for i in range(3)]
    lines = [f"timer selftests in the guest, {comparison.arch}: one kernel image booted twice "
             f"(ktimer path {format_duration(boots[ON])}, hrtimer path {format_duration(boots[OFF])})"]
    for index, line in enumerate(table):
        lines.append(("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line[:3])) + "  " + line[3]).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths) + "  ----")
    lines.append(f"debugfs after the tests: ktimer path `{counters_text(counters_raw[ON])}`, "
                 f"hrtimer path `{counters_text(counters_raw[OFF])}`")
    for row in comparison.rows:
        if row.verdict in ("KNOWN", "FAIL"):
            for column, cell in ((ON, row.on), (OFF, row.off)):
                measured = cell.measured() if cell else []
                if cell and cell.status != "PASS" and measured:
                    lines.append(f"  {row.test} [{column} path] measured: " + " | ".join(measured))
    for problem in comparison.problems if problems is None else problems:
        lines.append(f"error: {problem}")
    return lines


def case(row, column, cell, console):
    """One KUnit-style case for results/summary.py: a known failure counts as SKIP, everything else as it ran."""
    status = cell.status if cell else "MISS"
    if row.verdict == "KNOWN" and status != "PASS":
        status = "SKIP"
    log = [[number, text] for number, text in (cell.numbered_output() if cell else [])]
    return {"name": row.test, "status": status, "note": row.note, "how": cell.how if cell else "",
            "seconds": cell.seconds if cell else None, "log": log if status in ("FAIL", "ERROR") else [],
            "measured": cell.measured() if cell else [], "console": console}


def results_document(comparison, runs, boots, consoles, findings, plan_path, status, problems, duration,
                     config="selftests"):
    """config: what the results database files the run under: `selftests` for the default image,
    `selftests-<configuration>` for another (never mixed with the gate's runs)."""
    suites = []
    for column in (ON, OFF):
        children = []
        for row in comparison.rows:
            if row.verdict == "NOT_RUN":
                continue
            if row.verdict == "NOT_BUILT":
                children.append({"name": row.test, "status": "MISS", "note": row.note, "log": []})
                continue
            children.append(case(row, column, row.on if column == ON else row.off, rel(consoles[column])))
        bad = [c for c in children if c["status"] in ("FAIL", "ERROR", "MISS")]
        suites.append({"name": SUITE_NAMES[column], "status": "FAIL" if bad else "PASS", "children": children,
                       "log": [], "errors": []})
    return {
        "schema": 1,
        "kind": "selftests",
        "arch": comparison.arch,
        "config": config,
        "status": status,
        "counts": comparison.counts(),
        "suites": suites,
        "problems": problems,
        "findings": findings,
        "duration_s": round(duration, 1),
        "boots_s": {column: round(seconds, 1) for column, seconds in boots.items()},
        "console_log": rel(consoles[ON]),
        "consoles": {column: rel(path) for column, path in consoles.items()},
        "counters": {column: runs[column].counters for column in (ON, OFF)},
        "kernel": runs[ON].kernel,
        "plan": rel(plan_path),
        "not_run": {row.test: row.note for row in comparison.rows if row.verdict == "NOT_RUN"},
        "rows": [{"test": row.test, "verdict": row.verdict, "note": row.note,
                  ON: row.on.to_dict() if row.on else None, OFF: row.off.to_dict() if row.off else None}
                 for row in comparison.rows],
    }
