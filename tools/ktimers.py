#!/usr/bin/env python3
"""ktimers tooling: one command line for everything the Makefile does.

    ktimers.py deps [ARCH...]          install missing Debian packages
    ktimers.py pin [--write]           check kernel/base.pin (or rewrite it from the installed package)
    ktimers.py tree                    extract the pinned kernel into build/linux (once)
    ktimers.py apply [--force|--hash]  apply kernel/series as commits on branch ktimers
    ktimers.py import [--rev REV]      rewrite kernel/series from the commits base..REV in the tree
    ktimers.py series [--out DIR]      git format-patch the applied series with a cover letter (build/series)
    ktimers.py series-check            per patch: checkpatch, kernel-doc, i386 builds with ktimers on and off
    ktimers.py kunit ARCH...           build + boot + run KUnit per arch and configuration, write results.json
    ktimers.py summary ARCH...         table of results, closing `N passed, N failed`
    ktimers.py matrix                  list the test configurations (kunit_configs/matrix)
    ktimers.py style [ARCH...]         checkpatch + kernel-doc on kernel/, sparse + W=1 per arch
    ktimers.py tools-test              the tools' own unit tests
    ktimers.py selftest ARCH...        the kernel's timer selftests in the guest, ktimer path on and off
    ktimers.py repeat ARCH...          boot one configuration many times: failure rate, consoles kept
    ktimers.py bench ARCH...           the boot-time benchmark: ktimers vs hrtimers vs timer_list, table and plot
    ktimers.py breaks ARCH...          the own user-space programs with every expectation inverted: all fail?
    ktimers.py mutants [--only ID...]  mutation testing: does a test notice each mutant of mutants/? (--list)
    ktimers.py record [RUN...]         add build/results/<arch>-<config>/ runs to the results database
    ktimers.py report ARCH...          latest runs vs the previous ones and the baseline; HTML page
    ktimers.py baseline ARCH...        rewrite results/baseline.json from the latest recorded runs
    ktimers.py export-kcidb            the results database as KCIDB v4 JSON

Every kunit and selftest run is recorded in the results database
(build/results/results.sqlite, or $KTIMERS_RESULTS_DB, or --db); see docs/results.md.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common.arches import ARCHES, DEFAULT_ARCHES, get_arch  # noqa: E402
from results.baseline import BASELINE_FILE  # noqa: E402
from common import (BUILD_DIR, DEFAULT_TREE, KUNIT_BUILD_DIR, PIN_FILE, REPO_ROOT, RESULTS_DIR, ToolError,  # noqa: E402
                    progress, rel)
from guest.known_failures import KNOWN_FILE as KNOWN_FAILURES  # noqa: E402
from kunit.matrix import MATRIX_FILE  # noqa: E402
from guest.plan import PLAN_FILE as SELFTEST_PLAN  # noqa: E402


def cmd_deps(args):
    from setup import deps
    for arch in args.arches:
        get_arch(arch)
    deps.ensure(args.arches)


def cmd_pin(args):
    from setup import pin, tree
    if args.write:
        pin.repin(PIN_FILE)
        return
    result = pin.check(PIN_FILE, cache_file=tree.tarball_cache_file(args.tree))
    if not result.warnings:
        progress("pin", f"{result.pin.package} {result.installed_version} matches {rel(PIN_FILE)}")


def cmd_tree(args):
    from setup import pin, tree
    result = pin.check(PIN_FILE, cache_file=tree.tarball_cache_file(args.tree))
    tree.ensure(Path(args.tree), result)


def cmd_apply(args):
    from series import store as series
    if args.hash:
        print(series.series_hash())
        return
    series.apply(Path(args.tree), force=args.force)


def cmd_import(args):
    from series import importer as series_import
    series_import.import_series(Path(args.tree), rev=args.rev)


def cmd_series(args):
    from series import export as series_export
    files = series_export.export(Path(args.tree), out_dir=Path(args.out))
    progress("series", f"{len(files) - 1} patches and the cover letter in {rel(Path(args.out))}/; "
                       f"send with `git send-email --to=... {rel(Path(args.out))}/*.patch`")


def cmd_series_check(args):
    from series import check as series_check
    builds = [] if args.builds == "none" else [b for b in args.builds.split(",") if b]
    for name in builds:
        if name not in series_check.BUILDS:
            raise ToolError(f"unknown build {name!r}", f"use {','.join(series_check.BUILDS)} or none")
    first, _, last = args.patches.partition("-")
    try:
        first, last = (int(first) if first else 1), (int(last) if last else None)
    except ValueError:
        raise ToolError(f"--patches {args.patches!r}: expected N or A-B, e.g. 3-5") from None
    if args.patches and "-" not in args.patches:
        last = first
    results, maintainers = series_check.check(Path(args.tree), builds=builds, first=first, last=last,
                                              jobs=args.jobs, use_ccache=not args.no_ccache)
    return 1 if maintainers or not all(result.ok for result in results) else 0


def selected_configurations(args):
    """The matrix configurations named by --config (repeatable), else the matrix's defaults."""
    from kunit import matrix
    return matrix.load(Path(args.matrix)).select(args.config)


def keep_going(label, failed, run, args=None):
    """run() -> a results document; a failed run or a ToolError adds label to failed.

    One run's setup problem must not hide the other runs' results: the error is
    printed and the loop goes on. With args, the run is recorded in the results
    database (a failure to record only warns). Returns the document, or None after a ToolError."""
    try:
        document = run()
    except ToolError as error:
        print(f"error: [{label}] {error}", file=sys.stderr, flush=True)
        failed.append(label)
        return None
    if document["status"] != "PASS":
        failed.append(label)
    if args is not None:
        from results import record
        record.record_quietly(Path(args.results_dir) / label, database(args), Path(args.tree), document)
    return document


def database(args):
    from results import db as results_db
    return results_db.db_path(getattr(args, "db", None), getattr(args, "results_dir", RESULTS_DIR))


def run_configurations(args, arches, configurations, run_one, failed, built=None):
    """Per arch, a plan line, then each configuration that runs on it, in matrix order, through keep_going
    (so each run is recorded). run_one(arch, configuration, boot_only) -> results document; boot_only is
    True when another configuration built the same build dir earlier in this invocation. built: the build
    dirs built so far, kept by a caller that calls this more than once (bench's boots); it gains this call's."""
    for arch in arches:
        plan = []
        planned = set()
        for configuration in configurations:
            if not configuration.runs_on(arch):
                plan.append(f"{configuration.name} (not on {arch}: arches = {' '.join(configuration.arches)})")
                continue
            build_dir = configuration.build_dir_name(arch)
            plan.append(f"{configuration.name} ({'boots' if build_dir in planned else 'builds'} {build_dir})")
            planned.add(build_dir)
        progress("kunit", "plan: " + ", ".join(plan), arch)
    # Per arch, configurations in matrix order: a build dir another configuration shares is built
    # once, then only booted again (kunit.py exec) while it is warm.
    built = set() if built is None else built
    for arch in arches:
        for configuration in configurations:
            if not configuration.runs_on(arch):
                continue
            label = configuration.results_name(arch)
            build_dir = configuration.build_dir_name(arch)
            document = keep_going(label, failed, lambda: run_one(arch, configuration, build_dir in built), args)
            if document and document.get("built"):
                built.add(build_dir)


def run_options(args):
    """The kunit_run.run_suites arguments `kunit` and `bench` take from the command line."""
    return {"timeout": args.timeout, "jobs": args.jobs, "use_ccache": not args.no_ccache,
            "results_root": Path(args.results_dir), "kunit_build_root": Path(args.kunit_build_dir)}


def cmd_kunit(args):
    from kunit import run as kunit_run
    failed = []
    for arch in args.arches:
        get_arch(arch)  # reject typos before a long build
    run_configurations(args, args.arches, selected_configurations(args), lambda arch, configuration, boot_only:
                       kunit_run.run_suites(Path(args.tree), arch, config=configuration, expect=args.expect_suites,
                                            boot_only=boot_only, **run_options(args)), failed)
    if failed:
        return 1


def cmd_repeat(args):
    from kunit import matrix, repeat
    if args.boots < 1:
        raise ToolError(f"--boots {args.boots}: at least one boot is needed", "use BOOTS=1 or more")
    configuration = matrix.load(Path(args.matrix)).get(args.config)
    failed = False
    for arch in args.arches:
        get_arch(arch)
    if args.programs and not args.selftests:
        raise ToolError("--programs names guest programs: it needs --selftests", "add SELFTESTS=1")
    if args.selftests:
        from guest import known_failures, plan as selftest_plan, repeat as guest_repeat
        plan = selftest_plan.load(Path(args.plan))
        plan = plan.only(args.programs.split()) if args.programs else plan
        known = known_failures.load(Path(args.known))
    for arch in args.arches:
        if not configuration.runs_on(arch):
            progress("repeat", f"not run: configuration {configuration.name} does not run on this arch", arch)
            continue
        if args.selftests:
            document = guest_repeat.repeat_selftests(Path(args.tree), arch, configuration, plan, known, args.boots,
                                               timeout=args.timeout, results_root=Path(args.results_dir))
        else:
            document = repeat.repeat(Path(args.tree), arch, configuration, args.boots,
                                     **dict(run_options(args), timeout=args.timeout or 600))
        failed = failed or bool(document["failures"])
    return 1 if failed else None


def cmd_bench(args):
    from bench import run as bench_run
    from kunit import matrix
    for arch in args.arches:
        get_arch(arch)
    configurations = matrix.load(Path(args.matrix)).select([name for name, _ in bench_run.CONFIGS])
    if args.boots < 1:
        raise ToolError(f"--boots {args.boots}: at least one boot is needed", "use BOOTS=1 or more")
    unfinished = []
    for arch in args.arches:
        if not args.report_only:
            bench_run.forget_boots(arch, Path(args.results_dir))
            # Boots after the first only boot what the first built: never an older kernel the build dir holds.
            built = set()
            for index in range(1, args.boots + 1):
                if index > 1 and not built:
                    progress("bench", f"boot 1 built no kernel (see above): boots {index}-{args.boots} not run",
                             arch)
                    break
                if args.boots > 1:
                    progress("bench", f"boot {index} of {args.boots}", arch)
                run_configurations(args, [arch], configurations,
                                   lambda arch, configuration, boot_only: bench_run.boot(
                                       Path(args.tree), arch, configuration, boot_only=boot_only,
                                       index=index, **run_options(args)), [], built)
        if not bench_run.report(arch, Path(args.results_dir)):
            unfinished.append(arch)
    if unfinished:
        print(f"bench: {' '.join(unfinished)}: a boot did not finish the benchmark (crash, timeout, build error "
              "or no benchmark in the kernel): see the boot lines above", file=sys.stderr, flush=True)
        return 1


def cmd_selftest(args):
    """Each arch's two columns boot side by side, and the arches side by side too: four guests that sleep
    for most of their run (--one-at-a-time: one boot after the other)."""
    from concurrent.futures import ThreadPoolExecutor
    from common import steps
    from guest import selftests as guest_selftests, known_failures, plan as selftest_plan
    from kunit import matrix
    for arch in args.arches:
        get_arch(arch)
    plan = selftest_plan.load(Path(args.plan), full=args.full)
    known = known_failures.load(Path(args.known))
    configuration = matrix.load(Path(args.matrix)).get(args.config)
    arches = []
    for arch in args.arches:
        if not configuration.runs_on(arch):
            progress("selftest", f"not run: configuration {configuration.name} does not run on this arch", arch)
        elif not guest_selftests.supported(arch):
            progress("selftest", "not run: tools/common/arches.py names no user-space compiler for this arch", arch)
        else:
            arches.append(arch)
    side_by_side = not args.one_at_a_time
    parent = "selftests" if side_by_side and len(arches) > 1 else None

    def run(arch):
        return guest_selftests.run_arch(
            Path(args.tree), arch, plan, known, timeout=args.timeout, results_root=Path(args.results_dir),
            configuration=configuration, side_by_side=side_by_side, step_parent=parent)
    start = time.time()
    with ThreadPoolExecutor(max_workers=len(arches) if parent else 1) as pool:
        futures = {arch: pool.submit(run, arch) for arch in arches}
        failed = []
        # recorded one after the other, in arch order, as each finishes
        for arch in arches:
            keep_going(guest_selftests.results_name(arch, configuration.name), failed, futures[arch].result, args)
    if parent:
        steps.record(parent, time.time() - start, f"{' and '.join(arches)} side by side")
    if failed:
        return 1


def cmd_breaks(args):
    from guest import breaks, plan as selftest_plan, selftests as guest_selftests
    plan = selftest_plan.load(Path(args.plan))
    failed = []
    for arch in args.arches:
        get_arch(arch)
    for arch in args.arches:
        if not guest_selftests.supported(arch):
            progress("breaks", "not run: tools/common/arches.py names no user-space compiler for this arch", arch)
            continue
        keep_going(f"{arch}-{breaks.RESULTS_NAME}", failed, lambda: breaks.run_arch(
            Path(args.tree), arch, plan, results_root=Path(args.results_dir), timeout=args.timeout))
    if failed:
        return 1


def cmd_mutants(args):
    from mutants import catalogue as mutant_catalogue, run as mutants
    chosen = mutant_catalogue.select(mutant_catalogue.load(Path(args.mutants_dir)), args.only)
    if args.list:
        for line in mutant_catalogue.describe(chosen):
            print(line)
        return 0
    get_arch(args.arch)
    return mutants.main(Path(args.tree), args.arch, chosen, db=database(args), results_dir=Path(args.results_dir),
                        work_dir=Path(args.work_dir), matrix_path=Path(args.matrix), timeout=args.timeout,
                        kunit_build_root=Path(args.kunit_build_dir), jobs=args.jobs, use_ccache=not args.no_ccache)


def selected_runs(args, configurations):
    """(arch, configuration name) per arch and configuration that runs on it, then (arch, 'selftests')
    per arch the guest selftests support when --selftests: the rows of summary, report and baseline."""
    runs = [(arch, configuration.name) for arch in args.arches for configuration in configurations
            if configuration.runs_on(arch)]
    if args.selftests:
        from guest import selftests as guest_selftests
        runs += [(arch, guest_selftests.RESULTS_NAME) for arch in args.arches if guest_selftests.supported(arch)]
    return runs


def cmd_summary(args):
    from results import summary
    errors = []
    try:
        configurations = selected_configurations(args)
    except ToolError as error:
        # Still print the table and the closing line (CI reads it); the broken matrix counts as failed.
        configurations, errors = [], [str(error)]
    runs = selected_runs(args, configurations)
    skipped = [configuration.results_name(arch) for arch in args.arches for configuration in configurations
               if not configuration.runs_on(arch)]
    _, code = summary.summarize(runs, results_dir=Path(args.results_dir), tools_tests=args.tools_tests,
                                style=args.style, errors=errors, skipped=skipped, report=args.report)
    return code


def cmd_record(args):
    from results import record
    record.record_all(Path(args.results_dir), database(args), Path(args.tree), names=args.runs or None)


def cmd_report(args):
    from results import report, db as results_db
    for arch in args.arches:
        get_arch(arch)
    db = database(args)
    html = Path(args.html) if args.html else results_db.store_dir(db).parent / "report.html"
    runs = None if args.all else selected_runs(args, selected_configurations(args))
    return report.run_report(db, Path(args.baseline), args.arches, runs, html=html, record_path=args.record)


def cmd_baseline(args):
    from results import baseline, db as results_db
    from contextlib import closing
    for arch in args.arches:
        get_arch(arch)
    runs = selected_runs(args, selected_configurations(args))
    with closing(results_db.connect(database(args))) as connection:
        baseline.update(connection, runs, Path(args.baseline))


def cmd_export_kcidb(args):
    from results import kcidb, db as results_db
    db = database(args)
    output = args.output or str(results_db.store_dir(db).parent / "kcidb.json")
    kcidb.write(db, output, latest_only=args.latest, base_url=args.log_base_url)


def cmd_matrix(args):
    from kunit import matrix
    for line in matrix.describe(matrix.load(Path(args.matrix))):
        print(line)


def cmd_footprint(args):
    from kunit import footprint
    for build_dir in args.build_dirs:
        for line in footprint.lines(Path(build_dir), top=args.top, depth=args.depth):
            print(line)


def cmd_style(args):
    from series import compile_check, style
    try:
        reports = style.check(Path(args.tree))
        for arch, lines in compile_check.check(Path(args.tree), args.arches).items():
            reports.append(style.FileReport(f"sparse + W=1 ({arch})", lines))
    except ToolError as error:
        if args.record:
            style.record([], args.record, error=str(error))
        raise
    if args.record:
        style.record(reports, args.record)
    bad = [r for r in reports if not r.ok]
    if bad:
        print(f"style: {len(bad)} of {len(reports)} file(s) have problems", file=sys.stderr)
        return 1
    if reports:
        progress("style", f"all {len(reports)} file(s) clean")


def cmd_tools_test(args):
    from common import tools_tests
    counts = tools_tests.run_tests(args.record, verbosity=1 if args.quiet else 2)
    return 1 if counts["failed"] or counts["errors"] else 0


def build_parser():
    parser = argparse.ArgumentParser(prog="ktimers.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, func, help_text, tree=False):
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(func=func)
        if tree:
            command.add_argument("--tree", default=str(DEFAULT_TREE), help="kernel tree (default build/linux)")
        return command

    arch_help = f"architectures ({', '.join(ARCHES)}); default: {' '.join(DEFAULT_ARCHES)}"
    command = add("deps", cmd_deps, "install the Debian packages needed for the given arches")
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)

    command = add("pin", cmd_pin, "check kernel/base.pin against the installed package", tree=True)
    command.add_argument("--write", action="store_true", help="rewrite base.pin from the installed package")

    add("tree", cmd_tree, "extract the pinned kernel tarball into the tree (once)", tree=True)

    command = add("apply", cmd_apply, "apply kernel/series to the tree on branch ktimers", tree=True)
    command.add_argument("--force", action="store_true", help="discard local modifications in the tree")
    command.add_argument("--hash", action="store_true", help="only print the series hash")

    command = add("import", cmd_import, "rewrite kernel/ (series, patches, added files) from the commits "
                                        "base..REV in the tree", tree=True)
    command.add_argument("--rev", default="HEAD", help="last commit of the series (default HEAD)")

    command = add("series", cmd_series, "export the applied series with git format-patch --cover-letter",
                  tree=True)
    command.add_argument("--out", default=str(BUILD_DIR / "series"), help="output directory (default build/series)")

    command = add("series-check", cmd_series_check, "export the series, then per patch: checkpatch --strict, "
                  "kernel-doc, and i386 builds with CONFIG_KTIMERS=y and =n", tree=True)
    command.add_argument("--builds", default="ktimers,stock",
                         help="comma-separated builds per patch: ktimers (the default kunitconfig), stock "
                              "(tinyconfig, KTIMERS off); `none` for the static checks only")
    command.add_argument("--patches", default="", help="only these patches: N or A-B (default: all)")
    command.add_argument("--jobs", type=int, default=None, help="make -j (default: number of CPUs)")
    command.add_argument("--no-ccache", action="store_true", help="do not compile through ccache")

    def add_configs(command):
        command.add_argument("--config", action="append", metavar="NAME",
                             help="a configuration of kunit_configs/matrix (repeatable; default: those with "
                                  "by_default = yes)")
        command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)

    command = add("kunit", cmd_kunit, "build, boot and run the KUnit suites per arch and configuration",
                  tree=True)
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    add_configs(command)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--timeout", type=int, default=1200, help="seconds for the tests to run (default 1200)")
    command.add_argument("--jobs", type=int, default=None, help="make -j (default: number of CPUs)")
    command.add_argument("--no-ccache", action="store_true", help="do not compile through ccache")
    command.add_argument("--expect-suites", default="auto",
                         help="suites that must report: auto (every kunit_suite in kernel/**/*.c), "
                              "none, or a comma-separated list")

    command = add("bench", cmd_bench, "the boot-time benchmark per arch: build the production-like `bench` "
                                      "kernel, boot it with each engine, print and write the figures (never "
                                      "pass/fail; see docs/running.md#benchmarks)", tree=True)
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--timeout", type=int, default=3600, help="seconds per boot (default 3600)")
    command.add_argument("--jobs", type=int, default=None, help="make -j (default: number of CPUs)")
    command.add_argument("--no-ccache", action="store_true", help="do not compile through ccache")
    command.add_argument("--report-only", action="store_true",
                         help="no build or boot: report the consoles of the last run again")
    command.add_argument("--boots", type=int, default=5,
                         help="boots per configuration (default 5); ratios: median and range over them")

    command = add("repeat", cmd_repeat, "boot one configuration BOOTS times in a row on each arch; keep the "
                                        "consoles of the boots that do not pass, state the rate", tree=True)
    command.add_argument("arches", nargs="*", default=["i386"], help=arch_help)
    command.add_argument("--config", default="repeat-realclock", metavar="NAME",
                         help="the configuration of kunit_configs/matrix (default repeat-realclock)")
    command.add_argument("--boots", type=int, default=100, help="boots per arch (default 100)")
    command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--timeout", type=int, default=None,
                         help="seconds per boot (default 600; with --selftests the plan's timeouts plus a boot "
                              "allowance)")
    command.add_argument("--jobs", type=int, default=None, help="make -j (default: number of CPUs)")
    command.add_argument("--no-ccache", action="store_true", help="do not compile through ccache")
    command.add_argument("--selftests", action="store_true",
                         help="boot the guest programs (both columns) on the configuration's image instead of its "
                              "KUnit suites; build the image first with `kunit --config NAME`")
    command.add_argument("--programs", default="", metavar="NAMES",
                         help="with --selftests: only these programs of the plan (blank-separated)")
    command.add_argument("--plan", default=str(SELFTEST_PLAN), help=argparse.SUPPRESS)
    command.add_argument("--known", default=str(KNOWN_FAILURES), help=argparse.SUPPRESS)

    command = add("summary", cmd_summary, "print the results table; exit non-zero on any failure")
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    add_configs(command)
    command.add_argument("--results-dir", default=str(RESULTS_DIR))
    command.add_argument("--tools-tests", help="counts file written by `tools-test --record`")
    command.add_argument("--style", help="result file written by `style --record`")
    command.add_argument("--report", help="counts file written by `report --record` (regressions count as failures)")
    command.add_argument("--selftests", action="store_true",
                         help="add one row per arch for the guest selftests (`make selftest`) and their reports")

    command = add("selftest", cmd_selftest, "the kernel's timer selftests in the guest, ktimer path on and off",
                  tree=True)
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--timeout", type=int, default=None,
                         help="seconds per QEMU boot (default: the plan's timeouts plus a boot allowance)")
    command.add_argument("--full", action="store_true",
                         help="also the tests selftests/plan marks `run = full` (minutes more per boot)")
    command.add_argument("--one-at-a-time", action="store_true",
                         help="boot the two columns and the arches one after the other (default: side by side)")
    command.add_argument("--plan", default=str(SELFTEST_PLAN), help="the plan file (default selftests/plan)")
    command.add_argument("--known", default=str(KNOWN_FAILURES), help=argparse.SUPPRESS)
    command.add_argument("--config", default="default", metavar="NAME",
                         help="boot the image of this configuration of kunit_configs/matrix (default: default; "
                              "e.g. kmemleak, after `make kunit CONFIG=kmemleak`); its results go to "
                              "build/results/<arch>-selftests-NAME")
    command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)

    command = add("breaks", cmd_breaks, "boot the project's own user-space programs with every expectation "
                                        "inverted (KT_BREAK=1), both columns: each case must fail", tree=True)
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--timeout", type=int, default=None, help="seconds per QEMU boot")
    command.add_argument("--plan", default=str(SELFTEST_PLAN), help=argparse.SUPPRESS)

    command = add("mutants", cmd_mutants, "mutation testing (not in CI): per mutant of mutants/, apply it to the "
                                          "tree, rebuild, run its configurations' KUnit suites (and with `User: "
                                          "yes` the own user-space suite), restore the tree; table and score "
                                          "(docs/mutants.md)", tree=True)
    command.add_argument("--arch", default="i386", help="the arch to build and boot (default i386)")
    command.add_argument("--only", nargs="+", action="extend", metavar="ID",
                         help="only these mutants: numbers (03) or file names without .patch (repeatable)")
    command.add_argument("--timeout", type=int, default=600, help="seconds per QEMU boot (default 600)")
    command.add_argument("--list", action="store_true", help="list the catalogue (id, description, "
                                                             "configurations) and exit; no kernel needed")
    command.add_argument("--jobs", type=int, default=None, help="make -j (default: number of CPUs)")
    command.add_argument("--no-ccache", action="store_true", help="do not compile through ccache")
    command.add_argument("--mutants-dir", default=str(REPO_ROOT / "mutants"), help=argparse.SUPPRESS)
    command.add_argument("--work-dir", default=str(BUILD_DIR / "mutants"), help=argparse.SUPPRESS)
    command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)

    db_help = "results database (default: $KTIMERS_RESULTS_DB, else build/results/results.sqlite)"
    for name in ("kunit", "selftest", "bench", "mutants"):
        sub.choices[name].add_argument("--db", help=db_help)
    for name in ("kunit", "bench", "mutants", "repeat"):
        sub.choices[name].add_argument("--kunit-build-dir", default=str(KUNIT_BUILD_DIR), help=argparse.SUPPRESS)

    command = add("record", cmd_record, "add finished runs (build/results/<arch>-<config>/) to the results database",
                  tree=True)
    command.add_argument("runs", nargs="*", metavar="RUN", help="<arch>-<config> names (default: every run there)")
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help="where the runs are (default build/results)")
    command.add_argument("--db", help=db_help)

    command = add("report", cmd_report, "each arch and configuration's latest run vs the previous one and the "
                                        "baseline; non-zero exit on any regression")
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    add_configs(command)
    command.add_argument("--selftests", action="store_true", help="also the guest selftests' runs")
    command.add_argument("--all", action="store_true",
                         help="every configuration recorded or in the baseline, instead of --config")
    command.add_argument("--db", help=db_help)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--baseline", default=str(BASELINE_FILE), help="default results/baseline.json")
    command.add_argument("--html", help="the HTML page (default: report.html next to the database)")
    command.add_argument("--record", help="also write the counts to this JSON file (for summary)")

    command = add("baseline", cmd_baseline, "rewrite results/baseline.json entries from the latest recorded runs")
    command.add_argument("arches", nargs="*", default=list(DEFAULT_ARCHES), help=arch_help)
    add_configs(command)
    command.add_argument("--selftests", action="store_true", help="also the guest selftests' runs")
    command.add_argument("--db", help=db_help)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("--baseline", default=str(BASELINE_FILE), help="default results/baseline.json")

    command = add("export-kcidb", cmd_export_kcidb, "write the results database as KCIDB v4 JSON")
    command.add_argument("--db", help=db_help)
    command.add_argument("--results-dir", default=str(RESULTS_DIR), help=argparse.SUPPRESS)
    command.add_argument("-o", "--output", help="file, or - for stdout (default: kcidb.json next to the database)")
    command.add_argument("--latest", action="store_true", help="only the latest run per arch and configuration")
    command.add_argument("--log-base-url", help="URL where the database's directory is published (default: "
                                                "file:// URLs of the stored logs)")

    command = add("matrix", cmd_matrix, "list the test configurations of kunit_configs/matrix")
    command.add_argument("--matrix", default=str(MATRIX_FILE), help=argparse.SUPPRESS)

    command = add("footprint", cmd_footprint, "objects per directory of kernel build dirs (what a configuration "
                                              "compiles, largest first)")
    command.add_argument("build_dirs", nargs="+", help="kbuild output dirs, e.g. build/kunit/i386-default")
    command.add_argument("--top", type=int, default=25, help="directories to list (default 25)")
    command.add_argument("--depth", type=int, default=2, help="directory levels to group by (default 2)")

    command = add("style", cmd_style, "checkpatch and kernel-doc on kernel/; sparse and W=1 on the series' "
                                      "files per ARCH (none: skipped)", tree=True)
    command.add_argument("arches", nargs="*", metavar="ARCH", help="compile the series' files for these arches")
    command.add_argument("--record", help="also write the outcome to this JSON file (for summary)")

    command = add("tools-test", cmd_tools_test, "run the tools' own unit tests")
    command.add_argument("--record", help="write the counts to this JSON file (for summary)")
    command.add_argument("--quiet", action="store_true", help="one dot per test instead of one line")
    return parser


# Commands that are one row of the step table (common/steps.py); kunit and selftest record each build
# and boot themselves.
WHOLE_STEPS = ("deps", "tree", "apply", "tools_test", "style", "report")


def main(argv=None):
    from common import steps
    args = build_parser().parse_args(argv)
    name = args.func.__name__.removeprefix("cmd_")
    try:
        if name in WHOLE_STEPS:
            with steps.timed(name.replace("_", "-")):
                return args.func(args) or 0
        return args.func(args) or 0
    except ToolError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
