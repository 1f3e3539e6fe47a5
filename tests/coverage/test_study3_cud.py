"""The supplementary studies of `cud` on the third study's tasks (experiments/study3_cud.toml,
study3_null_cud.toml): the same tasks as their base studies, rows of their own, the base untouched."""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from cudbound.coverage import ConfigError, Task, load_config, parse_config
from cudbound.coverage.auc_tasks import run_auc_task
from cudbound.coverage.chunks import ChunkDir, _text, chunk_files, read_chunk
from cudbound.coverage.store import StoreMismatchError
from cudbound.datasets import get_dataset

ROOT = Path(__file__).resolve().parents[2]
EXP = ROOT / "experiments"
PAIRS = [("study3_cud", "study3", "study3"), ("study3_null_cud", "study3_null", "study3_null")]


def _tables_script():
    sys.path.insert(0, str(ROOT / "paper_figures"))
    spec = importlib.util.spec_from_file_location("paper_figures_study3_tables", ROOT / "paper_figures" / "study3_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("supplement, base, results", PAIRS)
def test_a_supplement_is_its_base_study_with_cud_alone(supplement, base, results):
    """The same seed, sizes, repetitions, level, test size, loss, cv and data set entries, hence the
    same tasks and task seeds; one row per task, compare.cud; the protocol entries that fix the
    draws and targets equal the base chunks' protocol.json, which the base configuration still writes."""
    sup, old = load_config(EXP / f"{supplement}.toml"), load_config(EXP / f"{base}.toml")
    for field in ("seed", "sizes", "confidence_level", "test_size", "loss", "cv", "datasets"):
        assert getattr(sup, field) == getattr(old, field), field
    assert sup.methods == ("compare.cud",) and sup.method_of == {"compare.cud": "cud"}
    # the base's repetitions, or the first K of each cell (a staged run): a subset of the base's tasks
    assert all(0 < sup.repetitions_for(n) <= old.repetitions_for(n) for n in old.sizes)
    assert sup.tasks() == [t for t in old.tasks() if t.rep < sup.repetitions_for(t.n)]
    for task in sup.tasks()[::997]:
        assert sup.task_seed(task).entropy == old.task_seed(task).entropy
        assert sup.task_seed(task).spawn_key == old.task_seed(task).spawn_key
    committed = json.loads((ROOT / "results" / results / "chunks" / "protocol.json").read_text())["protocol"]
    assert committed == json.loads(json.dumps(old.protocol()))
    mine = sup.protocol()
    assert all(mine.get(k) == committed.get(k) for k in _tables_script().SAME_PROTOCOL)
    assert mine["methods"] == {"compare.cud": ["cud", {}]}


def test_a_study_needs_an_auc_interval_or_a_comparison():
    text = (EXP / "study3_cud.toml").read_text().replace('comparisons = ["cud"]', "comparisons = []")
    with pytest.raises(ConfigError, match="needs an AUC interval"):
        parse_config(text)


@pytest.mark.parametrize("supplement, base, results, dataset, n, rep", [
    ("study3_cud", "study3", "study3", "outlier", 30, 3), ("study3_cud", "study3", "study3", "heart", 30, 0),
    ("study3_null_cud", "study3_null", "study3_null", "null_nonlinear", 30, 1)])
def test_a_supplementary_task_has_the_base_tasks_draw_and_target(supplement, base, results, dataset, n, rep):
    """Computed (B = 40 replicates for speed): the supplementary task's draw columns and its cud row's
    target and target SE equal, bit for bit, those of the base study's task computed with one of its
    comparisons (McNemar's), and, to the chunks' 12 digits, the committed base task's."""
    data_home = os.environ.get("CUDBOUND_DATA")
    if get_dataset(dataset).kind == "real" and not data_home:
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    sup = load_config(EXP / f"{supplement}.toml")
    sup = dataclasses.replace(sup, options={"compare.cud": {"n_resamples": 40}})
    text = (EXP / f"{base}.toml").read_text()
    start = text.index("methods = [")
    stop = text.index("[[datasets]]", start)       # the AUC intervals' option tables go too
    old = parse_config(text[:start] + 'methods = []\ncomparisons = ["mcnemar"]\n\n' + text[stop:])
    task = Task(dataset, n, rep)
    new, ref = run_auc_task(sup, task, data_home), run_auc_task(old, task, data_home)
    (cud,), (mcnemar,) = new["rows"], ref["rows"]
    assert cud["method"] == "compare.cud" and cud["low"] <= cud["centre"] <= cud["high"]
    assert cud["conservative"] == 0 and cud["half_width"] >= 0
    for key in ("train_error", "true_error", "test_size", "redraws"):
        assert new[key] == ref[key], key
    assert cud["target"] == mcnemar["target"]
    assert cud["details"]["target_se"] == mcnemar["details"]["target_se"]
    assert cud["covered"] == int(cud["low"] <= cud["target"] <= cud["high"])
    committed = [t for p in chunk_files(ROOT / "results" / results / "chunks")
                 if f"/{dataset}/n{n}/" in p.as_posix() for t in read_chunk(p) if t["rep"] == rep]
    if not committed:
        pytest.skip(f"{dataset} n = {n} rep {rep} is not committed")
    (stored,) = committed
    assert [_text(float(new[k])) for k in ("train_error", "true_error")] == \
        [_text(stored[k]) for k in ("train_error", "true_error")]
    row = next(r for r in stored["rows"] if r["method"] == "compare.mcnemar")
    assert (_text(cud["target"]), _text(cud["details"]["target_se"])) == \
        (_text(row["target"]), _text(row["details"]["target_se"]))


@pytest.mark.parametrize("dataset, n, rep", [("spam", 30, 17), ("spam", 50, 133), ("donut", 50, 61)])
def test_a_committed_cud_row_is_recomputed_exactly(dataset, n, rep):
    """A committed row of ``chunks_cud`` (study3_cud, B = 500, no budget: the exact interval) is what
    the code computes for its task today: the draw columns and the target to the chunks' 12 digits, the
    interval, its centre and half-width to 1e-10 (the node solvers' rounding differs between machines),
    the same coverage, and the search exact (``conservative`` 0). Donut is
    simulated, so one case runs without the UCI files."""
    data_home = os.environ.get("CUDBOUND_DATA")
    if get_dataset(dataset).kind == "real" and not data_home:
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    committed = [t for p in chunk_files(ROOT / "results" / "study3" / "chunks_cud")
                 if f"/{dataset}/n{n}/" in p.as_posix() for t in read_chunk(p) if t["rep"] == rep]
    assert len(committed) == 1, f"{dataset} n = {n} rep {rep} is committed once in results/study3/chunks_cud"
    (stored,) = committed
    new = run_auc_task(load_config(EXP / "study3_cud.toml"), Task(dataset, n, rep), data_home)
    for key in ("train_error", "true_error"):
        assert _text(float(new[key])) == _text(stored[key]), key
    assert (new["test_size"], new["redraws"]) == (stored["test_size"], stored["redraws"])
    (row,), (old,) = new["rows"], stored["rows"]
    assert row["method"] == old["method"] == "compare.cud"
    assert _text(float(row["target"])) == _text(old["target"])
    for key in ("low", "high", "centre", "half_width"):
        # the node solvers' minima carry the machine's rounding (an AVX-512 machine moved spam n = 30 rep 17's
        # ends by 4e-12 from the AVX2 machine's that committed it): 1e-10, not the chunks' 12 digits
        assert float(row[key]) == pytest.approx(old[key], rel=1e-10, abs=1e-12), key
    assert row["covered"] == old["covered"] and row["conservative"] == old["conservative"] == 0


@pytest.mark.parametrize("supplement, results", [("study3_cud", "study3"), ("study3_null_cud", "study3_null")])
def test_the_supplement_cannot_write_into_the_base_chunks(supplement, results):
    """Its protocol differs from the base chunks', so a run of the supplement pointed at them is refused
    before anything is written; the committed files are unchanged."""
    directory = ROOT / "results" / results / "chunks"
    before = hashlib.sha256((directory / "protocol.json").read_bytes()).hexdigest()
    files = len(chunk_files(directory))
    with pytest.raises(StoreMismatchError):
        ChunkDir(directory, load_config(EXP / f"{supplement}.toml"))
    assert hashlib.sha256((directory / "protocol.json").read_bytes()).hexdigest() == before
    assert len(chunk_files(directory)) == files
