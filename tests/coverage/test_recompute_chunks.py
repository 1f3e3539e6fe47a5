"""experiments/recompute_chunks.py: the sample it draws from committed chunks and the comparison it
makes (the recomputation itself is ``run_task``'s, tested in ``test_study3_cud.py``)."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("experiments_recompute_chunks",
                                                  ROOT / "experiments" / "recompute_chunks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sample_is_per_data_set_reproducible_and_within_the_time_cap():
    rc = _script()
    chunks = ROOT / "results" / "study3" / "chunks_cud"
    a = rc.sample_tasks(chunks, 2, 5.0, seed=1, datasets={"spam", "donut"})
    b = rc.sample_tasks(chunks, 2, 5.0, seed=1, datasets={"spam", "donut"})
    assert [(t["dataset"], t["n"], t["rep"]) for t in a] == [(t["dataset"], t["n"], t["rep"]) for t in b]
    assert sorted({t["dataset"] for t in a}) == ["donut", "spam"] and len(a) == 4
    assert all(float(t["seconds"]) <= 5.0 for t in a)
    c = rc.sample_tasks(chunks, 2, 5.0, seed=2, datasets={"spam", "donut"})
    assert [t["rep"] for t in c] != [t["rep"] for t in a]


def test_a_committed_task_agrees_with_itself_and_any_moved_number_is_named():
    rc = _script()
    (stored,) = rc.sample_tasks(ROOT / "results" / "study3" / "chunks_cud", 1, 1e9, seed=0, datasets={"spam"})
    assert rc.compare(stored, copy.deepcopy(stored), 1e-10) == []
    method = stored["rows"][0]["method"]
    for key, bump, name in (("true_error", 1e-9, "true_error"), ("high", 1e-6, f"{method}.high"),
                            ("target", 1e-9, f"{method}.target")):
        new = copy.deepcopy(stored)
        holder = new if key == "true_error" else new["rows"][0]
        holder[key] = float(holder[key]) + bump
        assert rc.compare(stored, new, 1e-10) == [name]
    new = copy.deepcopy(stored)
    new["rows"][0]["high"] = float(new["rows"][0]["high"]) * (1 + 1e-12)   # within the tolerance
    assert rc.compare(stored, new, 1e-10) == []
