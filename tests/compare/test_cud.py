"""cudbound.compare's ``cud``: the CUD interval of the difference of two fitted classifiers' errors.

The interval is rebuilt from its parts: the bootstrap counts drawn from the seed as CUD draws them,
each Q^(b) by ``cudbound.replicate_sup_difference`` on the two designs (itself checked against brute
force in tests/test_cud_difference.py), the conservative order statistic, and Delta_hat from both
training errors. Then the properties the method promises: A and B the same procedure give
[-Q_hat, Q_hat]; swapping A and B negates the interval; shifting and scaling the features changes
nothing; a budget gives an interval that contains the exact one, flagged conservative. By default
only the replicates near Q_hat are searched to the end (``cudbound.quantile``): the interval is the
one every replicate searched to the end gives, for every pair of losses, factor and alpha_n.
"""
import math

import numpy as np
import pytest

import cudbound
from cudbound.cli import main
from cudbound.compare import ComparisonResult, Procedure, compare, cud_difference_interval, get_method, method_names
from cudbound.resampling import draw_counts


def _data(n=24, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.4 * X[:, 1] + 0.8 * rng.standard_normal(n) > 0, 1, -1)
    return X, y


B = 40


def _ci(res):
    return tuple(res.confidence_interval)


def test_it_is_registered_for_the_fitted_classifiers():
    assert "cud" in method_names() and get_method("cud").target == "conditional"
    assert set(get_method("cud").options()) == {"n_resamples", "alpha_n", "time_limit", "engine_options", "form",
                                             "progress"}


def test_the_interval_from_its_parts():
    X, y = _data()
    n = len(y)
    res = cud_difference_interval(Procedure(), Procedure(basis="poly:2", loss="hinge"), X, y, n_resamples=B, rng=7,
                                  engine_options={"exact_distribution": True})
    design_a = np.column_stack([np.ones(n), X])
    design_b = np.column_stack([np.ones(n), X, X[:, 0] ** 2, X[:, 0] * X[:, 1], X[:, 1] ** 2])
    counts = draw_counts(n, B, np.random.default_rng(7))
    q = np.sort([cudbound.replicate_sup_difference(design_a, design_b, y, c, loss_b="hinge") for c in counts])
    q_hat = q[math.ceil(0.95 * B) - 1]
    d = res.details
    assert abs(d["half_width"] - q_hat) <= 1e-9
    np.testing.assert_allclose(np.sort(d["bootstrap_distribution"]), q, atol=1e-9)
    err_a = np.mean(np.where(design_a @ np.linalg.lstsq(design_a, y, rcond=None)[0] >= 0, 1, -1) != y)
    assert d["train_error_a"] == err_a and res.estimate == d["train_error_a"] - d["train_error_b"]
    assert _ci(res) == (max(-1.0, res.estimate - d["half_width"]), min(1.0, res.estimate + d["half_width"]))
    assert res.method == "cud" and res.pvalue is None and not d["conservative"] and d["upper_gap"] == 0.0
    assert d["n_resamples"] == B and d["alpha_n"] == n and d["search_replicates"] == B
    row = res.to_dict()
    assert list(row)[:7] == ["method", "quantity", "estimate", "low", "high", "confidence_level", "n_samples"]
    assert {"half_width", "train_error_a", "train_error_b", "search_nodes_total"} <= set(row["details"])


@pytest.mark.parametrize("loss_a,loss_b,basis_b,form,alpha_n", [
    ("squared", "squared", "poly:2", "joint", None), ("squared", "hinge", "poly:2", "joint", None),
    ("logistic", "squared", "linear", "joint", 6.0), ("hinge", "logistic", "poly:2", "min", None),
    ("squared", "logistic", "poly:2", "product", None), ("hinge", "squared", "linear", "joint", 0.0)])
def test_the_order_statistic_searches_only_what_it_needs_and_gives_the_exact_interval(loss_a, loss_b, basis_b, form,
                                                                                       alpha_n, monkeypatch):
    """The refinement (each replicate's joint search under the bracket's floor and stop_above, its
    frontier searched in full once) against every replicate searched to the end: the same Q_hat and
    interval; each replicate's bounds hold its exact Q^(b); some replicates are left bounded. A first
    budget of 4 nodes (256 by default) makes these small searches go through several rounds."""
    import cudbound.quantile
    monkeypatch.setattr(cudbound.quantile, "FIRST_BUDGET", 4)
    X, y = _data(n=30, seed=8)
    a, b = Procedure(loss=loss_a), Procedure(basis=basis_b, loss=loss_b)
    kw = {"n_resamples": 60, "rng": 5, "form": form, "alpha_n": alpha_n}
    exact = cud_difference_interval(a, b, X, y, engine_options={"exact_distribution": True}, **kw)
    res = cud_difference_interval(a, b, X, y, **kw)
    assert res.details["half_width"] == exact.details["half_width"] and _ci(res) == _ci(exact)
    q = exact.details["bootstrap_distribution"]
    st = res.details["stats"]
    assert set(exact.details["stats"].status) == {"exact"} and set(st.status) <= {"exact", "bounded"}
    assert np.all(res.details["bootstrap_distribution"] >= q - 1e-9) and np.all(st.lower <= q + 1e-9)
    assert st.decided and res.details["upper_gap"] == 0.0 and not res.details["conservative"]
    if alpha_n != 0.0:  # (alpha_n = 0: every replicate is max |C_A - C_B| / n at once)
        assert st.n_bounded > 0


@pytest.mark.parametrize("ahead", [0, 2, None])
def test_a_rounds_states_beyond_the_memory_limit_are_dropped_and_the_interval_stays_exact(monkeypatch, ahead):
    """The joint searches' states a round hands to the order statistic are at most
    ``compare.cud.STATE_BYTES`` in all (the rest start again next round under its budget, or the budget
    ``compare.cud.RESTART_AHEAD`` rounds ahead, or search to the end with None): with the default some
    are kept, with a limit of 0 none; the interval is the exact one either way."""
    import cudbound.compare.cud as mod
    import cudbound.quantile
    monkeypatch.setattr(cudbound.quantile, "FIRST_BUDGET", 4)
    monkeypatch.setattr(mod, "RESTART_AHEAD", ahead)
    X, y = _data(n=30, seed=8)
    a, b = Procedure(loss="logistic"), Procedure(basis="poly:2", loss="squared")
    kw = {"n_resamples": 60, "rng": 5}
    exact = cud_difference_interval(a, b, X, y, engine_options={"exact_distribution": True}, **kw)
    held, caps, real = [], [], mod.order_statistic

    def spy(run, *args, **kwargs):
        def counted(indices, options_list, on_done):
            caps.append([o.max_nodes for o in options_list])
            outs = run(indices, options_list, on_done)
            held.append(sum(o.state.nbytes for o in outs if o.state is not None))
            return outs
        return real(counted, *args, **kwargs)

    monkeypatch.setattr(mod, "order_statistic", spy)
    kept = cud_difference_interval(a, b, X, y, **kw)
    assert max(held) > 0
    held.clear()
    monkeypatch.setattr(mod, "STATE_BYTES", 0)
    dropped = cud_difference_interval(a, b, X, y, **kw)
    assert len(held) > 1 and max(held) == 0
    later = [c for round_caps in caps[-(len(held) - 1):] for c in round_caps]     # after the first round
    assert (None in later) == (ahead is None)     # searched to the end, or started again under a budget
    assert _ci(kept) == _ci(dropped) == _ci(exact)
    assert dropped.details["half_width"] == exact.details["half_width"]


def test_the_same_procedure_gives_a_symmetric_interval():
    X, y = _data()
    res = cud_difference_interval(Procedure(loss="logistic"), Procedure(loss="logistic"), X, y, n_resamples=B, rng=1)
    assert res.estimate == 0.0 and res.details["half_width"] > 0
    low, high = _ci(res)
    assert low == -high == -min(1.0, res.details["half_width"])


def test_swapping_a_and_b_negates_the_interval():
    X, y = _data(seed=4)
    a, b = Procedure(), Procedure(loss="logistic")
    ab = cud_difference_interval(a, b, X, y, n_resamples=B, rng=2)
    ba = cud_difference_interval(b, a, X, y, n_resamples=B, rng=2)
    assert ba.estimate == -ab.estimate and _ci(ba) == (-_ci(ab)[1], -_ci(ab)[0])


def test_shifted_and_scaled_features_change_nothing():
    X, y = _data(seed=5)
    a, b = Procedure(), Procedure(loss="hinge")
    res = cud_difference_interval(a, b, X, y, n_resamples=B, rng=3)
    moved = cud_difference_interval(a, b, X * np.array([250.0, 1e-3]) + np.array([-40.0, 3.0]), y,
                                    n_resamples=B, rng=3)
    assert moved.estimate == res.estimate
    np.testing.assert_allclose(_ci(moved), _ci(res), atol=1e-9)


@pytest.mark.parametrize("cut", [{"engine_options": {"max_nodes": 1}}, {"time_limit": 1e-9}])
def test_a_budget_gives_a_wider_interval_flagged_conservative(cut):
    X, y = _data(seed=6)
    a, b = Procedure(), Procedure(basis="poly:2")
    exact = cud_difference_interval(a, b, X, y, n_resamples=B, rng=4)
    res = cud_difference_interval(a, b, X, y, n_resamples=B, rng=4, **cut)
    assert res.details["conservative"] and res.details["search_not_exact"] > 0
    assert res.details["half_width"] >= exact.details["half_width"]
    assert res.confidence_interval.low <= exact.confidence_interval.low
    assert res.confidence_interval.high >= exact.confidence_interval.high


def test_compare_runs_it_by_name_with_its_options():
    X, y = _data()
    res = compare(Procedure(), Procedure(loss="hinge"), X, y, methods=["cud"], rng=0,
                  cud_options={"n_resamples": 20, "alpha_n": 5.0})
    assert isinstance(res[0], ComparisonResult) and res[0].details["alpha_n"] == 5.0
    assert res[0].details["n_resamples"] == 20


def test_a_classifier_without_a_loss_is_refused():
    from sklearn.tree import DecisionTreeClassifier
    X, y = _data()
    with pytest.raises((ValueError, TypeError), match="DecisionTreeClassifier"):
        cud_difference_interval(Procedure(), DecisionTreeClassifier(), X, y, n_resamples=B, rng=0)


def test_the_command_line_takes_resamples_and_alpha_n(capsys, tmp_path):
    X, y = _data(n=20)
    path = tmp_path / "d.csv"
    path.write_text("x1,x2,y\n" + "".join(f"{a:.6f},{b:.6f},{int(v > 0)}\n" for (a, b), v in zip(X, y)))
    code = main(["compare", "--data", str(path), "--label", "y", "--model-a", "squared", "--model-b", "hinge",
                 "--methods", "cud", "--resamples", "20", "--alpha-n", "10", "--seed", "0", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    import json
    record = json.loads(out)["results"][0]
    assert record["method"] == "cud" and record["details"]["n_resamples"] == 20 and record["details"]["alpha_n"] == 10
    code = main(["compare", "--data", str(path), "--label", "y", "--model-a", "squared", "--model-b", "hinge",
                 "--methods", "mcnemar", "--resamples", "20"])
    assert code == 2 and "--resamples" in capsys.readouterr().err


def test_a_progress_bar_over_the_replicates_shows_the_certified_interval_and_changes_nothing(capsys):
    """progress=True: a bar on stderr over the B replicates with the interval certified after each round (its
    count at the end: tests/test_quantile.py); no bar by default; the same numbers."""
    X, y = _data()
    shown, = compare(Procedure(), Procedure(basis="poly:2"), X, y, methods=["cud"], rng=7, progress=False,
                     cud_options={"n_resamples": B, "progress": True})
    err = capsys.readouterr().err
    assert "CUD replicates (A - B)" in err and f"/{B} [" in err
    quiet, = compare(Procedure(), Procedure(basis="poly:2"), X, y, methods=["cud"], rng=7, progress=False,
                     cud_options={"n_resamples": B})
    assert capsys.readouterr().err == ""
    assert _ci(shown) == _ci(quiet) and shown.details["half_width"] == quiet.details["half_width"]
    np.testing.assert_array_equal(shown.details["bootstrap_distribution"], quiet.details["bootstrap_distribution"])


@pytest.mark.parametrize("terminal", [True, False])
def test_the_command_line_shows_cuds_bar_only_where_it_shows_one(capsys, tmp_path, monkeypatch, terminal):
    """`cudbound compare --methods cud` gives cud its bar over the replicates whenever the run shows bars (on a
    terminal, without --no-progress: here a stand-in for the terminal test), and never otherwise."""
    from cudbound.cli import compare as cli_compare
    monkeypatch.setattr(cli_compare, "_show_progress", lambda args: terminal and not args.no_progress)
    X, y = _data(n=20)
    path = tmp_path / "d.csv"
    path.write_text("x1,x2,y\n" + "".join(f"{a:.6f},{b:.6f},{int(v > 0)}\n" for (a, b), v in zip(X, y)))
    argv = ["compare", "--data", str(path), "--label", "y", "--model-a", "squared", "--model-b", "hinge",
            "--methods", "mcnemar,cud", "--resamples", "20",
            "--seed", "0", "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert ("CUD replicates (A - B)" in err) is terminal and ("compare: cud" in err) is terminal
    assert main(argv + ["--no-progress"]) == 0
    again, err = capsys.readouterr()
    assert "CUD replicates" not in err
    import json
    first, second = json.loads(out)["results"][1], json.loads(again)["results"][1]
    assert (first["low"], first["high"]) == (second["low"], second["high"]) and first["method"] == "cud"
