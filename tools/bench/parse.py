"""The lines the boot-time benchmark (kernel/time/ktimer_bench.c, `make bench`) prints, parsed.

The kernel prints, with pr_info (so a console with printk timestamps shows
`[   12.345678] ` or more before each), one line per fact:

    ktimer_bench: begin version=1 engine=highres hz=250 cpu=0 ncpus=2 batch=64 batches=101
    ktimer_bench: size api=ktimer timer_bytes=64 elem_bytes=72 percpu_bytes=2368
    ktimer_bench: result workload=start_stop api=ktimer n=0 median_ns=812 p99_ns=1500
    ktimer_bench: result workload=expiry api=ktimer n=10000 callbacks_per_s=250000 fired=10000
    ktimer_bench: skip workload=start_stop api=timer_list n=1000000 reason=nomem
    ktimer_bench: end elapsed_ms=45678

`key=value` pairs separated by single spaces; values never contain spaces.
Everything before `ktimer_bench: ` is dropped. A run without its `end` line
crashed or timed out: its figures are kept and marked partial. A line of a
known kind that breaks the format (a missing key, a value that is no number)
is left out and named in `problems`; a `ktimer_bench:` line of another kind
is kept as a note, and so is the kernel's `hrtimer: interrupt took N ns`
during the benchmark (hrtimer_interrupt()'s hang protection, which delays
hard hrtimers on purpose: figures around it are not the API's own). Nothing
here raises on console content.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from common import ToolError, rel

FORMAT_VERSION = 3
# Version 1 had whole nanoseconds, batches of 64 and no event counts; version 2 no element size
# (elem_bytes) and no padded hrtimer; their lines read the same way.
READABLE_VERSIONS = (1, 2, 3)
LINE_RE = re.compile(r"ktimer_bench: (?P<kind>\w+)(?P<rest>.*)$")
KEY_RE = re.compile(r"^\w+$")
INT_RE = re.compile(r"^-?\d+$")
FLOAT_RE = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")
# Per kind: keys that must be there, and keys whose value must be a number. A result's
# figures (median_ns, p99_ns, callbacks_per_s, fired, ...) are every other key, all numbers.
REQUIRED = {
    "begin": ("version",),
    "size": ("api", "timer_bytes", "percpu_bytes"),
    "result": ("workload", "api", "n"),
    "skip": ("workload", "api", "n", "reason"),
    "end": (),
}
NUMERIC = {"begin": ("version", "hz", "cpu", "ncpus", "batch", "batches", "counts", "hres", "hres_wait_ms"),
           "size": ("timer_bytes", "elem_bytes", "percpu_bytes"), "result": ("n",), "skip": ("n",),
           "end": ("elapsed_ms",)}
NAMES = ("workload", "api")     # identifiers: a result's other values are its figures
# printed once per boot by hrtimer_interrupt() when it gave up catching up (kernel/time/hrtimer.c)
HRTIMER_HANG_RE = re.compile(r"hrtimer: interrupt took \d+ ns")
HRTIMER_HANG_NOTE = ("hrtimer_interrupt()'s hang protection fired: it delays the next hrtimer interrupt "
                     "on purpose, so hard hrtimer figures measured around it (latency) include that delay")


def number(text):
    """int or float for a number, else None."""
    if INT_RE.match(text):
        return int(text)
    if FLOAT_RE.match(text):
        return float(text)
    return None


def split_line(text):
    """(kind, {key: text}) of a `ktimer_bench:` line, or (kind, None) when its pairs are malformed;
    None for any other line."""
    match = LINE_RE.search(text.rstrip("\r\n"))
    if not match:
        return None
    kind, rest = match.group("kind"), match.group("rest").strip()
    pairs = {}
    for word in rest.split():
        key, sign, value = word.partition("=")
        if not sign or not KEY_RE.match(key) or not value or key in pairs:
            return kind, None
        pairs[key] = value
    return kind, pairs


@dataclass
class BenchRun:
    """The figures of one boot, in console order. Line numbers are 1-based console lines."""
    begin: dict = None          # the begin line's values, plus "line"
    end: dict = None            # the end line's values, plus "line"
    sizes: list = field(default_factory=list)       # {api, timer_bytes, elem_bytes (v3), percpu_bytes, line}
    results: list = field(default_factory=list)     # {workload, api, n, metrics: {name: number}, line}
    skips: list = field(default_factory=list)       # {workload, api, n, reason, line}
    notes: list = field(default_factory=list)       # {line, text}: other ktimer_bench lines
    problems: list = field(default_factory=list)    # what was left out, and why

    @property
    def started(self):
        return self.begin is not None

    @property
    def complete(self):
        return self.begin is not None and self.end is not None

    @property
    def engine(self):
        return (self.begin or {}).get("engine")

    def result(self, workload, api, n):
        """The figures {metric: value} of one measurement, or None."""
        for found in self.results:
            if (found["workload"], found["api"], found["n"]) == (workload, api, n):
                return found["metrics"]
        return None

    def skip(self, workload, api, n):
        """The reason a measurement was skipped, or None."""
        for found in self.skips:
            if (found["workload"], found["api"], found["n"]) == (workload, api, n):
                return found["reason"]
        return None

    def status(self):
        """complete, partial (began, never ended: crash or timeout) or absent (never began)."""
        return "complete" if self.complete else ("partial" if self.started else "absent")

    def to_dict(self):
        return {"status": self.status(), "begin": self.begin, "end": self.end, "sizes": self.sizes,
                "results": self.results, "skips": self.skips, "notes": self.notes, "problems": self.problems}

    @classmethod
    def from_dict(cls, data):
        data = data or {}
        return cls(data.get("begin"), data.get("end"), list(data.get("sizes") or []),
                   list(data.get("results") or []), list(data.get("skips") or []),
                   list(data.get("notes") or []), list(data.get("problems") or []))


def _typed(kind, pairs):
    """{key: value} with the kind's numbers converted; a problem text instead if it breaks the format."""
    missing = [key for key in REQUIRED[kind] if key not in pairs]
    if missing:
        return f"lacks {', '.join(missing)}"
    values = {}
    for key, text in pairs.items():
        if key in NUMERIC[kind] or (kind == "result" and key not in NAMES):
            value = number(text)
            if value is None:
                return f"{key}={text} is not a number"
            values[key] = value
        else:
            values[key] = text
    if kind in ("result", "skip") and (not isinstance(values["n"], int) or values["n"] < 0):
        return f"n={pairs['n']} is not a timer count"
    if kind == "result" and len(values) == len(REQUIRED["result"]):
        return "has no figure"
    return values


def parse(lines):
    """BenchRun from console lines (str, with or without newlines and timestamps)."""
    run = BenchRun()
    for number_at, text in enumerate(lines, 1):
        split = split_line(text)
        if split is None:
            hang = HRTIMER_HANG_RE.search(text)
            if hang and run.started and not run.complete:
                run.notes.append({"line": number_at, "text": f"{hang.group(0)}: {HRTIMER_HANG_NOTE}"})
            continue
        kind, pairs = split
        if kind not in REQUIRED:
            run.notes.append({"line": number_at, "text": LINE_RE.search(text).group(0).strip()})
            continue
        values = _typed(kind, pairs) if pairs is not None else "is not `key=value ...`"
        if isinstance(values, str):
            run.problems.append(f"console line {number_at}: malformed {kind} line left out ({values}): "
                                f"{text.strip()}")
            continue
        if kind == "begin":
            if run.begin is not None:
                run.problems.append(f"console line {number_at}: a second `begin` (the benchmark started again); "
                                    f"the figures before it are dropped")
                run = BenchRun(problems=run.problems)
            if values["version"] not in READABLE_VERSIONS:
                run.problems.append(f"console line {number_at}: format version {values['version']}, these tools "
                                    f"read version {FORMAT_VERSION}: figures may be misread")
            run.begin = dict(values, line=number_at)
            continue
        if run.begin is None or run.end is not None:
            where = "before its `begin`" if run.begin is None else "after its `end`"
            run.problems.append(f"console line {number_at}: {kind} line {where} left out")
            continue
        if kind == "end":
            run.end = dict(values, line=number_at)
        elif kind == "size":
            run.sizes.append(dict(values, line=number_at))
        elif kind == "skip":
            run.skips.append({"workload": values["workload"], "api": values["api"], "n": values["n"],
                              "reason": values["reason"], "line": number_at})
        else:
            _add_result(run, values, number_at)
    return run


def _add_result(run, values, number_at):
    key = (values["workload"], values["api"], values["n"])
    metrics = {name: value for name, value in values.items() if name not in REQUIRED["result"]}
    for index, found in enumerate(run.results):
        if (found["workload"], found["api"], found["n"]) == key:
            run.problems.append(f"console line {number_at}: {key[0]} {key[1]} n={key[2]} measured again "
                                f"(first at line {found['line']}); the later figures are kept")
            del run.results[index]
            break
    run.results.append({"workload": key[0], "api": key[1], "n": key[2], "metrics": metrics, "line": number_at})


def parse_file(path):
    """parse() of a console log; a missing or unreadable file is a ToolError."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        raise ToolError(f"no console log at {rel(path)}",
                        "run the benchmark first: `make bench` (or `make bench ARCH=i386`)") from None
    except OSError as error:
        raise ToolError(f"cannot read {rel(path)}: {error.strerror or error}") from None
    return parse(text.splitlines())
