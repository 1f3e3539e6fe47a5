"""The probed starting value of a quadratic replicate (``search/probes.py``).

The compiled replicate starts its search from the best value of classifiers probed on the
neighbourhood's boundary. Stopped before its first expansion (``max_nodes=1``), a search reports
that value as attained: it must never exceed the exact Q^(b) (the search set up in Python, which
probes nothing), and it must often beat the two classifiers the search knew before
(beta_hat and the unconstrained minimiser), or the probes do nothing.
"""
import numpy as np
import pytest

from cudbound.cud import search_replicate
from cudbound.design import reparametrise
from cudbound.search import SearchOptions


def _value(Z, y, counts, b, b_hat, alpha):
    n = len(y)
    wrong = np.where(Z @ b >= 0.0, 1.0, -1.0) != y
    C = np.sum((counts - 1.0) * wrong)
    L = np.dot(counts, (y - Z @ b) ** 2) / n
    L_hat = np.dot(counts, (y - Z @ b_hat) ** 2) / n
    return abs(C) / n * (1.0 if alpha == 0.0 else max(0.0, min(1.0, 1.0 + alpha * (L_hat - L))))


@pytest.mark.parametrize("scale, least", [(1.0, 10), (0.1, 10), (10.0, 10), (0.0, 0)])
def test_the_probed_value_is_attained_and_says_something(scale, least):
    """alpha_n = scale * n: the default, a wider and a narrower neighbourhood (the g = 1/2 level
    matters more there), and alpha_n = 0 (no neighbourhood: nothing is probed)."""
    rng = np.random.default_rng(4_400_100)
    beats = 0
    for i in range(30):
        n = int(rng.choice([30, 60, 120]))
        X = rng.standard_normal((n, 2)) * rng.choice([1.0, 1e-3]) + rng.choice([0.0, 1e3])
        y = np.where((X - X.mean(axis=0)) @ rng.standard_normal(2) + np.std(X) * rng.standard_normal(n) >= 0, 1.0, -1.0)
        design = np.column_stack([np.ones(n), X])
        counts = rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
        alpha = scale * n
        first = search_replicate(design, y, counts, alpha_n=alpha, search_options=SearchOptions(max_nodes=1))
        exact = search_replicate(design, y, counts, alpha_n=alpha, engine_options={"engine": "python"})
        assert exact.status == "exact"
        assert first.lower <= exact.value + 1e-12, (i, first.lower, exact.value)
        Z = reparametrise(design).Z
        b_hat = np.linalg.lstsq(Z, y, rcond=None)[0]
        b_u = np.linalg.lstsq(Z * np.sqrt(counts)[:, None], y * np.sqrt(counts), rcond=None)[0]
        known = max(_value(Z, y, counts, b_hat, b_hat, alpha), _value(Z, y, counts, b_u, b_hat, alpha))
        beats += first.lower > known + 0.5 / n
    assert beats >= least, beats
