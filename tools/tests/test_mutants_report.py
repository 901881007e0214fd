"""The report of a mutant run (mutants/report.py): score, exit status, table, sections, mutants.json, and
the mutant_results table of the results database (results/db.py)."""

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from helpers import TempDirTestCase, quiet

from mutants import report as mutant_report
from results import db as results_db
from mutants.catalogue import Mutant
from mutants.report import MutantRun, Result

START = 1_796_346_000   # 2026-12-04 01:00 UTC


def mutant(number, name, description="a mutant", **kwargs):
    return Mutant(f"{number:02d}-{name}", number, description, Path(f"mutants/{number:02d}-{name}.patch"), **kwargs)


def results(*statuses):
    return [Result(mutant(number, status), status, ["a.b"] if status == "killed" else [], seconds=60.0)
            for number, status in enumerate(statuses, 1)]


def sample_run():
    run = MutantRun("i386", START, tree_head="1def00b2", series_hash="f" * 64, duration=312.0,
                    baseline=["i386-default"])
    run.results = [
        Result(mutant(1, "forward-off-by-one", "ktimer_forward() treats a timer due right now as not yet due, and "
                      "this description is long"), "killed",
               ["ktimer_user_conv.ktimer_forward_test", "crash", "log: panic", "log: bug"], "", "default", 48.2,
               "build/mutants/01-forward-off-by-one"),
        Result(mutant(2, "rearm", "rearm keeps expired", expect=("ktimer_modes",)), "survived", seconds=75.0,
               results_dir="build/mutants/02-rearm"),
        Result(mutant(3, "no-init", equivalent="always assigned"), "equivalent", detail="always assigned",
               seconds=50.0),
        Result(mutant(4, "stale"), "stale", detail="error: patch failed: kernel/time/ktimer.c:12\n"
                                                   "error: kernel/time/ktimer.c: patch does not apply", seconds=0.1),
        Result(mutant(5, "stillborn"), "stillborn", detail="ktimer.c:9: error: 'x' undeclared", seconds=20.0),
    ]
    return run


class ScoreTest(TempDirTestCase):
    def test_score_leaves_out_what_was_not_judged(self):
        chosen = results("killed", "killed", "survived", "equivalent", "stale", "stillborn", "error", "skipped")
        self.assertEqual(mutant_report.score(chosen), (2, 3))
        self.assertEqual(mutant_report.score_text(chosen), "2/3 killed (66.7%)")
        self.assertEqual(mutant_report.score_text(results("stale")), "no mutant judged")
        self.assertEqual(mutant_report.counts(chosen)["equivalent"], 1)

    def test_exit_status(self):
        self.assertEqual(mutant_report.exit_code(results("killed", "equivalent", "skipped")), 0)
        for bad in ("survived", "stale", "stillborn", "error"):
            self.assertEqual(mutant_report.exit_code(results("killed", bad)), 1, bad)

    def test_progress_text(self):
        result = Result(mutant(12, "forward-off-by-one"), "killed", ["ktimer_user_conv.ktimer_forward_test"],
                        config="default", seconds=48.4)
        self.assertEqual(mutant_report.progress_text(result),
                         "killed by ktimer_user_conv.ktimer_forward_test [default] (48s)")
        self.assertEqual(mutant_report.progress_text(Result(result.mutant, "survived", seconds=61)), "survived (1m01s)")


class ReportTest(TempDirTestCase):
    def test_report_lines(self):
        lines = mutant_report.report_lines(sample_run())
        self.assertEqual(lines[0], "mutants on i386: 5 run (1 killed, 1 survived, 1 equivalent, 1 stale, 1 stillborn) "
                                   "in 5m12s")
        self.assertEqual(lines[1].split(), ["id", "description", "status", "killed", "by", "time"])
        self.assertTrue(lines[2].startswith("---"))
        self.assertEqual(lines[3].split("  ")[0:2], ["01-forward-off-by-one",
                                                     "ktimer_forward() treats a timer due right..."])
        self.assertIn("killed      ktimer_user_conv.ktimer_forward_test, crash, log: panic (+1 more)  48s", lines[3])
        text = "\n".join(lines)
        self.assertIn("survived (no test noticed them: add a test that does, or mark the mutant `Equivalent:` with "
                      "the reason no test can):\n  02-rearm: rearm keeps expired (Expect: ktimer_modes); logs: "
                      "build/mutants/02-rearm/", text)
        self.assertIn("stale (the diff no longer applies to the tree: redo it against the current series):\n"
                      "  04-stale: a mutant\n      error: patch failed: kernel/time/ktimer.c:12\n", text)
        self.assertIn("stillborn (the mutated kernel does not build: fix the mutant):\n  05-stillborn: a mutant\n"
                      "      ktimer.c:9: error: 'x' undeclared", text)
        self.assertIn("equivalent (survived, as their header says they must):\n  03-no-init: a mutant: always assigned",
                      text)
        self.assertEqual(lines[-1], "score: 1/2 killed (50.0%) = killed / (total 5 - equivalent 1 - stale 1 - "
                                    "stillborn 1 - error 0 - skipped 0)")

    def test_an_incomplete_run_says_so(self):
        run = sample_run()
        run.complete = False
        self.assertIn("INCOMPLETE", mutant_report.report_lines(run)[0])

    def test_mutants_json(self):
        path = self.tmp / "results" / "mutants.json"
        mutant_report.write(sample_run(), path)
        data = json.loads(path.read_text())
        self.assertEqual((data["kind"], data["arch"], data["start_time"], data["complete"]),
                         ("mutants", "i386", "2026-12-04T01:00:00+00:00", True))
        self.assertEqual((data["killed"], data["judged"], data["score"]), (1, 2, 0.5))
        self.assertEqual(data["counts"], {"killed": 1, "survived": 1, "equivalent": 1, "stale": 1, "stillborn": 1,
                                          "error": 0, "skipped": 0})
        first = data["mutants"][0]
        self.assertEqual((first["id"], first["status"], first["decided_by"], first["seconds"], first["file"]),
                         ("01-forward-off-by-one", "killed", "default", 48.2, "mutants/01-forward-off-by-one.patch"))
        self.assertEqual(first["killed_by"][:2], ["ktimer_user_conv.ktimer_forward_test", "crash"])
        self.assertEqual(data["mutants"][2]["equivalent"], "always assigned")


class DatabaseTest(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.db = self.tmp / "results" / "results.sqlite"

    def rows(self):
        with closing(results_db.connect(self.db)) as connection:
            return results_db.mutant_results(connection)

    def test_record_and_query(self):
        run = sample_run()
        self.assertTrue(mutant_report.record(run, self.db))
        rows = self.rows()
        self.assertEqual([(row["mutant"], row["status"]) for row in rows],
                         [("01-forward-off-by-one", "killed"), ("02-rearm", "survived"), ("03-no-init", "equivalent"),
                          ("04-stale", "stale"), ("05-stillborn", "stillborn")])
        first = rows[0]
        self.assertEqual((first["run_id"], first["run_time"], first["arch"], first["tree_head"], first["decided_by"]),
                         ("mutants:i386-20261204T010000Z", "2026-12-04T01:00:00+00:00", "i386", "1def00b2", "default"))
        self.assertEqual(first["killed_by"], "ktimer_user_conv.ktimer_forward_test, crash, log: panic, log: bug")
        self.assertIsNone(rows[1]["killed_by"])
        self.assertIn("patch does not apply", rows[3]["detail"])

    def test_the_same_run_again_replaces_its_rows_and_other_runs_stay(self):
        run = sample_run()
        mutant_report.record(run, self.db)
        later = sample_run()
        later.start += 3600
        later.results = later.results[:2]
        mutant_report.record(later, self.db)
        run.results = run.results[:1]
        mutant_report.record(run, self.db)
        with closing(results_db.connect(self.db)) as connection:
            self.assertEqual(len(results_db.mutant_results(connection, "mutants:i386-20261204T010000Z")), 1)
        self.assertEqual(len(self.rows()), 3)

    def test_a_database_from_before_mutant_runs_takes_them(self):
        from test_results_db import run_rows
        results_db.write_run(self.db, *run_rows())
        with closing(sqlite3.connect(self.db)) as connection:
            connection.execute("DROP TABLE mutant_results")
            connection.commit()
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self.assertEqual(tables, {"meta", "checkouts", "builds", "tests", "bench_results"})
        mutant_report.record(sample_run(), self.db)
        self.assertEqual(len(self.rows()), 5)
        with closing(results_db.connect(self.db)) as connection:
            self.assertEqual(len(results_db.runs(connection)), 1)       # the test runs are still there

    def test_an_unusable_database_only_warns(self):
        self.db.parent.mkdir(parents=True)
        self.db.write_text("not a database")
        recorded, _, err = quiet(mutant_report.record, sample_run(), self.db)
        self.assertFalse(recorded)
        self.assertIn("the mutant run was not recorded", err)
