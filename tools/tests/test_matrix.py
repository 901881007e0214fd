import types
import unittest

from helpers import TempDirTestCase, quiet_raises, write

from kunit import matrix
from common import REPO_ROOT, ToolError

GOOD = """\
# a comment
[default]
description = SMP
fragments   =
smp         = 2
by_default  = yes

[lowres]
kernel_args = ktimer.highres=0 "foo=a b"   # inline comment
by_default  = yes

[up]
fragments   = up
smp         = 1
by_default  = true

[extra]
fragments   = up lockdep
"""

KERNEL_KUNIT_CONFIG = REPO_ROOT / "build" / "linux" / "tools" / "testing" / "kunit" / "kunit_config.py"


class LoadTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        write(self.tmp / "kunit_configs" / "up.config", "# CONFIG_SMP is not set\n")
        write(self.tmp / "kunit_configs" / "lockdep.config", "CONFIG_PROVE_LOCKING=y\n")

    def load(self, text):
        return matrix.load(write(self.tmp / "kunit_configs" / "matrix", text))

    def error(self, text):
        path = write(self.tmp / "kunit_configs" / "matrix", text)
        return str(quiet_raises(self, ToolError, matrix.load, path)[0])

    def test_configurations_in_file_order(self):
        loaded = self.load(GOOD)
        self.assertEqual(loaded.names(), ["default", "lowres", "up", "extra"])
        default, lowres, up, extra = loaded.configurations.values()
        self.assertEqual(default, matrix.Configuration("default", "SMP", (), (), 2, True))
        self.assertEqual(lowres.kernel_args, ("ktimer.highres=0", "foo=a b"))
        self.assertEqual((lowres.smp, lowres.fragments, lowres.description), (2, (), ""))
        self.assertEqual((up.smp, up.fragments, up.by_default), (1, ("up",), True))
        self.assertFalse(extra.by_default)
        self.assertEqual([c.name for c in loaded.defaults()], ["default", "lowres", "up"])

    def test_build_dirs_are_named_after_the_fragments(self):
        default, lowres, up, extra = self.load(GOOD).configurations.values()
        self.assertEqual(default.build_dir_name("arm"), "arm-default")
        self.assertEqual(lowres.build_dir_name("arm"), "arm-default")     # shared: boot only
        self.assertEqual(up.build_dir_name("arm"), "arm-up")
        self.assertEqual(extra.build_dir_name("arm"), "arm-up+lockdep")
        self.assertEqual([c.results_name("arm") for c in (default, lowres, up)],
                         ["arm-default", "arm-lowres", "arm-up"])

    def test_select_keeps_file_order_and_rejects_unknown_names(self):
        loaded = self.load(GOOD)
        self.assertEqual([c.name for c in loaded.select(None)], ["default", "lowres", "up"])
        self.assertEqual([c.name for c in loaded.select(["extra", "up", "default", "up"])],
                         ["default", "up", "extra"])
        message = str(quiet_raises(self, ToolError, loaded.select, ["default", "lowers"])[0])
        self.assertIn("unknown configuration 'lowers'", message)
        self.assertIn("default, lowres, up, extra", message)
        self.assertIn("kunit_configs/matrix", message)
        self.assertIn("CONFIG=", message)

    def test_unparsable_line_names_file_and_line(self):
        message = self.error("[default]\nby_default = yes\nthis is not ini\n")
        self.assertIn("kunit_configs/matrix:3:", message)
        self.assertIn("this is not ini", message)

    def test_key_before_any_section(self):
        self.assertIn("matrix:2:", self.error("# c\nsmp = 2\n[default]\nby_default = yes\n"))

    def test_duplicate_section_and_key(self):
        self.assertIn("matrix:3: configuration [default] is defined twice",
                      self.error("[default]\nby_default = yes\n[default]\n"))
        self.assertIn("matrix:3: `smp` is set twice in [default]",
                      self.error("[default]\nsmp = 1\nsmp = 2\n"))

    def test_bad_values_name_their_line(self):
        cases = {
            "[default]\nby_default = yes\n\n[up]\nsmp = two\n": ("matrix:5:", "smp must be"),
            "[default]\nby_default = yes\n[up]\nsmp = 0\n": ("matrix:4:", "smp must be"),
            "[default]\nby_default = perhaps\n": ("matrix:2:", "by_default must be yes or no"),
            "[default]\nby_default = yes\nfragment = up\n": ("matrix:3:", "unknown key `fragment`"),
            "[default]\nby_default = yes\nfragments = up nosuch\n": ("matrix:3:", "kunit_configs/nosuch.config"),
            "[default]\nby_default = yes\nfragments = default\n": ("matrix:3:", "not 'default'"),
            "[default]\nby_default = yes\nfragments = up up\n": ("matrix:3:", "listed twice"),
            "[default]\nby_default = yes\nkernel_args = \"a\n": ("matrix:3:", "kernel_args"),
            "[default]\nby_default = yes\n[Up Build]\n": ("matrix:3:", "lower-case"),
            "[default]\nby_default = yes\n[DEFAULT]\nsmp = 1\n": ("matrix:3:", "[DEFAULT]"),
            "[default]\nby_default = yes\narches = arm sparc\n": ("matrix:3:", "unknown arch 'sparc'"),
        }
        for text, (where, what) in cases.items():
            with self.subTest(text=text):
                message = self.error(text)
                self.assertIn(where, message)
                self.assertIn(what, message)

    def test_arches_limits_where_a_configuration_runs(self):
        loaded = self.load(GOOD + "\n[kcsan]\narches = x86_64\n")
        kcsan, default = loaded.get("kcsan"), loaded.get("default")
        self.assertEqual(kcsan.arches, ("x86_64",))
        self.assertTrue(kcsan.runs_on("x86_64"))
        self.assertFalse(kcsan.runs_on("i386"))
        self.assertTrue(default.runs_on("i386"))    # no arches: every arch
        self.assertRegex(matrix.describe(loaded)[-1], r"^kcsan\s+no\s+x86_64\s")

    def test_suites_narrows_the_suites_run_and_expected(self):
        loaded = self.load(GOOD + "\n[bench]\nsuites = ktimer_mo*\n")
        bench, default = loaded.get("bench"), loaded.get("default")
        self.assertEqual(bench.suites, "ktimer_mo*")
        self.assertTrue(bench.runs_suite("ktimer_modes"))
        self.assertFalse(bench.runs_suite("ktimer_errors"))
        self.assertTrue(default.runs_suite("ktimer_errors"))    # no suites: every suite
        self.assertEqual(bench.to_dict()["suites"], "ktimer_mo*")
        self.assertIsNone(default.to_dict()["suites"])
        self.assertRegex(matrix.describe(loaded)[-1], r"^bench\s.*\sktimer_mo\*\s*$")
        for bad in ("ktimer_modes.ktimer_start_mode_test", "ktimer_modes ktimer_errors", "a/b"):
            with self.subTest(suites=bad):
                message = self.error(f"[default]\nby_default = yes\nsuites = {bad}\n")
                self.assertIn("matrix:3:", message)
                self.assertIn("suites must be one glob", message)

    def test_a_matrix_that_runs_nothing_is_an_error(self):
        self.assertIn("by_default = yes", self.error("[default]\nsmp = 2\n"))
        self.assertIn("no configuration", self.error("# empty\n"))

    def test_missing_file(self):
        message = str(quiet_raises(self, ToolError, matrix.load, self.tmp / "nope")[0])
        self.assertIn("cannot read the configuration matrix", message)

    def test_describe_lists_every_configuration(self):
        lines = matrix.describe(self.load(GOOD))
        self.assertTrue(lines[0].startswith("config"))
        self.assertEqual(len(lines), 5)
        self.assertRegex(lines[2], r"^lowres\s+yes\s+all\s+<arch>-default\s+2\s+-\s+ktimer.highres=0 foo=a b")
        self.assertRegex(lines[4], r"^extra\s+no\s+all\s+<arch>-up\+lockdep\s+2\s+up lockdep")


class MergeTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.series = write(self.tmp / matrix.SERIES_KUNITCONFIG, "# series\nCONFIG_KUNIT=y\n")
        write(self.tmp / ".kunitconfig", "# root\nCONFIG_KUNIT=y\nCONFIG_SMP=y\nCONFIG_HOTPLUG_CPU=y\n"
                                         'CONFIG_CMDLINE="a b"\n')
        write(self.tmp / "kunit_configs" / "arch" / "arm.config", "CONFIG_VFP=y\n")
        write(self.tmp / "kunit_configs" / "up.config",
              "# up\n\n# CONFIG_SMP is not set\n# CONFIG_HOTPLUG_CPU is not set\nCONFIG_KUNIT=y\n")
        write(self.tmp / "kunit_configs" / "nr.config", "CONFIG_NR_CPUS=4\n  CONFIG_SMP=y  \n")
        self.up = matrix.Configuration("up", fragments=("up",), smp=1)

    def test_sources_in_order(self):
        self.assertEqual(matrix.kunitconfig_sources(self.up, "arm", self.tmp),
                         [self.series, self.tmp / ".kunitconfig", self.tmp / "kunit_configs" / "arch" / "arm.config",
                          self.tmp / "kunit_configs" / "up.config"])
        self.assertEqual(matrix.kunitconfig_sources(matrix.Configuration("default"), "i386", self.tmp),
                         [self.series, self.tmp / ".kunitconfig"])

    def test_later_lines_override_earlier_ones(self):
        merged = matrix.merge(matrix.kunitconfig_sources(self.up, "arm", self.tmp))
        self.assertEqual([line for _, line, _, _ in merged], [
            "CONFIG_KUNIT=y", "# CONFIG_SMP is not set", "# CONFIG_HOTPLUG_CPU is not set",
            'CONFIG_CMDLINE="a b"', "CONFIG_VFP=y"])
        by_symbol = {symbol: (origin, overridden) for symbol, _, origin, overridden in merged}
        origin, overridden = by_symbol["SMP"]
        self.assertTrue(origin.endswith("kunit_configs/up.config:3"))
        self.assertEqual(overridden, [f"CONFIG_SMP=y ({matrix.rel(self.tmp / '.kunitconfig')}:3)"])
        self.assertEqual(by_symbol["KUNIT"][1], [])   # same value again is no override

    def test_override_back_and_forth(self):
        both = matrix.Configuration("x", fragments=("up", "nr"))
        merged = {symbol: (line, overridden) for symbol, line, _, overridden in
                  matrix.merge(matrix.kunitconfig_sources(both, "i386", self.tmp))}
        self.assertEqual(merged["SMP"][0], "CONFIG_SMP=y")
        self.assertEqual(len(merged["SMP"][1]), 2)
        self.assertEqual(merged["NR_CPUS"], ("CONFIG_NR_CPUS=4", []))

    def test_effective_file(self):
        text, _ = matrix.effective_kunitconfig(self.up, "arm", self.tmp)
        lines = text.splitlines()
        self.assertIn("# CONFIG_SMP is not set", lines)
        self.assertNotIn("CONFIG_SMP=y", lines)
        self.assertTrue(any(line.startswith("# overrides CONFIG_SMP=y") for line in lines))
        self.assertTrue(all(line.startswith("#") or line.startswith("CONFIG_") for line in lines))

    def test_written_only_when_changed(self):
        target = self.tmp / "kunit" / "arm-up" / ".kunitconfig"
        matrix.write_effective_kunitconfig(self.up, "arm", target, self.tmp)
        first = target.stat().st_mtime_ns
        matrix.write_effective_kunitconfig(self.up, "arm", target, self.tmp)
        self.assertEqual(target.stat().st_mtime_ns, first)

    def test_bad_line_names_file_and_line(self):
        write(self.tmp / "kunit_configs" / "up.config", "# CONFIG_SMP is not set\nCONFIG_SMP = n\n")
        message = str(quiet_raises(self, ToolError, matrix.effective_kunitconfig, self.up, "i386", self.tmp)[0])
        self.assertIn("kunit_configs/up.config:2:", message)
        self.assertIn("CONFIG_SMP = n", message)

    def test_missing_fragment(self):
        (self.tmp / "kunit_configs" / "up.config").unlink()
        message = str(quiet_raises(self, ToolError, matrix.kunitconfig_sources, self.up, "i386", self.tmp)[0])
        self.assertIn("up.config not found", message)


class RepositoryMatrixTest(unittest.TestCase):
    """The matrix and fragments this repository ships."""

    def test_shipped_matrix(self):
        loaded = matrix.load()
        # the CI gate: one build per arch, booted three times; up and kasan are `make extended`
        self.assertEqual([c.name for c in loaded.defaults()], ["default", "lowres", "users-off"])
        self.assertFalse(loaded.get("up").by_default)
        self.assertFalse(loaded.get("kasan").by_default)
        # boot-only configurations come right after the build they boot
        self.assertEqual(loaded.get("users-off").build_dir_name("arm"), "arm-default")
        default, lowres, up = (loaded.get(name) for name in ("default", "lowres", "up"))
        self.assertEqual(default.build_dir_name("i386"), lowres.build_dir_name("i386"))
        self.assertEqual(lowres.kernel_args, ("ktimer.highres=0",))
        self.assertEqual((default.smp, lowres.smp, up.smp), (2, 2, 1))
        self.assertEqual(up.fragments, ("up",))
        self.assertEqual(up.build_dir_name("arm"), "arm-up")
        # the sanitizers run where the compiler and arch support them
        self.assertEqual(loaded.get("kasan").arches, ("arm", "x86_64"))
        self.assertEqual(loaded.get("kcsan").arches, ("x86_64",))
        self.assertFalse(loaded.get("kcsan").by_default)
        self.assertFalse(loaded.get("soak").by_default)
        # the benchmark: one production-like build booted twice, one tiny suite, never in make test
        bench, bench_lowres = loaded.get("bench"), loaded.get("bench-lowres")
        self.assertEqual((bench.fragments, bench.suites, bench.smp), (("bench",), "ktimer_modes", 2))
        self.assertEqual(bench_lowres.build_dir_name("i386"), bench.build_dir_name("i386"))
        self.assertEqual(bench.kernel_args, ("ktimer_bench.run=1",))
        self.assertEqual(bench_lowres.kernel_args, ("ktimer_bench.run=1", "ktimer.highres=0"))
        self.assertFalse(bench.by_default or bench_lowres.by_default)

    def test_shipped_up_kunitconfig_turns_smp_off(self):
        up = matrix.load().get("up")
        for arch in ("i386", "arm"):
            with self.subTest(arch=arch):
                lines = matrix.effective_kunitconfig(up, arch)[0].splitlines()
                self.assertIn("# CONFIG_SMP is not set", lines)
                self.assertIn("# CONFIG_HOTPLUG_CPU is not set", lines)
                self.assertNotIn("CONFIG_SMP=y", lines)
                self.assertIn("CONFIG_KTIMER_KUNIT_TEST=y", lines)

    @unittest.skipUnless(KERNEL_KUNIT_CONFIG.is_file(), "no prepared kernel tree in build/linux")
    def test_kernel_kunit_parser_agrees(self):
        """kunit.py's own parser reads our files as we do; for the fragment-less build it sees exactly
        what it saw when it got .kunitconfig and the arch fragment separately (no reconfiguration)."""
        # Compiled by hand, not imported: nothing (no __pycache__) is written into the kernel tree.
        kunit_config = types.ModuleType("kernel_kunit_config")
        exec(compile(KERNEL_KUNIT_CONFIG.read_text(), str(KERNEL_KUNIT_CONFIG), "exec"), kunit_config.__dict__)
        loaded = matrix.load()
        for arch in ("i386", "arm"):
            for configuration in loaded.configurations.values():
                with self.subTest(arch=arch, config=configuration.name):
                    text, sources = matrix.effective_kunitconfig(configuration, arch)
                    ours = kunit_config.parse_from_string(text)
                    expected = {symbol: line for symbol, line, _, _ in matrix.merge(sources)}
                    self.assertEqual({e.name: str(e) for e in ours.as_entries()}, expected)
            separate = kunit_config.Kconfig()
            for source in matrix.kunitconfig_sources(loaded.get("default"), arch):
                separate.merge_in_entries(kunit_config.parse_file(str(source)))
            self.assertEqual(kunit_config.parse_from_string(
                matrix.effective_kunitconfig(loaded.get("default"), arch)[0]), separate)


if __name__ == "__main__":
    unittest.main()
