"""kernel/patches as `git format-patch` output: import from commits, apply with `git am`, the files kept
at their in-tree paths, the KCIDB patchset hash."""

import hashlib
import subprocess

from helpers import GIT_ENV, TempDirTestCase, git, quiet, quiet_raises, write

from common import ToolError
from series import importer, store

TIMER_C = "#include <linux/kernel.h>\n\nstatic void run_timer_softirq(void)\n{\n\trun_timer_base();\n}\n"
MAKEFILE = "obj-y += timer.o\n"
BASE_DATE = "1700000000 +0000"


def commit(tree, message, date="1700000100 +0000"):
    env = dict(GIT_ENV, GIT_AUTHOR_NAME="Dev", GIT_AUTHOR_EMAIL="dev@example.org",
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    git(tree, "add", "-f", "-A", ".", env=env)
    git(tree, "commit", "-q", "-m", message, env=env)


class SeriesTestBase(TempDirTestCase):
    """A tree with `base` and two commits on top (a new file, a hook into an existing one),
    imported into self.kernel; the tree stays on the imported branch."""

    def setUp(self):
        super().setUp()
        self.tree = self.make_tree(self.tmp / "linux")
        self.kernel = self.tmp / "repo" / "kernel"
        write(self.kernel / "base.pin", "package = linux-source-6.12\n")
        git(self.tree, "checkout", "-q", "-b", store.BRANCH)
        write(self.tree / "include" / "linux" / "ktimer.h", "struct ktimer;\n")
        write(self.tree / "kernel" / "time" / "ktimer.c", "int ktimer;\n")
        write(self.tree / "kernel" / "time" / "Makefile", MAKEFILE + "obj-$(CONFIG_KTIMERS) += ktimer.o\n")
        commit(self.tree, "ktimers: add core\n\nThe core.\n\nSigned-off-by: Dev <dev@example.org>")
        write(self.tree / "kernel" / "time" / "timer.c", TIMER_C.replace("{\n", "{\n\tktimer_run_queues();\n"))
        write(self.tree / "kernel" / "time" / ".kunitconfig", "CONFIG_KTIMERS=y\n")
        commit(self.tree, "ktimers: hook into the softirq\n\nSigned-off-by: Dev <dev@example.org>",
               date="1700000200 +0000")
        self.made = git(self.tree, "rev-parse", "HEAD^{tree}")
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)

    def make_tree(self, path):
        path.mkdir(parents=True)
        git(path, "init", "-q")
        write(path / "kernel" / "time" / "timer.c", TIMER_C)
        write(path / "kernel" / "time" / "Makefile", MAKEFILE)
        write(path / "Makefile", "VERSION = 6\n")
        git(path, "add", "-f", "-A", ".")
        git(path, "commit", "-q", "-m", "base", env=dict(GIT_ENV, GIT_AUTHOR_DATE=BASE_DATE,
                                                         GIT_COMMITTER_DATE=BASE_DATE))
        git(path, "tag", store.BASE_TAG)
        return path

    def fresh_tree(self):
        """Another tree at the same base, as `make tree` makes on a new machine."""
        tree = self.make_tree(self.tmp / "fresh")
        self.assertEqual(git(tree, "rev-parse", "base"), git(self.tree, "rev-parse", "base"))
        return tree

    def apply(self, tree=None, **kwargs):
        return quiet(store.apply, tree or self.tree, self.kernel, **kwargs)


class ImportTest(SeriesTestBase):
    def test_import_writes_format_patch_files_and_the_added_files(self):
        names = [p.name for p in store.patch_files(self.kernel)]
        self.assertEqual(names, ["0001-ktimers-add-core.patch", "0002-ktimers-hook-into-the-softirq.patch"])
        first = (self.kernel / "patches" / names[0]).read_text()
        self.assertTrue(first.startswith("From 0000000000000000000000000000000000000000 "))  # no commit hashes
        self.assertIn("Subject: [PATCH] ktimers: add core\n", first)                       # no n/m numbers
        self.assertIn("Signed-off-by: Dev <dev@example.org>", first)
        self.assertNotIn("\n-- \n", first)                                                  # no git version
        self.assertEqual((self.kernel / "kernel" / "time" / "ktimer.c").read_text(), "int ktimer;\n")
        self.assertEqual((self.kernel / "kernel" / "time" / ".kunitconfig").read_text(), "CONFIG_KTIMERS=y\n")
        self.assertFalse((self.kernel / "kernel" / "time" / "timer.c").exists())  # changed, not added
        self.assertEqual(store.in_tree_files(self.kernel),
                         ["include/linux/ktimer.h", "kernel/time/.kunitconfig", "kernel/time/ktimer.c"])

    def test_patchset_hash_is_kcidbs(self):
        paths = store.patch_files(self.kernel)
        shell = subprocess.run("sha256sum *.patch | cut -c-64 | sha256sum", shell=True, text=True,
                               cwd=self.kernel / "patches", stdout=subprocess.PIPE, check=True).stdout.split()[0]
        self.assertEqual(store.patchset_hash(paths), shell)
        self.assertEqual(store.series_hash(self.kernel), shell)
        joined = "".join(hashlib.sha256(p.read_bytes()).hexdigest() + "\n" for p in paths)
        self.assertEqual(shell, hashlib.sha256(joined.encode()).hexdigest())

    def test_reimport_of_the_same_commits_changes_nothing(self):
        before = {p.name: p.read_bytes() for p in store.patch_files(self.kernel)}
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)
        self.assertEqual({p.name: p.read_bytes() for p in store.patch_files(self.kernel)}, before)

    def test_a_reworded_commit_replaces_the_old_files(self):
        git(self.tree, "commit", "-q", "--amend", "-m", "ktimers: hook the softirq\n\nSigned-off-by: Dev <d@x.org>",
            env=GIT_ENV)
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)
        self.assertEqual([p.name for p in store.patch_files(self.kernel)],
                         ["0001-ktimers-add-core.patch", "0002-ktimers-hook-the-softirq.patch"])

    def test_a_dropped_file_leaves_kernel_dir(self):
        (self.tree / "kernel" / "time" / ".kunitconfig").unlink()
        commit(self.tree, "ktimers: no kunitconfig\n\nSigned-off-by: Dev <dev@example.org>")
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)
        self.assertFalse((self.kernel / "kernel" / "time" / ".kunitconfig").exists())
        self.assertEqual(len(store.patch_files(self.kernel)), 3)

    def test_what_format_patch_cannot_carry_is_refused_and_kernel_dir_kept(self):
        before = {p.name: p.read_bytes() for p in store.patch_files(self.kernel)}
        git(self.tree, "commit", "-q", "--allow-empty", "-m", "empty", env=GIT_ENV)   # git am refuses it
        error = str(quiet_raises(self, ToolError, importer.import_series, self.tree, "HEAD", self.kernel)[0])
        self.assertIn("0003-empty.patch does not apply", error)
        self.assertEqual({p.name: p.read_bytes() for p in store.patch_files(self.kernel)}, before)

    def test_merges_and_empty_ranges_are_refused(self):
        error = str(quiet_raises(self, ToolError, importer.import_series, self.tree, "base", self.kernel)[0])
        self.assertIn("no commits", error)
        git(self.tree, "checkout", "-q", "-b", "side", "HEAD~1")
        write(self.tree / "side.txt", "x\n")
        commit(self.tree, "side")
        git(self.tree, "merge", "-q", "--no-edit", store.BRANCH, env=GIT_ENV)
        error = str(quiet_raises(self, ToolError, importer.import_series, self.tree, "HEAD", self.kernel)[0])
        self.assertIn("merge commits", error)


class ApplyTest(SeriesTestBase):
    def test_git_am_on_a_fresh_tree_gives_the_imported_tree(self):
        fresh = self.fresh_tree()
        head = self.apply(fresh)[0]
        self.assertEqual(git(fresh, "rev-parse", "HEAD^{tree}"), self.made)
        self.assertEqual(git(fresh, "symbolic-ref", "--short", "HEAD"), store.BRANCH)
        self.assertEqual(git(fresh, "log", "--format=%an <%ae>|%s", "base..HEAD").splitlines(),
                         ["Dev <dev@example.org>|ktimers: hook into the softirq",
                          "Dev <dev@example.org>|ktimers: add core"])
        # Same patches, same commits, on any machine.
        again = self.make_tree(self.tmp / "again")
        self.assertEqual(self.apply(again)[0], head)
        self.assertEqual(store.replay_tree(fresh, store.patch_files(self.kernel)), self.made)

    def test_plain_git_am_reproduces_the_tree_too(self):
        fresh = self.fresh_tree()
        git(fresh, "am", "-q", *[str(p) for p in store.patch_files(self.kernel)], env=GIT_ENV)
        self.assertEqual(git(fresh, "rev-parse", "HEAD^{tree}"), self.made)

    def test_the_imported_tree_is_up_to_date(self):
        head = git(self.tree, "rev-parse", "HEAD")
        _, out, _ = self.apply()
        self.assertIn("up to date", out)
        self.assertEqual(git(self.tree, "rev-parse", "HEAD"), head)

    def test_second_apply_changes_nothing(self):
        fresh = self.fresh_tree()
        head = self.apply(fresh)[0]
        _, out, _ = self.apply(fresh)
        self.assertIn("up to date", out)
        self.assertEqual(git(fresh, "rev-parse", "HEAD"), head)

    def test_changed_patches_are_applied_again(self):
        fresh = self.fresh_tree()
        self.apply(fresh)
        git(self.tree, "commit", "-q", "--amend", "-m", "ktimers: hook it\n\nSigned-off-by: Dev <d@x.org>",
            env=GIT_ENV)
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)
        self.apply(fresh)
        self.assertEqual(git(fresh, "log", "-1", "--format=%s"), "ktimers: hook it")

    def test_dirty_tree_is_refused_then_forced(self):
        fresh = self.fresh_tree()
        write(fresh / "kernel" / "time" / "timer.c", "local edit\n")
        error = str(quiet_raises(self, ToolError, store.apply, fresh, self.kernel)[0])
        self.assertIn("local modifications", error)
        self.assertIn("FORCE=1", error)
        self.apply(fresh, force=True)
        self.assertEqual(git(fresh, "rev-parse", "HEAD^{tree}"), self.made)

    def test_hand_made_commit_is_refused_until_imported(self):
        write(self.tree / "kernel" / "time" / "extra.c", "int extra;\n")
        commit(self.tree, "ktimers: extra\n\nSigned-off-by: Dev <dev@example.org>")
        error = str(quiet_raises(self, ToolError, store.apply, self.tree, self.kernel)[0])
        self.assertIn("ktimers: extra", error)
        self.assertIn("import", error)
        quiet(importer.import_series, self.tree, "HEAD", self.kernel)
        self.assertIn("up to date", self.apply()[1])
        self.assertEqual(len(store.patch_files(self.kernel)), 3)

    def test_a_patch_that_no_longer_applies_is_named_and_am_aborted(self):
        fresh = self.fresh_tree()
        second = store.patch_files(self.kernel)[1]
        second.write_text(second.read_text().replace(" \trun_timer_base();", " \trun_other_base();"))
        error = str(quiet_raises(self, ToolError, store.apply, fresh, self.kernel)[0])
        self.assertIn("git am stopped", error)
        self.assertIn("hook into the softirq", error)
        self.assertFalse((fresh / ".git" / "rebase-apply").exists())

    def test_odd_patch_names_are_refused(self):
        write(self.kernel / "patches" / "fix.patch", "x\n")
        error = str(quiet_raises(self, ToolError, store.patch_files, self.kernel)[0])
        self.assertIn("fix.patch", error)

    def test_missing_tree_or_base(self):
        error = str(quiet_raises(self, ToolError, store.apply, self.tmp / "nowhere", self.kernel)[0])
        self.assertIn("make tree", error)


class KernelDirFilesTest(SeriesTestBase):
    def test_an_edit_under_kernel_goes_into_the_tree_uncommitted(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer_edited;\n")
        _, _, err = self.apply()
        self.assertEqual((self.tree / "kernel" / "time" / "ktimer.c").read_text(), "int ktimer_edited;\n")
        self.assertIn("kernel/time/ktimer.c", err)
        self.assertIn("commit --fixup", err)
        self.assertEqual(git(self.tree, "status", "--porcelain"), "M kernel/time/ktimer.c")

    def test_an_edit_under_kernel_does_not_overwrite_other_tree_edits(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int ktimer_edited;\n")
        write(self.tree / "kernel" / "time" / "ktimer.c", "int ktimer_tree;\n")
        error = str(quiet_raises(self, ToolError, store.apply, self.tree, self.kernel)[0])
        self.assertIn("other local edits", error)
        self.assertEqual((self.tree / "kernel" / "time" / "ktimer.c").read_text(), "int ktimer_tree;\n")

    def test_a_file_no_patch_adds_is_an_error(self):
        write(self.kernel / "kernel" / "time" / "stray.c", "int stray;\n")
        error = str(quiet_raises(self, ToolError, store.apply, self.tree, self.kernel)[0])
        self.assertIn("kernel/kernel/time/stray.c", error)
        self.assertIn("no patch", error)
