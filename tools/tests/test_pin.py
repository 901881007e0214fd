import hashlib
from unittest import mock

from helpers import Completed, TempDirTestCase, quiet, quiet_raises, write

from setup import pin
from common import ToolError

PIN_TEXT = """# comment line
package = linux-source-6.12
version = 6.12.118-1~deb12u1   # trailing comment
tarball = {tarball}
sha256 = {sha}
kernelversion = 6.12.118
"""


class PinTestBase(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.tarball = write(self.tmp / "linux-source-6.12.tar.xz", "fake tarball\n")
        self.sha = hashlib.sha256(self.tarball.read_bytes()).hexdigest()
        self.pin_path = write(self.tmp / "base.pin", PIN_TEXT.format(tarball=self.tarball, sha=self.sha))

    def check(self, installed, **kwargs):
        return quiet(pin.check, self.pin_path, query=lambda package: installed, **kwargs)


class ReadPinTest(PinTestBase):
    def test_reads_keys_and_ignores_comments(self):
        loaded = pin.read_pin(self.pin_path)
        self.assertEqual(loaded.package, "linux-source-6.12")
        self.assertEqual(loaded.version, "6.12.118-1~deb12u1")
        self.assertEqual(loaded.sha256, self.sha)
        self.assertEqual(loaded.kernelversion, "6.12.118")

    def test_missing_file_says_make_pin(self):
        error = quiet_raises(self, ToolError, pin.read_pin, self.tmp / "nope.pin")[0]
        self.assertIn("make pin", str(error))

    def test_missing_key(self):
        write(self.pin_path, "package = linux-source-6.12\n")
        error = quiet_raises(self, ToolError, pin.read_pin, self.pin_path)[0]
        self.assertIn("version", str(error))
        self.assertIn("sha256", str(error))

    def test_bad_line_names_line_number(self):
        write(self.pin_path, "package linux-source-6.12\n")
        error = quiet_raises(self, ToolError, pin.read_pin, self.pin_path)[0]
        self.assertIn(":1:", str(error))

    def test_write_then_read_round_trip(self):
        original = pin.read_pin(self.pin_path)
        pin.write_pin(original, self.tmp / "new.pin")
        self.assertEqual(pin.read_pin(self.tmp / "new.pin"), original)


class VersionTest(PinTestBase):
    def test_kernel_version_of_debian_versions(self):
        self.assertEqual(pin.kernel_version_of("6.12.118-1~deb12u1"), "6.12.118")
        self.assertEqual(pin.kernel_version_of("6.12.57-1"), "6.12.57")
        self.assertEqual(pin.kernel_version_of("1:6.1-1"), "6.1")
        self.assertEqual(pin.kernel_series("6.12.118"), "6.12")
        with self.assertRaises(ToolError):
            pin.kernel_version_of("garbage")

    def test_installed_version_parses_dpkg_query(self):
        runner = mock.Mock(return_value=Completed("ii  6.12.118-1~deb12u1"))
        self.assertEqual(pin.installed_version("linux-source-6.12", runner), "6.12.118-1~deb12u1")
        self.assertIn("dpkg-query", runner.call_args[0][0])

    def test_installed_version_not_installed(self):
        runner = mock.Mock(return_value=Completed("un  ", returncode=0))
        self.assertIsNone(pin.installed_version("linux-source-6.12", runner))
        runner = mock.Mock(return_value=Completed("", "no packages found", returncode=1))
        self.assertIsNone(pin.installed_version("linux-source-6.12", runner))


class CheckTest(PinTestBase):
    def test_same_version_and_sha_is_silent(self):
        result, out, err = self.check("6.12.118-1~deb12u1")
        self.assertEqual(result.warnings, [])
        self.assertEqual(err, "")
        self.assertEqual(result.sha256, self.sha)
        self.assertEqual(result.kernelversion, "6.12.118")

    def test_other_6_12_version_warns_and_proceeds(self):
        result, out, err = self.check("6.12.120-1~deb12u1")
        self.assertEqual(len(result.warnings), 1)
        self.assertIn("WARNING", err)
        self.assertIn("tested against linux-source-6.12 6.12.118-1~deb12u1", err)
        self.assertIn("6.12.120-1~deb12u1", err)
        self.assertIn("make pin", err)
        self.assertEqual(result.installed_version, "6.12.120-1~deb12u1")

    def test_same_version_other_sha_warns(self):
        write(self.tarball, "other content\n")
        result, out, err = self.check("6.12.118-1~deb12u1")
        self.assertEqual(len(result.warnings), 1)
        self.assertIn("sha256", err)

    def test_other_series_is_an_error(self):
        error = quiet_raises(self, ToolError, pin.check, self.pin_path, query=lambda p: "6.1.115-1")[0]
        self.assertIn("6.12.y", str(error))
        self.assertIn("6.1.115", str(error))

    def test_not_installed_is_an_error(self):
        error = quiet_raises(self, ToolError, pin.check, self.pin_path, query=lambda p: None)[0]
        self.assertIn("not installed", str(error))
        self.assertIn("make deps", str(error))

    def test_missing_tarball_is_an_error(self):
        self.tarball.unlink()
        error = quiet_raises(self, ToolError, pin.check, self.pin_path,
                             query=lambda p: "6.12.118-1~deb12u1")[0]
        self.assertIn("missing", str(error))
        self.assertIn("--reinstall", str(error))


class ShaCacheTest(PinTestBase):
    def test_hash_is_cached_by_size_and_mtime(self):
        cache = self.tmp / "cache.json"
        with mock.patch.object(pin, "file_sha256", wraps=pin.file_sha256) as hasher:
            first = quiet(pin.tarball_sha256, self.tarball, cache)[0]
            second = quiet(pin.tarball_sha256, self.tarball, cache)[0]
            self.assertEqual(first, second)
            self.assertEqual(hasher.call_count, 1)
            write(self.tarball, "changed and longer content\n")
            third = quiet(pin.tarball_sha256, self.tarball, cache)[0]
            self.assertEqual(hasher.call_count, 2)
        self.assertNotEqual(first, third)
        self.assertEqual(third, hashlib.sha256(self.tarball.read_bytes()).hexdigest())

    def test_broken_cache_is_ignored(self):
        cache = write(self.tmp / "cache.json", "{not json")
        self.assertEqual(quiet(pin.tarball_sha256, self.tarball, cache)[0], self.sha)


class RepinTest(PinTestBase):
    def test_repin_rewrites_from_installed_package(self):
        runner = mock.Mock(return_value=Completed(f"/.\n/usr/src\n{self.tarball}\n"))
        new_pin = quiet(pin.repin, self.pin_path, runner=runner, query=lambda p: "6.12.120-1~deb12u1")[0]
        self.assertEqual(new_pin.version, "6.12.120-1~deb12u1")
        self.assertEqual(new_pin.kernelversion, "6.12.120")
        loaded = pin.read_pin(self.pin_path)
        self.assertEqual(loaded, new_pin)
        self.assertIn("make pin", self.pin_path.read_text())

    def test_repin_without_tarball_in_package(self):
        runner = mock.Mock(return_value=Completed("/.\n/usr/share/doc\n"))
        error = quiet_raises(self, ToolError, pin.repin, self.pin_path, runner=runner,
                             query=lambda p: "6.12.118-1~deb12u1")[0]
        self.assertIn("tar.xz", str(error))
