import json

from helpers import TempDirTestCase, quiet, write

import ktimers


class CliTest(TempDirTestCase):
    def test_summary_exit_code_and_closing_line(self):
        doc = {"status": "PASS", "counts": {"PASS": 2, "FAIL": 0, "SKIP": 0, "ERROR": 0, "MISS": 0, "total": 2},
               "findings": [], "suites": [], "problems": []}
        write(self.tmp / "i386-default" / "results.json", json.dumps(doc))
        code, out, _ = quiet(ktimers.main, ["summary", "--results-dir", str(self.tmp), "i386"])
        self.assertEqual(code, 0)
        self.assertEqual(out.splitlines()[-1], "2 passed, 0 failed")
        code, out, _ = quiet(ktimers.main, ["summary", "--results-dir", str(self.tmp), "i386", "arm"])
        self.assertEqual(code, 1)

    def test_expected_errors_have_no_traceback(self):
        code, out, err = quiet(ktimers.main, ["apply", "--tree", str(self.tmp / "missing")])
        self.assertEqual(code, 2)
        self.assertIn("error:", err)
        self.assertIn("make tree", err)
        self.assertNotIn("Traceback", err)

    def test_unknown_arch_is_rejected(self):
        code, _, err = quiet(ktimers.main, ["deps", "sparc"])
        self.assertEqual(code, 2)
        self.assertIn("unknown arch 'sparc'", err)

    def test_kunit_keeps_going_per_arch(self):
        code, _, err = quiet(ktimers.main, ["kunit", "--tree", str(self.tmp / "missing"), "i386", "arm"])
        self.assertEqual(code, 1)
        self.assertIn("[i386]", err)
        self.assertIn("[arm]", err)
