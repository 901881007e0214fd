"""ccache for the kernel builds: keys that do not depend on where the checkout lives, and the
hit rate of each build.

Every compile command carries the checkout's absolute paths (-I<checkout>/build/linux/include,
-fmacro-prefix-map=<checkout>/build/linux/=, the source file). ccache rewrites paths under its
base_dir to paths relative to the compiler's working directory before hashing, and the kernel
tree and the build dirs both live under the checkout, so the same object compiled in another
clone (CI right after a session, on the same machine) gets the same key and hits.
"""

import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from common import REPO_ROOT

# Five kernel builds (two arches, up, kasan) take about 3 GiB in the cache; ccache's 5 GiB
# default would evict a configuration's objects before the next CI run needs them.
MAX_SIZE = "20G"
STATS_LOG = "ccache-stats.log"
HIT_COUNTERS = ("direct_cache_hit", "preprocessed_cache_hit")
MISS_COUNTERS = ("cache_miss",)


def available():
    return shutil.which("ccache") is not None


def environment(env, stats_log=None, repo=REPO_ROOT):
    """env with the ccache settings of our builds; stats_log: where ccache records each compile."""
    env = dict(env)
    env["CCACHE_BASEDIR"] = str(Path(repo).resolve())
    # The working directory only matters for debug info, which the kunit images do not have;
    # not hashing it is what lets a second checkout hit.
    env["CCACHE_NOHASHDIR"] = "1"
    # A fresh tree has fresh mtimes; without this, headers newer than the compile's start
    # (include/generated/) turn direct mode off for every file that includes them.
    env["CCACHE_SLOPPINESS"] = "include_file_mtime,include_file_ctime"
    env.setdefault("CCACHE_MAXSIZE", MAX_SIZE)
    if stats_log:
        env["CCACHE_STATSLOG"] = str(stats_log)
    return env


@dataclass(frozen=True)
class HitRate:
    hits: int
    misses: int

    @property
    def compiles(self):
        return self.hits + self.misses

    def __str__(self):
        if not self.compiles:
            return "no compiles"
        return f"{100 * self.hits / self.compiles:.0f}% of {self.compiles} ({self.misses} compiled)"

    def to_dict(self):
        return {"hits": self.hits, "misses": self.misses}


def read_stats_log(path):
    """The hit rate recorded in one build's stats log (None when there is no log)."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return None
    counts = Counter(line.strip() for line in lines if line and not line.startswith("#"))
    return HitRate(sum(counts[name] for name in HIT_COUNTERS), sum(counts[name] for name in MISS_COUNTERS))


def fresh_stats_log(build_dir):
    """The stats log of the build about to start in build_dir, emptied."""
    path = Path(build_dir) / STATS_LOG
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return path
