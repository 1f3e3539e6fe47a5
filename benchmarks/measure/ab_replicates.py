"""Replay captured replicate searches (``capture_replicates.py``) on two versions in one process, alternating.

    mkdir -p /tmp/oldpkg && cp -r <old site-packages>/cudbound /tmp/oldpkg/cudbound_old
    taskset -c 1 python benchmarks/measure/ab_replicates.py /tmp/calls.pkl 2

The old version is imported as ``cudbound_old`` from /tmp/oldpkg (its imports are relative), the
checkout as ``cudbound``; each round replays every call once with each version (order alternating)
and the CPU times are compared (median ratio old/new). Issue 30, 2026-11-26.
"""
import pickle, sys, time, numpy as np
sys.path.insert(0, "/tmp/oldpkg")
from cudbound_old.search.core import compiled_replicate as old_cr
from cudbound.search.core import compiled_replicate as new_cr
calls = pickle.load(open(sys.argv[1], "rb"))
def run(f):
    return sum(f(*a).nodes for a in calls)
print(run(old_cr), run(new_cr))
res = {"old": [], "new": []}
for rep in range(int(sys.argv[2]) if len(sys.argv) > 2 else 8):
    for name, f in (("old", old_cr), ("new", new_cr)) if rep % 2 == 0 else (("new", new_cr), ("old", old_cr)):
        t = time.process_time(); run(f); res[name].append((time.process_time() - t) * 1e3)
for k, v in res.items():
    print(k, f"median {np.median(v):.1f} ms", [round(x) for x in v])
print("ratio old/new", np.median(res["old"]) / np.median(res["new"]))
