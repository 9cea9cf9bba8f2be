"""The fast paths of a ResourceSlice device's validation (a plain device, a single valid attribute value, a
capacity without a request policy, keys already found good, device names already checked) answer exactly
what the full checks answer: the same errors, at the same paths, in the same order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api.codec import decode
from dralloc.validation import validate
from dralloc.validation.resource import device as device_rules
from dralloc.validation.resource import lists

_KEYS = st.sampled_from(["model", "index", "a/b", "gpu.example.com/uuid", "bad key", "x/y/z", "/empty", "ok/",
                         "Upper_Case", "9starts", "k" * 70, "driverVersion"])
_SCALARS = st.one_of(
    st.fixed_dictionaries({"int": st.integers(-5, 5)}),
    st.fixed_dictionaries({"bool": st.booleans()}),
    st.fixed_dictionaries({"string": st.sampled_from(["h100", "", "é" * 20, "x" * 70])}),
    st.fixed_dictionaries({"version": st.sampled_from(["1.2.3", "560.35.3", "1.2", "01.2.3", "1.0.0-rc.1"])}),
    st.fixed_dictionaries({"string": st.just("a"), "int": st.just(1)}),
    st.fixed_dictionaries({"ints": st.lists(st.integers(0, 3), max_size=2)}),
    st.fixed_dictionaries({"strings": st.lists(st.sampled_from(["a", "x" * 70]), max_size=2)}),
    st.just({}),
)
_CAPACITY = st.one_of(
    st.fixed_dictionaries({"value": st.sampled_from(["80Gi", "1", "0"])}),
    st.fixed_dictionaries({"value": st.just("10"), "requestPolicy": st.fixed_dictionaries(
        {"default": st.just("1"), "validValues": st.just(["1", "2"])})}),
)
# The optional parts of a device, valid and not, a few at a time on an otherwise plain device.
_PARTS = [("allowMultipleAllocations", True), ("allowMultipleAllocations", False),
          ("taints", []), ("taints", [{"key": "k", "effect": "NoSchedule"}]), ("taints", [{"key": "", "effect": "x"}]),
          ("consumesCounters", []), ("consumesCounters", [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]),
          ("consumesCounters", [{"counterSet": "", "counters": {}}]),
          ("nodeName", ""), ("nodeName", "node-1"), ("allNodes", True), ("allNodes", False),
          ("nodeSelector", {"nodeSelectorTerms": [{"matchFields": [
              {"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}),
          ("bindsToNode", True), ("bindingConditions", []), ("bindingConditions", ["ready"]), ("bindingConditions", ["a", "b", "c", "d", "e"]),
          ("bindingFailureConditions", []), ("bindingFailureConditions", ["failed"]), ("bindingFailureConditions", ["not valid!"]),
          ("nodeAllocatableResourceMappings", {}), ("nodeAllocatableResourceMappings", {"cpu": {"capacityKey": "x"}}),
          ("nodeAllocatableResources", {}), ("nodeAllocatableResources", {"cpu": {}})]
_DEVICE = st.builds(
    lambda base, parts: {**base, **dict(parts)},
    st.fixed_dictionaries({"name": st.sampled_from(["gpu-0", "gpu-1", "GPU_0", "a.b", "", "x" * 64])},
                          optional={"attributes": st.dictionaries(_KEYS, _SCALARS, max_size=4),
                                    "capacity": st.dictionaries(_KEYS, _CAPACITY, max_size=2)}),
    st.lists(st.sampled_from(_PARTS), max_size=2))


def _slice(devices: list[dict[str, Any]], per_device_node_selection: bool = False) -> Any:
    spec: dict[str, Any] = {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1,
                                                                  "resourceSliceCount": 1}, "devices": devices}
    if per_device_node_selection:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = "node-1"
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                   "spec": spec})


def _without_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device_rules, "plain_new_devices", lambda devices: False)
    monkeypatch.setattr(device_rules, "_plain_device", lambda d: False)
    monkeypatch.setattr(device_rules, "_plain_attribute", lambda a: False)
    monkeypatch.setattr(device_rules, "_plain_attributes", lambda attributes: False)
    monkeypatch.setattr(device_rules, "_no_request_policy", lambda c: False)
    monkeypatch.setattr(lists, "_GOOD_KEYS", {})
    monkeypatch.setattr(lists, "_keys_good", lambda key_fn, keys: False)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(_DEVICE, max_size=3), st.booleans())
def test_fast_paths_answer_as_the_full_checks(devices: list[dict[str, Any]], per_device: bool) -> None:
    obj = _slice(devices, per_device)
    fast = [str(e) for e in validate(obj)]
    with pytest.MonkeyPatch.context() as patch:
        _without_fast_paths(patch)
        full = [str(e) for e in validate(obj)]
    assert fast == full


def _same_answers(devices: list[dict[str, Any]], per_device: bool) -> bool:
    obj = _slice(devices, per_device)
    fast = [str(e) for e in validate(obj)]
    with pytest.MonkeyPatch.context() as patch:
        _without_fast_paths(patch)
        return fast == [str(e) for e in validate(obj)]


@pytest.mark.parametrize("per_device", [False, True])
def test_every_optional_part_and_pair_of_parts_answers_as_the_full_checks(per_device: bool) -> None:
    base = {"name": "gpu-0", "attributes": {"model": {"string": "h100"}, "index": {"int": 1}},
            "capacity": {"memory": {"value": "80Gi"}}}
    differ = [(a, b) for i, a in enumerate(_PARTS) for b in _PARTS[i:]
              if not _same_answers([{**base, **dict([a, b])}], per_device)]
    assert differ == []


def test_a_key_found_bad_is_reported_after_good_ones() -> None:
    good = [{"name": "gpu-0", "attributes": {"model": {"string": "h100"}}}]
    assert validate(_slice(good)) == []
    bad = [{"name": "gpu-0", "attributes": {"model": {"string": "h100"}, "bad key": {"int": 1}}}]
    assert [e.field for e in validate(_slice(bad))] == ["spec.devices[0].attributes"]


def test_a_single_value_that_is_too_long_or_not_semver_is_not_plain() -> None:
    devices = [{"name": "gpu-0", "attributes": {"s": {"string": "é" * 40}, "v": {"version": "1.2"}}}]
    assert [e.field for e in validate(_slice(devices))] == ["spec.devices[0].attributes[s].string",
                                                           "spec.devices[0].attributes[v].version"]


# --- every attribute type, capacity policy and name, valid and not ------------------------------------------
# Values at and past the length limits (64 bytes; 16 characters of 4 bytes
# each), versions that are not semver or too long, several values at once, list values, none.
_LONG_VALUES = ["x" * 64, "x" * 65, "é" * 32, "é" * 33, "😀" * 16, "😀" * 17, "a" * 16 + "😀" * 12]
_VERSIONS = ["1.2.3", "560.35.3", "1.2", "01.2.3", "1.0.0-rc.1+build.5", "1.2.3-" + "a" * 58, "1.2.3-" + "a" * 59,
             "", "v1.2.3"]
_ANY_SCALAR = st.one_of(
    st.fixed_dictionaries({"int": st.integers(-2**63, 2**63 - 1)}),
    st.fixed_dictionaries({"bool": st.booleans()}),
    st.fixed_dictionaries({"string": st.one_of(st.sampled_from(["", "h100"] + _LONG_VALUES),
                                               st.text(max_size=20))}),
    st.fixed_dictionaries({"version": st.sampled_from(_VERSIONS)}),
)
_ANY_LIST = st.one_of(
    st.fixed_dictionaries({"ints": st.lists(st.integers(0, 3), max_size=2)}),
    st.fixed_dictionaries({"bools": st.lists(st.booleans(), max_size=2)}),
    st.fixed_dictionaries({"strings": st.lists(st.sampled_from(["a"] + _LONG_VALUES), max_size=2)}),
    st.fixed_dictionaries({"versions": st.lists(st.sampled_from(_VERSIONS), max_size=2)}),
)
_ANY_ATTRIBUTE = st.one_of(
    _ANY_SCALAR, _ANY_SCALAR, _ANY_SCALAR, _ANY_LIST, st.just({}),
    st.builds(lambda a, b: {**a, **b}, _ANY_SCALAR, st.one_of(_ANY_SCALAR, _ANY_LIST)),  # (two values)
)
# Good and bad qualified names: long domains and identifiers (63 and 32 characters are the limits), slashes.
_ANY_KEY = st.one_of(
    st.sampled_from(["model", "index", "driverVersion", "gpu.example.com/uuid", "a" * 32, "a" * 33,
                     "d" * 63 + "/x", "d" * 64 + "/x", "example.com/" + "n" * 32, "example.com/" + "n" * 33,
                     "bad key", "x/y/z", "/empty", "ok/", "Upper_Case", "9starts", "Ex.com/x", "-a.com/x"]),
    st.text(alphabet="abZ_9./-", min_size=1, max_size=12),
)
# Around the limit of 32 attributes and capacities together, every one of them good.
_GOOD_KEY = st.from_regex(r"(example\.com/)?[a-z][a-z0-9_]{0,6}", fullmatch=True)
_MANY_GOOD_ATTRIBUTES = st.dictionaries(_GOOD_KEY, st.one_of(st.just({"int": 1}), st.just({"string": "s"})),
                                        min_size=26, max_size=34)
_POLICY = st.one_of(
    st.fixed_dictionaries({"default": st.just("1"), "validValues": st.just(["1", "2"])}),
    st.fixed_dictionaries({"default": st.just("4"), "validRange": st.just({"min": "2", "max": "8", "step": "2"})}),
    st.fixed_dictionaries({"validValues": st.just(["3", "1"])}),
    st.just({}),
)
_ANY_CAPACITY = st.one_of(
    st.fixed_dictionaries({"value": st.sampled_from(["80Gi", "1", "0", "10"])}),
    st.fixed_dictionaries({"value": st.just("10"), "requestPolicy": _POLICY}),
)
_ANY_DEVICE = st.builds(
    lambda base, parts: {**base, **dict(parts)},
    st.fixed_dictionaries(
        {"name": st.sampled_from(["gpu-0", "gpu-1", "gpu-2", "GPU_0", "a.b", "", "x" * 63, "x" * 64])},
        optional={"attributes": st.one_of(st.dictionaries(_ANY_KEY, _ANY_ATTRIBUTE, max_size=5),
                                          _MANY_GOOD_ATTRIBUTES),
                  "capacity": st.one_of(st.dictionaries(_ANY_KEY, _ANY_CAPACITY, max_size=6),
                                        st.dictionaries(_GOOD_KEY, st.just({"value": "1"}), max_size=6))}),
    st.lists(st.sampled_from(_PARTS), max_size=2))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(_ANY_DEVICE, max_size=4), st.booleans())
def test_every_attribute_type_capacity_and_name_answers_as_the_full_checks(
        devices: list[dict[str, Any]], per_device: bool) -> None:
    assert _same_answers(devices, per_device)
