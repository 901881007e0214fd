import json
from unittest import mock

from helpers import MATRIX_TEXT, TempDirTestCase, quiet, write, write_matrix

import ktimers
from kunit import run as kunit_run
from common import ToolError

MATRIX = MATRIX_TEXT + """\
[lockdep]
description = not in make test
[armonly]
description = a configuration only some arches have (as kasan)
arches = arm x86_64
"""


def doc(passed, status="PASS"):
    return {"status": status, "counts": {"PASS": passed, "FAIL": 0, "SKIP": 0, "ERROR": 0, "MISS": 0,
                                         "total": passed}, "findings": [], "suites": [], "problems": []}


class CliTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.matrix = write_matrix(self.tmp, MATRIX)
        self.results = self.tmp / "results"

    def summary(self, *args):
        return quiet(ktimers.main, ["summary", "--results-dir", str(self.results), "--matrix", str(self.matrix),
                                    *args])

    def test_summary_exit_code_and_closing_line(self):
        write(self.results / "i386-default" / "results.json", json.dumps(doc(2)))
        code, out, _ = self.summary("--config", "default", "i386")
        self.assertEqual(code, 0)
        self.assertEqual(out.splitlines()[-1], "2 passed, 0 failed")
        code, out, _ = self.summary("--config", "default", "i386", "arm")
        self.assertEqual(code, 1)

    def test_summary_defaults_to_the_matrix_defaults(self):
        for arch in ("i386", "arm"):
            for config, passed in (("default", 10), ("lowres", 9), ("up", 8)):
                write(self.results / f"{arch}-{config}" / "results.json", json.dumps(doc(passed)))
        code, out, _ = self.summary("i386", "arm")
        self.assertEqual(code, 0)
        rows = [line.split()[:3] for line in out.splitlines() if line.startswith(("i386 ", "arm "))]
        self.assertEqual(rows, [["i386", "default", "PASS"], ["i386", "lowres", "PASS"], ["i386", "up", "PASS"],
                                ["arm", "default", "PASS"], ["arm", "lowres", "PASS"], ["arm", "up", "PASS"]])
        self.assertEqual(out.splitlines()[-1], "54 passed, 0 failed")
        code, out, _ = self.summary("--config", "up", "--config", "lowres", "arm")
        self.assertEqual(out.splitlines()[-1], "17 passed, 0 failed")

    def test_summary_with_a_broken_matrix_still_ends_with_the_closing_line(self):
        write(self.results / "i386-default" / "results.json", json.dumps(doc(2)))
        self.matrix.write_text("[default]\nby_default = yes\nsmp = many\n")
        code, out, _ = self.summary("i386")
        self.assertEqual(code, 1)
        self.assertIn("kunit_configs/matrix:3:", out)
        self.assertEqual(out.splitlines()[-1], "0 passed, 1 failed")
        self.matrix.write_text(MATRIX)
        code, out, _ = self.summary("--config", "nope", "i386")
        self.assertIn("unknown configuration 'nope'", out)
        self.assertEqual(out.splitlines()[-1], "0 passed, 1 failed")

    def test_matrix_lists_the_configurations(self):
        code, out, _ = quiet(ktimers.main, ["matrix", "--matrix", str(self.matrix)])
        self.assertEqual(code, 0)
        lines = out.splitlines()
        self.assertEqual([line.split()[0] for line in lines[1:]], ["default", "lowres", "up", "lockdep", "armonly"])
        self.assertRegex(lines[2], r"^lowres\s+yes\s+all\s+<arch>-default\s+2\s+-\s+ktimer.highres=0")
        self.assertRegex(lines[4], r"^lockdep\s+no\s+")

    def test_shipped_matrix_is_listed(self):
        code, out, _ = quiet(ktimers.main, ["matrix"])
        self.assertEqual(code, 0)
        self.assertIn("lowres", out)

    def test_matrix_error_is_a_message(self):
        self.matrix.write_text("[default]\nby_default = yes\nbogus\n")
        code, _, err = quiet(ktimers.main, ["matrix", "--matrix", str(self.matrix)])
        self.assertEqual(code, 2)
        self.assertIn("kunit_configs/matrix:3: cannot parse 'bogus'", err)
        self.assertNotIn("Traceback", err)

    def run_kunit(self, *args, statuses=None):
        """ktimers.py kunit with run_suites faked; returns (code, calls, out, err)."""
        calls = []

        def fake_run_suites(tree, arch, config, boot_only=False, **kwargs):
            calls.append((arch, config.name, config.build_dir_name(arch), boot_only))
            status = (statuses or {}).get(f"{arch}-{config.name}", "PASS")
            return {"status": status, "built": status not in ("BUILD_ERROR", "CONFIG_ERROR")}

        with mock.patch.object(kunit_run, "run_suites", side_effect=fake_run_suites):
            code, out, err = quiet(ktimers.main, ["kunit", "--matrix", str(self.matrix), *args])
        return code, calls, out, err

    def test_kunit_runs_per_arch_each_configuration_in_matrix_order(self):
        code, calls, out, _ = self.run_kunit("i386", "arm")
        self.assertEqual(code, 0)
        self.assertEqual(calls, [
            ("i386", "default", "i386-default", False), ("i386", "lowres", "i386-default", True),
            ("i386", "up", "i386-up", False),
            ("arm", "default", "arm-default", False), ("arm", "lowres", "arm-default", True),
            ("arm", "up", "arm-up", False)])
        self.assertIn("[kunit] [i386] plan: default (builds i386-default), lowres (boots i386-default), "
                      "up (builds i386-up)", out)

    def test_kunit_selected_configurations(self):
        _, calls, _, _ = self.run_kunit("--config", "up", "--config", "lockdep", "--config", "up", "arm")
        self.assertEqual([(arch, config) for arch, config, _, _ in calls], [("arm", "up"), ("arm", "lockdep")])
        _, calls, _, _ = self.run_kunit("--config", "lowres", "arm")
        self.assertEqual(calls, [("arm", "lowres", "arm-default", False)])   # alone: kunit.py run, may build

    def test_kunit_rebuilds_when_the_shared_build_failed(self):
        code, calls, _, _ = self.run_kunit("i386", statuses={"i386-default": "BUILD_ERROR"})
        self.assertEqual(code, 1)
        self.assertEqual(calls[1], ("i386", "lowres", "i386-default", False))

    def test_kunit_skips_a_configuration_on_arches_it_does_not_list(self):
        code, calls, out, _ = self.run_kunit("--config", "default", "--config", "armonly", "i386", "arm")
        self.assertEqual(code, 0)
        self.assertEqual([(arch, config) for arch, config, _, _ in calls],
                         [("i386", "default"), ("arm", "default"), ("arm", "armonly")])
        self.assertIn("[kunit] [i386] plan: default (builds i386-default), armonly (not on i386: "
                      "arches = arm x86_64)", out)

    def test_summary_leaves_skipped_runs_out_of_the_table_and_the_count(self):
        for label in ("i386-default", "arm-default", "arm-armonly"):
            write(self.results / label / "results.json", json.dumps(doc(3)))
        code, out, _ = self.summary("--config", "default", "--config", "armonly", "i386", "arm")
        self.assertEqual(code, 0)
        rows = [line.split()[:3] for line in out.splitlines() if line.startswith(("i386 ", "arm "))]
        self.assertEqual(rows, [["i386", "default", "PASS"], ["arm", "default", "PASS"],
                                ["arm", "armonly", "PASS"]])
        self.assertIn("not run, by their `arches` in kunit_configs/matrix: i386-armonly", out)
        self.assertEqual(out.splitlines()[-1], "9 passed, 0 failed")

    def test_kunit_unknown_configuration_runs_nothing(self):
        code, calls, _, err = self.run_kunit("--config", "lowers", "i386")
        self.assertEqual(code, 2)
        self.assertEqual(calls, [])
        self.assertIn("unknown configuration 'lowers'", err)

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

    def test_kunit_keeps_going_per_arch_and_configuration(self):
        code, _, err = quiet(ktimers.main, ["kunit", "--tree", str(self.tmp / "missing"), "--matrix",
                                            str(self.matrix), "--results-dir", str(self.results), "i386", "arm"])
        self.assertEqual(code, 1)
        for label in ("i386-default", "i386-lowres", "i386-up", "arm-default", "arm-lowres", "arm-up"):
            self.assertIn(f"[{label}]", err)


class SelftestCliTest(CliTest):
    def test_summary_adds_the_selftest_rows_and_their_reports(self):
        write(self.results / "i386-default" / "results.json", json.dumps(doc(10)))
        write(self.results / "i386-selftests" / "results.json", json.dumps(doc(24)))
        write(self.results / "i386-selftests" / "report.txt", "timer selftests in the guest, i386: ...\n")
        code, out, _ = self.summary("--config", "default", "--selftests", "i386")
        self.assertEqual(code, 0)
        self.assertIn("timer selftests in the guest, i386", out)
        self.assertRegex(out, r"\ni386\s+selftests\s+PASS\s+24")
        self.assertEqual(out.splitlines()[-1], "34 passed, 0 failed")

    def test_missing_selftest_results_fail_and_say_how_to_get_them(self):
        write(self.results / "i386-default" / "results.json", json.dumps(doc(10)))
        code, out, _ = self.summary("--config", "default", "--selftests", "i386")
        self.assertEqual(code, 1)
        self.assertIn("make selftest ARCH=i386", out)
        self.assertEqual(out.splitlines()[-1], "10 passed, 1 failed")

    def test_selftest_keeps_going_per_arch(self):
        from guest import selftests as guest_selftests

        def fake_run_arch(tree, arch, plan, known, **kwargs):
            if arch == "i386":
                raise ToolError("no kernel image", "run make kunit")
            return {"status": "PASS"}

        with mock.patch.object(guest_selftests, "run_arch", side_effect=fake_run_arch) as run_arch:
            code, _, err = quiet(ktimers.main, ["selftest", "--results-dir", str(self.results), "i386", "arm"])
        self.assertEqual(code, 1)
        self.assertEqual([call.args[1] for call in run_arch.call_args_list], ["i386", "arm"])
        self.assertIn("[i386-selftests] no kernel image", err)

    def test_selftest_boots_the_image_of_another_configuration(self):
        from guest import selftests as guest_selftests

        def fake_run_arch(tree, arch, plan, known, configuration=None, **kwargs):
            raise ToolError(f"no image of build {configuration.build_name}", "run make kunit")

        with mock.patch.object(guest_selftests, "run_arch", side_effect=fake_run_arch) as run_arch:
            code, out, err = quiet(ktimers.main, ["selftest", "--results-dir", str(self.results), "--matrix",
                                                  str(self.matrix), "--config", "armonly", "i386", "arm"])
        self.assertEqual(code, 1)
        self.assertEqual([call.args[1] for call in run_arch.call_args_list], ["arm"])
        self.assertIn("configuration armonly does not run", out)
        self.assertIn("[arm-selftests-armonly] no image of build default", err)
        self.assertEqual(guest_selftests.results_name("arm"), "arm-selftests")
        # the results database files it apart from the gate's selftests
        self.assertEqual(guest_selftests.run_config("kmemleak"), "selftests-kmemleak")

    def test_the_guest_never_boots_an_image_older_than_its_configuration(self):
        import os
        from guest import qemu, selftests as guest_selftests
        params = qemu.QemuParams("i386", "arch/x86/boot/bzImage", "console=ttyS0", (), "stdio")
        build = self.tmp / "kunit" / "i386-kmemleak"
        image = write(build / params.kernel_path, "image")
        write(build / ".config", "\n".join(guest_selftests.NEEDED_OPTIONS) + "\n")
        os.utime(build / ".config", (1000, 1000))
        os.utime(image, (2000, 2000))
        self.assertEqual(guest_selftests.kernel_image("i386", params, self.tmp / "kunit", "kmemleak", "kmemleak"),
                         image)
        os.utime(build / ".config", (3000, 3000))    # configured again, the build failed
        with self.assertRaises(ToolError) as raised:
            guest_selftests.kernel_image("i386", params, self.tmp / "kunit", "kmemleak", "kmemleak")
        self.assertIn("stale", str(raised.exception))
        self.assertIn("make kunit CONFIG=kmemleak ARCH=i386", str(raised.exception))

    def test_selftests_skip_arches_without_a_user_space_compiler(self):
        from guest import selftests as guest_selftests
        write(self.results / "x86_64-default" / "results.json", json.dumps(doc(10)))
        with mock.patch.object(guest_selftests, "run_arch") as run_arch:
            code, out, _ = quiet(ktimers.main, ["selftest", "--results-dir", str(self.results), "x86_64"])
        self.assertEqual(code, 0)
        run_arch.assert_not_called()
        self.assertIn("not run", out)
        code, out, _ = self.summary("--config", "default", "--selftests", "x86_64")
        self.assertEqual(code, 0)
        self.assertEqual(out.splitlines()[-1], "10 passed, 0 failed")
