"""cudbound/search/node_pool.py: a pool grows without losing a node, and a child inherits its parent."""
import numpy as np
import pytest

from cudbound.search.codes import KIND_EXTERNAL, KIND_HINGE_QP, KIND_LP, KIND_QP, KIND_SMOOTH
from cudbound.search.node_pool import NodePool, _grow_pool, _inherit, _new_pool, slot_nbytes, trimmed


def _filled(cap=4, mf=5, p=3, nb=3, na=6, pf=3, seed=0, nk=2):
    rng = np.random.default_rng(seed)
    pool = _new_pool(cap, mf, p, nb, na, pf, nk)
    for a in pool:
        if a.dtype == np.bool_:
            a[...] = rng.random(a.shape) < 0.5
        elif a.dtype.kind == "f":
            a[...] = rng.normal(size=a.shape)
        else:
            a[...] = rng.integers(-1, 2, size=a.shape) if a.dtype == np.int8 else rng.integers(0, 9, size=a.shape)
    return pool


def test_every_field_has_one_slot_per_node():
    pool = _new_pool(7, 5, 3, 2, 4, 3, 2)
    assert isinstance(pool, NodePool)
    assert {a.shape[0] for a in pool} == {7}
    assert pool.signs.shape == (7, 5) and pool.beta.shape == (7, 3) and pool.chol.shape == (7, 3, 3)
    assert pool.lp_basis.shape == (7, 2) and pool.lp_at_upper.shape == (7, 4)
    assert pool.chain.shape == (7, 2) and np.isnan(pool.chain).all() and (pool.chain_pick == -1).all()


def test_growth_keeps_every_node_and_adds_empty_slots():
    pool = _filled()
    grown = _grow_pool(pool, 9)
    for name, old, new in zip(NodePool._fields, pool, grown):
        assert new.shape == (9,) + old.shape[1:] and new.dtype == old.dtype, name
        np.testing.assert_array_equal(new[:4], old, err_msg=name)
        if name in ("grad", "chain"):   # a new slot's derivatives and chain of bounds: not known
            assert np.isnan(new[4:]).all()
        elif name in ("branch_on", "chain_pick"):   # a new slot's picks: none
            assert (new[4:] == -1).all()
        else:
            assert not np.any(new[4:]), name
    back = trimmed(grown, 4)
    for name, old, new in zip(NodePool._fields, pool, back):
        np.testing.assert_array_equal(new, old, err_msg=name)
        assert new.flags.c_contiguous, name


def test_a_child_inherits_its_parent_and_fixes_one_more_point():
    for kind in (KIND_QP, KIND_LP, KIND_HINGE_QP, KIND_EXTERNAL, KIND_SMOOTH):
        for smooth_flip in (False, True):
            pool = _filled(seed=kind)
            pool.solved[1] = False
            _inherit(pool, 2, 1, 3, -1, 0.25, kind, smooth_flip)
            assert pool.signs[2, 3] == -1 and pool.last[2] == 3 and pool.depth[2] == pool.depth[1] + 1
            np.testing.assert_array_equal(np.delete(pool.signs[2], 3), np.delete(pool.signs[1], 3))
            assert pool.fixed_cost[2] == pool.fixed_cost[1] + 0.25
            assert pool.solved[2] and pool.flip_gap[2] == 0.0
            for name in ("beta", "minimum", "witness", "witness_active", "witness_n", "witness_dual"):
                np.testing.assert_array_equal(getattr(pool, name)[2], getattr(pool, name)[1], err_msg=name)
            warm = {KIND_QP: ("active", "n_active", "dual"), KIND_HINGE_QP: ("active", "n_active", "dual"),
                    KIND_LP: ("lp_basis", "lp_at_upper")}.get(kind, ("handle",))
            for name in warm + (("chol", "flip_r") if smooth_flip else ()):
                np.testing.assert_array_equal(getattr(pool, name)[2], getattr(pool, name)[1], err_msg=name)


def test_a_trimmed_pool_owns_its_slots_and_keeps_the_whole_pool_alive_no_longer():
    """A resumable state's pool is a copy of the slots in use, not a view: a view of a leading slice would
    keep the grown pool's memory alive while the state's ``nbytes`` counts the slice only (the refinement's
    memory limit would then not bound its memory)."""
    pool = _filled(cap=64)
    cut = trimmed(pool, 5)
    for full, part in zip(pool, cut):
        assert part.shape == (5,) + full.shape[1:] and part.base is None and not np.shares_memory(part, full)
        assert np.array_equal(part, full[:5])


@pytest.mark.parametrize("mf,p,nb,na,pf,nk", [(5, 3, 0, 0, 0, 0), (40, 10, 0, 0, 10, 0), (12, 4, 7, 9, 0, 4)])
def test_slot_nbytes_is_a_slots_share_of_every_array(mf, p, nb, na, pf, nk):
    for cap in (1, 7):
        pool = _new_pool(cap, mf, p, nb, na, pf, nk)
        assert slot_nbytes(pool) == sum(a.nbytes for a in pool) / cap
