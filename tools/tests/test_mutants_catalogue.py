"""The mutant catalogue (mutants/catalogue.py): the file format, its defects, picking mutants."""

from helpers import DATA_DIR, TempDirTestCase, write

from mutants import catalogue as mutant_catalogue
from common import ToolError

CATALOGUE = DATA_DIR / "mutants" / "catalogue"
DIFF = """\
diff --git a/kernel/time/ktimer.c b/kernel/time/ktimer.c
--- a/kernel/time/ktimer.c
+++ b/kernel/time/ktimer.c
@@ -1,1 +1,1 @@
-int a;
+int b;
"""


class ParseTest(TempDirTestCase):
    def mutant_file(self, header, diff=DIFF, name="05-some-mutant.patch"):
        return write(self.tmp / name, header + diff)

    def error(self, header, diff=DIFF, name="05-some-mutant.patch"):
        path = self.mutant_file(header, diff, name)
        with self.assertRaises(ToolError) as raised:
            mutant_catalogue.parse(path)
        self.assertIn(name, raised.exception.message)
        return raised.exception.message

    def test_the_catalogue_fixture(self):
        mutants = mutant_catalogue.load(CATALOGUE)
        self.assertEqual([m.id for m in mutants], ["01-forward-off-by-one", "02-rearm-keeps-expired",
                                                   "03-forward-no-init", "10-forward-late-new-file"])
        first, second, third, fourth = mutants
        self.assertEqual((first.number, first.configs, first.user, first.equivalent),
                         (1, ("default", "lowres"), False, ""))
        self.assertEqual(first.description, "ktimer_forward() treats a timer due right now as not yet due")
        self.assertEqual(first.expect, ("ktimer_user_conv.ktimer_forward_test",))
        self.assertEqual(first.files, ("kernel/time/ktimer.c",))
        self.assertEqual((second.configs, second.user, second.expect), (("default",), True,
                                                                       ("ktimer_modes", "kt_itimer")))
        # a comment line, and a value continued on an indented line
        self.assertEqual(third.equivalent, "overrun is assigned on every path that reads it, so no test can tell")
        self.assertEqual(fourth.number, 10)
        self.assertEqual(fourth.files, ("kernel/time/ktimer.c", "kernel/time/ktimer_extra.c"))

    def test_defaults_and_case_insensitive_keys(self):
        mutant = mutant_catalogue.parse(self.mutant_file("mutant:  flips a bit \nUSER: Yes\n"))
        self.assertEqual((mutant.id, mutant.number, mutant.description), ("05-some-mutant", 5, "flips a bit"))
        self.assertEqual((mutant.configs, mutant.user, mutant.expect), (("default",), True, ()))
        mutant = mutant_catalogue.parse(self.mutant_file("Mutant: x\nConfigs: default, up\n"))
        self.assertEqual(mutant.configs, ("default", "up"))

    def test_no_mutant_header(self):
        self.assertIn("no `Mutant: <one-line description>` header", self.error("Configs: default\n"))
        self.assertIn("no `Mutant:", self.error("Mutant:   \n"))

    def test_no_diff(self):
        message = self.error("Mutant: x\n", diff="--- a/kernel/time/ktimer.c\n+++ b/kernel/time/ktimer.c\n")
        self.assertIn("no diff", message)
        self.assertIn("diff --git", message)
        self.assertIn("has no hunk", self.error("Mutant: x\n", diff=DIFF.split("@@")[0]))

    def test_header_defects(self):
        self.assertIn("line 2: unknown header `Config:`", self.error("Mutant: x\nConfig: up\n"))
        self.assertIn("line 2: `Mutant:` given twice", self.error("Mutant: x\nMutant: y\n"))
        self.assertIn("line 2: not a `Key: value` header line", self.error("Mutant: x\nsome prose\n"))
        self.assertIn("`User:` is yes or no, not 'maybe'", self.error("Mutant: x\nUser: maybe\n"))
        self.assertIn("`Equivalent:` needs the reason", self.error("Mutant: x\nEquivalent:\n"))
        self.assertIn("`Configs:` is empty", self.error("Mutant: x\nConfigs: ,\n"))

    def test_file_name(self):
        self.assertIn("<NN>-<short-name>.patch", self.error("Mutant: x\n", name="forward.patch"))
        self.assertIn("<NN>-<short-name>.patch", self.error("Mutant: x\n", name="5_forward.patch"))


class LoadTest(TempDirTestCase):
    def test_every_defect_is_named_in_one_error(self):
        write(self.tmp / "01-good.patch", "Mutant: fine\n" + DIFF)
        write(self.tmp / "02-headless.patch", DIFF)
        write(self.tmp / "03-diffless.patch", "Mutant: nothing\n")
        write(self.tmp / "README", "not a mutant\n")
        with self.assertRaises(ToolError) as raised:
            mutant_catalogue.load(self.tmp)
        message = str(raised.exception)
        self.assertIn("2 defective file(s)", message)
        self.assertIn("02-headless.patch", message)
        self.assertIn("03-diffless.patch", message)
        self.assertNotIn("01-good", message)
        self.assertNotIn("README", message)

    def test_no_catalogue(self):
        with self.assertRaises(ToolError) as raised:
            mutant_catalogue.load(self.tmp / "mutants")
        self.assertIn("does not exist", raised.exception.message)
        write(self.tmp / "mutants" / "README", "soon\n")
        with self.assertRaises(ToolError) as raised:
            mutant_catalogue.load(self.tmp / "mutants")
        self.assertIn("holds no *.patch file", raised.exception.message)


class SelectTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.mutants = mutant_catalogue.load(CATALOGUE)

    def test_by_number_or_id_in_catalogue_order(self):
        chosen = mutant_catalogue.select(self.mutants, ["10", "02-rearm-keeps-expired", "1"])
        self.assertEqual([m.id for m in chosen], ["01-forward-off-by-one", "02-rearm-keeps-expired",
                                                  "10-forward-late-new-file"])
        self.assertEqual(mutant_catalogue.select(self.mutants, ["03-forward-no-init.patch"])[0].number, 3)
        self.assertEqual(len(mutant_catalogue.select(self.mutants, None)), 4)

    def test_unknown_ids(self):
        with self.assertRaises(ToolError) as raised:
            mutant_catalogue.select(self.mutants, ["01", "17", "forward"])
        self.assertIn("no mutant 17, forward in the catalogue", raised.exception.message)
        self.assertIn("--list", raised.exception.hint)

    def test_describe(self):
        lines = mutant_catalogue.describe(self.mutants)
        self.assertEqual(lines[0], "01-forward-off-by-one     ktimer_forward() treats a timer due right now as not "
                                   "yet due  [default lowres]")
        self.assertTrue(lines[1].endswith("[default, user]"))
        self.assertTrue(lines[2].endswith("[default; equivalent]"))
        self.assertEqual(lines[-1], "4 mutant(s)")
