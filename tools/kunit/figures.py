"""Figures the kernel tests print: `# <test>: figures: key=value key=value ...`.

KUnit cases that count something (the fuzzer's operations and expiries, the
stress case's lost and duplicated expiries) print one such diagnostic line per
run, or per parameter of a parameterized case. kunit/ktap.py keeps each line in the
log of the case or parameter that printed it, and results.json stores the
values under that test as "figures": [{key: value, ...}], one dict per line.
Timing never decides pass or fail, but some figures are correctness counts:
any non-zero `lost`, `duplicated` or `divergences` fails the run even if the
case forgot to.
"""

import re

FIGURES_RE = re.compile(r"#\s*(?P<test>[\w.-]+):\s*figures:\s*(?P<pairs>.*?)\s*$")
PAIR_RE = re.compile(r"(?P<key>\w+)=(?P<value>\S+)")
MUST_BE_ZERO = ("lost", "duplicated", "divergences")


def value(text):
    try:
        return int(text)
    except ValueError:
        return text


def parse_line(text):
    """{key: value} of a figures line (numbers become ints); None for any other line."""
    match = FIGURES_RE.search(text)
    if not match:
        return None
    return {m.group("key"): value(m.group("value")) for m in PAIR_RE.finditer(match.group("pairs"))} or None


def from_log(log):
    """The figures of one test's log [(line number, text)], in log order."""
    return [found for found in (parse_line(text) for _, text in log) if found]


def in_results(suites):
    """[(test, {key: value})] from results.json suites; test is suite.case, then [param] per level."""
    out = []

    def walk(node, label, depth):
        out.extend((label, values) for values in node.get("figures", []))
        for child in node.get("children") or []:
            name = child.get("name", "")
            walk(child, f"{label}.{name}" if depth == 0 else f"{label}[{name}]", depth + 1)

    for suite in suites:
        walk(suite, suite.get("name", ""), 0)
    return out


def violations(found):
    """'test: key=value' for every correctness count that is not zero."""
    return [f"{test}: {key}={values[key]}" for test, values in found
            for key in MUST_BE_ZERO if values.get(key, 0) != 0]


def total(run_figures, suite, key):
    """The sum of one count over every run and parameter of a suite's cases (e.g. the fuzz operations)."""
    return sum(values.get(key, 0) for _, found in run_figures for test, values in found
               if test.split(".", 1)[0] == suite and isinstance(values.get(key, 0), int))


def format_line(label, test, values):
    return f"{label}  {test}  " + " ".join(f"{key}={val}" for key, val in values.items())
