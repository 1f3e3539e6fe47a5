"""How many candidate losses the probes of a smooth loss compute, with and without the floor on them.

Before a replicate's search the probes (``cudbound.search.probes.probe_classifier``) try classifiers on the
neighbourhood's boundary; for a built-in smooth loss the engine gives them the node solver's compiled losses
(``SmoothNodeSolver.values_at``) and a floor on them (``SmoothNodeSolver.loss_floor``), which tightens each
candidate's bound so that fewer losses are computed, the probed classifiers unchanged. This runs one
``cud_interval`` (``LinearGaussian(n_features=4, flip_probability=0.2)``, logistic loss) with the floor and one
without it (``loss_floor`` returning None), counting the candidate losses computed and the probes' CPU seconds,
and checks that the searches visit the same nodes.

    python benchmarks/measure/probe_floor.py [--n 300] [--resamples 100] [--seed 0]

Used for the figures in ``docs/engine.md`` ("A value found before the search"), twenty-fifth sitting.
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import cudbound.engine as engine
from cudbound import cud_interval
from cudbound.datasets import LinearGaussian
from cudbound.search.smooth_node_solver import SmoothNodeSolver


def _run(X, y, resamples, seed, with_floor):
    counted = {"losses": 0, "seconds": 0.0}
    values_at, loss_floor, probe = SmoothNodeSolver.values_at, SmoothNodeSolver.loss_floor, engine.probe_classifier

    def counting(self, betas, weights):
        counted["losses"] += len(betas)
        return values_at(self, betas, weights)

    def timed(*a, **k):
        t = time.process_time()
        try:
            return probe(*a, **k)
        finally:
            counted["seconds"] += time.process_time() - t

    SmoothNodeSolver.values_at = counting
    if not with_floor:
        SmoothNodeSolver.loss_floor = lambda self, x, weights: None
    engine.probe_classifier = timed
    try:
        res = cud_interval(X, y, procedure={"loss": "logistic"}, n_resamples=resamples, rng=seed)
    finally:
        SmoothNodeSolver.values_at, SmoothNodeSolver.loss_floor, engine.probe_classifier = values_at, loss_floor, probe
    return counted, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"machine: {platform.platform()}, {platform.processor() or platform.machine()}")
    print(f"command: python benchmarks/measure/probe_floor.py --n {args.n} --resamples {args.resamples} "
          f"--seed {args.seed}")
    X, y = LinearGaussian(n_features=4, flip_probability=0.2).sample(args.n, np.random.default_rng(args.seed))
    warm_X, warm_y = LinearGaussian(n_features=4, flip_probability=0.2).sample(30, np.random.default_rng(99))
    cud_interval(warm_X, warm_y, procedure={"loss": "logistic"}, n_resamples=20, rng=0)   # kernels loaded
    nodes = {}
    for with_floor in (True, False, True, False):
        counted, res = _run(X, y, args.resamples, args.seed, with_floor)
        nodes.setdefault(with_floor, res.stats.nodes.tolist())
        assert nodes[with_floor] == res.stats.nodes.tolist()
        print(f"floor {'on ' if with_floor else 'off'}: {counted['losses']:,} candidate losses, probes "
              f"{counted['seconds']:.3f} s CPU, {int(res.stats.nodes.sum()):,} nodes, {res.confidence_interval}")
    print("the same nodes in every replicate:", nodes[True] == nodes[False])


if __name__ == "__main__":
    main()
