"""The queue of open nodes of the search: a binary max-heap of (bound, node) in two arrays.

The node with the largest bound comes first; among equal bounds the one pushed first (the
smaller node slot) does. The caller owns the arrays (``keys``, ``ids``) and the size, and
grows the arrays with the node pool (:mod:`cudbound.search.node_pool`).
"""
from __future__ import annotations

from numba import njit

__all__: list[str] = []


@njit(cache=True)
def _heap_push(hk, hid, size, key, nid):
    i = size
    hk[i] = key
    hid[i] = nid
    while i > 0:
        par = (i - 1) // 2
        if hk[par] > hk[i] or (hk[par] == hk[i] and hid[par] < hid[i]):
            break
        hk[par], hk[i] = hk[i], hk[par]
        hid[par], hid[i] = hid[i], hid[par]
        i = par
    return size + 1


@njit(cache=True)
def _heap_pop(hk, hid, size):
    key = hk[0]
    nid = hid[0]
    size -= 1
    hk[0] = hk[size]
    hid[0] = hid[size]
    i = 0
    while True:
        lft = 2 * i + 1
        rgt = lft + 1
        top = i
        if lft < size and (hk[lft] > hk[top] or (hk[lft] == hk[top] and hid[lft] < hid[top])):
            top = lft
        if rgt < size and (hk[rgt] > hk[top] or (hk[rgt] == hk[top] and hid[rgt] < hid[top])):
            top = rgt
        if top == i:
            break
        hk[top], hk[i] = hk[i], hk[top]
        hid[top], hid[i] = hid[i], hid[top]
        i = top
    return key, nid, size

