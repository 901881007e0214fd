from helpers import TempDirTestCase, quiet_raises, write

from common import ToolError
from kunit import footprint


class FootprintTest(TempDirTestCase):
    def build_dir(self, files):
        write(self.tmp / "build" / ".config", "CONFIG_X=y\n")
        for name in files:
            write(self.tmp / "build" / name, "")
        return self.tmp / "build"

    def test_counts_compiled_objects_per_directory_largest_first(self):
        build = self.build_dir(["drivers/acpi/bus.o", "drivers/acpi/scan.o", "drivers/acpi/acpica/tbxface.o",
                                "kernel/time/ktimer.o", "kernel/fork.o", "vmlinux.o", "kernel/time/ktimer.mod.o",
                                "arch/x86/kernel/vmlinux.lds.o", "lib/.tmp_x.o"])
        self.assertEqual(footprint.by_directory(footprint.objects(build)),
                         [("drivers/acpi", 3), ("kernel", 1), ("kernel/time", 1)])
        lines = footprint.lines(build, top=2)
        self.assertTrue(lines[0].endswith(": 5 objects"))
        self.assertEqual(lines[1].split(), ["3", "60.0%", "drivers/acpi"])
        self.assertEqual(lines[-1].split(), ["1", "20.0%", "(1", "other", "directories)"])

    def test_not_a_build_dir(self):
        error = quiet_raises(self, ToolError, footprint.objects, self.tmp)
        self.assertIn("not a kernel build dir", str(error))
