"""kube-apiserver's validation of a v1 CustomResourceDefinition: each rule with upstream's field path and text."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dralloc.api.apiextensions_v1 import decode
from dralloc.validation.crd import validate_crd, validate_crd_update


def crd(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    base["spec"].update(spec)
    return base


def messages(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_crd(decode(obj))]


def test_a_well_formed_crd_is_valid() -> None:
    assert messages(crd()) == []


def test_the_name_must_be_the_plural_dot_the_group() -> None:
    obj = crd()
    obj["metadata"]["name"] = "widget.example.com"
    assert messages(obj) == ['metadata.name: Invalid value: "widget.example.com": must be '
                             'spec.names.plural+"."+spec.group']


@pytest.mark.parametrize(("spec", "message"), [
    ({"group": ""}, "spec.group: Required value"),
    ({"group": "example"}, 'spec.group: Invalid value: "example": should be a domain with at least one dot'),
    ({"scope": ""}, "spec.scope: Required value"),
    ({"scope": "Global"}, 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'),
])
def test_group_and_scope(spec: dict[str, Any], message: str) -> None:
    obj = crd(**spec)
    obj["metadata"]["name"] = f"widgets.{obj['spec']['group']}"
    assert message in messages(obj)


def version(name: str, storage: bool, schema: Any = None) -> dict[str, Any]:
    return {"name": name, "served": True, "storage": storage,
            "schema": {"openAPIV3Schema": schema if schema is not None else {"type": "object"}}}


def test_exactly_one_storage_version() -> None:
    two = messages(crd(versions=[version("v1", True), version("v2", True)]))
    none = messages(crd(versions=[version("v1", False)]))
    for found in (two, none):
        assert [m for m in found if m.startswith("spec.versions:")] == [
            'spec.versions: Invalid value: ["v1"' + (',"v2"' if found is two else "") + ']: must have exactly one '
            'version marked as storage version']


def test_version_names_are_dns_1035_labels_and_unique() -> None:
    found = messages(crd(versions=[version("V1", True), version("V1", False)]))
    assert ('spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric '
            "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')") in found
    assert 'spec.versions: Invalid value: ["V1","V1"]: must contain unique version names' in found


def test_a_v1_crd_needs_a_schema_per_version() -> None:
    obj = crd()
    del obj["spec"]["versions"][0]["schema"]
    assert messages(obj) == ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]


@pytest.mark.parametrize(("schema", "message"), [
    ({"properties": {"spec": {"type": "object"}}}, "openAPIV3Schema.type: Required value: must not be empty at the root"),
    ({"type": "string"}, 'openAPIV3Schema.type: Invalid value: "string": must be object at the root'),
    ({"type": "object", "properties": {"spec": {"properties": {}}}},
     "openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
    ({"type": "object", "properties": {"xs": {"type": "array"}}},
     "openAPIV3Schema.properties[xs].items: Required value: must be specified"),
    ({"type": "object", "properties": {"xs": {"type": "array", "items": {}}}},
     "openAPIV3Schema.properties[xs].items.type: Required value: must not be empty for specified array items"),
    ({"type": "object", "properties": {"a": {"type": "thing"}}},
     'openAPIV3Schema.properties[a].type: Unsupported value: "thing": supported values: "array", "boolean", '
     '"integer", "number", "object", "string"'),
    ({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
     "openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, "
     "but metadata is implicitly specified"),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": False},
     "openAPIV3Schema.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-int-or-string": True}}},
     'openAPIV3Schema.properties[a].type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is '
     'true'),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}},
     "openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime "
     "complexity becomes quadratic"),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                             "additionalProperties": {"type": "string"}}}},
     "openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual "
     "exclusive"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"},
                                             "x-kubernetes-list-type": "map"}}},
     "openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if "
     "x-kubernetes-list-type is map"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"},
                                             "x-kubernetes-list-type": "bag"}}},
     'openAPIV3Schema.properties[a].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", '
     '"map", "set"'),
])
def test_a_schema_must_be_structural(schema: dict[str, Any], message: str) -> None:
    found = messages(crd(versions=[version("v1", True, schema)]))
    assert "spec.versions[0].schema." + message in found, found


@pytest.mark.parametrize(("names", "message"), [
    ({"plural": ""}, "spec.names.plural: Required value"),
    ({"kind": ""}, "spec.names.kind: Required value"),
    ({"listKind": "Widget"}, 'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'),
    ({"kind": "Wid_get"}, 'spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise '
                          "match: a DNS-1035 label"),
    ({"shortNames": ["w w"]}, 'spec.names.shortNames[0]: Invalid value: "w w": a DNS-1035 label'),
    ({"categories": ["All"]}, 'spec.names.categories[0]: Invalid value: "All": a DNS-1035 label'),
])
def test_names(names: dict[str, Any], message: str) -> None:
    obj = crd()
    obj["spec"]["names"].update(names)
    assert any(m.startswith(message) for m in messages(obj)), messages(obj)


@pytest.mark.parametrize(("column", "message"), [
    ({"name": "A", "type": "text", "jsonPath": ".spec.a"},
     'additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,string'),
    ({"name": "A", "type": "string", "jsonPath": ""}, "additionalPrinterColumns[0].jsonPath: Required value"),
    ({"name": "A", "type": "string", "format": "weird", "jsonPath": ".spec.a"},
     'additionalPrinterColumns[0].format: Invalid value: "weird": must be one of byte,date,date-time,double,float,'
     'int32,int64,password'),
])
def test_printer_columns(column: dict[str, Any], message: str) -> None:
    obj = crd()
    obj["spec"]["versions"][0]["additionalPrinterColumns"] = [column]
    assert "spec.versions[0]." + message in messages(obj)


def test_scale_paths() -> None:
    obj = crd()
    obj["spec"]["versions"][0]["subresources"] = {"scale": {"specReplicasPath": ".status.replicas",
                                                            "statusReplicasPath": ""}}
    found = messages(obj)
    assert 'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should start ' \
           "with .spec" in found
    assert "spec.versions[0].subresources.scale.statusReplicasPath: Required value" in found


def test_group_plural_scope_and_kind_cannot_change() -> None:
    old = decode(crd())
    changed = crd(group="other.example.com", scope="Cluster")
    changed["metadata"]["name"] = "widgets.other.example.com"
    changed["spec"]["names"]["kind"] = "Gadget"
    changed["spec"]["names"]["listKind"] = "GadgetList"
    changed["status"] = {"storedVersions": ["v1"]}
    found = [str(e) for e in validate_crd_update(decode(changed), old, established=True)]
    for path, value in (("spec.scope", "Cluster"), ("spec.names.kind", "Gadget"), ("spec.group", "other.example.com")):
        assert f'{path}: Invalid value: "{value}": field is immutable' in found
    unestablished = [str(e) for e in validate_crd_update(decode(changed), old, established=False)]
    assert not any(m.startswith("spec.scope") for m in unestablished)


def test_stored_versions_must_stay_in_spec_versions() -> None:
    new = crd(versions=[version("v2", True)])
    new["status"] = {"storedVersions": ["v1", "v2"]}
    found = [str(e) for e in validate_crd_update(decode(new), decode(copy.deepcopy(crd())), established=True)]
    assert 'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions' in found


@pytest.mark.parametrize(("annotations", "message"), [
    ({}, 'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
         'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111'),
    ({"api-approved.kubernetes.io": "yes please"},
     'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes please": protected groups must have '
     'approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", '
     'see https://github.com/kubernetes/enhancements/pull/1111'),
    ({"api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/2466"}, None),
    ({"api-approved.kubernetes.io": "unapproved, experimental-only"}, None),
])
def test_a_kubernetes_project_group_needs_the_api_approval_annotation(annotations: dict[str, str],
                                                                      message: str | None) -> None:
    obj = crd(group="gateway.networking.k8s.io")
    obj["metadata"] = {"name": "widgets.gateway.networking.k8s.io", "annotations": annotations}
    assert messages(obj) == ([message] if message else [])
    assert messages(crd()) == []  # other groups need none


def test_a_default_must_be_valid_against_its_own_schema() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": "one"},
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}}}}}
    assert messages(crd(versions=[version("v1", True, schema)])) == [
        'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: '
        '"string": spec.replicas in body must be of type integer: "string"']


def test_an_int_or_strings_any_of_integer_or_string_is_structural_as_controller_gen_writes_quantities() -> None:
    quantity = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True,
                "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))$"}
    in_all_of = {"allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+%?$"}],
                 "x-kubernetes-int-or-string": True}
    schema = {"type": "object", "properties": {"divisor": quantity, "maxSurge": in_all_of}}
    assert messages(crd(versions=[version("v1", True, schema)])) == []
    typed_any_of = {"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}
    assert messages(crd(versions=[version("v1", True, typed_any_of)])) == [
        "spec.versions[0].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for "
        "specified object fields",
        "spec.versions[0].schema.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be "
        "structural",
        "spec.versions[0].schema.openAPIV3Schema.properties[a].anyOf[1].type: Forbidden: must be empty to be "
        "structural"]
