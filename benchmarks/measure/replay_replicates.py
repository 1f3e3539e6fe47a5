"""Replay captured replicate searches (``capture_replicates.py``) and print their CPU time.

    taskset -c 1 python benchmarks/measure/replay_replicates.py /tmp/calls.pkl

Works with any version that has ``cudbound.search.core.compiled_replicate(Zu, group, y, counts,
H, g, c, beta_hat, alpha, options)`` (8af58cc or later): one warm-up replay, then five timed ones
(``time.process_time``); prints the total nodes and the median.
"""
import pickle
import sys
import time

import numpy as np

from cudbound.search.core import compiled_replicate

with open(sys.argv[1], "rb") as fh:
    calls = pickle.load(fh)


def run():
    return sum(compiled_replicate(*a).nodes for a in calls)


run()
ts = []
for _ in range(5):
    t = time.process_time()
    nodes = run()
    ts.append(time.process_time() - t)
print(f"nodes {nodes} median {np.median(ts) * 1e3:.1f} ms", [round(x * 1e3, 1) for x in ts])
