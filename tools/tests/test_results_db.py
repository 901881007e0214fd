"""The results database (results/db.py): create, insert, query, and the errors a user can hit."""

import json
import os
import sqlite3
from contextlib import closing

from helpers import TempDirTestCase, quiet_raises

from results import db as results_db
from common import ToolError


def run_rows(build_id="ktimers:i386-default-20261204T011127Z", start="2026-12-04T01:11:27+00:00", tests=None):
    checkout = {"id": "ktimers:abc", "origin": "ktimers", "patchset_hash": "f" * 64, "package_version": "6.12.118-1",
                "base_version": "6.12.118", "start_time": start, "valid": 1}
    build = {"id": build_id, "checkout_id": "ktimers:abc", "origin": "ktimers", "architecture": "i386",
             "config_name": "default", "kind": "kunit", "compiler": "gcc (Debian 12.2.0-14) 12.2.0",
             "start_time": start, "duration": 3.7, "run_duration": 15.8, "status": "PASS", "run_status": "PASS",
             "misc": json.dumps({"counts": {"PASS": 2}}), "environment": json.dumps({"comment": "QEMU -smp 2"})}
    tests = tests if tests is not None else [("s", "PASS", 10), ("s.c", "PASS", 9)]
    rows = [{"id": f"{build_id}:{path}", "build_id": build_id, "origin": "ktimers", "path": path, "status": status,
             "log_line": line, "log_url": "store/x/console.log"} for path, status, line in tests]
    return checkout, build, rows


class DatabaseTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.db = self.tmp / "results" / "results.sqlite"

    def test_create_insert_and_query(self):
        results_db.write_run(self.db, *run_rows())
        results_db.write_run(self.db, *run_rows("ktimers:i386-default-20261205T000000Z", "2026-12-05T00:00:00+00:00",
                                                tests=[("s", "FAIL", 12), ("s.c", "FAIL", 11)]))
        with closing(results_db.connect(self.db)) as connection:
            runs = results_db.runs(connection, "i386", "default")
            self.assertEqual([run["start_time"][:10] for run in runs], ["2026-12-04", "2026-12-05"])   # oldest first
            self.assertEqual(runs[0]["package_version"], "6.12.118-1")          # joined from the checkout
            self.assertEqual(runs[0]["misc"], {"counts": {"PASS": 2}})          # JSON columns come back parsed
            self.assertEqual(results_db.labels(connection), [("i386", "default")])
            tests = results_db.table(connection, "tests", runs[1]["id"])
            self.assertEqual([(t["path"], t["status"], t["log_line"]) for t in tests],
                             [("s", "FAIL", 12), ("s.c", "FAIL", 11)])
            self.assertEqual(len(results_db.table(connection, "checkouts")), 1)
            self.assertEqual(results_db.runs(connection, "arm"), [])

    def test_a_checkout_seen_again_learns_what_it_did_not_know(self):
        checkout, build, tests = run_rows(start="2026-12-05T00:00:00+00:00")
        results_db.write_run(self.db, dict(checkout, patchset_hash=None), build, tests)
        checkout, build, tests = run_rows("ktimers:i386-up-1", start="2026-12-04T00:00:00+00:00")
        results_db.write_run(self.db, dict(checkout, package_version="other"), build, tests)
        with closing(results_db.connect(self.db)) as connection:
            (row,) = results_db.table(connection, "checkouts")
        self.assertEqual(row["patchset_hash"], "f" * 64)
        self.assertEqual(row["package_version"], "6.12.118-1")              # kept
        self.assertEqual(row["start_time"], "2026-12-04T00:00:00+00:00")    # the earliest run

    def test_recording_the_same_run_again_replaces_it(self):
        results_db.write_run(self.db, *run_rows())
        results_db.write_run(self.db, *run_rows(tests=[("s", "ERROR", 3)]))
        with closing(results_db.connect(self.db)) as connection:
            (run,) = results_db.runs(connection)
            self.assertEqual([t["status"] for t in results_db.table(connection, "tests", run["id"])], ["ERROR"])

    def test_benchmark_figures_are_kept_apart(self):
        """A benchmark boot is a build of kind bench with its figures in bench_results; the pass/fail
        queries (runs, labels: make report, make baseline) leave it out unless asked for it."""
        checkout, build, tests = run_rows("ktimers:i386-bench-1")
        build = dict(build, config_name="bench", kind="bench")
        figure = {"build_id": build["id"], "engine": "highres", "workload": "modify", "api": "ktimer", "n": 100,
                  "metric": "median_ns", "value": 700, "log_line": 206}
        skipped = dict(figure, api="timer_list", n=1000000, metric="skipped", value=None, note="nomem", log_line=214)
        results_db.write_run(self.db, checkout, build, tests, [figure, skipped])
        results_db.write_run(self.db, *run_rows())
        with closing(results_db.connect(self.db)) as connection:
            self.assertEqual(results_db.labels(connection), [("i386", "default")])
            self.assertEqual([run["config_name"] for run in results_db.runs(connection)], ["default"])
            self.assertEqual(results_db.runs(connection, "i386", "bench"), [])
            (bench,) = results_db.runs(connection, kinds=("bench",))
            self.assertEqual(results_db.labels(connection, kinds=("bench", "kunit")),
                             [("i386", "bench"), ("i386", "default")])
            figures = results_db.table(connection, "bench_results", bench["id"])
            self.assertEqual([(f["api"], f["n"], f["metric"], f["value"], f["note"]) for f in figures],
                             [("ktimer", 100, "median_ns", 700, None), ("timer_list", 1000000, "skipped", None, "nomem")])
        results_db.write_run(self.db, checkout, build, tests, [dict(figure, value=710)])    # recorded again
        with closing(results_db.connect(self.db)) as connection:
            self.assertEqual([f["value"] for f in results_db.table(connection, "bench_results", build["id"])], [710])

    def test_a_database_of_before_the_benchmark_gains_its_table(self):
        with closing(results_db.connect(self.db, create=True)) as connection:
            connection.execute("DROP TABLE bench_results")
        results_db.write_run(self.db, *run_rows())
        with closing(results_db.connect(self.db)) as connection:
            self.assertEqual(results_db.table(connection, "bench_results"), [])

    def test_statuses_are_kcidb_ones(self):
        with closing(results_db.connect(self.db, create=True)) as connection:
            for tests in ([("s", "BROKEN", 1)], [("s", None, 1)]):
                with self.assertRaises(sqlite3.IntegrityError):
                    results_db.insert_run(connection, *run_rows(tests=tests))
            checkout, build, tests = run_rows()
            with self.assertRaises(sqlite3.IntegrityError):
                results_db.insert_run(connection, checkout, dict(build, status="CRASH"), tests)
            self.assertEqual(results_db.table(connection, "builds"), [])   # nothing half-written

    def test_tables_mirror_kcidb(self):
        with closing(results_db.connect(self.db, create=True)) as connection:
            columns = {table: [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
                       for table in ("checkouts", "builds", "tests")}
        for name in ("id", "origin", "git_commit_hash", "patchset_hash", "start_time"):
            self.assertIn(name, columns["checkouts"])
        for name in ("id", "checkout_id", "architecture", "compiler", "config_name", "start_time", "duration",
                     "status"):
            self.assertIn(name, columns["builds"])
        for name in ("id", "build_id", "path", "status", "start_time", "duration", "log_url", "log_line"):
            self.assertIn(name, columns["tests"])

    def test_missing_database_says_how_to_get_one(self):
        error = quiet_raises(self, ToolError, results_db.connect, self.tmp / "none.sqlite")[0]
        self.assertIn("no results database at", str(error))
        self.assertIn("ktimers.py record", str(error))
        self.assertFalse((self.tmp / "none.sqlite").exists())

    def test_corrupt_database_says_what_to_do(self):
        self.db.parent.mkdir(parents=True)
        self.db.write_bytes(b"this is not sqlite" * 100)
        error = quiet_raises(self, ToolError, results_db.connect, self.db)[0]
        self.assertIn("is not a usable results database", str(error))
        self.assertIn(".broken", str(error))
        error = quiet_raises(self, ToolError, results_db.write_run, self.db, *run_rows())[0]
        self.assertIn("is not a usable results database", str(error))

    def test_some_other_sqlite_file_is_refused(self):
        self.db.parent.mkdir(parents=True)
        with closing(sqlite3.connect(str(self.db))) as connection:
            connection.execute("CREATE TABLE unrelated (x)")
        error = quiet_raises(self, ToolError, results_db.connect, self.db)[0]
        self.assertIn("is not a usable results database", str(error))

    def test_newer_schema_is_refused(self):
        with closing(results_db.connect(self.db, create=True)) as connection:
            connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
            connection.commit()
        error = quiet_raises(self, ToolError, results_db.connect, self.db)[0]
        self.assertIn("schema version 99", str(error))

    def test_path_flag_then_environment_then_results_dir(self):
        self.assertEqual(str(results_db.db_path("x.sqlite", self.tmp)), "x.sqlite")
        self.assertEqual(results_db.db_path(None, self.tmp), self.tmp / "results.sqlite")   # helpers set the env
        del os.environ[results_db.DB_ENV]
        self.assertEqual(results_db.db_path(None, self.tmp / "r"), self.tmp / "r" / "results.sqlite")
        self.assertEqual(results_db.store_dir(self.tmp / "r" / "results.sqlite"), self.tmp / "r" / "store")
