"""A coverage study's protocol, read from a TOML file, and the tasks it expands to.

One task is one (data set, n, repetition): draw a training set of n points, fit the
classifier, build every interval on that same training set and record whether each
covers the true error (Laber & Murphy 2008, section 5). Example (``experiments/paper.toml``)::

    [study]
    name = "laber-murphy-2008"
    seed = 20080709            # master seed: every task's seed is derived from it
    repetitions = 200          # or one number per size: repetitions = {30 = 1000, 100 = 500}
    sizes = [30, 50]
    confidence_level = 0.95
    test_size = 5000           # test points drawn for a simulated data set
    loss = "squared"           # the surrogate loss of the fit (and of every method)
    methods = ["cud", "bs1", "bs2", "kohavi", "yang", "martin", "langford"]

    [options]                  # options shared by every method that accepts them
    n_boot = 200

    [options.cud]              # options of one method (keyword arguments of its function)
    n_resamples = 500
    alpha_n = "n"              # a number, or "1", "sqrt(n)", "n", "n^2"

    [options.cud_alpha_1]      # a variant: a label of its own, run with `method`'s function
    method = "cud"
    alpha_n = "1"

    [[datasets]]
    name = "spam"              # a name known to cudbound.datasets (real or simulated)
    basis = "pca:3"

    [[datasets]]               # the same data under another basis: a label of its own
    name = "spam"
    label = "spam-poly2z2"     # the key of its tasks, chunks and table rows (default: name)
    basis = "poly:2(zpca:2)"
    sizes = [50]               # a subset of the study's sizes (default: all of them)

Entries that share a data set share their training draws: a task's seed is derived from
the data set's name, n and the repetition, not from the label, so bases are compared on
the same samples (unless a draw is degenerate under one basis and redrawn).
"""
from __future__ import annotations

import hashlib
import json
import math
import numbers
import re
import tomllib
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validation import check_scalar
from ..registry import get_method, method_names
from ..basis import make_basis
from ..datasets import REAL_BASIS, dataset_names, get_dataset
from ..losses import get_loss

_LABEL = re.compile(r"[a-z0-9][a-z0-9_.-]*")


def known_datasets() -> dict:
    """Name -> default basis, for every data set a study can use."""
    return {name: get_dataset(name).basis for name in dataset_names()}


__all__ = ["StudyConfig", "DatasetSpec", "Task", "load_config", "alpha_value", "ConfigError", "REAL_BASIS",
           "known_datasets"]

ALPHA_RULES = {"1": lambda n: 1.0, "sqrt(n)": math.sqrt, "n": float, "n^2": lambda n: float(n) ** 2}
"""The named scalings of alpha_n (the paper's section 5 discusses 1 <= alpha_n <= n^2)."""


class ConfigError(ValueError):
    """A study configuration that cannot be run; the message names the offending key."""


@dataclass(frozen=True)
class DatasetSpec:
    """One data set of the study: its name in :mod:`cudbound.datasets`, its basis, the label its
    tasks are stored under (the name unless set) and its training sizes (empty: the study's)."""

    name: str
    basis: str
    label: str = ""
    sizes: tuple = ()

    def __post_init__(self):
        if not self.label:
            object.__setattr__(self, "label", self.name)


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _defaults(method: str, options: dict) -> dict:
    """The defaults of the method's options that the study leaves unset: part of the protocol, so
    that a release that changes a default (Kohavi's ``form``, say) cannot mix its rows with
    rows made under the old default."""
    import inspect
    params = get_method(method).parameters
    return {k: _jsonable(params[k].default) for k in get_method(method).options()
            if k not in options and k != "loss" and params[k].default is not inspect.Parameter.empty}


@dataclass(frozen=True, order=True)
class Task:
    """One unit of work: a data set, a training size and a repetition number."""

    dataset: str
    n: int
    rep: int


@dataclass(frozen=True)
class StudyConfig:
    """A validated study configuration (see the module docstring for the file format).

    Attributes
    ----------
    methods : tuple of str
        Labels of the intervals to build, in table order. A label is a method of
        :func:`cudbound.registry.method_names` or a variant defined in ``[options.LABEL]``
        with ``method = "..."``.
    method_of : dict
        Label -> the method whose function computes it.
    options : dict
        Label -> keyword arguments for that method (shared options merged in).
    """

    name: str
    seed: int
    repetitions: int
    sizes: tuple
    confidence_level: float
    test_size: int
    loss: str
    methods: tuple
    method_of: dict
    options: dict
    datasets: tuple
    source: str = field(default="", compare=False)
    size_repetitions: dict = field(default_factory=dict)

    def repetitions_for(self, n: int) -> int:
        """The repetitions of training size n (``repetitions``, or its entry for n when it is a table)."""
        return self.size_repetitions.get(n, self.repetitions)

    def tasks(self) -> list[Task]:
        """Every task of the study, in a fixed order (data set, n, repetition)."""
        return [Task(d.label, n, r) for d in self.datasets for n in self.sizes_of(d)
                for r in range(self.repetitions_for(n))]

    def sizes_of(self, spec: DatasetSpec) -> tuple:
        """The training sizes of one data-set entry (its own ``sizes`` or the study's)."""
        return spec.sizes or self.sizes

    def dataset(self, label: str) -> DatasetSpec:
        """The data-set entry stored under ``label`` (its name unless the entry sets a label)."""
        for d in self.datasets:
            if d.label == label:
                return d
        raise KeyError(label)

    def task_seed(self, task: Task) -> np.random.SeedSequence:
        """The task's own SeedSequence: a function of the master seed and the task's identity only.

        ``SeedSequence(seed, spawn_key=(crc32(dataset), n, rep))``: the same task gets
        the same random numbers whatever the worker, the order, or the other tasks. The data
        set's name, not the entry's label, enters the key: entries of one data set under
        different bases share their draws.
        """
        name = self.dataset(task.dataset).name
        return np.random.SeedSequence(self.seed, spawn_key=(zlib.crc32(name.encode()), task.n, task.rep))

    def protocol(self) -> dict:
        """Everything that changes a task's result (not the repetitions nor the data set list).

        A store remembers it; a rerun with a different protocol is refused, while more
        repetitions or more data sets simply add tasks.
        """
        return {"seed": self.seed, "confidence_level": self.confidence_level, "test_size": self.test_size,
                "loss": self.loss,
                "methods": {m: [self.method_of[m], self.options[m]] for m in self.methods},
                "defaults": {m: _defaults(self.method_of[m], self.options[m]) for m in self.methods},
                "bases": {d.label: d.basis for d in self.datasets},
                **({"sources": {d.label: d.name for d in self.datasets}}
                   if any(d.label != d.name for d in self.datasets) else {})}

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.protocol(), sort_keys=True).encode()).hexdigest()[:16]

    def method_options(self, label: str, n: int) -> dict:
        """The keyword arguments of ``label`` at training size n (alpha_n rules evaluated)."""
        opts = dict(self.options[label])
        opts["loss"] = self.loss
        if "alpha_n" in opts:
            opts["alpha_n"] = alpha_value(opts["alpha_n"], n)
        return opts


def alpha_value(rule, n: int) -> float:
    """alpha_n for a number or one of the rules "1", "sqrt(n)", "n", "n^2"."""
    if isinstance(rule, str):
        key = rule.replace(" ", "").lower()
        if key not in ALPHA_RULES:
            raise ConfigError(f"alpha_n rule {rule!r} is not one of {list(ALPHA_RULES)} (or give a number).")
        return ALPHA_RULES[key](n)
    return float(rule)


def _scalar(value, key, *args, **kwargs):
    """:func:`cudbound._validation.check_scalar`, raising ConfigError."""
    try:
        return check_scalar(value, key, *args, **kwargs)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _positive_int(value, key):
    return _scalar(value, key, min_val=1)


def _table(doc, key, where="the file"):
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` in {where} must be a table.")
    return value


def load_config(path) -> StudyConfig:
    """Read and validate a study configuration from a TOML file (or a TOML string via ``parse_config``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the study configuration {str(path)!r}: {exc.strerror or exc}.") from None
    return parse_config(text, source=str(path))


def parse_config(text: str, source: str = "<string>") -> StudyConfig:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}.") from None
    unknown = set(doc) - {"study", "options", "datasets"}
    if unknown:
        raise ConfigError(f"unknown top-level key(s) {sorted(unknown)} in {source}; expected study, options, datasets.")
    study = _table(doc, "study")
    allowed = {"name", "seed", "repetitions", "sizes", "confidence_level", "test_size", "methods", "loss"}
    if set(study) - allowed:
        raise ConfigError(f"unknown key(s) {sorted(set(study) - allowed)} in [study]; allowed: {sorted(allowed)}.")
    for key in ("seed", "repetitions", "sizes", "methods"):
        if key not in study:
            raise ConfigError(f"[study] must set `{key}`.")
    seed = study["seed"]
    _scalar(seed, "seed", min_val=0)
    sizes = study["sizes"]
    if not isinstance(sizes, list) or not sizes:
        raise ConfigError(f"`sizes` must be a non-empty list of training sizes; got {sizes!r}.")
    sizes = tuple(_positive_int(s, "sizes") for s in sizes)
    if len(set(sizes)) != len(sizes):
        raise ConfigError(f"`sizes` lists a size twice: {list(sizes)}.")
    spec = study["repetitions"]
    if isinstance(spec, dict):           # per training size: repetitions = {30 = 1000, 100 = 500}
        per_size = {}
        for key, value in spec.items():
            if not str(key).isdigit() or int(key) not in sizes:
                raise ConfigError(f"`repetitions` has a key {key!r} that is not one of `sizes` {list(sizes)}.")
            per_size[int(key)] = _positive_int(value, f"repetitions.{key}")
        missing = [s for s in sizes if s not in per_size]
        if missing:
            raise ConfigError(f"`repetitions` gives no number for the size(s) {missing}.")
        reps = max(per_size.values())
    else:
        reps = _positive_int(spec, "repetitions")
        per_size = {s: reps for s in sizes}
    level = study.get("confidence_level", 0.95)
    level = _scalar(level, "confidence_level", numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="neither")
    test_size = _positive_int(study.get("test_size", 5000), "test_size")
    loss = study.get("loss", "squared")
    try:
        loss = get_loss(loss).name
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[study] loss: {exc}") from None

    options = _table(doc, "options")
    shared = {k: v for k, v in options.items() if not isinstance(v, dict)}
    per = {k: dict(v) for k, v in options.items() if isinstance(v, dict)}
    labels = study["methods"]
    if not isinstance(labels, list) or not labels or not all(isinstance(m, str) for m in labels):
        raise ConfigError(f"`methods` must be a non-empty list of method labels; got {labels!r}.")
    if len(set(labels)) != len(labels):
        raise ConfigError(f"`methods` lists a label twice: {labels}.")
    method_of, opts = {}, {}
    for label in labels:
        own = dict(per.get(label, {}))
        method = own.pop("method", label)
        if "loss" in own or "loss" in shared:
            raise ConfigError("set the loss once, as `loss` in [study]: the fit and every method use it.")
        names = method_names()
        if method not in names:
            hint = "" if label in names else f" (a variant needs `method = ...` in [options.{label}])"
            raise ConfigError(f"method label {label!r} runs unknown method {method!r}{hint}; "
                              f"methods are {list(names)}.")
        method_of[label] = method
        accepted = get_method(method).options()
        merged = {k: v for k, v in shared.items() if k in accepted}
        merged.update(own)
        bad = sorted(k for k in own if k not in accepted)
        if bad:
            raise ConfigError(f"[options.{label}] has option(s) {bad} that method {method!r} does not take; it "
                              f"takes {accepted}.")
        if "alpha_n" in merged:
            alpha_value(merged["alpha_n"], 30)  # validate the rule now, not in a worker
        opts[label] = merged
    unused = sorted(k for k in shared if not any(k in get_method(method_of[m]).options() for m in labels))
    if unused:
        raise ConfigError(f"shared option(s) {unused} in [options] are taken by none of the methods {labels}.")
    stray = set(per) - set(labels)
    if stray:
        raise ConfigError(f"[options.X] table(s) {sorted(stray)} do not match any label in `methods` {labels}.")

    raw = doc.get("datasets", [])
    if not isinstance(raw, list) or not raw:
        raise ConfigError("the configuration must list at least one [[datasets]] entry.")
    known = known_datasets()
    datasets = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or "name" not in entry:
            raise ConfigError(f"[[datasets]] entry {i + 1} must set `name`.")
        extra = set(entry) - {"name", "basis", "label", "sizes"}
        if extra:
            raise ConfigError(f"[[datasets]] entry {entry['name']!r} has unknown key(s) {sorted(extra)}; "
                              f"allowed: basis, label, name, sizes.")
        name = str(entry["name"]).strip().lower()
        if name not in known:
            raise ConfigError(f"unknown data set {entry['name']!r}; known: {sorted(known)}.")
        label = entry.get("label", name)
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise ConfigError(f"[[datasets]] entry {name!r}: `label` must be lower-case letters, digits, '_', '-' "
                              f"or '.', starting with a letter or digit (it names a directory of chunks); "
                              f"got {label!r}.")
        if label != name and label in known:
            raise ConfigError(f"[[datasets]] entry {name!r}: `label` {label!r} is the name of another data set; "
                              f"its rows would be read as that data set's. Choose another label.")
        basis = entry.get("basis", known[name])
        try:
            make_basis(basis)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"data set {label!r}: bad basis {basis!r}: {exc}") from None
        own_sizes = entry.get("sizes")
        if own_sizes is not None:
            if not isinstance(own_sizes, list) or not own_sizes \
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in own_sizes) \
                    or not set(own_sizes) <= set(sizes) or len(set(own_sizes)) != len(own_sizes):
                raise ConfigError(f"data set {label!r}: `sizes` must be a non-empty list of distinct sizes from "
                                  f"the study's {list(sizes)}; got {own_sizes!r}.")
            own_sizes = tuple(v for v in sizes if v in own_sizes)
        else:
            own_sizes = ()
        datasets.append(DatasetSpec(name, str(basis), label, own_sizes))
    keys = [d.label for d in datasets]
    if len(set(keys)) != len(keys):
        twice = sorted({x for x in keys if keys.count(x) > 1})
        raise ConfigError(f"a data set is listed twice under the label(s) {twice}: give each entry of the same "
                          f"data set a `label` of its own.")
    return StudyConfig(name=str(study.get("name", "study")), seed=int(seed), repetitions=reps,
                       size_repetitions=per_size, sizes=sizes,
                       confidence_level=float(level), test_size=test_size, loss=loss, methods=tuple(labels),
                       method_of=method_of, options=opts, datasets=tuple(datasets), source=text)
