"""The node pool of the search: one record of arrays, a slot per node, grown by doubling.

A node of the branch and bound (:mod:`cudbound.search.core`) is a slot ``c`` of every array
of a :class:`NodePool`; a finished node's slot goes on the ``free`` list and is reused. The
queue of open nodes (:mod:`cudbound.search.heap`) lives in the same record, so one growth
grows everything. A search stopped by its node budget hands back its pool with its counts
(``core.SearchState``) and a later search of the same replicate resumes from it.

The loop itself holds the pool as a :data:`NodePoolRef` (the same fields, passed by reference:
:mod:`cudbound.search.records`); :func:`_as_ref` and :func:`_as_arrays` convert.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .codes import KIND_HINGE_QP, KIND_LP, KIND_QP
from .records import compiled_record

__all__ = ["NodePool", "NodePoolRef", "slot_nbytes"]

NodePool = namedtuple("NodePool", [
    "signs",           # int8 (cap, mf): the sign fixed at each free point (0: not fixed)
    "depth",           # number of fixed points
    "fixed_cost",      # C of the forced and the fixed points
    "minimum",         # the node's minimum m (a lazy child: its parent's, see flip_gap)
    "flip_gap",        # a lazy child's minimum is at least minimum + flip_gap
    "solved",          # False for a lazy child not yet solved
    "beta",            # (cap, p): the node's minimiser (a lazy child: its parent's)
    "active",          # KIND_QP, KIND_HINGE_QP warm start: the active set (KIND_SMOOTH with flip costs: the
                       # SQP's active rows at beta, as free points, for the cone flip cost) ...
    "n_active",        # ... its size ...
    "dual",            # ... and its multipliers (KIND_QP)
    "lp_basis",        # KIND_LP warm start: the simplex basis ...
    "lp_at_upper",     # ... and the variables at their upper bound
    "handle",          # KIND_EXTERNAL warm start: a handle of the Python side
    "witness",         # (cap, p): a point of the node's open region (realisability) ...
    "witness_active",  # ... and the warm start of its feasibility QP
    "witness_n",
    "witness_dual",
    "uid",             # the node's number in the recorded tree
    "last",            # the free point fixed last
    "branch_on",       # the free point its bound picks to branch on (-1: none; bounds._bound's ``pick``)
    "chain",           # (cap, K): the bounds of its next K descendants that keep its minimiser (NaN: not known) ...
    "chain_pick",      # ... and their picks (bounds._chain; K = 0 unless the search uses them)
    "chol",            # (cap, p, p) for a smooth loss's flip cost: Cholesky factor of the Hessian at beta
    "flip_r",          # _flip_d's r at beta (< 0: no flip cost there)
    "grad",            # (cap, p) with chol: the gradient of the loss at beta (grad[c, 0] NaN: not known) ...
    "hess",            # ... and its Hessian, (cap, p, p): a child's SQP starts from them (smooth_node_solver._sqp)
    "free",            # slots of finished nodes, free[:nfree]
    "heap_keys",       # the queue (heap.py): bounds ...
    "heap_ids",        # ... and slots
])

NodePoolRef = compiled_record(NodePool, "The node pool as the compiled loop holds it (by reference).")


@njit(cache=True)
def _as_ref(pool):
    """The :data:`NodePoolRef` of a :class:`NodePool` (the same arrays, not copies)."""
    return NodePoolRef(*pool)


@njit(cache=True)
def _as_arrays(ref):
    """The :class:`NodePool` of a :data:`NodePoolRef` (the same arrays, not copies)."""
    return NodePool(ref.signs, ref.depth, ref.fixed_cost, ref.minimum, ref.flip_gap, ref.solved, ref.beta, ref.active,
                    ref.n_active, ref.dual, ref.lp_basis, ref.lp_at_upper, ref.handle, ref.witness,
                    ref.witness_active, ref.witness_n, ref.witness_dual, ref.uid, ref.last, ref.branch_on, ref.chain,
                    ref.chain_pick, ref.chol,
                    ref.flip_r, ref.grad, ref.hess, ref.free, ref.heap_keys, ref.heap_ids)


@njit(cache=True)
def _grow(a, cap):
    shape = (cap,) + a.shape[1:]
    b = np.zeros(shape, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_filled(a, cap, fill):
    """:func:`_grow` with the new rows ``fill`` (``grad``: NaN, not known; ``branch_on``: -1, none)."""
    b = np.full((cap,) + a.shape[1:], fill, a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def slot_nbytes(pool):
    """The bytes of one slot of the pool (all its arrays' bytes over its capacity, at least 1 slot)."""
    total = (pool.signs.nbytes + pool.depth.nbytes + pool.fixed_cost.nbytes + pool.minimum.nbytes
             + pool.flip_gap.nbytes + pool.solved.nbytes + pool.beta.nbytes + pool.active.nbytes
             + pool.n_active.nbytes + pool.dual.nbytes + pool.lp_basis.nbytes + pool.lp_at_upper.nbytes
             + pool.handle.nbytes + pool.witness.nbytes + pool.witness_active.nbytes + pool.witness_n.nbytes
             + pool.witness_dual.nbytes + pool.uid.nbytes + pool.last.nbytes + pool.branch_on.nbytes + pool.chain.nbytes
             + pool.chain_pick.nbytes + pool.chol.nbytes
             + pool.flip_r.nbytes + pool.grad.nbytes + pool.hess.nbytes + pool.free.nbytes
             + pool.heap_keys.nbytes + pool.heap_ids.nbytes)
    return total / max(pool.depth.shape[0], 1)


@njit(cache=True)
def _new_pool(cap, mf, p, nb, na, pf, nk):
    """An empty pool of ``cap`` slots: mf free points, p unknowns, an LP basis of nb and na
    columns, Cholesky factors, gradients and Hessians of order pf (0 unless a smooth loss uses flip
    costs), chains of nk bounds (``core._expand``; 0: none)."""
    i1 = np.zeros(cap, dtype=np.int64)
    return NodePool(np.zeros((cap, mf), dtype=np.int8), i1, np.zeros(cap), np.zeros(cap), np.zeros(cap),
                    np.ones(cap, dtype=np.bool_), np.zeros((cap, p)), np.zeros((cap, p), dtype=np.int64),
                    i1.copy(), np.zeros((cap, p)), np.zeros((cap, nb), dtype=np.int64),
                    np.zeros((cap, na), dtype=np.bool_), i1.copy(), np.zeros((cap, p)),
                    np.zeros((cap, p), dtype=np.int64), i1.copy(), np.zeros((cap, p)), i1.copy(), i1.copy(),
                    np.full(cap, -1, dtype=np.int64), np.full((cap, nk), np.nan), np.full((cap, nk), -1, dtype=np.int64),
                    np.zeros((cap, pf, pf)), np.zeros(cap),
                    np.full((cap, pf), np.nan), np.zeros((cap, pf, pf)), i1.copy(), np.zeros(cap), i1.copy())


@njit(cache=True)
def _grow_pool(pool, cap):
    """The pool with every array grown to ``cap`` slots (contents kept)."""
    return NodePool(_grow(pool.signs, cap), _grow(pool.depth, cap), _grow(pool.fixed_cost, cap),
                    _grow(pool.minimum, cap), _grow(pool.flip_gap, cap), _grow(pool.solved, cap),
                    _grow(pool.beta, cap), _grow(pool.active, cap), _grow(pool.n_active, cap),
                    _grow(pool.dual, cap), _grow(pool.lp_basis, cap), _grow(pool.lp_at_upper, cap),
                    _grow(pool.handle, cap), _grow(pool.witness, cap), _grow(pool.witness_active, cap),
                    _grow(pool.witness_n, cap), _grow(pool.witness_dual, cap), _grow(pool.uid, cap),
                    _grow(pool.last, cap), _grow_filled(pool.branch_on, cap, -1),
                    _grow_filled(pool.chain, cap, np.nan), _grow_filled(pool.chain_pick, cap, -1), _grow(pool.chol, cap),
                    _grow(pool.flip_r, cap),
                    _grow_filled(pool.grad, cap, np.nan), _grow(pool.hess, cap), _grow(pool.free, cap),
                    _grow(pool.heap_keys, cap), _grow(pool.heap_ids, cap))


@njit(cache=True, inline="always")
def _copy_slot(a, c, v):
    """Slot c of one array of the pool becomes a copy of slot v."""
    a[c] = a[v]


@njit(cache=True, inline="always")
def _inherit(pool, c, v, j, s, cost_j, kind, smooth_flip):
    """Slot c becomes the child of node v that fixes free point j to sign s (cost ``cost_j``):
    the parent's signs, minimiser, minimum and warm starts, solved (the caller changes that
    for a child whose new constraint the parent's minimiser violates). Each array of the pool
    is read once (a read takes a reference: :mod:`cudbound.search.records`)."""
    signs = pool.signs
    signs[c] = signs[v]
    signs[c, j] = s
    pool.last[c] = j
    depth = pool.depth
    depth[c] = depth[v] + 1
    fixed_cost = pool.fixed_cost
    fixed_cost[c] = fixed_cost[v] + cost_j
    _copy_slot(pool.beta, c, v)
    _copy_slot(pool.minimum, c, v)
    pool.flip_gap[c] = 0.0
    pool.solved[c] = True
    if kind == KIND_QP or kind == KIND_HINGE_QP:
        _copy_slot(pool.active, c, v)
        _copy_slot(pool.n_active, c, v)
        _copy_slot(pool.dual, c, v)
    elif kind == KIND_LP:
        _copy_slot(pool.lp_basis, c, v)
        _copy_slot(pool.lp_at_upper, c, v)
    else:
        _copy_slot(pool.handle, c, v)
        if smooth_flip:   # the SQP's active rows go with the minimiser (the cone flip cost)
            _copy_slot(pool.active, c, v)
            _copy_slot(pool.n_active, c, v)
    _copy_slot(pool.witness, c, v)
    _copy_slot(pool.witness_active, c, v)
    _copy_slot(pool.witness_n, c, v)
    _copy_slot(pool.witness_dual, c, v)
    if smooth_flip:
        _copy_slot(pool.chol, c, v)
        _copy_slot(pool.flip_r, c, v)
        _copy_slot(pool.grad, c, v)
        _copy_slot(pool.hess, c, v)


def trimmed(pool, count):
    """The pool cut to its first ``count`` slots (the ones a search has used), copied: a slice would be
    a view that keeps the whole pool alive (``ascontiguousarray`` of a leading slice returns the view)."""
    return NodePool(*(a[:count].copy() for a in pool))


def without_derivatives(pool):
    """The pool without the smooth losses' derivatives at the minimisers (``grad`` and ``hess`` with
    no columns): a search resumed from it evaluates each child's start again, as without them."""
    count = pool.grad.shape[0]
    return pool._replace(grad=np.zeros((count, 0)), hess=np.zeros((count, 0, 0)))
