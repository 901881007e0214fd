"""The benchmark's results per arch: the terminal table, bench.txt, bench.json and bench.svg.

One Boot per benchmark boot of the arch (the `bench` configuration: the
high-resolution engine; `bench-lowres`: the same kernel with ktimer.highres=0;
`make bench BOOTS=N` boots each N times). The table has a row per engine,
workload and n, the figure the workload is judged by per API (the median over
the boots), and the ratios ktimer / other API (bench_analysis): over several
boots the median of the per-boot ratios with their range. A boot that never
printed `ktimer_bench: end` crashed or timed out: it is named as such at the
top, and its figures are shown as partial.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from bench import analysis as bench_analysis, svg as bench_svg
from bench.analysis import HIGHER_IS_BETTER, note_for
from bench.boots import combined
from bench.parse import BenchRun

TABLE_FILE, JSON_FILE, SVG_FILE = "bench.txt", "bench.json", "bench.svg"
NOT_BUILT = ("BUILD_ERROR", "CONFIG_ERROR")
SHORT = {"hrtimer": "hr", "hrtimer_padded": "hr_pad", "hrtimer_soft": "hr_soft", "timer_list": "tl"}


@dataclass
class Boot:
    name: str                   # highres | lowres: the engine this boot is meant to run
    config: str                 # its configuration in kunit_configs/matrix
    console: str = None         # its console log (relative path), if any
    run_status: str = None      # the KUnit run's verdict (PASS, CRASH, TIMEOUT, BUILD_ERROR, ...)
    problems: list = field(default_factory=list)
    run: BenchRun = field(default_factory=BenchRun)
    index: int = 0              # 1, 2, ... with BOOTS=N; 0 for the only boot

    @property
    def label(self):
        return f"{self.name} boot {self.index}" if self.index else f"{self.name} boot"

    def state(self):
        """One line: how far this boot got, and where to look when it did not finish."""
        run, where = self.run, f" (console: {self.console})" if self.console else ""
        why = ": ".join(filter(None, (self.run_status, (self.problems or [None])[0])))
        if not run.started:
            if not self.console and not self.run_status:
                return f"NOT RUN ({why or 'no results'})"
            if self.run_status in NOT_BUILT or not self.console:
                return f"NOT RUN: no kernel to boot ({why})"
            return (f"NO BENCHMARK OUTPUT: no `ktimer_bench: begin` line; the kernel lacks CONFIG_KTIMER_BENCH or "
                    f"did not get ktimer_bench.run=1" + (f" ({why})" if why else "") + where)
        begin = " ".join(f"{key}={value}" for key, value in run.begin.items() if key not in ("line", "version"))
        if not run.complete:
            last = max([entry["line"] for entry in run.results + run.skips + run.sizes] + [run.begin["line"]])
            return (f"DID NOT FINISH: no `ktimer_bench: end` line, the kernel crashed or the run timed out"
                    + (f" ({why})" if why else "") + f"; the figures below are partial, the last at console "
                    f"line {last}{where}; {begin}")
        elapsed = run.end.get("elapsed_ms")
        took = f", {elapsed / 1000:.1f} s in the guest" if isinstance(elapsed, (int, float)) else ""
        return f"complete{took}; {begin}{where}"

    def engine_problem(self):
        engine = self.run.engine
        if engine and engine != self.name:
            return (f"the {self.config} boot was meant to run the {self.name} engine, its begin line says "
                    f"engine={engine}: its figures are shown as {engine}")
        if (self.run.begin or {}).get("hres") == 0:
            return ("hrtimers had not switched to high resolution when the benchmark began (it waits 10 s): "
                    "hrtimer figures are those of the tick-driven mode")
        return None

    def to_dict(self):
        return {"name": self.name, "config": self.config, "index": self.index, "console": self.console,
                "run_status": self.run_status,
                "problems": self.problems, "state": self.state(), "bench": self.run.to_dict()}


def boots_by_engine(boots):
    """{engine: BenchRun, or BootSet of several} of the boots that began, keyed by the engine they ran (else
    their name)."""
    grouped = {}
    for boot in boots:
        if boot.run.started:
            grouped.setdefault(boot.run.engine or boot.name, []).append(boot.run)
    return {engine: combined(runs) for engine, runs in grouped.items()}


def ratio_cell(row, api):
    """The ratio, and over several boots the range of the per-boot ratios: `0.97 (0.95-0.99)`."""
    if api not in row.ratios:
        return "-"
    text = bench_analysis.format_ratio(row.ratios[api])
    found = row.spreads.get(api)
    if found:
        text += f" ({bench_analysis.format_ratio(found.low)}-{bench_analysis.format_ratio(found.high)})"
    return text


def finished(boots):
    return bool(boots) and all(boot.run.complete for boot in boots)


def cell(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def table(headers, rows, numeric_from):
    """Aligned text lines; columns from numeric_from on are right-aligned."""
    widths = [max(len(str(line[i])) for line in [headers] + rows) for i in range(len(headers))]
    lines = []
    for index, line in enumerate([headers] + rows):
        cells = [str(value).rjust(widths[i]) if i >= numeric_from else str(value).ljust(widths[i])
                 for i, value in enumerate(line)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def size_lines(boots):
    sizes = {}
    for boot in boots:
        for entry in boot.run.sizes:
            sizes.setdefault(entry["api"], entry)
    if not sizes:
        return []
    apis = bench_analysis.ordered(list(sizes), bench_analysis.APIS)

    def shown(value):
        return "n/a" if value == -1 else cell(value)
    rows = [["timer (bytes)"] + [shown(sizes[api]["timer_bytes"]) for api in apis],
            ["per-CPU (bytes)"] + [shown(sizes[api]["percpu_bytes"]) for api in apis]]
    if any("elem_bytes" in sizes[api] for api in apis):     # format version 3 on
        rows.insert(1, ["element (bytes)"] + [shown(sizes[api].get("elem_bytes")) for api in apis])
    note = ("n/a: not measurable (the timer wheel's per-CPU base is private to timer.c)"
            if any(sizes[api]["percpu_bytes"] == -1 for api in apis) else None)
    return table(["sizes"] + apis, rows, 1) + ([note] if note else [])


def result_lines(rows):
    if not rows:
        return ["no figures"]
    apis = bench_analysis.ordered([api for row in rows for api in row.values], bench_analysis.APIS)
    compared = [api for api in bench_analysis.COMPARED if any(api in row.ratios for row in rows)]
    headers = ["boot", "workload", "metric", "n"] + apis + [f"kt/{SHORT.get(api, api)}" for api in compared]
    body = [[row.boot, row.workload, row.metric, str(row.n)] + [cell(row.values.get(api)) for api in apis]
            + [ratio_cell(row, api) for api in compared]
            for row in rows]
    legend = ("ratios: ktimer / the other API, same boot, same row (several boots: the median of the per-boot "
              "ratios, their range in brackets; figures: the median); below 1 is better for *_ns and counts, "
              "above 1 for "
              + ", ".join(HIGHER_IS_BETTER) + f" (kt = ktimer, {', '.join(f'{v} = {k}' for k, v in SHORT.items())})")
    return table(headers, body, 3) + [legend]


def growth_lines(run):
    """Cost per operation against log2(n), per cost workload: each API's median and its slope since the
    previous n (ns per doubling)."""
    growth = bench_analysis.growth_rows(run)
    if not growth:
        return []
    apis = [api for api in bench_analysis.GROWTH_APIS if any(api in row.costs for row in growth)]
    headers = ["workload", "n", "log2 n"] + [heading for api in apis for heading in (api, "ns/doubling")]

    def slope(value):
        return "-" if value is None else f"{value:+.2f}"
    body = [[row.workload, str(row.n), f"{row.log2_n:.1f}"]
            + [text for api in apis for text in (cell(row.costs.get(api)), slope(row.slopes.get(api)))]
            for row in growth]
    lines = ["cost per operation against log2(n), highres boot (medians; ns/doubling: the slope since the "
             "previous n; a + b*log2(n) grows by b per doubling, a bend shows where the caches stop holding "
             "the tree):"]
    lines += table(headers, body, 1)
    return lines


def text_lines(arch, boots):
    """The whole report of one arch, as printed and written to bench.txt."""
    engines = boots_by_engine(boots)
    machine = note_for(arch)
    lines = [f"=== ktimer_bench, {arch} ===", machine]
    for boot in boots:
        lines.append(f"{boot.label} ({boot.config}): {boot.state()}")
        if boot.engine_problem():
            lines.append(f"  warning: {boot.engine_problem()}")
    if not engines:
        return lines + ["no figures: no boot printed the benchmark's lines"]
    if not finished(boots):
        lines.append("WARNING: partial results: a boot did not finish the benchmark (see above)")
    lines.append("")
    lines += size_lines(boots)
    lines.append("")
    lines += result_lines(bench_analysis.rows(engines))
    if "highres" in engines and growth_lines(engines["highres"]):
        lines += [""] + growth_lines(engines["highres"])
    lines += ["", "goals (information only, not pass/fail; rules in docs/running.md#benchmarks):"]
    goals = bench_analysis.goals(engines)
    width = max(len(goal.name) for goal in goals)
    for goal in goals:
        status = goal.status.upper() if goal.status == bench_analysis.MISSED else goal.status
        lines.append(f"  {status:<12}  {goal.name:<{width}}  {goal.rule}: {goal.detail}")
    for note in bench_analysis.fired_notes(engines):
        lines.append(f"note: not every callback fired: {note}")
    for boot in boots:
        for note in boot.run.notes:
            lines.append(f"note: [{boot.label}] console line {note['line']}: {note['text']}")
        for problem in boot.run.problems:
            lines.append(f"warning: [{boot.label}] {problem}")
    return lines + ["", machine]


def document(arch, boots):
    """bench.json: the parsed boots, the table rows, the goals."""
    engines = boots_by_engine(boots)
    return {"schema": 3, "arch": arch, "note": note_for(arch), "complete": finished(boots),
            "boots": [boot.to_dict() for boot in boots],
            "rows": [row.to_dict() for row in bench_analysis.rows(engines)],
            "goals": [goal.to_dict() for goal in bench_analysis.goals(engines)] if engines else [],
            "growth": [row.to_dict() for row in bench_analysis.growth_rows(engines["highres"])]
            if "highres" in engines else [],
            "fired": bench_analysis.fired_notes(engines)}


def write(result_dir, arch, boots):
    """bench.txt, bench.json and (with figures of the high-resolution boot) bench.svg; returns the lines."""
    result_dir = Path(result_dir)
    result_dir.mkdir(parents=True, exist_ok=True)
    lines = text_lines(arch, boots)
    (result_dir / TABLE_FILE).write_text("\n".join(lines) + "\n")
    (result_dir / JSON_FILE).write_text(json.dumps(document(arch, boots), indent=1) + "\n")
    svg = result_dir / SVG_FILE
    high = boots_by_engine(boots).get("highres")
    if high is not None:
        svg.write_text(bench_svg.render(arch, high))
    else:
        svg.unlink(missing_ok=True)     # never leave an earlier run's plot next to these results
    return lines
