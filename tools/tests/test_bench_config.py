"""The benchmark's kernel is production-like: none of the lock and debug checkers of .kunitconfig.

kunit_configs/bench.config turns them off one by one, after .kunitconfig (tools/kunit/matrix.py merges
the files, later lines winning). These tests fail when .kunitconfig gains a checker that
bench.config does not switch off, so the benchmark never measures a checker by accident.
"""

import re
import unittest

from helpers import TempDirTestCase, write

from kunit import matrix
from common import REPO_ROOT

# Options that make timer operations slower in a way that differs per API.
CHECKER_RE = re.compile(r"^(PROVE_\w+|LOCKDEP\w*|LOCK_STAT|DEBUG_(?!FS\b|FS_|INFO|BUGVERBOSE\b)\w+|UBSAN\w*|"
                        r"KASAN\w*|KCSAN\w*|KMSAN\w*|KFENCE\w*|TRACE_IRQFLAGS|IRQSOFF_TRACER|PREEMPT_TRACER|"
                        r"FUNCTION_TRACER|FUNCTION_GRAPH_TRACER|GCOV_KERNEL|KCOV\w*)$")


def checkers_on(configuration, arch, repo=REPO_ROOT):
    """The checker symbols the configuration's effective kunitconfig asks for (=y)."""
    return [symbol for symbol, line, _, _ in matrix.merge(matrix.kunitconfig_sources(configuration, arch, repo))
            if CHECKER_RE.match(symbol) and not line.startswith("#") and not line.endswith("=n")]


class ShippedBenchConfigTest(unittest.TestCase):
    def test_no_checker_is_on(self):
        loaded = matrix.load()
        for name in ("bench", "bench-lowres"):
            for arch in ("i386", "arm", "x86_64"):
                with self.subTest(config=name, arch=arch):
                    self.assertEqual(checkers_on(loaded.get(name), arch), [])

    def test_the_default_build_has_them_so_the_guard_sees_them(self):
        found = checkers_on(matrix.load().get("default"), "i386")
        for symbol in ("PROVE_LOCKING", "PROVE_RAW_LOCK_NESTING", "DEBUG_OBJECTS", "DEBUG_OBJECTS_KTIMERS", "UBSAN",
                       "DEBUG_KERNEL", "DEBUG_ATOMIC_SLEEP"):
            self.assertIn(symbol, found)

    def test_the_benchmark_is_built_and_the_rest_of_the_kernel_kept(self):
        lines = matrix.effective_kunitconfig(matrix.load().get("bench"), "i386")[0].splitlines()
        for line in ("CONFIG_KTIMER_BENCH=y", "CONFIG_KTIMERS=y", "CONFIG_SMP=y", "CONFIG_HIGH_RES_TIMERS=y",
                     "CONFIG_KUNIT=y", "CONFIG_KTIMER_KUNIT_TEST=y", "# CONFIG_PROVE_LOCKING is not set",
                     "# CONFIG_DEBUG_KERNEL is not set"):
            self.assertIn(line, lines)


class GuardTest(TempDirTestCase):
    def test_a_new_checker_in_kunitconfig_is_caught(self):
        repo = self.tmp
        write(repo / matrix.SERIES_KUNITCONFIG, (REPO_ROOT / matrix.SERIES_KUNITCONFIG).read_text())
        write(repo / ".kunitconfig", (REPO_ROOT / ".kunitconfig").read_text() + "CONFIG_KFENCE=y\n"
                                                                             "CONFIG_DEBUG_LIST=y\n")
        write(repo / "kunit_configs" / "bench.config", (REPO_ROOT / "kunit_configs" / "bench.config").read_text())
        bench = matrix.Configuration("bench", fragments=("bench",))
        self.assertEqual(checkers_on(bench, "i386", repo), ["KFENCE", "DEBUG_LIST"])


if __name__ == "__main__":
    unittest.main()
