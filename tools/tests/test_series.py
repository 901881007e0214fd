import os
import time

from helpers import GIT_ENV, TempDirTestCase, git, quiet, quiet_raises, write

from series import store as series
from common import ToolError

TIMER_C = "#include <linux/kernel.h>\n\nstatic void run_timer_softirq(void)\n{\n\trun_timer_base();\n}\n"
MAKEFILE = "obj-y += timer.o\n"

PATCH = """diff --git a/kernel/time/Makefile b/kernel/time/Makefile
index 1111111..2222222 100644
--- a/kernel/time/Makefile
+++ b/kernel/time/Makefile
@@ -1 +1,2 @@
 obj-y += timer.o
+obj-$(CONFIG_KTIMERS) += ktimer.o
"""

HOOK_PATCH = """diff --git a/kernel/time/timer.c b/kernel/time/timer.c
--- a/kernel/time/timer.c
+++ b/kernel/time/timer.c
@@ -3,4 +3,5 @@
 static void run_timer_softirq(void)
 {
+\tktimer_run_queues();
 \trun_timer_base();
 }
"""

COMMIT1 = """ktimers: add core

The core.

Signed-off-by: Dev <dev@example.org>
---
add: include/linux/ktimer.h
add: kernel/time/ktimer.c
patch: 0001-build.patch
"""

COMMIT2 = """ktimers: hook into the softirq

Signed-off-by: Dev <dev@example.org>
---
# comments and blank lines are fine

patch: 0002-hook.patch
add: kernel/time/ktimer_test.c
"""


class SeriesTestBase(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.tree = self.make_tree(self.tmp / "linux")
        self.kernel = self.tmp / "repo" / "kernel"
        write(self.kernel / "base.pin", "package = linux-source-6.12\n")
        write(self.kernel / "include" / "linux" / "ktimer.h", "struct ktimer;\n")
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer;\n")
        write(self.kernel / "kernel" / "time" / "ktimer_test.c", "int ktimer_test;\n")
        write(self.kernel / "patches" / "0001-build.patch", PATCH)
        write(self.kernel / "patches" / "0002-hook.patch", HOOK_PATCH)
        write(self.kernel / "series" / "01-core.commit", COMMIT1)
        write(self.kernel / "series" / "02-hook.commit", COMMIT2)

    def make_tree(self, path):
        path.mkdir(parents=True)
        git(path, "init", "-q")
        write(path / "kernel" / "time" / "timer.c", TIMER_C)
        write(path / "kernel" / "time" / "Makefile", MAKEFILE)
        write(path / "Makefile", "VERSION = 6\n")
        git(path, "add", "-f", "-A", ".")
        env = dict(GIT_ENV, GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000")
        git(path, "commit", "-q", "-m", "base", env=env)
        git(path, "tag", "base")
        return path

    def apply(self, **kwargs):
        return quiet(series.apply, self.tree, self.kernel, **kwargs)


class ParseTest(SeriesTestBase):
    def test_parse_commit_file(self):
        commit = series.parse_commit_file(self.kernel / "series" / "02-hook.commit")
        self.assertEqual(commit.subject, "ktimers: hook into the softirq")
        self.assertTrue(commit.message.endswith("Signed-off-by: Dev <dev@example.org>\n"))
        self.assertNotIn("---", commit.message)
        self.assertEqual([(s.kind, s.arg) for s in commit.steps],
                         [("patch", "0002-hook.patch"), ("add", "kernel/time/ktimer_test.c")])

    def test_missing_separator(self):
        write(self.kernel / "series" / "03-bad.commit", "subject\n\nbody\nadd: x\n")
        error = quiet_raises(self, ToolError, series.load_series, self.kernel)[0]
        self.assertIn("03-bad.commit", str(error))
        self.assertIn("---", str(error))

    def test_unknown_directive(self):
        write(self.kernel / "series" / "03-bad.commit", "subject\n---\nremove: foo\n")
        error = quiet_raises(self, ToolError, series.load_series, self.kernel)[0]
        self.assertIn("03-bad.commit:3", str(error))

    def test_path_escaping_the_tree(self):
        write(self.kernel / "series" / "03-bad.commit", "subject\n---\nadd: ../etc/passwd\n")
        quiet_raises(self, ToolError, series.load_series, self.kernel)


class ValidateTest(SeriesTestBase):
    def test_valid_series_loads_in_name_order(self):
        commits = series.load_series(self.kernel)
        self.assertEqual([c.name for c in commits], ["01-core.commit", "02-hook.commit"])

    def test_unclaimed_file_is_named(self):
        write(self.kernel / "kernel" / "time" / "forgotten.c", "x\n")
        error = quiet_raises(self, ToolError, series.load_series, self.kernel)[0]
        self.assertIn("kernel/kernel/time/forgotten.c is not claimed", str(error))
        self.assertIn("add:", str(error))

    def test_doubly_claimed_file(self):
        write(self.kernel / "series" / "03-dup.commit", "dup\n---\nadd: kernel/time/ktimer.c\n")
        error = quiet_raises(self, ToolError, series.load_series, self.kernel)[0]
        self.assertIn("already claimed by", str(error))
        self.assertIn("01-core.commit", str(error))

    def test_add_of_missing_file_and_missing_patch(self):
        write(self.kernel / "series" / "03-x.commit", "x\n---\nadd: kernel/time/nope.c\npatch: nope.patch\n")
        error = str(quiet_raises(self, ToolError, series.load_series, self.kernel)[0])
        self.assertIn("kernel/kernel/time/nope.c does not exist", error)
        self.assertIn("kernel/patches/nope.patch does not exist", error)

    def test_editor_leftovers_are_ignored_and_unused_patch_warns(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c~", "backup\n")
        write(self.kernel / "patches" / "0099-unused.patch", "x\n")
        _, _, err = quiet(series.load_series, self.kernel)
        self.assertIn("0099-unused.patch is not used", err)


class ApplyTest(SeriesTestBase):
    def test_apply_builds_commits_and_checks_out_ktimers(self):
        final, out, _ = self.apply()
        self.assertEqual(git(self.tree, "rev-parse", "HEAD"), final)
        self.assertEqual(git(self.tree, "symbolic-ref", "--short", "HEAD"), "ktimers")
        self.assertIn("01-core.commit: ktimers: add core", out)
        self.assertIn("02-hook.commit: ktimers: hook into the softirq", out)
        self.assertEqual((self.tree / "include" / "linux" / "ktimer.h").read_text(), "struct ktimer;\n")
        self.assertIn("ktimer.o", (self.tree / "kernel" / "time" / "Makefile").read_text())
        self.assertIn("ktimer_run_queues();", (self.tree / "kernel" / "time" / "timer.c").read_text())
        log = git(self.tree, "log", "--format=%an <%ae>|%cn <%ce>|%ad|%cd|%s", "--date=raw", "base..HEAD")
        for line in log.splitlines():
            author, committer, adate, cdate, _ = line.split("|")
            self.assertEqual(author, "ktimers project <ktimers@localhost>")
            self.assertEqual(committer, "ktimers project <ktimers@localhost>")
            self.assertEqual(adate, "1700000000 +0000")
            self.assertEqual(cdate, "1700000000 +0000")
        body = git(self.tree, "log", "-1", "--format=%B", "HEAD~1")
        self.assertIn("Signed-off-by: Dev <dev@example.org>", body)
        self.assertEqual(git(self.tree, "show", "--stat", "--format=", "HEAD~1").count("|"), 3)

    def test_second_apply_is_up_to_date_and_hashes_are_stable(self):
        first, _, _ = self.apply()
        second, out, _ = self.apply()
        self.assertEqual(first, second)
        self.assertIn("series up to date", out)
        # Another tree with the same base gets the very same commits.
        other = self.make_tree(self.tmp / "other")
        chain = series.build_chain(other, series.load_series(self.kernel), self.kernel)
        self.assertEqual(chain[-1][0], first)

    def test_working_tree_untouched_while_building_chain(self):
        status_before = git(self.tree, "status", "--porcelain")
        series.build_chain(self.tree, series.load_series(self.kernel), self.kernel)
        self.assertEqual(git(self.tree, "status", "--porcelain"), status_before)
        self.assertEqual(git(self.tree, "rev-parse", "HEAD"), git(self.tree, "rev-parse", "base"))
        self.assertFalse((self.tree / "include").exists())

    def test_changing_a_file_only_rewrites_that_file(self):
        first, _, _ = self.apply()
        first_commit = git(self.tree, "rev-parse", "HEAD~1")
        header = self.tree / "include" / "linux" / "ktimer.h"
        old_mtime = header.stat().st_mtime_ns
        time.sleep(0.01)
        write(self.kernel / "kernel" / "time" / "ktimer_test.c", "int ktimer_test = 2;\n")
        second, out, _ = self.apply()
        self.assertNotEqual(first, second)
        self.assertEqual(git(self.tree, "rev-parse", "HEAD~1"), first_commit)  # commit 1 unchanged
        self.assertIn("02-hook.commit", out)
        self.assertNotIn("01-core.commit", out)
        self.assertIn("1 commit(s) applied, 1 unchanged", out)
        self.assertEqual(header.stat().st_mtime_ns, old_mtime)
        self.assertEqual((self.tree / "kernel" / "time" / "ktimer_test.c").read_text(), "int ktimer_test = 2;\n")

    def test_patch_that_does_not_apply(self):
        write(self.kernel / "patches" / "0002-hook.patch", HOOK_PATCH.replace("run_timer_base", "other_base"))
        error = str(quiet_raises(self, ToolError, series.apply, self.tree, self.kernel)[0])
        self.assertIn("0002-hook.patch", error)
        self.assertIn("02-hook.commit", error)
        self.assertIn("ktimers: hook into the softirq", error)
        self.assertIn("patch does not apply", error)  # git apply's own message

    def test_dirty_tree_is_refused_then_forced(self):
        self.apply()
        write(self.tree / "kernel" / "time" / "timer.c", "/* local hack */\n")
        write(self.kernel / "include" / "linux" / "ktimer.h", "struct ktimer { int x; };\n")
        error = str(quiet_raises(self, ToolError, series.apply, self.tree, self.kernel)[0])
        self.assertIn("local modifications", error)
        self.assertIn("kernel/time/timer.c", error)
        self.assertIn("FORCE=1", error)
        self.assertIn("reset --hard", error)
        self.assertEqual((self.tree / "kernel" / "time" / "timer.c").read_text(), "/* local hack */\n")
        self.apply(force=True)
        self.assertIn("ktimer_run_queues", (self.tree / "kernel" / "time" / "timer.c").read_text())

    def test_up_to_date_but_dirty_warns(self):
        self.apply()
        write(self.tree / "Makefile", "VERSION = 7\n")
        _, out, err = self.apply()
        self.assertIn("series up to date", out)
        self.assertIn("local modifications", err)

    def test_up_to_date_but_dirty_forced_is_reset(self):
        self.apply()
        write(self.tree / "Makefile", "VERSION = 7\n")
        _, out, _ = self.apply(force=True)
        self.assertIn("discarded the local modifications", out)
        self.assertNotEqual((self.tree / "Makefile").read_text(), "VERSION = 7\n")
        self.assertEqual(git(self.tree, "status", "--porcelain", "--untracked-files=no"), "")

    def test_hand_made_commit_is_refused(self):
        self.apply()
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer = 1;\n")
        write(self.tree / "Makefile", "VERSION = 7\n")
        git(self.tree, "commit", "-q", "-am", "my experiment")
        error = str(quiet_raises(self, ToolError, series.apply, self.tree, self.kernel)[0])
        self.assertIn("my experiment", error)
        self.assertIn("format-patch", error)

    def test_empty_series_resets_to_base(self):
        for path in list((self.kernel / "series").iterdir()) + list((self.kernel / "patches").iterdir()):
            path.unlink()
        for path in ("include/linux/ktimer.h", "kernel/time/ktimer.c", "kernel/time/ktimer_test.c"):
            (self.kernel / path).unlink()
        final, out, _ = self.apply()
        self.assertEqual(final, git(self.tree, "rev-parse", "base"))
        self.assertIn("no .commit files", out)

    def test_missing_tree(self):
        error = str(quiet_raises(self, ToolError, series.apply, self.tmp / "nope", self.kernel)[0])
        self.assertIn("make tree", error)

    def test_executable_files_keep_their_mode(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "#!/bin/sh\n", mode=0o755)
        self.apply()
        self.assertTrue(os.access(self.tree / "kernel" / "time" / "ktimer.c", os.X_OK))


class SeriesHashTest(SeriesTestBase):
    def test_hash_is_stable_and_sensitive(self):
        first = series.series_hash(self.kernel)
        self.assertEqual(first, series.series_hash(self.kernel))
        self.assertEqual(len(first), 64)
        write(self.kernel / "patches" / "0001-build.patch", PATCH + "\n")
        self.assertNotEqual(first, series.series_hash(self.kernel))

    def test_hash_covers_added_files_and_pin(self):
        first = series.series_hash(self.kernel)
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer2;\n")
        second = series.series_hash(self.kernel)
        self.assertNotEqual(first, second)
        write(self.kernel / "base.pin", "package = other\n")
        self.assertNotEqual(second, series.series_hash(self.kernel))


DEBUG_PATCH = """diff --git a/kernel/time/ktimer.c b/kernel/time/ktimer.c
--- a/kernel/time/ktimer.c
+++ b/kernel/time/ktimer.c
@@ -1,2 +1,3 @@
 int ktimer;
+int debug_hook;
 int end;
diff --git a/kernel/time/Makefile b/kernel/time/Makefile
--- a/kernel/time/Makefile
+++ b/kernel/time/Makefile
@@ -1,2 +1,3 @@
 obj-y += timer.o
 obj-$(CONFIG_KTIMERS) += ktimer.o
+obj-$(CONFIG_DEBUG) += ktimer_debug.o
"""

USERS_PATCH = """diff --git a/kernel/time/ktimer.c b/kernel/time/ktimer.c
--- a/kernel/time/ktimer.c
+++ b/kernel/time/ktimer.c
@@ -1,3 +1,4 @@
 int ktimer;
 int debug_hook;
+int users_hook;
 int end;
"""


class WithholdTest(SeriesTestBase):
    """A later patch that changes a file an earlier commit adds is taken back out of that add."""

    def setUp(self):
        super().setUp()
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer;\nint debug_hook;\nint users_hook;\nint end;\n")
        write(self.kernel / "patches" / "0003-debug.patch", DEBUG_PATCH)
        write(self.kernel / "patches" / "0004-users.patch", USERS_PATCH)
        write(self.kernel / "series" / "03-debug.commit", "ktimers: debug hooks\n---\npatch: 0003-debug.patch\n")
        write(self.kernel / "series" / "04-users.commit", "ktimers: users hook\n---\npatch: 0004-users.patch\n")

    def file_at(self, rev, path="kernel/time/ktimer.c"):
        return git(self.tree, "show", f"{rev}:{path}") + "\n"

    def test_each_commit_shows_the_file_as_of_that_commit(self):
        self.apply()
        self.assertEqual(self.file_at("HEAD~3"), "int ktimer;\nint end;\n")
        self.assertEqual(self.file_at("HEAD~1"), "int ktimer;\nint debug_hook;\nint end;\n")
        self.assertEqual(self.file_at("HEAD"), (self.kernel / "kernel" / "time" / "ktimer.c").read_text())
        # The debug patch's Makefile hunk is applied once, in its own commit.
        self.assertNotIn("ktimer_debug.o", self.file_at("HEAD~2", "kernel/time/Makefile"))
        self.assertIn("ktimer_debug.o", self.file_at("HEAD~1", "kernel/time/Makefile"))
        diff = git(self.tree, "show", "--format=", "HEAD~1", "--", "kernel/time/ktimer.c")
        self.assertIn("+int debug_hook;", diff)

    def test_patch_paths(self):
        self.assertEqual(series.patch_paths(self.kernel / "patches" / "0003-debug.patch"),
                         ["kernel/time/ktimer.c", "kernel/time/Makefile"])
        self.assertEqual(series.patch_paths(self.kernel / "patches" / "0002-hook.patch"), ["kernel/time/timer.c"])
        write(self.tmp / "plain.patch", "--- a/x.c\n+++ b/x.c\t2024-01-01\n@@ -1 +1 @@\n-a\n+b\n")
        self.assertEqual(series.patch_paths(self.tmp / "plain.patch"), ["x.c"])

    def test_final_file_edited_inside_a_later_hunk(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer;\nint debug_hook = 1;\nint users_hook;\nint end;\n")
        error = str(quiet_raises(self, ToolError, series.apply, self.tree, self.kernel)[0])
        self.assertIn("01-core.commit adds kernel/kernel/time/ktimer.c", error)
        self.assertIn("0004-users.patch", error)
        self.assertIn("import", error)
