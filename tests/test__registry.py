"""The one registry class (``cudbound._registry``): the name rule, replace and unregister, unknown names,
a function's signature, options and ``<name>_options`` dicts, deprecated option names, the root seed
and the named streams."""
import hashlib
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from cudbound._deprecation import renamed
from cudbound._registry import Entry, Registry, generator, root_seed, stream


@dataclass(frozen=True)
class Tool(Entry):
    """A family for the tests: ``function(x, *, confidence_level, rng, **options)``; ``shared_input`` is
    set by the caller too."""

    DATA: ClassVar[tuple[str, ...]] = ("x",)
    RESERVED: ClassVar[tuple[str, ...]] = ("confidence_level", "rng", "shared_input")


def scale(x, *, confidence_level=0.95, rng=None, shared_input=None, factor=2.0, offset=0.0):
    return factor * x + offset


@renamed(k="folds")
def split(x, *, confidence_level=0.95, rng=None, folds=5, factor=1.0):
    return folds


def noise(x, *, confidence_level=0.95, rng=None, k=3, low=0.0):
    return low + rng.random(k)


@pytest.fixture
def tools():
    reg = Registry("tool", Tool, caller="run()", taken=("shared",))
    for name, function in (("scale", scale), ("split", split), ("noise", noise)):
        reg.add(Tool(name, function, name))
    return reg


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["Scale", "two words", "a,b", "", " lead", None, 3])
def test_the_name_rule_refuses_what_a_method_list_could_not_name(tools, name):
    with pytest.raises(ValueError, match=r"tool names must be non-empty lower-case strings without commas or spaces"):
        tools.add(Tool(name, scale, "bad"))
    assert tools.names() == ("scale", "split", "noise")


def test_a_name_of_a_shared_stream_is_taken(tools):
    with pytest.raises(ValueError, match="'shared' is the name of a shared random stream of the tools"):
        tools.add(Tool("shared", scale, "clash"))
    tools.add(Tool("shared_2", scale, "fine"))
    assert "shared_2" in tools


def test_a_name_is_registered_once_unless_replaced_in_place(tools):
    with pytest.raises(ValueError, match=r"tool 'split' is already registered \(pass replace=True"):
        tools.add(Tool("split", scale, "again"))
    assert tools.lookup("split").function is split
    new = tools.add(Tool("split", scale, "again"), replace=True)
    assert tools.lookup("split") is new and tools.names() == ("scale", "split", "noise")   # its place kept


def test_unregister_and_the_registration_order(tools):
    tools.remove("scale")
    assert tools.names() == ("split", "noise")
    tools.add(Tool("scale", scale, "back"))
    assert tools.names() == ("split", "noise", "scale")
    with pytest.raises(ValueError,
                       match=r"unknown tool 'scale2'; the registered tools are \['split', 'noise', 'scale'\]"):
        tools.remove("scale2")


@pytest.mark.parametrize("name", ["nope", "Scale", ["scale"]])
def test_an_unknown_name_gets_one_message_listing_the_registered_ones(tools, name):
    with pytest.raises(ValueError) as info:
        tools.lookup(name)
    assert str(info.value) == f"unknown tool {name!r}; the registered tools are ['scale', 'split', 'noise']."


def test_entries_of_another_type_are_refused():
    reg = Registry("data set", dict)
    with pytest.raises(TypeError, match="data set entries must be builtins.dict instances; got list"):
        reg.add([("name", "x")])


def test_as_a_mapping_a_snapshot_restores_the_order(tools):
    snapshot = dict(tools)
    tools.clear()
    assert tools.names() == () and len(tools) == 0
    tools.update(snapshot)
    assert list(tools) == ["scale", "split", "noise"] and tools["split"] is snapshot["split"]
    with pytest.raises(ValueError, match="stored under its own name"):
        tools["other"] = snapshot["scale"]


def test_select_parses_a_method_list_against_the_registry(tools):
    assert tools.select("Noise, scale") == ("noise", "scale")
    assert tools.select("all") == ("scale", "split", "noise")
    with pytest.raises(ValueError, match=r"unknown tool\(s\) hammer in `methods`"):
        tools.select(["scale", "hammer"])


# ---------------------------------------------------------------- signatures and options


def test_a_function_must_take_the_familys_arguments(tools):
    with pytest.raises(TypeError, match=r"the function of tool 'bare' must take \(x, \*, confidence_level, rng, "
                                        r"\.\.\.\); it lacks \['rng'\]"):
        tools.add(Tool("bare", lambda x, *, confidence_level: x, "no rng"))
    with pytest.raises(TypeError, match=r"it lacks \['x'\]"):
        tools.add(Tool("nodata", lambda *, confidence_level, rng: 0, "no data argument"))
    assert "bare" not in tools and "nodata" not in tools


def test_options_are_the_signature_after_the_data_minus_the_reserved_names(tools):
    assert tools.lookup("scale").options() == ["factor", "offset"]
    assert tools.lookup("split").options() == ["factor", "folds"]      # the deprecated `k` is no option
    assert tools.lookup("split").renamed == {"k": "folds"} and tools.lookup("scale").renamed == {}

    @dataclass(frozen=True)
    class TwoData(Tool):
        DATA: ClassVar[tuple[str, ...]] = ("x", "w")

    def weighted(x, w, *, confidence_level=0.95, rng=None, power=1):
        return x * w ** power

    assert TwoData("weighted", weighted, "").options() == ["power"]     # both data arguments are no option
    assert Tool("weighted", weighted, "").options() == ["power", "w"]


def test_split_options_routes_shared_options_and_per_entry_dicts(tools):
    shared, per = tools.split_options(["scale", "split"], {"factor": 3.0, "offset": 1.0, "noise_options": {"k": 2},
                                                           "split_options": None}, "run()")
    assert shared == {"factor": 3.0, "offset": 1.0}
    assert per == {"noise": {"k": 2}}        # a dict of an entry not selected is checked, then unused; None: no dict


@pytest.mark.parametrize("options, message", [
    ({"factor": 1.0, "bogus": 2}, r"unknown option\(s\) \['bogus'\] for tools \['scale', 'split'\]; they take "
                                  r"\['factor', 'folds', 'offset'\], and per-tool dicts scale_options, "
                                  r"split_options\."),
    ({"low": 2}, r"unknown option\(s\) \['low'\] for tools"),            # noise's option, noise not selected
    ({"hammer_options": {"k": 1}}, r"unknown option\(s\) \['hammer_options'\] for tools"),   # no such tool
    ({"scale_options": {"folds": 2}}, r"unknown option\(s\) \['folds'\] for tool 'scale' in `scale_options`; it "
                                      r"takes \['factor', 'offset'\]\."),
    ({"scale_options": [("factor", 2)]}, r"`scale_options` must be a dict of keyword arguments; got list\."),
    ({"shared_input": 1}, r"`shared_input` is set by run\(\) itself and cannot be passed as an option\."),
    ({"scale_options": {"rng": 1}}, r"`scale_options` may not set `rng`: it is set by run\(\) for every tool\."),
])
def test_split_options_refuses_what_no_entry_takes(tools, options, message):
    with pytest.raises(ValueError, match=message):
        tools.split_options(["scale", "split"], options, "run()")


def test_deprecated_option_names_are_renamed_where_they_enter(tools):
    with pytest.warns(DeprecationWarning, match=r"run\(\): `k` is deprecated .* use `folds` instead"):
        shared, per = tools.split_options(["split"], {"k": 4}, "run()")
    assert shared == {"folds": 4} and per == {}
    with pytest.warns(DeprecationWarning, match=r"`split_options`: `k` is deprecated"):
        shared, per = tools.split_options(["scale"], {"split_options": {"k": 4}}, "run()")
    assert per == {"split": {"folds": 4}}
    with pytest.raises(TypeError, match=r"run\(\) got both `k` \(deprecated\) and `folds`"):
        tools.split_options(["split"], {"k": 4, "folds": 4}, "run()")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # `k` is an option of noise: not split's old name here
        shared, _ = tools.split_options(["split", "noise"], {"k": 4}, "run()")
    assert shared == {"k": 4}


def test_entry_options_checks_one_entrys_options(tools):
    assert tools.entry_options("scale", {"offset": 1}, "run()") == {"offset": 1}
    with pytest.warns(DeprecationWarning):
        assert tools.entry_options("split", {"k": 3}, "run()") == {"folds": 3}
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['k', 'z'\] for tool 'scale' in run\(\)"):
        tools.entry_options("scale", {"z": 1, "k": 2}, "run()")


# ---------------------------------------------------------------- the root seed and the streams


@pytest.mark.parametrize("make", [lambda: 7, lambda: np.random.SeedSequence(7), lambda: np.random.default_rng(7)],
                         ids=["int", "seedsequence", "generator"])
def test_the_root_is_four_draws_of_the_users_rng(make):
    entropy = [int(v) for v in np.random.default_rng(make()).integers(0, 2**63, size=4)]
    assert root_seed(make()).entropy == entropy
    assert root_seed(make()).entropy != root_seed(8).entropy


def test_a_stream_is_the_child_keyed_by_the_hash_of_its_name():
    root = np.random.SeedSequence(12345, spawn_key=(3,))
    key = int.from_bytes(hashlib.sha256("noise".encode()).digest()[:4], "little")
    assert stream(root, "noise").spawn_key == (3, key) and stream(root, "noise").entropy == 12345
    expected = np.random.default_rng(np.random.SeedSequence(12345, spawn_key=(3, key))).random(5)
    np.testing.assert_array_equal(generator(root, "noise").random(5), expected)
    assert stream(root, "noise").spawn_key != stream(root, "noise2").spawn_key


def _draws(reg, names, rng):
    """A caller's loop: each entry called on its own stream of one root."""
    root = root_seed(rng)
    return {name: tuple(reg.lookup(name).function(0.0, rng=generator(root, name))) for name in names}


def test_a_streams_numbers_depend_on_its_name_only(tools):
    before = _draws(tools, ["noise"], 5)
    tools.add(Tool("aaa", noise, "sorted first"))
    tools.add(Tool("zzz", noise, "sorted last"))
    after = _draws(tools, ["zzz", "noise", "aaa"], 5)       # more entries, another order
    assert after["noise"] == before["noise"]
    assert len({after["aaa"], after["noise"], after["zzz"]}) == 3   # each its own stream
    tools.remove("aaa")
    assert _draws(tools, ["noise"], 5) == before
