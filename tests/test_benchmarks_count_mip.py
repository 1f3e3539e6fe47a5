"""The count bound of benchmarks/measure/difference_count_mip.py (benchmarks/RESULTS.md, nineteenth sitting)
is the largest count C = sum_i (nu_i - 1) 1{s_i != y_i} over the realisable patterns: on small random problems
its program's optimum equals the maximum over every realisable pattern, enumerated by the tests' reference
(tests/_support/reference.py: a linear program per pattern, independent of the package's realisability code)."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from reference import realisable_patterns

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


@pytest.mark.parametrize("seed", range(8))
def test_count_bound_equals_the_enumerated_maximum(seed):
    count_bound = _module().count_bound
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(6, 10)), int(rng.integers(2, 4))
    Z = np.c_[np.ones(n), rng.normal(size=(n, p - 1))]
    y = rng.choice([-1.0, 1.0], n)
    counts = rng.multinomial(n, np.ones(n) / n).astype(float)
    best = float(np.max((realisable_patterns(Z) != y) @ (counts - 1)))
    found, bound, _, status = count_bound(Z, y, counts, 60.0)
    assert status == 0
    assert found == pytest.approx(best, abs=1e-6)
    assert bound == pytest.approx(best, abs=1e-6)
