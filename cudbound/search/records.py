"""Records the compiled search passes by reference: a namedtuple's fields as a numba structref.

numba passes a tuple by value: every function that receives a tuple of arrays (and every
variable it is bound to, inlined calls included) takes and later drops one reference to EACH
array, an atomic operation per array. The search loop hands its node pool (24 arrays), the
replicate, the solver data and the bounding data to a dozen parts per node: passed as tuples,
they cost a third of the loop's time in reference counts. A structref
(``numba.experimental.structref``) is one reference however many fields it has, so the parts
receive these records as structrefs (:func:`compiled_record`), built once per search from the
namedtuples that name their fields; Python and the resume state keep the namedtuples.

A structref never leaves compiled code here (it has no boxing): a kernel turns it back into
its namedtuple before returning.
"""
from __future__ import annotations

from numba.core import types
from numba.experimental import structref

__all__ = ["RecordType", "compiled_record"]


@structref.register
class RecordType(types.StructRef):
    """The numba type of every record of the search (its fields make each one a distinct type)."""

    def preprocess_fields(self, fields):
        """The fields with literal types widened (a record built from the constant 0 holds any int64)."""
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def compiled_record(fields_of, doc):
    """A structref class with the fields of the namedtuple class ``fields_of``: compiled code
    makes one with ``Cls(*a_namedtuple)`` or ``Cls(field, ...)`` and reads it like the tuple
    (``rec.name``); fields may also be assigned (``rec.name = value``, same type). The class
    belongs to the module of ``fields_of``, where it is defined beside it."""
    cls = type(fields_of.__name__ + "Ref", (structref.StructRefProxy,), {"__doc__": doc,
                                                                        "__module__": fields_of.__module__})
    structref.define_constructor(cls, RecordType, list(fields_of._fields))
    return cls
