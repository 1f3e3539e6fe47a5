"""The loop's records as structrefs (cudbound/search/records.py): same fields, same arrays, by reference."""
from collections import namedtuple

import numpy as np
from numba import njit, types

from cudbound.search.node_pool import NodePool, _as_arrays, _as_ref, _new_pool
from cudbound.search.records import CONSTANT_FIELDS, RecordType, compiled_record

Pair = namedtuple("Pair", ["a", "k"])
PairRef = compiled_record(Pair, "a test record")


@njit
def _bump(pair, i):
    """Write through the record, rebind a field, and return the tuple form."""
    r = PairRef(*pair)
    r.a[i] += r.k
    r.k = r.k * 2.0
    return Pair(r.a, r.k)


@njit
def _round_trip(pool):
    """A record never leaves compiled code: made and turned back inside it."""
    return _as_arrays(_as_ref(pool))


def test_a_record_reads_and_writes_the_arrays_it_was_made_from():
    a = np.zeros(3)
    out = _bump(Pair(a, 1.5), 1)
    assert out.k == 3.0
    assert a[1] == 1.5  # the same array, not a copy
    np.testing.assert_array_equal(out.a, a)


def test_the_node_pool_round_trips_through_its_record_unchanged():
    pool = _new_pool(5, 4, 3, 2, 6, 3, 2)
    rng = np.random.default_rng(0)
    for arr in pool:
        arr[...] = rng.integers(0, 2, size=arr.shape).astype(arr.dtype)
    back = _round_trip(pool)
    assert isinstance(back, NodePool)
    for name, old, new in zip(NodePool._fields, pool, back):
        assert new.dtype == old.dtype and new.shape == old.shape, name
        np.testing.assert_array_equal(new, old, err_msg=name)
        assert np.shares_memory(new, old), name  # the same arrays


Solver = namedtuple("Solver", ["kind", "k"])
SolverRef = compiled_record(Solver, "a test record with a constant field")


@njit
def _kind_of_constant():
    return SolverRef(1, 2).kind


@njit
def _kind_of_variable(kind):
    return SolverRef(kind, 2).kind


def _field_types(kernel):
    """The types of ``kind`` and ``k`` of the record made in ``kernel``'s one compiled signature."""
    (cres,) = kernel.overloads.values()
    (record,) = {t for t in cres.fndesc.typemap.values() if isinstance(t, RecordType)}
    return record.field_dict["kind"], record.field_dict["k"]


def test_a_kind_built_from_a_constant_stays_a_constant_of_the_compiled_code():
    """A field of CONSTANT_FIELDS keeps the literal type of the constant it is built from (each value
    a record type of its own, so the code compiled for it can pick its node solver); built from a
    variable it is an int64, and every other field is widened as before."""
    assert "kind" in CONSTANT_FIELDS and "k" not in CONSTANT_FIELDS
    assert _kind_of_constant() == 1 and _kind_of_variable(3) == 3
    kind, k = _field_types(_kind_of_constant)
    assert kind == types.literal(1) and k == types.int64
    kind, k = _field_types(_kind_of_variable)
    assert kind == types.int64 and k == types.int64
