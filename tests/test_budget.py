"""The time budget (``cudbound._budget``): chunks handed out in order, a prefix of the loop under a
deadline, at least the minimum, never a chunk once the deadline has passed. Time is a fake clock
(tests/_support/fake_clock.py) that moves only with the simulated work."""
import numpy as np
import pytest
from fake_clock import install

from cudbound._budget import Budget, check_time_limit
from cudbound.resampling import draw_counts, draw_indices


def _run(budget, clock, total, per_resample, **kw):
    """The chunks a loop is handed, doing ``per_resample`` fake seconds of work per resample."""
    chunks = []
    for start, stop in budget.chunks(total, **kw):
        chunks.append((start, stop))
        clock.advance(per_resample * (stop - start))
    return chunks


def _covers_a_prefix(chunks):
    return chunks[0][0] == 0 and all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))


def test_without_a_limit_the_chunks_are_cap_sized_and_cover_everything():
    budget = Budget(None)
    assert list(budget.chunks(10, cap=4)) == [(0, 4), (4, 8), (8, 10)]
    assert list(budget.chunks(10)) == [(0, 10)]
    assert not budget.limited and budget.left() is None and not budget.spent()


def test_a_deadline_stops_the_chunks_after_the_work_it_allows(monkeypatch):
    """30 s at 1 s a resample: the chunks are a prefix of 0..100, the first one the minimum, the last
    one handed out before the deadline, and the work done ends within one resample of it."""
    clock = install(monkeypatch)
    budget = Budget(30.0)
    chunks = _run(budget, clock, 100, 1.0, minimum=2, cap=16)
    used = chunks[-1][1]
    assert _covers_a_prefix(chunks) and chunks[0] == (0, 2)
    assert all(1 <= stop - start <= 16 for start, stop in chunks)
    assert used == 30 and budget.spent() and budget.left() == 0.0


def test_the_minimum_is_done_whatever_the_time(monkeypatch):
    clock = install(monkeypatch)
    budget = Budget(0.0)
    assert budget.spent()
    assert _run(budget, clock, 100, 1.0, minimum=3, cap=2) == [(0, 2), (2, 3)]
    assert _run(budget, clock, 100, 1.0) == [(0, 1)]


def test_enough_time_covers_everything(monkeypatch):
    clock = install(monkeypatch)
    chunks = _run(Budget(1e6), clock, 50, 1.0, minimum=2, cap=7)
    assert _covers_a_prefix(chunks) and chunks[-1][1] == 50 and chunks[0] == (0, 2)


def test_the_earlier_deadline_wins(monkeypatch):
    clock = install(monkeypatch)
    assert Budget(10.0, deadline=clock.now + 5.0).left() == 5.0
    assert Budget(10.0, deadline=clock.now + 50.0).left() == 10.0
    assert Budget(None, deadline=clock.now + 5.0).left() == 5.0


def test_note_records_what_a_loop_used():
    details = {}
    Budget(None).note(details, "n_boot", 10, 200)
    assert details == {}
    budget = Budget(5.0)
    budget.note(details, "n_boot", 200, 200)
    assert details == {"n_boot_used": 200, "cut_by_time_limit": False}
    budget.note(details, "n_resamples", 12, 1000)
    budget.note(details, "repeats", 3, 3)
    assert details == {"n_boot_used": 200, "n_resamples_used": 12, "repeats_used": 3, "cut_by_time_limit": True}


@pytest.mark.parametrize("value, zero", [(-1.0, True), (0.0, False), (float("nan"), True), ("5", True)])
def test_check_time_limit_refuses(value, zero):
    with pytest.raises(ValueError, match="time_limit"):
        check_time_limit(value, zero=zero)


def test_check_time_limit_accepts():
    assert check_time_limit(None) is None and check_time_limit(0) == 0.0 and check_time_limit(2.5, zero=False) == 2.5


@pytest.mark.parametrize("cuts", [[1, 2, 3], [5, 1], [7]])
def test_draws_in_chunks_are_the_draws_at_once(cuts):
    """What a loop cut short relies on: bootstrap counts and indices drawn chunk by chunk from one
    Generator are the rows drawn at once, whatever the chunks (so a prefix of the resamples is the
    same under a limit)."""
    n, total = 7, sum(cuts)
    whole = np.random.default_rng(3)
    counts, idx = draw_counts(n, total, whole), draw_indices(n, (total, 5, n), whole)
    gen = np.random.default_rng(3)
    parts = [draw_counts(n, c, gen) for c in cuts]
    np.testing.assert_array_equal(np.concatenate(parts), counts)
    parts = [draw_indices(n, (c, 5, n), gen) for c in cuts]
    np.testing.assert_array_equal(np.concatenate(parts), idx)


def test_a_rate_that_slows_down_overshoots_the_deadline_by_little(monkeypatch):
    """Ten resamples at 0.01 s, then 1 s each, 20 s: the chunks grow from the fast ones by doubling,
    not all at once, and are sized to the slower rate once it shows, so the work ends within a
    resample (1 s) of the deadline."""
    clock = install(monkeypatch)
    budget = Budget(20.0)
    chunks = []
    for start, stop in budget.chunks(100, minimum=2):
        chunks.append((start, stop))
        clock.advance(sum(0.01 if i < 10 else 1.0 for i in range(start, stop)))
    assert _covers_a_prefix(chunks) and chunks[:3] == [(0, 2), (2, 6), (6, 18)]
    assert 0.0 <= clock.now - budget.deadline <= 1.0
