"""Selftests known to fail on this kernel and emulator, on the stock path too (selftests/known-failures).

An INI file, one section per selftest:

    [posix_timers]
    arches   = i386 arm        # optional: where it is known to fail (default: every arch)
    subtests = check_rearm, check_delete   # optional: only these KTAP cases may fail
    reason   = why it fails, and what was measured when it was added

Such a test failing on the hrtimer path (and on the ktimer path too) is listed
in the report with its measured values and this reason, and does not fail the
gate. Failing on the ktimer path alone always fails the gate, and so does a
failing subtest that `subtests` does not name.
"""

import configparser
from dataclasses import dataclass
from pathlib import Path

from common.arches import ARCHES
from common import REPO_ROOT, ToolError, rel

KNOWN_FILE = REPO_ROOT / "selftests" / "known-failures"
KEYS = ("arches", "subtests", "reason")
HINT = "see the comment at the top of selftests/known-failures"


@dataclass(frozen=True)
class KnownFailure:
    reason: str
    arches: tuple = ()      # () = every arch
    subtests: tuple = ()    # () = any subtest (or a test without KTAP subtests)


def load(path=KNOWN_FILE):
    """{test name: KnownFailure}; a missing file means nothing is known to fail."""
    path = Path(path)
    if not path.exists():
        return {}
    parser = configparser.ConfigParser(interpolation=None, default_section="\0", strict=True,
                                       inline_comment_prefixes=("#",))
    try:
        parser.read_string(path.read_text(), source=rel(path))
    except configparser.Error as error:
        raise ToolError(f"{rel(path)}: {str(error).splitlines()[0]}", HINT) from None
    known = {}
    for name in parser.sections():
        section = parser[name]
        unknown = set(section) - set(KEYS)
        if unknown:
            raise ToolError(f"{rel(path)}: [{name}]: unknown key(s) {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(KEYS)})", HINT)
        reason = " ".join(section.get("reason", "").split())
        if not reason:
            raise ToolError(f"{rel(path)}: [{name}]: `reason` is required: the report prints it", HINT)
        arches = tuple(section.get("arches", "").split())
        for arch in arches:
            if arch not in ARCHES:
                raise ToolError(f"{rel(path)}: [{name}]: unknown arch {arch!r}", HINT)
        subtests = tuple(" ".join(s.split()) for s in section.get("subtests", "").split(",") if s.strip())
        known[name] = KnownFailure(reason, arches, subtests)
    return known


def reason_for(known, test, arch, failed_subtests=()):
    """The documented reason if these failures of `test` on `arch` are known, else None."""
    entry = known.get(test)
    if not entry or (entry.arches and arch not in entry.arches):
        return None
    if entry.subtests and not set(failed_subtests) <= set(entry.subtests):
        return None
    return entry.reason
