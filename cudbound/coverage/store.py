"""The SQLite store of a coverage study: one row per task, one row per (task, method).

Durability: every task is written in one transaction (its ``tasks`` row and all its
``results`` rows, or nothing), with ``synchronous=FULL``, so a run killed at any moment,
even by SIGKILL, loses at most the tasks still being computed. The primary keys
(dataset, n, rep) and (dataset, n, rep, method) make a duplicate impossible; a rerun
reads the finished tasks and computes only the others.

Several runs may share one store (:mod:`cudbound.coverage.leases`): a run claims a task
before computing it, with a lease (owner, expiry) taken in one ``BEGIN IMMEDIATE``
transaction (:meth:`ResultStore.claim`), renews its leases while it computes, and drops a
claim in the transaction that writes the task's result. A task held by a live lease is left to
its owner; an expired lease, or one whose owner process on this host is dead, is taken over.
Every claim is logged (``claim_log``: owner, time, ``claim`` or ``reclaim``).

Schema versions: 2 adds the tables ``claims`` and ``claim_log`` to version 1; 3 (this one) adds
the nullable result columns ``target``, ``statistic`` and ``pvalue`` (:data:`EXTRA_COLUMNS`, used by
the AUC and comparison studies, ``kind = "auc"``, whose rows are scored against a target of their
own, and whose tests have no interval: their ``low``, ``high``, ``width`` and ``covered`` are NULL).
An older store is read as it is, and upgraded in place (the tables and columns added, nothing
else touched) when it is opened for writing.

The store remembers the study's protocol (:meth:`StudyConfig.protocol`): reopening it
with a configuration that would compute different numbers (another seed, level, loss,
basis or method options) is refused; more repetitions or more data sets are welcome.

Every problem with the file itself is a :class:`StoreError` (a ``ValueError``) whose one-line
message names the file and what to do, raised when the store is opened or used, never an
``sqlite3`` exception: a file that does not exist (:class:`StoreNotFoundError`, also a
``FileNotFoundError``), a missing or read-only directory, a file that cannot be read, a file
that is not a cudbound store (text, random bytes, another program's SQLite database), a
store of another schema version (:class:`StoreVersionError`; checked on every open, with or
without a configuration), a corrupt or locked database, a full disk. A read-only file can
still be opened for reading (``readonly=True``, or by default when no configuration is given).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import quote

from .._deprecation import renamed
from .config import ConfigError, StudyConfig, Task, parse_config

__all__ = ["ResultStore", "StoreError", "StoreNotFoundError", "StoreVersionError", "StoreCorruptError",
           "StoreMismatchError",
           "SCHEMA_VERSION", "RESULT_COLUMNS", "EXTRA_COLUMNS", "coverage_interval"]

SCHEMA_VERSION = "3"
"""The layout this cudbound writes."""

READABLE_VERSIONS = ("1", "2", "3")
"""Layouts this cudbound reads; an older store is upgraded to 3 when opened for writing."""

RESULT_COLUMNS = ("low", "high", "centre", "width", "covered", "seconds", "conservative", "nodes_median",
                  "nodes_total", "solves_total", "not_exact", "half_width", "alpha_n")
"""Numeric columns of ``results`` besides the key; ``details`` holds the rest as JSON."""

EXTRA_COLUMNS = ("target", "statistic", "pvalue")
"""Result columns of schema 3, NULL in an error-rate study: the value the row's interval is scored
against (``covered``), and a test's statistic and p-value."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    dataset TEXT NOT NULL, n INTEGER NOT NULL, rep INTEGER NOT NULL,
    train_error REAL NOT NULL, true_error REAL NOT NULL, test_size INTEGER NOT NULL,
    redraws INTEGER NOT NULL, warnings TEXT NOT NULL, seconds REAL NOT NULL,
    finished TEXT NOT NULL, host TEXT NOT NULL,
    PRIMARY KEY (dataset, n, rep)
);
CREATE TABLE IF NOT EXISTS results (
    dataset TEXT NOT NULL, n INTEGER NOT NULL, rep INTEGER NOT NULL, method TEXT NOT NULL,
    low REAL, high REAL, centre REAL NOT NULL, width REAL,
    covered INTEGER, seconds REAL NOT NULL,
    conservative INTEGER, nodes_median REAL, nodes_total INTEGER, solves_total INTEGER,
    not_exact INTEGER, half_width REAL, alpha_n REAL, details TEXT NOT NULL,
    target REAL, statistic REAL, pvalue REAL,
    PRIMARY KEY (dataset, n, rep, method),
    FOREIGN KEY (dataset, n, rep) REFERENCES tasks (dataset, n, rep)
);
""" + """
CREATE TABLE IF NOT EXISTS claims (
    dataset TEXT NOT NULL, n INTEGER NOT NULL, rep INTEGER NOT NULL,
    owner TEXT NOT NULL, expires REAL NOT NULL,
    PRIMARY KEY (dataset, n, rep)
);
CREATE TABLE IF NOT EXISTS claim_log (
    dataset TEXT NOT NULL, n INTEGER NOT NULL, rep INTEGER NOT NULL,
    owner TEXT NOT NULL, at REAL NOT NULL, event TEXT NOT NULL
);
"""
_UPGRADE = {"1": _SCHEMA, "2": ""}
"""Version -> the statements that bring its tables to SCHEMA_VERSION's (idempotent); the columns of
:data:`EXTRA_COLUMNS` that its ``results`` table lacks are then added (:meth:`ResultStore._upgrade`)."""


class StoreError(ValueError):
    """A result store that cannot be used as asked; the message names the file and what to do."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """No store at the path, and none is to be created (reading only, or no configuration)."""


class StoreVersionError(StoreError):
    """The store was made by a cudbound whose store layout (schema version) this one does not read."""


class StoreCorruptError(StoreError):
    """The file is an SQLite database whose pages or indexes are damaged (``cudbound store check``
    lists the damage)."""


class StoreMismatchError(StoreError):
    """The store holds results of another protocol than the configuration asks for."""


_TABLES = {"meta", "tasks", "results", "claims", "claim_log"}


def _permitted(path, mode) -> bool:
    """``os.access(path, mode)``; one place, so that a test run as root (whom permissions do not
    stop) can simulate a read-only or unreadable file."""
    return os.access(path, mode)


def _diff(old: dict, new: dict, prefix="") -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, "<absent>"), new.get(key, "<absent>")
        if isinstance(a, dict) and isinstance(b, dict):
            out += _diff(a, b, prefix + key + ".")
        elif a != b:
            out.append(f"{prefix}{key}: store has {a!r}, configuration has {b!r}")
    return out



@renamed(level="confidence_level")
def coverage_interval(covered: int, reps: int, confidence_level: float = 0.95) -> tuple:
    """The exact (Clopper-Pearson) interval of a coverage: ``covered`` of ``reps`` repetitions
    (scipy.stats.binomtest, method 'exact'); ``level`` is the old name of ``confidence_level``,
    deprecated."""
    from scipy.stats import binomtest
    ci = binomtest(int(covered), int(reps)).proportion_ci(confidence_level=confidence_level, method="exact")
    return float(ci.low), float(ci.high)


def connect_readonly(path) -> sqlite3.Connection:
    """A read-only SQLite connection to the file at ``path`` (never writes, not even a -shm file
    when the directory is read-only: a WAL database there is read as immutable)."""
    uri = "file:" + quote(str(Path(path).resolve()))
    db = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, timeout=60.0)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        # a WAL database in a read-only directory cannot create its -shm file: read it as immutable
        db.close()
        return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, isolation_level=None)
    except sqlite3.DatabaseError:
        return db          # not a database: the caller's first query says so

class ResultStore:
    """A study's results in an SQLite file (created on first use).

    Parameters
    ----------
    path : str or Path
        The database file.
    config : StudyConfig, optional
        When given, the store is bound to its protocol: a new store records it, an
        existing one must match it (:class:`StoreMismatchError` otherwise). Reading a
        store needs no configuration.
    readonly : bool, optional
        True: open for reading only (nothing is ever written, not even the journal mode;
        works on a read-only file or directory). False: open for writing (a read-only file is
        a :class:`StoreError` now, not at the first write). Default: for writing when a
        configuration is given, else for writing if the file is writable and for reading if not.

    Raises
    ------
    StoreError
        The file cannot be used (module docstring); :class:`StoreNotFoundError`,
        :class:`StoreVersionError` and :class:`StoreMismatchError` are the special cases.
    """

    def __init__(self, path: str | os.PathLike[str], config: StudyConfig | None = None, *,
                 readonly: bool | None = None):
        self.path = Path(path)
        if readonly and config is not None:
            raise ValueError("a configuration binds a store for writing; open it with readonly=False.")
        if readonly is None:
            readonly = config is None and self.path.is_file() and not self._writable()[0]
        self.readonly = bool(readonly)
        self.schema = SCHEMA_VERSION
        self._db: sqlite3.Connection = None  # type: ignore[assignment]  # connected by _open() below
        new = self._open(create=config is not None)
        try:
            if not self.readonly:
                with self._guard("set up"):
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute("PRAGMA synchronous=FULL")
                    self._db.execute("PRAGMA foreign_keys=ON")
                    if new:
                        self._db.executescript(_SCHEMA)
                    else:
                        self._upgrade()
            if config is not None:
                self._bind(config)
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- opening
    def _where(self) -> str:
        return f"the result store '{self.path}'"

    def _writable(self) -> tuple[bool, str]:
        """(True, "") if the file and its directory (SQLite writes its journal there) allow writing,
        else (False, why)."""
        if self.path.exists() and not _permitted(self.path, os.W_OK):
            return False, "the file is read-only"
        parent = self.path.parent
        if not _permitted(parent, os.W_OK | os.X_OK):
            return False, f"its directory '{parent}' is read-only, and SQLite keeps its journal there"
        return True, ""

    def _open(self, create: bool) -> bool:
        """Connect and recognise the file; True when it is a new (empty) store to set up."""
        p, parent = self.path, self.path.parent
        if not p.exists():
            if not create or self.readonly:
                raise StoreNotFoundError(f"no result store at '{p}': the file does not exist. Check the path; "
                                         f"`cudbound coverage --config FILE.toml --store {p}` creates it.")
            if not parent.is_dir():
                raise StoreError(f"cannot create the result store '{p}': the directory '{parent}' does not exist. "
                                 f"Create it first (mkdir -p '{parent}') or choose another --store path.")
            if not _permitted(parent, os.W_OK | os.X_OK):
                raise StoreError(f"cannot create the result store '{p}': the directory '{parent}' is not "
                                 f"writable. Choose a --store path in a writable directory.")
        elif p.is_dir():
            raise StoreError(f"'{p}' is a directory, not a result store file; give the path of the .sqlite file.")
        elif not _permitted(p, os.R_OK):
            raise StoreError(f"cannot read the result store '{p}': permission denied. Make it readable "
                             f"(chmod u+r '{p}') or run as its owner.")
        elif not self.readonly:
            ok, why = self._writable()
            if not ok:
                raise StoreError(f"cannot write to {self._where()}: {why}. A run writes to it: make it writable "
                                 f"(chmod u+w), or copy it to a writable place; `cudbound store check` and "
                                 f"`cudbound store export` read it as it is.")
        try:
            if self.readonly:
                self._db = self._connect_readonly()
            else:
                self._db = sqlite3.connect(p, isolation_level=None, timeout=60.0)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self._where()}: {exc}.") from None
        return self._recognise(create)

    def _connect_readonly(self):
        return connect_readonly(self.path)

    def _recognise(self, create: bool) -> bool:
        """Is the file a cudbound store of this schema version? True if it is empty (a new store)."""
        try:
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            meta = dict(self._db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
            fresh = (tables <= _TABLES and not meta
                     and ("tasks" not in tables or self._db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0] == 0))
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "encrypted" in str(exc):
                raise StoreError(f"'{self.path}' is not a cudbound result store (SQLite: {exc}); check the path, "
                                 f"or move the file away to start a new store there.") from None
            raise StoreCorruptError(f"{self._where()} is corrupt (SQLite: {exc}); `cudbound store check {self.path}` "
                             f"lists the damage. Rerun the study into a new --store file (with --chunks, its "
                             f"committed chunks are not recomputed).") from None
        if fresh:
            if not create:
                what = ("an empty file" if self.path.stat().st_size == 0 else
                        "an empty SQLite database" if not tables else "a cudbound store that holds no study yet")
                raise StoreError(f"'{self.path}' is {what}, not a result store with a study; a run "
                                 f"(`cudbound coverage --config FILE.toml --store {self.path}`) fills it.")
            return True
        if "schema" not in meta:
            listed = ", ".join(sorted(tables)) or "none"
            raise StoreError(f"'{self.path}' is an SQLite database of another program (tables: {listed}), not a "
                             f"cudbound result store; choose another --store file.")
        if meta["schema"] not in READABLE_VERSIONS:
            raise StoreVersionError(
                f"{self._where()} has schema version {meta['schema']}, but this cudbound reads schema versions "
                f"{', '.join(READABLE_VERSIONS[:-1])} and {READABLE_VERSIONS[-1]} (and writes {SCHEMA_VERSION}); open it with the cudbound release "
                f"that made it, or use a new --store file.")
        self.schema = meta["schema"]
        return False

    def _upgrade(self) -> None:
        """Bring an older readable layout to SCHEMA_VERSION, in one transaction."""
        version = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if version is None or version[0] == SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # read again inside the write lock: another run sharing the store may have upgraded it
            # meanwhile (ALTER TABLE ADD COLUMN is not idempotent)
            version = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if version[0] == SCHEMA_VERSION:
                self._db.execute("COMMIT")
                self.schema = SCHEMA_VERSION
                return
            for statement in _UPGRADE[version[0]].split(";"):
                if statement.strip():
                    self._db.execute(statement)
            have = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
            for column in EXTRA_COLUMNS:
                if column not in have:
                    self._db.execute(f"ALTER TABLE results ADD COLUMN {column} REAL")
            self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('upgraded', ?)",
                             (f"from schema {version[0]} on {time.strftime('%Y-%m-%d %H:%M:%S %z')}",))
            self._db.execute("COMMIT")
            self.schema = SCHEMA_VERSION
        except BaseException:
            self._rollback()
            raise

    @contextlib.contextmanager
    def _guard(self, doing: str):
        """Turn an sqlite3 error into a one-line StoreError naming the file and what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc)
            corrupt = False
            if "locked" in text or "busy" in text:
                why = ("it is locked by another process (waited 60 s); wait for that process to finish, or use "
                       "another --store file")
            elif "readonly" in text or "read-only" in text:
                why = "it is read-only; make the file and its directory writable, or copy it to a writable place"
            elif "disk is full" in text or "disk I/O" in text:
                why = f"SQLite: {text}; free disk space (or fix the disk) and rerun: finished tasks are kept"
            elif "malformed" in text or "not a database" in text or "corrupt" in text:
                corrupt = True
                why = (f"it is corrupt (SQLite: {text}); `cudbound store check {self.path}` lists the damage; "
                       f"rerun the study into a new --store file")
            else:
                why = f"SQLite: {text}"
            raise (StoreCorruptError if corrupt else StoreError)(
                f"{self._where()} could not be {doing}: {why}.") from None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None  # type: ignore[assignment]  # closed: no method may be called any more

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rollback(self) -> None:
        if self._db is not None and self._db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")

    # ---------------------------------------------------------------- protocol
    def meta(self) -> dict:
        with self._guard("read (meta table)"):
            return dict(self._db.execute("SELECT key, value FROM meta"))

    def config(self) -> StudyConfig:
        """The configuration the store was created with (its text is kept in the meta table, key
        ``config``), parsed again; a StoreError if it no longer gives the store's protocol."""
        meta = self.meta()
        source = f"{self.path} (meta 'config')"
        try:
            config = parse_config(meta["config"], source=source)
        except (KeyError, ConfigError) as exc:
            raise StoreError(f"the configuration kept in {self._where()} cannot be read again ({exc}); pass the "
                             f"study's configuration file explicitly (--config).") from None
        if json.loads(json.dumps(config.protocol(), sort_keys=True)) != json.loads(meta["protocol"]):
            raise StoreError(f"the configuration kept in {self._where()} gives another protocol under this cudbound "
                             f"than the one its results were made under; pass the study's configuration file "
                             f"explicitly (--config).")
        return config

    def _mismatch(self, stored: str, protocol: str) -> StoreMismatchError:
        diffs = _diff(json.loads(stored), json.loads(protocol))
        return StoreMismatchError(
            f"the store '{self.path}' holds results of another protocol; rerunning would mix "
            f"incomparable numbers. Differences: {'; '.join(diffs)}. Use a new --store file, or restore "
            f"the configuration (its original text is in the store's meta table, key 'config').")

    def check_protocol(self, config: StudyConfig) -> None:
        """:class:`StoreMismatchError` unless the store's results were made under ``config``'s protocol
        (the check a run makes on opening, here without writing anything)."""
        protocol = json.dumps(config.protocol(), sort_keys=True)
        stored = self.meta()["protocol"]
        if stored != protocol:
            raise self._mismatch(stored, protocol)

    def _bind(self, config: StudyConfig) -> None:
        protocol = json.dumps(config.protocol(), sort_keys=True)
        with self._guard("bound to the study's protocol"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                meta = dict(self._db.execute("SELECT key, value FROM meta"))
                if "protocol" not in meta:
                    for key, value in (("schema", SCHEMA_VERSION), ("protocol", protocol), ("study", config.name),
                                       ("config", config.source), ("created", time.strftime("%Y-%m-%d %H:%M:%S %z"))):
                        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
                elif meta["protocol"] != protocol:
                    raise self._mismatch(meta["protocol"], protocol)
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    # ---------------------------------------------------------------- writing
    def finished(self) -> set[Task]:
        """The tasks already in the store."""
        with self._guard("read (finished tasks)"):
            return {Task(d, n, r) for d, n, r in self._db.execute("SELECT dataset, n, rep FROM tasks")}

    def write(self, result: dict) -> bool:
        """Write one task's result in one transaction, and drop its claim; False if the task was
        already stored (by this or another run)."""
        return self.write_many([result]) == 1

    def write_many(self, results: Iterable[dict]) -> int:
        """Write several tasks' results in one transaction (all or none), dropping their claims;
        returns how many were new (a task already stored is left as it is).

        One transaction, so one flush to disk: loading a study's chunk files (30,000 tasks) a task
        at a time would wait for as many synchronous commits (minutes)."""
        results = list(results)
        if not results:
            return 0
        keys = [(r["dataset"], int(r["n"]), int(r["rep"])) for r in results]
        if self.readonly:
            raise StoreError(f"{self._where()} was opened for reading only; cannot write task {keys[0]}.")
        what = f"task {keys[0]}" if len(keys) == 1 else f"{len(keys)} tasks, from {keys[0]}"
        with self._guard(f"written ({what})"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                added = sum(self._insert(key, result) for key, result in zip(keys, results))
                self._db.execute("COMMIT")
                return added
            except BaseException:
                self._rollback()
                raise

    def _insert(self, key: tuple, result: dict) -> bool:
        """Inside a transaction: the task's row and its results rows, unless it is stored already."""
        cur = self._db.execute(
            "INSERT OR IGNORE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            key + (result["train_error"], result["true_error"], result["test_size"], result["redraws"],
                   json.dumps(result.get("warnings", [])), result["seconds"],
                   time.strftime("%Y-%m-%d %H:%M:%S"), result.get("host", socket.gethostname())))
        self._db.execute("DELETE FROM claims WHERE dataset = ? AND n = ? AND rep = ?", key)
        if cur.rowcount == 0:
            return False
        for row in result["rows"]:
            columns = RESULT_COLUMNS + EXTRA_COLUMNS
            values = [row.get(c) for c in columns]
            self._db.execute(
                f"INSERT INTO results (dataset, n, rep, method, {', '.join(columns)}, details) "
                f"VALUES ({', '.join('?' * (5 + len(columns)))})",
                key + (row["method"], *values, json.dumps(row.get("details", {}), sort_keys=True)))
        return True

    # ---------------------------------------------------------------- leases
    def claim(self, candidates: Iterable[Task], owner: str, lease: float, limit: int,
              gone: Callable[[str], bool] | None = None) -> dict:
        """Claim up to ``limit`` of ``candidates`` (Tasks, in order) for ``owner`` in one transaction.

        A candidate is claimed when it is not finished and not held by a live lease of another
        owner: unclaimed, held by ``owner`` already (renewed), expired, or held by an owner for
        which ``gone(owner)`` is true (a dead process). The claim expires ``lease`` seconds from
        now unless renewed (:meth:`renew`). Returns ``{"claimed": [...], "held": [...],
        "done": [...], "rest": [...]}``: the tasks claimed, those held by others, those
        finished, and those not examined because ``limit`` was reached.
        """
        out: dict[str, list[Task]] = {"claimed": [], "held": [], "done": [], "rest": []}
        candidates = list(candidates)
        if gone is not None:
            gone = functools.lru_cache(maxsize=None)(gone)   # one answer per owner in this transaction
        with self._guard("written (claiming tasks)"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                for i, task in enumerate(candidates):
                    if len(out["claimed"]) >= limit:
                        out["rest"] = candidates[i:]
                        break
                    key = (task.dataset, task.n, task.rep)
                    if self._db.execute("SELECT 1 FROM tasks WHERE dataset = ? AND n = ? AND rep = ?",
                                        key).fetchone():
                        out["done"].append(task)
                        continue
                    row = self._db.execute("SELECT owner, expires FROM claims WHERE dataset = ? AND n = ? "
                                           "AND rep = ?", key).fetchone()
                    if row is not None and row[0] != owner and row[1] >= now and not (gone and gone(row[0])):
                        out["held"].append(task)
                        continue
                    self._db.execute("INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                                     key + (owner, now + lease))
                    if row is None or row[0] != owner:
                        self._db.execute("INSERT INTO claim_log VALUES (?, ?, ?, ?, ?, ?)",
                                         key + (owner, now, "claim" if row is None else "reclaim"))
                    out["claimed"].append(task)
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        return out

    def renew(self, owner: str, lease: float) -> int:
        """Extend every lease of ``owner`` to ``lease`` seconds from now; the number renewed."""
        with self._guard("written (renewing leases)"):
            cur = self._db.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease, owner))
            return cur.rowcount

    def release(self, owner: str) -> int:
        """Drop every claim of ``owner`` (a run that stops leaves its unfinished tasks to others)."""
        with self._guard("written (releasing claims)"):
            return self._db.execute("DELETE FROM claims WHERE owner = ?", (owner,)).rowcount

    def claims(self) -> list[dict]:
        """The current claims (empty for a version-1 store)."""
        return self._query("SELECT * FROM claims ORDER BY dataset, n, rep") if self.schema != "1" else []

    def claim_log(self) -> list[dict]:
        """Every claim ever taken, in order (empty for a version-1 store)."""
        return self._query("SELECT * FROM claim_log ORDER BY rowid") if self.schema != "1" else []

    # ---------------------------------------------------------------- reading
    def _query(self, sql, args=()) -> list[dict]:
        with self._guard("read"):
            cur = self._db.execute(sql, args)
            names = [c[0] for c in cur.description]
            return [dict(zip(names, row)) for row in cur]

    def _scalar(self, sql, args=()):
        with self._guard("read"):
            return self._db.execute(sql, args).fetchone()[0]

    def tasks(self) -> list[dict]:
        """Every stored task row, ordered by (dataset, n, rep)."""
        return self._query("SELECT * FROM tasks ORDER BY dataset, n, rep")

    def results(self, *, method: str | None = None) -> list[dict]:
        """Every stored result row (joined with its task's true error), ordered by key."""
        sql = ("SELECT r.*, t.true_error, t.train_error FROM results r JOIN tasks t USING (dataset, n, rep)"
               + (" WHERE r.method = ?" if method else "") + " ORDER BY r.dataset, r.n, r.rep, r.method")
        return self._query(sql, (method,) if method else ())

    def summary(self) -> list[dict]:
        """Coverage and mean width per (data set, n, method), with a binomial standard error.

        ``covered`` counts the repetitions whose interval contains the true error (an AUC study's
        rows: their target) and ``coverage`` = covered / reps; ``coverage_se`` = sqrt(c (1 - c) / reps).
        Rows without an interval (an AUC study's estimates and tests) have no coverage and are left out.
        """
        rows = self._query(
            "SELECT dataset, n, method, COUNT(*) AS reps, SUM(covered) AS covered, AVG(covered) AS coverage, "
            "AVG(width) AS mean_width, "
            "AVG(seconds) AS mean_seconds, SUM(COALESCE(conservative, 0)) AS conservative "
            "FROM results WHERE covered IS NOT NULL GROUP BY dataset, n, method ORDER BY dataset, n, method")
        for r in rows:
            c, k = r["coverage"], r["reps"]
            r["coverage_se"] = math.sqrt(c * (1 - c) / k) if k else float("nan")
        return rows
