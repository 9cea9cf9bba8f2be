"""A JSON body's unknown fields found through its kind's msgspec shape (the fast path of strict.body_problems)
are exactly those the walk of the decoded object finds: on every example object, and on the same objects with
an unknown key added, or a value of another JSON type put, at any place."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_places import places

from dralloc.api import codec, strict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_DOCUMENTS = [doc.data for path in sorted(EXAMPLES.rglob("*.yaml"))
              for doc in codec.read_documents(path) if isinstance(doc.data, dict) and doc.data.get("kind")]
# The resource.k8s.io objects again as v1beta2 writes them (v1's layout under another apiVersion).
_DOCUMENTS += [{**d, "apiVersion": "resource.k8s.io/v1beta2"} for d in _DOCUMENTS
               if d.get("apiVersion") == "resource.k8s.io/v1"]
# Other JSON types, put in place of a value: the shape refuses most of them, the walk reads past them.
_OTHER_VALUES: list[Any] = ["text", 7, None, [], [None], {}, {"zzz": 1}, [{"zzz": 1}]]



def _walked(data: dict[str, Any]) -> list[str]:
    """What the walk alone finds (the answer before the shapes)."""
    return strict.unknown_fields(data)


def _problems(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    raw = json.dumps(data).encode()
    return strict.body_problems(raw, decoded=json.loads(raw))


def test_the_examples_cover_the_served_kinds() -> None:
    kinds = {d["kind"] for d in _DOCUMENTS}
    assert {"ResourceSlice", "ResourceClaim", "DeviceClass", "Pod", "Node"} <= kinds


@pytest.mark.parametrize("data", _DOCUMENTS, ids=lambda d: f"{d['kind']}/{(d.get('metadata') or {}).get('name')}")
def test_each_example_has_the_walks_unknown_fields(data: dict[str, Any]) -> None:
    assert _problems(data) == ([], _walked(data))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_DOCUMENTS), st.data())
def test_a_changed_example_has_the_walks_unknown_fields(document: dict[str, Any], draw: st.DataObject) -> None:
    data = copy.deepcopy(document)
    # (kind and apiVersion stay: a body whose are not strings is refused before its fields are looked at)
    path = draw.draw(st.sampled_from([p for p in places(data)[1:] if p not in (("kind",), ("apiVersion",))]))
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if draw.draw(st.booleans()) and isinstance(parent[path[-1]], dict):
        parent[path[-1]]["zzzUnknown"] = draw.draw(st.sampled_from(_OTHER_VALUES))
    else:
        parent[path[-1]] = draw.draw(st.sampled_from(_OTHER_VALUES))
    assert _problems(data) == ([], _walked(data))


def test_a_shape_refuses_an_unknown_field_deep_down() -> None:
    slice_ = next(d for d in _DOCUMENTS if d["kind"] == "ResourceSlice" and d["spec"].get("devices"))
    data = copy.deepcopy(slice_)
    device = data["spec"]["devices"][-1]
    device.setdefault("capacity", {})["memory"] = {"value": "1Gi", "extra": True}
    raw = json.dumps(data).encode()
    assert not strict._decodes_into_shape(raw, data)
    assert strict._decodes_into_shape(json.dumps(slice_).encode(), slice_)
    index = len(data["spec"]["devices"]) - 1
    assert _problems(data)[1] == [f'unknown field "spec.devices[{index}].capacity[memory].extra"']


@pytest.mark.parametrize("version", ["v1", "v1beta2"])
def test_a_v1_or_v1beta2_slice_is_answered_by_its_shape_without_the_walk(version: str) -> None:
    slice_ = next(d for d in _DOCUMENTS if d["kind"] == "ResourceSlice" and d["spec"].get("devices"))
    data = {**slice_, "apiVersion": f"resource.k8s.io/{version}"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(strict, "_has_unknown", lambda value, node: pytest.fail("walked"))
        assert _problems(data) == ([], [])


def test_a_v1beta1_slice_is_walked() -> None:
    data = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "basic": {"attributes": {"a": {"int": 1, "zzz": 2}}}}]}}
    assert not strict._decodes_into_shape(json.dumps(data).encode(), data)
    assert _problems(data) == ([], _walked(data)) and _walked(data)
