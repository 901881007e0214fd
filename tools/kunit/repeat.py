"""`make repeat`: boot one configuration many times in a row and state a failure rate.

A rare lost wake-up shows once in tens of boots: one run says nothing about it.
This boots the configuration's kernel (built once, then `kunit.py exec`) `boots`
times, one boot after the other, through kunit/run.py (same parser, log scan and
verdict as `make`); guest/repeat.py does the same with the guest programs
(`make repeat SELFTESTS=1`). A boot that does not pass keeps its consoles and results.json under
build/findings/repeat/<label>-<UTC start>/boot-<n>/; a passing one keeps
nothing. The summary (printed, and in build/results/<label>-repeat.json)
gives the boots run, those that did not pass with their verdict and first
problem, the boot times, the rate with its 95% upper bound, and the deepest
kernel stack of all boots per column (DEBUG_STACK_USAGE, common/stack_usage.py).
"""

import json
import shutil
import statistics
import time
from pathlib import Path

from kunit import run as kunit_run
from common import stack_usage
from common import BUILD_DIR, RESULTS_DIR, format_duration, progress, rel

FINDINGS_DIR = BUILD_DIR / "findings" / "repeat"
KUNIT_FILES = ("console.log", "results.json", "kunit-parser.txt")


def upper_bound_95(failures, boots):
    """One-sided 95% upper bound of a rate seen `failures` times in `boots` (Clopper-Pearson for 0,
    the 'rule of three' 3/n; otherwise a normal approximation, floored at the observed rate)."""
    if boots <= 0:
        return 1.0
    if failures == 0:
        return min(1.0, 1 - 0.05 ** (1 / boots))
    rate = failures / boots
    return min(1.0, rate + 1.645 * (rate * (1 - rate) / boots) ** 0.5)


def keep_failure(result_dir, findings_dir, boot, names=KUNIT_FILES):
    """Copy a failed boot's consoles and results out of the reused results dir."""
    target = Path(findings_dir) / f"boot-{boot:03d}"
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (Path(result_dir) / name).is_file():
            shutil.copyfile(Path(result_dir) / name, target / name)
    return target


def failed_tests(nodes, prefix=""):
    """The deepest failed entries of a KUnit results tree: suite.case or suite.case.parameter."""
    found = []
    for node in nodes or ():
        name = f"{prefix}{node.get('name')}"
        if node.get("status") in ("FAIL", "ERROR"):
            found += failed_tests(node.get("children"), name + ".") or [name]
    return found


def first_problem(document):
    problems = document.get("problems") or []
    findings = document.get("findings") or []
    failed = failed_tests(document.get("suites"))
    if problems:
        return problems[0]
    if findings:
        return f"{findings[0].get('kind')}: {findings[0].get('text')}"
    if failed:
        return f"failed: {', '.join(failed)}"
    return document.get("status", "?")


def summary(arch, config, boots_done, planned, failures, seconds, deepest_stacks=None):
    bound = upper_bound_95(len(failures), boots_done)
    return {
        "arch": arch, "config": config, "boots_planned": planned, "boots": boots_done,
        "passed": boots_done - len(failures), "failures": failures,
        "boot_seconds": {"median": round(statistics.median(seconds), 1) if seconds else None,
                         "max": round(max(seconds), 1) if seconds else None},
        "rate": len(failures) / boots_done if boots_done else None, "rate_upper_95": bound,
        "deepest_stack": deepest_stacks or {},
    }


def summary_line(doc):
    failed = len(doc["failures"])
    return (f"{doc['boots']} boot(s) of {doc['config']} on {doc['arch']}: {doc['passed']} passed, {failed} did not; "
            f"rate {failed}/{doc['boots']}, below {doc['rate_upper_95']:.1%} with 95% confidence; "
            f"boot median {doc['boot_seconds']['median']} s, max {doc['boot_seconds']['max']} s"
            + "".join(f"; deepest stack {column}: {record['used']} B used by {record['task']} (boot {record['boot']})"
                      for column, record in sorted(doc.get("deepest_stack", {}).items())))


class DeepestStacks:
    """The deepest DEBUG_STACK_USAGE record of all boots, per console (column)."""

    def __init__(self):
        self.records = {}

    def add(self, column, console, boot):
        if not Path(console).is_file():
            return
        record = stack_usage.deepest(Path(console).read_text(errors="replace").splitlines())
        best = self.records.get(column)
        if record and (best is None or record.used > best["used"]):
            self.records[column] = dict(record.to_dict(), boot=boot)


def repeat(tree, arch, configuration, boots, timeout, results_root=RESULTS_DIR, findings_root=FINDINGS_DIR,
           run_suites=kunit_run.run_suites, **run_options):
    """Boot `configuration` `boots` times on `arch`; returns the summary document.

    The first boot builds (incrementally) if needed; the others only boot what it built, and build again
    while no boot has built: a failed build never leaves them an older kernel of the build dir to boot."""
    label = configuration.results_name(arch)
    work_root = Path(results_root) / f"{label}-repeat.boots"
    built = []

    def boot_once(boot, stacks):
        document = run_suites(tree, arch, configuration, timeout=timeout, results_root=work_root,
                              boot_only=bool(built), **run_options)
        if document.get("built"):
            built.append(boot)
        stacks.add("kunit", work_root / label / "console.log", boot)
        # the first boot's time includes its (incremental) build
        return document, (document.get("duration_s") or 0) - (document.get("build_duration_s") or 0)

    return repeat_boots(arch, configuration.name, label, boots, boot_once, work_root / label, KUNIT_FILES,
                   results_root, findings_root)


def repeat_boots(arch, config_name, label, boots, boot_once, result_dir, kept_files, results_root, findings_root):
    """Call boot_once(boot, stacks) `boots` times; it returns (results document, seconds) and adds its consoles
    to `stacks`. Keeps `kept_files` of result_dir for each boot that does not pass; returns the summary."""
    findings_dir = Path(findings_root) / f"{label}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    failures, seconds, stacks = [], [], DeepestStacks()
    out = Path(results_root) / f"{label}-repeat.json"
    start = time.time()
    for boot in range(1, boots + 1):
        document, boot_seconds = boot_once(boot, stacks)
        seconds.append(boot_seconds)
        if document.get("status") != "PASS":
            kept = keep_failure(result_dir, findings_dir, boot, kept_files)
            failures.append({"boot": boot, "status": document.get("status"), "problem": first_problem(document),
                             "kept": rel(kept)})
            progress("repeat", f"boot {boot}: {document.get('status')}: {first_problem(document)}; "
                               f"console kept in {rel(kept)}", label)
        elapsed = time.time() - start
        left = elapsed / boot * (boots - boot)
        progress("repeat", f"boot {boot}/{boots}: {document.get('status')}; {len(failures)} not passed so far "
                           f"({format_duration(elapsed)} elapsed, about {format_duration(left)} left)", label)
        # after every boot: a run stopped early still leaves its count
        doc = summary(arch, config_name, boot, boots, failures, seconds, stacks.records)
        out.write_text(json.dumps(doc, indent=1) + "\n")
    progress("repeat", summary_line(doc) + f"; {rel(out)}", label)
    return doc
