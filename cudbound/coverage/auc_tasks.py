"""One task of an AUC and comparison study (``kind = "auc"``).

Protocol, for a data set with procedures A (its ``basis``) and B (its ``basis_b``), both the
squared loss of the study:

1. Draw the training set D (n points; real data: the other rows are the test set T, simulated:
   ``test_size`` fresh points). A draw is redrawn (``redraws``) while either design is
   rank-deficient or a class has fewer than ``cv`` points (every stratified fold must hold both
   classes, or the per-fold AUCs do not exist): the study is conditional on that.
2. Fit A and B on D. The targets, on T: the AUC of A's scores (``auc(T)``), the difference of
   the error rates err_A(T) - err_B(T), and of the AUCs auc_A(T) - auc_B(T).
3. One K-fold split of D (``cv`` folds, stratified, from the stream of the out-of-fold
   comparisons): A's out-of-fold scores. Every AUC interval is computed on them (with the folds)
   and scored against auc_A(T); the averaged and pooled CV AUC come from the same scores, and the
   leave-pair-out AUC from A's closed form (:func:`lpo_least_squares`) when A's basis learns nothing
   from the data, else from A refitted whole without each pair. Every refit refits A's (and B's)
   basis on its training part (:mod:`cudbound.refit`).
4. Every comparison of A and B (:func:`cudbound.compare.compare_pair`, the same split for the
   prediction-level ones, so the refits are shared), scored against the difference of the error
   rates (or of the AUCs for DeLong's test).

Every row's ``details`` holds ``target_se``, the standard error of its target on the T test points
(:func:`target_standard_errors`): what the target's own noise is beside the intervals.
"""
from __future__ import annotations

import os
import time
import warnings

import numpy as np

from ..auc.cv import lpo_auc
from ..auc.registry import get_method as auc_method
from ..auc.scores import auc_score, delong_placements, pair_auc
from ..basis import design_terms
from ..compare import OUT_OF_FOLD_STREAM, Procedure, ProcedurePair, compare_pair, root_seed
from ..datasets import get_dataset
from ..fit import fit_classifier
from ..losses import get_loss
from ..resampling import draw_folds, stream
from ..results import AUC_DIFFERENCE, ERROR_RATE_DIFFERENCE
from .auc_config import COMPARISON_PREFIX, ESTIMATES
from .config import StudyConfig, Task
from .draws import MAX_REDRAWS, _jsonable, _usable

__all__ = ["run_auc_task", "lpo_least_squares", "lpo_auc_least_squares", "target_standard_errors"]


def lpo_least_squares(design: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Leave-pair-out scores of least squares on ``design``: (n+ n-, 2), row (i, j) the scores of the
    positive i and the negative j by the fit on the other n - 2 points.

    With H the hat matrix of the full fit and e = y - H y its residuals, the fit without the pair
    S = {i, j} scores it y_S - (I - H_SS)^-1 e_S (the deleted residuals of a set; Cook & Weisberg
    1982, section 2.2). A pair whose removal leaves a rank-deficient design (I - H_SS singular) is
    refitted by least squares (minimum norm). Two points with the same design row get the same
    score by the fit without both; the two expressions above need not round alike, so such a pair's
    scores are set equal (:func:`lpo_auc_least_squares` counts the pair as a tie)."""
    Q, _ = np.linalg.qr(design)
    H = Q @ Q.T
    e = labels - H @ labels
    pos, neg = np.flatnonzero(labels > 0), np.flatnonzero(labels < 0)
    i, j = np.repeat(pos, neg.size), np.tile(neg, pos.size)
    a, d, b = 1.0 - H[i, i], 1.0 - H[j, j], -H[i, j]
    det = a * d - b * b
    ok = np.abs(det) > 1e-10
    safe = np.where(ok, det, 1.0)
    fi = labels[i] - (d * e[i] - b * e[j]) / safe
    fj = labels[j] - (-b * e[i] + a * e[j]) / safe
    same = np.all(design[i] == design[j], axis=1)
    fj = np.where(same, fi, fj)
    out = np.column_stack([fi, fj])
    for r in np.flatnonzero(~ok):
        keep = np.ones(labels.size, dtype=bool)
        keep[[i[r], j[r]]] = False
        beta = np.linalg.lstsq(design[keep], labels[keep], rcond=None)[0]
        out[r] = design[[i[r], j[r]]] @ beta
    return out


def lpo_auc_least_squares(design: np.ndarray, labels: np.ndarray) -> float:
    """The leave-pair-out AUC of least squares: the share of positive-negative pairs whose positive
    scores above its negative (ties 1/2, within rounding: :func:`cudbound.auc.pair_auc`) by the fit
    without the pair (:func:`lpo_least_squares`)."""
    return pair_auc(lpo_least_squares(design, labels))


def target_standard_errors(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, wrong_a: np.ndarray,
                           wrong_b: np.ndarray) -> dict:
    """The standard errors of a task's three targets on its T test points.

    * ``"auc"``: of A's empirical AUC, DeLong's variance S10 / m + S01 / n of one AUC
      (:meth:`cudbound.auc.DeLongPlacements.covariance`; DeLong et al. 1988);
    * ``"auc difference"``: of auc_A - auc_B, DeLong's paired variance S_AA + S_BB - 2 S_AB;
    * ``"error difference"``: of err_A - err_B, the paired (multinomial) standard error
      sqrt((d01 + d10 - (d10 - d01)^2) / T), d10 and d01 the shares of the test points that A
      alone and B alone get wrong (the standard error of the mean of l_A - l_B).

    ``labels`` in {-1, +1}; ``wrong_a``, ``wrong_b`` booleans, True where the fit errs.

    On four points, A's placements (1, 3/4) and (3/4, 1), each of sample variance 1/32, so
    S = 1/64 + 1/64; A errs on two points and B on none, so d10 = 1/2, d01 = 0 and the error
    difference's variance is (1/2 - 1/4) / 4 = 1/16:

    >>> y, s = np.array([1, 1, -1, -1]), np.array([0.9, 0.2, 0.2, 0.1])
    >>> se = target_standard_errors(y, s, s, np.array([True, True, False, False]), np.zeros(4, dtype=bool))
    >>> round(se["auc"] ** 2, 12), se["auc difference"], se["error difference"]
    (0.03125, 0.0, 0.25)
    """
    placements = delong_placements(labels, np.vstack([scores_a, scores_b]))
    S = placements.covariance()
    t = wrong_a.size
    d10 = np.count_nonzero(wrong_a & ~wrong_b) / t
    d01 = np.count_nonzero(~wrong_a & wrong_b) / t
    return {"auc": float(np.sqrt(S[0, 0])), "auc difference": float(np.sqrt(max(S[0, 0] + S[1, 1] - 2 * S[0, 1], 0.0))),
            "error difference": float(np.sqrt(max(d01 + d10 - (d10 - d01) ** 2, 0.0) / t))}


def _draw(config: StudyConfig, task: Task, rng, data_home):
    spec = config.dataset(task.dataset)
    source = get_dataset(spec.name)
    for redraws in range(MAX_REDRAWS):
        Xtr, ytr, Xte, yte = source.draw(task.n, config.test_size, rng, data_home)
        if min(np.sum(ytr > 0), np.sum(ytr < 0)) < config.cv:
            continue
        a = _usable(spec.basis, Xtr, ytr, config.loss)
        b = _usable(spec.basis_b, Xtr, ytr, config.loss) if a is not None else None
        if b is not None:
            return Xtr, ytr, Xte, yte, a, b, redraws
    raise RuntimeError(f"task {task}: {MAX_REDRAWS} training draws in a row had a class of fewer than {config.cv} "
                       f"points or a rank-deficient design under {spec.basis!r} or {spec.basis_b!r}.")


_STORED_QUANTITY = {ERROR_RATE_DIFFERENCE: "error difference", AUC_DIFFERENCE: "auc difference"}
"""A comparison's quantity as the store's ``details`` record it (the store's words, unchanged)."""


def _interval_row(label, res, target, target_se, seconds=None):
    low, high = float(res.low), float(res.high)
    return {"method": label, "low": low, "high": high, "centre": float(res.estimate), "width": high - low,
            "covered": int(low <= target <= high), "seconds": float(res.seconds if seconds is None else seconds),
            "target": float(target), "statistic": None, "pvalue": None,
            "details": _jsonable({"standard_error": res.standard_error, **res.details, "target_se": target_se})}


def _estimate_row(label, value, target, target_se, seconds):
    return {"method": label, "low": None, "high": None, "centre": float(value), "width": None, "covered": None,
            "seconds": float(seconds), "target": float(target), "statistic": None, "pvalue": None,
            "details": {"target_se": target_se}}


def _comparison_row(label, res, target, target_se):
    row = {"method": label, "low": None, "high": None, "centre": float(res.estimate), "width": None, "covered": None,
           "seconds": float(res.seconds), "target": float(target), "statistic": res.statistic, "pvalue": res.pvalue,
           "details": _jsonable({"quantity": _STORED_QUANTITY[res.quantity], **res.details,
                                 "target_se": target_se})}
    if res.has_confidence_interval:
        low, high = map(float, res.confidence_interval)
        row.update(low=low, high=high, width=high - low, covered=int(low <= target <= high))
    if res.method == "cud":     # the search's columns, as an error-rate study's CUD rows have them
        d = res.details
        row.update(conservative=int(d["conservative"]), nodes_median=d["search_nodes_median"],
                   nodes_total=d["search_nodes_total"], solves_total=d["search_solves_total"],
                   not_exact=d["search_not_exact"], half_width=float(d["half_width"]), alpha_n=float(d["alpha_n"]))
    return row


def _auc_rows(config: StudyConfig, spec, rows: dict, pair: ProcedurePair, X: np.ndarray, basis_a, design_a, root,
              auc_a: float, auc_se: float) -> None:
    """The AUC intervals' and the CV AUC estimates' rows of a task (step 3 of the module docstring),
    into ``rows``: on A's out-of-fold scores of one stratified split from the out-of-fold stream."""
    folds = draw_folds(pair.labels, config.cv, 1, True, np.random.default_rng(stream(root, OUT_OF_FOLD_STREAM)))[0]
    t1 = time.perf_counter()
    oof = pair.out_of_fold(folds)
    scores, labels = oof.score_a, pair.labels
    assert scores is not None, "a basis-and-loss procedure always has out-of-fold scores"
    refit_seconds = time.perf_counter() - t1
    for label in config.methods:
        if label in ESTIMATES or label.startswith(COMPARISON_PREFIX):
            continue
        t1 = time.perf_counter()
        res = auc_method(config.method_of[label]).function(
            labels, scores, folds, confidence_level=config.confidence_level,
            rng=np.random.default_rng(stream(root, "auc:" + config.method_of[label])), **config.options[label])
        rows[label] = _interval_row(label, res, auc_a, auc_se, time.perf_counter() - t1 + refit_seconds)
    t1 = time.perf_counter()
    per_fold = [auc_score(labels[folds == f], scores[folds == f]) for f in range(config.cv)]
    rows["cv_auc.averaged"] = _estimate_row("cv_auc.averaged", np.mean(per_fold), auc_a, auc_se,
                                            time.perf_counter() - t1 + refit_seconds)
    t1 = time.perf_counter()
    rows["cv_auc.pooled"] = _estimate_row("cv_auc.pooled", auc_score(labels, scores), auc_a, auc_se,
                                          time.perf_counter() - t1 + refit_seconds)
    t1 = time.perf_counter()
    if basis_a.learns_from_data:   # the basis refitted without each pair, with the classifier
        lpo = lpo_auc(Procedure(basis=spec.basis, loss=config.loss), X, labels).estimate
    else:                           # the design is the same without the pair: the closed form
        lpo = lpo_auc_least_squares(design_a, labels)
    rows["lpo_auc"] = _estimate_row("lpo_auc", lpo, auc_a, auc_se, time.perf_counter() - t1)


def run_auc_task(config: StudyConfig, task: Task, data_home: str | os.PathLike[str] | None = None) -> dict:
    """Run one task of an AUC study and return its rows (module docstring), ready for the store.

    Seeds: the task's SeedSequence spawns two children, the data draw's and the methods'. The
    methods' root (:func:`cudbound.compare.root_seed`) gives every comparison the stream
    :func:`cudbound.compare.compare` would give it, the folds of the out-of-fold scores come from
    the out-of-fold comparisons' stream (so they are the folds those comparisons use), and each AUC
    interval draws from the stream ``"auc:<name>"``.
    """
    t0 = time.perf_counter()
    data_ss, method_ss = config.task_seed(task).spawn(2)
    spec = config.dataset(task.dataset)
    Xtr, ytr, Xte, yte, (basis_a, design_a), (basis_b, design_b), redraws = _draw(
        config, task, np.random.default_rng(data_ss), data_home)
    loss = get_loss(config.loss)
    fit_a = fit_classifier(design_a, ytr, loss, entry_terms=design_terms(basis_a, Xtr, design_a))
    fit_b = fit_classifier(design_b, ytr, loss, entry_terms=design_terms(basis_b, Xtr, design_b))
    za, zb = basis_a.transform(Xte), basis_b.transform(Xte)
    sa, sb = za @ fit_a.coef, zb @ fit_b.coef
    auc_a, auc_b = auc_score(yte, sa), auc_score(yte, sb)
    wrong_a = fit_a.predict(za, design_terms(basis_a, Xte, za)) != yte
    wrong_b = fit_b.predict(zb, design_terms(basis_b, Xte, zb)) != yte
    err_a, err_b = float(np.mean(wrong_a)), float(np.mean(wrong_b))
    target_se = target_standard_errors(yte, sa, sb, wrong_a, wrong_b)

    root = root_seed(method_ss)
    rows: dict[str, dict] = {}
    seen: set[str] = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pair = ProcedurePair(Procedure(basis=spec.basis, loss=config.loss),
                             Procedure(basis=spec.basis_b, loss=config.loss), Xtr, ytr)
        if any(label in ESTIMATES for label in config.methods):     # AUC rows: A's out-of-fold scores
            _auc_rows(config, spec, rows, pair, Xtr, basis_a, design_a, root, auc_a, target_se["auc"])
        comparisons = [label for label in config.methods if label.startswith(COMPARISON_PREFIX)]
        names = [config.method_of[label] for label in comparisons]
        results = compare_pair(pair, names, root, confidence_level=config.confidence_level,
                               per={config.method_of[label]: config.options[label] for label in comparisons})
        for label, res in zip(comparisons, results):
            quantity = _STORED_QUANTITY[res.quantity]
            target = auc_a - auc_b if res.quantity == AUC_DIFFERENCE else err_a - err_b
            rows[label] = _comparison_row(label, res, target, target_se[quantity])
    seen.update(f"{type(w.message).__name__}: {w.message}" for w in caught)
    return {"dataset": task.dataset, "n": task.n, "rep": task.rep, "train_error": float(fit_a.train_error),
            "true_error": err_a, "test_size": int(len(yte)), "redraws": redraws, "warnings": sorted(seen),
            "seconds": time.perf_counter() - t0, "rows": [rows[m] for m in config.methods]}
