"""common/git.py: the one git helper, its error messages and its options."""

import os

from helpers import TempDirTestCase, git as test_git, quiet_raises, write

from common import ToolError
from common.git import command_words, git


class GitTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        test_git(self.repo, "init", "-q")
        write(self.repo / "crlf.txt", "a\r\nb\r\n")
        test_git(self.repo, "add", "crlf.txt")
        test_git(self.repo, "commit", "-q", "-m", "one")

    def test_output_text_and_bytes(self):
        self.assertEqual(git(self.repo, "log", "-1", "--format=%s").stdout.strip(), "one")
        self.assertEqual(git(self.repo, "cat-file", "blob", "HEAD:crlf.txt", text=False).stdout, b"a\r\nb\r\n")
        self.assertEqual(git(self.repo, "status", "--porcelain", locks=False).stdout, "")

    def test_a_failure_names_the_command_and_the_tree_with_gits_message_and_the_hint(self):
        error = quiet_raises(self, ToolError, git, self.repo, "rev-parse", "no-such-rev", hint="make tree")[0]
        self.assertIn("git rev-parse no-such-rev in ", str(error))
        self.assertIn("repo failed (exit 128)", str(error))
        self.assertIn("no-such-rev", error.message.split(":", 1)[1])
        self.assertEqual(error.hint, "make tree")
        error = quiet_raises(self, ToolError, git, self.repo, "cat-file", "blob", "HEAD:nothing", text=False)[0]
        self.assertIn("git cat-file blob in", error.message)
        self.assertIn("does not exist", error.message)   # git's own message, decoded
        self.assertEqual(git(self.repo, "rev-parse", "no-such-rev", check=False).returncode, 128)

    def test_what_env_and_input(self):
        error = quiet_raises(self, ToolError, git, self.repo, "tag", "-d", "none", what="git tag (base)")[0]
        self.assertTrue(error.message.startswith("git tag (base) failed"))
        sha = git(self.repo, "hash-object", "-w", "--stdin", input="text\n").stdout.strip()
        self.assertEqual(git(self.repo, "cat-file", "blob", sha).stdout, "text\n")
        env = dict(os.environ, GIT_AUTHOR_NAME="someone else", GIT_AUTHOR_EMAIL="else@localhost")
        self.assertEqual(git(self.repo, "var", "GIT_AUTHOR_IDENT", env=env).stdout.split(" <")[0], "someone else")

    def test_command_words_skip_gits_own_options(self):
        self.assertEqual(command_words(["-c", "user.name=x", "-c", "user.email=y", "format-patch", "-o", "out"]),
                         ["format-patch", "-o"])
        self.assertEqual(command_words(["--no-pager", "status"]), ["status"])
