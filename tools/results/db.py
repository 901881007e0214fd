"""The results database: every run in SQLite, in tables that mirror KCIDB v4.

    checkouts   the source tested: the Debian kernel package plus the ktimers series
    builds      one row per run (KUnit, guest selftests, benchmark boots): arch,
                configuration, compiler, times, the build's status and the run's verdict
    tests       one row per suite, case and parameter (path suite.case.param) with its
                KCIDB status and the line of its KTAP result in the stored console log
    bench_results  one row per figure a benchmark boot printed (`make bench`): workload,
                API, n, metric, value; figures, never pass or fail (not part of KCIDB)
    mutant_results  one row per mutant of a `make mutants` run: its status (killed, survived,
                ...) and what killed it (not part of KCIDB; docs/mutants.md)

The database lives at build/results/results.sqlite unless $KTIMERS_RESULTS_DB or
--db says otherwise; the logs of each run are copied next to it under store/<run>/
and the database refers to them by paths relative to its own directory, so the
directory can be moved or archived as a whole. docs/results.md documents the columns
and shows sqlite3 queries.
"""

import json
import os
import sqlite3
from contextlib import closing, contextmanager
from pathlib import Path

from common import RESULTS_DIR, ToolError, rel

DB_ENV = "KTIMERS_RESULTS_DB"
DB_NAME = "results.sqlite"
STORE_NAME = "store"
SCHEMA_VERSION = 1
ORIGIN = "ktimers"
TEST_STATUSES = ("PASS", "FAIL", "SKIP", "ERROR", "MISS", "DONE")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE IF NOT EXISTS checkouts (
    id                    TEXT PRIMARY KEY,  -- 'ktimers:' + tree head (or series hash)
    origin                TEXT NOT NULL,
    tree_name             TEXT,              -- the Debian source package, linux-source-6.12
    git_commit_hash       TEXT,              -- head of branch ktimers in build/linux (series applied)
    git_repository_branch TEXT,
    patchset_hash         TEXT,              -- series hash (ktimers.py apply --hash)
    base_version          TEXT,              -- upstream kernel version, 6.12.118
    package_version       TEXT,              -- Debian package version, 6.12.118-1~deb12u1
    start_time            TEXT,              -- first run of this checkout
    valid                 INTEGER,
    misc                  TEXT               -- JSON
);
CREATE TABLE IF NOT EXISTS builds (
    id             TEXT PRIMARY KEY,         -- 'ktimers:<arch>-<config>-<UTC start>'
    checkout_id    TEXT NOT NULL REFERENCES checkouts(id),
    origin         TEXT NOT NULL,
    architecture   TEXT NOT NULL,
    config_name    TEXT NOT NULL,            -- configuration of kunit_configs/matrix, or 'selftests'
    kind           TEXT NOT NULL,            -- kunit | selftests | bench (make report leaves bench out)
    compiler       TEXT,
    kernel_version TEXT,                     -- release of the booted kernel (uname -r)
    start_time     TEXT NOT NULL,            -- ISO 8601, UTC
    duration       REAL,                     -- seconds spent building the kernel; NULL if only booted
    run_duration   REAL,                     -- seconds for the whole run
    status         TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'ERROR')),  -- FAIL: build/config error
    run_status     TEXT NOT NULL,            -- the run's verdict: PASS FAIL CRASH TIMEOUT BUILD_ERROR ...
    command        TEXT,
    log_url        TEXT,                     -- build log, relative to the database's directory
    console_url    TEXT,                     -- console log (KTAP), relative to the database's directory
    environment    TEXT,                     -- JSON {comment, misc}: QEMU -smp, kernel arguments
    comment        TEXT,
    misc           TEXT                      -- JSON: counts, problems, findings, mode, ...
);
CREATE TABLE IF NOT EXISTS tests (
    id          TEXT PRIMARY KEY,            -- '<build id>:<path>'
    build_id    TEXT NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
    origin      TEXT NOT NULL,
    path        TEXT NOT NULL,               -- suite.case.param, KCIDB characters only
    name        TEXT,                        -- the last component as the test printed it
    status      TEXT NOT NULL CHECK (status IN ('PASS', 'FAIL', 'SKIP', 'ERROR', 'MISS', 'DONE')),
    start_time  TEXT,
    duration    REAL,                        -- seconds, when the log has timestamps
    log_url     TEXT,                        -- console log, relative to the database's directory
    log_line    INTEGER,                     -- line of the test's KTAP result (or first output) in it
    log_excerpt TEXT,                        -- diagnostic lines of a test that did not pass
    comment     TEXT,
    misc        TEXT                         -- JSON
);
CREATE TABLE IF NOT EXISTS bench_results (
    build_id    TEXT NOT NULL REFERENCES builds(id) ON DELETE CASCADE,   -- the boot that printed it
    engine      TEXT,                        -- the begin line's engine: highres | lowres
    workload    TEXT NOT NULL,               -- start_stop modify expiry latency; 'size' for the size lines
    api         TEXT NOT NULL,               -- ktimer hrtimer hrtimer_soft timer_list
    n           INTEGER,                     -- timers queued (NULL for sizes)
    metric      TEXT NOT NULL,               -- median_ns p99_ns callbacks_per_s fired ...; 'skipped'
    value       REAL,                        -- NULL when skipped or not measurable (percpu_bytes=-1)
    note        TEXT,                        -- the skip reason; 'not measurable'
    log_line    INTEGER                      -- line of the ktimer_bench line in the stored console
);
CREATE TABLE IF NOT EXISTS mutant_results (
    run_id      TEXT NOT NULL,               -- 'mutants:<arch>-<UTC start>': one `make mutants` run
    run_time    TEXT NOT NULL,               -- the run's start, ISO 8601, UTC
    tree_head   TEXT,                        -- head of branch ktimers in build/linux (unmutated)
    series_hash TEXT,                        -- series hash (ktimers.py apply --hash)
    arch        TEXT NOT NULL,
    mutant      TEXT NOT NULL,               -- the catalogue file without .patch: 12-forward-off-by-one
    description TEXT,                        -- its Mutant: header
    status      TEXT NOT NULL,               -- killed survived equivalent stale stillborn error skipped
    killed_by   TEXT,                        -- what noticed it, comma-separated: suite.case, crash, timeout,
                                             -- log: <finding kind>, user: <program>
    decided_by  TEXT,                        -- the configuration (or 'user') whose run decided the status
    seconds     REAL,                        -- apply, build, boots and restore
    detail      TEXT,                        -- git's message (stale), the compiler's (stillborn), the reason
    PRIMARY KEY (run_id, mutant)
);
CREATE INDEX IF NOT EXISTS tests_by_build ON tests(build_id, path);
CREATE INDEX IF NOT EXISTS bench_by_build ON bench_results(build_id, workload, api, n);
CREATE INDEX IF NOT EXISTS builds_by_run ON builds(architecture, config_name, start_time);
"""

# Runs recorded for their figures, not for pass or fail: make report and make baseline leave them out.
FIGURE_KINDS = ("bench",)


def _declared_columns():
    """{table: its columns, in order} as SCHEMA declares them, so the column lists are written once."""
    with closing(sqlite3.connect(":memory:")) as memory:
        memory.executescript(SCHEMA)
        tables = [name for (name,) in memory.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: tuple(row[1] for row in memory.execute(f"PRAGMA table_info({table})")) for table in tables}


COLUMNS = _declared_columns()


def db_path(flag=None, results_dir=RESULTS_DIR):
    """--db, else $KTIMERS_RESULTS_DB, else <results dir>/results.sqlite."""
    return Path(flag or os.environ.get(DB_ENV) or Path(results_dir) / DB_NAME)


def store_dir(path):
    """Where the logs of the runs recorded in the database at `path` are kept."""
    return Path(path).parent / STORE_NAME


def _bad_database(path, error):
    return ToolError(f"{rel(path)} is not a usable results database ({error})",
                     f"move it away (mv {rel(path)} {rel(path)}.broken) and record the runs again: "
                     "`python3 tools/ktimers.py record` imports build/results/*/results.json")


def connect(path, create=False):
    """Open the database; create=True makes it (and its tables) when missing.

    Problems a user can hit (no database yet, a file that is not SQLite, a database
    written by a newer version of these tools) become ToolErrors that say what to do."""
    path = Path(path)
    if not create and not path.is_file():
        raise ToolError(f"no results database at {rel(path)}",
                        "run the tests first (`make test`, `make kunit`), or import existing results with "
                        "`python3 tools/ktimers.py record`; --db or $KTIMERS_RESULTS_DB pick another file")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = sqlite3.connect(str(path))
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA foreign_keys = ON")
        if create:
            connection.executescript(SCHEMA)
            connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            connection.commit()
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as error:
        raise _bad_database(path, error) from None
    if row is None:
        connection.close()
        raise _bad_database(path, "no schema version")
    if int(row["value"]) > SCHEMA_VERSION:
        connection.close()
        raise ToolError(f"{rel(path)} has schema version {row['value']}, newer than these tools "
                        f"({SCHEMA_VERSION})", "update this checkout, or point --db at another database")
    return connection


def _insert(connection, table, rows, verb="INSERT OR REPLACE", upsert=""):
    """Add rows (dicts; a column a row lacks is NULL) to a table, all of its columns."""
    columns = COLUMNS[table]
    connection.executemany(f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                           + upsert, [[row.get(column) for column in columns] for row in rows])


def _merge_checkout(connection, checkout):
    """A checkout seen again (another run of the same tree) keeps what it knew and learns what it did not;
    its start_time is its earliest run's."""
    updates = ", ".join(f"{column} = COALESCE(checkouts.{column}, excluded.{column})"
                        for column in COLUMNS["checkouts"] if column not in ("id", "start_time"))
    _insert(connection, "checkouts", [checkout], "INSERT",
            f" ON CONFLICT(id) DO UPDATE SET {updates}, "
            "start_time = MIN(COALESCE(checkouts.start_time, excluded.start_time), "
            "COALESCE(excluded.start_time, checkouts.start_time))")


def insert_run(connection, checkout, build, tests, bench=()):
    """Add one run; the same build id again replaces the earlier record of it (re-recording is safe)."""
    with connection:
        _merge_checkout(connection, checkout)
        connection.execute("DELETE FROM tests WHERE build_id = ?", (build["id"],))
        connection.execute("DELETE FROM bench_results WHERE build_id = ?", (build["id"],))
        _insert(connection, "builds", [build])
        _insert(connection, "tests", tests)
        _insert(connection, "bench_results", bench)


@contextmanager
def _writing(path):
    """A connection to the database at path (created when missing) that commits at the end; a write the
    file refuses (sqlite3.DatabaseError) becomes the ToolError of a broken database."""
    with closing(connect(path, create=True)) as connection:
        try:
            with connection:
                yield connection
        except sqlite3.DatabaseError as error:
            raise _bad_database(path, error) from None


def write_run(path, checkout, build, tests, bench=()):
    with _writing(path) as connection:
        insert_run(connection, checkout, build, tests, bench)


def write_mutant_results(path, rows):
    """Add the rows of one mutant run (mutants/report.py's db_rows); the same run again replaces its rows.

    The table is created on the way (CREATE TABLE IF NOT EXISTS), so a database written before
    mutant runs existed takes them too."""
    with _writing(path) as connection:
        for run_id in dict.fromkeys(row["run_id"] for row in rows):
            connection.execute("DELETE FROM mutant_results WHERE run_id = ?", (run_id,))
        _insert(connection, "mutant_results", rows)


# ---- queries ------------------------------------------------------------------------

def decoded(row):
    """A row as a dict, with the JSON columns parsed."""
    data = dict(row)
    for key in ("misc", "environment"):
        if isinstance(data.get(key), str):
            try:
                data[key] = json.loads(data[key])
            except ValueError:
                data[key] = {}
    return data


def query(connection, sql, params=()):
    try:
        return [decoded(row) for row in connection.execute(sql, params)]
    except sqlite3.DatabaseError as error:
        raise ToolError(f"the results database cannot be read ({error})",
                        "move it away and record the runs again (`python3 tools/ktimers.py record`)") from None


def runs(connection, arch=None, config=None, kinds=None):
    """Builds joined with their checkout, oldest first; optionally of one arch and configuration.

    kinds: the kinds of run to list; by default every kind but the benchmark boots (FIGURE_KINDS),
    which are recorded for their figures and have no place in pass/fail comparisons."""
    condition, params = _kind_filter(kinds)
    where = [condition]
    for column, value in (("architecture", arch), ("config_name", config)):
        if value:
            where.append(f"b.{column} = ?")
            params.append(value)
    return query(connection, "SELECT b.*, c.patchset_hash, c.git_commit_hash, c.package_version, c.base_version "
                             f"FROM builds b JOIN checkouts c ON c.id = b.checkout_id WHERE {' AND '.join(where)} "
                             "ORDER BY b.start_time, b.id", params)


def _kind_filter(kinds):
    """(SQL condition on b.kind, parameters): one of kinds, or (kinds None) not a figures-only kind."""
    listed = FIGURE_KINDS if kinds is None else tuple(kinds)
    return f"b.kind {'NOT IN' if kinds is None else 'IN'} ({', '.join('?' * len(listed))})", list(listed)


def labels(connection, kinds=None):
    """(arch, config) pairs that have runs (of these kinds; default: all but the benchmark boots)."""
    condition, params = _kind_filter(kinds)
    return [(row["architecture"], row["config_name"]) for row in
            query(connection, f"SELECT DISTINCT architecture, config_name FROM builds b WHERE {condition} "
                              "ORDER BY 1, 2", params)]


def mutant_results(connection, run_id=None):
    """The rows of mutant runs (of one run), oldest run first, each run in catalogue order."""
    where, params = (" WHERE run_id = ?", (run_id,)) if run_id else ("", ())
    return query(connection, f"SELECT * FROM mutant_results{where} ORDER BY run_time, run_id, rowid", params)


def table(connection, name, build_id=None):
    """A table's rows in the order they were added; with build_id, only that run's (tests, bench_results)."""
    where, params = (" WHERE build_id = ?", (build_id,)) if build_id else ("", ())
    return query(connection, f"SELECT * FROM {name}{where} ORDER BY rowid", params)
