"""How many loss evaluations a solve of the smooth losses' SQP takes, and how often the last step is spared.

The SQP (``cudbound.search.smooth_node_solver._sqp``) stops once the predicted decrease -g'd is below round-off;
an iterate that then passes its KKT certificate is the answer as it stands, and the step to the model's point
(with its evaluation of the loss) is spared. This runs the iteration's Python form with the compiled evaluation
(the same iterates as the compiled form) on flip children as the search makes them: resamples of
``LinearGaussian(n_features=4, flip_probability=0.2)``, each a point of positive weight given the other sign at
the resample's minimiser plus three random points kept on their side, from that minimiser. It counts the
evaluations (value, gradient and Hessian; and value only) per certified solve and the solves whose last event
was not an evaluation (the step spared); "before" adds the spared evaluation back.

    python benchmarks/measure/sqp_last_step.py [--n 300] [--resamples 5] [--flips 60] [--seed 0]

Used for the figures in ``docs/engine.md`` ("No last step from a certified iterate"), twenty-fifth sitting.
"""
from __future__ import annotations

import argparse
import platform

import numpy as np

from cudbound.datasets import LinearGaussian
from cudbound.losses import get_loss
from cudbound.search import smooth_node_solver as sns


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--resamples", type=int, default=5)
    ap.add_argument("--flips", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}")
    X, y = LinearGaussian(n_features=4, flip_probability=0.2).sample(args.n, np.random.default_rng(args.seed))
    design = np.column_stack([np.ones(args.n), X])
    y = np.where(y > 0, 1.0, -1.0)
    events = []
    evaluate, model_qp = sns._evaluate, sns._model_qp

    def traced_evaluate(model, b, grad, H, want):
        events.append("full" if want else "value")
        return evaluate(model, b, grad, H, want)

    def traced_model_qp(*a):
        events.append("qp")
        return model_qp(*a)

    sns._evaluate, sns._model_qp = traced_evaluate, traced_model_qp
    rng = np.random.default_rng(args.seed + 1)
    p = design.shape[1]
    solves = full = value = spared = 0
    try:
        for _ in range(args.resamples):
            counts = rng.multinomial(args.n, np.full(args.n, 1.0 / args.n)).astype(float)
            model = sns._Objective(get_loss("logistic"), design, y, counts, (sns.KIND_LOGISTIC, False)).model
            root = np.zeros(p)
            st, _, _ = sns._sqp(model, np.zeros((0, p)), np.zeros(0), root, 100, np.zeros(p, dtype=np.int64), np.nan,
                                np.zeros(0), np.zeros((0, 0)))
            if st != 0:
                continue
            t = design @ root
            for k in rng.choice(np.flatnonzero(counts > 0), args.flips, replace=False):
                rows = [k, *rng.choice(args.n, 3)]
                G = np.array([(-1.0 if j == k else 1.0) * np.sign(t[j]) * design[j] for j in rows])
                x = root.copy()
                events.clear()
                st, _, _ = sns._sqp(model, G, np.linalg.norm(G, axis=1), x, 100, np.zeros(len(G), dtype=np.int64),
                                    np.nan, np.zeros(0), np.zeros((0, 0)))
                if st != 0:
                    continue
                solves += 1
                full += events.count("full")
                value += events.count("value")
                spared += events[-1] == "qp"
    finally:
        sns._evaluate, sns._model_qp = evaluate, model_qp
    print(f"command: python benchmarks/measure/sqp_last_step.py --n {args.n} --resamples {args.resamples} "
          f"--flips {args.flips} --seed {args.seed}")
    print(f"certified solves: {solves}; the last step spared in {spared}")
    print(f"evaluations a solve: {full / solves:.2f} with derivatives and {value / solves:.3f} of the value alone; "
          f"with the last step taken: {(full + spared) / solves:.2f} and {value / solves:.3f}")


if __name__ == "__main__":
    main()
