"""Non-quadratic losses' exact pieces (``cudbound/optim/smooth.py``): the separation LP against
its defining properties, and Newton polishing against closed-form minimisers."""
import numpy as np
import pytest

from cudbound.optim.smooth import polish_smooth, separation


def _check_direction(design, y, w, mask, d):
    """d separates exactly the points of the mask: y_i phi_i'd > 0 there, = 0 on the other
    weighted points (up to round-off)."""
    s = y * (design @ d)
    scale = np.linalg.norm(design, axis=1) * np.linalg.norm(d)
    assert np.all(s[mask] > 1e-9 * scale[mask])
    other = (w > 0) & ~mask
    assert np.all(np.abs(s[other]) <= 1e-9 * scale[other])


@pytest.mark.parametrize("seed", range(30))
def test_separation_finds_the_largest_separated_set(seed):
    """Random 1-feature data, possibly with a tie at the boundary: every point a direction can
    put strictly on its side is in the mask (brute force over the sign of the slope and the
    threshold between sorted points), and d separates exactly those."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 9))
    x = np.round(rng.normal(size=n), 1)
    y = np.where(x + (0.8 if seed % 2 else 0.0) * rng.normal(size=n) > 0, 1.0, -1.0)
    design = np.column_stack([np.ones(n), x])
    w = rng.integers(0, 3, size=n).astype(float)
    mask, d = separation(design, y, w, np.eye(2))
    if d is None:
        assert not mask.any()
    else:
        _check_direction(design, y, w, mask, d)
    # brute force: directions (a, b) that meet y_i (a + b x_i) >= 0 on the weighted points form a
    # polyhedral cone; its generators are the rays through pairs of the constraints' boundaries
    rows = design[w > 0] * y[w > 0, None]
    best = np.zeros(n, dtype=bool)
    angles = np.linspace(0, 2 * np.pi, 3601)
    cands = [np.array([np.cos(t), np.sin(t)]) for t in angles]
    cands += [np.array([r[1], -r[0]]) * sgn for r in rows for sgn in (1, -1)]
    for c in cands:
        if np.all(rows @ c >= -1e-12):
            hit = np.zeros(n, dtype=bool)
            hit[w > 0] = rows @ c > 1e-9
            best |= hit  # the union of separable sets is separable (sum of directions)
    assert np.array_equal(mask, best)


def test_nothing_separable_on_overlapping_classes():
    design = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    mask, d = separation(design, y, np.ones(4), np.eye(2))
    assert not mask.any() and d is None


def test_polish_smooth_reaches_the_constrained_minimiser():
    """f(x) = sum exp(x_i - c_i) - x_i has its minimum at x = c; with x_1 >= 0 and c_1 < 0 the
    minimiser is (0, c_2), and the polish finds it from a point 1e-6 away."""
    c = np.array([-0.7, 0.4])
    f = lambda x: float(np.sum(np.exp(x - c) - x))  # noqa: E731
    grad = lambda x: np.exp(x - c) - 1.0  # noqa: E731
    hess = lambda x: np.diag(np.exp(x - c))  # noqa: E731
    G = np.array([[1.0, 0.0]])
    x = polish_smooth(f, grad, hess, G, np.array([1e-6, 0.4 + 1e-6]))
    np.testing.assert_allclose(x, [0.0, 0.4], atol=1e-12)
    assert polish_smooth(f, grad, hess, G, np.array([np.nan, 0.0])) is None
