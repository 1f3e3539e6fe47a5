"""Peak memory and time of the CUD interval of a difference with given memory limits: the joint searches'
node pool (``SearchOptions.node_memory``) and the states kept between rounds (``compare.cud.STATE_BYTES``);
cited in ``compare.cud.STATE_BYTES`` and benchmarks/RESULTS.md (2026-12-02).

    python benchmarks/measure/difference_memory.py --seed 0 [--resamples 500] [--node-mib 128] [--state-mib 128]

The logistic case of ``benchmarks/difference.py`` (n = 100, A logistic on the linear basis, B logistic on
``poly:2``, ``LinearGaussian(n_features=2, flip_probability=0.2)``), after an untimed run at n = 30, B = 20
(kernels loaded). Prints the machine, the command, and one JSON line: wall seconds, nodes, half-width,
the resident set after the warm-up and its peak (``getrusage``).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy is imported

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def _rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=500)
    ap.add_argument("--node-mib", type=int, default=None, help="SearchOptions.node_memory, MiB")
    ap.add_argument("--state-mib", type=int, default=None, help="compare.cud.STATE_BYTES, MiB")
    args = ap.parse_args()

    import cudbound
    import cudbound.compare.cud as cud_mod
    from cudbound.compare import cud_difference_interval
    from cudbound.datasets import LinearGaussian
    from cudbound.search import options as options_mod

    if args.state_mib is not None:
        assert hasattr(cud_mod, "STATE_BYTES"), "this version has no compare.cud.STATE_BYTES"
        cud_mod.STATE_BYTES = args.state_mib << 20
    if args.node_mib is not None:
        default = options_mod.SearchOptions
        assert "node_memory" in {f.name for f in dataclasses.fields(default)}
        original_init = default.__init__

        def init(self, *a, **kw):
            kw.setdefault("node_memory", args.node_mib << 20)
            original_init(self, *a, **kw)
        default.__init__ = init
    print("machine:", platform.machine(), platform.processor() or "", os.cpu_count(), "cores;",
          platform.python_version())
    print("command:", " ".join(sys.argv))
    X, y = LinearGaussian(n_features=2, flip_probability=0.2).sample(100, args.seed)
    a, b = cudbound.Procedure(loss="logistic"), cudbound.Procedure(basis="poly:2", loss="logistic")
    cud_difference_interval(a, b, X[:30], y[:30], n_resamples=20, rng=0)
    warm = _rss_mib()
    t0 = time.perf_counter()
    res = cud_difference_interval(a, b, X, y, n_resamples=args.resamples, rng=args.seed)
    out = {"seed": args.seed, "resamples": args.resamples,
           "node_memory_mib": options_mod.SearchOptions().node_memory >> 20,
           "state_mib": cud_mod.STATE_BYTES >> 20, "seconds": time.perf_counter() - t0,
           "nodes": int(res.details["search_nodes_total"]), "half_width": res.details["half_width"],
           "rss_after_warmup_mib": warm, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
