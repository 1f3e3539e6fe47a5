"""One task of a coverage study: draw, fit, build every interval, score it against the truth.

Protocol (Laber & Murphy 2008, section 5):

1. Draw the training set D. Real data: n rows drawn without replacement, the other
   rows are the test set T. Simulated: n points for D and ``test_size`` fresh points for T.
2. Fit beta-hat by minimising the loss on the basis (fitted on D only).
3. Build every interval from D alone, all methods on the same D.
4. The true error is the error of sign(phi(x)' beta-hat) on T; an interval covers when
   low <= true error <= high.

Degenerate draws. A training set with one class only, whose design matrix is
rank-deficient (e.g. a constant feature column in a small sample), or on which the loss
has no minimiser (linearly separable data with the logistic or exponential loss) has no
unique fit.
Such a draw is replaced by the next draw from the same task stream, and the number of
replacements is recorded (``redraws``): the study is conditional on a fit existing.
"""
from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Any
import warnings

import numpy as np

from ..basis import Basis, design_terms
from ..datasets import get_dataset
from ..fit import fit_classifier
from .._validation import encode_labels
from ..design import PreparedData
from ..registry import intervals_from_design
from ..losses import get_loss
from .auc_tasks import run_auc_task
from .chunks import _span, _text, read_chunk
from .config import REAL_BASIS, StudyConfig, Task, known_datasets
from .draws import MAX_REDRAWS, _jsonable, _usable
from .store import EXTRA_COLUMNS

__all__ = ["run_task", "draw_split", "known_datasets", "REAL_BASIS", "MAX_REDRAWS"]

def draw_split(config: StudyConfig, task: Task, rng: np.random.Generator,
               data_home: str | os.PathLike[str] | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Basis, np.ndarray, int]:
    """Training and test sets of ``task`` (redrawn while degenerate), with the fitted basis.

    Returns (Xtr, ytr, Xte, yte, basis, design, redraws).
    """
    spec = config.dataset(task.dataset)
    source = get_dataset(spec.name)
    for redraws in range(MAX_REDRAWS):
        Xtr, ytr, Xte, yte = source.draw(task.n, config.test_size, rng, data_home)
        ok = _usable(spec.basis, Xtr, ytr, config.loss)
        if ok is not None:
            return Xtr, ytr, Xte, yte, ok[0], ok[1], redraws
    raise RuntimeError(f"task {task}: {MAX_REDRAWS} training draws in a row had one class, a rank-deficient "
                       f"design with basis {spec.basis!r} or no minimiser of the {config.loss} loss; choose a "
                       f"smaller basis or a penalised loss.")


def _row(label, res, true_err):
    low, high = res.low, res.high
    row = {"method": label, "low": low, "high": high, "centre": float(res.estimate), "width": high - low,
           "covered": int(low <= true_err <= high), "seconds": float(res.seconds), "details": _jsonable(res.details)}
    if res.method == "cud":
        s = res.stats.summary()
        row.update({"conservative": int(res.conservative), "nodes_median": s["nodes_median"],
                    "nodes_total": s["nodes_total"], "solves_total": s["solves_total"], "not_exact": s["not_exact"],
                    "half_width": float(res.half_width), "alpha_n": float(res.alpha_n)})
    return row


def run_task(config: StudyConfig, task: Task, data_home: str | os.PathLike[str] | None = None) -> dict:
    """Run one task and return its rows (plain Python, ready for the store); a task of an AUC
    study (``kind = "auc"``) is run by :func:`cudbound.coverage.auc_tasks.run_auc_task`.

    The basis is fitted on the training set (by :func:`draw_split`) and beta-hat once
    (:func:`cudbound.fit.fit_classifier`): the true error scores that fit, and CUD uses it
    (:func:`cudbound.registry.intervals_from_design` with ``fitted``). The methods get the training
    features with the basis (a ``PreparedData``), so a method that refits on part of the training
    set refits the basis on that part too (:mod:`cudbound.refit`).

    Seeds: the task's SeedSequence (:meth:`StudyConfig.task_seed`) spawns two children,
    one for the data draw and one passed to :func:`cudbound.registry.intervals_from_design` as ``rng``. The
    methods named by their own label run in one call (so BS1 and BS2 share their
    bootstrap distribution, and every baseline the .632 centre, as in the paper); each
    variant label runs in a call of its own with the same seed, so variants of one
    method share its bootstrap resamples (common random numbers).
    """
    if config.kind == "auc":       # an AUC and comparison study: its own task
        return run_auc_task(config, task, data_home)
    t0 = time.perf_counter()
    data_ss, method_ss = config.task_seed(task).spawn(2)
    Xtr, ytr, Xte, yte, basis, design, redraws = draw_split(config, task, np.random.default_rng(data_ss), data_home)
    # the training set with its basis (fitted once, by draw_split): a method that refits on part of
    # it refits a copy of the basis on that part
    labels, encoding = encode_labels(ytr)
    data = PreparedData(design=design, labels=labels, label_encoding=encoding, feature_names=None, basis=basis,
                        loss=config.loss, X=Xtr, design_terms=design_terms(basis, Xtr, design))
    fitted = fit_classifier(data.design, data.labels, get_loss(config.loss), entry_terms=data.design_terms)
    train_err = fitted.train_error
    test_design = basis.transform(Xte)
    true_err = float(np.mean(fitted.predict(test_design, design_terms(basis, Xte, test_design)) != yte))
    rows: dict[str, dict] = reused_rows(config, task, train_err, true_err, len(yte), redraws)
    seen: set[str] = set()
    plain = [m for m in config.methods if config.method_of[m] == m and m not in rows]
    calls = ([plain] if plain else []) + [[m] for m in config.methods if m not in plain and m not in rows]
    for labels in calls:
        methods = [config.method_of[m] for m in labels]
        options: dict[str, Any] = {f"{config.method_of[m]}_options": config.method_options(m, task.n) for m in labels}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = intervals_from_design(data, None, methods=methods, confidence_level=config.confidence_level,
                                            rng=method_ss, fitted=fitted, **options)
        seen.update(f"{type(w.message).__name__}: {w.message}" for w in caught)
        for label, res in zip(labels, results):
            rows[label] = _row(label, res, true_err)
    return {"dataset": task.dataset, "n": task.n, "rep": task.rep, "train_error": float(train_err),
            "true_error": true_err, "test_size": int(len(yte)), "redraws": redraws,
            "warnings": sorted(seen), "seconds": time.perf_counter() - t0, "rows": [rows[m] for m in config.methods]}


@functools.lru_cache(maxsize=64)
def _reuse_files(directory: str) -> tuple:
    """((first, last) repetition, path) of each chunk file in one (data set, n) directory."""
    return tuple((_span(p), str(p)) for p in sorted(Path(directory).glob("reps*.csv.gz")))


@functools.lru_cache(maxsize=8)
def _reuse_chunk(path: str) -> dict:
    """(data set, n, rep) -> task, from one chunk file of the reuse directory (cached per process)."""
    return {(t["dataset"], t["n"], t["rep"]): t for t in read_chunk(path)} if os.path.exists(path) else {}


def reused_rows(config: StudyConfig, task: Task, train_error: float, true_error: float, test_size: int,
                redraws: int) -> dict[str, dict]:
    """The rows of ``config.reuse_methods`` for ``task`` from the chunk directory ``config.reuse_chunks``
    (``[reuse]``), when it holds the task with the same draw: the same training and true error (to the
    chunks' 12 significant digits), test size and redraws. Empty otherwise: the methods are computed."""
    if not config.reuse_methods:
        return {}
    spans = _reuse_files(os.path.join(config.reuse_chunks, task.dataset, f"n{task.n}"))
    path = next((p for (a, b), p in spans if a <= task.rep <= b), None)
    old = _reuse_chunk(path).get((task.dataset, task.n, task.rep)) if path else None
    if old is None or (_text(old["train_error"]), _text(old["true_error"]), old["test_size"], old["redraws"]) != (
            _text(float(train_error)), _text(true_error), test_size, redraws):
        return {}
    by_method = {r["method"]: r for r in old["rows"]}
    if any(m not in by_method for m in config.reuse_methods):
        return {}
    return {m: {k: v for k, v in by_method[m].items() if k not in EXTRA_COLUMNS} for m in config.reuse_methods}
