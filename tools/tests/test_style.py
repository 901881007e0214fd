import json
import unittest

from helpers import Completed, TempDirTestCase, quiet, quiet_raises, write

from series import style
from common import DEFAULT_TREE, ToolError


class FakePerl:
    """Answers checkpatch/kernel-doc calls from a table keyed by file name."""

    def __init__(self, checkpatch=None, kernel_doc=None):
        self.checkpatch, self.kernel_doc, self.calls = checkpatch or {}, kernel_doc or {}, []

    def __call__(self, cmd, **kwargs):
        self.calls.append(cmd)
        name = cmd[-1].rsplit("/", 1)[-1]
        if cmd[1].endswith("checkpatch.pl"):
            out = self.checkpatch.get(name, "total: 0 errors, 0 warnings, 0 checks, 10 lines checked\n")
            return Completed(out, returncode=1 if "ERROR" in out or "WARNING" in out or "CHECK" in out else 0)
        return Completed("", self.kernel_doc.get(name, ""))


class StyleTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.tree = self.tmp / "linux"
        write(self.tree / "scripts" / "checkpatch.pl", "")
        self.kernel = self.tmp / "kernel"
        write(self.kernel / "base.pin", "x = y\n")

    def test_nothing_to_check_passes_without_tree(self):
        reports, out, _ = quiet(style.check, self.tmp / "no-tree", self.kernel)
        self.assertEqual(reports, [])
        self.assertIn("nothing to check", out)

    def test_files_and_patches_get_the_right_flags(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int x;\n")
        write(self.kernel / "include" / "linux" / "ktimer.h", "int x;\n")
        write(self.kernel / "kernel" / "time" / "README", "not C\n")
        write(self.kernel / "patches" / "0001-hook.patch", "diff --git a/x b/x\n")
        perl = FakePerl()
        reports, out, _ = quiet(style.check, self.tree, self.kernel, runner=perl)
        self.assertEqual(len(reports), 3)
        self.assertTrue(all(r.ok for r in reports))
        file_calls = [c for c in perl.calls if c[-1].endswith("ktimer.c")]
        self.assertEqual(len(file_calls), 1)   # kernel-doc only: the patches carry its lines for checkpatch
        self.assertEqual(file_calls[0][2:5], ["-none", "-Wall", str(self.kernel / "kernel" / "time" / "ktimer.c")])
        patch_call = [c for c in perl.calls if c[-1].endswith(".patch")]
        self.assertEqual(len(patch_call), 1)  # no kernel-doc on patches
        self.assertIn("--strict", patch_call[0])
        self.assertIn("--codespell", patch_call[0])
        self.assertNotIn("--no-signoff", patch_call[0])   # a mail: its message is checked too
        self.assertNotIn("--no-tree", patch_call[0])      # the SPDX check needs the tree
        self.assertIn("ok", out)

    def test_problems_are_reported(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int x;\n")
        write(self.kernel / "patches" / "0001-core.patch", "diff --git a/x b/x\n")
        perl = FakePerl(
            checkpatch={"0001-core.patch": "0001-core.patch:15: WARNING:SUSPECT_CODE_INDENT: suspect code indent\n"
                                           "total: 0 errors, 1 warnings, 0 checks, 18 lines checked\n"},
            kernel_doc={"ktimer.c": "ktimer.c:14: warning: Function parameter or struct member 'b' not described\n"})
        reports, out, _ = quiet(style.check, self.tree, self.kernel, runner=perl)
        self.assertFalse(reports[0].ok)
        self.assertFalse(reports[1].ok)
        self.assertEqual(style.count_issues(reports[0].issues + reports[1].issues), 2)
        self.assertIn("1 problem(s)", out)
        self.assertIn("SUSPECT_CODE_INDENT", out)
        self.assertIn("kernel-doc: ktimer.c:14: warning", out)
        record = self.tmp / "style.json"
        style.record(reports, record)
        data = json.loads(record.read_text())
        self.assertEqual(data["files"], 2)
        self.assertEqual(data["problems"], 2)

    def test_a_checkpatch_helper_that_cannot_run_is_a_problem(self):
        write(self.kernel / "patches" / "0001-core.patch", "diff --git a/x b/x\n")

        def no_ply(cmd, **kwargs):
            return Completed("total: 0 errors, 0 warnings, 0 checks, 10 lines checked\n",
                             "Traceback (most recent call last):\nModuleNotFoundError: No module named 'ply'\n")
        reports, out, _ = quiet(style.check, self.tree, self.kernel, runner=no_ply)
        self.assertFalse(reports[0].ok)
        self.assertIn("No module named 'ply'", reports[0].issues[0])
        self.assertIn("python3-ply", reports[0].issues[0])

    def test_checkpatch_runs_from_the_tree_with_debian_python_first(self):
        write(self.kernel / "patches" / "0001-core.patch", "diff --git a/x b/x\n")
        seen = {}

        def runner(cmd, **kwargs):
            seen.update(kwargs)
            return Completed("total: 0 errors, 0 warnings, 0 checks, 10 lines checked\n")
        quiet(style.check, self.tree, self.kernel, runner=runner)
        self.assertEqual(seen["cwd"], str(self.tree.resolve()))
        self.assertTrue(seen["env"]["PATH"].startswith("/usr/bin:"))

    def test_missing_tree_with_files(self):
        write(self.kernel / "kernel" / "time" / "ktimer.c", "int x;\n")
        error = quiet_raises(self, ToolError, style.check, self.tmp / "no-tree", self.kernel)[0]
        self.assertIn("make tree", str(error))


@unittest.skipUnless((DEFAULT_TREE / style.CHECKPATCH).is_file(), "kernel tree not prepared")
class RealCheckpatchTest(TempDirTestCase):
    """The flags against the real scripts: a clean file passes, a diff without message passes."""

    def test_clean_file_and_messageless_patch(self):
        kernel = self.tmp / "kernel"
        write(kernel / "kernel" / "time" / "clean.c",
              "// SPDX-License-Identifier: GPL-2.0\n#include <linux/kernel.h>\n\n"
              "/**\n * clean_add() - add two numbers\n * @a: first\n * @b: second\n *\n"
              " * Return: the sum\n */\nint clean_add(int a, int b)\n{\n\treturn a + b;\n}\n")
        write(kernel / "patches" / "0001-new-file.patch",
              "diff --git a/kernel/time/new.c b/kernel/time/new.c\nnew file mode 100644\n"
              "index 0000000..1111111\n--- /dev/null\n+++ b/kernel/time/new.c\n@@ -0,0 +1,2 @@\n"
              "+// SPDX-License-Identifier: GPL-2.0\n+int new_value;\n")
        reports, out, _ = quiet(style.check, DEFAULT_TREE, kernel)
        self.assertEqual([r.issues for r in reports], [[], []], out)
