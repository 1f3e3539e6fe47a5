"""Every problem with a coverage store's file is a one-line `cudbound: error: ...` naming the file and
what to do, exit status 2 (cudbound/coverage/store.py: StoreError), never a traceback; `cudbound store
check` verifies a store (0 sound, 1 problems, 2 not a store) and `cudbound store export` writes the
chunk files `--chunks` would."""
from __future__ import annotations

import gzip
import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from fake_tasks import fake_result, use_fake_tasks

import cudbound.coverage.store as store_mod
from cudbound.cli import main
from cudbound.coverage import (ResultStore, StoreCorruptError, StoreError, StoreMismatchError, StoreNotFoundError,
                               StoreVersionError, Task, check_store, export_store, parse_config, run_study)
from cudbound.coverage.store import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0
AS_ROOT = "runs as root, whom file permissions do not stop; the simulated variant of this test covers the code path"


def config_text(reps=4):
    return SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}")


def small_config(reps=4):
    return parse_config(config_text(reps), source="smoke")


def made_store(path, reps=4, done=None):
    """A store of the smoke study with stand-in results for its first ``done`` tasks (all by default)."""
    config = small_config(reps)
    with ResultStore(path, config) as store:
        for task in config.tasks()[:done]:
            store.write(fake_result(config, task))
    return path


def details(out, command):
    """The ``details`` of a --json output, after checking it has the one layout of every command."""
    record = json.loads(out)
    jsonschema = pytest.importorskip("jsonschema")
    from cudbound.output import OUTPUT_SCHEMA
    jsonschema.Draft202012Validator(OUTPUT_SCHEMA).validate(record)
    assert record["command"] == command
    return record["details"]


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err, *fragments):
    """stderr is exactly one line `cudbound: error: ...` holding every fragment (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudbound: error: "), err
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(config_text())
    return path


def coverage(capsys, config_file, store, *extra):
    return run_cli(capsys, "coverage", "--config", config_file, "--store", store, "--jobs", "1",
                   "--no-progress", *extra)


# ------------------------------------------------------------------ files that are not stores

def _other_program(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO customers VALUES (1, 'x')")


NOT_STORES = {
    "text": (lambda p: p.write_text("dataset,n,rep\ndonut,30,0\n"), "is not a cudbound result store"),
    "random": (lambda p: p.write_bytes(os.urandom(8192)), "is not a cudbound result store"),
    "other-sqlite": (_other_program, "an SQLite database of another program (tables: customers)"),
}


@pytest.mark.parametrize("kind", sorted(NOT_STORES))
def test_a_file_that_is_not_a_store_is_refused_in_one_line_and_left_alone(tmp_path, capsys, config_file, kind):
    make, fragment = NOT_STORES[kind]
    path = tmp_path / f"{kind}.sqlite"
    make(path)
    before = path.read_bytes()
    code, out, err = coverage(capsys, config_file, path)
    assert code == 2
    one_error_line(err, str(path), fragment)
    code, out, err = run_cli(capsys, "store", "check", path)
    assert code == 2
    one_error_line(err, str(path), fragment)
    assert path.read_bytes() == before          # nothing written into somebody else's file
    with pytest.raises(StoreError, match="not a cudbound result store|another program"):
        ResultStore(path)


def test_an_empty_file_is_not_a_store_to_read_but_becomes_one_for_a_run(tmp_path, capsys, config_file, monkeypatch):
    path = tmp_path / "empty.sqlite"
    path.touch()
    code, _, err = run_cli(capsys, "store", "check", path)
    assert code == 2
    one_error_line(err, str(path), "is an empty file")
    use_fake_tasks(monkeypatch)
    code, out, err = coverage(capsys, config_file, path)
    assert code == 0 and "8 computed now" in out


def test_a_missing_store_or_directory(tmp_path, capsys, config_file):
    missing_dir = tmp_path / "no" / "such" / "dir" / "s.sqlite"
    code, _, err = coverage(capsys, config_file, missing_dir)
    assert code == 2
    one_error_line(err, str(missing_dir), "does not exist", "mkdir -p")
    assert not (tmp_path / "no").exists()
    code, _, err = run_cli(capsys, "store", "check", tmp_path / "none.sqlite")
    assert code == 2
    one_error_line(err, "none.sqlite", "does not exist")
    with pytest.raises(StoreNotFoundError) as info:
        ResultStore(tmp_path / "none.sqlite")
    assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, ValueError)
    code, _, err = coverage(capsys, config_file, tmp_path)      # a directory
    assert code == 2
    one_error_line(err, str(tmp_path), "is a directory")


# ------------------------------------------------------------------ schema version

def test_a_store_of_another_schema_version_is_refused_on_open_with_both_versions_named(tmp_path, capsys,
                                                                                      config_file):
    path = made_store(tmp_path / "old.sqlite", done=2)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    for opener in (lambda: ResultStore(path), lambda: ResultStore(path, readonly=True),
                   lambda: ResultStore(path, small_config())):
        with pytest.raises(StoreVersionError, match=f"schema version 0, but this cudbound reads schema versions "
                                                    f"1, 2 and 3 \\(and writes {SCHEMA_VERSION}\\)"):
            opener()
    code, _, err = coverage(capsys, config_file, path)
    assert code == 2
    one_error_line(err, str(path), "schema version 0", "reads schema versions 1, 2 and 3")
    code, _, err = run_cli(capsys, "store", "check", path)
    assert code == 2
    one_error_line(err, "schema version 0")
    assert issubclass(StoreVersionError, StoreError) and issubclass(StoreMismatchError, StoreError)


def _as_version_1(path):
    """The store as cudbound wrote it before the leases (schema 1: no claims tables)."""
    db = sqlite3.connect(path)
    with db:
        db.execute("DROP TABLE claims")
        db.execute("DROP TABLE claim_log")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    db.close()           # the last connection: the WAL is checkpointed into the file now


def test_a_version_1_store_is_read_as_it_is_and_upgraded_when_written(tmp_path, capsys, config_file, monkeypatch):
    path = made_store(tmp_path / "v1.sqlite", done=3)
    _as_version_1(path)
    before = path.read_bytes()
    with ResultStore(path, readonly=True) as store:
        assert store.schema == "1" and len(store.tasks()) == 3 and store.claims() == []
    code, out, _ = run_cli(capsys, "store", "check", path)
    assert code == 0 and "schema 1" in out
    assert path.read_bytes() == before
    use_fake_tasks(monkeypatch)
    code, out, _ = coverage(capsys, config_file, path)
    assert code == 0 and "3 already stored, 5 computed now" in out
    with ResultStore(path) as store:
        assert store.schema == SCHEMA_VERSION == store.meta()["schema"] == "3"
        assert store.meta()["upgraded"].startswith("from schema 1 on ")
        assert len(store.claim_log()) == 5 and store.claims() == []
    assert run_cli(capsys, "store", "check", path)[0] == 0


def test_a_new_store_records_the_schema_version(tmp_path):
    path = made_store(tmp_path / "s.sqlite", done=0)
    with ResultStore(path) as store:
        assert store.meta()["schema"] == SCHEMA_VERSION


# ------------------------------------------------------------------ permissions

def _deny(monkeypatch, path, mode_denied):
    """Simulate a permission that the file system would refuse (a test run as root is never refused)."""
    real = store_mod._permitted
    target = Path(path)

    def permitted(p, mode):
        if Path(p) == target and mode & mode_denied:
            return False
        return real(p, mode)
    monkeypatch.setattr(store_mod, "_permitted", permitted)


def _read_only_uses_work(capsys, path, tmp_path):
    code, out, err = run_cli(capsys, "store", "check", path)
    assert code == 0 and "OK: no problems found." in out, err
    code, out, err = run_cli(capsys, "store", "export", path, tmp_path / "exported", "--chunk-size", "2")
    assert code == 0 and "4 chunk file(s) written" in out, err
    with ResultStore(path) as store:                   # no configuration: opened for reading
        assert store.readonly and len(store.summary()) == 2 * 8
    with pytest.raises(StoreError, match="read-only"):
        ResultStore(path, readonly=False)


def _read_only_run_is_refused(capsys, config_file, path):
    code, _, err = coverage(capsys, config_file, path)
    assert code == 2
    return one_error_line(err, str(path), "read-only", "chmod u+w", "store check")


def test_read_only_store_simulated(tmp_path, capsys, config_file, monkeypatch):
    path = made_store(tmp_path / "s.sqlite")
    before = path.read_bytes()
    _deny(monkeypatch, path, os.W_OK)
    assert "the file is read-only" in _read_only_run_is_refused(capsys, config_file, path)
    _read_only_uses_work(capsys, path, tmp_path)
    assert path.read_bytes() == before


def test_read_only_directory_simulated(tmp_path, capsys, config_file, monkeypatch):
    (tmp_path / "d").mkdir()
    path = made_store(tmp_path / "d" / "s.sqlite")
    _deny(monkeypatch, path.parent, os.W_OK)
    assert "its directory" in _read_only_run_is_refused(capsys, config_file, path)
    _read_only_uses_work(capsys, path, tmp_path)
    fresh = path.parent / "new.sqlite"
    code, _, err = coverage(capsys, config_file, fresh)
    assert code == 2
    one_error_line(err, str(fresh), "is not writable")


@pytest.mark.skipif(ROOT_USER, reason=AS_ROOT)
def test_read_only_store_for_real(tmp_path, capsys, config_file):
    path = made_store(tmp_path / "s.sqlite")
    path.chmod(0o444)
    try:
        _read_only_run_is_refused(capsys, config_file, path)
        _read_only_uses_work(capsys, path, tmp_path)
    finally:
        path.chmod(0o644)


@pytest.mark.skipif(ROOT_USER, reason=AS_ROOT)
def test_read_only_directory_for_real(tmp_path, capsys, config_file):
    (tmp_path / "d").mkdir()
    path = made_store(tmp_path / "d" / "s.sqlite")
    path.parent.chmod(0o555)
    try:
        _read_only_run_is_refused(capsys, config_file, path)
        _read_only_uses_work(capsys, path, tmp_path)
    finally:
        path.parent.chmod(0o755)


def test_unreadable_store_simulated(tmp_path, capsys, config_file, monkeypatch):
    path = made_store(tmp_path / "s.sqlite", done=1)
    _deny(monkeypatch, path, os.R_OK)
    for argv in (["store", "check", path], ["coverage", "--config", config_file, "--store", path]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2
        one_error_line(err, str(path), "cannot read", "permission denied", "chmod u+r")


@pytest.mark.skipif(ROOT_USER, reason=AS_ROOT)
def test_unreadable_store_for_real(tmp_path, capsys, config_file):
    path = made_store(tmp_path / "s.sqlite", done=1)
    path.chmod(0o000)
    try:
        code, _, err = run_cli(capsys, "store", "check", path)
        assert code == 2
        one_error_line(err, str(path), "cannot read")
    finally:
        path.chmod(0o644)


# ------------------------------------------------------------------ corruption

def _damage(path):
    """Overwrite the headers of a few b-tree pages (the file stays an SQLite file)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    assert pages > 6
    with open(path, "r+b") as fh:
        for k in range(2, pages, 2):
            fh.seek(page * k)
            fh.write(b"\x0d\xff\xff\x00\x07" * 20)


def test_a_corrupt_store_is_a_one_line_error_for_a_run_and_listed_by_check(tmp_path, capsys, config_file):
    path = made_store(tmp_path / "s.sqlite", reps=20)
    _damage(path)
    code, _, err = coverage(capsys, config_file, path)
    assert code == 2
    one_error_line(err, str(path), "corrupt", "cudbound store check")
    code, out, err = run_cli(capsys, "store", "check", path)
    assert code == 1 and "Traceback" not in err
    assert "SQLite integrity_check:" in out and "PROBLEMS" in out
    truncated = tmp_path / "t.sqlite"
    truncated.write_bytes(path.read_bytes()[:5000])
    code, out, err = run_cli(capsys, "store", "check", truncated)
    assert code in (1, 2) and "Traceback" not in err
    if code == 2:
        one_error_line(err, str(truncated))
    with pytest.raises(StoreError):
        ResultStore(truncated, small_config())


@pytest.mark.parametrize("message, kind, fragment", [
    ("database disk image is malformed", StoreCorruptError, "it is corrupt"),
    ("file is not a database", StoreCorruptError, "it is corrupt"),
    ("database is locked", StoreError, "locked by another process"),
    ("attempt to write a readonly database", StoreError, "it is read-only"),
    ("database or disk is full", StoreError, "free disk space"),
    ("no such table: tasks", StoreError, "SQLite: no such table: tasks"),
])
def test_sqlite_errors_while_in_use_become_one_line_store_errors(tmp_path, message, kind, fragment):
    """What SQLite reports mid-run (a store damaged or locked under a run, a full disk) is a StoreError
    naming the file and what to do."""
    path = made_store(tmp_path / "s.sqlite", done=1)
    with ResultStore(path) as store:
        with pytest.raises(kind) as info:
            with store._guard("written (task ('donut', 30, 1))"):
                raise sqlite3.OperationalError(message)
    text = str(info.value)
    assert "\n" not in text and str(path) in text and fragment in text and "could not be written" in text


# ------------------------------------------------------------------ store check

def test_check_a_sound_store(tmp_path, capsys):
    path = made_store(tmp_path / "s.sqlite")
    code, out, _ = run_cli(capsys, "store", "check", path)
    assert code == 0 and "8 tasks, 64 result rows, 8 methods" in out and "OK: no problems found." in out
    code, out, _ = run_cli(capsys, "store", "check", path, "--json")
    record = details(out, "store check")
    assert code == 0 and record["ok"] and record["problems"] == [] and record["tasks"] == 8
    assert all(c["ok"] for c in record["checks"])


def test_check_lists_every_kind_of_damage(tmp_path, capsys):
    path = made_store(tmp_path / "s.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM results WHERE dataset = 'donut' AND rep = 1 AND method = 'cud'")
        db.execute("UPDATE results SET low = 0.9, high = 0.1 WHERE dataset = 'donut' AND rep = 2 AND method = 'bs1'")
        db.execute("UPDATE results SET covered = 1 - covered WHERE dataset = 'three_points' AND rep = 0 "
                   "AND method = 'yang'")
        db.execute("UPDATE results SET covered = 7 WHERE dataset = 'three_points' AND rep = 1 AND method = 'yang'")
        db.execute("INSERT INTO results (dataset, n, rep, method, low, high, centre, width, covered, seconds, conservative, nodes_median, nodes_total, solves_total, not_exact, half_width, alpha_n, details) "
                   "SELECT dataset, n, 99, method, low, high, centre, width, covered, seconds, "
                   "conservative, nodes_median, nodes_total, solves_total, not_exact, half_width, alpha_n, details "
                   "FROM results WHERE rep = 0 AND dataset = 'donut' AND method = 'cud'")
        db.execute("INSERT INTO results (dataset, n, rep, method, low, high, centre, width, covered, seconds, conservative, nodes_median, nodes_total, solves_total, not_exact, half_width, alpha_n, details) "
                   "SELECT dataset, n, rep, 'wilson', low, high, centre, width, covered, seconds, "
                   "conservative, nodes_median, nodes_total, solves_total, not_exact, half_width, alpha_n, details "
                   "FROM results WHERE rep = 3 AND dataset = 'donut' AND method = 'cud'")
        db.execute("UPDATE tasks SET true_error = 1.5 WHERE dataset = 'three_points' AND rep = 3")
    code, out, _ = run_cli(capsys, "store", "check", path)
    assert code == 1 and "PROBLEMS" in out
    assert "task ('donut', 30, 1) has no row of 'cud'" in out
    assert "('donut', 30, 2) 'bs1': low 0.9, high 0.1" in out
    assert "('three_points', 30, 0) 'yang'" in out and "covered 7" in out
    assert "no result rows without a task: 1 problem(s): ('donut', 30, 99) 'cud'" in out
    assert "SQLite foreign_key_check: 1 problem(s)" in out
    assert "1 row(s) of method 'wilson'" in out
    assert "true error 1.5" in out
    record = details(run_cli(capsys, "store", "check", path, "--json")[1], "store check")
    assert not record["ok"] and len(record["problems"]) == 7


def test_check_answers_in_seconds_for_five_thousand_tasks(tmp_path):
    config = parse_config(config_text(2500), source="big")
    path = tmp_path / "big.sqlite"
    ResultStore(path, config).close()
    tasks, results = [], []
    for task in config.tasks():
        out = fake_result(config, task)
        tasks.append((task.dataset, task.n, task.rep, out["train_error"], out["true_error"], out["test_size"], 0,
                      "[]", 0.001, "now", "test"))
        for r in out["rows"]:
            results.append((task.dataset, task.n, task.rep, r["method"], r["low"], r["high"], r["centre"],
                            r["width"], r["covered"], 0.001, None, None, None, None, None, None, None,
                            json.dumps({"n_resamples": 500, "n_inner": 50, "fake": True})))
    with sqlite3.connect(path) as db:
        db.executemany(f"INSERT INTO tasks VALUES ({', '.join('?' * 11)})", tasks)
        db.executemany(f"INSERT INTO results (dataset, n, rep, method, low, high, centre, width, covered, seconds, conservative, nodes_median, nodes_total, solves_total, not_exact, half_width, alpha_n, details) "
                       f"VALUES ({', '.join('?' * 18)})", results)
    t0 = time.perf_counter()
    result = check_store(path)
    seconds = time.perf_counter() - t0
    assert result.ok and result.tasks == 5000 and result.results == 40000
    assert seconds < 10, seconds


# ------------------------------------------------------------------ store export

def test_export_writes_the_files_the_chunks_option_writes(tmp_path, capsys, monkeypatch):
    use_fake_tasks(monkeypatch)
    config = small_config(5)
    run_study(config, tmp_path / "s.sqlite", n_jobs=1, progress=False, chunks=tmp_path / "run", chunk_size=2)
    code, out, _ = run_cli(capsys, "store", "export", tmp_path / "s.sqlite", tmp_path / "exp", "--chunk-size", "2")
    assert code == 0 and "6 chunk file(s) written" in out
    made = sorted(p.relative_to(tmp_path / "run") for p in (tmp_path / "run").rglob("*") if p.is_file())
    exported = sorted(p.relative_to(tmp_path / "exp") for p in (tmp_path / "exp").rglob("*") if p.is_file())
    assert made == exported and len(made) == 7              # six chunks (one partial last block) and protocol.json
    for rel in made:
        assert (tmp_path / "run" / rel).read_bytes() == (tmp_path / "exp" / rel).read_bytes(), rel
    code, out, _ = run_cli(capsys, "store", "export", tmp_path / "s.sqlite", tmp_path / "exp", "--chunk-size", "2",
                           "--json")
    record = details(out, "store export")
    assert code == 0 and record["written"] == [] and len(record["existing"]) == 6


def test_export_reports_incomplete_blocks_and_tasks_outside_the_configuration(tmp_path, capsys, monkeypatch):
    use_fake_tasks(monkeypatch)
    store = tmp_path / "s.sqlite"
    run_study(small_config(2), store, n_jobs=1, progress=False)
    run_study(small_config(5), store, n_jobs=1, progress=False, max_tasks=4)   # later runs add repetitions
    # the configuration kept in the store knows 2 repetitions only
    code, out, _ = run_cli(capsys, "store", "export", store, tmp_path / "a", "--chunk-size", "2")
    assert code == 0 and "2 chunk file(s) written" in out and "4 stored task(s) are not tasks" in out
    current = tmp_path / "current.toml"
    current.write_text(config_text(5))
    code, out, _ = run_cli(capsys, "store", "export", store, tmp_path / "b", "--chunk-size", "2", "--config", current,
                           "--json")
    record = details(out, "store export")
    assert code == 0 and record["outside_configuration"] == 0
    assert len(record["written"]) == 4          # donut 0-1, 2-3, 4-4 and three_points 0-1
    assert record["incomplete"] == [{"dataset": "three_points", "n": 30, "reps": [2, 3], "stored": 1}]
    with gzip.open(tmp_path / "b" / "donut" / "n30" / "reps0004-0004.csv.gz", "rt") as fh:
        assert len(fh.read().splitlines()) == 1 + 8
    other = tmp_path / "other.toml"
    other.write_text(config_text(5).replace("seed = 12345", "seed = 1"))
    code, _, err = run_cli(capsys, "store", "export", store, tmp_path / "c", "--config", other)
    assert code == 2
    one_error_line(err, "another protocol", "seed: store has 12345, configuration has 1")
    with pytest.raises(StoreMismatchError):
        export_store(store, tmp_path / "b", small_config(5), size=3)     # the directory has chunks of size 2


def test_write_many_is_one_transaction_all_or_nothing(tmp_path):
    """Several tasks in one transaction (issue 30: the README's study command loaded its 30,000
    committed tasks one synchronous commit each): the new ones are counted, a stored one is left
    alone, claims are dropped, and a malformed result leaves nothing of the batch behind."""
    config = small_config(4)
    tasks = config.tasks()
    with ResultStore(tmp_path / "s.sqlite", config) as store:
        store.claim(tasks[:3], "me", lease=60.0, limit=3)
        assert store.write(fake_result(config, tasks[0])) is True
        commits = []
        store._db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
        assert store.write_many(fake_result(config, t) for t in tasks[:4]) == 3   # tasks[0] was stored
        assert len(commits) == 1
        assert store.finished() == set(tasks[:4]) and store.claims() == []
        bad = [fake_result(config, tasks[4]), {**fake_result(config, tasks[5]), "rows": [{"no": "method"}]}]
        with pytest.raises(KeyError):
            store.write_many(bad)
        assert store.finished() == set(tasks[:4])                                 # neither of the batch
        assert store.write_many([]) == 0


def test_chunks_load_one_transaction_per_chunk(tmp_path):
    from cudbound.coverage import ChunkDir
    config = small_config(4)
    with ResultStore(tmp_path / "a.sqlite", config) as store:
        store.write_many(fake_result(config, t) for t in config.tasks())
        ChunkDir(tmp_path / "chunks", config, size=2).write_complete(store)
    written = sorted((tmp_path / "chunks").glob("*/n*/*.csv.gz"))
    assert len(written) == len(config.tasks()) // 2
    with ResultStore(tmp_path / "b.sqlite", config) as store:
        commits = []
        store._db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
        assert ChunkDir(tmp_path / "chunks", config, size=2).load_into(store) == len(config.tasks())
        assert len(commits) == len(written)
        assert store.finished() == set(config.tasks())
