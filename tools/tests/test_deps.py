from unittest import mock

import unittest

from helpers import Completed, quiet, quiet_raises

from setup import deps
from common import ToolError


def dpkg_output(installed):
    return "".join(f"{name} ii \n" for name in installed)


class FakeApt:
    """Records commands; dpkg-query reports `installed`, apt-get install adds to it."""

    def __init__(self, installed):
        self.installed = set(installed)
        self.calls = []

    def __call__(self, cmd, **kwargs):
        self.calls.append((cmd, kwargs))
        if cmd[0] == "dpkg-query":
            wanted = cmd[3:]
            return Completed(dpkg_output(p for p in wanted if p in self.installed),
                             returncode=0 if all(p in self.installed for p in wanted) else 1)
        if cmd[:2] == ["apt-get", "install"]:
            self.installed.update(p for p in cmd if not p.startswith("-") and p not in ("apt-get", "install"))
        return Completed()


class RequiredPackagesTest(unittest.TestCase):
    def test_common_plus_arch_packages(self):
        i386 = deps.required_packages(["i386"])
        self.assertIn("qemu-system-x86", i386)
        self.assertNotIn("qemu-system-arm", i386)
        for package in ("linux-source-6.12", "bc", "bison", "flex", "libelf-dev", "libssl-dev", "python3",
                        "make", "gcc", "git", "xz-utils", "perl", "ccache"):
            self.assertIn(package, i386)
        both = deps.required_packages(["i386", "arm"])
        self.assertIn("qemu-system-arm", both)
        self.assertIn("gcc-arm-linux-gnueabihf", both)
        self.assertEqual(len(both), len(set(both)))

    def test_guest_selftest_toolchains_are_included(self):
        both = deps.required_packages(["i386", "arm"])
        for package in ("gcc-i686-linux-gnu", "libc6-dev-i386-cross", "libc6-dev-armhf-cross"):
            self.assertIn(package, both)
        self.assertEqual(both.count("gcc-arm-linux-gnueabihf"), 1)

    def test_unknown_arch(self):
        with self.assertRaises(ToolError) as ctx:
            deps.required_packages(["sparc"])
        self.assertIn("common/arches.py", str(ctx.exception))


class MissingPackagesTest(unittest.TestCase):
    def test_parses_status(self):
        runner = mock.Mock(return_value=Completed("bc ii \nflex un \nmake hi \n", returncode=1))
        self.assertEqual(deps.missing_packages(["bc", "flex", "make", "gcc"], runner), ["flex", "gcc"])


class EnsureTest(unittest.TestCase):
    def test_nothing_missing_does_not_touch_apt(self):
        apt = FakeApt(deps.required_packages(["i386", "arm"]))
        _, out, _ = quiet(deps.ensure, ["i386", "arm"], runner=apt, root=True)
        self.assertEqual([c[0][0] for c in apt.calls], ["dpkg-query"])
        self.assertIn("installed", out)

    def test_root_installs_missing_after_update(self):
        apt = FakeApt(set(deps.required_packages(["i386"])))
        installed, out, _ = quiet(deps.ensure, ["i386", "arm"], runner=apt, root=True)
        arm_only = ["gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross", "qemu-system-arm"]
        self.assertEqual(sorted(installed), arm_only)
        commands = [c[0] for c in apt.calls]
        self.assertEqual(commands[1], ["apt-get", "update"])
        self.assertEqual(commands[2][:4], ["apt-get", "install", "-y", "--no-install-recommends"])
        self.assertEqual(sorted(commands[2][4:]), arm_only)
        self.assertEqual(apt.calls[2][1]["env"]["DEBIAN_FRONTEND"], "noninteractive")

    def test_not_root_says_what_to_install(self):
        apt = FakeApt([])
        error = quiet_raises(self, ToolError, deps.ensure, ["arm"], runner=apt, root=False)[0]
        self.assertIn("qemu-system-arm", str(error))
        self.assertIn("sudo", str(error))
        self.assertEqual([c[0][0] for c in apt.calls], ["dpkg-query"])

    def test_install_that_does_not_install_is_reported(self):
        class BrokenApt(FakeApt):
            def __call__(self, cmd, **kwargs):
                if cmd[:2] == ["apt-get", "install"]:
                    self.calls.append((cmd, kwargs))
                    return Completed()
                return super().__call__(cmd, **kwargs)
        apt = BrokenApt(deps.required_packages(["i386"]))
        error = quiet_raises(self, ToolError, deps.ensure, ["arm"], runner=apt, root=True)[0]
        self.assertIn("still not installed", str(error))
