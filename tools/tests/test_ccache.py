import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import helpers  # noqa: F401  (puts tools/ on sys.path)

from setup import ccache

# ccache 4.7's stats log (CCACHE_STATSLOG) as our builds write it: one "# <source>" line per
# compile, then its counters.
STATS_LOG = """\
# kernel/time/ktimer.c
cache_miss
direct_cache_miss
local_storage_miss
preprocessed_cache_miss
# kernel/time/hrtimer.c
direct_cache_hit
local_storage_hit
# kernel/time/timer.c
preprocessed_cache_hit
# scripts/mod/empty.c
could_not_use_modules
"""


class HitRateTest(unittest.TestCase):
    def test_counts_hits_and_misses_per_compile(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "ccache-stats.log"
            log.write_text(STATS_LOG)
            rate = ccache.read_stats_log(log)
        self.assertEqual((rate.hits, rate.misses), (2, 1))
        self.assertEqual(str(rate), "67% of 3 (1 compiled)")
        self.assertEqual(rate.to_dict(), {"hits": 2, "misses": 1})

    def test_no_log_is_none_and_empty_log_says_no_compiles(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(ccache.read_stats_log(Path(tmp) / "missing.log"))
            (Path(tmp) / "empty.log").write_text("")
            self.assertEqual(str(ccache.read_stats_log(Path(tmp) / "empty.log")), "no compiles")

    def test_fresh_stats_log_empties_the_previous_build_s(self):
        with tempfile.TemporaryDirectory() as tmp:
            old = Path(tmp) / ccache.STATS_LOG
            old.write_text(STATS_LOG)
            self.assertEqual(ccache.fresh_stats_log(tmp), old)
            self.assertFalse(old.exists())


class EnvironmentTest(unittest.TestCase):
    def test_keys_do_not_depend_on_the_checkout(self):
        env = ccache.environment({"PATH": "/bin"}, stats_log="/x/ccache-stats.log", repo="/work/checkout")
        self.assertEqual(env["CCACHE_BASEDIR"], "/work/checkout")
        self.assertEqual(env["CCACHE_NOHASHDIR"], "1")
        self.assertIn("include_file_mtime", env["CCACHE_SLOPPINESS"])
        self.assertEqual(env["CCACHE_STATSLOG"], "/x/ccache-stats.log")
        self.assertEqual(env["PATH"], "/bin")

    def test_a_users_cache_size_wins(self):
        self.assertEqual(ccache.environment({"CCACHE_MAXSIZE": "50G"})["CCACHE_MAXSIZE"], "50G")

    @unittest.skipUnless(shutil.which("ccache") and shutil.which("gcc"), "needs ccache and gcc")
    def test_a_second_checkout_hits_the_first_ones_objects(self):
        # The same source compiled in two checkouts, with the absolute paths kbuild passes.
        with tempfile.TemporaryDirectory() as tmp:
            base = {"PATH": os.environ["PATH"], "CCACHE_DIR": f"{tmp}/cache"}
            for checkout in ("one", "two"):
                root = Path(tmp) / checkout
                (root / "src").mkdir(parents=True)
                (root / "src" / "x.h").write_text("#define X 1\n")
                (root / "src" / "x.c").write_text('#include "x.h"\nint f(void) { return X; }\n')
                log = Path(tmp) / f"{checkout}.log"
                subprocess.run(["ccache", "gcc", "-c", f"-I{root}/src", f"-fmacro-prefix-map={root}/=",
                                "-o", "x.o", f"{root}/src/x.c"], cwd=root, check=True,
                               env=ccache.environment(base, stats_log=log, repo=root))
            self.assertEqual(ccache.read_stats_log(Path(tmp) / "one.log").to_dict(), {"hits": 0, "misses": 1})
            self.assertEqual(ccache.read_stats_log(Path(tmp) / "two.log").to_dict(), {"hits": 1, "misses": 0})


if __name__ == "__main__":
    unittest.main()
