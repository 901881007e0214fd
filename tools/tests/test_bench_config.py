"""The benchmark's kernel is production-like: none of the lock and debug checkers of .kunitconfig.

kunit_configs/bench.config turns them off one by one, after .kunitconfig (tools/kunit/matrix.py merges
the files, later lines winning). These tests fail when .kunitconfig gains a checker that
bench.config does not switch off, so the benchmark never measures a checker by accident.
"""

import re
import subprocess
import tempfile
import types
import unittest
from pathlib import Path

from helpers import TempDirTestCase, write

from kunit import matrix
from common import DEFAULT_TREE, REPO_ROOT

KUNIT_CONFIG_PY = DEFAULT_TREE / "tools" / "testing" / "kunit" / "kunit_config.py"
APPLIED = (DEFAULT_TREE / "kernel" / "time" / "ktimer_bench.c").is_file()

# Options that make timer operations slower in a way that differs per API. DEBUG_KERNEL is the menu
# (EXPERT selects it); what it turns on by default is listed off in bench.config and checked by KconfigTest.
CHECKER_RE = re.compile(r"^(PROVE_\w+|LOCKDEP\w*|LOCK_STAT|DEBUG_(?!FS\b|FS_|INFO|BUGVERBOSE\b|KERNEL\b)\w+|UBSAN\w*|"
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
                       "DEBUG_ATOMIC_SLEEP"):
            self.assertIn(symbol, found)

    def test_the_benchmark_is_built_and_the_rest_of_the_kernel_kept(self):
        lines = matrix.effective_kunitconfig(matrix.load().get("bench"), "i386")[0].splitlines()
        for line in ("CONFIG_KTIMER_BENCH=y", "CONFIG_KTIMERS=y", "CONFIG_SMP=y", "CONFIG_HIGH_RES_TIMERS=y",
                     "CONFIG_KUNIT=y", "CONFIG_KTIMER_KUNIT_TEST=y", "# CONFIG_PROVE_LOCKING is not set",
                     "# CONFIG_SCHED_DEBUG is not set", "# CONFIG_DEBUG_MISC is not set"):
            self.assertIn(line, lines)


@unittest.skipUnless(APPLIED and KUNIT_CONFIG_PY.is_file(), "no kernel tree with the series in build/linux")
class KconfigTest(unittest.TestCase):
    """What Kconfig makes of the benchmark's kunitconfig: every option as asked, as kunit.py checks before it
    builds (an option another one selects cannot be switched off: EXPERT selects DEBUG_KERNEL)."""

    def test_the_bench_kernel_gets_every_option_it_asks_for(self):
        # Compiled by hand, not imported: nothing (no __pycache__) is written into the kernel tree.
        kunit_config = types.ModuleType("kernel_kunit_config")
        exec(compile(KUNIT_CONFIG_PY.read_text(), str(KUNIT_CONFIG_PY), "exec"), kunit_config.__dict__)
        text = matrix.effective_kunitconfig(matrix.load().get("bench"), "um")[0]
        with tempfile.TemporaryDirectory() as build:
            (Path(build) / ".config").write_text(text)
            subprocess.run(["make", "-s", "ARCH=um", f"O={build}", "olddefconfig"], cwd=DEFAULT_TREE, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            final = kunit_config.parse_file(str(Path(build) / ".config"))
        asked = kunit_config.parse_from_string(text)
        self.assertEqual([(entry.name, entry.value, final._entries.get(entry.name)) for entry in asked.as_entries()
                          if final._entries.get(entry.name, "n") != entry.value], [])


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
