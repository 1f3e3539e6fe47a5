"""cudbound/search/heap.py: the queue of open nodes pops the largest bound first, ties by the smaller slot."""
import numpy as np
import pytest

from cudbound.search.heap import _heap_pop, _heap_push


@pytest.mark.parametrize("seed", range(5))
def test_pops_come_out_as_a_sort_by_bound_then_slot(seed):
    rng = np.random.default_rng(seed)
    n = 200
    keys = rng.integers(0, 20, size=n).astype(float)  # many ties
    slots = rng.permutation(n)
    hk = np.zeros(n)
    hid = np.zeros(n, dtype=np.int64)
    size = 0
    for k, s in zip(keys, slots):
        size = _heap_push(hk, hid, size, k, s)
    out = []
    while size > 0:
        k, s, size = _heap_pop(hk, hid, size)
        out.append((k, s))
    assert out == sorted(zip(keys.tolist(), slots.tolist()), key=lambda t: (-t[0], t[1]))


def test_interleaved_pushes_and_pops_keep_the_order():
    rng = np.random.default_rng(7)
    hk = np.zeros(64)
    hid = np.zeros(64, dtype=np.int64)
    size = 0
    live = []
    for step in range(300):
        if size < 64 and (size == 0 or rng.random() < 0.6):
            k, s = float(rng.integers(0, 5)), int(rng.integers(0, 1000))
            size = _heap_push(hk, hid, size, k, s)
            live.append((k, s))
        else:
            k, s, size = _heap_pop(hk, hid, size)
            best = min(live, key=lambda t: (-t[0], t[1]))
            assert (k, s) == best
            live.remove(best)
