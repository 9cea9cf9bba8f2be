"""The C walk of a create's managedFields (server/apply/_fastfields.c, through fieldsets.created_fields and
created_new): where it is built, the Python walk's tree for any object of any served kind's schema, keys in the
same order (the fieldsV1 JSON is stored as these dicts are written), and Python's errors; without it
(DRALLOC_PURE_PYTHON=1, or no compiler at install time) the Python walk answers alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.server.apply import fieldsets
from dralloc.server.apply.fieldsets import (
    created_fields,
    created_fields_python,
    created_new,
    created_new_python,
)
from dralloc.server.apply.fieldtypes import KINDS, kind_type, list_map, skeleton, struct
from dralloc.server.apply.managed_fields import _STRIPPED_TREE, _STRIPPED_TREES

needs_c = pytest.mark.skipif(fieldsets._fastfields is None, reason="the C walk is not built")

# Values shaped like the served kinds' objects: the schema's field names (so the walk meets its list maps,
# sets, atomic values and always-present structs) mixed with unknown names, every JSON type, duplicates.
_NAMES = sorted({"name", "containers", "ports", "env", "containerPort", "protocol", "metadata", "spec", "status",
                 "labels", "finalizers", "ownerReferences", "uid", "devices", "requests", "conditions", "type",
                 "volumes", "tolerations", "key", "nodeSelector", "resources", "limits", "x", "y", "\u00e9", "<&>",
                 "ip", "podIPs", "driver", "pool", "device", "reservedFor", "template", "webhooks", "clientConfig",
                 "rules", "selector", "matchLabels", "exactly", "deviceClassName"})
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.5, 2**63, -0.0]),
                     st.text(max_size=3), st.sampled_from(["TCP", "UDP", "a", "b", "<&>", "\u2028"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(_NAMES), inner, max_size=5)), max_leaves=25)
_objects = st.dictionaries(st.sampled_from(_NAMES), _values, max_size=6)
_nodes = st.sampled_from(sorted(KINDS)).map(lambda kind: KINDS[kind])


def _both(c: Any, python: Any) -> None:
    """The same outcome: the same tree written the same way, or the same exception type."""
    try:
        expected = json.dumps(python(), ensure_ascii=False)
    except Exception as exc:  # noqa: BLE001 - compared with the C walk's
        with pytest.raises(type(exc)):
            c()
        return
    assert json.dumps(c(), ensure_ascii=False) == expected


@needs_c
@settings(max_examples=200, deadline=None)
@given(_values, _nodes)
def test_a_new_value_owns_in_c_exactly_what_it_owns_in_python(value: Any, node: Any) -> None:
    _both(lambda: created_new(value, node), lambda: created_new_python(value, node))


@needs_c
@settings(max_examples=200, deadline=None)
@given(_objects, st.sampled_from(sorted(KINDS)), st.sampled_from([None, "f:spec", "f:status"]))
def test_a_create_records_in_c_exactly_what_it_records_in_python(obj: dict[str, Any], kind: str,
                                                                 ignored: str | None) -> None:
    node = kind_type(kind)
    before = skeleton(node)
    skip = _STRIPPED_TREE if ignored is None else _STRIPPED_TREES[ignored]
    _both(lambda: created_fields(obj, node, before, skip), lambda: created_fields_python(obj, node, before, skip))


@needs_c
def test_the_c_walk_keeps_pythons_rules_at_each_corner() -> None:
    always = struct(("spec",), spec=struct(("devices",)), items=list_map("name", "port", no_default=("port",)))
    cases: list[dict[str, Any]] = [
        {},  # nothing: nothing owned
        {"spec": {}},  # the always-present struct left empty: owned by nobody
        {"spec": {"devices": {}}},  # ... all the way down
        {"spec": {"devices": {"a": 1}}},  # a field below it: owned without "." on the way
        {"items": [{"name": "a"}, {"name": "a"}]},  # a duplicated item: owned, nothing below
        {"items": [{"name": "b", "port": 2}, {"name": "a", "x": {"y": None}}]},  # sorted by key, nested new struct
        {"items": [{"port": 1}, "not an object"]},  # an item without keys: the list owned whole
        {"items": []},
        {"u": {"v": [1, 2], "w": {}}},  # undeclared: a struct, its lists atomic
    ]
    skip = MappingProxyType({"f:x": True})
    for obj in cases:
        _both(lambda obj=obj: created_fields(obj, always, skeleton(always), skip),
              lambda obj=obj: created_fields_python(obj, always, skeleton(always), skip))


@needs_c
def test_a_deep_value_is_a_python_recursion_error_not_a_crash() -> None:
    value: Any = {}
    for _ in range(100_000):
        value = {"a": value}
    with pytest.raises(RecursionError):
        created_new(value, kind_type("Pod"))


def test_without_the_extension_the_python_walk_answers() -> None:
    code = ("from dralloc.server.apply import fieldsets as f; from dralloc.server.apply.fieldtypes import kind_type;"
            "assert f._fastfields is None and f.created_new is f.created_new_python;"
            "print(f.created_fields({'spec': {'containers': [{'name': 'c'}]}}, kind_type('Pod'), "
            "{'spec': {'containers': []}}, {}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "DRALLOC_PURE_PYTHON": "1"}).stdout
    assert out.strip() == "{'f:spec': {'f:containers': {'k:{\"name\":\"c\"}': {'.': {}, 'f:name': {}, 'f:resources': {}}}}}"


# Keyed lists whose keys the C walk writes itself (ints, plain strings) or hands to Python (escapes, non-ASCII,
# booleans, nulls, objects, a missing key), with duplicates and defaulted keys (a port's protocol).
_keys = st.sampled_from(["a", "b", "web", "x-1", "", "<a>", "\u00e9", 'q"', "b\\", "\x7f", "\t", 0, 1, 2**70, True,
                         None, 1.5, {"a": 1}])
_keyed_items = st.lists(st.one_of(
    st.fixed_dictionaries({}, optional={"name": _keys, "image": _keys, "env": st.lists(
        st.fixed_dictionaries({"name": _keys}, optional={"value": _keys}), max_size=3), "ports": st.lists(
        st.fixed_dictionaries({"containerPort": _keys}, optional={"protocol": _keys, "name": _keys}), max_size=3)}),
    _keys), max_size=4)
_keyed_pods = st.builds(lambda containers, finalizers, volumes: {
    "metadata": {"name": "p", "finalizers": finalizers},
    "spec": {"containers": containers, "volumes": volumes, "initContainers": containers}},
    _keyed_items, st.lists(_keys, max_size=4), _keyed_items)


@needs_c
@settings(max_examples=300, deadline=None)
@given(_keyed_pods)
def test_keyed_lists_are_keyed_and_ordered_in_c_exactly_as_in_python(obj: dict[str, Any]) -> None:
    node = kind_type("Pod")
    before = skeleton(node)
    _both(lambda: created_fields(obj, node, before, _STRIPPED_TREE),
          lambda: created_fields_python(obj, node, before, _STRIPPED_TREE))
    for name in ("containers", "volumes"):
        value, child = obj["spec"][name], node.child("spec").child(name)
        _both(partial(created_new, value, child), partial(created_new_python, value, child))
