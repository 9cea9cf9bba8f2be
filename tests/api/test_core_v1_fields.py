"""The core/v1 field table (strict decoding of Pods, Nodes, Namespaces and Events) is the schema of the
Kubernetes OpenAPI document, as lightkube-models carries it."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from dralloc.api import core_v1_fields

pytest.importorskip("lightkube.models.core_v1")

import typing  # noqa: E402

from generate_core_v1_fields import _fields, _models, _strip_optional, go_types, named_types, render, table  # noqa: E402

_GO_SCALARS = {"string", "bool", "int32", "int64", "resource.Quantity", "intstr.IntOrString", "v1.Time",
               "v1.MicroTime", "v1.FieldsV1", "runtime.RawExtension", "uint8"}


def test_the_committed_table_is_what_the_generator_finds_in_the_installed_models() -> None:
    regenerate = (f"lightkube-models {version('lightkube-models')} differs from the table: regenerate it with "
                  f"tests/api/generate_core_v1_fields.py")
    assert core_v1_fields.FIELDS == table(), regenerate
    assert core_v1_fields.GO_TYPES == go_types(), regenerate
    assert core_v1_fields.NAMED == named_types(), regenerate


def test_the_committed_table_is_formatted_as_the_generator_writes_it() -> None:
    committed = Path(core_v1_fields.__file__).read_text()
    assert committed.split('"""', 2)[2] == render(core_v1_fields.FIELDS, core_v1_fields.GO_TYPES,
                                                  core_v1_fields.NAMED).split('"""', 2)[2]


def _element_types(go_type: str) -> list[str]:
    """The Go types a type's values are made of: itself, or a list's items, or a map's keys and values."""
    if go_type in core_v1_fields.NAMED:
        return [go_type, *_element_types(core_v1_fields.NAMED[go_type])]
    if go_type.startswith("[]"):
        return _element_types(go_type[2:])
    if go_type.startswith("map["):
        key, value = go_type[4:].split("]", 1)
        return [*_element_types(key), *_element_types(value)]
    return [go_type]


def test_every_int_and_map_field_has_its_go_width_and_value_type() -> None:
    """lightkube says ``int`` and ``dict``; Go's decoder refuses by int32 / int64 and by a map's value type."""
    for name, model in _models().items():
        hints = typing.get_type_hints(model)
        for field in _fields(model):
            go_type = core_v1_fields.GO_TYPES[name][field]
            hint = _strip_optional(hints[field])
            if hint in (int, list[int], typing.List[int]):  # noqa: UP006 (lightkube's spelling)
                assert go_type.removeprefix("[]") in ("int32", "int64"), (name, field, go_type)
            if (hint is dict or typing.get_origin(hint) is dict) and go_type not in ("v1.FieldsV1", "runtime.RawExtension"):
                underlying = core_v1_fields.NAMED.get(go_type, go_type)
                assert underlying.startswith("map[") and "]" in underlying, (name, field, go_type)


def test_every_go_type_is_a_struct_of_the_table_a_known_scalar_or_a_named_type() -> None:
    for name, members in core_v1_fields.GO_TYPES.items():
        assert members.keys() == core_v1_fields.FIELDS[name].keys()
        for field, go_type in members.items():
            for element in _element_types(go_type):
                assert (element in _GO_SCALARS or element in core_v1_fields.NAMED
                        or element.removeprefix("v1.") in core_v1_fields.FIELDS), (name, field, element)


def test_go_types_agree_with_the_tables_kinds_of_value() -> None:
    """A field the table says holds objects of type T is a Go T (or a list or map of them)."""
    for name, members in core_v1_fields.FIELDS.items():
        for field, ref in members.items():
            go_type = core_v1_fields.GO_TYPES[name][field]
            if ref == "@time":
                assert go_type in ("v1.Time", "v1.MicroTime")
            elif ref.startswith("["):
                assert go_type == "[]v1." + ref[1:-1]
            elif ref.startswith("{"):
                assert go_type.startswith("map[") and go_type.endswith("]v1." + ref[1:-1])
            elif ref:
                assert go_type == "v1." + ref


def test_the_table_knows_every_field_dralloc_writes_on_pods_and_nodes() -> None:
    fields = core_v1_fields.FIELDS
    assert {"resourceClaimStatuses", "extendedResourceClaimStatus", "nominatedNodeName"} <= fields["PodStatus"].keys()
    assert {"resourceClaims", "schedulingGates", "resources"} <= fields["PodSpec"].keys()
    assert fields["PodSpec"]["containers"] == "[Container]" and fields["Pod"]["metadata"] == "ObjectMeta"
    assert fields["NodeStatus"]["allocatable"] == ""  # a map of quantities is a value
    go_types = core_v1_fields.GO_TYPES
    assert go_types["NodeStatus"]["allocatable"] == "v1.ResourceList"
    assert core_v1_fields.NAMED["v1.ResourceList"] == "map[v1.ResourceName]resource.Quantity"
    assert (go_types["ContainerPort"]["containerPort"], go_types["PodSpec"]["activeDeadlineSeconds"]) == (
        "int32", "int64")
    assert go_types["Secret"]["data"] == go_types["ConfigMap"]["binaryData"] == "map[string][]uint8"
    assert go_types["ContainerPort"]["protocol"] == "v1.Protocol"
