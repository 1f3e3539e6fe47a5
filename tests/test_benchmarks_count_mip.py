"""The count bound of benchmarks/measure/difference_count_mip.py (benchmarks/RESULTS.md, nineteenth sitting)
is the largest count C = sum_i (nu_i - 1) 1{s_i != y_i} over the realisable patterns: on small random problems
its program's optimum equals brute-force enumeration of every pattern, each checked by a linear program
(s_i phi_i'beta >= 1 feasible), independent of the package's realisability code."""
import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

MEASURE = Path(__file__).resolve().parents[1] / "benchmarks" / "measure"
pytestmark = pytest.mark.skipif(not MEASURE.is_dir(), reason="no benchmarks/ folder (not a checkout)")


def _module():
    sys.path.insert(0, str(MEASURE.parent))
    sys.path.insert(0, str(MEASURE))
    try:
        spec = importlib.util.spec_from_file_location("difference_count_mip", MEASURE / "difference_count_mip.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        del sys.path[:2]
    return module


def _realisable(Z, s):
    res = linprog(np.zeros(Z.shape[1]), A_ub=-(s[:, None] * Z), b_ub=-np.ones(len(s)),
                  bounds=[(None, None)] * Z.shape[1], method="highs")
    return res.status == 0


@pytest.mark.parametrize("seed", range(8))
def test_count_bound_equals_the_enumerated_maximum(seed):
    count_bound = _module().count_bound
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 10)), int(rng.integers(2, 4))
    Z = np.c_[np.ones(n), rng.normal(size=(n, p - 1))]
    y = rng.choice([-1.0, 1.0], n)
    counts = rng.multinomial(n, np.ones(n) / n).astype(float)
    best = -np.inf
    for s in itertools.product([-1.0, 1.0], repeat=n):
        s = np.array(s)
        C = float(np.sum((counts - 1) * (s != y)))
        if C > best and _realisable(Z, s):
            best = C
    found, bound, _, status = count_bound(Z, y, counts, 60.0)
    assert status == 0
    assert found == pytest.approx(best, abs=1e-6)
    assert bound == pytest.approx(best, abs=1e-6)
