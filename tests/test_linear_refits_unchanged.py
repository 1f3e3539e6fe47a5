"""With a basis that has nothing fitted (``linear``), every method's numbers are those of commit f50360a.

Refitting the whole procedure on each part of the data changes nothing when the basis has nothing
to fit, so every number stays bit-identical: each call of the table of
``tests/fixtures/make_linear_refit_fixture.py`` (interval methods, baseline estimators,
comparisons, AUC estimates and intervals on three seeded problems) is replayed on the current code
and compared, with ==, to ``tests/fixtures/linear_refit_before.json``, which that script made at
f50360a (its docstring says how to regenerate it).
"""
import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _script():
    spec = importlib.util.spec_from_file_location("make_linear_refit_fixture",
                                                  FIXTURES / "make_linear_refit_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
STORED = json.loads((FIXTURES / "linear_refit_before.json").read_text())
STORED_CALLS = {call["id"]: call for call in STORED["calls"]}


def _problem(name):
    problem = STORED["problems"][name]
    return np.asarray(problem["X"], dtype=float), np.asarray(problem["y"])


def test_the_fixture_holds_f50360a_and_every_family():
    assert STORED["generated_at_commit"] == "f50360a"
    counts = {family: sum(call["family"] == family for call in STORED["calls"]) for family in SCRIPT.FAMILIES}
    assert all(count > 0 for count in counts.values()), counts
    numbers = {family: sum(v is not None for call in STORED["calls"] if call["family"] == family
                           for row in call["results"] for k, v in row.items() if k != "method")
               for family in SCRIPT.FAMILIES}
    assert all(count > 0 for count in numbers.values()), numbers
    # the call table replayed below is the one that made the file
    assert [call[0] for call in SCRIPT.CALLS] == [call["id"] for call in STORED["calls"]]
    for call_id, family, function, problem, kwargs in SCRIPT.CALLS:
        stored = STORED_CALLS[call_id]
        assert (stored["family"], stored["function"], stored["problem"], stored["kwargs"]) == \
            (family, function, problem, kwargs), call_id
    # and the stored data are the script's problems
    for name, (X, y) in SCRIPT.make_problems().items():
        X_stored, y_stored = _problem(name)
        assert np.array_equal(X, X_stored) and np.array_equal(y, y_stored), name


_EXACT_AUC = (1e-13, "an AUC is now counted as a sum of half-integers over m n after the one tie rule "
                     "(cudbound.ties), exact in any row order: the old sum rounded differently")
CHANGED_ON_PURPOSE = {
    ("compare", "delong"): _EXACT_AUC,
    **{("auc", name): _EXACT_AUC for name in ("delong", "delong_logit", "hanley_mcneil", "newcombe",
                                             "bootstrap_percentile", "bootstrap_bca", "cvauc", "cvauc_pooled")},
    ("compare", "newcombe"): (1e-15, "one Wilson interval (cudbound.statistics, Kohavi's closed form) replaced a "
                                     "second copy written another way: equal in exact arithmetic, a rounding apart"),
}
"""(family, method) -> (largest change, relative to max(1, |value|), why): the only numbers allowed to
move, by at most that much."""


def _with_the_folds_of_f50360a(call, y):
    """``call`` with the folds f50360a drew given as fold labels: ``cv_auc`` and ``auc_interval`` now
    deal their folds from the out-of-fold stream, as the comparisons do (the same ``rng``, the same
    folds everywhere), where they drew a StratifiedKFold seed from ``rng`` (cv_auc) or from the stream
    ``"folds"`` (auc_interval). The numbers on the same folds are the test."""
    from sklearn.model_selection import StratifiedKFold

    from cudbound._registry import generator, root_seed
    from cudbound.resampling import splitter_folds

    call_id, family, function, problem, kwargs = call
    if family != "auc" or function not in ("cv_auc", "auc_interval"):
        return call
    gen = generator(root_seed(kwargs["rng"]), "folds") if function == "auc_interval" else \
        np.random.default_rng(kwargs["rng"])
    splitter = StratifiedKFold(n_splits=kwargs["cv"], shuffle=True, random_state=int(gen.integers(2**31 - 1)))
    labels = np.where(np.asarray(y, dtype=float) > 0, 1.0, -1.0)
    return call_id, family, function, problem, {**kwargs, "cv": splitter_folds(splitter, labels)[0]}


@pytest.mark.parametrize("call", SCRIPT.CALLS, ids=[call[0] for call in SCRIPT.CALLS])
def test_every_number_is_bit_identical_to_f50360a(call):
    before = STORED_CALLS[call[0]]["results"]
    X, y = _problem(call[3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # degenerate refits are warned of; the numbers are the test
        now = SCRIPT.run_call(_with_the_folds_of_f50360a(call, y), X, y)
    assert [row.get("method") for row in now] == [row.get("method") for row in before], call[0]
    compared = 0
    for old, new in zip(before, now):
        for field, value in old.items():
            if field == "method":
                continue
            message = f"{call[0]}, {old.get('method', call[2])}.{field}: {new[field]!r} now, {value!r} at f50360a"
            allowed = CHANGED_ON_PURPOSE.get((call[1], old.get("method")))
            if allowed is not None and isinstance(value, float):
                assert abs(new[field] - value) <= allowed[0] * max(1.0, abs(value)), message
            else:
                assert new[field] == value, message
            compared += value is not None
    assert compared > 0, f"{call[0]}: no number compared"
