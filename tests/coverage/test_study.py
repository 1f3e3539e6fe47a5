"""The coverage-study runner: configuration, tasks, the resumable store, workers, Dask, CLI."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from store_rows import stored

from cudbound.cli import main
from cudbound.coverage import (ConfigError, ResultStore, StoreMismatchError, Task, load_config, parse_config,
                               run_study, run_task)
from cudbound.coverage.tasks import _usable, draw_split
from cudbound.fit import predict_signs

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.toml"
PAPER = ROOT / "experiments" / "paper.toml"


def small_config(reps=3, extra=""):
    text = SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}") + extra
    return parse_config(text, source="smoke")


# ------------------------------------------------------------------ configuration

def test_shipped_configs_parse():
    paper = load_config(PAPER)
    assert len(paper.datasets) == 12 and paper.sizes == (30, 50) and paper.repetitions >= 200
    assert paper.methods == ("cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford")
    assert paper.options["cud"]["n_resamples"] == 500 and paper.confidence_level == 0.95
    assert len(paper.tasks()) == 12 * 2 * paper.repetitions
    smoke = load_config(SMOKE)
    assert smoke.method_of["cud_alpha_1"] == "cud"
    assert smoke.method_options("cud_alpha_1", 30)["alpha_n"] == 1.0
    assert smoke.method_options("cud", 30)["alpha_n"] == 30.0


@pytest.mark.parametrize("rule, n, value", [("1", 50, 1.0), ("sqrt(n)", 49, 7.0), ("n", 30, 30.0),
                                            ("n^2", 30, 900.0), (2.5, 30, 2.5)])
def test_alpha_rules(rule, n, value):
    from cudbound.coverage.config import alpha_value
    assert alpha_value(rule, n) == value


@pytest.mark.parametrize("edit, message", [
    (("seed = 12345", ""), "must set `seed`"),
    (("seed = 12345", "seed = -1"), "non-negative integer"),
    (("repetitions = 4", "repetitions = 0"), "positive integer"),
    (("sizes = [30]", "sizes = [30, 30]"), "twice"),
    (('name = "donut"', 'name = "nosuch"'), "unknown data set"),
    (('"langford",', '"langford", "wilson",'), "unknown method"),
    (('method = "cud"\n', ''), "variant needs `method"),
    (('alpha_n = "1"', 'alpha_n = "log(n)"'), "alpha_n rule"),
    (("n_boot = 20", 'n_boot = 20\nloss = "squared"'), "set the loss once"),
    (("confidence_level = 0.95", "confidence_level = 95"), "confidence_level"),
    (("[options.bs2]", "[options.bs3]"), "do not match any label"),
    (("[study]", "[stduy]\n[study]"), "unknown top-level"),
    (('name = "three_points"', 'name = "three_points"\nbasis = "cubic"'), "bad basis"),
    (("[study]", "[study"), "not valid TOML"),
    (('name = "three_points"', 'name = "donut"'), "listed twice under the label"),
    (('name = "three_points"', 'name = "donut"\nlabel = "Donut/2"'), "`label` must be"),
    (('name = "three_points"', 'name = "three_points"\nsizes = [50]'), "`sizes` must be a non-empty"),
    (('name = "three_points"', 'name = "three_points"\nsize = [30]'), "unknown key"),
    (('name = "three_points"', 'name = "three_points"\nsizes = []'), "`sizes` must be a non-empty"),
    (('name = "three_points"', 'name = "three_points"\nsizes = [[30]]'), "`sizes` must be a non-empty"),
    (('name = "three_points"', 'name = "three_points"\nsizes = ["30"]'), "`sizes` must be a non-empty"),
    (('name = "three_points"', 'name = "three_points"\nlabel = "donut"'), "name of another data set"),
])
def test_bad_configs_are_refused_with_the_key_named(edit, message):
    text = SMOKE.read_text().replace(*edit)
    with pytest.raises(ConfigError, match=message):
        parse_config(text)


BASES = """
[[datasets]]
name = "donut"
label = "donut-linear"
basis = "linear"
sizes = [50]

[[datasets]]
name = "donut"
label = "donut-poly3"
basis = "poly:3"
"""


def labelled_config(reps=2):
    text = SMOKE.read_text().replace("repetitions = 4", f"repetitions = {reps}").replace("sizes = [30]", "sizes = [30, 50]")
    return parse_config(text + BASES, source="labelled")


def test_entries_of_one_data_set_under_labels_have_their_own_tasks_sizes_and_bases():
    config = labelled_config(2)
    tasks = config.tasks()
    by_label = {}
    for t in tasks:
        by_label.setdefault(t.dataset, set()).add(t.n)
    assert by_label == {"donut": {30, 50}, "three_points": {30, 50}, "donut-linear": {50}, "donut-poly3": {30, 50}}
    assert len(tasks) == 2 * (2 + 2 + 1 + 2)
    assert config.dataset("donut-linear").name == "donut" and config.dataset("donut-linear").basis == "linear"
    protocol = config.protocol()
    assert protocol["bases"]["donut-poly3"] == "poly:3" and protocol["sources"]["donut-linear"] == "donut"
    # an unlabelled study's protocol (and so its stores and chunks) is as before: no `sources`
    assert "sources" not in small_config().protocol()
    with pytest.raises(KeyError):
        config.task_seed(Task("no-such-label", 30, 0))


def test_labels_of_one_data_set_share_the_training_draw_and_differ_in_basis():
    config = labelled_config(1)
    a, b, c = (run_task(config, Task(label, 50, 0)) for label in ("donut", "donut-linear", "donut-poly3"))
    assert a["dataset"] == "donut" and b["dataset"] == "donut-linear"
    assert config.task_seed(Task("donut-poly3", 50, 0)).generate_state(4).tolist() == \
        config.task_seed(Task("donut", 50, 0)).generate_state(4).tolist()
    draws = [draw_split(config, Task(label, 50, 0), np.random.default_rng(config.task_seed(Task(label, 50, 0)).spawn(2)[0]))
             for label in ("donut", "donut-linear", "donut-poly3")]
    assert all(d[6] == 0 for d in draws)          # no redraws: the same training set
    for d in draws[1:]:
        np.testing.assert_array_equal(d[0], draws[0][0])
        np.testing.assert_array_equal(d[1], draws[0][1])
    assert [d[5].shape[1] for d in draws] == [6, 3, 10]   # donut's own poly:2, linear, poly:3 on 2 features
    assert b["train_error"] != a["train_error"] or b["true_error"] != a["true_error"]


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.toml")


def test_task_seeds_depend_on_the_task_only():
    a, b = small_config(3), small_config(50)
    t = Task("donut", 30, 2)
    assert a.task_seed(t).generate_state(4).tolist() == b.task_seed(t).generate_state(4).tolist()
    others = [Task("donut", 30, 1), Task("donut", 50, 2), Task("three_points", 30, 2)]
    states = {tuple(a.task_seed(x).generate_state(4)) for x in [t] + others}
    assert len(states) == 4


# ------------------------------------------------------------------ one task

def test_run_task_is_deterministic_and_scores_the_fitted_classifier():
    config = small_config()
    task = Task("donut", 30, 1)
    first, second = run_task(config, task), run_task(config, task)

    def strip(out):
        return [{k: ({d: x for d, x in v.items() if "seconds" not in d} if k == "details" else v)
                 for k, v in r.items() if k != "seconds"} for r in out["rows"]]
    assert strip(first) == strip(second) and first["true_error"] == second["true_error"]
    assert [r["method"] for r in first["rows"]] == list(config.methods)
    # independent recomputation of the true error: same draw, least squares by numpy
    data_ss, _ = config.task_seed(task).spawn(2)
    Xtr, ytr, Xte, yte, basis, design, _ = draw_split(config, task, np.random.default_rng(data_ss))
    assert Xte.shape[0] == config.test_size
    beta = np.linalg.lstsq(design, ytr, rcond=None)[0]
    assert first["true_error"] == pytest.approx(np.mean(predict_signs(basis.transform(Xte), beta) != yte), abs=1e-12)
    assert first["train_error"] == pytest.approx(np.mean(predict_signs(design, beta) != ytr), abs=1e-12)
    for row in first["rows"]:
        assert 0.0 <= row["low"] <= row["high"] <= 1.0
        assert row["covered"] == int(row["low"] <= first["true_error"] <= row["high"])
        assert row["width"] == pytest.approx(row["high"] - row["low"])
    cud = first["rows"][0]
    assert cud["centre"] == pytest.approx(first["train_error"]) and cud["alpha_n"] == 30.0
    assert first["rows"][-1]["alpha_n"] == 1.0


def test_variant_shares_the_bootstrap_resamples_of_its_method():
    """cud and cud_alpha_1 get the same seed: with alpha_n = 1 the neighbourhood is larger,
    so every replicate supremum, hence the half-width, can only grow."""
    config = small_config()
    out = run_task(config, Task("three_points", 30, 0))
    rows = {r["method"]: r for r in out["rows"]}
    assert rows["cud_alpha_1"]["half_width"] >= rows["cud"]["half_width"] - 1e-12


def test_bs1_and_bs2_share_their_bootstrap_distribution_as_in_the_paper():
    out = run_task(small_config(), Task("donut", 30, 0))
    rows = {r["method"]: r for r in out["rows"]}
    assert rows["bs1"]["width"] == pytest.approx(rows["bs2"]["width"], abs=1e-12)


def test_degenerate_draws_are_recognised():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 2))
    assert _usable("linear", X, np.ones(10)) is None                       # one class
    y = np.where(rng.random(10) < 0.5, 1, -1)
    y[:2] = [1, -1]
    assert _usable("linear", np.column_stack([X, 2 * X[:, 0]]), y) is None  # rank-deficient design
    assert _usable("linear", X, y) is not None


def test_real_data_split_is_a_partition(shared_data):
    config = parse_config(SMOKE.read_text().replace('name = "three_points"', 'name = "liver"'))
    task = Task("liver", 30, 0)
    Xtr, ytr, Xte, yte, *_ = draw_split(config, task, np.random.default_rng(1), shared_data)
    from cudbound.datasets import load
    full = load("liver", shared_data)
    assert Xtr.shape[0] == 30 and Xtr.shape[0] + Xte.shape[0] == full.X.shape[0]
    both = np.vstack([Xtr, Xte])
    order = np.lexsort(both.T)
    np.testing.assert_array_equal(np.sort(np.concatenate([ytr, yte])), np.sort(full.y))
    np.testing.assert_array_equal(both[order], full.X[np.lexsort(full.X.T)])


# ------------------------------------------------------------------ store and runner

def test_store_refuses_another_protocol_and_accepts_more_repetitions(tmp_path):
    path = tmp_path / "s.sqlite"
    run_study(small_config(1), path, n_jobs=1, progress=False)
    report = run_study(small_config(2), path, n_jobs=1, progress=False)   # more repetitions: added
    assert report.already == 2 and report.computed == 2
    other = parse_config(SMOKE.read_text().replace("seed = 12345", "seed = 1"))
    with pytest.raises(StoreMismatchError, match="seed: store has 12345, configuration has 1"):
        run_study(other, path, n_jobs=1, progress=False)
    with ResultStore(path) as store:
        assert len(store.tasks()) == 4
        assert store.write({**run_task(small_config(), Task("donut", 30, 0))}) is False  # never a duplicate


def test_resume_after_a_partial_run_gives_the_rows_of_a_whole_run(tmp_path):
    config = small_config(3)
    run_study(config, tmp_path / "whole.sqlite", n_jobs=1, progress=False)
    first = run_study(config, tmp_path / "part.sqlite", n_jobs=1, progress=False, max_tasks=2)
    assert first.computed == 2 and first.remaining == 4
    second = run_study(config, tmp_path / "part.sqlite", n_jobs=1, progress=False)
    assert second.already == 2 and second.computed == 4 and second.remaining == 0
    assert stored(tmp_path / "part.sqlite") == stored(tmp_path / "whole.sqlite")


def test_one_and_two_workers_give_identical_rows(tmp_path):
    config = small_config(2)
    run_study(config, tmp_path / "one.sqlite", n_jobs=1, progress=False)
    run_study(config, tmp_path / "two.sqlite", n_jobs=2, progress=False)
    assert stored(tmp_path / "one.sqlite") == stored(tmp_path / "two.sqlite")


@pytest.mark.slow   # a Dask cluster: 16 s; one and two local workers give identical rows by default (above)
def test_dask_local_cluster_gives_identical_rows(tmp_path):
    distributed = pytest.importorskip("distributed")
    config = small_config(2)
    run_study(config, tmp_path / "one.sqlite", n_jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        report = run_study(config, tmp_path / "dask.sqlite", scheduler=cluster.scheduler_address, progress=False)
    assert report.computed == 4 and not report.failed
    assert stored(tmp_path / "one.sqlite") == stored(tmp_path / "dask.sqlite")


@pytest.mark.slow   # 9 s; test_resume_after_a_partial_run_gives_the_rows_of_a_whole_run covers resuming by default
def test_kill_minus_nine_and_resume_loses_nothing_and_duplicates_nothing(tmp_path):
    """A run killed with SIGKILL part way, then rerun, yields exactly an uninterrupted run's rows."""
    config_path = tmp_path / "study.toml"
    config_path.write_text(SMOKE.read_text().replace("repetitions = 4", "repetitions = 6"))
    run_study(load_config(config_path), tmp_path / "whole.sqlite", n_jobs=1, progress=False)
    store = tmp_path / "killed.sqlite"
    cmd = [sys.executable, "-m", "cudbound", "coverage", "--config", str(config_path), "--store", str(store),
           "--jobs", "1", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 120
        count = 0
        while time.time() < deadline and proc.poll() is None:
            if store.exists():
                try:
                    with sqlite3.connect(store, timeout=5) as db:
                        count = db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
                except sqlite3.OperationalError:
                    count = 0
                if count >= 3:
                    break
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    with ResultStore(store) as s:
        partial = len(s.tasks())
        assert 3 <= partial < 12
        assert len(s.results()) == partial * len(load_config(config_path).methods)  # whole tasks only
    assert main(cmd[3:]) == 0
    assert stored(store) == stored(tmp_path / "whole.sqlite")


# ------------------------------------------------------------------ command line

def test_cli_coverage_prints_the_table_and_resumes(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    args = ["coverage", "--config", str(SMOKE), "--store", str(store), "--jobs", "1", "--no-progress",
            "--max-tasks", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "8 tasks, 0 already stored, 2 computed now, 0 failed, 6 remaining" in out
    assert "coverage (mean width)" in out and "cud_alpha_1" in out
    assert main(args[:-2] + ["--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    run = record["details"]
    assert run["already"] == 2 and run["computed"] == 6 and run["remaining"] == 0
    cells = {(r["dataset"], r["method"]): r for r in record["results"]}
    cud = cells[("donut", "cud")]
    assert cud["reps"] == 4 and cud["quantity"] == "coverage"
    assert 0.0 <= cud["low"] <= cud["estimate"] <= cud["high"] <= 1.0


def test_cli_coverage_bad_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMOKE.read_text().replace('name = "donut"', 'name = "nosuch"'))
    assert main(["coverage", "--config", str(bad), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "unknown data set 'nosuch'" in capsys.readouterr().err
    assert main(["coverage", "--config", str(tmp_path / "none.toml"), "--store", str(tmp_path / "s.sqlite")]) == 2


def test_separable_draws_are_degenerate_for_the_logistic_loss():
    """A training set on which the logistic loss has no minimiser is redrawn, not a failed task."""
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([-1, -1, 1, 1])
    assert _usable("linear", X, y, "squared") is not None
    assert _usable("linear", X, y, "logistic") is None
    assert _usable("linear", X, y, "logistic_ridge:0.1") is not None
    config = parse_config(SMOKE.read_text().replace('loss = "squared"', 'loss = "logistic"')
                          .replace('"langford", "cud_alpha_1"]', '"langford"]')
                          .replace("[options.cud_alpha_1]\nmethod = \"cud\"\nn_resamples = 20\nalpha_n = \"1\"\n", ""))
    assert config.loss == "logistic"


def test_a_task_fits_the_basis_once_and_beta_hat_once(monkeypatch):
    """Two CUD labels and five baselines, one training draw: one basis fit, one beta-hat fit
    (the CUD rows use the task's fit: their coef is the task's, not a refit)."""
    import cudbound.basis as basis_mod
    import cudbound.coverage.tasks as tasks_mod
    import cudbound.fit as fit_mod

    config = small_config(reps=1)     # read first: its validation fits the bases to stand-in features
    calls = {"basis": 0, "fit": 0}
    real_fit, real_basis_fit = fit_mod.fit_classifier, basis_mod.Basis.fit

    def counting_fit(*args, **kwargs):
        calls["fit"] += 1
        return real_fit(*args, **kwargs)

    def counting_basis_fit(self, X):
        calls["basis"] += 1
        return real_basis_fit(self, X)

    monkeypatch.setattr(tasks_mod, "fit_classifier", counting_fit)
    monkeypatch.setattr(basis_mod.Basis, "fit", counting_basis_fit)
    import cudbound.cud as cud_mod
    monkeypatch.setattr(cud_mod, "fit_classifier", counting_fit)   # CUD's hook fits beta-hat there
    out = run_task(config, config.tasks()[0])
    assert out["redraws"] == 0
    assert calls == {"basis": 1, "fit": 1}
    assert {r["method"] for r in out["rows"]} == set(config.methods)


def test_reuse_takes_the_named_methods_rows_from_earlier_chunks_where_the_draw_is_the_same(tmp_path):
    """``[reuse]``: a run whose configuration names CUD's rows for reuse takes them, bit for bit and with
    their recorded seconds, from an earlier run's chunks (and computes every other method); a task
    whose recorded draw differs (here: its stored true error edited) computes CUD again, and the
    rows are the same either way."""
    import csv
    import gzip

    from cudbound.coverage.chunks import chunk_files, read_chunk
    earlier = tmp_path / "earlier"
    run_study(small_config(2), tmp_path / "a.sqlite", n_jobs=1, progress=False, chunks=earlier, chunk_size=2)
    files = chunk_files(earlier)
    victim = next(p for p in files if "donut" in p.as_posix())
    with gzip.open(victim, "rt", newline="") as fh:
        table = list(csv.DictReader(fh))
    for row in table:
        if row["rep"] == "1":
            row["true_error"] = "0.5"                            # a draw this run will not make
            row["seconds"] = row["seconds"] if row["method"] != "cud" else "999"
    with gzip.open(victim, "wt", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    config = small_config(2, f'\n[reuse]\nmethods = ["cud"]\nchunks = "{earlier.as_posix()}"\n')
    assert config.reuse_methods == ("cud",) and config.protocol() == small_config(2).protocol()
    old = {(t["dataset"], t["rep"]): t for p in chunk_files(earlier) for t in read_chunk(p)}
    for dataset, rep in [("donut", 0), ("donut", 1), ("three_points", 0)]:
        out = run_task(config, Task(dataset, 30, rep))
        fresh = run_task(small_config(2), Task(dataset, 30, rep))
        cud, recorded = out["rows"][0], {r["method"]: r for r in old[(dataset, rep)]["rows"]}["cud"]
        assert cud["method"] == "cud"
        for key in ("low", "high", "centre", "covered", "half_width"):
            assert f"{cud[key]:.12g}" == f"{fresh['rows'][0][key]:.12g}" == f"{recorded[key]:.12g}", key
        reused = (dataset, rep) != ("donut", 1)
        assert (cud["seconds"] == recorded["seconds"]) is reused
        assert [r["low"] for r in out["rows"][1:]] == [r["low"] for r in fresh["rows"][1:]]


@pytest.mark.parametrize("table, fragment", [
    ('[reuse]\nmethods = ["nope"]\nchunks = "x"', "the study's method labels"),
    ('[reuse]\nmethods = ["cud"]', "exactly `methods`"),
    ('[reuse]\nmethods = ["cud"]\nchunks = 3', "a directory")])
def test_a_bad_reuse_table_is_refused_with_the_key_named(table, fragment):
    with pytest.raises(ConfigError, match=fragment):
        small_config(2, "\n" + table + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("dataset, n, rep", [("spam", 30, 3), ("spam", 30, 61)])
def test_the_committed_study2_chunks_are_what_the_code_computes(dataset, n, rep):
    """A task of the second study's rerun (results/study2/chunks), recomputed from its seed by the code
    of today with CUD computed afresh (no ``[reuse]``), gives every committed row to the chunks' 12
    significant digits: the baselines' rows under today's refit rule, and CUD's rows, which the run
    took from the earlier run's chunks, bit for bit as text (skipped while the task is not committed).
    The search's node count is the engine's statistic, not a result: it changes when the search
    does (the probed starting values and cone flip costs of 2026-11-30 cut it; the interval stays),
    and is not compared."""
    import dataclasses

    from cudbound.coverage.chunks import _text, chunk_files, read_chunk
    data_home = os.environ.get("CUDBOUND_DATA")
    if not data_home:
        pytest.skip("real UCI files not available: set CUDBOUND_DATA to the directory with the raw files")
    committed = [t for path in chunk_files(ROOT / "results" / "study2" / "chunks")
                 if f"/{dataset}/n{n}/" in path.as_posix() for t in read_chunk(path) if t["rep"] == rep]
    if not committed:
        pytest.skip(f"{dataset} n = {n} rep {rep} is not committed yet")
    (task,) = committed
    config = dataclasses.replace(load_config(ROOT / "experiments" / "study2.toml"), reuse_methods=())
    out = run_task(config, Task(dataset, n, rep), data_home)
    assert _text(out["true_error"]) == _text(task["true_error"]) and out["redraws"] == task["redraws"]
    for new, old in zip(out["rows"], task["rows"], strict=True):
        assert new["method"] == old["method"]
        for key in ("low", "high", "centre", "covered", "half_width"):
            if old[key] is None:
                assert new.get(key) is None, (new["method"], key)
            else:
                assert _text(float(new[key])) == _text(float(old[key])), (new["method"], key)
