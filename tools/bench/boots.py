"""Several boots of one benchmark configuration, read as one: medians, and the spread of the per-boot ratios.

`make bench BOOTS=N` boots each configuration N times. A ratio (ktimer / other
API) means something only within one boot, so the ratios are taken per boot
and then summarised: their median is the figure the table shows and the goals
judge, their lowest and highest the range beside it. Plain figures (ns,
callbacks per second, event counts) are the median over the boots.

BootSet answers the questions bench_analysis asks a bench_parse.BenchRun
(`result`, `skip`, `results`, `skips`, `begin`), and `ratios` besides, so one
boot and five go through the same table and goals.
"""

import statistics

from bench.parse import BenchRun


def ratio(numerator, denominator):
    """numerator / denominator, or None when either is missing or the denominator is not positive."""
    if not isinstance(numerator, (int, float)) or not isinstance(denominator, (int, float)):
        return None
    if denominator <= 0:
        return None
    return numerator / denominator


def boot_ratios(run, workload, n, metric, base, other):
    """The per-boot ratios base/other of one figure: one per boot that measured both."""
    runs = run.runs if isinstance(run, BootSet) else [run]
    found = (ratio((one.result(workload, base, n) or {}).get(metric),
                   (one.result(workload, other, n) or {}).get(metric)) for one in runs)
    return [value for value in found if value is not None]


class BootSet:
    """The boots of one engine, in boot order."""

    def __init__(self, runs):
        self.runs = list(runs)

    @property
    def begin(self):
        return next((run.begin for run in self.runs if run.begin), None)

    @property
    def started(self):
        return any(run.started for run in self.runs)

    @property
    def complete(self):
        return bool(self.runs) and all(run.complete for run in self.runs)

    @property
    def engine(self):
        return next((run.engine for run in self.runs if run.engine), None)

    def _keys(self, kind):
        seen = {}
        for run in self.runs:
            for entry in getattr(run, kind):
                seen.setdefault((entry["workload"], entry["api"], entry["n"]), entry)
        return seen

    def result(self, workload, api, n):
        """Per metric, the median over the boots that measured it; None if none did."""
        measured = [metrics for metrics in (run.result(workload, api, n) for run in self.runs) if metrics]
        if not measured:
            return None
        names = list(dict.fromkeys(name for metrics in measured for name in metrics))
        return {name: statistics.median([metrics[name] for metrics in measured if name in metrics])
                for name in names}

    def skip(self, workload, api, n):
        """The reason, when no boot measured it and one skipped it."""
        if self.result(workload, api, n) is not None:
            return None
        return next((reason for reason in (run.skip(workload, api, n) for run in self.runs) if reason), None)

    @property
    def results(self):
        """One entry per measurement any boot made, with the median figures (line: the first boot's)."""
        return [{"workload": workload, "api": api, "n": n, "metrics": self.result(workload, api, n),
                 "line": entry["line"]} for (workload, api, n), entry in self._keys("results").items()]

    @property
    def skips(self):
        return [{"workload": workload, "api": api, "n": n, "reason": self.skip(workload, api, n),
                 "line": entry["line"]} for (workload, api, n), entry in self._keys("skips").items()
                if self.skip(workload, api, n)]


def combined(runs):
    """A BootSet of several boots; a single boot stays the BenchRun it is."""
    runs = [run for run in runs if run.started]
    if len(runs) == 1:
        return runs[0]
    return BootSet(runs) if runs else BenchRun()
