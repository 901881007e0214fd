"""`make bench`: the boot-time benchmark, per arch: one production-like kernel, two boots, one report.

The kernel side (kernel/time/ktimer_bench.c, CONFIG_KTIMER_BENCH) runs from a
late_initcall when booted with ktimer_bench.run=1, before KUnit, and prints
`ktimer_bench:` lines (bench/parse.py). The boots are two configurations of
kunit_configs/matrix sharing one build: `bench` (high-resolution engine) and
`bench-lowres` (ktimer.highres=0). Each goes through kunit_run like any KUnit
run (kunit.py builds, then boots with --raw_output=all; only the tiny
ktimer_modes suite runs, so kunit.py is satisfied and the boot ends), with
each `ktimer_bench:` line echoed as it arrives. The parsed figures are added
to the run's results.json (key "bench") before the run is recorded, so the
results database keeps them (table bench_results); the run is recorded with
kind "bench", which `make report` leaves out. Then bench_report writes the
table, bench.json and bench.svg into build/results/<arch>-bench/.

With `BOOTS=N` (`--boots N`) every configuration boots N times (the kernel
is built once); after each boot its console.log and results.json are kept in
build/results/<arch>-bench-boots/<k>-<config>/, and the report reads every
boot kept there: per figure the median, per ratio the median and range of
the per-boot ratios (bench_boots).
"""

import json
import shutil
from pathlib import Path

from bench import parse as bench_parse, report as bench_report
from kunit import run as kunit_run
from common import RESULTS_DIR, ToolError, progress, rel

# (configuration of kunit_configs/matrix, the engine it boots), in run order: the first builds.
CONFIGS = (("bench", "highres"), ("bench-lowres", "lowres"))
REPORT_DIR = "bench"        # build/results/<arch>-bench/ (the `bench` boot's dir) gets bench.{txt,json,svg}
BOOTS_DIR = "bench-boots"   # build/results/<arch>-bench-boots/<k>-<config>/: each boot's console and results
ECHOED = ("begin", "size", "result", "skip", "end")


def echo(label):
    """on_console callback: a progress line per `ktimer_bench:` line, as the guest prints it."""
    def on_console(text):
        split = bench_parse.split_line(text)
        if split and split[0] in ECHOED:
            progress("bench", bench_parse.LINE_RE.search(text).group(0).strip(), label)
    return on_console


def verdict(document, run):
    """The run's status, made worse when the kernel booted through but the benchmark did not report."""
    if document.get("status") != "PASS" or run.complete:
        return document.get("status"), []
    if not run.started:
        return "NO_BENCH", ["the console has no `ktimer_bench: begin` line: the kernel lacks CONFIG_KTIMER_BENCH "
                            "or did not get ktimer_bench.run=1"]
    return "INCOMPLETE", ["the benchmark began but printed no `ktimer_bench: end` line"]


def boots_dir(arch, results_root=RESULTS_DIR):
    return Path(results_root) / f"{arch}-{BOOTS_DIR}"


def forget_boots(arch, results_root=RESULTS_DIR):
    """A new `make bench` starts a new set of boots: the previous run's are dropped."""
    shutil.rmtree(boots_dir(arch, results_root), ignore_errors=True)


def keep_boot(arch, configuration_name, index, results_root=RESULTS_DIR):
    """Copy one boot's console.log and results.json to <arch>-bench-boots/<index>-<config>/."""
    source = Path(results_root) / f"{arch}-{configuration_name}"
    target = boots_dir(arch, results_root) / f"{index}-{configuration_name}"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("console.log", "results.json"):
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)


def boot(tree, arch, configuration, *, results_root=RESULTS_DIR, index=1, **kwargs):
    """One benchmark boot: kunit_run.run_suites (kind "bench", bench lines echoed), then the figures parsed
    from its console into the results document (key "bench") and its results.json, kept as boot @index of
    this run. Returns the document."""
    label = configuration.results_name(arch)
    result_dir = Path(results_root) / label
    for name in (bench_report.TABLE_FILE, bench_report.JSON_FILE, bench_report.SVG_FILE):
        (result_dir / name).unlink(missing_ok=True)     # an earlier run's report must not be stored with this run
    document = kunit_run.run_suites(tree, arch, config=configuration, results_root=results_root, kind="bench",
                                    on_console=echo(label), **kwargs)
    console = result_dir / "console.log"
    run = bench_parse.parse_file(console) if console.is_file() else bench_parse.BenchRun()
    status, problems = verdict(document, run)
    document["bench"] = run.to_dict()
    document["status"] = status
    document["problems"] = list(document.get("problems", [])) + problems
    for problem in problems:
        progress("bench", problem, label)
    (result_dir / "results.json").write_text(json.dumps(document, indent=1) + "\n")
    keep_boot(arch, configuration.name, index, results_root)
    return document


def load_boot(arch, config, engine, results_root, result_dir=None, index=0):
    """The Boot of one configuration from its results dir (or @result_dir, a kept boot): results.json when
    there, else the console alone."""
    result_dir = Path(result_dir or Path(results_root) / f"{arch}-{config}")
    console = result_dir / "console.log"
    try:
        document = json.loads((result_dir / "results.json").read_text())
    except FileNotFoundError:
        document = None
    except ValueError as error:
        raise ToolError(f"{rel(result_dir / 'results.json')} is not valid JSON: {error}",
                        "run the benchmark again: `make bench`") from None
    if document is None and not console.is_file():
        return bench_report.Boot(engine, config, problems=[f"no results in {rel(result_dir)}: run `make bench "
                                                           f"ARCH={arch}`"])
    document = document or {}
    # The console is what the kernel printed; the document's copy serves when the console is gone.
    run = bench_parse.parse_file(console) if console.is_file() else bench_parse.BenchRun.from_dict(
        document.get("bench"))
    return bench_report.Boot(engine, config, rel(console) if console.is_file() else None, document.get("status"),
                             list(document.get("problems", [])), run, index)


def kept_boots(arch, results_root, configs):
    """The Boots kept by the last `make bench` in <arch>-bench-boots/, in boot order, or [] if none."""
    engines = dict(configs)
    found = []
    for path in boots_dir(arch, results_root).glob("*-*"):
        number, _, config = path.name.partition("-")
        if number.isdigit() and config in engines:
            found.append((int(number), [name for name, _ in configs].index(config), config, path))
    several = len({number for number, *_ in found}) > 1
    return [load_boot(arch, config, engines[config], results_root, path, number if several else 0)
            for number, _, config, path in sorted(found)]


def report(arch, results_root=RESULTS_DIR, configs=CONFIGS):
    """Print and write one arch's report from its boots' results dirs; True when every boot finished."""
    boots = kept_boots(arch, results_root, configs) or [load_boot(arch, config, engine, results_root)
                                                         for config, engine in configs]
    if not any(boot.console or boot.run_status for boot in boots):
        raise ToolError(f"no benchmark results for {arch} in {rel(results_root)} "
                        f"({', '.join(f'{arch}-{config}' for config, _ in configs)})",
                        f"run the benchmark first: `make bench ARCH={arch}`")
    result_dir = Path(results_root) / f"{arch}-{REPORT_DIR}"
    lines = bench_report.write(result_dir, arch, boots)
    print()
    for line in lines:
        print(line)
    written = [name for name in (bench_report.TABLE_FILE, bench_report.JSON_FILE, bench_report.SVG_FILE)
               if (result_dir / name).is_file()]
    progress("bench", f"written: {', '.join(rel(result_dir / name) for name in written)}", arch)
    return bench_report.finished(boots)
