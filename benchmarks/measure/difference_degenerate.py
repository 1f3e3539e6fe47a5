"""Which resamples make the third study's Liver n = 100 tasks slow: the CUD difference's searches on resamples
whose neighbourhood contains the zero classifier (``docs/engine.md``, "A resample on which the fit is no better
than the zero classifier"); cited in benchmarks/RESULTS.md and results/study3/README.md (2026-12-02).

    python benchmarks/measure/difference_degenerate.py --rep 12 --resamples 30 [--max-nodes 3000000] [--data DIR]

The task (Liver, n = 100, repetition REP of ``experiments/study3_cud.toml``: its training draw, A least squares
on three principal components, B on their quadratic) and RESAMPLES bootstrap count vectors drawn with
``default_rng(7)`` (not the task's own B = 500). For each: whether L(D^(b), 0) (= 1 for squared loss and labels
+-1) lies below the level of A's frontier, K_A + 1/alpha_n + (K_B - L_u,B), and below that of B's joint search
(the same with A and B swapped), where every realisable pattern then has m <= L(0) and the loss prunes none;
the lead frontier's and the joint search's nodes, seconds and Q^(b) (a bracket when ``--max-nodes`` stops it).
Prints the machine and the command, then one line per resample and the means by class; writes the JSON to
``benchmarks/raw/DATE_COMMIT_difference_degenerate_liver_repREP.json``.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import rawname  # noqa: E402


def _sides(rep, data):
    import numpy as np
    from cudbound import cud_difference as cd
    from cudbound.coverage import load_config
    from cudbound.coverage.auc_tasks import _draw
    from cudbound.coverage.config import Task

    cfg = load_config(os.path.join(rawname.REPO, "experiments", "study3_cud.toml"), data_home=data)
    task = Task("liver", 100, rep)
    data_ss, _ = cfg.task_seed(task).spawn(2)
    _, ytr, _, _, (_, design_a), (_, design_b), _ = _draw(cfg, task, np.random.default_rng(data_ss), data)
    y = np.where(ytr > 0, 1.0, -1.0)
    return cd.DifferenceSide.from_design(design_a, y, "squared"), cd.DifferenceSide.from_design(design_b, y, "squared")


def task_arguments(doc, resamples, extra=()):
    """The Liver n = 100 task scripts' arguments (--rep, --resamples, --data, --out and ``extra``: (flag,
    keywords) pairs), parsed after printing the machine and the command; returns (args, side A, side B)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--resamples", type=int, default=resamples)
    for flag, keywords in extra:
        ap.add_argument(flag, **keywords)
    ap.add_argument("--data", default=os.environ.get("CUDBOUND_DATA"), help="the UCI files (default $CUDBOUND_DATA)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print("command: python " + " ".join(sys.argv))
    return (args,) + _sides(args.rep, args.data)


def main():
    import numpy as np
    from cudbound import cud_difference as cd
    from cudbound.search import SearchOptions

    args, A, B = task_arguments(__doc__, 30, [("--max-nodes", dict(type=int, default=3_000_000,
                                                                     help="per search (a bracket past it)"))])
    assert cd.leading(A, B)        # A's frontier is the one searched in full
    n = len(A.y)
    alpha = float(n)
    rng = np.random.default_rng(7)
    rows = []
    for r in range(args.resamples):
        counts = rng.multinomial(n, np.ones(n) / n).astype(float)
        K_a = A.loss.value(A.Z, A.y, counts, A.gamma_hat)
        K_b = B.loss.value(B.Z, B.y, counts, B.gamma_hat)
        L0 = float(np.dot(counts, A.y * A.y) / n)            # the zero classifier's loss
        slack_a, slack_b = A.slack(counts), B.slack(counts)
        t0 = time.perf_counter()
        out = cd.search_replicate_difference(A, B, counts, alpha, SearchOptions(max_nodes=args.max_nodes))
        row = {"resample": r, "zero_in_a": bool(K_a + 1 / alpha + slack_b > L0),
               "zero_in_b": bool(K_b + 1 / alpha + slack_a > L0), "lead_nodes": out.frontier_a.nodes,
               "joint_nodes": out.frontier_b.nodes, "seconds": time.perf_counter() - t0, "status": out.status,
               "q_counts_low": out.lower * n, "q_counts_high": out.value * n}
        rows.append(row)
        print(json.dumps(row), flush=True)
    classes = {"zero in neither": lambda w: not w["zero_in_a"] and not w["zero_in_b"],
               "zero in A's level only": lambda w: w["zero_in_a"] and not w["zero_in_b"],
               "zero in B's level": lambda w: w["zero_in_b"]}
    summary = {}
    for name, test in classes.items():
        sel = [w for w in rows if test(w)]
        if sel:
            summary[name] = {"resamples": len(sel), "mean_lead_nodes": float(np.mean([w["lead_nodes"] for w in sel])),
                             "mean_joint_nodes": float(np.mean([w["joint_nodes"] for w in sel])),
                             "mean_seconds": float(np.mean([w["seconds"] for w in sel])),
                             "stopped_by_max_nodes": sum(w["status"] == "budget" for w in sel)}
            print(name, json.dumps(summary[name]))
    record = {"command": "python " + " ".join(sys.argv), "rep": args.rep, "train_error_a": A.train_error,
              "train_error_b": B.train_error, "max_nodes": args.max_nodes, "rows": rows, "summary": summary}
    rawname.write_record(f"difference_degenerate_liver_rep{args.rep}", record, args.out)


if __name__ == "__main__":
    main()
