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
from numba.extending import overload

__all__ = ["RecordType", "compiled_record", "CONSTANT_FIELDS"]

CONSTANT_FIELDS = frozenset({"kind"})
"""Fields that keep the literal type of a constant they are built from: a record built with the
constant ``kind`` = KIND_QP is a type of its own, and the code compiled for it can pick its solver
at compile time (``node_solve._solve``); built from a variable, the field is an int64 as any other."""


@structref.register
class RecordType(types.StructRef):
    """The numba type of every record of the search (its fields make each one a distinct type)."""

    def preprocess_fields(self, fields):
        """The fields with literal types widened (a record built from the constant 0 holds any int64),
        except those of :data:`CONSTANT_FIELDS`."""
        return tuple((name, typ if name in CONSTANT_FIELDS else types.unliteral(typ)) for name, typ in fields)


def compiled_record(fields_of, doc):
    """A structref class with the fields of the namedtuple class ``fields_of``: compiled code
    makes one with ``Cls(*a_namedtuple)`` or ``Cls(field, ...)`` and reads it like the tuple
    (``rec.name``); fields may also be assigned (``rec.name = value``, same type). The class
    belongs to the module of ``fields_of``, where it is defined beside it."""
    cls = type(fields_of.__name__ + "Ref", (structref.StructRefProxy,), {"__doc__": doc,
                                                                        "__module__": fields_of.__module__})
    _define_constructor(cls, list(fields_of._fields))
    return cls


def _define_constructor(cls, fields):
    """``structref.define_constructor(cls, RecordType, fields)``, typed with the arguments' literal
    types first (numba's tries them last, so a constant argument would always be widened), so that a
    field of :data:`CONSTANT_FIELDS` built from a constant keeps its literal type."""
    params = ", ".join(fields)
    source = (f"def ctor({params}):\n"
              f"    struct_type = RecordType(list(zip({fields!r}, [{params}])))\n"
              f"    def impl({params}):\n"
              f"        st = new(struct_type)\n"
              + "".join(f"        st.{name} = {name}\n" for name in fields)
              + "        return st\n"
              "    return impl\n")
    scope = {"RecordType": RecordType, "new": structref.new}
    exec(source, scope)
    overload(cls, prefer_literal=True)(scope["ctor"])
