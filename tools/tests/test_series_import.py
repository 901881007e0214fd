from helpers import TempDirTestCase, git, quiet, quiet_raises, write

from series import store as series, importer as series_import
from common import ToolError
from test_series import SeriesTestBase


class SlugTest(TempDirTestCase):
    def test_slug(self):
        self.assertEqual(series_import.slug("ktimers: add /sys/kernel/debug/ktimers"), "add-sys-kernel-debug-ktimers")
        self.assertEqual(series_import.slug("posix-timers: serve CLOCK_REALTIME"), "serve-clock-realtime")
        self.assertEqual(series_import.slug("no prefix here"), "no-prefix-here")
        self.assertEqual(series_import.slug("ktimers: ..."), "commit")
        long = series_import.slug("timers: serve nanosleep on CLOCK_REALTIME and CLOCK_MONOTONIC with ktimers")
        self.assertLessEqual(len(long), series_import.MAX_SLUG)
        self.assertFalse(long.endswith("-"))


class ImportTest(SeriesTestBase):
    """Hand-made commits in the tree become kernel/series, kernel/patches and the added files."""

    def setUp(self):
        super().setUp()
        self.target = self.tmp / "target" / "kernel"
        write(self.target / "base.pin", "package = linux-source-6.12\n")
        write(self.target / "series" / "cover-letter.txt", "kept\n")
        write(self.target / "series" / "09-old.commit", "old\n---\n")
        write(self.target / "patches" / "0009-old.patch", "old\n")
        write(self.target / "kernel" / "time" / "stale.c", "int stale;\n")

    def commit(self, subject, files, body="Why.\n\nSigned-off-by: Dev <dev@example.org>\n"):
        for path, text in files.items():
            write(self.tree / path, text)
        git(self.tree, "add", "-A", ".")
        git(self.tree, "commit", "-q", "-m", f"{subject}\n\n{body}")
        return git(self.tree, "rev-parse", "HEAD")

    def make_branch(self):
        git(self.tree, "checkout", "-q", "-b", "work", "base")
        self.commit("ktimers: add the core", {
            "include/linux/ktimer.h": "struct ktimer;\n",
            "kernel/time/ktimer.c": "int ktimer;\nint end;\n",
            "kernel/time/Makefile": "obj-y += timer.o\nobj-$(CONFIG_KTIMERS) += ktimer.o\n"})
        self.commit("ktimers: add debug hooks", {
            "kernel/time/ktimer.c": "int ktimer;\nint debug_hook;\nint end;\n",
            "kernel/time/timer.c": "/* hooked */\n" + (self.tree / "kernel" / "time" / "timer.c").read_text(),
            "kernel/time/ktimer_debug.c": "int debug;\n"})

    def test_import_writes_kernel_dir_and_apply_rebuilds_the_same_trees(self):
        self.make_branch()
        chain, out, _ = quiet(series_import.import_series, self.tree, "work", self.target)
        self.assertEqual(len(chain), 2)
        self.assertIn("checked: `make apply` rebuilds the same 2 tree(s)", out)
        commit_files = sorted(p.name for p in (self.target / "series").glob("*.commit"))
        self.assertEqual(commit_files, ["01-add-the-core.commit", "02-add-debug-hooks.commit"])
        self.assertEqual((self.target / "series" / "cover-letter.txt").read_text(), "kept\n")
        self.assertFalse((self.target / "patches" / "0009-old.patch").exists())
        self.assertFalse((self.target / "kernel" / "time" / "stale.c").exists())
        first = (self.target / "series" / "01-add-the-core.commit").read_text()
        self.assertEqual(first, "ktimers: add the core\n\nWhy.\n\nSigned-off-by: Dev <dev@example.org>\n---\n"
                                "add: include/linux/ktimer.h\nadd: kernel/time/ktimer.c\n"
                                "patch: 0001-add-the-core.patch\n")
        # Added files hold their final content; the later change is in the later patch.
        self.assertEqual((self.target / "kernel" / "time" / "ktimer.c").read_text(), "int ktimer;\nint debug_hook;\nint end;\n")
        patch2 = (self.target / "patches" / "0002-add-debug-hooks.patch").read_text()
        self.assertIn("+int debug_hook;", patch2)
        self.assertIn("+/* hooked */", patch2)
        self.assertNotIn("ktimer_debug.c", patch2)
        for sha, _ in chain:
            self.assertEqual(git(self.tree, "log", "-1", "--format=%an", sha), "ktimers project")
        # And `apply` from the imported kernel/ gives the imported trees.
        final, _, _ = quiet(series.apply, self.tree, self.target, force=True)
        self.assertEqual(git(self.tree, "rev-parse", f"{final}^{{tree}}"), git(self.tree, "rev-parse", "work^{tree}"))
        self.assertEqual(git(self.tree, "rev-parse", f"{final}~1^{{tree}}"),
                         git(self.tree, "rev-parse", "work~1^{tree}"))

    def test_deleting_a_file_is_refused(self):
        git(self.tree, "checkout", "-q", "-b", "work", "base")
        git(self.tree, "rm", "-q", "Makefile")
        git(self.tree, "commit", "-q", "-m", "drop the Makefile")
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tree, "work", self.target)[0])
        self.assertIn("drop the Makefile", error)
        self.assertIn("Makefile (D", error)
        self.assertTrue((self.target / "series" / "09-old.commit").exists())  # nothing written

    def test_merges_and_foreign_history_are_refused(self):
        self.make_branch()
        git(self.tree, "checkout", "-q", "-b", "side", "base")
        self.commit("side", {"README": "x\n"})
        git(self.tree, "checkout", "-q", "work")
        git(self.tree, "merge", "-q", "--no-edit", "side")
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tree, "work", self.target)[0])
        self.assertIn("merge commits", error)
        git(self.tree, "checkout", "-q", "--orphan", "unrelated")
        self.commit("unrelated", {"README": "y\n"})
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tree, "unrelated",
                                 self.target)[0])
        self.assertIn("does not descend from `base`", error)

    def test_nothing_to_import_and_bad_rev(self):
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tree, "base", self.target)[0])
        self.assertIn("nothing to import", error)
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tree, "nope", self.target)[0])
        self.assertIn("'nope' is not a commit", error)
        error = str(quiet_raises(self, ToolError, series_import.import_series, self.tmp / "none", "HEAD",
                                 self.target)[0])
        self.assertIn("make tree", error)
