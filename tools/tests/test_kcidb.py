"""`ktimers.py export-kcidb` (results/kcidb.py): the database as KCIDB v4 JSON, and the validator."""

import copy
import json

from helpers import RecordingTestCase, TempDirTestCase, quiet

from results import kcidb
import ktimers


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
        self.assertRegex(checkout["patchset_hash"], r"^[0-9a-f]{64}$")
        self.assertEqual(checkout["misc"]["base_version"], checkout["misc"]["package_version"].split("-")[0])
        builds = {build["id"]: build for build in self.document["builds"]}
        arm = next(build for build in builds.values() if build["architecture"] == "arm")
        self.assertFalse(arm["valid"])                      # a build error: v4 has no build status
        self.assertEqual(arm["misc"]["run_status"], "BUILD_ERROR")
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
