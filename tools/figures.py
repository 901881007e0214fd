"""Figures the kernel tests print: `# <test>: figures: key=value key=value ...`.

KUnit cases that count something (the fuzzer's operations and expiries, the
stress case's lost and duplicated expiries) print one such diagnostic line per
run or per parameter. Timing never decides pass or fail, but some figures are
correctness counts: any non-zero `lost`, `duplicated` or `divergences` fails
the run even if the case forgot to.
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


def parse(lines):
    """[(test, {key: value})] in log order; numbers become ints."""
    found = []
    for line in lines:
        match = FIGURES_RE.search(line)
        if match:
            pairs = {m.group("key"): value(m.group("value")) for m in PAIR_RE.finditer(match.group("pairs"))}
            if pairs:
                found.append((match.group("test"), pairs))
    return found


def parse_file(path):
    try:
        with open(path, errors="replace") as handle:
            return parse(handle)
    except OSError:
        return []


def violations(figures):
    """'test: key=value' for every correctness count that is not zero."""
    return [f"{test}: {key}={pairs[key]}" for test, pairs in figures
            for key in MUST_BE_ZERO if pairs.get(key, 0) != 0]


def format_line(label, test, pairs):
    return f"{label}  {test}  " + " ".join(f"{key}={val}" for key, val in pairs.items())
