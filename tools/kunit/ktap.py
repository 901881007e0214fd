"""Parse KUnit's KTAP output from a kernel console log into suites -> cases -> params.

The console mixes KTAP with other kernel messages and may carry a printk
timestamp prefix; a crash can cut the output anywhere. The parser is a line
by line state machine driven by indentation (KUnit indents each level by 4
spaces; older logs use tabs or 2 spaces), so a truncated or interleaved log
still yields every result that was printed, and what was planned but never
reported becomes MISS. Statuses use the KCIDB vocabulary:
PASS, FAIL, SKIP, ERROR (started but never finished / inconsistent), MISS.

Usage: parse(lines) -> Run, or Parser(on_suite_done=cb).feed(line) ... .finish()
for live progress.
"""

import re
from dataclasses import dataclass, field

from kunit import figures

PASS, FAIL, SKIP, ERROR, MISS = "PASS", "FAIL", "SKIP", "ERROR", "MISS"
STATUSES = (PASS, FAIL, SKIP, ERROR, MISS)
BAD = (FAIL, ERROR, MISS)

VERSION_RE = re.compile(r"^(\s*)(K?TAP) version (\d+)\s*$")
VERSION_ANYWHERE_RE = re.compile(r"(K?TAP) version \d+\s*$")
SUBTEST_RE = re.compile(r"^(\s*)# Subtest: (.*?)\s*$")
PLAN_RE = re.compile(r"^(\s*)1\.\.(\d+)\s*(?:#.*)?$")
RESULT_RE = re.compile(r"^(\s*)(ok|not ok) (\d+)(?:\s+-\s+|\s+|$)(.*)$")
DIRECTIVE_RE = re.compile(r"^(.*?)\s*#\s*(SKIP|TODO)\b\s*(.*)$", re.IGNORECASE)
# printk prefixes: "[    1.234567] " and with CONFIG_PRINTK_CALLER "[    1.234567][    T1] "
TIMESTAMP_RE = re.compile(r"^\[\s*(\d+\.\d+)\](?:\[\s*[CT]\d+\])? ?")
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc")


@dataclass
class Node:
    """A suite, a test case or a parameter: whatever has an `ok`/`not ok` line."""
    name: str = ""
    number: int = None
    status: str = None
    directive: str = ""              # SKIP reason, if any
    planned: int = None              # from `1..N`
    line: int = None                 # line number of the result line
    header_line: int = None          # line number of `KTAP version`/`# Subtest:`/plan
    children: list = field(default_factory=list)
    log: list = field(default_factory=list)   # [(line number, text)] printed before its result
    errors: list = field(default_factory=list)
    start_time: float = None         # printk timestamps, when the console has them
    end_time: float = None

    @property
    def duration(self):
        if self.start_time is None or self.end_time is None:
            return None
        return round(self.end_time - self.start_time, 6)

    def to_dict(self):
        data = {"name": self.name, "number": self.number, "status": self.status, "line": self.line}
        if self.directive:
            data["directive"] = self.directive
        if self.planned is not None:
            data["planned"] = self.planned
        if self.duration is not None:
            data["duration_s"] = self.duration
        if self.errors:
            data["errors"] = list(self.errors)
        found = figures.from_log(self.log)
        if found:
            data["figures"] = found
        data["log"] = [[number, text] for number, text in self.log]
        if self.children:
            data["children"] = [child.to_dict() for child in self.children]
        return data


@dataclass
class Run:
    """The parsed console: top-level plan and suites, plus run-level problems."""
    started: bool = False
    start_line: int = None
    planned: int = None
    suites: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    complete: bool = False
    log: list = field(default_factory=list)

    def suite(self, name):
        return next((suite for suite in self.suites if suite.name == name), None)

    def case_counts(self):
        """Status counts over test cases (a suite without cases counts as one case)."""
        counts = dict.fromkeys(STATUSES, 0)
        for suite in self.suites:
            for case in suite.children or [suite]:
                counts[case.status] += 1
        return counts


class _Open:
    """A node whose result line has not been seen yet, with the level its children use."""

    def __init__(self, node, child_level):
        self.node = node
        self.child_level = child_level
        self.pending_log = []   # lines since the last child result: they belong to the next child
        self.last_stamp = node.start_time  # when the previous child ended: the next one's start


class Parser:
    def __init__(self, on_suite_done=None):
        self.on_suite_done = on_suite_done
        self.run = Run()
        self.root = Node(name="")
        self.stack = []
        self.prefix = None          # non-timestamp junk before "KTAP version" on every line
        self.timestamped = False
        self.indent_unit = None
        self.lineno = 0
        self.sessions = 0
        self.cut = False            # some test never printed its result line

    # ---- input ----------------------------------------------------------
    def feed(self, raw, lineno=None):
        self.lineno = lineno if lineno is not None else self.lineno + 1
        raw = ANSI_RE.sub("", raw.rstrip("\r\n")).replace("\r", "")
        if not self.run.started:
            match = VERSION_ANYWHERE_RE.search(raw)
            if not match:
                return
            self._start(raw[:match.start()])
        text, stamp = self._strip_prefix(raw)
        self._handle(text.rstrip(), stamp)

    def _start(self, prefix):
        self.run.started = True
        self.run.start_line = self.lineno
        self.timestamped = bool(TIMESTAMP_RE.match(prefix))
        if not self.timestamped:
            self.prefix = prefix
        self.stack = [_Open(self.root, 0)]

    def _strip_prefix(self, raw):
        if self.timestamped:
            match = TIMESTAMP_RE.match(raw)
            if match:
                return raw[match.end():], float(match.group(1))
            return raw, None
        if self.prefix and raw.startswith(self.prefix):
            return raw[len(self.prefix):], None
        return raw, None

    def _level(self, indent):
        if not indent:
            return 0
        if self.indent_unit is None:
            self.indent_unit = "\t" if "\t" in indent else indent
        if self.indent_unit == "\t":
            return indent.count("\t") or len(indent) // 8
        return len(indent.replace("\t", " " * 8)) // len(self.indent_unit)

    # ---- the state machine ------------------------------------------------
    def _handle(self, text, stamp):
        match = VERSION_RE.match(text)
        if match:
            return self._on_header(self._level(match.group(1)), None, stamp, version=True)
        match = SUBTEST_RE.match(text)
        if match:
            return self._on_header(self._level(match.group(1)), match.group(2), stamp)
        match = PLAN_RE.match(text)
        if match:
            return self._on_plan(self._level(match.group(1)), int(match.group(2)), stamp)
        match = RESULT_RE.match(text)
        if match:
            return self._on_result(self._level(match.group(1)), match.group(2) == "ok",
                                   int(match.group(3)), match.group(4), stamp)
        self._on_log(text)

    def _fresh(self, top):
        """True while a node has seen only its header lines (no plan, no results)."""
        return top.node.planned is None and not top.node.children and top.node is not self.root

    def _on_header(self, level, name, stamp, version=False):
        if level == 0 and self.stack[0].node.planned is not None and version:
            # A second top-level KTAP stream (another boot or a re-run): close what is open.
            self._close_down_to(0, "a new KTAP stream started")
            self.sessions += 1
            self.run.errors.append(f"line {self.lineno}: a second top-level KTAP stream starts here")
            return
        if level == 0:
            return  # root header: nothing to record
        self._close_down_to(level, "a new test started at the same level")
        top = self.stack[-1]
        if top.child_level == level and self._fresh(top) and not (version and top.node.name):
            if name is not None:
                top.node.name = name
            return
        if top.child_level == level:
            # A header at a level whose node is past its header: that node never printed its result.
            self._abandon(self.stack.pop(), "the next test started before its result line")
        self._open(level, name, stamp)

    def _open(self, level, name, stamp):
        while self.stack[-1].child_level < level - 1:
            self._open(self.stack[-1].child_level + 1, None, stamp)  # levels without headers
        parent = self.stack[-1]
        node = Node(name=name or "", header_line=self.lineno, start_time=stamp)
        # Lines since the previous sibling's result were printed for this test.
        node.log, parent.pending_log = parent.pending_log, []
        self.stack.append(_Open(node, level))

    def _on_plan(self, level, count, stamp):
        self._close_down_to(level, "a plan line for an outer level appeared")
        top = self.stack[-1]
        if top.child_level < level:
            self._open(level, None, stamp)
            top = self.stack[-1]
        top.last_stamp = stamp if stamp is not None else top.last_stamp
        if top.node.planned is None and not top.node.children:
            top.node.planned = count
            if top.node is self.root:
                self.run.planned = (self.run.planned or 0) + count
        elif top.node is self.root and self.sessions:
            self.run.planned = (self.run.planned or 0) + count
        else:
            top.node.errors.append(f"line {self.lineno}: extra plan 1..{count} ignored")

    def _on_result(self, level, ok, number, rest, stamp):
        name, status, directive = rest.strip(), PASS if ok else FAIL, ""
        match = DIRECTIVE_RE.match(rest)
        if match:
            name = match.group(1).strip()
            if match.group(2).upper() == "SKIP":
                status, directive = SKIP, match.group(3).strip()
        self._close_down_to(level + 1, "an outer result line appeared")
        top = self.stack[-1]
        if top.child_level == level + 1 and top.node is not self.root:
            # The result line of an open suite/case: it closes that node.
            self.stack.pop()
            node = top.node
            node.log.extend(top.pending_log)
        else:
            if top.child_level < level:
                self._open(level, None, stamp)    # results without a header (old param style)
                top = self.stack[-1]
            # A leaf result: the lines since the previous result belong to it.
            node = Node(header_line=self.lineno, start_time=top.last_stamp, log=top.pending_log)
            top.pending_log = []
        node.name = name or node.name
        node.number, node.status, node.directive, node.line = number, status, directive, self.lineno
        node.end_time = stamp
        if stamp is not None:
            self.stack[-1].last_stamp = stamp
        self._finalize(node)
        self._attach(node)

    def _attach(self, node):
        parent = self.stack[-1].node
        parent.children.append(node)
        if parent is self.root:
            self.run.suites.append(node)
            if self.on_suite_done:
                self.on_suite_done(node)

    def _on_log(self, text):
        if not text.strip():
            return
        top = self.stack[-1]
        entry = (self.lineno, text)
        # A fresh node's header region holds its attributes ("# module: x"), printed at its children's
        # indentation. KUnit 6.12 prints every diagnostic 4 spaces deep, so a shallower line after a
        # parameterized case's header is its first parameter's output, not the case's header.
        if self._fresh(top) and self._level(text[:len(text) - len(text.lstrip())]) >= top.child_level:
            top.node.log.append(entry)        # header region: attributes such as "# module: x"
        elif top.node is self.root and self._root_finished():
            self.run.log.append(entry)        # after the last suite: shutdown messages
        else:
            top.pending_log.append(entry)

    def _root_finished(self):
        return self.run.planned is not None and len(self.root.children) >= self.run.planned

    # ---- closing ----------------------------------------------------------
    def _close_down_to(self, level, why):
        """Abandon open nodes whose children are deeper than `level`."""
        while len(self.stack) > 1 and self.stack[-1].child_level > level:
            self._abandon(self.stack.pop(), why)

    def _abandon(self, top, why):
        """A node that never got its result line: ERROR, and its unreported children MISS."""
        node = top.node
        node.status = ERROR
        node.errors.append(f"no result line (output cut at line {self.lineno}: {why})")
        self.cut = True
        self._finalize(node, top.pending_log)
        siblings = self.stack[-1].node.children
        if node.number is None:
            node.number = max((child.number or 0) for child in siblings) + 1 if siblings else 1
        self._attach(node)

    def _finalize(self, node, pending=()):
        """Add MISS entries for planned-but-unreported children; leftover log goes to the first."""
        pending = list(pending)
        reported = {child.number for child in node.children}
        top = max([node.planned or 0] + [n or 0 for n in reported])
        missing = [n for n in range(1, top + 1) if n not in reported]
        for number in missing:
            miss = Node(name=f"(unreported #{number})", number=number, status=MISS)
            miss.errors.append("planned but never reported")
            if pending:
                miss.log, pending = pending, []
            node.children.append(miss)
        node.children.sort(key=lambda child: child.number or 0)
        node.log.extend(pending)
        if missing and node.status == PASS:
            node.status = ERROR
            node.errors.append(f"plan 1..{node.planned} but {len(reported)} result(s) reported")

    def finish(self):
        """End of input: everything still open was cut off (crash, timeout)."""
        if self.run.started:
            self._close_down_to(0, "end of log")
            planned = self.run.planned
            reported = len(self.run.suites)
            if self.cut:
                self.run.errors.append("the test output was cut off: some tests never printed a result "
                                       "(kernel crash, hang or timeout)")
            if planned is None:
                self.run.errors.append("no top-level plan (1..N) found")
            elif reported < planned:
                self.run.errors.append(f"{planned} suite(s) planned, {reported} reported: the output ended early")
            self.run.complete = planned is not None and reported >= planned and not self.cut
        else:
            self.run.errors.append("no KTAP output found (no 'KTAP version' line)")
        return self.run


def parse(lines, on_suite_done=None):
    parser = Parser(on_suite_done)
    for line in lines:
        parser.feed(line)
    return parser.finish()


def parse_file(path):
    with open(path, errors="replace") as handle:
        return parse(handle)


# ---- the parsed nodes as a results document (results.json) holds them: Node.to_dict() ----------

def failing_cases(document):
    """[(suite, case, node, missed)] for every bad case; a suite's unreported cases are one entry."""
    out = []
    for suite in document.get("suites", []):
        children = suite.get("children") or []
        if not children and suite.get("status") in BAD:
            out.append((suite["name"], None, suite, []))
        missed = [case for case in children if case.get("status") == MISS]
        for case in children:
            if case.get("status") in (FAIL, ERROR):
                out.append((suite["name"], case["name"], case, []))
        if missed:
            out.append((suite["name"], None, missed[0], missed))
    return out


def node_log(node):
    """A node's log and its children's, in console order: what to show for a failure."""
    lines = list(node.get("log", []))
    for child in node.get("children", []) or []:
        lines += node_log(child)
    return sorted(lines)


def diagnostic_lines(log):
    """KUnit's own lines (indented: "    # case: EXPECTATION FAILED ...", "    Expected ...")
    rather than kernel messages printed meanwhile (warning backtraces); all lines if none."""
    kunit_lines = [(number, text) for number, text in log if text.startswith(("    ", "\t"))]
    return kunit_lines or log
