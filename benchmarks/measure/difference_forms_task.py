"""The three factors of the CUD difference interval (joint, min, product: docs/method.md) on one task of the third
study, their half-widths, nodes and seconds; cited in benchmarks/RESULTS.md (2026-12-02, twelfth sitting).

    python benchmarks/measure/difference_forms_task.py --dataset liver --n 100 --rep 3 --resamples 100 \
        [--forms joint,min,product] [--data DIR]

The task's training draw (``experiments/study3_cud.toml``: A least squares on the data set's basis, B on
``basis_b``), then ``cudbound.compare.cud_difference_interval(A, B, X, y, n_resamples=RESAMPLES, rng=0,
form=FORM)`` for each form, after an untimed run on the first 40 points (kernels loaded). Prints the machine,
the command and one JSON line per form; writes them to
``benchmarks/raw/DATE_COMMIT_difference_forms_DATASET_nN_repREP.json``.
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


def main():
    import numpy as np
    from cudbound import Procedure
    from cudbound.compare.cud import cud_difference_interval
    from cudbound.coverage import load_config
    from cudbound.coverage.auc_tasks import _draw
    from cudbound.coverage.config import Task

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="liver")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--resamples", type=int, default=100)
    ap.add_argument("--forms", default="joint,min,product")
    ap.add_argument("--data", default=os.environ.get("CUDBOUND_DATA"), help="the UCI files (default $CUDBOUND_DATA)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}")
    print("command: python " + " ".join(sys.argv))
    cfg = load_config(os.path.join(rawname.REPO, "experiments", "study3_cud.toml"), data_home=args.data)
    task = Task(args.dataset, args.n, args.rep)
    data_ss, _ = cfg.task_seed(task).spawn(2)
    X, y, *_ = _draw(cfg, task, np.random.default_rng(data_ss), args.data)
    spec = cfg.dataset(args.dataset)
    a, b = Procedure(basis=spec.basis, loss=cfg.loss), Procedure(basis=spec.basis_b, loss=cfg.loss)
    cud_difference_interval(a, b, X[:40], y[:40], n_resamples=20, rng=1)
    rows = []
    for form in args.forms.split(","):
        t0 = time.perf_counter()
        res = cud_difference_interval(a, b, X, y, n_resamples=args.resamples, rng=0, form=form)
        row = {"form": form, "seconds": time.perf_counter() - t0, "nodes": int(np.sum(res.details["stats"].nodes)),
               "interval": [float(v) for v in res.confidence_interval], "half_width": res.details["half_width"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    record = {"command": "python " + " ".join(sys.argv), "task": [args.dataset, args.n, args.rep],
              "resamples": args.resamples, "rows": rows}
    rawname.write_record(f"difference_forms_{args.dataset}_n{args.n}_rep{args.rep}", record, args.out)


if __name__ == "__main__":
    main()
