"""Immutable result chunks (cudbound/coverage/chunks.py): written as blocks complete, byte-stable,
loaded to resume, refused for another protocol; per-size repetitions in the configuration."""
import gzip
import json

import pytest

from pathlib import Path

from cudbound.coverage import (ChunkDir, ConfigError, ResultStore, StoreMismatchError, load_chunks, load_config,
                               parse_config, run_study)
from cudbound.coverage.chunks import read_chunk
from cudbound.coverage.config import REFIT_RULE

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"


def small_config(reps):
    return parse_config(SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}"), source="smoke")

TIMING = {"seconds", "task_seconds", "finished", "host"}


def rows(path):
    with gzip.open(path, "rt") as fh:
        lines = fh.read().splitlines()
    head = lines[0].split(",")
    keep = [i for i, c in enumerate(head) if c not in TIMING]
    return [[line.split(",")[i] for i in keep] for line in lines]


def test_chunks_are_written_per_block_and_resume_a_fresh_store(tmp_path):
    config = small_config(5)
    chunks = tmp_path / "chunks"
    report = run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    names = sorted(p.relative_to(chunks).as_posix() for p in chunks.glob("*/n*/*.csv.gz"))
    datasets = sorted({d.name for d in config.datasets})
    assert names == sorted(f"{d}/n30/reps{a}.csv.gz" for d in datasets for a in ("0000-0001", "0002-0003", "0004-0004"))
    assert len(report.chunks_written) == len(names)
    for path in chunks.glob("*/n*/*.csv.gz"):
        tasks = read_chunk(path)
        assert all(len(t["rows"]) == len(config.methods) for t in tasks)
    # a fresh store, the same chunks: nothing is computed again, every row is back
    again = run_study(config, tmp_path / "b.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    assert again.computed == 0 and again.already == again.total == len(config.tasks())
    with ResultStore(tmp_path / "a.sqlite") as a, ResultStore(tmp_path / "b.sqlite") as b:
        ra = {(r["dataset"], r["rep"], r["method"]): r for r in a.results()}
        rb = {(r["dataset"], r["rep"], r["method"]): r for r in b.results()}
        assert ra.keys() == rb.keys()
        for k in ra:
            for c in ("low", "high", "centre", "width", "covered"):
                assert rb[k][c] == pytest.approx(ra[k][c], rel=1e-11, abs=1e-12)
    assert load_chunks(chunks, config, tmp_path / "c.sqlite", size=2) == len(config.tasks())


@pytest.mark.parametrize("keep_progress", [True, False])
def test_an_interrupted_run_resumed_from_chunks_gives_the_same_chunks(tmp_path, keep_progress):
    config = small_config(4)
    whole = tmp_path / "whole"
    run_study(config, tmp_path / "w.sqlite", n_jobs=1, progress=False, chunks=whole, chunk_size=2)
    assert not list(whole.glob("*/n*/partial-*"))
    parts = tmp_path / "parts"
    first = run_study(config, tmp_path / "p1.sqlite", n_jobs=1, progress=False, chunks=parts, chunk_size=2,
                      max_tasks=3)
    assert first.computed == 3 and len(first.chunks_written) == 1     # the first block only
    (progress,) = parts.glob("*/n*/partial-*")                        # the third task: its block in progress
    (task,) = read_chunk(progress)
    assert progress.name == "partial-reps0002-0003.csv.gz" and task["rep"] == 2
    assert load_chunks(parts, config, tmp_path / "tables.sqlite", size=2) == 2   # the tables: whole blocks only
    if not keep_progress:
        progress.unlink()
    # the next session has lost the store: only the committed files are there
    second = run_study(config, tmp_path / "p2.sqlite", n_jobs=1, progress=False, chunks=parts, chunk_size=2)
    before = 3 if keep_progress else 2
    assert second.already == before and second.computed == len(config.tasks()) - before
    files = sorted(p.relative_to(whole) for p in whole.glob("*/n*/*.csv.gz"))
    assert files == sorted(p.relative_to(parts) for p in parts.glob("*/n*/*.csv.gz"))   # no partial file left
    for f in files:
        assert rows(whole / f) == rows(parts / f)


def test_a_partial_file_left_beside_its_whole_chunk_is_removed_not_loaded(tmp_path):
    config = small_config(2)
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    whole = next(chunks.glob("*/n*/reps*.csv.gz"))
    stale = whole.with_name("partial-" + whole.name)
    stale.write_bytes(b"not a chunk")          # would be refused as damaged if it were read
    again = run_study(config, tmp_path / "b.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    assert again.computed == 0 and not stale.exists()


def test_a_chunk_is_never_rewritten_and_another_protocol_is_refused(tmp_path):
    config = small_config(2)
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    path = next(chunks.glob("*/n*/*.csv.gz"))
    stamp = path.stat().st_mtime_ns
    run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    assert path.stat().st_mtime_ns == stamp
    other = parse_config(SMOKE.read_text().replace("repetitions = 4", "repetitions = 2").replace(
        "seed = 12345", "seed = 7"), source="other")
    with pytest.raises(StoreMismatchError, match="another protocol"):
        ChunkDir(chunks, other, 2)
    with pytest.raises(StoreMismatchError):
        ChunkDir(chunks, config, 3)               # another chunk size
    with pytest.raises(ValueError, match="size"):
        ChunkDir(tmp_path / "x", config, 0)


def test_repetitions_per_size():
    text = SMOKE.read_text().replace("repetitions = 4", "repetitions = {30 = 3, 50 = 2}").replace(
        "sizes = [30]", "sizes = [30, 50]")
    config = parse_config(text, source="t")
    per = {n: sum(1 for t in config.tasks() if t.n == n) for n in (30, 50)}
    assert per == {30: 3 * len(config.datasets), 50: 2 * len(config.datasets)}
    assert config.repetitions_for(50) == 2 and config.repetitions == 3
    with pytest.raises(ConfigError, match="not one of `sizes`"):
        parse_config(text.replace("50 = 2", "60 = 2"), source="t")
    with pytest.raises(ConfigError, match="no number for the size"):
        parse_config(text.replace(", 50 = 2", ""), source="t")


def test_the_second_study_configuration():
    from cudbound.coverage import load_config
    from cudbound.registry import MODERN_METHODS, METHODS
    config = load_config(SMOKE.parent / "study2.toml")
    assert config.methods == METHODS + MODERN_METHODS and config.sizes == (30, 50, 100)
    assert [config.repetitions_for(n) for n in config.sizes] == [1000, 1000, 500]
    assert len(config.datasets) == 12 and len(config.tasks()) == 12 * 2500
    paper = load_config(SMOKE.parent / "paper.toml")
    assert config.seed == paper.seed       # the paper study's tasks draw the same training sets
    assert config.task_seed(config.tasks()[0]).spawn_key == paper.task_seed(paper.tasks()[0]).spawn_key


def test_raising_repetitions_supersedes_the_partial_last_chunk(tmp_path):
    """3 repetitions in blocks of 2 leave a partial chunk reps0002-0002; raised to 4, the full
    block reps0002-0003 replaces it, and every task is counted once."""
    import importlib.util
    chunks = tmp_path / "chunks"
    run_study(small_config(3), tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    run_study(small_config(4), tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    for d in {d.name for d in small_config(4).datasets}:
        assert sorted(p.name for p in (chunks / d / "n30").iterdir()) == ["reps0000-0001.csv.gz", "reps0002-0003.csv.gz"]
    root = Path(__file__).resolve().parents[2] / "paper_figures"
    import sys
    sys.path.insert(0, str(root))
    spec = importlib.util.spec_from_file_location("study2_tables_t", root / "study2_tables.py")
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    assert {c["reps"] for c in tables.cells(chunks)} == {4}


def test_a_changed_default_changes_the_protocol():
    """The protocol holds the defaults the study leaves unset, so rows made under another default
    (Kohavi's form changed from Wald to Wilson) cannot be mixed in."""
    config = small_config(2)
    assert config.protocol()["defaults"]["kohavi"]["form"] == "wilson"
    pinned = parse_config(SMOKE.read_text() + '\n[options.kohavi]\nform = "wald"\n', source="pinned")
    assert pinned.protocol()["methods"]["kohavi"][1]["form"] == "wald"
    assert "form" not in pinned.protocol()["defaults"]["kohavi"] and pinned.fingerprint() != config.fingerprint()
    paper = parse_config((SMOKE.parent / "paper.toml").read_text(), source="paper")
    assert paper.options["kohavi"]["form"] == "wald"      # the stored paper study used the Wald form


def test_engine_options_are_recorded_field_by_field():
    """CUD's engine settings are one option, ``engine_options`` (a TOML table); the protocol records
    each field under its own name, the ones set among the options and the others among the
    defaults, so that a protocol reads as it did when they were options of their own."""
    config = small_config(2)
    defaults = config.protocol()["defaults"]["cud"]
    assert {"engine": "auto", "solver": None, "max_nodes": None, "exact_distribution": False,
            "scheduler": None}.items() <= defaults.items() and "engine_options" not in defaults
    assert "replicate_time_limit" not in defaults     # left out at its default, None (as before)
    pinned = parse_config(SMOKE.read_text() + '\n[options.cud.engine_options]\nmax_nodes = 1000\n', source="pinned")
    assert pinned.options["cud"]["engine_options"] == {"max_nodes": 1000}
    assert pinned.protocol()["methods"]["cud"][1]["max_nodes"] == 1000
    assert "max_nodes" not in pinned.protocol()["defaults"]["cud"]
    assert pinned.protocol()["defaults"]["cud"]["engine"] == "auto" and pinned.fingerprint() != config.fingerprint()


@pytest.mark.parametrize("name, directory", [("study2", "chunks_shared_basis"), ("sensitivity", "chunks"),
                                             ("study3", "chunks_shared_basis")])
def test_committed_chunks_of_the_earlier_rule_differ_from_the_shipped_protocol_in_the_refit_rule_only(name, directory):
    """The chunks made before every refit refitted the basis (kept as the record of that protocol):
    their protocol is the shipped one without its ``refits`` entry (the runner refuses them for a
    rerun). Any other change to the config code or a default that altered the protocol would show here."""
    stamp = ROOT / "results" / name / directory / "protocol.json"
    if not stamp.exists():
        pytest.skip(f"no committed chunks for {name}")
    config = load_config(ROOT / "experiments" / f"{name}.toml")
    shipped = json.loads(json.dumps(config.protocol()))
    assert shipped.pop("refits")["rule"] == REFIT_RULE
    assert json.loads(stamp.read_text())["protocol"] == shipped


@pytest.mark.parametrize("name, directory, toml", [("study2", "chunks", "study2"), ("study3", "chunks", "study3"),
                                                   ("study3_null", "chunks", "study3_null"),
                                                   ("study3", "chunks_cud", "study3_cud"),
                                                   ("study3_null", "chunks_cud", "study3_null_cud")])
def test_committed_chunks_of_the_current_rule_have_the_shipped_protocol(name, directory, toml):
    """results/<study>/chunks (and the `cud` supplements' chunks_cud), run under the current refit
    rule: their protocol is the shipped one, so that a run resumes them. Found resuming the study: a progress
    option added to the `cud` comparison entered the protocol's defaults and the runner refused the
    committed supplements."""
    stamp = ROOT / "results" / name / directory / "protocol.json"
    if not stamp.exists():
        pytest.skip(f"no committed chunks for {name}/{directory} under the current refit rule yet")
    config = load_config(ROOT / "experiments" / f"{toml}.toml")
    assert json.loads(stamp.read_text())["protocol"] == json.loads(json.dumps(config.protocol()))
    ChunkDir(stamp.parent, config, size=json.loads(stamp.read_text())["chunk_size"])   # the runner's own check


@pytest.mark.parametrize("damage", [b"not gzip at all", gzip.compress(b"dataset,n\nx,notanumber\n", mtime=0)],
                         ids=["not gzip", "gzip of a bad table"])   # ids stable across processes (pytest-xdist)
def test_a_damaged_chunk_is_named_in_one_error(tmp_path, capsys, damage):
    """Found in review: a damaged chunk file escaped the command line as a traceback."""
    from cudbound.cli import main
    config = small_config(2)
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    victim = sorted(chunks.glob("*/n*/*.csv.gz"))[0]
    victim.write_bytes(damage)
    with pytest.raises(ValueError, match=r"the chunk file .* is damaged"):
        run_study(config, tmp_path / "b.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    study = tmp_path / "study.toml"
    study.write_text(SMOKE.read_text().replace("repetitions = 4", "repetitions = 2"))
    assert main(["coverage", "--config", str(study), "--store", str(tmp_path / "c.sqlite"), "--chunks", str(chunks),
                 "--chunk-size", "2", "--jobs", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("cudbound: error:") == 1 and victim.name in err and "Traceback" not in err


def test_a_partial_file_removed_by_another_run_while_loading_is_skipped(tmp_path, monkeypatch):
    """Runs sharing a chunk directory: another run completes a block (writes its chunk, removes its partial
    file) between this run's listing of the partial files and its reading of them. The vanished partial
    file is skipped (its tasks are in the chunk and the shared store); a vanished chunk is an error."""
    from cudbound.coverage import chunks as chunks_module

    config = small_config(3)
    chunks = tmp_path / "chunks"
    run_study(config, tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2, max_tasks=1)
    partial = chunks_module.partial_files(chunks)
    assert len(partial) == 1
    listed = chunks_module.partial_files

    def listed_then_removed(directory):
        found = listed(directory)
        for path in found:
            path.unlink()           # the other run's removal, after this run listed the file
        return found

    monkeypatch.setattr(chunks_module, "partial_files", listed_then_removed)
    with ResultStore(tmp_path / "b.sqlite", config) as store:
        assert ChunkDir(chunks, config, 2).load_into(store, partial=True) == 0
    monkeypatch.setattr(chunks_module, "partial_files", listed)
    run_study(config, tmp_path / "c.sqlite", n_jobs=1, progress=False, chunks=chunks, chunk_size=2)
    whole = sorted(chunks.glob("*/n*/reps*.csv.gz"))
    real_existing = ChunkDir.existing

    def existing_then_removed(self):
        found = real_existing(self)
        found[0].unlink()
        return found

    monkeypatch.setattr(ChunkDir, "existing", existing_then_removed)
    with ResultStore(tmp_path / "d.sqlite", config) as store:
        with pytest.raises(ValueError, match="vanished while it was read; a chunk is never removed"):
            ChunkDir(chunks, config, 2).load_into(store)
    assert whole
