"""Compare two runs of one arch and configuration, test by test: what regressed, what got fixed.

A run here is a Snapshot: its build status and {path: status} for every test it
recorded (suite, suite.case, suite.case.param). Each path falls in one class:

    regression  PASS -> FAIL, ERROR or MISS
    fix         FAIL, ERROR or MISS -> PASS
    new         only in the newer run
    removed     only in the older run
    changed     any other change of status (PASS -> SKIP, FAIL -> ERROR, ...)
    unchanged

A test the newer run does not list, under a suite or case that ended in ERROR or
MISS (the kernel crashed, or the suite never reported), was planned and never
ran: it counts as MISS, so a crash shows as the regressions it caused rather
than as removed tests (and the parser's unnamed MISS stand-ins for those tests
are not listed as new). Regressions and fixes are listed most specific first (a
case is left out when one of its parameters carries the change, except the
deepest test that ended in ERROR: the one running when the kernel died); new and
removed tests are listed by their topmost path (a new suite is one entry).

A newer run whose kernel did not build has no tests: the comparison says so and
counts it as one regression when the older build passed. The run's own verdict
turning from PASS to anything else (a new kernel WARNING, a crash) without any
test regression is reported as a run regression, so it is never lost either.
"""

from dataclasses import dataclass, field

PASS = "PASS"
BAD = ("FAIL", "ERROR", "MISS")
CUT = ("ERROR", "MISS")     # a parent in this state did not run all its children
CLASSES = ("regression", "fix", "new", "removed", "changed")
PLURALS = {"regression": "regressions", "fix": "fixes", "new": "new", "removed": "removed", "changed": "changed"}


def counted(count, kind):
    """'1 regression', '2 fixes', '3 new'."""
    return f"{count} {kind if count == 1 else PLURALS[kind]}"


@dataclass
class Snapshot:
    """What the comparison needs of one run (a database build, or a baseline entry)."""
    label: str                      # 'latest', 'previous', 'baseline'
    build_status: str = PASS        # PASS, FAIL (no kernel), ERROR
    run_status: str = PASS          # the tools' verdict: PASS FAIL CRASH TIMEOUT BUILD_ERROR ...
    tests: dict = field(default_factory=dict)   # path -> status
    start_time: str = None
    build_id: str = None


@dataclass
class Change:
    path: str
    kind: str                       # one of CLASSES
    old: str = None                 # status before (None: new)
    new: str = None                 # status now (None: removed)
    count: int = 1                  # new/removed: the tests under this path, itself included
    implied: bool = False           # new status MISS because a parent was cut off, not recorded


@dataclass
class Comparison:
    old: Snapshot
    new: Snapshot
    changes: list = field(default_factory=list)
    build: str = None               # 'build failed', 'build still fails', 'build fixed'
    run: str = None                 # 'PASS -> CRASH' when only the run's verdict got worse

    def of(self, kind):
        return [change for change in self.changes if change.kind == kind]

    @property
    def regressions(self):
        """How many regressions this comparison counts (for the exit status and the summary)."""
        return len(self.of("regression")) + (1 if self.build == "build failed" else 0) + (1 if self.run else 0)

    def counts(self):
        counts = {kind: len(self.of(kind)) for kind in CLASSES}
        counts["regression"] = self.regressions
        return counts

    def described(self):
        """[(class, text)] for the report's tables: the build's change ('build failed' is a regression), else
        '2 regressions', '1 fix', ... per class that has any; [] when nothing changed."""
        if self.build:
            return [("regression" if self.build == "build failed" else "muted", self.build)]
        counts = self.counts()
        return [(kind, counted(counts[kind], kind)) for kind in CLASSES if counts[kind]]


def parents(path):
    parts = path.split(".")
    return [".".join(parts[:index]) for index in range(len(parts) - 1, 0, -1)]


def implied_status(path, tests):
    """MISS when a parent of this absent path is in `tests` with ERROR or MISS: it never ran."""
    for parent in parents(path):
        if parent in tests:
            return "MISS" if tests[parent] in CUT else None
    return None


def classify(old, new):
    if old is None:
        return "new"
    if new is None:
        return "removed"
    if old == new:
        return None
    if old == PASS and new in BAD:
        return "regression"
    if old in BAD and new == PASS:
        return "fix"
    return "changed"


def placeholder(path, status, old_tests):
    """A MISS the newer run added under a suite or case the older run knows: the parser's stand-in for
    a planned test that never reported (its name is unknown), already counted by implied_status()."""
    return status == "MISS" and any(parent in old_tests for parent in parents(path))


def compare_tests(old_tests, new_tests):
    """[Change] between two {path: status} maps, pruned for display."""
    changes = []
    for path in sorted(set(old_tests) | set(new_tests)):
        old, new, implied = old_tests.get(path), new_tests.get(path), False
        if new is None and old is not None:
            new = implied_status(path, new_tests)
            implied = new is not None
        if old is None and placeholder(path, new, old_tests):
            continue
        kind = classify(old, new)
        if kind:
            changes.append(Change(path, kind, old, new, implied=implied))
    return prune(changes)


def prune(changes):
    """Most specific regressions, fixes and changes; topmost new and removed paths, with their counts."""
    by_kind = {kind: [c for c in changes if c.kind == kind] for kind in CLASSES}
    out = []
    for kind in ("regression", "fix", "changed"):
        paths = {change.path for change in by_kind[kind]}
        out += [c for c in by_kind[kind] if not any(p.startswith(c.path + ".") for p in paths)]
    # The test that was running when the kernel died (ERROR, its unfinished children never ran) stays
    # listed: it is where to look. Only the deepest one: its suite is ERROR for the same reason.
    running = {c.path for c in by_kind["regression"] if c.new == "ERROR" and not c.implied}
    out += [c for c in by_kind["regression"] if c.path in running and c not in out
            and not any(p.startswith(c.path + ".") for p in running)]
    for kind in ("new", "removed"):
        paths = {change.path for change in by_kind[kind]}
        for change in by_kind[kind]:
            if any(parent in paths for parent in parents(change.path)):
                continue
            change.count = sum(1 for p in paths if p == change.path or p.startswith(change.path + "."))
            out.append(change)
    order = {kind: index for index, kind in enumerate(CLASSES)}
    return sorted(out, key=lambda change: (order[change.kind], change.path))


def compare(old, new):
    """Comparison of two Snapshots of one arch and configuration (old may be None: nothing to compare)."""
    comparison = Comparison(old, new)
    if old is None:
        return comparison
    if new.build_status != PASS:
        comparison.build = "build failed" if old.build_status == PASS else "build still fails"
        return comparison
    if old.build_status != PASS:
        comparison.build = "build fixed"
        return comparison   # nothing ran before: every test would be 'new'
    comparison.changes = compare_tests(old.tests, new.tests)
    if old.run_status == PASS and new.run_status != PASS and not comparison.of("regression"):
        comparison.run = f"{old.run_status} -> {new.run_status}"
    return comparison


def grouped(merged):
    """[(change, comparison names)] -> (explicit regressions, {(suite, names): [implied MISS changes]}):
    a crash's never-run tests, per suite, so they can be shown as one line."""
    explicit, never_ran = [], {}
    for change, names in merged:
        if change.implied:
            never_ran.setdefault((change.path.split(".")[0], tuple(names)), []).append(change)
        else:
            explicit.append((change, names))
    return explicit, never_ran
