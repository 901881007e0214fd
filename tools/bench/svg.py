"""bench.svg: the cost of start_stop and modify against the number of queued timers, per API.

Hand-written SVG (no plotting library): one panel per workload, the
high-resolution boot's figures. x is the number of timers n on a log scale,
one decade per grid line; n=0 cannot sit on a log axis, so it is drawn one
decade left of the smallest decade measured (where n=10 would be when the
smallest n is 100), labelled 0, with a break mark on the axis between it and
the log part. y is linear from 0: the median in ns per operation, a line per
API, and a whisker up to the p99. A skipped measurement (reason=nomem, say)
is a cross on the x axis, listed under the panel.

Below them, one panel of ratios per workload against n: ktimer/hrtimer (solid)
and ktimer/hrtimer_padded (dashed: hrtimers in elements of the ktimer
element's size, the equal-size goal), the median of the per-boot ratios with
a whisker from the lowest to the highest boot, and a grey dashed line at 1.

Each decade on the x axes is also labelled with its log2: a cost that grows
as a + b*log2(n) is a straight line on these axes.
"""

import math
from xml.sax.saxutils import escape

from bench.analysis import COST_WORKLOADS, EQUAL_SIZE, apis_of, note_for, spread

WIDTH, HEIGHT = 1000, 900
RATIO_TOP, RATIO_HEIGHT = 610, 220
RATIO_COLOURS = {"start_stop": "#d62728", "modify": "#1f77b4"}
PANEL_TOP, PANEL_HEIGHT = 135, 320
PANEL_LEFT, PANEL_WIDTH, PANEL_GAP = 80, 380, 100
COLOURS = {"ktimer": "#d62728", "hrtimer": "#1f77b4", "hrtimer_padded": "#17becf", "hrtimer_soft": "#9467bd",
           "timer_list": "#2ca02c"}
# The ratio panel's lines: ktimer against each of these, drawn with this dash pattern
RATIO_OTHERS = {"hrtimer": None, EQUAL_SIZE: "5,3"}
LEGEND_STEP = 110
OTHER_COLOURS = ("#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")
# Whisker and marker offsets per API, so equal figures stay visible side by side.
OFFSET = 5


def colour(api, index):
    return COLOURS.get(api) or OTHER_COLOURS[index % len(OTHER_COLOURS)]


def decades(ns):
    """(first, last): the decades the x axis spans; with n=0 present, first is the decade 0 is drawn at."""
    positive = [n for n in ns if n > 0] or [1]
    low = math.floor(math.log10(min(positive)))
    high = max(math.ceil(math.log10(max(positive))), low + 1)
    return (low - 1 if 0 in ns else low), high


def x_position(n, span, left, width):
    """x of n on the log axis spanning decades span=(first, last); n=0 sits at decade `first`."""
    first, last = span
    position = first if n <= 0 else math.log10(n)
    return left + (position - first) / (last - first) * width


def y_position(value, top, height, y_max):
    return top + height - (value / y_max) * height


def nice_max(value):
    """The smallest 1, 2 or 5 times a power of ten at or above value (at least 1)."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def label_n(n):
    return "0" if n == 0 else (f"1e{round(math.log10(n))}" if n >= 1000 and math.log10(n).is_integer() else str(n))


def label_log2(n):
    return "" if n <= 0 else f"2^{math.log2(n):.1f}"


def text(x, y, content, size=12, anchor="middle", extra=""):
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
            f"{escape(str(content))}</text>")


def panel(run, workload, left, apis):
    """SVG elements of one workload's panel."""
    entries = [entry for entry in run.results if entry["workload"] == workload and "median_ns" in entry["metrics"]]
    skips = [entry for entry in run.skips if entry["workload"] == workload]
    top, width, height = PANEL_TOP, PANEL_WIDTH, PANEL_HEIGHT
    out = [text(left + width / 2, top - 12, workload, 15, extra=' font-weight="bold"')]
    ns = sorted({entry["n"] for entry in entries + skips})
    if not ns:
        out.append(f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>')
        out.append(text(left + width / 2, top + height / 2, "no figures", 13))
        return out
    span = decades(ns)
    y_max = nice_max(max([entry["metrics"].get("p99_ns", entry["metrics"]["median_ns"]) for entry in entries] +
                         [entry["metrics"]["median_ns"] for entry in entries] + [1]))
    out.append(f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>')
    for step in range(6):       # y grid and labels
        value = y_max * step / 5
        y = y_position(value, top, height, y_max)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + width}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(text(left - 6, y + 4, f"{value:g}", 11, "end"))
    first, last = span
    for decade in range(first + (1 if 0 in ns else 0), last + 1):      # x grid: one line per decade
        x = x_position(10 ** decade, span, left, width)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + height}" stroke="#e5e5e5"/>')
        out.append(text(x, top + height + 16, label_n(10 ** decade), 11))
        out.append(text(x, top + height + 28, label_log2(10 ** decade), 9, extra=' fill="#666"'))
    if 0 in ns:
        x0 = x_position(0, span, left, width)
        out.append(text(x0, top + height + 16, "0", 11))
        xb = (x0 + x_position(10 ** (first + 1), span, left, width)) / 2     # the axis break
        out.append(f'<path d="M{xb - 6:.1f},{top + height + 5} l6,-10 M{xb:.1f},{top + height + 5} l6,-10" '
                   'stroke="#555" fill="none"/>')
    out.append(text(left + width / 2, top + height + 44, "n (timers queued; log scale, log2 n in grey)", 12))
    out.append(text(left - 52, top + height / 2, "ns per operation", 12,
                    extra=f' transform="rotate(-90 {left - 52} {top + height / 2})"'))
    for index, api in enumerate(apis):
        shift = (index - (len(apis) - 1) / 2) * OFFSET
        points = sorted((entry["n"], entry["metrics"]) for entry in entries if entry["api"] == api)
        stroke = colour(api, index)
        coordinates = [(x_position(n, span, left, width) + shift, y_position(m["median_ns"], top, height, y_max), n, m)
                       for n, m in points]
        if len(coordinates) > 1:
            path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y, _, _) in enumerate(coordinates))
            out.append(f'<path d="{path}" stroke="{stroke}" stroke-width="2" fill="none"/>')
        for x, y, n, metrics in coordinates:
            if "p99_ns" in metrics:
                y99 = y_position(metrics["p99_ns"], top, height, y_max)
                out.append(f'<path d="M{x:.1f},{y:.1f} V{y99:.1f} M{x - 3:.1f},{y99:.1f} h6" stroke="{stroke}" '
                           'stroke-width="1" fill="none" opacity="0.7"/>')
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{stroke}" data-api="{escape(api)}" '
                       f'data-n="{n}" data-median-ns="{metrics["median_ns"]}"><title>{escape(api)} n={n}: median '
                       f'{metrics["median_ns"]} ns, p99 {metrics.get("p99_ns", "-")} ns</title></circle>')
        for entry in skips:
            if entry["api"] == api:
                x, y = x_position(entry["n"], span, left, width) + shift, top + height
                out.append(f'<path d="M{x - 4:.1f},{y - 4:.1f} l8,8 M{x - 4:.1f},{y + 4:.1f} l8,-8" '
                           f'stroke="{stroke}" stroke-width="2" data-skip="{escape(api)}"/>')
    for index, entry in enumerate(skips):
        out.append(text(left, top + height + 60 + 14 * index,
                        f"\u00d7  {entry['api']} n={label_n(entry['n'])}: skipped ({entry['reason']})", 11, "start"))
    return out


def ratio_panel(run, left, width):
    """SVG elements of the ratio panel: ktimer/hrtimer (solid) and ktimer/hrtimer_padded (dashed) median per
    workload and n, whiskers low to high."""
    top, height = RATIO_TOP, RATIO_HEIGHT
    found = {(workload, other): {} for workload in COST_WORKLOADS for other in RATIO_OTHERS}
    for entry in run.results:
        for workload, other in found:
            if entry["workload"] == workload and entry["api"] == "ktimer":
                value = spread(run, workload, entry["n"], "median_ns", other)
                if value:
                    found[workload, other][entry["n"]] = value
    found = {key: by_n for key, by_n in found.items() if by_n}
    out = [text(left + width / 2, top - 12, "ktimer / hrtimer (solid) and / hrtimer_padded (dashed, equal size), "
                                            "per-boot ratios of the median cost", 15, extra=' font-weight="bold"'),
           f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#999"/>']
    ns = sorted({n for by_n in found.values() for n in by_n})
    if not ns:
        return out + [text(left + width / 2, top + height / 2, "no ratios", 13)]
    span = decades(ns)
    values = [v for by_n in found.values() for item in by_n.values() for v in (item.low, item.high)]
    y_low = min([0.8] + [math.floor(v * 10) / 10 for v in values])
    y_high = max([1.2] + [math.ceil(v * 10) / 10 for v in values])

    def y_of(value):
        return top + height - (value - y_low) / (y_high - y_low) * height
    for step in range(5):
        value = y_low + (y_high - y_low) * step / 4
        out.append(text(left - 6, y_of(value) + 4, f"{value:.2f}", 11, "end"))
    out.append(f'<line x1="{left}" y1="{y_of(1):.1f}" x2="{left + width}" y2="{y_of(1):.1f}" stroke="#555" '
               'stroke-dasharray="6,4"/>')
    for n in ns:
        out.append(text(x_position(n, span, left, width), top + height + 16, label_n(n), 11))
        out.append(text(x_position(n, span, left, width), top + height + 28, label_log2(n), 9, extra=' fill="#666"'))
    for index, ((workload, other), by_n) in enumerate(found.items()):
        stroke = RATIO_COLOURS.get(workload, colour(workload, index))
        shift = (index - (len(found) - 1) / 2) * OFFSET
        dash = f' stroke-dasharray="{RATIO_OTHERS[other]}"' if RATIO_OTHERS[other] else ""
        points = [(x_position(n, span, left, width) + shift, by_n[n]) for n in sorted(by_n)]
        if len(points) > 1:
            path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y_of(item.median):.1f}"
                            for i, (x, item) in enumerate(points))
            out.append(f'<path d="{path}" stroke="{stroke}" stroke-width="2" fill="none"{dash}/>')
        for (x, item), n in zip(points, sorted(by_n)):
            out.append(f'<path d="M{x:.1f},{y_of(item.low):.1f} V{y_of(item.high):.1f}" stroke="{stroke}" '
                       'stroke-width="1.5" fill="none"/>')
            out.append(f'<circle cx="{x:.1f}" cy="{y_of(item.median):.1f}" r="3.5" fill="{stroke}" '
                       f'data-workload="{workload}" data-other="{other}" data-n="{n}" '
                       f'data-ratio="{item.median:.4f}"><title>{workload} ktimer/{other} n={n}: {item.median:.3f} '
                       f'({item.low:.3f}-{item.high:.3f}, {item.boots} boots)</title></circle>')
        x = left + 10 + 2 * LEGEND_STEP * index
        out.append(f'<line x1="{x}" y1="{top + 14}" x2="{x + 18}" y2="{top + 14}" stroke="{stroke}" '
                   f'stroke-width="3"{dash}/>')
        out.append(text(x + 22, top + 18, f"{workload} / {other}", 12, "start"))
    return out


def boots_note(run):
    """How several boots were folded into one line per API."""
    runs = getattr(run, "runs", None)
    return f" (each the median over {len(runs)} boots)" if runs else ""


def render(arch, run, boot="highres"):
    """The whole SVG document for one arch's boot (a bench_parse.BenchRun), or the medians of several boots
    (a bench_boots.BootSet)."""
    apis = [api for api in apis_of({boot: run})
            if any(e["api"] == api and e["workload"] in COST_WORKLOADS for e in run.results + run.skips)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">',
           f"<title>ktimer_bench {escape(arch)}: cost against n</title>",
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           text(WIDTH / 2, 28, f"ktimer_bench, {arch}: cost per operation against timers queued ({boot} boot)",
                17, extra=' font-weight="bold"'),
           text(WIDTH / 2, 48, note_for(arch), 12, extra=' fill="#a00"'),
           text(WIDTH / 2, 65, "line and dot: median; whisker: p99" + boots_note(run) + ". n=0 is drawn one "
                               "decade left of the smallest n, past the axis break.", 11, extra=' fill="#444"')]
    if not run.complete:
        out.append(text(WIDTH / 2, 82, "INCOMPLETE: this boot did not finish the benchmark (crash or timeout); "
                                       "partial figures", 12, extra=' fill="#a00" font-weight="bold"'))
    for index, api in enumerate(apis):      # legend
        x = WIDTH / 2 - LEGEND_STEP * len(apis) / 2 + LEGEND_STEP * index
        out.append(f'<line x1="{x:.1f}" y1="96" x2="{x + 18:.1f}" y2="96" stroke="{colour(api, index)}" '
                   'stroke-width="3"/>')
        out.append(text(x + 22, 100, api, 12, "start"))
    for index, workload in enumerate(COST_WORKLOADS):
        out += panel(run, workload, PANEL_LEFT + index * (PANEL_WIDTH + PANEL_GAP), apis)
    out += ratio_panel(run, PANEL_LEFT, len(COST_WORKLOADS) * PANEL_WIDTH + PANEL_GAP)
    out.append("</svg>")
    return "\n".join(out) + "\n"
