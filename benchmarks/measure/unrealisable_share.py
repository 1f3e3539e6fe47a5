"""Share of unrealisable nodes (the most hull propagation could save), from record_tree on 40
replicates of the squared loss, n = 50, p = 5, noisy, seed 2; docs/engine.md.

    python benchmarks/measure/unrealisable_share.py
"""
import numpy as np, networkx as nx
from cudbound.cud import search_replicate
from cudbound.datasets import LinearGaussian
X, y = LinearGaussian(n_features=4, flip_probability=0.3).sample(50, np.random.default_rng(2))
design = np.column_stack([np.ones(50), X])
rng = np.random.default_rng(2)
tot = {"nodes": 0, "unreal": 0, "leaf": 0, "pruned": 0, "expanded": 0}
vals = []
for b in range(40):
    counts = rng.multinomial(50, np.ones(50) / 50)
    out = search_replicate(design, y, counts, record_tree=True)
    st = nx.get_node_attributes(out.tree, "state")
    tot["nodes"] += out.nodes
    for k, key in (("unrealisable", "unreal"), ("leaf", "leaf"), ("pruned", "pruned"), ("expanded", "expanded")):
        tot[key] += sum(v == k for v in st.values())
    fast = search_replicate(design, y, counts)
    vals.append((out.value, fast.value, out.nodes, fast.nodes))
print(tot, "unrealisable share %.3f" % (tot["unreal"] / tot["nodes"]))
print("values equal:", all(abs(a - b) <= 1e-12 for a, b, _, _ in vals), "nodes tree/compiled", sum(v[2] for v in vals), sum(v[3] for v in vals))
