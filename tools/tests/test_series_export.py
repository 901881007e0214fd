import os
from unittest import mock

from helpers import GIT_ENV, git, quiet, quiet_raises, write

from series import store as series, export as series_export
from common import ToolError
from test_series import SeriesTestBase

TEMPLATE = """# a comment line, dropped
ktimers: the subject

Body for Linux $kernelversion ($version), $count patches, $$5.
"""


class ExportTest(SeriesTestBase):
    def setUp(self):
        super().setUp()
        write(self.kernel / "base.pin", "package = linux-source-6.12\nversion = 6.12.1-1\nkernelversion = 6.12.1\n")
        write(self.kernel / "cover-letter.txt", TEMPLATE)
        self.out = self.tmp / "out"
        # the sender: the user's git identity (tests run without the user's git config)
        for key, value in (("user.name", "Sender Name"), ("user.email", "sender@example.org")):
            git(self.tree, "config", key, value)

    def export(self):
        return quiet(series_export.export, self.tree, self.out, self.kernel)[0]

    def test_export_writes_cover_letter_and_one_patch_per_commit(self):
        self.apply()
        files = self.export()
        self.assertEqual([f.name for f in files],
                         ["0000-cover-letter.patch", "0001-ktimers-add-core.patch",
                          "0002-ktimers-hook-into-the-softirq.patch"])
        cover = files[0].read_text()
        self.assertIn("Subject: [PATCH 0/2] ktimers: the subject\n", cover)
        self.assertIn("Body for Linux 6.12.1 (6.12.1-1), 2 patches, $5.\n", cover)
        self.assertNotIn("***", cover)
        self.assertNotIn("a comment line", cover)
        self.assertIn(f"base-commit: {git(self.tree, 'rev-parse', 'base')}", cover)
        self.assertIn("From: Sender Name <sender@example.org>", cover)
        self.assertIn(" 3 files changed, 3 insertions(+)", files[1].read_text())
        first = files[1].read_text()
        self.assertIn("Subject: [PATCH 1/2] ktimers: add core", first)
        self.assertIn("From: Dev <dev@example.org>", first)        # the author stays
        self.assertIn("Signed-off-by: Dev <dev@example.org>\nSigned-off-by: Sender Name <sender@example.org>\n",
                      first)                                         # the sender signs off after them
        # Same commits as the applied branch.
        self.assertIn(git(self.tree, "rev-parse", "HEAD~1"), first.splitlines()[0])

    def test_second_export_replaces_the_first(self):
        self.apply()
        self.export()
        write(self.out / "0009-stale.patch", "old\n")
        files = self.export()
        self.assertEqual(sorted(p.name for p in self.out.iterdir()), sorted(f.name for f in files))

    def test_refuses_a_tree_that_is_not_applied_or_dirty(self):
        git(self.tree, "checkout", "-q", "base")
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("is not the applied series", error)
        self.assertIn("make apply", error)
        self.apply()
        write(self.tree / "Makefile", "VERSION = 7\n")
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("local modifications", error)
        self.assertFalse(self.out.exists())

    def test_without_a_git_identity_it_says_how_to_set_one(self):
        for key in ("user.name", "user.email"):
            git(self.tree, "config", "--unset", key)
        env = {"GIT_AUTHOR_NAME": None, "GIT_COMMITTER_NAME": None, "GIT_AUTHOR_EMAIL": None,
               "GIT_COMMITTER_EMAIL": None, "EMAIL": None}
        with mock.patch.dict(os.environ, {}):
            for key in env:
                os.environ.pop(key, None)
            with mock.patch("socket.getfqdn", return_value="localhost"):
                error = quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0]
        self.assertIn("git config --global user.name", str(error))

    def test_refuses_an_output_dir_with_other_files(self):
        self.apply()
        write(self.out / "notes.txt", "mine\n")
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("notes.txt", error)
        self.assertTrue((self.out / "notes.txt").exists())

    def test_template_problems(self):
        self.apply()
        write(self.kernel / "cover-letter.txt", "subject\n\nuses $nope\n")
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("'nope'", error)
        self.assertIn("$kernelversion", error)
        write(self.kernel / "cover-letter.txt", "subject\nno blank line\n")
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("blank line", error)
        (self.kernel / "cover-letter.txt").unlink()
        error = str(quiet_raises(self, ToolError, series_export.export, self.tree, self.out, self.kernel)[0])
        self.assertIn("cover-letter.txt not found", error)

    def test_plain_git_am_of_the_export_gives_the_branch_back(self):
        files = self.export()
        fresh = self.fresh_tree()
        git(fresh, "am", "-q", *[str(f) for f in files[1:]], env=GIT_ENV)
        self.assertEqual(git(fresh, "rev-parse", "HEAD^{tree}"), git(self.tree, "rev-parse", "HEAD^{tree}"))
