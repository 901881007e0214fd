"""`make mutants`: mutation testing of the kernel sources. Would the tests notice a bug?

For one arch: check the tree (mutant_tree), run the configurations the chosen
mutants need on the unmutated tree (the baseline: it must pass), then per mutant
of the catalogue (mutant_catalogue): git apply it, run its configurations in
matrix order until one kills it (kunit_run.run_suites, in the same build dirs as
`make`, so a mutant recompiles one file), then, with `User: yes`, the project's
own user-space suite (the `own` group of selftests/plan, guest_selftests.run_arch)
on that kernel; ALWAYS take it out again. Judge each run (mutant_verdict), print
a line per mutant, and at the end the report (mutant_report): table, score,
build/results/mutants.json and the results database's mutant_results table.

The runs' logs go to build/mutants/<mutant>/<arch>-<config>/ (the baseline's to
build/mutants/baseline/), never to build/results/<arch>-<config>/, and are not
recorded as test runs: `make summary` and `make report` never see a mutant.
"""

import dataclasses
import shutil
import time
from pathlib import Path

from guest import selftests as guest_selftests, known_failures
from kunit import run as kunit_run, matrix
from mutants import report as mutant_report, tree as mutant_tree, verdict as mutant_verdict
from guest import plan as selftest_plan
from common import BUILD_DIR, KUNIT_BUILD_DIR, REPO_ROOT, RESULTS_DIR, ToolError, progress, rel
from common.git import git
from mutants.report import EQUIVALENT, ERROR, KILLED, SKIPPED, STALE, STILLBORN, SURVIVED, MutantRun, Result

WORK_DIR = BUILD_DIR / "mutants"
REPORT_NAME = "mutants.json"
BASELINE_NAME = "baseline"
DEFAULT_TIMEOUT = 600
PANIC_ARGS = ("oops=panic",)
OWN_GROUP = "own"               # selftests/plan: the project's own programs (kt_*) that run together
OWN_PREFIX = "kt_"              # the project's own programs, in that group or alone
USER = "user"                   # Result.config of a mutant the user-space suite decided
VERDICT_STATUS = {mutant_verdict.KILLED: KILLED, mutant_verdict.STILLBORN: STILLBORN,
                  mutant_verdict.ERROR: ERROR}


class KernelRunner:
    """Runs the tests on the kernel in the tree: a KUnit configuration with kunit_run.run_suites, the
    own user-space suite with guest_selftests.run_arch (which boots the `default` build dir's image)."""

    def __init__(self, tree, arch, timeout=DEFAULT_TIMEOUT, kunit_build_root=KUNIT_BUILD_DIR, jobs=None,
                 use_ccache=True, plan_path=selftest_plan.PLAN_FILE, known_path=known_failures.KNOWN_FILE):
        self.tree, self.arch, self.timeout = Path(tree), arch, timeout
        self.kunit_build_root, self.jobs, self.use_ccache = Path(kunit_build_root), jobs, use_ccache
        self.plan_path, self.known_path = Path(plan_path), Path(known_path)
        self.user_supported = guest_selftests.supported(arch)
        self.user_build = guest_selftests.KERNEL_BUILD

    def kunit(self, configuration, boot_only, results_root):
        return kunit_run.run_suites(self.tree, self.arch, config=panicking(configuration), timeout=self.timeout,
                                    jobs=self.jobs, use_ccache=self.use_ccache, results_root=results_root,
                                    kunit_build_root=self.kunit_build_root, boot_only=boot_only)

    def user(self, results_root):
        return guest_selftests.run_arch(self.tree, self.arch, own_plan(self.plan_path),
                                        known_failures.load(self.known_path), results_root=results_root,
                                        kunit_build_root=self.kunit_build_root)


def panicking(configuration):
    """The configuration booted with oops=panic: a mutant that oopses a test thread then ends the boot at
    once (panic=-1 reboots) instead of leaving the suites waiting for it until the timeout."""
    return dataclasses.replace(configuration, kernel_args=tuple(configuration.kernel_args) + PANIC_ARGS)


def own_plan(path=selftest_plan.PLAN_FILE):
    """selftests/plan cut down to the project's own suite: the tests of group `own`, and the other kt_*
    programs (kt_clock_step, which steps the clock and so runs alone), in plan order."""
    plan = selftest_plan.load(Path(path))
    if not any(test.group == OWN_GROUP for test in plan.tests):
        tests = ()
    else:
        tests = tuple(test for test in plan.tests if test.group == OWN_GROUP or test.name.startswith(OWN_PREFIX))
    if not tests:
        raise ToolError(f"{rel(plan.path)} has no test in group `{OWN_GROUP}`: `User: yes` mutants run the "
                        "project's own user-space suite, the kt_* programs of that group",
                        "restore the group in selftests/plan, or drop `User: yes` from the mutants")
    return dataclasses.replace(plan, tests=tests, left_out={})


# ---- which runs ------------------------------------------------------------------------------

def configurations_for(mutant, configurations, arch, user_runs=False, user_build="default"):
    """The configurations to run the mutant in, in matrix order, those of this arch only. A mutant whose
    user-space suite runs needs the `default` build dir built with it: if none of its configurations
    builds there, `default` is added (the guest boots that image)."""
    wanted = [configuration for configuration in configurations.values() if configuration.name in mutant.configs]
    chosen = [configuration for configuration in wanted if configuration.runs_on(arch)]
    if chosen and user_runs and mutant.user and not any(c.build_name == user_build for c in chosen):
        chosen += [c for c in configurations.values() if c.build_name == user_build][:1]
    return chosen


def check_configs(mutants, configurations, matrix_path):
    """Every configuration the mutants name must be in the matrix: one error naming the mutants that err."""
    errors = [f"{rel(mutant.path)}: unknown configuration {name!r}" for mutant in mutants
              for name in mutant.configs if name not in configurations]
    if errors:
        raise ToolError("\n".join(errors), f"{rel(matrix_path)} defines {', '.join(configurations)}; "
                                           "fix the mutant's `Configs:` line")


def union(plans, configurations):
    """The configurations any of the plans runs, once each, in matrix order."""
    names = {configuration.name for plan in plans for configuration in plan}
    return [configuration for configuration in configurations.values() if configuration.name in names]


def run_configurations(configurations, runner, results_root):
    """Yield (configuration, results document) per configuration, building each build dir once (the
    configurations after the first that share it only boot it)."""
    built = set()
    for configuration in configurations:
        build_dir = configuration.build_dir_name(runner.arch)
        document = runner.kunit(configuration, build_dir in built, results_root)
        if document.get("built"):
            built.add(build_dir)
        yield configuration, document


# ---- the baseline and one mutant --------------------------------------------------------------

def baseline_failure(label, document):
    problems = "; ".join(problem.splitlines()[0] for problem in document.get("problems", []))
    return ToolError(f"the baseline {label} on the unmutated tree is {document.get('status')}"
                     + (f" ({problems})" if problems else "") + ": a mutant run against a failing baseline "
                     "measures nothing", f"fix that first (`make quick`, `make kunit CONFIGS=...`, `make selftest`); "
                                         f"its console: {document.get('console_log')}")


def run_baseline(configurations, runner, results_root, user):
    """The unmutated tree must pass every configuration (and the user-space suite when a mutant needs it);
    returns the labels of the runs. This also brings the build dirs up to date."""
    shutil.rmtree(results_root, ignore_errors=True)
    labels = []
    for configuration, document in run_configurations(configurations, runner, results_root):
        label = configuration.results_name(runner.arch)
        if document.get("status") != "PASS":
            raise baseline_failure(label, document)
        labels.append(label)
    if user:
        document = runner.user(results_root)
        if document.get("status") != "PASS":
            raise baseline_failure(f"{runner.arch} own user-space suite", document)
        labels.append(f"{runner.arch}-{USER}")
    return labels


def examine(mutant, configurations, runner, results_root, user):
    """Run the applied mutant's configurations until one decides it, then the user-space suite; a Result."""
    for configuration, document in run_configurations(configurations, runner, results_root):
        outcome = mutant_verdict.outcome(document)
        if outcome.verdict != mutant_verdict.PASS:
            return Result(mutant, VERDICT_STATUS[outcome.verdict], outcome.killed_by, outcome.detail,
                          configuration.name)
    if user:
        outcome = mutant_verdict.outcome(runner.user(results_root), user=True)
        if outcome.verdict != mutant_verdict.PASS:
            return Result(mutant, VERDICT_STATUS[outcome.verdict], outcome.killed_by, outcome.detail, USER)
    if mutant.equivalent:
        return Result(mutant, EQUIVALENT, detail=mutant.equivalent)
    return Result(mutant, SURVIVED)


def judge(tree, mutant, configurations, runner, results_root, user):
    """Apply the mutant, examine it, and ALWAYS take it out again (also on errors and Ctrl-C): a Result.
    A tree that cannot be restored stops everything (mutant_tree.restore raises)."""
    start = time.monotonic()
    shutil.rmtree(results_root, ignore_errors=True)
    try:
        problem = mutant_tree.apply(tree, mutant)
        if problem:
            result = Result(mutant, STALE, detail=problem)
        else:
            result = examine(mutant, configurations, runner, results_root, user)
    except ToolError as error:
        result = Result(mutant, ERROR, detail=str(error))
    finally:
        mutant_tree.restore(tree, mutant)
    result.seconds = time.monotonic() - start
    if result.status not in (STALE, ERROR):
        result.results_dir = rel(results_root)
    if result.status == KILLED and mutant.equivalent:
        result.note = "killed although its header says `Equivalent:`: drop that line"
    elif result.status == KILLED and mutant.expect and not mutant_verdict.expected_killer(result.killed_by,
                                                                                          mutant.expect):
        result.note = f"killed, but not by what `Expect:` names ({' '.join(mutant.expect)})"
    return result


# ---- the whole run ------------------------------------------------------------------------------

def run_mutants(tree, arch, mutants, runner, configurations, work_dir=WORK_DIR, series_hash=None, on_result=None):
    """Baseline, then every mutant; returns the MutantRun. on_result(run) is called after each mutant, and
    once more when Ctrl-C or a tree that cannot be restored ends the loop (run.complete False); the
    exception then propagates."""
    tree, work_dir = Path(tree), Path(work_dir)
    run = MutantRun(arch, time.time(), series_hash=series_hash)
    mutant_tree.check(tree)
    run.tree_head = git(tree, "rev-parse", "HEAD").stdout.strip()
    user_runs = runner.user_supported
    plans = {mutant.id: configurations_for(mutant, configurations, arch, user_runs, runner.user_build)
             for mutant in mutants}
    if not user_runs and any(mutant.user for mutant in mutants):
        progress("mutants", "no user-space suite on this arch (tools/common/arches.py names no user-space compiler): "
                            "`User: yes` mutants run KUnit only", arch)
    needed = union(plans.values(), configurations)
    user_needed = user_runs and any(mutant.user and plans[mutant.id] for mutant in mutants)
    progress("mutants", f"baseline: the unmutated tree in {' '.join(c.name for c in needed) or 'no configuration'}"
                        + (" and the own user-space suite" if user_needed else ""), arch)
    run.baseline = run_baseline(needed, runner, work_dir / BASELINE_NAME, user_needed)
    try:
        for index, mutant in enumerate(mutants, 1):
            run.results.append(run_one(tree, arch, mutant, plans[mutant.id], runner, work_dir,
                                       f"[{index}/{len(mutants)}] {mutant.id}", user_runs and mutant.user))
            run.duration = time.time() - run.start
            if on_result:
                on_result(run)
    except BaseException:
        run.complete, run.duration = False, time.time() - run.start
        if on_result:
            on_result(run)
        raise
    return run


def run_one(tree, arch, mutant, plan, runner, work_dir, where, user):
    """One mutant between its two progress lines: a Result."""
    if not plan:
        result = Result(mutant, SKIPPED, detail=f"its configurations ({' '.join(mutant.configs)}) do not run on "
                                                f"{arch}")
    else:
        progress("mutants", f"{where}: {mutant.description} ({' '.join(c.name for c in plan)}"
                            f"{', user' if user else ''})", arch)
        result = judge(tree, mutant, plan, runner, work_dir / mutant.id, user)
    progress("mutants", f"{where}: {mutant_report.progress_text(result)}", arch)
    return result


def main(tree, arch, mutants, *, db, results_dir=RESULTS_DIR, work_dir=WORK_DIR,
         matrix_path=matrix.MATRIX_FILE, runner=None, series_hash=None, **runner_options):
    """`ktimers.py mutants`: run, print the report, write mutants.json and the database; the exit status."""
    configurations = matrix.load(Path(matrix_path)).configurations
    check_configs(mutants, configurations, matrix_path)
    runner = runner or KernelRunner(tree, arch, **runner_options)
    report_path = Path(results_dir) / REPORT_NAME
    report_path.unlink(missing_ok=True)     # never leave an earlier run's report behind a failed one

    def save(run):
        mutant_report.write(run, report_path)

    try:
        run = run_mutants(tree, arch, mutants, runner, configurations, work_dir,
                          series_hash or safe_series_hash(), on_result=save)
    except (KeyboardInterrupt, ToolError):
        if report_path.is_file():
            progress("mutants", f"stopped; the mutants done so far are in {rel(report_path)}", arch)
        raise
    for line in mutant_report.report_lines(run):
        print(line, flush=True)
    save(run)
    if mutant_report.record(run, db):
        progress("mutants", f"report: {rel(report_path)}; recorded in {rel(db)} (table mutant_results)", arch)
    return mutant_report.exit_code(run.results)


def safe_series_hash():
    return kunit_run.safe_series_hash(REPO_ROOT / "kernel")
