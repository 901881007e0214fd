"""Scan a kernel console log for problems that must fail a run even if every test passed.

Finds WARNING splats, BUG/Oops/panics, lockdep, UBSAN/KASAN/KCSAN, debugobjects,
hung tasks, RCU stalls, overdue ktimers (ktimer.watchdog=), kmemleak reports, objects of ours left alive
and bare stack dumps. Each report (its first line up to
"---[ end trace") is one finding, so its backtrace is not reported again.

Tests that provoke a warning on purpose print
    ktimer-test: expect-warning-begin <tag>  ...  ktimer-test: expect-warning-end <tag>
around the call; a WARN splat starting inside such a window is expected, unless
it is a lockdep report (locking bugs are never expected). Unbalanced markers
are findings.
"""

import re
from dataclasses import dataclass, field

# The message part of a console line, after printk timestamp/caller prefixes.
PREFIX_RE = re.compile(r"^(?:\[\s*\d+\.\d+\])?(?:\[\s*[CT]\d+\])?\s?")
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc")

MARKER_RE = re.compile(r"ktimer-test: expect-warning-(begin|end)\s+(\S+)")
CUT_HERE_RE = re.compile(r"-+\[ cut here \]-+")
END_RE = re.compile(r"---\[ end (trace|Kernel panic|ktimer watchdog report)")
# The first line of a WARN report's body, after the WARNING: line and its message
WARN_REPORT_BODY_RE = re.compile(r"^(?:Modules linked in:|CPU: \d+ )")
WARN_SPLAT_RE = re.compile(r"^WARNING: (?:CPU: \d+ PID: \d+ at |at )")
KTAP_RE = re.compile(r"^\s*(?:(?:not )?ok \d+|# Subtest:|K?TAP version \d+|1\.\.\d+)")
# Message lines inside a WARN splat that make it a lockdep report: never expected.
LOCKDEP_IN_SPLAT_RE = re.compile(r"DEBUG_LOCKS_WARN_ON|\bat kernel/locking/")

# (kind, pattern on the message, ends at "---[ end ..."?) in priority order.
START_PATTERNS = [
    ("lockdep", re.compile(r"possible circular locking dependency detected|possible recursive locking detected"
                           r"|inconsistent lock state|DEBUG_LOCKS_WARN_ON|INFO: trying to register non-static key"
                           r"|suspicious RCU usage|bad unlock balance detected|possible irq lock inversion"
                           r"|lock held when returning to user space|held lock freed|BUG: lock held"),
     False),
    ("warning", WARN_SPLAT_RE, True),
    ("kasan", re.compile(r"(?:^|BUG: )KASAN:"), False),
    ("kcsan", re.compile(r"(?:^|BUG: )KCSAN:"), False),
    ("ubsan", re.compile(r"^UBSAN:"), True),
    ("bug", re.compile(r"(?:^|: )BUG:|kernel BUG at "), True),
    # ARM, VMAP_STACK: an abort that cannot be taken on the task's stack; its oops follows
    ("stack-overflow", re.compile(r"^Insufficient stack space to handle exception!"), True),
    ("oops", re.compile(r"(?:^|Internal error: )(?:Oops\b|kernel stack overflow)"), True),
    ("gpf", re.compile(r"general protection fault"), True),
    ("fault", re.compile(r"^Unable to handle kernel"), True),
    ("panic", re.compile(r"^Kernel panic\b"), True),
    ("debugobjects", re.compile(r"^ODEBUG:"), True),
    ("hung-task", re.compile(r"INFO: task .* blocked for more than"), False),
    ("rcu-stall", re.compile(r"INFO: rcu_\w+ .*detected .*stall"), False),
    ("lockup", re.compile(r"detected hard LOCKUP|soft lockup"), True),
    # ktimer.watchdog=: a timer stayed queued past its expiry; bases and blocked tasks follow
    ("ktimer-watchdog", re.compile(r"^ktimer: watchdog: .* overdue$"), True),
    # what /sys/kernel/debug/kmemleak reports, printed by the guest's /init (kmemleak configuration)
    ("kmemleak", re.compile(r"^unreferenced object 0x"), False),
    # objects of a slab cache of ours still alive after the programs (the guest's /init counts them)
    ("leak", re.compile(r"^guest: slab \S+: [1-9]\d* object"), False),
    # ... or the count could not be taken (a merged cache, no CONFIG_SLUB_DEBUG): the check did not run
    ("leak-check", re.compile(r"^guest: slab \S+: .*not counted"), False),
    ("warning", re.compile(r"^WARNING:"), False),   # other WARNING: reports (e.g. lockdep variants)
]
# A stack dump (dump_stack()) outside any report: something complained.
STACK_DUMP_RE = re.compile(r"^(?:Call [Tt]race:|Hardware name:|Backtrace:)")
DUMP_CONTINUATION_RE = re.compile(r"^(?:\s|Call [Tt]race:|Hardware name:|Backtrace:|CPU: |Stack:|Code:|"
                                  r"Exception stack|Modules linked in:|\[<|<TASK>|</TASK>|[A-Z]{2,3}: )")
DUMP_CONTEXT_LINES = 3
MAX_DUMP_LINES = 60
FRAME_RE = re.compile(r"\+0x[0-9a-f]+/0x[0-9a-f]+")   # a frame: x86 "f+0x5c/0x80", ARM "f from g+0x10/0x14"
# the frames every dump_stack() starts with, which say nothing about its cause
DUMPER_FRAME_RE = re.compile(r"^\s*(?:unwind_backtrace|show_stack|dump_stack\w*)(?:\+\S+)?\s*$|"
                             r"^\s*(?:unwind_backtrace|show_stack) from ")
# An oops that follows these in the same report is part of it (x86 "BUG: ... / Oops:",
# arm "Unable to handle ... / Internal error: Oops", "Insufficient stack space ... / Internal
# error: kernel stack overflow").
OOPS_CONTINUES = ("bug", "fault", "gpf", "stack-overflow")
MAX_REPORT_LINES = 400
CUT_HERE_LOOKAHEAD = 20


@dataclass
class Finding:
    kind: str
    line: int            # 1-based line number of the report's first line
    text: str            # that line (message part)
    detail: list = field(default_factory=list)   # e.g. the WARN() message printed before it

    def to_dict(self):
        return {"kind": self.kind, "line": self.line, "text": self.text, "detail": list(self.detail)}

    def __str__(self):
        return f"line {self.line}: [{self.kind}] {self.text}"


@dataclass
class ScanResult:
    findings: list = field(default_factory=list)
    expected: list = field(default_factory=list)   # splats excused by expect-warning markers


def message(line):
    line = ANSI_RE.sub("", line.rstrip("\r\n"))
    return line[PREFIX_RE.match(line).end():]


def match_start(text):
    text = text.lstrip()
    for kind, pattern, ends_with_marker in START_PATTERNS:
        if pattern.search(text):
            return kind, ends_with_marker
    return None


def warn_message_lines(texts, cut_index, warn_index):
    """The WARN() message: lines between '[ cut here ]' and 'WARNING:'."""
    return [t for t in texts[cut_index + 1:warn_index] if t.strip()] if cut_index is not None else []


def trailing_warn_message(texts, i):
    """The WARN() message where the arch prints it after 'WARNING:' (ARM):
    the lines up to the 'Modules linked in:' or 'CPU:' line that follows."""
    for j in range(i, min(i + CUT_HERE_LOOKAHEAD, len(texts))):
        if WARN_REPORT_BODY_RE.search(texts[j]):
            return [t for t in texts[i:j] if t.strip()]
    return []


def scan_detailed(lines):
    texts = [message(line) for line in lines]
    result = ScanResult()
    open_tags = {}          # tag -> line number of its begin marker
    i = 0
    while i < len(texts):
        text = texts[i]
        marker = MARKER_RE.search(text)
        if marker:
            handle_marker(marker.group(1), marker.group(2), i + 1, text, open_tags, result)
            i += 1
            continue
        # A WARN() prints "[ cut here ]" and its message before "WARNING:": group them.
        cut_index = None
        if CUT_HERE_RE.search(text):
            ahead = next((j for j in range(i + 1, min(i + 1 + CUT_HERE_LOOKAHEAD, len(texts)))
                          if WARN_SPLAT_RE.search(texts[j].lstrip())), None)
            if ahead is None:
                i += 1
                continue
            cut_index, i, text = i, ahead, texts[ahead]
        start = match_start(text)
        if start is None and STACK_DUMP_RE.search(text.lstrip()):
            result.findings.append(Finding("stack-dump", i + 1, text.strip(), dump_context(texts, i)))
            i = skip_dump(texts, i + 1)
            continue
        if start is None:
            i += 1
            continue
        kind, ends_with_marker = start
        detail = warn_message_lines(texts, cut_index, i)
        if kind == "warning" and WARN_SPLAT_RE.search(text.lstrip()):
            trailing = trailing_warn_message(texts, i + 1)
            detail += trailing
        else:
            trailing = []
        if kind == "warning" and any(LOCKDEP_IN_SPLAT_RE.search(t) for t in detail + [text]):
            kind = "lockdep"
        finding = Finding(kind, i + 1, text.strip(), [d.strip() for d in detail])
        if kind == "warning" and WARN_SPLAT_RE.search(text.lstrip()) and open_tags:
            result.expected.append(finding)
        else:
            result.findings.append(finding)
        i = skip_report(texts, i + 1 + len(trailing), kind, ends_with_marker)
    for tag, begin_line in open_tags.items():
        result.findings.append(Finding("marker", begin_line,
                                       f"ktimer-test: expect-warning-begin {tag} has no matching end marker"))
    result.findings.sort(key=lambda finding: finding.line)
    return result


def handle_marker(kind, tag, lineno, text, open_tags, result):
    if kind == "begin":
        if tag in open_tags:
            result.findings.append(Finding("marker", lineno,
                                           f"{text.strip()} (already open since line {open_tags[tag]})"))
        open_tags[tag] = lineno
    elif tag in open_tags:
        del open_tags[tag]
    else:
        result.findings.append(Finding("marker", lineno, f"{text.strip()} without a matching begin marker"))


def skip_report(texts, i, kind, ends_with_marker):
    """Index after the report starting before i: its backtrace belongs to it."""
    limit = min(len(texts), i + MAX_REPORT_LINES)
    while i < limit:
        text = texts[i]
        if END_RE.search(text):
            return i + 1
        start = match_start(text)
        if start and start[0] == "oops" and kind in OOPS_CONTINUES:
            i += 1
            continue
        if MARKER_RE.search(text) or start or CUT_HERE_RE.search(text):
            return i  # the next report (or a marker) starts here
        if not ends_with_marker and KTAP_RE.search(text):
            return i  # lockdep/hung-task reports have no end line: stop at test output
        i += 1
    return i


def dump_context(texts, start):
    """What a bare stack dump says about itself, since its own first line names only the machine:
    the lines printed just before it (who dumped, and often why) and its first frames below the
    dumping functions."""
    before = [t.strip() for t in texts[max(0, start - DUMP_CONTEXT_LINES):start] if t.strip()]
    frames = []
    for text in texts[start + 1:start + 1 + MAX_DUMP_LINES]:
        if FRAME_RE.search(text):
            if not DUMPER_FRAME_RE.search(text):
                frames.append(text.strip())
        elif not DUMP_CONTINUATION_RE.search(text):
            break
        if len(frames) == DUMP_CONTEXT_LINES:
            break
    return before + frames


def skip_dump(texts, i):
    while i < len(texts) and DUMP_CONTINUATION_RE.search(texts[i]) and not KTAP_RE.search(texts[i]) \
            and not END_RE.search(texts[i]) and not match_start(texts[i]):
        i += 1
    if i < len(texts) and END_RE.search(texts[i]):
        i += 1
    return i


def scan(lines):
    """Findings (unexpected problems) in the console log lines."""
    return scan_detailed(lines).findings


def scan_file(path):
    with open(path, errors="replace") as handle:
        return scan_detailed(handle.readlines())
