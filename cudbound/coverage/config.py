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

CUD's engine settings (the fields of :class:`cudbound.EngineOptions`) are one option, a table of
its own: ``[options.cud.engine_options]`` with ``max_nodes = 100000``, say.

The whole file is validated when it is read (:func:`parse_config`): every problem, down to each
method's options at each training size, is reported at once, before any task runs or a store
is opened. Given a data directory, the real data sets' files are read as well: each must be
there and unaltered, and each training size must leave rows for the test set.

Entries that share a data set share their training draws: a task's seed is derived from
the data set's name, n and the repetition, not from the label, so bases are compared on
the same samples (unless a draw is degenerate under one basis and redrawn).
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import numbers
import os
import re
import tomllib
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits   # installed with scikit-learn, a dependency

from .._validation import check_scalar
from .._deprecation import apply_renames
from ..registry import check_options, get_method, method_names
from ..basis import make_basis
from ..datasets import REAL_BASIS, ChecksumError, dataset_names, get_dataset
from ..losses import get_loss

_LABEL = re.compile(r"[a-z0-9][a-z0-9_.-]*")


def known_datasets() -> dict:
    """Name -> default basis, for every data set a study can use."""
    return {name: get_dataset(name).basis for name in dataset_names()}


__all__ = ["StudyConfig", "DatasetSpec", "Task", "load_config", "parse_config", "alpha_value", "ConfigError",
           "REAL_BASIS", "known_datasets", "basis_dimension", "MIN_SIZE"]

ALPHA_RULES = {"1": lambda n: 1.0, "sqrt(n)": math.sqrt, "n": float, "n^2": lambda n: float(n) ** 2}
"""The named scalings of alpha_n (the paper's section 5 discusses 1 <= alpha_n <= n^2)."""


class ConfigError(ValueError):
    """A study configuration that cannot be run; the message names the file and, for each problem,
    the offending key. ``errors``: the problems, one message each."""

    def __init__(self, message: str, errors: Iterable[str] | None = None):
        super().__init__(message)
        self.errors = list(errors) if errors is not None else [message]


@dataclass(frozen=True)
class DatasetSpec:
    """One data set of the study: its name in :mod:`cudbound.datasets`, its basis, the label its
    tasks are stored under (the name unless set) and its training sizes (empty: the study's)."""

    name: str
    basis: str
    label: str = ""
    sizes: tuple = ()
    basis_b: str = ""
    """AUC studies (``kind = "auc"``): the basis of procedure B, compared with A (``basis``); default
    ``poly:2`` of A's basis."""

    def __post_init__(self):
        if not self.label:
            object.__setattr__(self, "label", self.name)


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


_NOT_IN_PROTOCOL = frozenset({"replicate_time_limit"})
"""Options whose default (None: no budget) changes no result: left out of a protocol's defaults, so
that protocols stored without them stay valid (set in a study, they are part of its protocol like
any option)."""


def _options_objects(method: str) -> dict:
    """The method's options whose default is an options object (a dataclass instance: CUD's
    ``engine_options``), with those defaults."""
    params = get_method(method).parameters
    return {k: p.default for k, p in params.items()
            if dataclasses.is_dataclass(p.default) and not isinstance(p.default, type)}


def _fields_given(value) -> dict:
    """The fields an options object's value sets: a study gives a dict of some of them."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _stored_names(method: str, options: dict) -> dict:
    """``options`` under the names a protocol records them by, so that the stored protocols (and the
    committed chunks) stay valid: an option with a deprecated name (:mod:`cudbound._deprecation`; ``k``
    for ``cv``) is recorded under that name, whichever name the study uses, and an options object
    (``engine_options``) is recorded field by field, under the fields' names."""
    objects = _options_objects(method)
    flat: dict = {}
    for k, v in options.items():
        if k in objects:
            flat.update(_fields_given(v))
        else:
            flat[k] = v
    old_name = {new: old for old, new in get_method(method).renamed.items()}
    return {old_name.get(k, k): v for k, v in flat.items()}


def _defaults(method: str, options: dict) -> dict:
    """The defaults of the method's options that the study leaves unset: part of the protocol, so
    that a release that changes a default (Kohavi's ``form``, say) cannot mix its rows with
    rows made under the old default (an options object's unset fields, each under its name)."""
    params = get_method(method).parameters
    objects = _options_objects(method)
    out = {}
    for k in get_method(method).options():
        if k in objects:
            given = _fields_given(options.get(k))
            out.update({f.name: getattr(objects[k], f.name) for f in dataclasses.fields(objects[k])
                        if f.name not in given})
        elif k not in options and k != "loss" and params[k].default is not inspect.Parameter.empty:
            out[k] = params[k].default
    return _stored_names(method, {k: _jsonable(v) for k, v in out.items()
                                  if not (k in _NOT_IN_PROTOCOL and v is None)})


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
    kind: str = "error"
    """``"error"``: intervals of one classifier's error rate (the paper's study); ``"auc"``: intervals of
    its AUC, the cross-validated AUC estimates, and comparisons of two procedures (:mod:`.auc_tasks`)."""
    cv: int = 0
    """AUC studies: the folds of the out-of-fold scores the AUC intervals and the prediction-level
    comparisons share."""
    reuse_methods: tuple = field(default=(), compare=False)
    """Error-rate studies, ``[reuse] methods``: labels whose rows are taken from ``reuse_chunks`` where that
    directory holds the task with the same draw (:func:`cudbound.coverage.tasks.run_task`), not computed again."""
    reuse_chunks: str = field(default="", compare=False)
    """``[reuse] chunks``: a chunk directory of an earlier run (relative paths from the configuration file's
    directory). Reused rows are the rows the code computes (a method whose rows do not depend on what
    changed, e.g. CUD, whose basis is fitted once on the training set); the protocol does not record it."""

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
        if self.kind == "auc":
            return _auc_protocol(self)
        return {"seed": self.seed, "confidence_level": self.confidence_level, "test_size": self.test_size,
                "loss": self.loss,
                "methods": {m: [self.method_of[m], _stored_names(self.method_of[m], self.options[m])]
                            for m in self.methods},
                "defaults": {m: _defaults(self.method_of[m], self.options[m]) for m in self.methods},
                "bases": {d.label: d.basis for d in self.datasets},
                **({"sources": {d.label: d.name for d in self.datasets}}
                   if any(d.label != d.name for d in self.datasets) else {}),
                **_refit_rule(self)}

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.protocol(), sort_keys=True).encode()).hexdigest()[:16]

    def method_options(self, label: str, n: int) -> dict:
        """The keyword arguments of ``label`` at training size n (alpha_n rules evaluated)."""
        if self.kind == "auc":
            return dict(self.options[label])
        opts = dict(self.options[label])
        opts["loss"] = self.loss
        if "alpha_n" in opts:
            opts["alpha_n"] = alpha_value(opts["alpha_n"], n)
        return opts


def _signature_defaults(function, options: dict, skip: int, knobs: tuple[str, ...] = ()) -> dict:
    """The scalar defaults of ``function``'s keywords past the first ``skip`` that the study leaves
    unset, less those every call sets (level, rng, alternative), a progress bar's switch and the
    ``knobs`` a run sets (a comparison's share of a run's time limit): no result of a study depends
    on them, and a display option added to a method must not orphan the chunks made before it."""
    params = list(inspect.signature(function).parameters.values())[skip:]
    return {p.name: p.default for p in params if p.name not in options and p.name not in ("confidence_level", "rng",
            "alternative", "progress", *knobs) and p.default is not inspect.Parameter.empty
            and isinstance(p.default, (int, float, str, bool, type(None)))}


def _auc_protocol(config: StudyConfig) -> dict:
    """Everything that changes an AUC study's task result (the protocol a store and its chunks keep)."""
    from ..auc.registry import get_method as auc_method
    from ..compare import get_method as comparison
    from .auc_config import COMPARISON_PREFIX, ESTIMATES
    defaults = {}
    for label in config.methods:
        name = config.method_of[label]
        if label.startswith(COMPARISON_PREFIX):
            defaults[label] = _signature_defaults(comparison(name).function, config.options[label], 1,
                                                  comparison(name).knobs)
        elif label not in ESTIMATES:
            defaults[label] = _signature_defaults(auc_method(name).function, config.options[label], 3)
    return {"kind": "auc", "seed": config.seed, "confidence_level": config.confidence_level,
            "test_size": config.test_size, "loss": config.loss, "cv": config.cv,
            "methods": {m: [config.method_of[m], config.options[m]] for m in config.methods},
            "defaults": defaults,
            "bases": {d.label: d.basis for d in config.datasets},
            "bases_b": {d.label: d.basis_b for d in config.datasets},
            **({"sources": {d.label: d.name for d in config.datasets}}
               if any(d.label != d.name for d in config.datasets) else {}),
            **_refit_rule(config)}


REFIT_RULE = "every refit on part of a training set refits the basis on that part (cudbound.refit)"
"""What a study's protocol says of the refits where it matters. Rows made under another rule (the
basis fitted once on the training set and reused by every refit) have no such entry, so a store or
chunk directory holding them is refused for a rerun (another protocol), not mixed with rows of this
rule."""


def _refit_rule(config: StudyConfig) -> dict:
    """``{"refits": {"rule": REFIT_RULE, "datasets": [...]}}`` for a study with a method that refits on
    part of the training set and data sets whose basis learns from the data (their results depend on
    the rule); empty otherwise (a basis that learns nothing gives the same numbers under either)."""
    if config.kind == "auc":
        refitting = True
        learns = [d.label for d in config.datasets
                  if make_basis(d.basis).learns_from_data or make_basis(d.basis_b).learns_from_data]
    else:
        refitting = any(config.method_of[m] != "cud" for m in config.methods)
        learns = [d.label for d in config.datasets if make_basis(d.basis).learns_from_data]
    return {"refits": {"rule": REFIT_RULE, "datasets": learns}} if refitting and learns else {}


def alpha_value(rule: str | float, n: int) -> float:
    """alpha_n for a number or one of the rules "1", "sqrt(n)", "n", "n^2"."""
    if isinstance(rule, str):
        key = rule.replace(" ", "").lower()
        if key not in ALPHA_RULES:
            raise ConfigError(f"alpha_n rule {rule!r} is not one of {list(ALPHA_RULES)} (or give a number).")
        return ALPHA_RULES[key](n)
    try:
        return float(check_scalar(rule, "alpha_n", numbers.Real, hint=f" Or give one of the rules {list(ALPHA_RULES)}."))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


MIN_SIZE = 2
"""The smallest training size of any study: one point of each class."""


class _Problems:
    """Every problem found in one configuration, raised together as one :class:`ConfigError`."""

    def __init__(self, source: str):
        self.items: list[str]
        self.source, self.items = source, []

    def add(self, message: str) -> None:
        if message not in self.items:
            self.items.append(message)

    def scalar(self, value, key, *args, default=None, **kwargs):
        """:func:`cudbound._validation.check_scalar`; on failure the problem is recorded and
        ``default`` returned."""
        try:
            return check_scalar(value, key, *args, **kwargs)
        except ValueError as exc:
            self.add(str(exc))
            return default

    def table(self, doc, key, where="the file") -> dict:
        value = doc.get(key, {})
        if not isinstance(value, dict):
            self.add(f"`{key}` in {where} must be a table; got {value!r}.")
            return {}
        return value

    def raise_if_any(self) -> None:
        if len(self.items) == 1:
            raise ConfigError(f"{self.source}: {self.items[0]}", self.items)
        if self.items:
            listed = "\n".join(f"  - {m}" for m in self.items)
            raise ConfigError(f"{self.source} has {len(self.items)} errors:\n{listed}", self.items)


def load_config(path: str | os.PathLike[str], *, data_home: str | os.PathLike[str] | None = None) -> StudyConfig:
    """Read and validate a study configuration from a TOML file (:func:`parse_config`).

    ``data_home``: the data directory the study will read its real data sets from; when given,
    their files must be there (see :func:`parse_config`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(f"cannot read the study configuration {str(path)!r}: {why}.") from None
    return parse_config(text, source=str(path), data_home=data_home)


def parse_config(text: str, source: str = "<string>", *,
                 data_home: str | os.PathLike[str] | None = None) -> StudyConfig:
    """Validate a study configuration (TOML text) completely, before anything is computed or stored.

    Every problem is collected and raised at once in one :class:`ConfigError` (``errors``
    lists them; each names the key, the value and what is allowed): the structure and every
    key of the file; each method's options, checked by the method's own validation
    (:func:`cudbound.registry.check_options`) at every training size of the study with the
    study's confidence level (so B too small for the level, a negative ``n_inner`` or k-fold
    cross-validation with more folds than points are found here, not in a worker); each data
    set's name and basis, the basis applied to the data set's features; every training size
    at least :data:`MIN_SIZE` and larger than the data set's basis dimension p (with n <= p the
    fit interpolates the training set and no bootstrap resample has a full-rank design).

    Data files: when ``data_home`` is given (the command line passes ``--data-home``, else
    ``$CUDBOUND_DATA`` if set), the files of the real data sets must be in that directory:
    a directory named explicitly is where the workers (possibly on other machines) read, and
    a missing file would otherwise be downloaded by every worker at once or fail the first
    task of each. Without it (the default data directory) a missing file is downloaded at run
    time, as :func:`cudbound.datasets.load` does, and nothing is checked.
    """
    problems = _Problems(source)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}.") from None
    study = problems.table(doc, "study")
    kind = study.get("kind", "error")
    if kind not in ("error", "auc"):
        problems.add(f"[study] kind must be 'error' (intervals of the error rate) or 'auc' (AUC intervals and "
                     f"comparisons); got {kind!r}.")
        kind = "error"
    tables = {"study", "options", "datasets"} | ({"comparison_options"} if kind == "auc" else {"reuse"})
    unknown = set(doc) - tables
    if unknown:
        problems.add(f"unknown top-level key(s) {sorted(unknown)}; expected {', '.join(sorted(tables))}.")
    allowed = {"name", "seed", "repetitions", "sizes", "confidence_level", "test_size", "methods", "loss", "kind"}
    if kind == "auc":
        allowed |= {"comparisons", "cv"}
    if set(study) - allowed:
        problems.add(f"unknown key(s) {sorted(set(study) - allowed)} in [study]; allowed: {sorted(allowed)}.")
    for key in ("seed", "repetitions", "sizes", "methods"):
        if key not in study:
            problems.add(f"[study] must set `{key}`.")
    seed = problems.scalar(study.get("seed", 0), "seed", min_val=0, default=0)
    sizes = _sizes(study.get("sizes", [30]), problems)
    reps, per_size = _repetitions(study.get("repetitions", 1), sizes, problems)
    level = problems.scalar(study.get("confidence_level", 0.95), "confidence_level", numbers.Real, min_val=0.0,
                            max_val=1.0, include_boundaries="neither")
    test_size = problems.scalar(study.get("test_size", 5000), "test_size", min_val=1, default=1)
    loss = study.get("loss", "squared")
    try:
        loss = get_loss(loss).name
    except (TypeError, ValueError) as exc:
        problems.add(f"[study] loss: {exc}")
        loss = None
    auc: dict = {}
    if kind == "auc":
        from .auc_config import parse_auc_methods
        labels, method_of, opts, auc = parse_auc_methods(study, doc, problems.add, sizes)
    else:
        labels, method_of, opts = _methods(study.get("methods", ["cud"]), problems.table(doc, "options"), problems)
    datasets = _datasets(doc.get("datasets", []), sizes, problems, kind)
    if kind == "auc":
        _check_basis_b(datasets, sizes, problems)
        if loss not in (None, "squared"):
            problems.add(f"[study] loss: an AUC study (kind = 'auc') fits the squared loss, whose leave-pair-out "
                         f"AUC has a closed form; got {loss!r}.")
    with threadpool_limits(limits=1):    # stand-in matrices are tiny: BLAS threads would only cost
        _check_sizes(datasets, sizes, problems)
        if level is not None and loss is not None and kind == "error":
            _check_method_options(labels, method_of, opts, datasets, sizes, level, loss, problems)
    if data_home is not None:
        _check_files(datasets, sizes, data_home, problems)
    reuse = _reuse(doc.get("reuse"), labels, source, problems) if kind == "error" else {}
    problems.raise_if_any()
    return StudyConfig(name=str(study.get("name", "study")), seed=int(seed), repetitions=reps,
                       size_repetitions=per_size, sizes=sizes,
                       confidence_level=float(level), test_size=test_size, loss=loss, methods=tuple(labels),
                       method_of=method_of, options=opts, datasets=tuple(datasets), source=text, kind=kind, **auc,
                       **reuse)


def _reuse(raw, labels, source: str, problems) -> dict:
    """``[reuse]``: ``methods`` (labels of the study) and ``chunks`` (a directory, relative to the
    configuration file's)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or set(raw) != {"methods", "chunks"}:
        problems.add(f"[reuse] must set exactly `methods` (labels of the study) and `chunks` (a chunk directory); "
                     f"got {raw!r}.")
        return {}
    methods, chunks = raw["methods"], raw["chunks"]
    if not isinstance(methods, list) or not methods or any(m not in labels for m in methods):
        problems.add(f"[reuse] methods must be a non-empty list of the study's method labels {list(labels)}; "
                     f"got {methods!r}.")
        return {}
    if not isinstance(chunks, str) or not chunks:
        problems.add(f"[reuse] chunks must be a directory (text); got {chunks!r}.")
        return {}
    base = Path(source).parent if source and not source.startswith("<") else Path.cwd()
    return {"reuse_methods": tuple(methods), "reuse_chunks": str(base / chunks)}


def _sizes(sizes, problems) -> tuple:
    if not isinstance(sizes, list) or not sizes:
        problems.add(f"`sizes` must be a non-empty list of training sizes; got {sizes!r}.")
        return ()
    good = []
    for s in sizes:
        value = problems.scalar(s, "sizes", min_val=1)
        if value is not None:
            good.append(value)
    if len(set(good)) != len(good):
        problems.add(f"`sizes` lists a size twice: {sizes}.")
    return tuple(dict.fromkeys(good))


def _repetitions(spec, sizes, problems):
    if isinstance(spec, dict):           # per training size: repetitions = {30 = 1000, 100 = 500}
        per_size = {}
        for key, value in spec.items():
            if not str(key).isdigit() or int(key) not in sizes:
                problems.add(f"`repetitions` has a key {key!r} that is not one of `sizes` {list(sizes)}.")
                continue
            count = problems.scalar(value, f"repetitions.{key}", min_val=1)
            if count is not None:
                per_size[int(key)] = count
        missing = [s for s in sizes if s not in per_size]
        if missing:
            problems.add(f"`repetitions` gives no number for the size(s) {missing}.")
        return max(per_size.values(), default=1), per_size
    reps = problems.scalar(spec, "repetitions", min_val=1, default=1)
    return reps, {s: reps for s in sizes}


def _methods(labels, options, problems):
    """The method labels, the method of each and its merged options (shared ones included)."""
    shared = {k: v for k, v in options.items() if not isinstance(v, dict)}
    per = {k: dict(v) for k, v in options.items() if isinstance(v, dict)}
    if not isinstance(labels, list) or not labels or not all(isinstance(m, str) for m in labels):
        problems.add(f"`methods` must be a non-empty list of method labels; got {labels!r}.")
        return [], {}, {}
    if len(set(labels)) != len(labels):
        problems.add(f"`methods` lists a label twice: {labels}.")
        labels = list(dict.fromkeys(labels))
    if "loss" in shared or any("loss" in own for own in per.values()):
        problems.add("set the loss once, as `loss` in [study]: the fit and every method use it.")
    names = method_names()
    runs = {per.get(label, {}).get("method", label) for label in labels} & set(names)
    try:   # shared old names: the new ones, once, whichever methods take them
        renames = {old: new for m in sorted(runs) for old, new in get_method(m).renamed.items()}
        shared = apply_renames("[options]", renames, shared)
    except TypeError as exc:
        problems.add(str(exc))
    method_of, opts = {}, {}
    for label in labels:
        own = dict(per.get(label, {}))
        own.pop("loss", None)
        method = own.pop("method", label)
        if method not in names:
            hint = "" if label in names else f" (a variant needs `method = ...` in [options.{label}])"
            problems.add(f"method label {label!r} runs unknown method {method!r}{hint}; methods are {list(names)}.")
            continue
        method_of[label] = method
        try:   # old names: taken under the new ones here, with a warning; downstream sees new names only
            own = apply_renames(f"[options.{label}]", get_method(method).renamed, own)
        except TypeError as exc:
            problems.add(str(exc))
            continue
        accepted = get_method(method).options()
        merged = {k: v for k, v in shared.items() if k in accepted}
        merged.update(own)
        bad = sorted(k for k in own if k not in accepted)
        if bad:
            problems.add(f"[options.{label}] has option(s) {bad} that method {method!r} does not take; it "
                         f"takes {accepted}.")
            merged = {k: v for k, v in merged.items() if k in accepted}
        if "alpha_n" in merged:
            try:
                alpha_value(merged["alpha_n"], 30)
            except ConfigError as exc:
                problems.add(f"[options.{label}]: {exc}")
        opts[label] = merged
    known = [m for m in labels if m in method_of]
    unused = sorted(k for k in shared if k != "loss" and not any(k in get_method(method_of[m]).options() for m in known))
    if unused and len(known) == len(labels):
        problems.add(f"shared option(s) {unused} in [options] are taken by none of the methods {labels}.")
    stray = set(per) - set(labels)
    if stray:
        problems.add(f"[options.X] table(s) {sorted(stray)} do not match any label in `methods` {labels}.")
    return labels, method_of, opts


def _datasets(raw, sizes, problems, kind="error") -> list:
    if not isinstance(raw, list) or not raw:
        problems.add("the configuration must list at least one [[datasets]] entry.")
        return []
    known = known_datasets()
    datasets = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or "name" not in entry:
            problems.add(f"[[datasets]] entry {i + 1} must set `name`.")
            continue
        keys = {"name", "basis", "label", "sizes"} | ({"basis_b"} if kind == "auc" else set())
        extra = set(entry) - keys
        if extra:
            problems.add(f"[[datasets]] entry {entry['name']!r} has unknown key(s) {sorted(extra)}; "
                         f"allowed: {', '.join(sorted(keys))}.")
        name = str(entry["name"]).strip().lower()
        if name not in known:
            problems.add(f"unknown data set {entry['name']!r}; known: {sorted(known)}.")
            continue
        label = entry.get("label", name)
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            problems.add(f"[[datasets]] entry {name!r}: `label` must be lower-case letters, digits, '_', '-' "
                         f"or '.', starting with a letter or digit (it names a directory of chunks); "
                         f"got {label!r}.")
            continue
        if label != name and label in known:
            problems.add(f"[[datasets]] entry {name!r}: `label` {label!r} is the name of another data set; "
                         f"its rows would be read as that data set's. Choose another label.")
            continue
        basis = entry.get("basis", known[name])
        try:
            make_basis(basis)
        except (TypeError, ValueError) as exc:
            problems.add(f"data set {label!r}: bad basis {basis!r}: {exc}")
            continue
        own_sizes = entry.get("sizes")
        if own_sizes is not None:
            if not isinstance(own_sizes, list) or not own_sizes \
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in own_sizes) \
                    or not set(own_sizes) <= set(sizes) or len(set(own_sizes)) != len(own_sizes):
                problems.add(f"data set {label!r}: `sizes` must be a non-empty list of distinct sizes from "
                             f"the study's {list(sizes)}; got {own_sizes!r}.")
                continue
            own_sizes = tuple(v for v in sizes if v in own_sizes)
        else:
            own_sizes = ()
        basis_b = ""
        if kind == "auc":
            basis_b = entry.get("basis_b", "poly:2" if str(basis) == "linear" else f"poly:2({basis})")
            try:
                make_basis(basis_b)
            except (TypeError, ValueError) as exc:
                problems.add(f"data set {label!r}: bad basis_b {basis_b!r}: {exc}")
                continue
        datasets.append(DatasetSpec(name, str(basis), label, own_sizes, str(basis_b)))
    entry_labels = [d.label for d in datasets]
    if len(set(entry_labels)) != len(entry_labels):
        twice = sorted({x for x in entry_labels if entry_labels.count(x) > 1})
        problems.add(f"a data set is listed twice under the label(s) {twice}: give each entry of the same "
                     f"data set a `label` of its own.")
    return datasets


def basis_dimension(spec: DatasetSpec) -> int:
    """p, the number of basis functions of the entry's basis on its data set's features (the basis
    fitted to stand-in standard normal features: only the shape is used). A ValueError if the
    basis does not apply to that many features."""
    d = get_dataset(spec.name).n_features
    X = np.random.default_rng(0).standard_normal((max(50, 4 * d), d))
    return int(make_basis(spec.basis).fit_transform(X).shape[1])


def _check_sizes(datasets, sizes, problems) -> None:
    """Every training size of every entry: at least MIN_SIZE and more than the basis dimension."""
    small = [n for n in sizes if n < MIN_SIZE]
    if small:
        problems.add(f"`sizes` {list(small)}: a training set needs at least {MIN_SIZE} points (one of each class).")
    for spec in datasets:
        try:
            p = basis_dimension(spec)
        except (TypeError, ValueError, np.linalg.LinAlgError) as exc:
            problems.add(f"data set {spec.label!r}: basis {spec.basis!r} does not apply to its "
                         f"{get_dataset(spec.name).n_features} feature(s): {exc}")
            continue
        low = [n for n in (spec.sizes or sizes) if MIN_SIZE <= n <= p]
        if low:
            problems.add(f"data set {spec.label!r}: size(s) {low} are at most the {p} functions of its basis "
                         f"{spec.basis!r}: the fit would interpolate the training set and no bootstrap resample "
                         f"would have a full-rank design; use sizes above {p} (or a smaller basis).")


def _check_basis_b(datasets, sizes, problems) -> None:
    """AUC studies: procedure B's basis applies to each data set, with fewer functions than half of
    every training size (the 5x2cv comparisons fit on halves)."""
    for spec in datasets:
        try:
            p = basis_dimension(DatasetSpec(spec.name, spec.basis_b))
        except (TypeError, ValueError, np.linalg.LinAlgError) as exc:
            problems.add(f"data set {spec.label!r}: basis_b {spec.basis_b!r} does not apply to its "
                         f"{get_dataset(spec.name).n_features} feature(s): {exc}")
            continue
        low = [n for n in (spec.sizes or sizes) if n // 2 <= p]
        if low:
            problems.add(f"data set {spec.label!r}: size(s) {low}: half of them is at most the {p} functions of "
                         f"basis_b {spec.basis_b!r}, and the 5x2cv comparisons fit on halves; use a smaller basis_b.")


def _check_method_options(labels, method_of, opts, datasets, sizes, level, loss, problems) -> None:
    """Each method label's options, by the method's own validation, at every training size of the
    study: a problem at every size is reported as it is, the first of those at some sizes only
    with the smallest size it occurs at."""
    used = [n for n in sorted({n for d in datasets for n in (d.sizes or sizes)}) if n >= MIN_SIZE]
    for label in labels:
        if label not in method_of:
            continue
        where = f"[options.{label}]" + (f" (method {method_of[label]!r})" if label != method_of[label] else "")
        failed: dict[str, list[int]] = {}    # message -> the sizes it occurs at
        for n in used:
            options = dict(opts[label], loss=loss)
            try:
                if "alpha_n" in options:
                    options["alpha_n"] = alpha_value(options["alpha_n"], n)
            except ConfigError:
                break                  # a bad alpha_n rule: reported already
            try:
                check_options(method_of[label], n, confidence_level=level, **options)
            except (ValueError, TypeError) as exc:
                failed.setdefault(str(exc), []).append(n)
        everywhere = [m for m, at in failed.items() if len(at) == len(used)]
        for message in everywhere:
            problems.add(f"{where}: {message}")
        somewhere = sorted((at[0], m) for m, at in failed.items() if m not in everywhere)
        if somewhere:
            problems.add(f"{where} at n = {somewhere[0][0]}: {somewhere[0][1]}")


def _check_files(datasets, sizes, data_home, problems) -> None:
    """The files of the real data sets, in the data directory the run will read, and each real
    data set's rows: a training size must leave rows for the test set. Each file is read once,
    and a problem with it is reported under the first label that uses it."""
    rows: dict[str, int | None] = {}
    for spec in datasets:
        source = get_dataset(spec.name)
        fetch = f"python -c \"import cudbound.datasets as d; d.load('{spec.name}', '{data_home}')\" (docs/datasets.md)"
        missing = [f for f in source.files(data_home) if not Path(f).is_file()]
        for f in missing:
            problems.add(f"data set {spec.label!r}: its file '{Path(f).name}' is not in the data directory "
                         f"'{data_home}'; put it there, or fetch it once: {fetch}.")
        if missing or source.kind != "real":
            continue
        if spec.name not in rows:
            try:
                # kind "real" is a RealData, which has load(): hence the ignore
                rows[spec.name] = int(source.load(data_home)[0].shape[0])  # type: ignore[attr-defined]
            except ChecksumError:
                names = ", ".join(f"'{Path(f).name}'" for f in source.files(data_home))
                problems.add(f"data set {spec.label!r}: its file {names} in '{data_home}' is not the UCI original "
                             f"(its SHA-256 differs). Replace it by the original: delete it and fetch it once: "
                             f"{fetch}.")
                rows[spec.name] = None
            except Exception as exc:   # noqa: BLE001 - a user-registered loader may raise anything
                problems.add(f"data set {spec.label!r}: its file in '{data_home}' could not be read: "
                             f"{type(exc).__name__}: {exc}")
                rows[spec.name] = None
        if rows[spec.name] is None:
            continue
        big = [n for n in (spec.sizes or sizes) if n >= rows[spec.name]]
        if big:
            problems.add(f"data set {spec.label!r}: size(s) {big} leave no test set: it has {rows[spec.name]} rows, "
                         f"and the rows not drawn for training are the test set; use sizes below {rows[spec.name]}.")
