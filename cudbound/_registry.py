"""One registry class for every family of things registered by name, and the named random streams.

The interval methods (:mod:`cudbound.registry`), the AUC intervals (:mod:`cudbound.auc.registry`),
the comparisons (:mod:`cudbound.compare`) and the data sets (:mod:`cudbound.datasets.registry`)
are each a :class:`Registry`: entries by name in registration order, one name rule (lower case, no
commas or spaces), ``replace=True`` to overwrite, and one message for an unknown name. For a family
of functions (an :class:`Entry` subclass) it also checks each function's signature, names its
options (the signature after the data arguments, minus the reserved names the caller sets) and
splits a call's keyword options into shared ones and ``<name>_options`` dicts.

Random streams. A call draws one root ``SeedSequence`` from the user's ``rng``
(:func:`root_seed`); the stream of the consumer called ``name`` is its child

    SeedSequence(root.entropy, spawn_key=root.spawn_key + (h(name),)),

h(name) the first four bytes of SHA-256(name) read as a little-endian integer (:func:`stream`),
so a consumer's numbers depend on its name only: adding, removing or reordering others changes
nothing.

>>> tools = Registry("tool", Entry)
>>> def draw(*, confidence_level, rng, size=2):
...     return rng.random(size)
>>> tools.add(Entry("draw", draw, "uniform draws")).options()
['size']
>>> tools.lookup("sample")
Traceback (most recent call last):
    ...
ValueError: unknown tool 'sample'; the registered tools are ['draw'].
"""
from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np

from ._deprecation import apply_renames, renames_of
from ._validation import check_method_list, check_rng

__all__ = ["Registry", "Entry", "stream", "root_seed", "generator", "methods_bar"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class Entry:
    """One registered function, ``function(*data, *, <REQUIRED>, **options)``, under ``name``.

    A family subclasses it and states how its functions are called: ``DATA``, the positional
    data arguments each takes first; ``REQUIRED``, the keywords the caller passes to every
    function (each must take them); ``RESERVED``, every name the caller sets (``REQUIRED``
    included), which no option may take. The rest of a function's signature are its options.
    """

    name: str
    function: Callable
    summary: str

    DATA: ClassVar[tuple[str, ...]] = ()
    REQUIRED: ClassVar[tuple[str, ...]] = ("confidence_level", "rng")
    RESERVED: ClassVar[tuple[str, ...]] = ("confidence_level", "rng")

    @property
    def parameters(self) -> Mapping[str, inspect.Parameter]:
        return inspect.signature(self.function).parameters

    @property
    def renamed(self) -> dict[str, str]:
        """The function's deprecated option names (old name -> new), still accepted for one release."""
        return renames_of(self.function)

    def options(self) -> list[str]:
        """The option names a user may set, sorted (deprecated ones excluded: the entry points
        turn them into these names first, :meth:`Registry.rename_options`)."""
        return sorted(k for k in list(self.parameters)[len(self.DATA):] if k not in self.RESERVED)

    def signature_problem(self) -> str | None:
        """What the function lacks of the family's calling convention, or None."""
        params = self.parameters
        lacks = [k for k in self.REQUIRED if k not in params]
        if sum(p.kind in _POSITIONAL for p in params.values()) < len(self.DATA):
            lacks = [", ".join(self.DATA), *lacks]
        if not lacks:
            return None
        data = ", ".join(self.DATA) + ", " if self.DATA else ""
        return f"must take ({data}*, {', '.join(self.REQUIRED)}, ...); it lacks {lacks}"


E = TypeVar("E")


class Registry(MutableMapping[str, E]):
    """Entries of type ``kind`` by name, in registration order.

    ``noun`` names an entry in every message (``"interval method"``); ``caller`` the function
    that calls the entries (``"intervals()"``), in the messages about options; ``taken`` lists
    names no entry may have (the random streams of computations the caller shares between entries). As a mapping
    it reads and writes entries by name like a dict (writing checks the name and the type);
    :meth:`add`, :meth:`remove` and :meth:`lookup` are the checked ways in and out.
    """

    def __init__(self, noun: str, kind: type, *, caller: str = "", taken: Sequence[str] = ()):
        self.noun, self.kind, self.caller, self.taken = noun, kind, caller, tuple(taken)
        self._entries: dict[str, E] = {}

    def __getitem__(self, name: str) -> E:
        return self._entries[name]

    def __setitem__(self, name: str, entry: E) -> None:
        if getattr(entry, "name", None) != name:
            raise ValueError(f"a {self.noun} is stored under its own name; got {name!r} for "
                             f"{getattr(entry, 'name', None)!r}.")
        self.add(entry, replace=True)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.noun!r}: {list(self._entries)})"

    def check_name(self, name: Any) -> str:
        """``name`` if it is a valid name for a new entry: a non-empty lower-case string without
        commas or spaces, and not one of ``taken``."""
        if not isinstance(name, str) or not name or name != name.strip().lower() or "," in name or " " in name:
            raise ValueError(f"{self.noun} names must be non-empty lower-case strings without commas or spaces; "
                             f"got {name!r}.")
        if name in self.taken:
            raise ValueError(f"{name!r} is the name of a shared random stream of the {self.noun}s; choose "
                             f"another name.")
        return name

    def add(self, entry: E, *, replace: bool = False) -> E:
        """Register ``entry`` under ``entry.name`` (at the end of the order); a name already registered
        needs ``replace=True``. A function entry's signature is checked against its family's."""
        if not isinstance(entry, self.kind):
            raise TypeError(f"{self.noun} entries must be {self.kind.__module__}.{self.kind.__qualname__} "
                            f"instances; got {type(entry).__name__}.")
        name = self.check_name(getattr(entry, "name", None))
        if name in self._entries and not replace:
            raise ValueError(f"{self.noun} {name!r} is already registered (pass replace=True to overwrite it).")
        problem = entry.signature_problem() if isinstance(entry, Entry) else None
        if problem:
            raise TypeError(f"the function of {self.noun} {name!r} {problem}.")
        self._entries[name] = entry
        return entry

    def lookup(self, name: str) -> E:
        """The entry ``name``; a ValueError that lists the registered names otherwise."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {self.noun} {name!r}; the registered {self.noun}s are "
                             f"{list(self._entries)}.") from None

    def remove(self, name: str) -> None:
        """Unregister ``name`` (a ValueError, as :meth:`lookup`'s, if it is not registered)."""
        self.lookup(name)
        del self._entries[name]

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def select(self, names: str | Sequence[str]) -> tuple[str, ...]:
        """A list of registered names as the user gives it (a sequence, a comma-separated string or
        ``"all"``), parsed by the package's one parser (:func:`cudbound._validation.check_method_list`)."""
        return check_method_list(names, self._entries, self.noun)

    def entry_options(self, name: str, options: Mapping[str, Any], where: str) -> dict[str, Any]:
        """``options`` of one entry with their deprecated names renamed (a DeprecationWarning each,
        naming ``where``), after a check of every name: a reserved name, or one the entry does not
        take, is a ValueError."""
        entry = self.lookup(name)
        options = apply_renames(where, entry.renamed, options)
        for key in options:
            if key in entry.RESERVED:
                raise ValueError(f"{where} may not set `{key}`: it is set by {self.caller} for every {self.noun}.")
        bad = sorted(k for k in options if k not in entry.options())
        if bad:
            raise ValueError(f"unknown option(s) {bad} for {self.noun} {name!r} in {where}; it takes "
                             f"{entry.options()}.")
        return options

    def _per_entry_key(self, key: str) -> str | None:
        """The entry whose dict ``key`` (``<name>_options``) is, or None."""
        name = key.removesuffix("_options")
        return name if key != name and name in self._entries else None

    def rename_options(self, names: Sequence[str], options: Mapping[str, Any], where: str) -> dict[str, Any]:
        """The keyword options of a call on the entries ``names`` (as :meth:`select` takes them): shared
        options and ``<name>_options`` dicts, with every deprecated option name replaced by its new one,
        once, where they enter (a DeprecationWarning naming the new name, attributed to the user's line).

        An old and a new name of one option given together (both shared, or both in one entry's dict)
        raise TypeError before any entry runs. A shared old name with the new one in an entry's dict is
        no conflict: the entry's dict overrides the shared options, as always.
        """
        names = self.select(names)
        options_of = [set(self.lookup(name).options()) for name in names]
        shared_renames = {old: new for name in names for old, new in self.lookup(name).renamed.items()
                          if not any(old in opts for opts in options_of)}
        shared, per = {}, {}
        for key, value in options.items():
            name = self._per_entry_key(key)
            if name is not None and isinstance(value, Mapping):
                per[key] = apply_renames(f"`{key}`", self._entries[name].renamed, value)
            else:
                shared[key] = value
        return {**apply_renames(where, shared_renames, shared), **per}

    def split_options(self, names: Sequence[str], options: Mapping[str, Any],
                      where: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """(shared, per): the keyword options of a call on the entries ``names``, renamed
        (:meth:`rename_options`) and split into the options given to every entry that takes them and
        ``per[name]``, the dict ``<name>_options`` that overrides them for one entry (None: no dict;
        the dict of an entry not in ``names`` is checked, then not used).

        Refused (ValueError): a reserved name, a ``<name>_options`` that is not a dict or names an
        option its entry does not take, a shared option that none of ``names`` takes.
        """
        names = self.select(names)
        options = self.rename_options(names, options, where)
        shared: dict[str, Any] = {}
        per: dict[str, dict[str, Any]] = {}
        reserved = getattr(self.kind, "RESERVED", ())
        for key, value in options.items():
            name = self._per_entry_key(key)
            if name is not None:
                if value is None:
                    continue
                if not isinstance(value, Mapping):
                    raise ValueError(f"`{key}` must be a dict of keyword arguments; got {type(value).__name__}.")
                per[name] = self.entry_options(name, value, f"`{key}`")
            elif key in reserved:
                raise ValueError(f"`{key}` is set by {self.caller} itself and cannot be passed as an option.")
            else:
                shared[key] = value
        accepted = sorted({k for name in names for k in self.lookup(name).options()})
        unknown = sorted(k for k in shared if k not in accepted)
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for {self.noun}s {list(names)}; they take {accepted}, "
                             f"and per-{self.noun} dicts {', '.join(name + '_options' for name in names)}.")
        return shared, per


def stream(root: np.random.SeedSequence, name: str) -> np.random.SeedSequence:
    """The SeedSequence of stream ``name``: a child of ``root`` keyed by a hash of the name.

    The package's one way to give each consumer of randomness its own stream (the entries of every
    :class:`Registry`): it depends on the name only, so adding or removing a consumer changes no
    other one's numbers.

    >>> root = np.random.SeedSequence(1)
    >>> stream(root, "kohavi").spawn_key == stream(np.random.SeedSequence(1), "kohavi").spawn_key
    True
    >>> stream(root, "kohavi").spawn_key != stream(root, "yang").spawn_key
    True
    """
    key = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")
    return np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + (key,))


def root_seed(rng: np.random.Generator | np.random.SeedSequence | int | None) -> np.random.SeedSequence:
    """The root of a call's streams: four 63-bit integers drawn from ``rng`` (normalised by
    :func:`cudbound._validation.check_rng`) as the entropy of a SeedSequence.

    >>> g = np.random.default_rng(3)
    >>> root_seed(3).entropy == [int(v) for v in g.integers(0, 2**63, size=4)]
    True
    """
    return np.random.SeedSequence([int(v) for v in check_rng(rng).integers(0, 2**63, size=4)])


def generator(root: np.random.SeedSequence, name: str) -> np.random.Generator:
    """The numpy Generator of stream ``name`` (:func:`stream`) of ``root``."""
    return np.random.default_rng(stream(root, name))


def methods_bar(progress: bool | None, total: int, desc: str):
    """A tqdm bar on stderr over the ``total`` methods of one call of a registry (``desc``: its
    label, e.g. ``"intervals"``), or None. ``progress`` None: only on a terminal, and only once the
    call has lasted 2 s (tqdm's ``delay``); True: always; False: never."""
    import sys

    if progress is False or (progress is None and not sys.stderr.isatty()) or total < 1:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="method", delay=0.0 if progress else 2.0, dynamic_ncols=True)
