"""Immutable result chunks: a long study committed piece by piece, resumed from what is committed.

A chunk holds every task of one (data set, n, block of repetitions): repetitions
``start .. start + size - 1``. It is one gzipped CSV file, one row per task and method (the
task's columns repeated on each of its rows), written once, when the last task of its
block is in the store, and never rewritten::

    DIR/protocol.json                       the study's protocol (as a store keeps it)
    DIR/<data set>/n<n>/reps<start>-<stop>.csv.gz

The files are byte-for-byte reproducible (no timestamp in the gzip header; numbers to 12
significant digits, in task and method order), so a chunk recomputed anywhere from the same
seed gives the same file, except for the ``seconds`` columns. A run with ``--chunks DIR``
first loads every chunk into its store (its tasks count as done), then writes each block as
it completes. Tables and figures are built from a store loaded from the chunks alone
(:func:`load_chunks`), so the SQLite store itself need not be kept. :func:`export_store`
(``cudbound store export``) writes the chunks of a store's complete blocks after the fact:
the same files a run with ``--chunks`` would have written.

**A block in progress.** A run with ``--chunks`` also keeps the finished tasks of each block that
is not complete yet in ``DIR/<data set>/n<n>/partial-reps<start>-<stop>.csv.gz`` (the same
columns), rewritten after each of its tasks and removed when the block's chunk is written. A
later run loads it (its tasks are not computed again), so a block whose tasks take longer than
one sitting (the third study's n = 100 cells: 50 tasks of up to 20 minutes) is resumed from
what was committed, not started again. Partial files are never read by the tables
(:func:`load_chunks`): a summary counts complete blocks only.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import secrets
import socket
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from .config import StudyConfig, Task
from .store import EXTRA_COLUMNS, RESULT_COLUMNS, ResultStore, StoreError, StoreMismatchError, _diff

__all__ = ["ChunkDir", "load_chunks", "export_store", "ExportReport"]

TASK_COLUMNS = ("dataset", "n", "rep", "train_error", "true_error", "test_size", "redraws", "task_seconds")
ROW_COLUMNS = TASK_COLUMNS + ("method",) + RESULT_COLUMNS
"""The columns of an error-rate study's chunk."""
DETAIL_COLUMNS = ("target_se",)
"""Keys of a row's JSON ``details`` that an AUC study's chunk keeps as columns (the rest of the details
stay in the store): ``target_se``, the standard error of the row's target on the test set. A chunk
written before it existed lacks the column; its rows read back without it."""
AUC_ROW_COLUMNS = ROW_COLUMNS + EXTRA_COLUMNS + DETAIL_COLUMNS
"""The columns of an AUC and comparison study's chunk (``kind = "auc"``): its rows' targets, statistics,
p-values and targets' standard errors besides."""


PARTIAL = "partial-"
"""The prefix of a block-in-progress file's name."""


def row_columns(config: StudyConfig) -> tuple:
    """The columns of a chunk of ``config``'s study."""
    return AUC_ROW_COLUMNS if config.kind == "auc" else ROW_COLUMNS
_INTEGER = {"n", "rep", "test_size", "redraws", "covered", "conservative", "nodes_total", "solves_total",
            "not_exact"}


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.12g}"
    return str(value)


def parse_value(key, text):
    """A CSV field of a study export as stored: None, text, int or float."""
    if text == "":
        return None
    if key in ("dataset", "method"):
        return text
    return int(float(text)) if key in _INTEGER else float(text)


class ChunkDir:
    """The chunk files of one study in a directory (created on first use).

    Parameters
    ----------
    path : str or Path
    config : StudyConfig
        The directory is bound to its protocol: a new directory records it in
        ``protocol.json``; an existing one must match (:class:`StoreMismatchError`).
    size : int, default 50
        Repetitions per chunk.
    """

    def __init__(self, path: str | os.PathLike[str], config: StudyConfig, size: int = 50):
        self.path, self.config, self.size = Path(path), config, int(size)
        if self.size < 1:
            raise ValueError(f"`size` (repetitions per chunk) must be at least 1; got {size!r}.")
        marker = self.path / "protocol.json"
        protocol = {"protocol": config.protocol(), "chunk_size": self.size}
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if marker.exists():
                old = json.loads(marker.read_text(encoding="utf-8"))
                new = json.loads(json.dumps(protocol))
                if old != new:
                    diffs = _diff(old, new)
                    raise StoreMismatchError(f"the chunks in {str(self.path)!r} belong to another protocol or chunk "
                                             f"size ({'; '.join(diffs)}; 'store' meaning the chunks); use another "
                                             f"directory, or restore the configuration.")
            else:           # written whole or not at all: runs started at once may both get here
                tmp = _tmp_name(marker)
                tmp.write_text(json.dumps(protocol, indent=1, sort_keys=True) + "\n", encoding="utf-8")
                tmp.replace(marker)
        except OSError as exc:
            raise StoreError(f"cannot use the chunk directory '{self.path}': {exc.strerror or exc} "
                             f"({exc.filename or marker}); choose a writable directory.") from None
        except StoreError:
            raise
        except ValueError as exc:
            raise StoreError(f"'{marker}' is not a chunk directory's protocol.json ({exc}); use another "
                             f"directory.") from None

    def blocks(self) -> dict:
        """(data set, n, start) -> the tasks of that block, for every block of the study."""
        out = defaultdict(list)
        for t in self.config.tasks():
            out[(t.dataset, t.n, t.rep - t.rep % self.size)].append(t)
        return dict(out)

    def file(self, dataset: str, n: int, start: int) -> Path:
        stop = min(start + self.size, self.config.repetitions_for(n)) - 1
        return self.path / dataset / f"n{n}" / f"reps{start:04d}-{stop:04d}.csv.gz"

    def partial(self, dataset: str, n: int, start: int) -> Path:
        """The file of the finished tasks of the block at ``start`` while it is incomplete."""
        target = self.file(dataset, n, start)
        return target.with_name(PARTIAL + target.name)

    def existing(self) -> list[Path]:
        return chunk_files(self.path)

    def write_complete(self, store: ResultStore, keys: Collection[tuple[str, int, int]] | None = None,
                       done: Collection[Task] | None = None) -> list[Path]:
        """Write the chunk of every block (or of ``keys``) whose tasks are all in the store and
        that has no file yet. Returns the files written. ``done``: the store's finished tasks,
        if the caller has them already."""
        done = store.finished() if done is None else done
        written = []
        for key, tasks in self.blocks().items():
            if keys is not None and key not in keys:
                continue
            target = self.file(*key)
            if target.exists() or not all(t in done for t in tasks):
                continue
            self._write(store, key, tasks, target)
            written.append(target)
        return written

    def _write(self, store, key, tasks, target: Path) -> None:
        dataset, n, start = key
        reps = {t.rep for t in tasks}
        block = (dataset, n, min(reps), max(reps))
        task_rows = {r["rep"]: r for r in store._query(
            "SELECT * FROM tasks WHERE dataset = ? AND n = ? AND rep BETWEEN ? AND ?", block) if r["rep"] in reps}
        order = {m: i for i, m in enumerate(self.config.methods)}
        rows = [r for r in store._query("SELECT * FROM results WHERE dataset = ? AND n = ? AND rep BETWEEN ? AND ?",
                                        block) if r["rep"] in reps]
        rows.sort(key=lambda r: (r["rep"], order.get(r["method"], len(order)), r["method"]))
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        columns = row_columns(self.config)
        result_columns = [c for c in columns[len(TASK_COLUMNS) + 1:] if c not in DETAIL_COLUMNS]
        detail_columns = [c for c in columns if c in DETAIL_COLUMNS]
        w.writerow(columns)
        for r in rows:
            t = task_rows[r["rep"]]
            details = json.loads(r["details"]) if detail_columns else {}
            w.writerow([_text(v) for v in (dataset, n, r["rep"], t["train_error"], t["true_error"], t["test_size"],
                                           t["redraws"], t["seconds"], r["method"])]
                       + [_text(r[c]) for c in result_columns] + [_text(details.get(c)) for c in detail_columns])
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _tmp_name(target)   # runs sharing a store (on several machines too) may write it at once
        with open(tmp, "wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue().encode("utf-8"))
        tmp.replace(target)        # atomic: a chunk is whole or absent
        if target.name.startswith(PARTIAL):
            return
        for done in target.parent.glob(f"{PARTIAL}reps{start:04d}-*.csv.gz"):
            done.unlink(missing_ok=True)        # the block's progress, now whole
        for other in target.parent.glob(f"reps{start:04d}-*.csv.gz"):
            if other != target and _span(other)[1] < _span(target)[1]:
                other.unlink(missing_ok=True)   # a partial last block, superseded after `repetitions` was raised

    def block_of(self, task: Task) -> tuple:
        return task.dataset, task.n, task.rep - task.rep % self.size

    def write_if_complete(self, store: ResultStore, task: Task) -> Path | None:
        """After ``task`` was stored: write its block's chunk if the block is now complete (returned),
        else the block's partial file of its finished tasks (None is returned)."""
        dataset, n, start = key = self.block_of(task)
        stop = min(start + self.size, self.config.repetitions_for(n))
        target = self.file(*key)
        if target.exists():
            return None
        count = store._scalar("SELECT COUNT(*) FROM tasks WHERE dataset = ? AND n = ? AND rep >= ? AND rep < ?",
                              (dataset, n, start, stop))
        if count < stop - start:
            reps = [r["rep"] for r in store._query("SELECT rep FROM tasks WHERE dataset = ? AND n = ? AND rep >= ? "
                                                   "AND rep < ?", (dataset, n, start, stop))]
            self._write(store, key, [Task(dataset, n, r) for r in sorted(reps)], self.partial(*key))
            return None
        self._write(store, key, [Task(dataset, n, r) for r in range(start, stop)], target)
        return target

    def load_into(self, store: ResultStore, partial: bool = False) -> int:
        """Write every chunk's tasks into the store (tasks already there are left alone), and with
        ``partial`` those of every block in progress; returns the number of tasks added."""
        added = 0
        progress = []
        for path in partial_files(self.path) if partial else []:
            if path.with_name(path.name[len(PARTIAL):]).exists():
                path.unlink(missing_ok=True)    # left by a run that raced the one writing the whole chunk
            else:
                progress.append(path)
        for path in self.existing() + progress:
            try:
                tasks = read_chunk(path)
            except FileNotFoundError:
                if path in progress:    # another run completed its block meanwhile: its tasks are in the chunk
                    continue            # (read below, or by the next load) and in the store they share
                raise ValueError(f"the chunk file '{path}' vanished while it was read; a chunk is never removed: "
                                 f"restore it from version control (git checkout -- '{path}').") from None
            except (OSError, EOFError, csv.Error, KeyError, ValueError, TypeError) as exc:
                raise ValueError(f"the chunk file '{path}' is damaged ({type(exc).__name__}: {exc}); restore it "
                                 f"from version control (git checkout -- '{path}') or move it away to recompute "
                                 f"its tasks.") from None
            added += store.write_many(tasks)   # a chunk in one transaction: one flush, not one per task
        return added


def _tmp_name(target: Path) -> Path:
    """A temporary file beside ``target``, unique to this process on this machine (host, pid, random)."""
    return target.with_name(f"{target.name}.{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _span(path) -> tuple:
    """(first, last) repetition of a chunk file, from its name repsAAAA-BBBB.csv.gz."""
    a, b = Path(path).name[len("reps"):-len(".csv.gz")].split("-")
    return int(a), int(b)


def chunk_files(directory) -> list[Path]:
    """The chunk files under ``directory``, the fullest first where two cover the same block."""
    files = Path(directory).glob("*/n*/reps*.csv.gz")
    return sorted(files, key=lambda p: (p.parent.as_posix(), _span(p)[0], -_span(p)[1]))


def partial_files(directory) -> list[Path]:
    """The files of blocks in progress under ``directory`` (``partial-reps*.csv.gz``), in order."""
    return sorted(Path(directory).glob(f"*/n*/{PARTIAL}reps*.csv.gz"), key=lambda p: p.as_posix())


def read_chunk(path) -> list[dict]:
    """The tasks of one chunk file, each as :meth:`ResultStore.write` takes it."""
    tasks = {}
    with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
        for raw in csv.DictReader(fh):
            r = {k: parse_value(k, v) for k, v in raw.items()}
            key = (r["dataset"], r["n"], r["rep"])
            if key not in tasks:
                tasks[key] = {"dataset": r["dataset"], "n": r["n"], "rep": r["rep"], "train_error": r["train_error"],
                              "true_error": r["true_error"], "test_size": r["test_size"], "redraws": r["redraws"],
                              "seconds": r["task_seconds"], "host": f"chunk {Path(path).name}", "rows": []}
            row = {k: r.get(k) for k in ("method",) + RESULT_COLUMNS + EXTRA_COLUMNS}
            row["details"] = {k: r[k] for k in DETAIL_COLUMNS if r.get(k) is not None}
            tasks[key]["rows"].append(row)
    return list(tasks.values())


@dataclass
class ExportReport:
    """What :func:`export_store` did: chunk files written, complete blocks whose chunk was already
    there (left as they are), and blocks not exported because tasks are missing."""

    directory: str
    written: list = field(default_factory=list)        # paths
    existing: list = field(default_factory=list)       # paths
    incomplete: list = field(default_factory=list)     # (dataset, n, first rep, last rep, tasks stored)
    outside: int = 0                                    # stored tasks that are not tasks of the configuration


def export_store(store_path: str | os.PathLike[str], directory: str | os.PathLike[str],
                 config: StudyConfig | None = None, size: int = 50) -> ExportReport:
    """Write the chunks of every complete block of the store at ``store_path`` into ``directory``.

    The files are those a run with ``--chunks directory --chunk-size size`` writes (the same
    :class:`ChunkDir` writes them), so an export can be committed, or merged with such a
    directory. The store is opened for reading only. ``config`` gives the blocks (the study's
    data sets, sizes and repetitions); by default the configuration kept in the store, which
    knows only the repetitions the store was created with: pass the current configuration
    when later runs added repetitions (tasks of the store outside the configuration are
    counted in ``outside``, not exported). A block with a missing repetition cannot be a chunk
    (a chunk holds every task of its block): it is listed in ``incomplete``. Chunks already in
    ``directory`` are never rewritten.

    Raises
    ------
    StoreError
        The store cannot be read; :class:`StoreMismatchError` if ``config`` or the chunks
        already in ``directory`` belong to another protocol.
    """
    with ResultStore(store_path, readonly=True) as store:
        if config is None:
            config = store.config()
        else:
            store.check_protocol(config)
        chunk_dir = ChunkDir(directory, config, size)
        done = store.finished()
        report = ExportReport(directory=str(directory), outside=len(done - set(config.tasks())))
        complete = set()
        for key, tasks in chunk_dir.blocks().items():
            have = sum(t in done for t in tasks)
            if have < len(tasks):
                if have:
                    report.incomplete.append((key[0], key[1], key[2], key[2] + len(tasks) - 1, have))
            elif chunk_dir.file(*key).exists():
                report.existing.append(chunk_dir.file(*key))
            else:
                complete.add(key)
        try:
            report.written = chunk_dir.write_complete(store, keys=complete, done=done)
        except OSError as exc:
            raise StoreError(f"cannot write a chunk into '{directory}': {exc.strerror or exc} "
                             f"({exc.filename}).") from None
    return report


def load_chunks(directory: str | os.PathLike[str], config: StudyConfig, store_path: str | os.PathLike[str],
                size: int = 50) -> int:
    """Load every committed chunk of the study into the store at ``store_path`` (created if
    absent), for the tables and figures. Returns the number of tasks added."""
    with ResultStore(store_path, config) as store:
        return ChunkDir(directory, config, size).load_into(store)
