"""What the benchmark's figures say: one table row per measurement with the ktimer ratios, and the goals.

Input: the parsed boots by engine, `highres` and `lowres` (the engine the
begin line names): a bench_parse.BenchRun for one boot, a bench_boots.BootSet
for several. Every ratio is ktimer / other API of the row's metric, taken
within one boot (both APIs ran on the same CPU, in the same boot, moments
apart); over several boots a row shows the median of the per-boot ratios and
their range, and the goals judge the median.

The goals are information, never a verdict of `make test` or of `make bench`:

- cost: in start_stop and modify, with random expiries and in order (the
  _inorder workloads), ktimer/hrtimer <= 1.0 at every n (each API in
  the element users embed it in: the ktimer element is the larger);
- equal size: the same against hrtimers in elements padded to the ktimer
  element's size and alignment (hrtimer_padded), which leaves the algorithm;
- growth: ktimer's median at the largest n measured above 100, divided by its
  median at n=100, is at most ln(n)/ln(100) (3.0 for n=1e6), the most a cost
  of the form a + b*log(n) with a, b >= 0 can grow; a cost linear in n grows
  by n/100;
- expiry: ktimer's callbacks per second not below hrtimer_soft's (callbacks
  in a softirq, like ktimers) at any n; equal-size expiry: the same against
  soft hrtimers in the padded elements;
- latency: in the high-resolution boot, ktimer's p99 lateness not above
  hrtimer_soft's; the hard-irq hrtimer is shown beside it.
  For these two, noisy by nature, each per-boot ratio is placed against 1.0
  and a sign test says whether the boots put the median below, at or above
  it (position());
- reprograms: ktimer's clock-event reprograms per 1,000 operations <=
  hrtimer_soft's, in every workload and n that counted them (counts, not
  time); the hard-irq hrtimer's counts are shown beside them;
- lowres: in the low-resolution boot, ktimer's largest lateness (max_ns) is at
  most one jiffy, 1e9/hz ns (hz from that boot's begin line).
"""

import math
import statistics
from dataclasses import dataclass, field

from bench.boots import boot_ratios, ratio
from bench.parse import BenchRun

TCG_NOTE = ("emulated: under software emulation (QEMU TCG) absolute figures are meaningless; "
            "the ratios within one boot are the result.")
NATIVE_NOTE = ("native: User Mode Linux runs the kernel's code on the host CPU, with its caches; absolute "
               "figures depend on the host, the ratios within one boot are the result.")
NATIVE_ARCHES = ("um",)
BOOTS = ("highres", "lowres")
WORKLOADS = ("start_stop", "modify", "start_stop_inorder", "modify_inorder", "expiry", "latency", "wakeups")
APIS = ("ktimer", "hrtimer", "hrtimer_padded", "hrtimer_soft", "timer_list")
BASE = "ktimer"
COMPARED = ("hrtimer", "hrtimer_padded", "hrtimer_soft", "timer_list")     # ratio columns: ktimer / each
# hrtimers in elements padded to the ktimer element's size and alignment: the algorithm without the fields
EQUAL_SIZE = "hrtimer_padded"
# The figure a row shows per workload; other workloads show their first figure.
PRIMARY = {"start_stop": "median_ns", "modify": "median_ns", "start_stop_inorder": "median_ns",
           "modify_inorder": "median_ns", "expiry": "callbacks_per_s", "latency": "p99_ns",
           "wakeups": "interrupts_per_1k"}
COUNT = "reprograms_per_1k"     # clock-event device programmings per 1,000 operations or timers
HIGHER_IS_BETTER = ("callbacks_per_s",)
COST_WORKLOADS = ("start_stop", "modify")               # random expiries: the plot's panels
# the same with timers armed in the order they expire (timeouts of now + a constant): predictable tree walks
IN_ORDER_WORKLOADS = ("start_stop_inorder", "modify_inorder")
COST_LIMIT = 1.0
GROWTH_FROM = 100
LATENCY_LIMIT = 1.0             # ktimer p99 / hrtimer_soft p99
EXPIRY_LIMIT = 1.0              # ktimer callbacks/s / hrtimer_soft callbacks/s, at least
LIKE_FOR_LIKE = "hrtimer_soft"
MET, MISSED, UNMEASURED = "met", "missed", "not measured"
BELOW, AT, ABOVE = "below", "at", "above"
SIGNIFICANCE = 0.05             # two-sided sign test: the boots place a median off 1.0 only below this


def note_for(arch):
    """The first line of a report: native (UML) or emulated (QEMU) figures."""
    return NATIVE_NOTE if arch in NATIVE_ARCHES else TCG_NOTE


@dataclass(frozen=True)
class Spread:
    """The per-boot ratios of one figure: their median, lowest, highest, and how many boots."""
    median: float
    low: float
    high: float
    boots: int


def spread(run, workload, n, metric, other, base=None):
    """Spread of the per-boot ratios base/other (base: ktimer), or None when no boot measured both."""
    values = boot_ratios(run, workload, n, metric, base or BASE, other)
    if not values:
        return None
    return Spread(statistics.median(values), min(values), max(values), len(values))


def median_ratio(run, workload, n, metric, other):
    found = spread(run, workload, n, metric, other)
    return found.median if found else None


def growth_bound(n, base=GROWTH_FROM):
    """ln(n)/ln(base): how much a + b*log(n) can grow from base to n (log10: exact for powers of ten)."""
    return math.log10(n) / math.log10(base)


@dataclass
class Row:
    boot: str
    workload: str
    n: int
    metric: str
    values: dict = field(default_factory=dict)      # api -> number (median over boots), or "skip: <reason>"
    ratios: dict = field(default_factory=dict)      # compared api -> median of the per-boot ktimer / it, or None
    spreads: dict = field(default_factory=dict)     # compared api -> Spread, when ratios came from several boots

    def to_dict(self):
        return {"boot": self.boot, "workload": self.workload, "n": self.n, "metric": self.metric,
                "values": self.values, "ratios": self.ratios,
                "ranges": {api: {"low": found.low, "high": found.high, "boots": found.boots}
                           for api, found in self.spreads.items()}}


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
            out.append(row_of(run, boot, workload, n, metric))
            # the event count too, where some API counted any
            if metric != COUNT and any(metrics.get(COUNT) for metrics in measured):
                out.append(row_of(run, boot, workload, n, COUNT))
    return out


def row_of(run, boot, workload, n, metric):
    """The Row of one figure: each API's value or skip reason, and the ratios ktimer / each other API."""
    row = Row(boot, workload, n, metric)
    for api in apis_of({boot: run}):
        metrics, reason = run.result(workload, api, n), run.skip(workload, api, n)
        if metrics is not None and metric in metrics:
            row.values[api] = metrics[metric]
        elif reason is not None:
            row.values[api] = f"skip: {reason}"
    for other in COMPARED:
        if other not in row.values:
            continue
        found = spread(run, workload, n, metric, other)
        row.ratios[other] = found.median if found else None
        if found and found.boots > 1:
            row.spreads[other] = found
    return row


def cost_goal(run, workload, other="hrtimer"):
    """ktimer/other <= 1.0 at every n where both were measured (other: hrtimer, or hrtimer_padded for the
    equal-size goal)."""
    rule = f"ktimer/{other} median <= {COST_LIMIT:.1f} at every n"
    name = f"{'equal-size' if other == EQUAL_SIZE else 'cost'} {workload}"
    ns = sorted({entry["n"] for entry in run.results + run.skips if entry["workload"] == workload})
    measured, missed, unmeasured = [], [], []
    for n in ns:
        value = median_ratio(run, workload, n, "median_ns", other)
        if value is None:
            unmeasured.append(n)
            continue
        measured.append((n, value))
        if value > COST_LIMIT:
            missed.append((n, value))
    if not measured:
        return Goal(name, rule, UNMEASURED, f"no n with both ktimer and {other} figures")
    worst = max(measured, key=lambda item: item[1])
    detail = (f"ratio > {COST_LIMIT:.1f} at " + ", ".join(f"n={n} ({value:.2f})" for n, value in missed)
              if missed else f"worst {worst[1]:.2f} at n={worst[0]}")
    if unmeasured:
        detail += "; not measured at " + ", ".join(f"n={n}" for n in unmeasured)
    return Goal(name, rule, MISSED if missed else MET, detail)


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


def sign_test(above, below):
    """Two-sided sign test: the chance of a split at least this uneven if above and below were equally likely."""
    trials = above + below
    if not trials:
        return 1.0
    tail = sum(math.comb(trials, k) for k in range(min(above, below) + 1)) / 2 ** trials
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class Position:
    """Where the per-boot ratios put the median against a limit: below, at (not told apart) or above."""
    where: str
    median: float
    low: float
    high: float
    above: int                  # boots with the ratio above the limit
    below: int
    p: float                    # sign test

    def describe(self, limit=1.0):
        boots = self.above + self.below
        split = f"{self.above} of {boots} boots above {limit:.1f}" if boots else "every boot at the limit"
        return (f"{self.median:.2f} ({self.low:.2f}-{self.high:.2f}), {split} (sign test p={self.p:.2g}): "
                f"{self.where} {limit:.1f}")


def position(values, limit=1.0):
    """Position of the per-boot ratios against limit: `above` or `below` when the sign test puts the median
    there (p < SIGNIFICANCE), else `at`."""
    above = sum(value > limit for value in values)
    below = sum(value < limit for value in values)
    p = sign_test(above, below)
    where = AT if p >= SIGNIFICANCE else (ABOVE if above > below else BELOW)
    return Position(where, statistics.median(values), min(values), max(values), above, below, p)


def latency_goal(run):
    """ktimer's p99 lateness not above hrtimer_soft's: below or at 1.0 by the per-boot ratios."""
    rule = (f"p99 lateness ktimer/{LIKE_FOR_LIKE} (softirq callbacks, as ktimers) below or at "
            f"{LATENCY_LIMIT:.1f}, highres boot")
    ns = latency_ns(run)
    values = boot_ratios(run, "latency", ns[-1], "p99_ns", BASE, LIKE_FOR_LIKE) if ns else []
    if not values:
        return Goal("latency", rule, UNMEASURED, f"needs ktimer and {LIKE_FOR_LIKE} latency figures")
    found = position(values, LATENCY_LIMIT)
    detail = f"ktimer/{LIKE_FOR_LIKE} p99 {found.describe(LATENCY_LIMIT)}"
    hard = median_ratio(run, "latency", ns[-1], "p99_ns", "hrtimer")
    if hard is not None:
        detail += f"; ktimer/hrtimer (hard irq) {hard:.2f}"
    return Goal("latency", rule, MISSED if found.where == ABOVE else MET, detail)


def expiry_goal(run, other=LIKE_FOR_LIKE):
    """ktimer callbacks/s not below other's (hrtimer_soft, or the padded soft hrtimers for the equal-size goal)
    at any n both measured: above or at 1.0 by the per-boot ratios."""
    rule = f"ktimer/{other} callbacks per second above or at {EXPIRY_LIMIT:.1f} at every n"
    name = "equal-size expiry" if other == EQUAL_SIZE else "expiry"
    ns = sorted({entry["n"] for entry in run.results if entry["workload"] == "expiry"})
    measured = [(n, boot_ratios(run, "expiry", n, "callbacks_per_s", BASE, other)) for n in ns]
    measured = [(n, position(values, EXPIRY_LIMIT)) for n, values in measured if values]
    if not measured:
        return Goal(name, rule, UNMEASURED, f"no n with both ktimer and {other} figures")
    detail = "; ".join(f"n={n}: {found.describe(EXPIRY_LIMIT)}" for n, found in measured)
    missed = any(found.where == BELOW for _, found in measured)
    return Goal(name, rule, MISSED if missed else MET, detail)


def reprograms_goal(run):
    """ktimer's clock-event reprograms per 1,000 <= hrtimer_soft's wherever both counted them; the hard-irq
    hrtimer's beside them."""
    rule = f"ktimer {COUNT} <= {LIKE_FOR_LIKE}'s in every workload and n (event counts)"
    keys = sorted({(entry["workload"], entry["n"]) for entry in run.results if COUNT in entry["metrics"]},
                  key=lambda key: (WORKLOADS.index(key[0]) if key[0] in WORKLOADS else len(WORKLOADS), key[1]))
    compared, worse, worse_hard, unmatched = 0, [], [], []
    for workload, n in keys:
        ours = (run.result(workload, BASE, n) or {}).get(COUNT)
        soft = (run.result(workload, LIKE_FOR_LIKE, n) or {}).get(COUNT)
        hard = (run.result(workload, "hrtimer", n) or {}).get(COUNT)
        if ours is None:
            continue
        if soft is None:
            unmatched.append(f"{workload} n={n}")
            continue
        compared += 1
        if ours > soft:
            worse.append(f"{workload} n={n} ({ours:g} > {soft:g})")
        if hard is not None and ours > hard:
            worse_hard.append(f"{workload} n={n} ({ours:g} > {hard:g})")
    if not compared:
        return Goal("reprograms", rule, UNMEASURED, f"no ktimer and {LIKE_FOR_LIKE} {COUNT} in the same workload")
    # information: hard hrtimers program the device from the interrupt itself, without the softirq's second look
    hard = ("; hrtimer (hard irq), information: more at " + ", ".join(worse_hard) if worse_hard
            else "; <= hrtimer's (hard irq) everywhere too")
    missing = f"; no {LIKE_FOR_LIKE} count at " + ", ".join(unmatched) if unmatched else ""
    if worse:
        return Goal("reprograms", rule, MISSED, "more at " + ", ".join(worse) + hard + missing)
    return Goal("reprograms", rule, MET, f"{compared} workload and n pairs compared" + hard + missing)


GROWTH_APIS = (BASE, "hrtimer", EQUAL_SIZE)


@dataclass
class GrowthRow:
    """One cost workload at one n > 0: each API's median cost, and its slope since the previous n, in ns per
    doubling of n (the cost of a + b*log2(n) grows by b per doubling; a bend shows where caches stop holding
    the tree)."""
    workload: str
    n: int
    costs: dict = field(default_factory=dict)       # api -> median ns per operation
    slopes: dict = field(default_factory=dict)      # api -> ns per doubling since the previous n, or None

    @property
    def log2_n(self):
        return math.log2(self.n)

    def to_dict(self):
        return {"workload": self.workload, "n": self.n, "log2_n": round(self.log2_n, 3), "costs": self.costs,
                "ns_per_doubling": self.slopes}


def growth_rows(run, apis=GROWTH_APIS):
    """GrowthRows of start_stop and modify for the APIs that measured them, n ascending."""
    out = []
    for workload in COST_WORKLOADS:
        ns = sorted({entry["n"] for entry in run.results if entry["workload"] == workload and entry["n"] > 0})
        previous = None
        for n in ns:
            row = GrowthRow(workload, n)
            for api in apis:
                value = (run.result(workload, api, n) or {}).get("median_ns")
                if not isinstance(value, (int, float)):
                    continue
                row.costs[api] = value
                before = previous.costs.get(api) if previous else None
                row.slopes[api] = ((value - before) / (row.log2_n - previous.log2_n)
                                   if before is not None else None)
            out.append(row)
            previous = row
    return out


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
    """The goals (cost, equal-size cost and growth per cost workload, expiry, latency, reprograms, lowres), on the boots they
    concern."""
    high, low = boots.get("highres"), boots.get("lowres")
    out = []
    measured = {entry["workload"] for entry in (high or BenchRun()).results}
    # a benchmark from before the in-order workloads has no figures for them, rather than missing ones
    workloads = COST_WORKLOADS + tuple(workload for workload in IN_ORDER_WORKLOADS if workload in measured)
    for other in ("hrtimer", EQUAL_SIZE):
        for workload in workloads:
            out.append(cost_goal(high or BenchRun(), workload, other))
    for workload in workloads:
        out.append(growth_goal(high or BenchRun(), workload))
    out.append(expiry_goal(high or BenchRun()))
    out.append(expiry_goal(high or BenchRun(), EQUAL_SIZE))
    out.append(latency_goal(high or BenchRun()))
    out.append(reprograms_goal(high or BenchRun()))
    out.append(lowres_goal(low))
    return out


def fired_notes(boots):
    """Expiry and latency measurements whose callbacks did not all fire (fired != n)."""
    notes = []
    for boot, combined in boots.items():
        runs = getattr(combined, "runs", [combined])
        for index, run in enumerate(runs, 1):
            which = f"{boot} boot {index}" if len(runs) > 1 else boot
            for entry in run.results:
                fired = entry["metrics"].get("fired")
                if fired is not None and fired != entry["n"]:
                    notes.append(f"{which} {entry['workload']} {entry['api']} n={entry['n']}: fired={fired} of "
                                 f"{entry['n']} (console line {entry['line']})")
    return notes


def format_ratio(value):
    """Two decimals; two significant digits below 0.1, where two decimals would read 0.00."""
    if value is None:
        return "-"
    return f"{value:.2g}" if 0 < value < 0.1 else f"{value:.2f}"
