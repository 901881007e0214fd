"""sparse and W=1 on the series' files: what counts, and what the make command is."""

from helpers import Completed, TempDirTestCase, write

from series import compile_check

SPARSE_OUTPUT = """  CC      kernel/time/ktimer_itimer.o
  CHECK   ../kernel/time/ktimer_itimer.c
../kernel/time/ktimer_itimer.c:97:35: warning: incorrect type in argument 1 (different address spaces)
../kernel/time/ktimer_itimer.c:97:35:    expected struct spinlock [usertype] *lock
../kernel/time/itimer.c:54:27: warning: incorrect type in argument 1 (different address spaces)
/abs/include/linux/ktimer.h:12:1: warning: no previous prototype for 'f' [-Wmissing-prototypes]
"""


class OursTest(TempDirTestCase):
    def test_only_lines_naming_the_series_files_count(self):
        found = compile_check.ours(SPARSE_OUTPUT, ["kernel/time/ktimer_itimer.c", "include/linux/ktimer.h"])
        self.assertEqual(found, [
            "../kernel/time/ktimer_itimer.c:97:35: warning: incorrect type in argument 1 (different address spaces)",
            "/abs/include/linux/ktimer.h:12:1: warning: no previous prototype for 'f' [-Wmissing-prototypes]"])

    def test_a_clean_build_has_nothing(self):
        self.assertEqual(compile_check.ours("  CC      kernel/time/ktimer.o\n", ["kernel/time/ktimer.c"]), [])

    def test_objects(self):
        self.assertEqual(compile_check.objects(["kernel/time/a.c", "include/linux/a.h", "kernel/time/.kunitconfig"]),
                         ["kernel/time/a.o"])

    def test_a_suite_built_inside_the_file_it_tests_is_built_through_that_file(self):
        tree = self.tmp / "linux"
        write(tree / "fs" / "timerfd.c", '#ifdef CONFIG_TIMERFD_KUNIT_TEST\n#include "timerfd_test.c"\n#endif\n')
        write(tree / "fs" / "timerfd_test.c", "static void t(void) {}\n")
        write(tree / "fs" / "eventfd.c", "int e;\n")
        self.assertEqual(compile_check.objects(["fs/timerfd_test.c", "fs/eventfd.c"], tree),
                         ["fs/timerfd.o", "fs/eventfd.o"])


class CheckArchTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.kernel = self.tmp / "kernel"
        write(self.kernel / "kernel" / "time" / "ktimer_itimer.c", "int x;\n")
        write(self.kernel / "include" / "linux" / "ktimer.h", "int y;\n")
        self.check_dir = self.tmp / "check"
        write(self.check_dir / "arm" / ".config", "CONFIG_KTIMERS=y\n")   # configured already
        self.calls = []

    def runner(self, cmd, **kwargs):
        self.calls.append(cmd)
        return Completed(SPARSE_OUTPUT)

    def test_sparse_and_w1_on_the_series_objects_with_the_cross_compiler(self):
        problems = compile_check.check_arch(self.tmp / "linux", "arm", self.kernel, self.check_dir, self.runner)
        self.assertEqual(len(problems), 2)
        make = self.calls[-1]
        self.assertEqual(make[:2], ["make", "ARCH=arm"])
        for flag in ("C=2", "W=1", "CROSS_COMPILE=arm-linux-gnueabihf-", "kernel/time/ktimer_itimer.o"):
            self.assertIn(flag, make)

    def test_a_failing_make_without_our_lines_is_still_a_problem(self):
        def broken(cmd, **kwargs):
            return Completed("", "make: *** No rule to make target\n", returncode=2)
        problems = compile_check.check_arch(self.tmp / "linux", "arm", self.kernel, self.check_dir, broken)
        self.assertIn("make exited 2", problems[0])
