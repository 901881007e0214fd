"""`ktimers.py export-kcidb` (results/kcidb.py): the database as KCIDB v4 JSON, and the validator."""

import copy
import json

from helpers import DATA_DIR, HEAD, SERIES, RecordingTestCase, TempDirTestCase, kunit_result_dir, quiet, write

from results import kcidb, record
import ktimers

BASE = "cc771a28e28b3e2571cbab55ded7053aa7182c7a"
PATCHES = ["0001-ktimers-add-nanosecond-timers-on-per-CPU-clock-bases.patch",
           "0002-ktimers-add-CLOCK_BOOTTIME-and-CLOCK_TAI-bases.patch"]
KERNEL_HEAD = "7570babe3608" + "0" * 28      # the release the selftests fixture booted: 6.12.118-g7570babe3608


class ExportTest(RecordingTestCase):
    def setUp(self):
        super().setUp()
        self.record_run("real-i386-default.log")
        self.record_run("crashed-i386-panic-mid-suite.log", hours=1)
        self.record_run(None, arch="arm", build_failed=True)
        self.document = kcidb.export(self.db)

    def test_the_export_validates(self):
        self.assertEqual(kcidb.validate(self.document), [])
        self.assertEqual(self.document["version"], {"major": 4, "minor": 2})
        self.assertEqual(len(self.document["builds"]), 3)
        self.assertEqual(len(self.document["checkouts"]), 1)

    def test_objects_carry_the_kcidb_fields(self):
        checkout = self.document["checkouts"][0]
        self.assertEqual((checkout["origin"], checkout["tree_name"]), ("ktimers", "linux-source-6.12"))
        # runs recorded without a base commit: the tree head and series hash are not KCIDB's fields
        self.assertNotIn("git_commit_hash", checkout)
        self.assertEqual(checkout["patchset_hash"], SERIES)
        self.assertEqual(checkout["misc"]["tree_head"], HEAD)
        self.assertEqual(checkout["misc"]["base_version"], checkout["misc"]["package_version"].split("-")[0])
        builds = {build["id"]: build for build in self.document["builds"]}
        arm = next(build for build in builds.values() if build["architecture"] == "arm")
        self.assertFalse(arm["valid"])                      # a build error: v4 has no build status
        self.assertEqual(arm["misc"]["boots"][0]["run_status"], "BUILD_ERROR")
        self.assertNotIn(arm["id"], {test["build_id"] for test in self.document["tests"]})   # and no tests
        i386 = [build for build in builds.values() if build["architecture"] == "i386"]
        self.assertTrue(all(build["valid"] for build in i386))
        self.assertTrue(all(build["compiler"].startswith("gcc (Debian") for build in i386))
        statuses = {test["status"] for test in self.document["tests"]}
        self.assertEqual(statuses, {"PASS", "SKIP", "ERROR", "MISS"})
        test = next(t for t in self.document["tests"] if t["path"] == "ktimer_fuzz.ktimer_fuzz_test.seed_1")
        self.assertTrue(test["log_url"].startswith("file:///"))
        self.assertIn("log_line", test["misc"])

    def test_the_cli_writes_a_file_or_stdout(self):
        output = self.tmp / "out" / "kcidb.json"
        code, out, _ = quiet(ktimers.main, ["export-kcidb", "--db", str(self.db), "-o", str(output), "--latest",
                                            "--log-base-url", "https://ci.example.org/results/"])
        self.assertEqual(code, 0)
        document = json.loads(output.read_text())
        self.assertEqual(len(document["builds"]), 2)        # the latest run of i386-default and of arm-default
        self.assertTrue(document["tests"][0]["log_url"].startswith("https://ci.example.org/results/store/"))
        code, out, _ = quiet(ktimers.main, ["export-kcidb", "--db", str(self.db), "-o", "-"])
        self.assertEqual(json.loads(out)["version"]["major"], 4)
        code, _, err = quiet(ktimers.main, ["export-kcidb", "--db", str(self.tmp / "none.sqlite")])
        self.assertEqual(code, 2)
        self.assertIn("no results database at", err)

    def test_default_output_is_next_to_the_database(self):
        code, _, _ = quiet(ktimers.main, ["export-kcidb", "--db", str(self.db)])
        self.assertEqual(code, 0)
        self.assertTrue((self.results / "kcidb.json").is_file())


class BuildsAndBootsTest(RecordingTestCase):
    """One KCIDB build per kernel built; the configurations that only booted it are its tests."""

    def run_dir(self, console, config, minutes, mode="run", build="default", kernel_args=(), smp=2,
                head=KERNEL_HEAD, **kwargs):
        """A run as kunit/run.py records it now: base commit, the patches, its configuration."""
        result_dir, document = kunit_result_dir(self.results, console, config=config, head=head,
                                                start=self.START + minutes * 60, **kwargs)
        document.update(base_commit=BASE, series_patches=PATCHES, mode=mode, configuration={
            "name": config, "fragments": [], "kernel_args": list(kernel_args), "smp": smp, "build": build,
            "suites": None})
        write(result_dir / "results.json", json.dumps(document))
        return result_dir

    def record(self, result_dir):
        return quiet(record.record, result_dir, self.db, self.tmp / "no-tree")[0]

    def setUp(self):
        super().setUp()
        self.record(self.run_dir("real-i386-default.log", "default", 0))
        self.record(self.run_dir("real-i386-default.log", "lowres", 2, mode="exec", kernel_args=["ktimer.highres=0"]))
        self.record(self.run_dir("crashed-i386-panic-mid-suite.log", "users-off", 4, mode="exec",
                                 kernel_args=["ktimer.users=0"]))
        selftests = self.results / "i386-selftests"
        write(selftests / "results.json", (DATA_DIR / "real-i386-selftests-results.json").read_text())
        write(selftests / "console-ktimer.log", "guest: done\n")
        self.record(selftests)         # booted the default image of the same release
        self.record(self.run_dir("real-i386-default.log", "up", 6, build="up", smp=1))
        self.document = kcidb.export(self.db)
        self.builds = {build["id"]: build for build in self.document["builds"]}

    def exported_tests(self, build_id):
        return [test for test in self.document["tests"] if test["build_id"] == build_id]

    def test_the_boot_only_configurations_are_tests_of_the_default_build(self):
        self.assertEqual(kcidb.validate(self.document), [])
        default = self.builds["ktimers:i386-default-20251204T010000Z"]
        self.assertEqual(len(self.builds), 2)        # default (booted four times) and up
        self.assertEqual([boot["config"] for boot in default["misc"]["boots"]],
                         ["default", "lowres", "users-off", "selftests"])
        self.assertEqual([boot["run_status"] for boot in default["misc"]["boots"]], ["PASS", "PASS", "CRASH", "PASS"])
        self.assertEqual((default["config_name"], default["duration"], default["valid"]), ("default", 30.0, True))
        up = self.builds["ktimers:i386-up-20251204T010600Z"]
        self.assertEqual([boot["config"] for boot in up["misc"]["boots"]], ["up"])
        tests = self.exported_tests(default["id"])
        by_config = {}
        for test in tests:
            by_config.setdefault(test["environment"]["misc"]["config"], []).append(test)
        self.assertEqual(set(by_config), {"default", "lowres", "users-off", "selftests"})
        lowres = next(t for t in by_config["lowres"] if t["path"] == "ktimer_modes")
        self.assertEqual(lowres["id"], "ktimers:i386-lowres-20251204T010200Z:ktimer_modes")
        self.assertEqual(lowres["environment"]["comment"], "lowres: QEMU -smp 2, kernel args ktimer.highres=0")
        self.assertEqual(lowres["environment"]["misc"]["kernel_args"], ["ktimer.highres=0"])
        self.assertEqual(lowres["environment"]["misc"]["run"], "ktimers:i386-lowres-20251204T010200Z")
        # the same test path in each boot, told apart by its environment, with its own id
        self.assertEqual(sum(1 for t in tests if t["path"] == "ktimer_modes"), 3)
        self.assertEqual(len({t["id"] for t in self.document["tests"]}), len(self.document["tests"]))
        self.assertTrue(any(t["path"] == "ktimer_path.posix_timers" for t in by_config["selftests"]))

    def test_the_checkout_is_the_base_commit_and_the_patchset(self):
        (checkout,) = self.document["checkouts"]
        self.assertEqual(checkout["id"], f"ktimers:{BASE}+{SERIES}")
        self.assertEqual((checkout["git_commit_hash"], checkout["patchset_hash"]), (BASE, SERIES))
        self.assertEqual(checkout["misc"]["tree_head"], KERNEL_HEAD)
        self.assertEqual(checkout["misc"]["patches"], PATCHES)
        self.assertNotIn("git_repository_branch", checkout)
        self.assertEqual({build["checkout_id"] for build in self.document["builds"]}, {checkout["id"]})

    def test_a_boot_of_another_release_is_its_own_build(self):
        self.record(self.run_dir("real-i386-default.log", "lowres", 8, mode="exec", kernel_args=["ktimer.highres=0"],
                                 head="abcdef123456" + "0" * 28))
        document = kcidb.export(self.db)
        self.assertEqual(kcidb.validate(document), [])
        self.assertIn("ktimers:i386-lowres-20251204T010800Z", {build["id"] for build in document["builds"]})

    def test_latest_only_keeps_each_boots_build(self):
        document = kcidb.export(self.db, latest_only=True)
        self.assertEqual(kcidb.validate(document), [])
        self.assertEqual({build["id"] for build in document["builds"]},
                         {"ktimers:i386-default-20251204T010000Z", "ktimers:i386-up-20251204T010600Z"})


class ValidateTest(TempDirTestCase):
    VALID = {"version": {"major": 4, "minor": 2},
             "checkouts": [{"id": "ktimers:c", "origin": "ktimers"}],
             "builds": [{"id": "ktimers:b", "checkout_id": "ktimers:c", "origin": "ktimers", "architecture": "i386",
                         "start_time": "2026-12-04T01:11:27+00:00", "duration": 3.5, "valid": True}],
             "tests": [{"id": "ktimers:b:s.c", "build_id": "ktimers:b", "origin": "ktimers", "path": "s.c",
                        "status": "MISS"}]}

    def broken(self, change):
        document = copy.deepcopy(self.VALID)
        change(document)
        return kcidb.validate(document)

    def test_valid(self):
        self.assertEqual(kcidb.validate(self.VALID), [])

    def test_required_fields(self):
        self.assertIn("checkouts[0] lacks origin", self.broken(lambda d: d["checkouts"][0].pop("origin")))
        self.assertIn("builds[0] lacks checkout_id", self.broken(lambda d: d["builds"][0].pop("checkout_id")))
        self.assertIn("tests[0] lacks build_id", self.broken(lambda d: d["tests"][0].pop("build_id")))
        self.assertIn("version.major must be 4", self.broken(lambda d: d.pop("version")))

    def test_values(self):
        def problems(change):
            return " | ".join(self.broken(change))
        self.assertIn("is not one of", problems(lambda d: d["tests"][0].update(status="CRASH")))
        self.assertIn("characters outside", problems(lambda d: d["tests"][0].update(path="s.seed 1")))
        self.assertIn("is not '<origin>:<id>'", problems(lambda d: d["builds"][0].update(id="b")))
        self.assertIn("is not [a-z0-9_]+", problems(lambda d: d["builds"][0].update(origin="Kt")))
        self.assertIn("is null", problems(lambda d: d["builds"][0].update(compiler=None)))
        self.assertIn("unknown field 'status'", problems(lambda d: d["builds"][0].update(status="PASS")))
        self.assertIn("not an RFC 3339", problems(lambda d: d["builds"][0].update(start_time="yesterday")))
        self.assertIn("names no build", problems(lambda d: d["tests"][0].update(build_id="ktimers:x")))
        self.assertIn("names no checkout", problems(lambda d: d["builds"][0].update(checkout_id="ktimers:x")))
        self.assertIn("is not unique", problems(lambda d: d["tests"].append(dict(d["tests"][0]))))
        self.assertIn("is not a sha1", problems(lambda d: d["checkouts"][0].update(git_commit_hash="abc")))
        self.assertIn("longer than", problems(lambda d: d["tests"][0].update(log_excerpt="x" * 20000)))
        self.assertIn("is not a sha256", problems(lambda d: d["checkouts"][0].update(patchset_hash="abc")))
        self.assertEqual(self.broken(lambda d: d["checkouts"][0].update(patchset_hash="")), [])   # no patches

    def test_v4_resources_and_environments(self):
        def problems(change):
            return " | ".join(self.broken(change))
        patch = {"name": "0001-x.patch", "url": "https://example.org/0001-x.patch"}
        self.assertEqual(self.broken(lambda d: d["checkouts"][0].update(patchset_files=[patch])), [])
        self.assertIn("exactly a name and a url",
                      problems(lambda d: d["checkouts"][0].update(patchset_files=[{"name": "0001-x.patch"}])))
        self.assertIn("has a '/'", problems(lambda d: d["checkouts"][0].update(
            patchset_files=[dict(patch, name="kernel/patches/0001-x.patch")])))
        self.assertEqual(self.broken(lambda d: d["tests"][0].update(environment={"comment": "lowres",
                                                                                  "misc": {"smp": 2}})), [])
        self.assertIn("environment has unknown field 'config'",
                      problems(lambda d: d["tests"][0].update(environment={"config": "lowres"})))
        self.assertIn("misc is not an object", problems(lambda d: d["tests"][0].update(misc="x")))
