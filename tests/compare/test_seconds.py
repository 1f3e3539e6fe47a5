"""Each comparison's ``seconds`` includes its share of the work it shares with others: the out-of-fold
refits, computed once by the first comparison on predictions and reused by the rest (issue 44's "each
method's seconds includes its share of shared work"). Time is a fake clock that moves only with the
refits, so the shares are exact."""
import numpy as np
import pytest
from fake_clock import install

from cudbound._budget import charge_shared
from cudbound.compare import Procedure, compare
from cudbound.compare.procedures import _Refits

A, B = Procedure(), Procedure(basis="poly:2")


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    return X, np.where(X[:, 0] + 0.8 * rng.normal(size=40) > 0, 1, -1)


@pytest.fixture
def clock(monkeypatch):
    """A fake clock that moves one second for every fold of an out-of-fold refit and for nothing else."""
    clock = install(monkeypatch)
    out_of_fold = _Refits.out_of_fold

    def timed(self, X, labels, folds):
        clock.advance(float(np.max(folds) + 1))
        return out_of_fold(self, X, labels, folds)
    monkeypatch.setattr(_Refits, "out_of_fold", timed)
    return clock


def test_the_comparisons_on_predictions_share_the_out_of_fold_refits_equally(xy, clock):
    X, y = xy
    results = compare(A, B, X, y, methods=["mcnemar", "tango", "newcombe", "agresti_min"], cv=5, rng=0)
    # one set of refits: 5 folds of A and 5 of B, 10 s, computed by mcnemar and used by all four
    assert [r.seconds for r in results] == pytest.approx([2.5] * 4)
    assert [r.details["shared_seconds"] for r in results] == pytest.approx([2.5] * 4)
    assert sum(r.seconds for r in results) == pytest.approx(clock.now - 1000.0)


def test_a_comparison_that_shares_nothing_keeps_its_own_seconds(xy, clock):
    X, y = xy
    results = compare(A, B, X, y, methods=["wald_cv", "mcnemar", "tango"], cv=4, rng=0)
    assert results[0].seconds == 0.0 and "shared_seconds" not in results[0].details   # its refits move no clock here
    assert [r.seconds for r in results[1:]] == pytest.approx([4.0, 4.0])               # 2 x 4 folds, halved


def test_one_comparison_alone_carries_its_whole_out_of_fold_cost(xy, clock):
    X, y = xy
    (res,) = compare(A, B, X, y, methods=["mcnemar"], cv=3, rng=0)
    assert res.seconds == pytest.approx(6.0) and res.details["shared_seconds"] == pytest.approx(6.0)


def test_charge_shared_moves_a_piece_from_its_maker_to_its_users_and_keeps_the_total():
    own = [10.0, 1.0, 7.0, 2.0]
    pieces = [{"p": 6.0}, {"p": 6.0, "q": 3.0}, {}, {"q": 3.0}]   # 0 made p; 1 made q
    share = charge_shared(own, pieces)
    assert own == [4.0, -2.0, 7.0, 2.0]
    assert share == pytest.approx([3.0, 4.5, 0.0, 1.5])
    assert sum(o + s for o, s in zip(own, share)) == pytest.approx(20.0)


def test_refits_made_before_the_run_are_charged_to_no_comparison(xy, clock):
    """A study's AUC rows compute A's and B's out-of-fold refits before its comparisons run
    (``compare_pair`` on the same pair): the comparisons that reuse them did not pay for them, so no
    seconds move (none may turn negative)."""
    from cudbound.compare import ProcedurePair, compare_pair, root_seed
    from cudbound.resampling import OUT_OF_FOLD_STREAM, draw_folds, stream
    X, y = xy
    pair = ProcedurePair(A, B, X, y)
    root = root_seed(0)
    folds = draw_folds(pair.labels, 5, 1, True, np.random.default_rng(stream(root, OUT_OF_FOLD_STREAM)))[0]
    pair.out_of_fold(folds)
    before = clock.now
    results = compare_pair(pair, ["mcnemar", "tango"], root, shared={"cv": 5})
    assert clock.now == before                              # the refits were reused, not redone
    assert [r.seconds for r in results] == [0.0, 0.0]
    assert all("shared_seconds" not in r.details for r in results)
