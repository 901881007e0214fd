"""The mutant catalogue (mutants/*.patch): read it, check it, pick mutants from it.

One file per mutant, mutants/<NN>-<short-name>.patch, in name order: a header of
`Key: value` lines, then a unified diff that `git apply` takes in the prepared
kernel tree (paths relative to the tree: a/kernel/time/ktimer.c). git apply
ignores the header. Keys (case does not matter):

    Mutant:     one-line description                      (required)
    Configs:    default lowres                            (kunit_configs/matrix names; default: default)
    User:       yes                                       (also the project's own user-space suite)
    Equivalent: why no test can tell it from the original (surviving it is expected)
    Expect:     the suites or cases that should kill it   (information for the report)

Blank lines and `#` lines are allowed in the header; a line that starts with
blanks continues the previous value. Other files (mutants/README) are ignored.
docs/mutants.md describes the format and how to add a mutant.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from common import REPO_ROOT, ToolError, rel
from series.store import DIFF_GIT_RE

CATALOGUE_DIR = REPO_ROOT / "mutants"
SUFFIX = ".patch"
NAME_RE = re.compile(r"^(\d+)-[A-Za-z0-9][A-Za-z0-9._+-]*$")
HEADER_RE = re.compile(r"^([A-Za-z][A-Za-z_-]*):(.*)$")
KEYS = ("mutant", "configs", "user", "equivalent", "expect")
USER_VALUES = {"yes": True, "no": False}
DEFAULT_CONFIGS = ("default",)
WORDS_RE = re.compile(r"[\s,]+")
HINT = "see docs/mutants.md#the-catalogue"


@dataclass(frozen=True)
class Mutant:
    id: str                         # the file name without .patch: 12-forward-off-by-one
    number: int                     # its NN
    description: str
    path: Path
    configs: tuple = DEFAULT_CONFIGS
    user: bool = False              # also run the project's own user-space suite
    equivalent: str = ""            # why it is a known equivalent mutant ("" = it is not)
    expect: tuple = ()              # suites or cases that should kill it (information)
    files: tuple = ()               # the in-tree files its diff touches (a/ and b/ sides)

    def plan_text(self):
        """'default lowres, user' for --list and the progress lines."""
        return " ".join(self.configs) + (", user" if self.user else "")


def _words(value):
    return tuple(word for word in WORDS_RE.split(value) if word)


def _header(path, lines):
    """{key: value} from the header lines (before the first `diff --git`)."""
    values, last = {}, None

    def fail(number, message):
        raise ToolError(f"{rel(path)}: line {number}: {message}", HINT)

    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            last = None
            continue
        if line[0] in " \t" and last:
            values[last] = f"{values[last]} {line.strip()}".strip()
            continue
        match = HEADER_RE.match(line)
        if not match:
            fail(number, f"not a `Key: value` header line: {line.strip()[:60]!r} (the diff starts at the first "
                         "`diff --git` line)")
        key = match.group(1).lower()
        if key not in KEYS:
            fail(number, f"unknown header `{match.group(1)}:` (known: "
                         f"{', '.join(k.capitalize() for k in KEYS)})")
        if key in values:
            fail(number, f"`{match.group(1)}:` given twice")
        values[key], last = match.group(2).strip(), key
    return values


def parse(path):
    """One catalogue file as a Mutant; a ToolError naming the file for anything wrong with it."""
    path = Path(path)
    stem = path.name[:-len(SUFFIX)] if path.name.endswith(SUFFIX) else path.name
    name = NAME_RE.match(stem)
    if not name:
        raise ToolError(f"{rel(path)}: a mutant's file name is <NN>-<short-name>{SUFFIX} "
                        "(digits, a dash, then letters, digits, '.', '_', '+', '-')", HINT)
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        raise ToolError(f"cannot read {rel(path)}: {error.strerror or error}") from None
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("diff --git ")), None)
    if start is None:
        raise ToolError(f"{rel(path)}: no diff: a mutant is a header, then a unified diff starting with a "
                        "`diff --git a/<path> b/<path>` line (`git -C build/linux diff` writes one)", HINT)
    diff = "\n".join(lines[start:])
    if not any(line.startswith("@@ ") for line in lines[start:]):
        raise ToolError(f"{rel(path)}: the diff has no hunk (no `@@` line): it changes no code", HINT)
    values = _header(path, lines[:start])
    if not values.get("mutant"):
        raise ToolError(f"{rel(path)}: no `Mutant: <one-line description>` header before the diff", HINT)
    configs = _words(values.get("configs", "")) if "configs" in values else DEFAULT_CONFIGS
    if not configs:
        raise ToolError(f"{rel(path)}: `Configs:` is empty (leave it out for `default`)", HINT)
    user = values.get("user", "no").lower()
    if user not in USER_VALUES:
        raise ToolError(f"{rel(path)}: `User:` is yes or no, not {values['user']!r}", HINT)
    if "equivalent" in values and not values["equivalent"]:
        raise ToolError(f"{rel(path)}: `Equivalent:` needs the reason no test can tell the mutant from the "
                        "original", HINT)
    files = []
    for match in DIFF_GIT_RE.finditer(diff):
        files += [match.group(1), match.group(2)]
    return Mutant(id=stem, number=int(name.group(1)), description=values["mutant"], path=path, configs=configs,
                  user=USER_VALUES[user], equivalent=values.get("equivalent", ""),
                  expect=_words(values.get("expect", "")), files=tuple(dict.fromkeys(files)))


def load(directory=CATALOGUE_DIR):
    """Every mutant of the catalogue, in file name order. All defective files are named in one error."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ToolError(f"no mutant catalogue: {rel(directory)} does not exist",
                        f"write mutants as {rel(directory)}/<NN>-<short-name>{SUFFIX}; {HINT}")
    files = sorted(path for path in directory.iterdir() if path.name.endswith(SUFFIX) and path.is_file())
    if not files:
        raise ToolError(f"{rel(directory)} holds no *{SUFFIX} file", HINT)
    mutants, errors = [], []
    for path in files:
        try:
            mutants.append(parse(path))
        except ToolError as error:
            errors.append(error.message)
    if errors:
        raise ToolError(f"{len(errors)} defective file(s) in the mutant catalogue:\n  " + "\n  ".join(errors), HINT)
    return mutants


def _matches(mutant, wanted):
    wanted = wanted.removesuffix(SUFFIX)
    return wanted == mutant.id or (wanted.isdigit() and int(wanted) == mutant.number)


def select(mutants, only=None):
    """The mutants `only` names (ids, or their numbers: 3, 03, 03-name), in catalogue order; all without."""
    if not only:
        return list(mutants)
    unknown = [wanted for wanted in only if not any(_matches(mutant, wanted) for mutant in mutants)]
    if unknown:
        raise ToolError(f"no mutant {', '.join(unknown)} in the catalogue",
                        "`python3 tools/ktimers.py mutants --list` lists them; name one by its number (03) or "
                        "its file name without .patch")
    return [mutant for mutant in mutants if any(_matches(mutant, wanted) for wanted in only)]


def describe(mutants):
    """The lines of `mutants --list`: id, description, configurations (and user, equivalent)."""
    width = max((len(mutant.id) for mutant in mutants), default=0)
    lines = []
    for mutant in mutants:
        extra = "; equivalent" if mutant.equivalent else ""
        lines.append(f"{mutant.id.ljust(width)}  {mutant.description}  [{mutant.plan_text()}{extra}]")
    lines.append(f"{len(mutants)} mutant(s)")
    return lines
