"""Squared-loss searches with chains of bounds of several lengths (``SearchOptions.bound_chain``: a child that keeps
its parent's minimiser takes its bound from the parent's chain, ``bounds._chain``); cited in benchmarks/RESULTS.md
and docs/engine.md.

    python benchmarks/measure/bound_chain.py [--n 1000] [--seeds 0 2] [--replicates 60] [--chains 0,1,2,4,8]
        [--rounds 2] [--out FILE]

The data are ``LinearGaussian(n_features=4, flip_probability=0.2)`` drawn with the seed, the count vectors
``default_rng(seed).multinomial``; each replicate is searched to the end (``cudbound.search_replicate``, no
quantile refinement), in this process (run it pinned to one core: ``taskset -c 1``), after one untimed search.
Each round runs every chain length over the same replicates in turn; CPU seconds per length and round, and the
total nodes, which must be the same for every length (the script says whether they are, with the values).
Prints the machine and the command; writes one JSON record.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import rawname  # noqa: E402


def _seed_runs(n, seed, replicates, chains, rounds):
    import cudbound
    from cudbound.datasets import LinearGaussian
    from cudbound.search import SearchOptions

    X, y = LinearGaussian(n_features=4, flip_probability=0.2).sample(n, seed)
    design = np.column_stack([np.ones(n), X])
    rng = np.random.default_rng(seed)
    counts = [rng.multinomial(n, np.ones(n) / n) for _ in range(replicates)]
    cudbound.search_replicate(design, y, counts[0])
    seconds = {k: [] for k in chains}
    results = {}
    for _ in range(rounds):
        for k in chains:
            c0 = time.process_time()
            outs = [cudbound.search_replicate(design, y, c, search_options=SearchOptions(bound_chain=k)) for c in counts]
            seconds[k].append(round(time.process_time() - c0, 3))
            results.setdefault(k, ([o.nodes for o in outs], [o.value for o in outs]))
    first = results[chains[0]]
    return {"n": n, "seed": seed, "replicates": replicates, "cpu_seconds": {str(k): v for k, v in seconds.items()},
            "nodes_total": sum(first[0]), "same_nodes_and_values": all(r == first for r in results.values())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--replicates", type=int, default=60)
    ap.add_argument("--chains", default="0,1,2,4,8")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    chains = [int(k) for k in args.chains.split(",")]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"python {platform.python_version()}")
    command = "python " + " ".join(sys.argv)
    print("command: " + command, flush=True)
    record = {"command": command, "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "runs": []}
    out = args.out or rawname.stem("bound_chain") + ".json"
    for seed in args.seeds:
        row = _seed_runs(args.n, seed, args.replicates, chains, args.rounds)
        record["runs"].append(row)
        print(json.dumps(row), flush=True)
        rawname.write_record("bound_chain", record, out)


if __name__ == "__main__":
    main()
