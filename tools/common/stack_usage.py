"""The deepest kernel stacks a boot reports (CONFIG_DEBUG_STACK_USAGE).

With DEBUG_STACK_USAGE the kernel prints, when a task exits having gone
deeper than every task before it in that boot, "<comm> (<pid>) used greatest
stack depth: <n> bytes left" (kernel/exit.c, check_stack_usage()). Only new
records are printed, so the last such line of a console is the boot's deepest
stack. `make repeat` keeps the deepest of all its boots per column: the stack
depth of issue 26, ktimer path against hrtimer path.
"""

import re
from dataclasses import dataclass

# THREAD_SIZE of i386 and ARM (8 KiB); "used" is THREAD_SIZE minus what was never touched
THREAD_SIZE = 8192
# Anywhere in a line: the guest's programs write to the same console, and the
# kernel's line can land in the middle of theirs, so the task name is the word
# before "(<pid>)", which may carry the end of the other line.
RECORD_RE = re.compile(r"(?P<task>[^\s\]]+) \((?P<pid>\d+)\) used greatest stack depth: "
                       r"(?P<left>\d+) bytes left")


@dataclass(frozen=True)
class StackRecord:
    task: str
    bytes_left: int

    @property
    def used(self):
        return THREAD_SIZE - self.bytes_left

    def to_dict(self):
        return {"task": self.task, "bytes_left": self.bytes_left, "used": self.used}


def records(lines):
    """Every "used greatest stack depth" record of a console, in order."""
    found = []
    for line in lines:
        match = RECORD_RE.search(line)
        if match:
            found.append(StackRecord(match["task"], int(match["left"])))
    return found


def deepest(lines):
    """The console's deepest stack record, or None when it printed none."""
    return min(records(lines), key=lambda record: record.bytes_left, default=None)
