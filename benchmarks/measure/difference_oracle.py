"""Where a CUD difference interval's nodes go: the order statistic's refinement against an exhaustive search and
against an oracle that knows Q_hat; cited in benchmarks/RESULTS.md (2026-12-02, twelfth sitting).

    python benchmarks/measure/difference_oracle.py --rep 3 --resamples 100 [--data DIR]

The third study's Liver n = 100 task REP (``experiments/study3_cud.toml``'s draw: A least squares on three
principal components, B on their quadratic) and RESAMPLES count vectors drawn by ``cudbound.resampling.draw_counts``
with ``default_rng(11)``. Three computations of the same Q_hat (the 0.95 order statistic): the refinement as
``cudbound.compare.cud_difference_interval`` runs it (each replicate's lead frontier searched in full once, the
joint searches in rounds); every joint search to the end; and, given Q_hat, each replicate's joint search with the
least it must do (a floor of Q_hat for a replicate at or below it, stopping above Q_hat for one above). Prints the
machine and the command, the nodes of each (the lead frontiers' apart) and the seconds (the machine's load
inflates them; the nodes are exact); writes the JSON to ``benchmarks/raw/DATE_COMMIT_difference_oracle_liver_repREP.json``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import rawname  # noqa: E402
from difference_degenerate import task_arguments  # noqa: E402


def _joint_nodes(out, lead):
    return out.frontier_b.nodes if out.frontier_a is lead else out.frontier_a.nodes


def main():
    import numpy as np
    from cudbound import cud_difference as cd
    from cudbound.compare import cud as compare_cud
    from cudbound.quantile import order_index, order_statistic
    from cudbound.resampling import draw_counts
    from cudbound.search import SearchOptions

    args, A, B = task_arguments(__doc__, 100)
    n, R = len(A.y), args.resamples
    alpha = float(n)
    counts = draw_counts(n, R, np.random.default_rng(11)).astype(float)
    k = order_index(0.95, R)
    t0 = time.perf_counter()
    run = compare_cud._Replicates(A, B, counts, alpha, SearchOptions(), "joint")
    q = order_statistic(run, R, k, SearchOptions(), wait_above=False, state_bytes=compare_cud.STATE_BYTES)
    refinement = {"q_hat_counts": q.value * n, "nodes": int(sum(r.nodes for r in q.records)), "rounds": q.rounds,
                  "seconds": time.perf_counter() - t0}
    leads = dict(run.leads)
    lead_nodes = int(sum(f.nodes for f in leads.values()))
    refinement["lead_nodes"] = lead_nodes
    refinement["joint_nodes"] = refinement["nodes"] - lead_nodes
    print("refinement", json.dumps(refinement), flush=True)
    t0 = time.perf_counter()
    values, exhaustive = np.zeros(R), 0
    for i in range(R):
        out = cd.search_replicate_difference(A, B, counts[i], alpha, SearchOptions(), lead=leads[i])
        values[i], exhaustive = out.value, exhaustive + _joint_nodes(out, leads[i])
    q_hat = float(np.sort(values)[k - 1])
    full = {"q_hat_counts": q_hat * n, "joint_nodes": exhaustive, "seconds": time.perf_counter() - t0}
    print("exhaustive", json.dumps(full), flush=True)
    t0 = time.perf_counter()
    oracle = 0
    for i in range(R):
        below = values[i] <= q_hat + 1e-12
        opts = SearchOptions(floor=q_hat - 1e-9) if below else SearchOptions(stop_above=q_hat + 1e-9)
        oracle += _joint_nodes(cd.search_replicate_difference(A, B, counts[i], alpha, opts, lead=leads[i]), leads[i])
    best = {"joint_nodes": oracle, "seconds": time.perf_counter() - t0}
    print("oracle", json.dumps(best), flush=True)
    record = {"command": "python " + " ".join(sys.argv), "rep": args.rep, "resamples": R, "k": k,
              "refinement": refinement, "exhaustive": full, "oracle": best,
              "q_counts_sorted": [float(v * n) for v in np.sort(values)]}
    rawname.write_record(f"difference_oracle_liver_rep{args.rep}", record, args.out)


if __name__ == "__main__":
    main()
