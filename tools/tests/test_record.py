"""Recording runs (results/record.py): real KTAP logs, crashed and partial runs, build failures, selftests, the hook."""

import json
import shutil
from contextlib import closing
from pathlib import Path
from unittest import mock

from helpers import (DATA_DIR, HEAD, SERIES, RecordingTestCase, TempDirTestCase, data_lines, git, kunit_result_dir,
                     quiet, quiet_raises, write, write_matrix)

from kunit import ktap
import ktimers
from kunit import run as kunit_run
from results import record, db as results_db
from common import ToolError


class RecordTest(RecordingTestCase):
    def record(self, console, **kwargs):
        build = self.record_run(console, **kwargs)
        label = f"{build['architecture']}-{build['config_name']}"
        document = json.loads((self.results / label / "results.json").read_text())
        with closing(results_db.connect(self.db)) as connection:
            run = next(r for r in results_db.runs(connection) if r["id"] == build["id"])
            tests = {t["path"]: t for t in results_db.table(connection, "tests", build["id"])}
        return document, run, tests

    def test_a_real_i386_run(self):
        document, run, tests = self.record("real-i386-default.log")
        self.assertEqual(run["id"], "ktimers:i386-default-20251204T010000Z")
        self.assertEqual((run["architecture"], run["config_name"], run["kind"]), ("i386", "default", "kunit"))
        self.assertEqual((run["status"], run["run_status"]), ("PASS", "PASS"))
        self.assertEqual(run["compiler"], "gcc (Debian 12.2.0-14+deb12u1) 12.2.0")   # from the kernel's banner
        self.assertEqual((run["patchset_hash"], run["git_commit_hash"]), (SERIES, None))   # recorded without base
        self.assertEqual(run["checkout_id"], f"ktimers:{HEAD}+{SERIES}")
        self.assertEqual(run["kernel_version"], "6.12.118-g1def00b2cd05")
        self.assertEqual((run["duration"], run["run_duration"]), (30.0, 42.5))
        self.assertEqual(run["start_time"], "2025-12-04T01:00:00+00:00")
        # Every suite, case and parameter, with its dotted path and the line of its KTAP result.
        self.assertEqual(tests["ktimer_realclock"]["log_line"], 1320)
        self.assertEqual(tests["ktimer_realclock.ktimer_fires_after_expiry_test"]["log_line"], 1200)
        seed = tests["ktimer_fuzz.ktimer_fuzz_test.seed_1"]
        self.assertEqual((seed["name"], seed["status"], seed["log_line"]), ("seed 1", "PASS", 1537))
        self.assertEqual(seed["misc"]["figures"][0]["divergences"], 0)
        lines = data_lines("real-i386-default.log")
        for path in ("ktimer_realclock", "ktimer_fuzz.ktimer_fuzz_test.seed_1"):
            self.assertRegex(lines[tests[path]["log_line"] - 1], r"^\s*ok \d+ ")
        cases = sum(1 for path in tests if path.count(".") == 1) + sum(
            1 for path in tests if "." not in path and not any(p.startswith(path + ".") for p in tests))
        self.assertEqual(cases, document["counts"]["total"])
        self.assertEqual({t["status"] for t in tests.values()}, {"PASS", "SKIP"})
        self.assertEqual(run["console_url"], "store/i386-default-20251204T010000Z/console.log")

    def test_the_stored_console_is_the_raw_log_and_parses_again(self):
        _, run, tests = self.record("real-arm-default.log", arch="arm")
        stored = self.db.parent / run["console_url"]
        self.assertEqual(stored.read_text().splitlines(), data_lines("real-arm-default.log"))
        original = ktap.parse(data_lines("real-arm-default.log"))
        self.assertEqual(ktap.parse_file(stored).case_counts(), original.case_counts())
        for name in ("build.log", "results.json"):
            self.assertTrue((stored.parent / name).is_file())
        self.assertEqual(run["compiler"], "arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0")
        self.assertEqual(tests["ktimer_modes"]["log_url"], run["console_url"])

    def test_kunit_pys_parser_check_and_tree_are_recorded(self):
        result_dir, document = kunit_result_dir(self.results, "real-i386-default.log")
        document["kunit_parser"] = {"checked": True, "tests": 364, "summary": "Testing complete. Ran 330 tests",
                                    "disagreements": [], "error": None, "note": None}
        write(result_dir / "kunit-parser.txt", "[01:00:00] Testing complete. Ran 330 tests\n")
        build = quiet(record.record, result_dir, self.db, self.tmp / "no-tree", document)[0]
        with closing(results_db.connect(self.db)) as connection:
            (run,) = results_db.runs(connection)
        self.assertEqual(run["misc"]["kunit_parser"], document["kunit_parser"])
        stored = self.db.parent / "store" / build["id"].split(":", 1)[1] / "kunit-parser.txt"
        self.assertIn("Testing complete", stored.read_text())

    def test_a_crashed_run(self):
        document, run, tests = self.record("crashed-i386-panic-mid-suite.log")
        self.assertEqual((run["status"], run["run_status"]), ("PASS", "CRASH"))   # the kernel built, then died
        self.assertEqual(tests["ktimer_realclock"]["status"], "ERROR")
        running = tests["ktimer_realclock.ktimer_real_order_test"]
        self.assertEqual(running["status"], "ERROR")
        self.assertIn("BUG: kernel NULL pointer dereference", running["log_excerpt"] or "")
        self.assertEqual(tests["ktimer_realclock.ktimer_real_order_test.realtime"]["status"], "PASS")
        self.assertNotIn("ktimer_realclock.ktimer_real_order_test.boottime", tests)   # never printed
        self.assertEqual(tests["ktimer_realclock.unreported_4"]["status"], "MISS")      # planned (1..19), never ran
        for suite in ("ktimer_smp", "ktimer_fuzz", "ktimer_user_conv"):      # never started: missing suites
            self.assertEqual(tests[suite]["status"], "MISS")
        self.assertEqual(run["misc"]["findings"][0]["line"], 1214)
        self.assertIn("Kernel panic", " ".join(run["misc"]["problems"]))

    def test_a_partial_run_cut_by_the_timeout(self):
        _, run, tests = self.record("partial-arm-timeout-in-fuzz.log", arch="arm", timeout=1200)
        self.assertEqual(run["run_status"], "TIMEOUT")
        fuzz = {path: t["status"] for path, t in tests.items() if path.startswith("ktimer_fuzz.")}
        self.assertEqual(fuzz["ktimer_fuzz.ktimer_fuzz_test"], "ERROR")
        self.assertEqual(fuzz["ktimer_fuzz.ktimer_fuzz_test.seed_1"], "PASS")
        self.assertEqual(tests["ktimer_users"]["status"], "MISS")

    def test_a_build_failure_is_a_failed_build_without_tests(self):
        _, run, tests = self.record(None, arch="arm", build_failed=True)
        self.assertEqual((run["status"], run["run_status"]), ("FAIL", "BUILD_ERROR"))
        self.assertEqual(tests, {})
        self.assertEqual(run["log_url"], f"store/{run['id'][len('ktimers:'):]}/build.log")
        self.assertIn("error: expected", (self.db.parent / run["log_url"]).read_text())

    def test_the_selftests(self):
        result_dir = self.results / "i386-selftests"
        write(result_dir / "results.json", (DATA_DIR / "real-i386-selftests-results.json").read_text())
        write(result_dir / "console-ktimer.log", "\n".join(data_lines("real-i386-default.log")[:3]) + "\n")
        write(result_dir / "console-hrtimer.log", "guest: done\n")
        # The guest booted the `default` image: its run knows the series and the tree head.
        _, default = kunit_result_dir(self.results, "real-i386-default.log", head="7570babe3608" + "0" * 28)
        quiet(record.record, result_dir, self.db, self.tmp)
        with closing(results_db.connect(self.db)) as connection:
            (run,) = results_db.runs(connection, "i386", "selftests")
            tests = {t["path"]: t for t in results_db.table(connection, "tests", run["id"])}
        self.assertEqual(run["kind"], "selftests")
        self.assertEqual(run["patchset_hash"], SERIES)
        self.assertEqual(run["kernel_version"], "6.12.118-g7570babe3608")
        posix = tests["ktimer_path.posix_timers"]
        self.assertEqual((posix["status"], posix["duration"]), ("SKIP", 27.511))   # a known failure
        self.assertIn("known failure", posix["comment"])
        self.assertEqual(tests["hrtimer_path.nanosleep"]["status"], "PASS")
        self.assertTrue(tests["hrtimer_path.nanosleep"]["log_url"].endswith("/console-hrtimer.log"))
        self.assertEqual(len(tests), 2 + 24)

    def test_the_checkout_is_the_base_commit_and_the_patchset(self):
        result_dir, document = kunit_result_dir(self.results, "real-i386-default.log")
        base = "cc771a28e28b3e2571cbab55ded7053aa7182c7a"
        document.update(base_commit=base, series_patches=["0001-a.patch", "0002-b.patch"])
        quiet(record.record, result_dir, self.db, self.tmp / "no-tree", document)
        with closing(results_db.connect(self.db)) as connection:
            (checkout,) = results_db.table(connection, "checkouts")
        self.assertEqual(checkout["id"], f"ktimers:{base}+{SERIES}")
        self.assertEqual((checkout["git_commit_hash"], checkout["patchset_hash"]), (base, SERIES))
        self.assertIsNone(checkout["git_repository_branch"])
        self.assertEqual(checkout["misc"], {"tree_head": HEAD, "patches": ["0001-a.patch", "0002-b.patch"]})

    def base_tree(self, package):
        """A git tree whose `base` commit says it was extracted from `package`; returns (tree, base sha)."""
        tree = self.tmp / "tree"
        tree.mkdir()
        git(tree, "init", "-q")
        git(tree, "commit", "-q", "--allow-empty", "-m", f"base: linux-source-6.12 {package}")
        git(tree, "tag", "base")
        return tree, git(tree, "rev-parse", "HEAD")

    def test_an_older_run_gets_the_trees_base_commit_if_its_head_descends_from_it(self):
        tree, base = self.base_tree("6.12.118-1~deb12u1")
        git(tree, "commit", "-q", "--allow-empty", "-m", "ktimers: a patch")
        head = git(tree, "rev-parse", "HEAD")
        self.assertEqual(record.base_commit_of({"tree_head": head}, tree), base)
        self.assertEqual(record.base_commit_of({"tree_head": head, "base_commit": "f" * 40}, tree), "f" * 40)
        git(tree, "checkout", "-q", "--orphan", "other")
        git(tree, "commit", "-q", "--allow-empty", "-m", "unrelated")
        self.assertIsNone(record.base_commit_of({"tree_head": git(tree, "rev-parse", "HEAD")}, tree))
        self.assertIsNone(record.base_commit_of({"tree_head": head}, self.tmp / "nowhere"))
        self.assertIsNone(record.base_commit_of({}, tree))

    def test_package_version_from_the_trees_base_commit_else_the_pin(self):
        tree, _ = self.base_tree("6.12.99-1~deb12u9")
        self.assertEqual(record.package_version(tree), "6.12.99-1~deb12u9")
        self.assertEqual(record.base_version("6.12.99-1~deb12u9"), "6.12.99")
        pinned = (Path(record.PIN_FILE).read_text().split("version = ")[1]).split()[0]
        self.assertEqual(record.package_version(self.tmp / "nowhere"), pinned)

    def test_compiler_falls_back_to_the_build_config_then_gcc(self):
        build_dir = self.tmp / "kunit" / "arm-default"
        write(build_dir / ".config", 'CONFIG_CC_VERSION_TEXT="arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0"\n')
        command = ["kunit.py", "run", f"--build_dir={build_dir}"]
        self.assertEqual(record.compiler_of([], command, "arm"), "arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0")
        with mock.patch.object(record, "run") as run:
            run.return_value.returncode, run.return_value.stdout = 0, "gcc (Debian 12.2.0-14) 12.2.0\nCopyright\n"
            self.assertEqual(record.compiler_of([], [], "i386"), "gcc (Debian 12.2.0-14) 12.2.0")
            run.assert_called_once_with(["gcc", "--version"], check=False)

    def test_kcidb_path_components(self):
        self.assertEqual(record.path_component("seed 1"), "seed_1")
        self.assertEqual(record.path_component("(unreported #3)"), "unreported_3")
        self.assertEqual(record.path_component("period=1.5ms"), "period_1_5ms")
        self.assertEqual(record.path_component("", 4), "test_4")

    def test_duplicate_paths_stay_distinct(self):
        nodes = [{"name": "a b", "status": "PASS"}, {"name": "a_b", "status": "FAIL"}]
        rows = record.test_rows("ktimers:x", nodes, "s", lambda console: None, None, set())
        self.assertEqual([row["path"] for row in rows], ["s.a_b", "s.a_b-2"])


class RecordErrorsTest(TempDirTestCase):
    def test_missing_or_broken_results(self):
        error = quiet_raises(self, ToolError, record.record, self.tmp / "i386-default", self.tmp / "db.sqlite")[0]
        self.assertIn("results.json is missing", str(error))
        write(self.tmp / "i386-default" / "results.json", "{not json")
        error = quiet_raises(self, ToolError, record.record, self.tmp / "i386-default", self.tmp / "db.sqlite")[0]
        self.assertIn("is not valid JSON", str(error))
        write(self.tmp / "i386-default" / "results.json", json.dumps({"status": "PASS"}))
        error = quiet_raises(self, ToolError, record.record, self.tmp / "i386-default", self.tmp / "db.sqlite")[0]
        self.assertIn("names no arch", str(error))
        error = quiet_raises(self, ToolError, record.record_all, self.tmp / "empty", self.tmp / "db.sqlite")[0]
        self.assertIn("no results in", str(error))
        error = quiet_raises(self, ToolError, record.record_all, self.tmp, self.tmp / "db.sqlite",
                             names=["arm-up"])[0]
        self.assertIn("no results for arm-up", str(error))

    def test_a_failing_record_warns_and_returns(self):
        result_dir, document = kunit_result_dir(self.tmp / "results", "real-arm-default.log", arch="arm")
        broken = write(self.tmp / "broken.sqlite", "garbage " * 200)
        build, out, err = quiet(record.record_quietly, result_dir, broken, self.tmp, document)
        self.assertIsNone(build)
        self.assertIn("WARNING: could not record", err)
        self.assertIn("is not a usable results database", err)
        self.assertIn("the test run itself is not affected", err)
        self.assertNotIn("Traceback", err)


class HookTest(TempDirTestCase):
    """`ktimers.py kunit` and `selftest` record each run; a broken database only warns."""

    def setUp(self):
        super().setUp()
        self.matrix = write_matrix(self.tmp)
        self.results = self.tmp / "results"

    def kunit(self, *extra):
        def fake_run_suites(tree, arch, config, boot_only=False, results_root=None, **kwargs):
            console = "real-i386-default.log" if arch == "i386" else "real-arm-default.log"
            return kunit_result_dir(results_root, console, arch=arch, config=config.name)[1]

        with mock.patch.object(kunit_run, "run_suites", side_effect=fake_run_suites):
            return quiet(ktimers.main, ["kunit", "--matrix", str(self.matrix), "--results-dir", str(self.results),
                                        "--tree", str(self.tmp / "tree"), "--config", "default", *extra, "i386"])

    def test_kunit_records_each_run(self):
        code, out, _ = self.kunit()
        self.assertEqual(code, 0)
        self.assertIn("[record] [i386] ktimers:i386-default-", out)
        with closing(results_db.connect(self.tmp / "results.sqlite")) as connection:   # $KTIMERS_RESULTS_DB
            self.assertEqual(results_db.labels(connection), [("i386", "default")])

    def test_the_db_flag_wins(self):
        code, _, _ = self.kunit("--db", str(self.tmp / "elsewhere.sqlite"))
        self.assertEqual(code, 0)
        self.assertTrue((self.tmp / "elsewhere.sqlite").is_file())
        self.assertTrue((self.tmp / "store").is_dir())

    def test_a_broken_database_does_not_fail_the_run(self):
        write(self.tmp / "results.sqlite", "garbage " * 200)
        code, out, err = self.kunit()
        self.assertEqual(code, 0)
        self.assertIn("WARNING: could not record", err)
        self.assertIn("results/i386-default", err)

    def test_selftest_records_its_run(self):
        from guest import selftests as guest_selftests

        def fake_run_arch(tree, arch, plan, known, results_root=None, **kwargs):
            result_dir = Path(results_root) / f"{arch}-selftests"
            write(result_dir / "results.json", (DATA_DIR / "real-i386-selftests-results.json").read_text())
            shutil.copyfile(DATA_DIR / "real-i386-default.log", result_dir / "console-ktimer.log")
            return json.loads((result_dir / "results.json").read_text())

        with mock.patch.object(guest_selftests, "run_arch", side_effect=fake_run_arch):
            code, out, _ = quiet(ktimers.main, ["selftest", "--results-dir", str(self.results), "i386"])
        self.assertEqual(code, 0)
        with closing(results_db.connect(self.tmp / "results.sqlite")) as connection:
            (run,) = results_db.runs(connection, "i386", "selftests")
        self.assertEqual(run["compiler"], "gcc (Debian 12.2.0-14+deb12u1) 12.2.0")
