"""``cudbound auc``: the cross-validated AUC of kernel RLS for a CSV file."""
from __future__ import annotations

import numpy as np

from ..output import envelope, result_item
from .csv_input import read_labelled_csv
from .output import _csv_data
from .shared import _positive, add_flag


def add_parser(subparsers, common) -> None:
    """The ``auc`` subcommand (``common`` is not its: it takes its own options)."""
    auc = subparsers.add_parser("auc", help="cross-validated AUC of kernel RLS for a CSV file: pooled, averaged or "
                                            "leave-pair-out",
                                description="The AUC of regularized least squares (kernel ridge on -1/+1 labels) under "
                                            "cross-validation (Suominen, Pahikkala & Salakoski 2008): per fold then "
                                            "averaged, pooled over folds, or leave-pair-out (exact, closed form).")
    auc.add_argument("--data", required=True, metavar="FILE.csv", help="the CSV file")
    auc.add_argument("--label", required=True, metavar="COLUMN", help="name of the label column")
    auc.add_argument("--pos-label", default=None, metavar="VALUE", help="label value of the positive class")
    auc.add_argument("--method", choices=("lpo", "pooled", "averaged"), default="lpo",
                     help="leave-pair-out (default), pooled or averaged cross-validation")
    add_flag(auc, "--cv", "--folds", type=_positive(int, "--cv"), default=5, metavar="K",
             help="folds of pooled/averaged cross-validation (default %(default)s, stratified)")
    auc.add_argument("--regparam", type=_positive(float, "--regparam"), default=1.0, metavar="LAMBDA",
                     help="regularization parameter of the RLS (default 1)")
    auc.add_argument("--kernel", choices=("linear", "gaussian"), default="linear", help="kernel (default linear)")
    auc.add_argument("--gamma", type=_positive(float, "--gamma"), default=1.0, help="Gaussian kernel width (default 1)")
    auc.add_argument("--seed", type=int, default=0, help="seed of the fold assignment (default 0)")
    auc.add_argument("--json", action="store_true", help="print the result as JSON")
    auc.set_defaults(handler=_auc)


def _auc(args) -> tuple[dict, str]:
    """``cudbound auc``: one of the three cross-validated AUCs of cudbound.auc."""
    from ..auc import KernelRLS, cv_auc, lpo_auc

    folds = args.cv
    X, _, features, labels, encoding = read_labelled_csv(args)
    model = KernelRLS(regparam=args.regparam, kernel=args.kernel, gamma=args.gamma)
    seed = None
    if args.method == "lpo":
        res = lpo_auc(model, X, labels)
        extra = {"n_pairs": res.n_pairs, "method_detail": res.method}
        how = f"leave-pair-out over {res.n_pairs} positive-negative pairs ({res.method})"
    else:
        res = cv_auc(model, X, labels, cv=folds, pooling=args.method, rng=args.seed)
        extra = {"folds": folds, "fold_auc": [None if np.isnan(v) else float(v) for v in res.fold_auc],
                 "n_skipped_folds": res.n_skipped_folds}
        seed = args.seed
        how = f"{args.method} over {folds} stratified folds (seed {args.seed})" + (
            f", {res.n_skipped_folds} one-class folds skipped" if res.n_skipped_folds else "")
    record = envelope("auc", data=_csv_data(args, X, features, encoding), seed=seed,
                      results=[result_item(args.method, "auc", res.estimate, **extra)], details={"model": repr(model)})
    report = "\n".join([f"AUC {res.estimate:.4f}: {how}",
                        f"  model   {model!r} (kernel ridge on -1/+1 labels)",
                        f"  data    {args.data} (n = {X.shape[0]}, {len(features)} features), labels {encoding!r}"])
    return record, report
