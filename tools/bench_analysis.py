"""What the benchmark's figures say: one table row per measurement with the ktimer ratios, and the goals.

Input: the parsed boots (bench_parse.BenchRun) by name, `highres` and `lowres`
(the engine the begin line names). Every ratio is ktimer / other API of the
row's metric, taken within one boot: under QEMU's software emulation absolute
figures are meaningless, but both APIs ran on the same emulated CPU, in the
same boot, moments apart.

The goals are information, never a verdict of `make test` or of `make bench`:

- cost: in start_stop and modify, ktimer/hrtimer <= 1.0 at every n;
- growth: ktimer's median at the largest n measured above 100, divided by its
  median at n=100, is at most ln(n)/ln(100) (3.0 for n=1e6), the most a cost
  of the form a + b*log(n) with a, b >= 0 can grow; a cost linear in n grows
  by n/100;
- latency: in the high-resolution boot, ktimer's p99 lateness <= 1.2 x
  hrtimer's (hard irq) p99; the like-for-like hrtimer_soft is shown beside it;
- lowres: in the low-resolution boot, ktimer's largest lateness (max_ns) is at
  most one jiffy, 1e9/hz ns (hz from that boot's begin line).
"""

import math
from dataclasses import dataclass, field

from bench_parse import BenchRun

TCG_NOTE = ("Under software emulation (QEMU TCG) absolute figures are meaningless; "
            "the ratios within one boot are the result.")
BOOTS = ("highres", "lowres")
WORKLOADS = ("start_stop", "modify", "expiry", "latency")
APIS = ("ktimer", "hrtimer", "hrtimer_soft", "timer_list")
BASE = "ktimer"
COMPARED = ("hrtimer", "hrtimer_soft", "timer_list")     # ratio columns: ktimer / each
# The figure a row shows per workload; other workloads show their first figure.
PRIMARY = {"start_stop": "median_ns", "modify": "median_ns", "expiry": "callbacks_per_s", "latency": "p99_ns"}
HIGHER_IS_BETTER = ("callbacks_per_s",)
COST_WORKLOADS = ("start_stop", "modify")
COST_LIMIT = 1.0
GROWTH_FROM = 100
LATENCY_LIMIT = 1.2
MET, MISSED, UNMEASURED = "met", "missed", "not measured"


def ratio(numerator, denominator):
    """numerator / denominator, or None when either is missing or the denominator is not positive."""
    if not isinstance(numerator, (int, float)) or not isinstance(denominator, (int, float)):
        return None
    if denominator <= 0:
        return None
    return numerator / denominator


def growth_bound(n, base=GROWTH_FROM):
    """ln(n)/ln(base): how much a + b*log(n) can grow from base to n (log10: exact for powers of ten)."""
    return math.log10(n) / math.log10(base)


@dataclass
class Row:
    boot: str
    workload: str
    n: int
    metric: str
    values: dict = field(default_factory=dict)      # api -> number, or "skip: <reason>"
    ratios: dict = field(default_factory=dict)      # compared api -> ktimer / it, or None

    def to_dict(self):
        return {"boot": self.boot, "workload": self.workload, "n": self.n, "metric": self.metric,
                "values": self.values, "ratios": self.ratios}


@dataclass
class Goal:
    name: str
    rule: str
    status: str                 # met, missed, not measured
    detail: str = ""

    def to_dict(self):
        return {"name": self.name, "rule": self.rule, "status": self.status, "detail": self.detail}


def ordered(names, known):
    """known names first in their order, then the others in first-seen order."""
    seen = list(dict.fromkeys(names))
    return [name for name in known if name in seen] + [name for name in seen if name not in known]


def apis_of(boots):
    return ordered([entry["api"] for run in boots.values() for entry in run.results + run.skips], APIS)


def metric_of(workload, metrics):
    return PRIMARY.get(workload) or next(iter(metrics), None)


def rows(boots):
    """Row per boot, workload and n measured (or skipped) by any API, in a stable order."""
    out = []
    for boot in ordered(list(boots), BOOTS):
        run = boots[boot]
        entries = run.results + run.skips
        keys = {(entry["workload"], entry["n"]) for entry in entries}
        order = ordered([entry["workload"] for entry in entries], WORKLOADS)
        for workload, n in sorted(keys, key=lambda key: (order.index(key[0]), key[1])):
            measured = [entry["metrics"] for entry in run.results if (entry["workload"], entry["n"]) == (workload, n)]
            metric = metric_of(workload, measured[0] if measured else {})
            row = Row(boot, workload, n, metric)
            for api in apis_of({boot: run}):
                metrics, reason = run.result(workload, api, n), run.skip(workload, api, n)
                if metrics is not None and metric in metrics:
                    row.values[api] = metrics[metric]
                elif reason is not None:
                    row.values[api] = f"skip: {reason}"
            row.ratios = {other: ratio(row.values.get(BASE), row.values.get(other)) for other in COMPARED
                          if other in row.values}
            out.append(row)
    return out


def cost_goal(run, workload):
    """ktimer/hrtimer <= 1.0 at every n where both were measured."""
    rule = f"ktimer/hrtimer median <= {COST_LIMIT:.1f} at every n"
    ns = sorted({entry["n"] for entry in run.results + run.skips if entry["workload"] == workload})
    measured, missed, unmeasured = [], [], []
    for n in ns:
        value = ratio((run.result(workload, BASE, n) or {}).get("median_ns"),
                      (run.result(workload, "hrtimer", n) or {}).get("median_ns"))
        if value is None:
            unmeasured.append(n)
            continue
        measured.append((n, value))
        if value > COST_LIMIT:
            missed.append((n, value))
    if not measured:
        return Goal(f"cost {workload}", rule, UNMEASURED, "no n with both ktimer and hrtimer figures")
    worst = max(measured, key=lambda item: item[1])
    detail = (f"ratio > {COST_LIMIT:.1f} at " + ", ".join(f"n={n} ({value:.2f})" for n, value in missed)
              if missed else f"worst {worst[1]:.2f} at n={worst[0]}")
    if unmeasured:
        detail += "; not measured at " + ", ".join(f"n={n}" for n in unmeasured)
    return Goal(f"cost {workload}", rule, MISSED if missed else MET, detail)


def growth_goal(run, workload):
    """ktimer cost(n_max)/cost(100) <= ln(n_max)/ln(100)."""
    rule = (f"ktimer median(n)/median({GROWTH_FROM}) <= ln(n)/ln({GROWTH_FROM}) at the largest n "
            "(3.00 at n=1e6): no worse than logarithmic")
    base = (run.result(workload, BASE, GROWTH_FROM) or {}).get("median_ns")
    larger = sorted(entry["n"] for entry in run.results if entry["workload"] == workload
                    and entry["api"] == BASE and entry["n"] > GROWTH_FROM and "median_ns" in entry["metrics"])
    if not larger or not isinstance(base, (int, float)) or base <= 0:
        return Goal(f"growth {workload}", rule, UNMEASURED,
                    f"needs ktimer at n={GROWTH_FROM} and at a larger n")
    n = larger[-1]
    grown, bound = ratio(run.result(workload, BASE, n)["median_ns"], base), growth_bound(n)
    status = MET if grown <= bound * (1 + 1e-9) else MISSED     # figures at exactly the bound pass
    detail = f"n={n}: grew {grown:.2f}x, bound {bound:.2f}x"
    # hrtimers (an rbtree too) on the same emulated memory: how much of the growth is the machine's
    reference = ratio((run.result(workload, "hrtimer", n) or {}).get("median_ns"),
                      (run.result(workload, "hrtimer", GROWTH_FROM) or {}).get("median_ns"))
    if reference is not None:
        detail += f" (hrtimer grew {reference:.2f}x)"
    return Goal(f"growth {workload}", rule, status, detail)


def latency_goal(run):
    rule = f"p99 lateness ktimer <= {LATENCY_LIMIT:.1f} x hrtimer (hard irq), highres boot"
    ns = latency_ns(run)
    figures = {api: (run.result("latency", api, ns[-1]) or {}).get("p99_ns") if ns else None
               for api in (BASE, "hrtimer", "hrtimer_soft")}
    value = ratio(figures.get(BASE), figures.get("hrtimer"))
    if value is None:
        return Goal("latency", rule, UNMEASURED, "needs ktimer and hrtimer latency figures")
    detail = f"ktimer/hrtimer p99 {value:.2f}"
    soft = ratio(figures.get(BASE), figures.get("hrtimer_soft"))
    if soft is not None:
        detail += f"; ktimer/hrtimer_soft {soft:.2f} (like-for-like, softirq callbacks)"
    return Goal("latency", rule, MET if value <= LATENCY_LIMIT else MISSED, detail)


def latency_ns(run):
    return sorted({entry["n"] for entry in run.results if entry["workload"] == "latency"})


def lowres_goal(run):
    rule = "ktimer max lateness <= one jiffy (1e9/hz ns), lowres boot"
    hz = (run.begin or {}).get("hz") if run else None
    ns = latency_ns(run) if run else []
    worst = (run.result("latency", BASE, ns[-1]) or {}).get("max_ns") if ns else None
    if not isinstance(hz, (int, float)) or hz <= 0 or worst is None:
        return Goal("lowres", rule, UNMEASURED, "needs the lowres boot's hz and ktimer's latency max_ns")
    jiffy = 1e9 / hz
    detail = f"max {worst:.0f} ns, jiffy {jiffy:.0f} ns (hz={hz}): {worst / jiffy:.2f} jiffy"
    return Goal("lowres", rule, MET if worst <= jiffy else MISSED, detail)


def goals(boots):
    """The four goals (cost and growth per cost workload), on the boots they concern."""
    high, low = boots.get("highres"), boots.get("lowres")
    out = []
    for workload in COST_WORKLOADS:
        out.append(cost_goal(high or BenchRun(), workload))
    for workload in COST_WORKLOADS:
        out.append(growth_goal(high or BenchRun(), workload))
    out.append(latency_goal(high or BenchRun()))
    out.append(lowres_goal(low))
    return out


def fired_notes(boots):
    """Expiry and latency measurements whose callbacks did not all fire (fired != n)."""
    notes = []
    for boot, run in boots.items():
        for entry in run.results:
            fired = entry["metrics"].get("fired")
            if fired is not None and fired != entry["n"]:
                notes.append(f"{boot} {entry['workload']} {entry['api']} n={entry['n']}: fired={fired} of "
                             f"{entry['n']} (console line {entry['line']})")
    return notes


def format_ratio(value):
    """Two decimals; two significant digits below 0.1, where two decimals would read 0.00."""
    if value is None:
        return "-"
    return f"{value:.2g}" if 0 < value < 0.1 else f"{value:.2f}"
