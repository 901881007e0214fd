"""The report of a mutant run: table, score, the lists to act on, mutants.json and the database rows.

Statuses: killed (a test noticed the mutant), survived (none did: a gap in the
tests, or an equivalent mutant not yet marked), equivalent (survived, and its
header says why no test can notice it), stale (its diff no longer applies),
stillborn (its kernel does not build), error (the run could not judge it),
skipped (none of its configurations runs on this arch).

    score = killed / (total - equivalent - stale - stillborn - error - skipped)
          = killed / (killed + survived)
"""

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path

from results import db as results_db
from common import ToolError, format_duration, rel, warn
from mutants.verdict import short

KILLED, SURVIVED, EQUIVALENT, STALE, STILLBORN, ERROR, SKIPPED = (
    "killed", "survived", "equivalent", "stale", "stillborn", "error", "skipped")
STATUSES = (KILLED, SURVIVED, EQUIVALENT, STALE, STILLBORN, ERROR, SKIPPED)
NOT_JUDGED = (EQUIVALENT, STALE, STILLBORN, ERROR, SKIPPED)
# Any of these makes the run exit 1: a gap in the tests, or a catalogue entry to fix.
TO_ACT_ON = (SURVIVED, STALE, STILLBORN, ERROR)
DESCRIPTION_WIDTH = 44
SECTIONS = (
    (SURVIVED, "survived (no test noticed them: add a test that does, or mark the mutant `Equivalent:` with the "
               "reason no test can)"),
    (STALE, "stale (the diff no longer applies to the tree: redo it against the current series)"),
    (STILLBORN, "stillborn (the mutated kernel does not build: fix the mutant)"),
    (ERROR, "error (the run could not judge the mutant)"),
    (SKIPPED, "skipped (none of its configurations runs on this arch)"),
    (EQUIVALENT, "equivalent (survived, as their header says they must)"),
)


@dataclass
class Result:
    mutant: object                                  # mutant_catalogue.Mutant
    status: str
    killed_by: list = field(default_factory=list)
    detail: str = ""                                # git's message, the compiler's complaint, the reason
    config: str = ""                                # the run that decided it: a configuration, or "user"
    seconds: float = 0.0
    results_dir: str = ""                           # where the logs of its runs are
    note: str = ""                                  # e.g. killed, but not by what `Expect:` names

    def killed_text(self):
        return short(self.killed_by) if self.killed_by else ""


@dataclass
class MutantRun:
    arch: str
    start: float                                    # epoch seconds
    results: list = field(default_factory=list)     # Result, in catalogue order
    tree_head: str = None
    series_hash: str = None
    baseline: list = field(default_factory=list)    # the runs of the unmutated tree: <arch>-<config>, ...
    duration: float = 0.0
    complete: bool = True                           # False: interrupted or stopped after these results

    @property
    def start_time(self):
        return datetime.datetime.fromtimestamp(self.start, datetime.timezone.utc).isoformat(timespec="seconds")

    @property
    def run_id(self):
        moment = datetime.datetime.fromtimestamp(self.start, datetime.timezone.utc)
        return f"mutants:{self.arch}-{moment.strftime('%Y%m%dT%H%M%SZ')}"


def counts(results):
    found = dict.fromkeys(STATUSES, 0)
    for result in results:
        found[result.status] += 1
    return found


def score(results):
    """(killed, judged): judged = every mutant but the equivalent, stale, stillborn, error and skipped ones."""
    found = counts(results)
    return found[KILLED], len(results) - sum(found[status] for status in NOT_JUDGED)


def score_text(results):
    killed, judged = score(results)
    if not judged:
        return "no mutant judged"
    return f"{killed}/{judged} killed ({100.0 * killed / judged:.1f}%)"


def exit_code(results):
    """0 when every mutant was killed (or is a known equivalent, or skipped), 1 otherwise."""
    return 1 if any(result.status in TO_ACT_ON for result in results) else 0


def progress_text(result):
    """The end of a mutant's progress line: 'killed by x (48s)', 'survived (61s)', ..."""
    what = f"killed by {result.killed_text()}" if result.status == KILLED else result.status
    if result.status == KILLED and result.config:
        what += f" [{result.config}]"
    return f"{what} ({format_duration(result.seconds)})"


def _cut(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def table_lines(results):
    rows = [("id", "description", "status", "killed by", "time")]
    rows += [(result.mutant.id, _cut(result.mutant.description, DESCRIPTION_WIDTH), result.status,
              result.killed_text(), format_duration(result.seconds)) for result in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths) + "  ----")
    return [line.rstrip() for line in lines]


def _section_line(result):
    line = f"  {result.mutant.id}: {result.mutant.description}"
    if result.status == SURVIVED and result.mutant.expect:
        line += f" (Expect: {' '.join(result.mutant.expect)})"
    if result.status == SURVIVED and result.results_dir:
        line += f"; logs: {result.results_dir}/"
    details = result.detail.splitlines()
    if len(details) == 1 and result.status != STILLBORN:
        return [f"{line}: {details[0]}"]
    return [line] + [f"      {detail}" for detail in details]


def report_lines(run):
    found = counts(run.results)
    summary = ", ".join(f"{found[status]} {status}" for status in STATUSES if found[status])
    lines = [f"mutants on {run.arch}: {len(run.results)} run ({summary or 'none'}) in "
             f"{format_duration(run.duration)}" + ("" if run.complete else " -- INCOMPLETE: the run stopped early")]
    lines += table_lines(run.results)
    for status, title in SECTIONS:
        chosen = [result for result in run.results if result.status == status]
        if chosen:
            lines.append(f"{title}:")
            for result in chosen:
                lines += _section_line(result)
    notes = [result for result in run.results if result.note]
    if notes:
        lines.append("notes:")
        lines += [f"  {result.mutant.id}: {result.note}" for result in notes]
    lines.append(f"score: {score_text(run.results)} = killed / (total {len(run.results)} - equivalent "
                 f"{found[EQUIVALENT]} - stale {found[STALE]} - stillborn {found[STILLBORN]} - error {found[ERROR]}"
                 f" - skipped {found[SKIPPED]})")
    return lines


def document(run):
    """mutants.json: the run, the score and one entry per mutant."""
    killed, judged = score(run.results)
    return {
        "schema": 1,
        "kind": "mutants",
        "arch": run.arch,
        "start_time": run.start_time,
        "duration_s": round(run.duration, 1),
        "complete": run.complete,
        "tree_head": run.tree_head,
        "series_hash": run.series_hash,
        "baseline": run.baseline,
        "counts": counts(run.results),
        "killed": killed,
        "judged": judged,
        "score": round(killed / judged, 4) if judged else None,
        "mutants": [{"id": result.mutant.id, "description": result.mutant.description,
                     "file": rel(result.mutant.path), "configs": list(result.mutant.configs),
                     "user": result.mutant.user, "equivalent": result.mutant.equivalent or None,
                     "expect": list(result.mutant.expect), "status": result.status,
                     "killed_by": result.killed_by, "decided_by": result.config or None,
                     "detail": result.detail, "note": result.note, "seconds": round(result.seconds, 1),
                     "results_dir": result.results_dir or None} for result in run.results],
    }


def write(run, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document(run), indent=1) + "\n")


def db_rows(run):
    """The run's rows of results_db's mutant_results table."""
    return [{"run_id": run.run_id, "run_time": run.start_time, "tree_head": run.tree_head,
             "series_hash": run.series_hash, "arch": run.arch, "mutant": result.mutant.id,
             "description": result.mutant.description, "status": result.status,
             "killed_by": ", ".join(result.killed_by) or None, "decided_by": result.config or None,
             "seconds": round(result.seconds, 1), "detail": result.detail or None}
            for result in run.results]


def record(run, db_path):
    """Add the run to the results database; a database that cannot be written only warns."""
    try:
        results_db.write_mutant_results(db_path, db_rows(run))
    except ToolError as error:
        warn(f"the mutant run was not recorded in the results database: {error}")
        return False
    return True
