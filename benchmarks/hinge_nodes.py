"""Per-node solve times of the hinge loss: the certified compiled simplex against cvxpy and HiGHS.

The node problems are recorded from real searches (``ReplicateEngine(engine="auto")`` on
LinearGaussian data with label-flip probability 0.3, alpha_n = n, bootstrap counts from
``default_rng(seed + 1)``), each with the node whose basis warm-started it, then every
recorded node is solved again by

- ``lp``: :class:`cudbound.search.lp_node_solver.HingeLPNodeSolver`, warm-started from the
  recorded parent's basis, as in the search;
- ``cvxpy``: :class:`cudbound.search.node_solvers.CvxpyNodeSolver` (CLARABEL, tolerance 1e-10),
  the path every hinge node took before;
- ``highspy``: HiGHS's dual simplex through highspy on the primal LP, built once per
  replicate (one free row per design row; a node sets its rows' bounds) and warm-started
  from the recorded parent's HiGHS basis (a prototype, kept here for the comparison);
- ``linprog``: scipy's ``linprog(method="highs-ds")``, built and solved from scratch per node.

Times are this process's CPU time per solve (``time.process_time``: on a shared machine wall
time counts the other processes' turns too), on one core, after a warm-up; the largest
difference of each solver's value from the ``lp`` value is reported beside them.

    taskset -c 1 python benchmarks/hinge_nodes.py --n 50 --p 5 --replicates 5
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's cudbound


def record(design, y, counts_list, alpha):
    """Run the searches; return per replicate (counts, [(rows, signs, parent_index)], in-search seconds)."""
    from cudbound.engine import ReplicateEngine
    from cudbound.fit import fit_coefficients
    from cudbound.losses import HingeLoss
    from cudbound.search import lp_node_solver as lpmod

    loss = HingeLoss()
    beta_hat = fit_coefficients(design, y, loss)
    eng = ReplicateEngine(design, y, loss)
    real_solve = lpmod.HingeLPNodeSolver.solve
    out = []
    for counts in counts_list:
        calls, made, seconds, alive = [], {}, [], []

        def solve(self, rows, signs, warm=None, _calls=calls, _made=made, _seconds=seconds, _alive=alive):
            t0 = time.process_time()
            sol = real_solve(self, rows, signs, warm)
            _seconds.append(time.process_time() - t0)
            _calls.append((np.array(rows, dtype=int), np.array(signs, dtype=float), _made.get(id(warm), -1)))
            _made[id(sol.warm)] = len(_calls) - 1
            _alive.append(sol.warm)  # keep it alive: ids are not reused
            return sol
        lpmod.HingeLPNodeSolver.solve = solve
        try:
            eng.search(counts, beta_hat, alpha)
        finally:
            lpmod.HingeLPNodeSolver.solve = real_solve
        # calls[0]: the root solve of set_weights (its basis is the solver's default start)
        out.append((counts, [(r, s, q - 1 if q > 0 else -1) for r, s, q in calls[1:]], seconds[1:]))
    return out


class HighsNodes:
    """Prototype: the primal node LP in highspy, built once per replicate, warm-started."""

    def __init__(self, design, y, counts):
        import highspy
        n, p = design.shape
        on = np.flatnonzero(counts > 0)
        m = len(on)
        inf = highspy.kHighsInf
        self.h = h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for k, v in (("threads", 1), ("presolve", "off"), ("solver", "simplex"), ("simplex_strategy", 1),
                     ("primal_feasibility_tolerance", 1e-10), ("dual_feasibility_tolerance", 1e-10)):
            h.setOptionValue(k, v)
        M = np.zeros((m + n, p + m))
        M[:m, :p] = y[on, None] * design[on]
        M[np.arange(m), p + np.arange(m)] = 1.0
        M[m:, :p] = design
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = p + m, m + n
        lp.col_cost_ = np.r_[np.zeros(p), counts[on] / n]
        lp.col_lower_ = np.r_[np.full(p, -inf), np.zeros(m)]
        lp.col_upper_ = np.full(p + m, inf)
        lp.row_lower_ = np.r_[np.ones(m), np.full(n, -inf)]
        lp.row_upper_ = np.full(m + n, inf)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        starts, index, value = [0], [], []
        for j in range(p + m):
            nz = np.flatnonzero(M[:, j])
            index.extend(nz.tolist())
            value.extend(M[nz, j].tolist())
            starts.append(len(index))
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = starts, index, value
        h.passModel(lp)
        self.m, self.inf, self.highspy = m, inf, highspy
        h.run()
        self.root = h.getBasis()

    def solve(self, rows, signs, basis):
        h, inf = self.h, self.inf
        idx = (self.m + rows).astype(np.int32)
        h.setBasis(basis if basis is not None else self.root)
        h.changeRowsBounds(len(idx), idx, np.where(signs > 0, 0.0, -inf), np.where(signs < 0, 0.0, inf))
        h.run()
        ok = h.getModelStatus() == self.highspy.HighsModelStatus.kOptimal
        value, new = h.getInfo().objective_function_value, h.getBasis()
        h.changeRowsBounds(len(idx), idx, np.full(len(idx), -inf), np.full(len(idx), inf))
        if not ok:
            raise RuntimeError("HiGHS: not optimal")
        return value, new


def linprog_node(design, y, counts, rows, signs):
    from scipy.optimize import linprog
    n, p = design.shape
    on = counts > 0
    A = y[on, None] * design[on]
    m = len(A)
    G = design[rows] * signs[:, None]
    A_ub = np.vstack([np.hstack([-A, -np.eye(m)]), np.hstack([-G, np.zeros((len(rows), m))])])
    res = linprog(np.r_[np.zeros(p), counts[on] / n], A_ub=A_ub, b_ub=np.r_[-np.ones(m), np.zeros(len(rows))],
                  bounds=[(None, None)] * p + [(0.0, None)] * m, method="highs-ds")
    return float(res.fun)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--replicates", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-nodes", type=int, default=400, help="nodes per replicate replayed by the slow solvers")
    args = ap.parse_args(argv)

    from cudbound.resampling import bootstrap_counts
    from cudbound.datasets import LinearGaussian
    from cudbound.losses import HingeLoss
    from cudbound.search import CvxpyNodeSolver
    from cudbound.search.lp_node_solver import HingeLPNodeSolver

    try:
        import highspy  # noqa: F401  (installed with cvxpy; only this comparison uses it)
        have_highspy = True
    except ImportError:
        have_highspy = False
    X, y = LinearGaussian(n_features=args.p - 1, flip_probability=0.3).sample(args.n, np.random.default_rng(args.seed))
    design, y = np.column_stack([np.ones(args.n), X]), np.asarray(y, dtype=float)
    counts_list = bootstrap_counts(args.n, args.replicates + 1, np.random.default_rng(args.seed + 1))
    record(design, y, counts_list[:1], float(args.n))  # warm-up (numba cache, imports)
    runs = record(design, y, counts_list[1:], float(args.n))
    loss = HingeLoss()
    times = {k: [] for k in ("lp (in search)", "lp", "cvxpy", "highspy", "linprog")}
    diff = {k: 0.0 for k in ("cvxpy", "highspy", "linprog")}
    iterations = solves = 0
    for counts, calls, in_search in runs:
        times["lp (in search)"] += in_search
        lp = HingeLPNodeSolver(loss, design, y)
        lp.set_weights(counts)
        sols = []
        for rows, signs, parent in calls:
            warm = sols[parent].warm if parent >= 0 else None
            t0 = time.process_time()
            sols.append(lp.solve(rows, signs, warm))
            times["lp"].append(time.process_time() - t0)
        iterations += lp.stats["iterations"]
        solves += lp.stats["solves"]
        cvx = CvxpyNodeSolver(loss, design, y)
        cvx.set_weights(counts)
        hs = HighsNodes(design, y, counts) if have_highspy else None
        bases = []
        for i, (rows, signs, parent) in enumerate(calls[: args.max_nodes]):
            t0 = time.process_time()
            v = cvx.solve(rows, signs).value
            times["cvxpy"].append(time.process_time() - t0)
            diff["cvxpy"] = max(diff["cvxpy"], abs(v - sols[i].value))
            if hs is not None:
                t0 = time.process_time()
                v, basis = hs.solve(rows, signs, bases[parent] if 0 <= parent < len(bases) else None)
                times["highspy"].append(time.process_time() - t0)
                bases.append(basis)
                diff["highspy"] = max(diff["highspy"], abs(v - sols[i].value))
            t0 = time.process_time()
            v = linprog_node(design, y, counts, rows, signs)
            times["linprog"].append(time.process_time() - t0)
            diff["linprog"] = max(diff["linprog"], abs(v - sols[i].value))
    print(f"hinge node solves, n = {args.n}, p = {args.p}, {args.replicates} replicates (seed {args.seed}), "
          f"{len(times['lp'])} nodes ({solves / max(len(runs), 1):.0f} per replicate incl. screening); "
          f"simplex iterations per solve: {iterations / max(solves, 1):.1f}")
    print(f"{'solver':16s} {'nodes':>6s} {'median us':>10s} {'mean us':>10s} {'max |value - lp|':>17s}")
    for k, ts in times.items():
        if ts:
            d = f"{diff[k]:.1e}" if k in diff else "-"
            med, mean = statistics.median(ts) * 1e6, statistics.fmean(ts) * 1e6
            print(f"{k:16s} {len(ts):6d} {med:10.1f} {mean:10.1f} {d:>17s}")


if __name__ == "__main__":
    main()
