from pathlib import Path
from unittest import mock

from helpers import TempDirTestCase, quiet, write

from guest import build as guest_build, qemu as guest_qemu
from common import ToolError, arches

I386_CONFIG = """from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='i386',
\t\t\t   kconfig='''
CONFIG_SERIAL_8250=y''',
\t\t\t   qemu_arch='i386',
\t\t\t   kernel_path='arch/x86/boot/bzImage',
\t\t\t   kernel_command_line='console=ttyS0',
\t\t\t   extra_qemu_params=['-machine', 'pc'])
"""


class QemuCommandTest(TempDirTestCase):
    def test_reads_kunits_qemu_config_and_adds_the_guest_arguments(self):
        write(self.tmp / guest_qemu.QEMU_CONFIGS / "i386.py", I386_CONFIG)
        params = guest_qemu.qemu_params(self.tmp, "i386")
        self.assertEqual(params, guest_qemu.QemuParams("i386", "arch/x86/boot/bzImage", "console=ttyS0",
                                                       ("-machine", "pc")))
        command = guest_qemu.qemu_command(params, Path("bzImage"), Path("initramfs.cpio"), users_on=False)
        self.assertEqual(command[0], "qemu-system-i386")
        self.assertEqual(command[command.index("-initrd") + 1], "initramfs.cpio")
        self.assertEqual(command[command.index("-append") + 1],
                         "kunit.enable=0 rdinit=/init panic=-1 oops=panic ktimer.watchdog=20 slab_nomerge console=ttyS0 ktimer.users=0")
        self.assertIn("-no-reboot", command)
        self.assertEqual(command[-4:], ["-machine", "pc", "-smp", "2"])

    def test_the_arch_adds_its_qemu_and_kernel_arguments(self):
        params = guest_qemu.QemuParams("i386", "arch/x86/boot/bzImage", "console=ttyS0", ())
        command = guest_qemu.qemu_command(params, Path("bzImage"), Path("initramfs.cpio"), users_on=True,
                                          arch=arches.Arch("i386", qemu_args="-cpu max", kernel_args=("tsc=reliable",)),
                                          extra_args=("KT_BREAK=1",))
        self.assertEqual(command[command.index("-append") + 1].split()[-3:],
                         ["ktimer.users=1", "tsc=reliable", "KT_BREAK=1"])
        self.assertEqual(command[-4:], ["-cpu", "max", "-smp", "2"])

    def test_an_arch_kunit_cannot_boot(self):
        with self.assertRaises(ToolError) as ctx:
            guest_qemu.qemu_params(self.tmp, "vax")
        self.assertIn("make tree", str(ctx.exception))


class RunTest(TempDirTestCase):
    def test_a_guest_that_powers_off_after_its_tests(self):
        script = "echo 'guest: begin x'; echo 'guest: done'"
        lines = []
        boot, _, _ = quiet(guest_qemu.run, ["sh", "-c", script], self.tmp / "console.log", 30, "t", lines.append)
        self.assertEqual(boot.lines, ["guest: begin x", "guest: done"])
        self.assertEqual(lines, boot.lines)
        self.assertEqual((self.tmp / "console.log").read_text(), "guest: begin x\nguest: done\n")
        self.assertIsNone(guest_qemu.trouble(boot, True, self.tmp / "console.log"))

    def test_a_hung_guest_is_stopped_and_explained(self):
        boot, _, _ = quiet(guest_qemu.run, ["sh", "-c", "echo booting; sleep 30"], self.tmp / "console.log", 1, "t")
        self.assertTrue(boot.timed_out)
        status, message = guest_qemu.trouble(boot, False, self.tmp / "console.log")
        self.assertEqual(status, "TIMEOUT")
        self.assertIn("booting", message)
        self.assertIn("selftests/plan", message)

    def test_a_qemu_that_fails_says_what_to_check(self):
        qemu = write(self.tmp / "qemu-system-sh", "#!/bin/sh\necho 'qemu-system-sh: -initrd x: could not load initrd'\n"
                     "exit 1\n", mode=0o755)
        boot, _, _ = quiet(guest_qemu.run, [str(qemu)], self.tmp / "c.log", 30, "t")
        status, message = guest_qemu.trouble(boot, False, self.tmp / "c.log")
        self.assertEqual(status, "CRASH")
        self.assertIn("could not load initrd", message)
        self.assertIn("make deps", message)
        self.assertIn("make kunit CONFIG=default", message)

    def test_a_guest_that_stops_early(self):
        boot = guest_qemu.Boot(["qemu-system-i386"], lines=["Kernel panic - not syncing: Attempted to kill init!"],
                               returncode=0)
        status, message = guest_qemu.trouble(boot, False, self.tmp / "c.log")
        self.assertEqual(status, "CRASH")
        self.assertIn("Attempted to kill init", message)
        self.assertIn("guest: done", message)

    def test_qemu_not_installed(self):
        with self.assertRaises(ToolError) as ctx:
            quiet(guest_qemu.run, ["qemu-system-nonexistent-arch"], self.tmp / "c.log", 5, "t")
        self.assertIn("make deps", str(ctx.exception))


class BuildTest(TempDirTestCase):
    def test_missing_cross_compiler_names_the_packages(self):
        with mock.patch("shutil.which", return_value=None), self.assertRaises(ToolError) as ctx:
            guest_build.user_compiler("i386")
        message = str(ctx.exception)
        self.assertIn("i686-linux-gnu-gcc is not installed", message)
        self.assertIn("make deps", message)
        self.assertIn("libc6-dev-i386-cross", message)

    def test_an_arch_without_a_user_compiler(self):
        with self.assertRaises(ToolError) as ctx:
            guest_build.user_compiler("um")
        self.assertIn("common/arches.py", str(ctx.exception))

    def test_the_reason_a_test_was_not_built(self):
        log = ("/usr/bin/ld: libc.a(clock_adjtime.o): in function `__clock_adjtime':\n"
               "(.text+0x2e0): multiple definition of `clock_adjtime'; /out/valid-adjtimex.o: first defined\n")
        self.assertIn("multiple definition", guest_build.build_reason(log, "valid-adjtimex"))
        self.assertIn("build.log", guest_build.build_reason("", "adjtick"))


class InitramfsTest(TempDirTestCase):
    def test_contents(self):
        from test_cpio import read_newc
        write(self.tmp / "init", "INIT")
        write(self.tmp / "sh", "SH")
        write(self.tmp / "selftests" / "nanosleep", "NANOSLEEP")
        data = guest_build.initramfs(self.tmp, self.tmp / "selftests", ["nanosleep"], "g 10 nanosleep\n")
        entries = {name: (mode, body, rdev) for name, mode, body, rdev in read_newc(data)}
        self.assertEqual(entries["dev/console"][2], (5, 1))
        self.assertEqual(entries["init"][1], b"INIT")
        self.assertEqual(entries["init"][0] & 0o777, 0o755)
        self.assertEqual(entries["bin/sh"][1], b"SH")
        self.assertEqual(entries["selftests/nanosleep"][1], b"NANOSLEEP")
        self.assertEqual(entries["plan"][1], b"g 10 nanosleep\n")
        self.assertGreater(int(entries["etc/host-time"][1]), 946684800)   # after 2000: see init.c
