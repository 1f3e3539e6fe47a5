"""``cudbound auc``: the cross-validated AUC of a classifier for a CSV file (kernel RLS, or any model SPEC
given by ``--model``: :mod:`cudbound.cli.model_spec`), or an interval for it (``--interval``)."""
from __future__ import annotations

import numpy as np

from ..output import envelope
from .csv_input import read_labelled_csv
from .output import _csv_data
from .shared import CLIError, _positive, add_flag, shared_flags

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """The ``auc`` subcommand. Its ``--confidence-level`` is its own: it belongs to ``--interval``."""
    auc = subparsers.add_parser("auc", parents=[shared_flags("data", "model", "seed", "json")],
                                help="cross-validated AUC of a classifier for a CSV file: pooled, averaged or "
                                     "leave-pair-out",
                                description="The AUC of a classifier under cross-validation (Suominen, Pahikkala & "
                                            "Salakoski 2008): per fold then averaged, pooled over folds, or "
                                            "leave-pair-out. The classifier is regularized least squares (kernel "
                                            "ridge on -1/+1 labels; leave-pair-out in closed form), or any model "
                                            "SPEC given by --model whose scores are its decision_function or its "
                                            "predict_proba (leave-pair-out by refits).")
    auc.add_argument("--method", choices=("lpo", "pooled", "averaged"), default=None,
                     help="leave-pair-out (default), pooled or averaged cross-validation")
    auc.add_argument("--interval", choices=_interval_names(), default=None, metavar="METHOD",
                     help="an interval for the AUC instead, on the out-of-fold scores of --cv stratified folds "
                          f"(cudbound.auc.auc_interval): one of {', '.join(_interval_names())}")
    add_flag(auc, "--confidence-level", type=float, default=None, metavar="LEVEL",
             help="confidence level of --interval, strictly between 0 and 1 (default 0.95)")
    auc.add_argument("--resamples", type=_positive(int, "--resamples"), default=None, metavar="B",
                     help="bootstrap resamples of --interval bootstrap_percentile / bootstrap_bca (default 2000)")
    add_flag(auc, "--cv", "--folds", type=_positive(int, "--cv"), default=5, metavar="K",
             help="folds of pooled/averaged cross-validation and of --interval's out-of-fold scores (default "
                  "%(default)s, stratified)")
    auc.add_argument("--regparam", type=_positive(float, "--regparam"), default=None, metavar="LAMBDA",
                     help="regularization parameter of the RLS (default 1)")
    auc.add_argument("--kernel", choices=("linear", "gaussian"), default=None, help="kernel of the RLS (default linear)")
    auc.add_argument("--gamma", type=_positive(float, "--gamma"), default=None,
                     help="Gaussian kernel width of the RLS (default 1)")
    auc.set_defaults(handler=_auc)


def _interval_names() -> list[str]:
    from ..auc.registry import method_names
    return list(method_names())


def _auc(args) -> tuple[dict, str]:
    """``cudbound auc``: one of the three cross-validated AUCs of cudbound.auc, or an interval."""
    from ..auc import cv_auc, lpo_auc

    folds = args.cv
    if args.interval is not None and args.method is not None:
        raise CLIError("--interval is computed on the out-of-fold scores of --cv folds; leave out --method.")
    if args.interval is None and (args.confidence_level is not None or args.resamples is not None):
        raise CLIError("--confidence-level and --resamples belong to --interval; add --interval METHOD.")
    X, _, features, labels, encoding = read_labelled_csv(args)
    model = _model(args)
    if args.interval is not None:
        return _interval(args, model, X, features, labels, encoding)
    args.method = args.method or "lpo"
    seed = None
    if args.method == "lpo":
        res = lpo_auc(model, X, labels)
        extra: dict = {}
        how = f"leave-pair-out over {res.n_pairs} positive-negative pairs ({res.computation})"
    else:
        res = cv_auc(model, X, labels, cv=folds, pooling=args.method, rng=args.seed)
        extra = {"folds": folds, "fold_auc": [None if np.isnan(v) else float(v) for v in res.fold_auc]}
        seed = args.seed
        how = f"{args.method} over {folds} stratified folds (seed {args.seed})" + (
            f", {res.n_skipped_folds} one-class folds skipped" if res.n_skipped_folds else "")
    record = envelope("auc", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[{**res.to_dict(), **extra}], details=_details(args, model))
    report = "\n".join([f"AUC {res.estimate:.4f}: {how}", _model_line(args, model),
                        f"  data    {args.data} (n = {X.shape[0]}, {len(features)} features), labels {encoding!r}"])
    return record, report


def _model(args):
    """``--model``'s classifier, or kernel RLS of ``--regparam``, ``--kernel`` and ``--gamma``; both is an error."""
    from ..auc import KernelRLS

    rls = {"regparam": args.regparam, "kernel": args.kernel, "gamma": args.gamma}
    if args.model is None:
        return KernelRLS(**{k: v for k, v in rls.items() if v is not None})
    given = [f"--{k}" for k, v in rls.items() if v is not None]
    if given:
        raise CLIError(f"{', '.join(given)} {'belongs' if len(given) == 1 else 'belong'} to the default classifier, "
                       f"kernel RLS; leave {'it' if len(given) == 1 else 'them'} out with "
                       f"--model (or name kernel RLS in the SPEC: 'cudbound.auc.KernelRLS(regparam=2.0)').")
    return args.model.procedure


def _details(args, model) -> dict:
    out = {"model": repr(model)}
    if args.model is not None:
        out["model_spec"] = args.model.text
    return out


def _model_line(args, model) -> str:
    if args.model is None:
        return f"  model   {model!r} (kernel ridge on -1/+1 labels)"
    return f"  model   {args.model.text}  ->  {model!r}"


def _interval(args, model, X, features, labels, encoding) -> tuple[dict, str]:
    """``cudbound auc --interval METHOD``: :func:`cudbound.auc.auc_interval` of the classifier."""
    from ..auc.registry import auc_interval, get_method

    bootstrap = "n_resamples" in get_method(args.interval).options()
    if args.resamples is not None and not bootstrap:
        raise CLIError(f"--resamples belongs to the bootstrap intervals, not to {args.interval!r}.")
    options = {"n_resamples": args.resamples or 2000} if bootstrap else {}
    level = 0.95 if args.confidence_level is None else args.confidence_level
    res = auc_interval(model, X, labels, method=args.interval, cv=args.cv, confidence_level=level, rng=args.seed,
                       **options)
    record = envelope("auc", data=_csv_data(args, X, features, encoding), seed=args.seed,
                      results=[{**res.to_dict(), "folds": args.cv, **options}], details=_details(args, model))
    se = "" if res.standard_error is None else f", standard error {res.standard_error:.4f}"
    report = "\n".join([f"AUC {res.estimate:.4f}, {res.confidence_level:g} interval [{res.low:.4f}, {res.high:.4f}] "
                        f"({args.interval}{se})",
                        f"  scores  out of fold, {args.cv} stratified folds (seed {args.seed})",
                        _model_line(args, model),
                        f"  data    {args.data} (n = {X.shape[0]}, {len(features)} features), labels {encoding!r}"])
    return record, report
