import subprocess

from helpers import TempDirTestCase, git, quiet, quiet_raises, write

from setup import pin, tree
from common import ToolError

MAKEFILE = "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = {sub}\nEXTRAVERSION =\n"


class TreeTest(TempDirTestCase):
    def make_tarball(self, name="linux-source-6.12.tar.xz", sublevel=118, extra="v1", top="linux-source-6.12"):
        src = self.tmp / "src" / name
        top_dir = src / top
        write(top_dir / "Makefile", MAKEFILE.format(sub=sublevel))
        write(top_dir / ".gitignore", "/*\n")  # Debian's: ignores everything at the top level
        write(top_dir / "kernel" / "time" / "timer.c", f"/* timer {extra} */\n")
        tarball = self.tmp / name
        subprocess.run(["tar", "-cJf", str(tarball), "-C", str(src), top], check=True)
        return tarball

    def check_result(self, tarball, version="6.12.118-1~deb12u1"):
        sha = pin.file_sha256(tarball)
        the_pin = pin.Pin("linux-source-6.12", version, str(tarball), sha, pin.kernel_version_of(version))
        return pin.CheckResult(pin=the_pin, installed_version=version, tarball=tarball, sha256=sha)

    def test_extracts_commits_and_tags_base(self):
        tarball = self.make_tarball()
        target = self.tmp / "build" / "linux"
        created, out, _ = quiet(tree.ensure, target, self.check_result(tarball))
        self.assertTrue(created)
        self.assertIn("[tree] extracting", out)
        self.assertTrue((target / "kernel" / "time" / "timer.c").is_file())
        self.assertEqual(git(target, "log", "-1", "--format=%s", "base"),
                         "base: linux-source-6.12 6.12.118-1~deb12u1")
        # -f was needed: .gitignore ignores everything, yet the files are tracked
        self.assertIn("kernel/time/timer.c", git(target, "ls-files"))
        # no identity of its own: the user's commits in the tree are theirs (and sign the series off)
        self.assertEqual(subprocess.run(["git", "-C", str(target), "config", "--local", "user.email"],
                                        stdout=subprocess.PIPE).returncode, 1)
        self.assertEqual(git(target, "log", "-1", "--format=%an <%ae>"), "ktimers tools <ktimers@localhost>")
        self.assertEqual(tree.recorded_sha(target), pin.file_sha256(tarball))
        self.assertEqual(git(target, "status", "--porcelain", "--untracked-files=no"), "")
        self.assertFalse(any(p.name.startswith(".extract-") for p in target.parent.iterdir()))

    def test_same_tarball_gives_same_base_commit(self):
        tarball = self.make_tarball()
        quiet(tree.ensure, self.tmp / "a", self.check_result(tarball))
        quiet(tree.ensure, self.tmp / "b", self.check_result(tarball))
        self.assertEqual(git(self.tmp / "a", "rev-parse", "base"), git(self.tmp / "b", "rev-parse", "base"))

    def test_matching_tree_is_left_alone(self):
        tarball = self.make_tarball()
        target = self.tmp / "linux"
        quiet(tree.ensure, target, self.check_result(tarball))
        marker = write(target / "kernel" / "time" / "timer.c", "/* local edit */\n")
        created, out, _ = quiet(tree.ensure, target, self.check_result(tarball))
        self.assertFalse(created)
        self.assertIn("matches", out)
        self.assertEqual(marker.read_text(), "/* local edit */\n")

    def test_changed_tarball_reextracts_clean_tree(self):
        target = self.tmp / "linux"
        quiet(tree.ensure, target, self.check_result(self.make_tarball(extra="v1")))
        new = self.check_result(self.make_tarball(name="new.tar.xz", extra="v2"), "6.12.120-1")
        created, out, _ = quiet(tree.ensure, target, new)
        self.assertTrue(created)
        self.assertIn("different tarball", out)
        self.assertIn("deleting old tree", out)
        self.assertIn("v2", (target / "kernel" / "time" / "timer.c").read_text())
        self.assertEqual(tree.recorded_sha(target), new.sha256)

    def test_changed_tarball_moves_dirty_tree_aside(self):
        target = self.tmp / "linux"
        quiet(tree.ensure, target, self.check_result(self.make_tarball(extra="v1")))
        write(target / "kernel" / "time" / "timer.c", "/* precious local work */\n")
        new = self.check_result(self.make_tarball(name="new.tar.xz", extra="v2"))
        _, out, _ = quiet(tree.ensure, target, new)
        old = self.tmp / "linux.old"
        self.assertIn("moved it to", out)
        self.assertEqual((old / "kernel" / "time" / "timer.c").read_text(), "/* precious local work */\n")

    def test_existing_tree_without_record_is_adopted_if_version_matches(self):
        tarball = self.make_tarball()
        target = self.tmp / "linux"
        quiet(tree.ensure, target, self.check_result(tarball))
        (target / ".git" / tree.SHA_RECORD).unlink()
        created, out, _ = quiet(tree.ensure, target, self.check_result(tarball))
        self.assertFalse(created)
        self.assertIn("adopted", out)
        self.assertEqual(tree.recorded_sha(target), pin.file_sha256(tarball))

    def test_non_git_directory_is_an_error(self):
        target = self.tmp / "linux"
        write(target / "something", "x")
        error = quiet_raises(self, ToolError, tree.ensure, target, self.check_result(self.make_tarball()))[0]
        self.assertIn("not a git repository", str(error))
        self.assertIn("rm -rf", str(error))

    def test_wrong_kernel_version_in_tarball(self):
        tarball = self.make_tarball()
        src_make = self.tmp / "src" / "linux-source-6.12.tar.xz" / "linux-source-6.12" / "Makefile"
        write(src_make, "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 115\n")
        subprocess.run(["tar", "-cJf", str(tarball), "-C", str(src_make.parent.parent), "linux-source-6.12"],
                       check=True)
        error = quiet_raises(self, ToolError, tree.ensure, self.tmp / "linux", self.check_result(tarball))[0]
        self.assertIn("6.1.115", str(error))
        self.assertFalse((self.tmp / "linux").exists())

    def test_unexpected_tarball_layout(self):
        tarball = self.make_tarball(top="linux-6.12")
        error = quiet_raises(self, ToolError, tree.ensure, self.tmp / "linux", self.check_result(tarball))[0]
        self.assertIn("linux-source-6.12/", str(error))

    def test_kernel_version_in(self):
        write(self.tmp / "k" / "Makefile", MAKEFILE.format(sub=118))
        self.assertEqual(tree.kernel_version_in(self.tmp / "k"), "6.12.118")
