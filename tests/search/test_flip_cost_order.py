"""``bounds._order_into``: the order of the flip costs that every node's bound walks, without allocating.

It must be the stable order of the keys (ties by index), so the bounds it feeds are those of
``np.argsort``'s order (equal keys form one run, whose end each bound reads), and a search visits the
same nodes whichever sort made the order.
"""
import numpy as np
import pytest

from cudbound.search.bounds import _order_into


@pytest.mark.parametrize("n", [0, 1, 2, 3, 15, 16, 17, 18, 33, 64, 257])
def test_the_order_is_the_stable_order_of_the_keys(n):
    rng = np.random.default_rng(1_700 + n)
    for trial in range(20):
        # few distinct values, so that ties are the rule (flip costs of 0 and of repeated points tie)
        keys = rng.integers(0, max(2, n // 3), size=n + 5).astype(float) * rng.choice([1.0, 0.1])
        if trial % 4 == 3:
            keys = rng.standard_normal(n + 5)
        keys[n:] = -1.0  # beyond n: never looked at
        out = np.full(n + 5, -7, dtype=np.int64)
        _order_into(keys, n, out)
        np.testing.assert_array_equal(out[:n], np.argsort(keys[:n], kind="stable"))
        assert np.all(out[n:] == -7)


def test_infinite_keys_sort_last_among_their_equals_by_index():
    keys = np.array([np.inf, 0.0, np.inf, -np.inf, 2.0] * 5)
    out = np.empty(keys.size, dtype=np.int64)
    _order_into(keys, keys.size, out)
    np.testing.assert_array_equal(out, np.argsort(keys, kind="stable"))
