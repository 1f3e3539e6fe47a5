"""The half-width Q_hat of the CUD bound of a difference with its three valid factors (docs/method.md,
"The difference of two classifiers"): the joint g(x_A + x_B), min(g(x_A), g(x_B)) and g+(x_A) g+(x_B).

    PYTHONPATH=$PWD python benchmarks/measure/difference_forms.py [--reps 20] [--resamples 200]

For each design and size, ``--reps`` data sets of ``LinearGaussian(n_features=2, flip_probability=0.2)``
(seeds 0, 1, ...), the same B bootstrap count vectors for the three factors (one pair of frontiers per
count vector gives all three: ``cudbound.cud_difference.joint_sup``), Q_hat the ceil(0.95 B)-th smallest
of each. Prints, per design and n, the mean Q_hat of each factor and on how many data sets the joint
one is the smallest, the largest, below the minimum's and below the product's.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

DESIGNS = {"linear / poly:2, squared": (("linear", "squared"), ("poly:2", "squared")),
           "x1 only / linear, squared": (("cols:0-0", "squared"), ("linear", "squared")),
           "linear, squared / logistic": (("linear", "squared"), ("linear", "logistic"))}


def _q_hats(design, n, seed, B):
    from cudbound.cud_difference import FORMS, DifferenceSide, joint_sup, search_replicate_difference
    from cudbound.datasets import LinearGaussian
    from cudbound.design import prepare_data
    from cudbound.fit import fit_classifier
    from cudbound.losses import get_loss
    from cudbound.quantile import kth_smallest, order_index
    from cudbound.resampling import draw_counts

    X, y = LinearGaussian(n_features=2, flip_probability=0.2).sample(n, seed)
    sides = []
    for basis, loss in DESIGNS[design]:
        data = prepare_data(X, y, basis, None, None, loss)
        sides.append(DifferenceSide(fit_classifier(data.design, data.labels, get_loss(data.loss))))
    counts = draw_counts(n, B, np.random.default_rng(seed + 1000))
    q = {form: [] for form in FORMS}
    for c in counts:
        out = search_replicate_difference(sides[0], sides[1], c, float(n))
        assert out.status == "exact"
        for form in FORMS:
            q[form].append(joint_sup(out.frontier_a, out.frontier_b, float(n), n, form=form))
    k = order_index(0.95, B)
    return {form: kth_smallest(np.array(v), k) for form, v in q.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--sizes", type=int, nargs="+", default=[30, 50])
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from cudbound.losses import NoMinimiserError
    print("| design | n | data sets | mean Q_hat joint | min | product | joint smallest | joint largest | "
          "joint < min | joint < product |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for design in args.designs:
        for n in args.sizes:
            rows = []
            for seed in range(args.reps):
                try:
                    rows.append(_q_hats(design, n, seed, args.resamples))
                except NoMinimiserError:   # a separable draw for the logistic loss
                    print(f"  (seed {seed} skipped: no minimiser of the logistic loss)")
            j = np.array([r["joint"] for r in rows])
            m = np.array([r["min"] for r in rows])
            p = np.array([r["product"] for r in rows])
            assert np.all(p <= m + 1e-12)
            print(f"| {design} | {n} | {len(rows)} | {j.mean():.4f} | {m.mean():.4f} | {p.mean():.4f} | "
                  f"{int(np.sum((j <= m) & (j <= p)))} | {int(np.sum((j >= m) & (j >= p)))} | "
                  f"{int(np.sum(j < m))} | {int(np.sum(j < p))} |", flush=True)


if __name__ == "__main__":
    main()
