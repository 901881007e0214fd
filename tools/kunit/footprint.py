"""What a kernel build compiled, per directory: the objects under a kbuild output dir, counted.

`ktimers.py footprint <build dir>...` prints, per build dir, the object files
(`*.o` that kbuild compiled from a source: not `built-in` archives' members
listed twice, not `*.mod.o`) grouped by their directory two levels deep
(`drivers/acpi`, `arch/x86`, `kernel/time`), largest first, with each
group's share. Compile time follows the object count closely (ccache or not,
each object is one compiler run), so this is where a configuration's build
time goes and the list to read before switching an option off.
"""

from collections import Counter
from pathlib import Path

from common import ToolError, rel

SKIP_SUFFIXES = (".mod.o", ".lds.o")
LINKED = ("vmlinux.o",)         # the link's output, not a compiled source


def objects(build_dir):
    """Paths (relative to build_dir) of the compiled objects."""
    build_dir = Path(build_dir)
    if not (build_dir / ".config").is_file():
        raise ToolError(f"{rel(build_dir)} is not a kernel build dir (no .config)",
                        "name a dir under build/kunit/, e.g. build/kunit/i386-default, after `make kunit`")
    found = []
    for path in build_dir.rglob("*.o"):
        name = path.name
        if name.endswith(SKIP_SUFFIXES) or name.startswith(".") or name in LINKED:
            continue
        found.append(path.relative_to(build_dir))
    return found


def group_of(path, depth=2):
    parts = path.parent.parts
    return "/".join(parts[:depth]) if parts else "."


def by_directory(paths, depth=2):
    """[(directory, count)], largest first, ties by name."""
    counts = Counter(group_of(path, depth) for path in paths)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def lines(build_dir, top=25, depth=2):
    paths = objects(build_dir)
    total = len(paths)
    out = [f"{rel(Path(build_dir))}: {total} objects"]
    groups = by_directory(paths, depth)
    for directory, count in groups[:top]:
        out.append(f"  {count:5d}  {100 * count / total:5.1f}%  {directory}")
    rest = sum(count for _, count in groups[top:])
    if rest:
        out.append(f"  {rest:5d}  {100 * rest / total:5.1f}%  ({len(groups) - top} other directories)")
    return out
