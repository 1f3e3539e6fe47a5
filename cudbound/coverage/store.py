"""The SQLite store of a coverage study: one row per task, one row per (task, method).

Durability: every task is written in one transaction (its ``tasks`` row and all its
``results`` rows, or nothing), with ``synchronous=FULL``, so a run killed at any moment,
even by SIGKILL, loses at most the tasks still being computed. The primary keys
(dataset, n, rep) and (dataset, n, rep, method) make a duplicate impossible; a rerun
reads the finished tasks and computes only the others.

The store remembers the study's protocol (:meth:`StudyConfig.protocol`): reopening it
with a configuration that would compute different numbers (another seed, level, loss,
basis or method options) is refused; more repetitions or more data sets are welcome.
"""
from __future__ import annotations

import json
import math
import socket
import sqlite3
import time
from pathlib import Path

from .config import StudyConfig, Task

__all__ = ["ResultStore", "StoreMismatchError", "SCHEMA_VERSION", "RESULT_COLUMNS"]

SCHEMA_VERSION = "1"

RESULT_COLUMNS = ("low", "high", "centre", "width", "covered", "seconds", "conservative", "nodes_median",
                  "nodes_total", "solves_total", "not_exact", "half_width", "alpha_n")
"""Numeric columns of ``results`` besides the key; ``details`` holds the rest as JSON."""

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
    low REAL NOT NULL, high REAL NOT NULL, centre REAL NOT NULL, width REAL NOT NULL,
    covered INTEGER NOT NULL, seconds REAL NOT NULL,
    conservative INTEGER, nodes_median REAL, nodes_total INTEGER, solves_total INTEGER,
    not_exact INTEGER, half_width REAL, alpha_n REAL, details TEXT NOT NULL,
    PRIMARY KEY (dataset, n, rep, method),
    FOREIGN KEY (dataset, n, rep) REFERENCES tasks (dataset, n, rep)
);
"""


class StoreMismatchError(ValueError):
    """The store holds results of another protocol than the configuration asks for."""


def _diff(old: dict, new: dict, prefix="") -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key, "<absent>"), new.get(key, "<absent>")
        if isinstance(a, dict) and isinstance(b, dict):
            out += _diff(a, b, prefix + key + ".")
        elif a != b:
            out.append(f"{prefix}{key}: store has {a!r}, configuration has {b!r}")
    return out


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
    """

    def __init__(self, path, config: StudyConfig | None = None):
        self.path = Path(path)
        if config is None and not self.path.exists():
            raise FileNotFoundError(f"no result store at {str(self.path)!r}.")
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        if config is not None:
            self._bind(config)

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- protocol
    def meta(self) -> dict:
        return dict(self._db.execute("SELECT key, value FROM meta"))

    def _bind(self, config: StudyConfig) -> None:
        protocol = json.dumps(config.protocol(), sort_keys=True)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            meta = self.meta()
            if "protocol" not in meta:
                for key, value in (("schema", SCHEMA_VERSION), ("protocol", protocol), ("study", config.name),
                                   ("config", config.source), ("created", time.strftime("%Y-%m-%d %H:%M:%S %z"))):
                    self._db.execute("INSERT INTO meta VALUES (?, ?)", (key, value))
            elif meta["protocol"] != protocol:
                diffs = _diff(json.loads(meta["protocol"]), json.loads(protocol))
                raise StoreMismatchError(
                    f"the store {str(self.path)!r} holds results of another protocol; rerunning would mix "
                    f"incomparable numbers. Differences: {'; '.join(diffs)}. Use a new --store file, or restore "
                    f"the configuration (its original text is in the store's meta table, key 'config').")
            elif meta.get("schema") != SCHEMA_VERSION:
                raise StoreMismatchError(f"the store has schema version {meta.get('schema')}, this cudbound writes "
                                         f"{SCHEMA_VERSION}.")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # ---------------------------------------------------------------- writing
    def finished(self) -> set[Task]:
        """The tasks already in the store."""
        return {Task(d, n, r) for d, n, r in self._db.execute("SELECT dataset, n, rep FROM tasks")}

    def write(self, result: dict) -> bool:
        """Write one task's result in one transaction; False if the task was already stored."""
        key = (result["dataset"], int(result["n"]), int(result["rep"]))
        self._db.execute("BEGIN IMMEDIATE")
        try:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                key + (result["train_error"], result["true_error"], result["test_size"], result["redraws"],
                       json.dumps(result.get("warnings", [])), result["seconds"],
                       time.strftime("%Y-%m-%d %H:%M:%S"), result.get("host", socket.gethostname())))
            if cur.rowcount == 0:
                self._db.execute("ROLLBACK")
                return False
            for row in result["rows"]:
                values = [row.get(c) for c in RESULT_COLUMNS]
                self._db.execute(
                    f"INSERT INTO results (dataset, n, rep, method, {', '.join(RESULT_COLUMNS)}, details) "
                    f"VALUES ({', '.join('?' * (5 + len(RESULT_COLUMNS)))})",
                    key + (row["method"], *values, json.dumps(row.get("details", {}), sort_keys=True)))
            self._db.execute("COMMIT")
            return True
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    # ---------------------------------------------------------------- reading
    def _query(self, sql, args=()) -> list[dict]:
        cur = self._db.execute(sql, args)
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def tasks(self) -> list[dict]:
        """Every stored task row, ordered by (dataset, n, rep)."""
        return self._query("SELECT * FROM tasks ORDER BY dataset, n, rep")

    def results(self, *, method=None) -> list[dict]:
        """Every stored result row (joined with its task's true error), ordered by key."""
        sql = ("SELECT r.*, t.true_error, t.train_error FROM results r JOIN tasks t USING (dataset, n, rep)"
               + (" WHERE r.method = ?" if method else "") + " ORDER BY r.dataset, r.n, r.rep, r.method")
        return self._query(sql, (method,) if method else ())

    def summary(self) -> list[dict]:
        """Coverage and mean width per (data set, n, method), with a binomial standard error.

        ``coverage`` is the fraction of repetitions whose interval contains the true error;
        ``coverage_se`` = sqrt(c (1 - c) / reps).
        """
        rows = self._query(
            "SELECT dataset, n, method, COUNT(*) AS reps, AVG(covered) AS coverage, AVG(width) AS mean_width, "
            "AVG(seconds) AS mean_seconds, SUM(COALESCE(conservative, 0)) AS conservative "
            "FROM results GROUP BY dataset, n, method ORDER BY dataset, n, method")
        for r in rows:
            c, k = r["coverage"], r["reps"]
            r["coverage_se"] = math.sqrt(c * (1 - c) / k) if k else float("nan")
        return rows
