"""The registry of data sets: every source keeps the base-class contract, and a user's source
runs in a coverage study like the built-in ones."""
import numpy as np
import pytest

from cudbound.coverage import parse_config, run_task
from cudbound.coverage.config import known_datasets
from cudbound.datasets import (DATASETS, NULL_DESIGNS, SIMULATED, DataSource, LinearGaussian, Simulator, dataset_names,
                               get_dataset, register, unregister)


def test_the_registry_holds_the_papers_twelve_and_the_demo_generator():
    assert dataset_names("real") == DATASETS
    assert set(dataset_names("simulated")) == set(SIMULATED) | {"linear_gaussian"} | set(NULL_DESIGNS)
    assert known_datasets() == {name: get_dataset(name).basis for name in dataset_names()}
    assert all(get_dataset(name).basis == "zpca:3" for name in DATASETS)


@pytest.mark.parametrize("name", [n for n in dataset_names("simulated")])
def test_simulators_keep_the_contract(name):
    source = get_dataset(name)
    assert isinstance(source, Simulator) and source.name == name and source.kind == "simulated"
    X, y, Xt, yt = source.draw(25, 40, np.random.default_rng(3))
    assert X.shape == (25, source.n_features) and Xt.shape == (40, source.n_features)
    assert set(np.unique(np.concatenate([y, yt]))) <= {-1, 1}
    again = source.draw(25, 40, np.random.default_rng(3))
    assert all(np.array_equal(a, b) for a, b in zip((X, y, Xt, yt), again))
    # draw is sample(n) then sample(test_size) from the same generator (the stored studies rely on it)
    rng = np.random.default_rng(3)
    first, second = source.sample(25, rng), source.sample(40, rng)
    assert np.array_equal(first[0], X) and np.array_equal(second[1], yt)


@pytest.mark.parametrize("name", DATASETS)
def test_real_data_sets_keep_the_contract(name, shared_data):
    source = get_dataset(name)
    assert source.kind == "real" and source.true_error(np.zeros(4)) is None
    X, y = source.load(shared_data)
    assert X.shape[1] == source.n_features and set(np.unique(y)) == {-1, 1}
    Xtr, ytr, Xte, yte = source.draw(30, 0, np.random.default_rng(0), shared_data)
    assert Xtr.shape == (30, source.n_features) and Xte.shape[0] == X.shape[0] - 30
    rows = {tuple(r) for r in np.column_stack([X, y])}
    assert {tuple(r) for r in np.column_stack([Xtr, ytr])} <= rows
    with pytest.raises(ValueError, match="no test set is left"):
        source.draw(X.shape[0], 0, np.random.default_rng(0), shared_data)


def test_known_true_errors():
    gen = get_dataset("linear_gaussian")
    beta = np.concatenate([[0.0], gen.coef])
    assert gen.true_error(beta) == pytest.approx(gen.bayes_error)


class Blobs(Simulator):
    """Two Gaussian blobs with means -1 and +1 (a user's data source)."""

    name = "blobs"
    basis = "linear"
    n_features = 1

    def sample(self, n, rng=None):
        rng = np.random.default_rng(rng)
        y = np.where(rng.random(n) < 0.5, 1, -1)
        return y[:, None] + rng.normal(size=(n, 1)), y


STUDY = """
[study]
name = "blobs"
seed = 5
repetitions = 2
sizes = [20]
test_size = 500
methods = ["kohavi", "langford"]
[options]
n_boot = 20
[[datasets]]
name = "blobs"
"""


def test_a_registered_source_runs_in_a_study():
    register(Blobs())
    try:
        config = parse_config(STUDY)
        rows = [run_task(config, task) for task in config.tasks()]
    finally:
        unregister("blobs")
    assert [r["dataset"] for r in rows] == ["blobs", "blobs"] and all(r["test_size"] == 500 for r in rows)
    assert all(0.0 <= row["low"] <= row["high"] <= 1.0 for r in rows for row in r["rows"])
    assert rows[0]["true_error"] != rows[1]["true_error"]
    with pytest.raises(ValueError, match="unknown data set"):
        parse_config(STUDY)


def test_registering_errors():
    with pytest.raises(ValueError, match="already registered"):
        register(LinearGaussian())
    with pytest.raises(TypeError, match="DataSource"):
        register(object())
    with pytest.raises(ValueError, match="unknown data set 'nope'"):
        get_dataset("nope")
    with pytest.raises(ValueError, match="unknown data set 'nope'"):
        unregister("nope")
    assert issubclass(Simulator, DataSource)
