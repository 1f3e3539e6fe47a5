"""Verify a coverage study's result store (``cudbound store check FILE``).

:func:`check_store` opens the store for reading only (it never writes, so a read-only file
can be checked) and runs, each on its own so that one failure does not hide the others:

* SQLite's own checks: ``PRAGMA integrity_check`` (pages, indexes, NOT NULL) and
  ``PRAGMA foreign_key_check`` (result rows whose task row is missing);
* the toolkit's invariants, read from the store's protocol (meta key ``protocol``, whose
  ``methods`` lists the study's method labels, :meth:`StudyConfig.protocol`):
  every finished task has a result row for every method of the protocol; no result row
  of a method outside it; no result row without its task; every task's data set is one of
  the protocol's; numeric sanity: ``0 <= low <= high <= 1``, ``width = high - low``,
  ``covered`` in {0, 1} and equal to ``low <= true_error <= high`` (to 1e-9, the CSV chunks
  round to 12 significant digits), error rates in [0, 1], positive sizes; no claim
  (:mod:`cudbound.coverage.leases`) left on a finished task.

Every check is one indexed SQL query, so a store of many thousand tasks is checked in
seconds. A file that is not a store raises :class:`~cudbound.coverage.store.StoreError`.
"""
from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field

from .store import ResultStore, StoreCorruptError, connect_readonly

__all__ = ["check_store", "StoreCheck", "CheckItem"]

EXAMPLES = 5
"""Offending rows quoted per check (the count is always complete)."""

TOLERANCE = 1e-9


@dataclass
class CheckItem:
    """One check: its name, how many offending rows or messages it found, a few of them."""

    name: str
    count: int = 0
    examples: list = field(default_factory=list)
    error: str = ""        # the check could not run (SQLite's message)

    @property
    def ok(self) -> bool:
        return self.count == 0 and not self.error

    def line(self) -> str:
        if self.error:
            return f"{self.name}: could not run ({self.error})"
        if self.ok:
            return f"{self.name}: ok"
        more = f", ... ({self.count - len(self.examples)} more)" if self.count > len(self.examples) else ""
        return f"{self.name}: {self.count} problem(s): {'; '.join(self.examples)}{more}"


@dataclass
class StoreCheck:
    """The outcome of :func:`check_store`."""

    path: str
    schema: str
    tasks: int
    results: int
    methods: list
    items: list

    @property
    def ok(self) -> bool:
        return all(item.ok for item in self.items)

    @property
    def problems(self) -> list:
        return [item.line() for item in self.items if not item.ok]

    def to_dict(self) -> dict:
        return {"store": self.path, "ok": self.ok, "schema": self.schema, "tasks": self.tasks,
                "results": self.results, "methods": self.methods,
                "checks": [{"check": i.name, "ok": i.ok, "count": i.count, "examples": i.examples,
                            **({"error": i.error} if i.error else {})} for i in self.items],
                "problems": self.problems}

    def report(self) -> str:
        lines = [f"store {self.path}: schema {self.schema}, {self.tasks} tasks, {self.results} result rows, "
                 f"{len(self.methods)} methods ({', '.join(self.methods)})"]
        lines += [f"  {item.line()}" for item in self.items]
        lines.append("OK: no problems found." if self.ok else
                     f"PROBLEMS: {len(self.problems)} check(s) failed; the store's results should not be used "
                     f"as they are.")
        return "\n".join(lines)


def _key(row) -> str:
    return "(" + ", ".join(repr(v) for v in row) + ")"


def _run(db, item: CheckItem, sql: str, args=(), describe=_key) -> CheckItem:
    """Fill ``item`` from the offending rows of ``sql``, counted in full, quoted up to EXAMPLES."""
    try:
        cur = db.execute(sql, args)
        for row in cur:
            if item.count < EXAMPLES:
                item.examples.append(describe(row))
            item.count += 1
    except sqlite3.Error as exc:
        item.error = str(exc)
    return item


def _integrity(db) -> CheckItem:
    item = CheckItem("SQLite integrity_check")
    try:
        messages = [r[0] for r in db.execute("PRAGMA integrity_check")]
    except sqlite3.Error as exc:
        item.error = str(exc)
        return item
    if messages != ["ok"]:
        lines = [line.strip() for m in messages for line in m.splitlines()
                 if line.strip() and not line.startswith("***")]
        item.count = len(lines)
        item.examples = lines[:EXAMPLES]
    return item


def _damaged(path) -> StoreCheck:
    """The check of a store too damaged to read its meta table: SQLite's integrity check alone."""
    try:
        db = connect_readonly(path)
    except sqlite3.Error as err:
        items = [CheckItem("SQLite integrity_check", error=str(err))]
    else:
        try:
            items = [_integrity(db)]
        finally:
            db.close()
    items.append(CheckItem("store metadata", error="the meta table cannot be read: the database is damaged"))
    return StoreCheck(path=str(path), schema="?", tasks=0, results=0, methods=[], items=items)


def check_store(path: str | os.PathLike[str]) -> StoreCheck:
    """Check the store at ``path`` (module docstring); never writes to it.

    Returns
    -------
    StoreCheck
        ``ok`` when every check passed; ``report()`` is the text ``cudbound store check`` prints.

    Raises
    ------
    StoreError
        The file is not a cudbound store (or cannot be read, or is of another schema version). A
        store too damaged to read its meta table is checked by SQLite's integrity check alone.
    """
    try:
        store = ResultStore(path, readonly=True)
    except StoreCorruptError:
        return _damaged(path)
    with store:
        db = store._db
        meta = store.meta()
        items = [_integrity(db)]
        items.append(_run(db, CheckItem("SQLite foreign_key_check"), "PRAGMA foreign_key_check",
                          describe=lambda r: f"{r[0]} row {r[1]} has no row in {r[2]}"))
        try:
            protocol = json.loads(meta.get("protocol", ""))
            methods = list(protocol["methods"])
            datasets = list(protocol["bases"])
        except (ValueError, KeyError, TypeError) as exc:
            protocol, methods, datasets = None, [], []
            items.append(CheckItem("protocol", error=f"meta 'protocol' is not a study protocol: {exc}"))
        tasks = results = 0
        try:
            tasks = db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
            results = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        except sqlite3.Error as exc:
            items.append(CheckItem("row counts", error=str(exc)))
        if protocol is not None:
            values = ", ".join("(?)" for _ in methods)
            items.append(_run(
                db, CheckItem("every task has a result row for every method"),
                f"WITH m(method) AS (VALUES {values}) SELECT t.dataset, t.n, t.rep, m.method FROM tasks t, m "
                f"WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.dataset = t.dataset AND r.n = t.n "
                f"AND r.rep = t.rep AND r.method = m.method) ORDER BY t.dataset, t.n, t.rep", methods,
                describe=lambda r: f"task {_key(r[:3])} has no row of {r[3]!r}"))
            marks = ", ".join("?" for _ in methods)
            items.append(_run(
                db, CheckItem("no result rows of methods outside the protocol"),
                f"SELECT method, COUNT(*) FROM results WHERE method NOT IN ({marks}) GROUP BY method", methods,
                describe=lambda r: f"{r[1]} row(s) of method {r[0]!r}"))
            marks = ", ".join("?" for _ in datasets)
            items.append(_run(
                db, CheckItem("every task's data set is in the protocol"),
                f"SELECT dataset, COUNT(*) FROM tasks WHERE dataset NOT IN ({marks}) GROUP BY dataset", datasets,
                describe=lambda r: f"{r[1]} task(s) of data set {r[0]!r}"))
        items.append(_run(
            db, CheckItem("no result rows without a task"),
            "SELECT r.dataset, r.n, r.rep, r.method FROM results r WHERE NOT EXISTS (SELECT 1 FROM tasks t "
            "WHERE t.dataset = r.dataset AND t.n = r.n AND t.rep = r.rep) ORDER BY r.dataset, r.n, r.rep",
            describe=lambda r: f"{_key(r[:3])} {r[3]!r}"))
        number = "typeof({0}) IN ('real', 'integer')"
        auc_study = protocol is not None and protocol.get("kind") == "auc"    # schema 3, kind = "auc"
        error_rows = "0" if auc_study else "1"     # the error-rate checks: every row of an error-rate study
        items.append(_run(
            db, CheckItem("results: 0 <= low <= high <= 1, width = high - low, covered in {0, 1}"),
            f"SELECT dataset, n, rep, method, low, high, width, covered FROM results WHERE {error_rows} AND NOT ("
            f"{number.format('low')} AND {number.format('high')} AND {number.format('width')} "
            f"AND low >= 0 AND low <= high AND high <= 1 AND abs(width - (high - low)) <= {TOLERANCE} "
            f"AND typeof(covered) = 'integer' AND covered IN (0, 1)) ORDER BY dataset, n, rep, method",
            describe=lambda r: f"{_key(r[:3])} {r[3]!r}: low {r[4]!r}, high {r[5]!r}, width {r[6]!r}, "
                               f"covered {r[7]!r}"))
        items.append(_run(
            db, CheckItem("covered = (low <= true error <= high)"),
            f"SELECT r.dataset, r.n, r.rep, r.method, r.low, r.high, t.true_error, r.covered FROM results r "
            f"JOIN tasks t USING (dataset, n, rep) WHERE {error_rows} AND ((r.covered = 1 AND (t.true_error < r.low - {TOLERANCE} "
            f"OR t.true_error > r.high + {TOLERANCE})) OR (r.covered = 0 AND t.true_error > r.low + {TOLERANCE} "
            f"AND t.true_error < r.high - {TOLERANCE})) ORDER BY r.dataset, r.n, r.rep, r.method",
            describe=lambda r: f"{_key(r[:3])} {r[3]!r}: [{r[4]!r}, {r[5]!r}], true error {r[6]!r}, covered {r[7]!r}"))
        if auc_study:      # kind = "auc": every row scored against its own target (module auc_tasks)
            bound = "CASE WHEN method LIKE 'compare.%' THEN -1 ELSE 0 END"    # a difference may be negative
            items.append(_run(
                db, CheckItem("AUC study rows: a target; an AUC interval within [0, 1] (a difference's within "
                              "[-1, 1]), width = high - low, covered in {0, 1}, or no interval; p-values in [0, 1]"),
                f"SELECT dataset, n, rep, method, low, high, width, covered, target, pvalue FROM results WHERE NOT ("
                f"{number.format('target')} AND ((low IS NULL AND high IS NULL AND width IS NULL AND covered IS NULL) "
                f"OR ({number.format('low')} AND {number.format('high')} AND {number.format('width')} "
                f"AND low >= {bound} AND low <= high AND high <= 1 AND abs(width - (high - low)) <= {TOLERANCE} "
                f"AND typeof(covered) = 'integer' AND covered IN (0, 1))) "
                f"AND (pvalue IS NULL OR ({number.format('pvalue')} AND pvalue BETWEEN 0 AND 1))) "
                f"ORDER BY dataset, n, rep, method",
                describe=lambda r: f"{_key(r[:3])} {r[3]!r}: low {r[4]!r}, high {r[5]!r}, width {r[6]!r}, "
                                   f"covered {r[7]!r}, target {r[8]!r}, p-value {r[9]!r}"))
            items.append(_run(
                db, CheckItem("AUC study rows: covered = (low <= target <= high)"),
                f"SELECT dataset, n, rep, method, low, high, target, covered FROM results WHERE "
                f"(covered = 1 AND (target < low - {TOLERANCE} OR target > high + {TOLERANCE})) OR "
                f"(covered = 0 AND target > low + {TOLERANCE} AND target < high - {TOLERANCE}) "
                f"ORDER BY dataset, n, rep, method",
                describe=lambda r: f"{_key(r[:3])} {r[3]!r}: [{r[4]!r}, {r[5]!r}], target {r[6]!r}, covered {r[7]!r}"))
        items.append(_run(
            db, CheckItem("tasks: error rates in [0, 1], n >= 1, rep >= 0, test_size >= 1, redraws >= 0"),
            f"SELECT dataset, n, rep, train_error, true_error, test_size, redraws FROM tasks WHERE NOT ("
            f"{number.format('train_error')} AND {number.format('true_error')} AND train_error BETWEEN 0 AND 1 "
            f"AND true_error BETWEEN 0 AND 1 AND typeof(n) = 'integer' AND n >= 1 AND typeof(rep) = 'integer' "
            f"AND rep >= 0 AND test_size >= 1 AND redraws >= 0) ORDER BY dataset, n, rep",
            describe=lambda r: f"{_key(r[:3])}: train error {r[3]!r}, true error {r[4]!r}, test size {r[5]!r}, "
                               f"redraws {r[6]!r}"))
        if store.schema != "1":
            items.append(_run(
                db, CheckItem("no open claims of finished tasks"),
                "SELECT c.dataset, c.n, c.rep, c.owner FROM claims c JOIN tasks t USING (dataset, n, rep) "
                "ORDER BY c.dataset, c.n, c.rep",
                describe=lambda r: f"{_key(r[:3])} claimed by {r[3]!r}"))
        return StoreCheck(path=str(path), schema=meta.get("schema", "?"), tasks=tasks, results=results,
                          methods=methods, items=items)
