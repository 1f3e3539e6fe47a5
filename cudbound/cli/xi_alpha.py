"""``cudbound xi-alpha``: Joachims' xi-alpha estimates of a soft-margin SVM for a CSV file."""
from __future__ import annotations

import numpy as np

from ..output import envelope, result_item
from ..results import F1, PRECISION, RECALL
from .csv_input import read_labelled_csv
from .output import _csv_data
from .shared import _positive, _radius_arg, _show_progress, shared_flags

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """The ``xi-alpha`` subcommand (it draws nothing at random: no ``--seed``)."""
    xa = subparsers.add_parser("xi-alpha", parents=[shared_flags("data", "json", "progress")], help="Joachims' xi-alpha estimates (error, recall, precision, F1) of a "
                                                "soft-margin SVM for a CSV file",
                               description="Train a soft-margin SVM once and count the points with rho alpha_i "
                                           "R^2 + xi_i >= 1 (Joachims 2000): estimates of the error, recall, "
                                           "precision and F1 that are pessimistic with rho = 2 and the theorem's "
                                           "R^2. --loo adds the exact leave-one-out error of the same SVM.")
    xa.add_argument("--C", dest="C", type=_positive(float, "--C"), default=1.0, help="SVM cost parameter (default 1)")
    xa.add_argument("--kernel", choices=("linear", "rbf", "poly"), default="linear", help="kernel (default linear)")
    xa.add_argument("--gamma", type=_positive(float, "--gamma"), default=None,
                    help="rbf/poly gamma (default: 1 / (d Var(X)), scikit-learn's 'scale' on centred features)")
    xa.add_argument("--degree", type=_positive(int, "--degree"), default=3, help="poly degree (default 3)")
    xa.add_argument("--coef0", type=float, default=0.0, help="poly coef0 (default 0)")
    xa.add_argument("--rho", type=float, default=None,
                    help="rho (default 2 with the theorem's radius, 1 with --radius svmlight)")
    xa.add_argument("--radius", default="theorem", metavar="theorem|svmlight|R2",
                    help="R^2: 'theorem' (default, pessimistic), 'svmlight' (as SVM-light V6.02) or a number")
    xa.add_argument("--loo", action="store_true", help="also compute the exact leave-one-out error")
    xa.set_defaults(handler=_xi_alpha)


def _xi_alpha(args) -> tuple[dict, str]:
    """``cudbound xi-alpha``: cudbound.svm.xi_alpha, and with --loo cudbound.svm.loo_error."""
    from ..svm import loo_error, xi_alpha

    X, _, features, labels, encoding = read_labelled_csv(args)
    kw = dict(C=args.C, kernel=args.kernel, gamma=args.gamma, degree=args.degree, coef0=args.coef0)
    est = xi_alpha(X, labels, rho=args.rho, radius=_radius_arg(args.radius), **kw)
    results = [est.to_dict(), *_rates(est, n_errors={RECALL: est.n_pos_errors, PRECISION: est.n_neg_errors})]
    details = {"n_errors": est.n_errors, "n_pos_errors": est.n_pos_errors, "n_neg_errors": est.n_neg_errors,
               "n_pos": est.n_pos, "radius_sq": est.radius_sq, "rho": est.rho, "stable": est.stable,
               "n_support": int(np.sum(est.alpha > 0)), "svm": {**kw, "radius": args.radius}}
    lines = [f"xi-alpha estimates (Joachims 2000), rho = {est.rho:g}, R^2 = {est.radius_sq:.6g} ({args.radius}):",
             f"  error     <= {est.estimate:.4f}  (d = {est.n_errors} of n = {est.n_samples})",
             f"  recall    >= {est.recall:.4f}  (d+ = {est.n_pos_errors} of n+ = {est.n_pos})",
             f"  precision >= {est.precision:.4f}  (d- = {est.n_neg_errors})",
             f"  F1        >= {est.f1:.4f}"]
    if not est.stable:
        lines.append("  warning: no free support vector; the bound of Lemma 1 does not apply")
    if args.loo:
        loo = loo_error(X, labels, progress=_show_progress(args), **kw)
        results += [loo.to_dict(), *_rates(loo)]
        details["loo"] = {"n_errors": loo.n_errors, "n_refits": loo.n_refits}
        lines.append(f"exact leave-one-out: error {loo.estimate:.4f} ({loo.n_errors} errors, {loo.n_refits} refits), "
                     f"recall {loo.recall:.4f}, precision {loo.precision:.4f}, F1 {loo.f1:.4f}")
    lines.append(f"  SVM     C = {args.C:g}, kernel {args.kernel}; data {args.data} (n = {X.shape[0]}, "
                 f"{len(features)} features), labels {encoding!r}")
    record = envelope("xi-alpha", data=_csv_data(args, X, features, encoding), results=results, details=details)
    return record, "\n".join(lines)


def _rates(res, n_errors=None) -> list[dict]:
    """The recall, precision and F1 of a xi-alpha or leave-one-out result as entries of their own
    (the error rate is the result's own row), with ``n_errors`` per quantity where given."""
    n_errors = n_errors or {}
    return [result_item(res.method, quantity, value, n_samples=res.n_samples,
                        **({"n_errors": n_errors[quantity]} if quantity in n_errors else {}))
            for quantity, value in ((RECALL, res.recall), (PRECISION, res.precision), (F1, res.f1))]
