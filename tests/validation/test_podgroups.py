"""kube-apiserver's rules for scheduling.k8s.io/v1alpha2 Workload and PodGroup, each with the field path and
text it reports; decoding both kinds (and a pod's spec.schedulingGroup) from a dump."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dralloc.api.codec import decode, to_dict
from dralloc.api.core_v1 import Pod
from dralloc.api.scheduling_v1alpha2 import PodGroup, Workload
from dralloc.validation import validate, validate_update
from dralloc.validation.podgroups import validate_pod_group

GROUP: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
    "metadata": {"name": "train-0", "namespace": "default"},
    "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
             "schedulingPolicy": {"gang": {"minCount": 8}},
             "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]},
             "resourceClaims": [{"name": "fabric", "resourceClaimTemplateName": "fabric"}]}}
WORKLOAD: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
    "metadata": {"name": "train", "namespace": "default"},
    "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
             "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}}}]}}


def errors(doc: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(decode(doc))]


def changed(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    *parents, last = path.split(".")
    target: Any = out
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is None:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out


def test_both_kinds_decode_and_round_trip() -> None:
    group = decode(GROUP)
    assert isinstance(group, PodGroup)
    assert group.min_count == 8 and group.topology_key == "example.com/rack"
    assert to_dict(group) == GROUP
    workload = decode(WORKLOAD)
    assert isinstance(workload, Workload) and workload.spec.pod_group_templates[0].name == "workers"
    assert errors(GROUP) == [] and errors(WORKLOAD) == []


def test_a_pod_names_its_group_in_spec_scheduling_group() -> None:
    pod = decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                  "spec": {"schedulingGroup": {"podGroupName": "train-0"}, "containers": [{"name": "c"}]}})
    assert isinstance(pod, Pod) and pod.spec.scheduling_group is not None
    assert pod.spec.scheduling_group.pod_group_name == "train-0"


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("spec.schedulingPolicy", {}, 'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'),
    ("spec.schedulingPolicy", {"basic": {}, "gang": {"minCount": 1}},
     'spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, '
     'but multiple fields are set'),
    ("spec.schedulingPolicy.gang.minCount", 0, "spec.schedulingPolicy.gang.minCount: Required value"),
    ("spec.schedulingPolicy.gang.minCount", -2,
     "spec.schedulingPolicy.gang.minCount: Invalid value: -2: must be greater than zero"),
    ("spec.schedulingConstraints.topology", [{"key": "a"}, {"key": "b"}],
     "spec.schedulingConstraints.topology: Too many: 2: must have at most 1 items"),
    ("spec.schedulingConstraints.topology", [{"key": ""}],
     "spec.schedulingConstraints.topology[0].key: Required value"),
    ("spec.podGroupTemplateRef.workload.workloadName", "", "spec.podGroupTemplateRef.workload.workloadName: "
                                                          "Required value"),
    ("spec.podGroupTemplateRef.workload.podGroupTemplateName", "Workers",
     'spec.podGroupTemplateRef.workload.podGroupTemplateName: Invalid value: "Workers": a lowercase RFC 1123 '
     "label must consist of lower case alphanumeric characters or '-', and must start and end with an "
     "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    ("spec.resourceClaims", [{"name": "x", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}],
     'spec.resourceClaims[0]: Invalid value: "{`resourceClaimName`, `resourceClaimTemplateName`}": exactly one '
     "of `resourceClaimName`, `resourceClaimTemplateName` is required, but multiple fields are set"),
    ("spec.resourceClaims", [{"name": "x", "resourceClaimName": "a"}] * 2,
     'spec.resourceClaims[1]: Duplicate value: "x"'),
    ("spec.resourceClaims", [{"name": f"c{i}", "resourceClaimName": "a"} for i in range(5)],
     "spec.resourceClaims: Too many: 5: must have at most 4 items"),
])
def test_pod_group_rules(path: str, value: Any, expected: str) -> None:
    assert expected in errors(changed(GROUP, path, value))


def test_a_gated_field_is_forbidden_while_its_gate_is_off() -> None:
    group = decode(GROUP)
    assert [str(e) for e in validate_pod_group(group, features={"DRAWorkloadResourceClaims"})] == [
        "spec.schedulingConstraints: Forbidden: disabled by feature-gate"]


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("spec.podGroupTemplates", [], "spec.podGroupTemplates: Required value: must have at least one item"),
    ("spec.podGroupTemplates", [{"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)],
     "spec.podGroupTemplates: Too many: 9: must have at most 8 items"),
    ("spec.podGroupTemplates", [{"name": "t", "schedulingPolicy": {"basic": {}}}] * 2,
     'spec.podGroupTemplates[1]: Duplicate value: "t"'),
    ("spec.podGroupTemplates.0.name", "", "spec.podGroupTemplates[0].name: Required value"),
    ("spec.controllerRef.kind", "", "spec.controllerRef.kind: Required value"),
    ("spec.controllerRef.name", "a/b", 'spec.controllerRef.name: Invalid value: "a/b": may not contain \'/\''),
])
def test_workload_rules(path: str, value: Any, expected: str) -> None:
    assert expected in errors(changed(WORKLOAD, path, value))


def test_a_pod_groups_spec_and_a_workloads_templates_never_change() -> None:
    old, new = decode(GROUP), decode(changed(GROUP, "spec.schedulingPolicy.gang.minCount", 4))
    assert [str(e) for e in validate_update(new, old)] == [
        'spec.schedulingPolicy: Invalid value: {"gang":{"minCount":4}}: field is immutable']
    old_w = decode(WORKLOAD)
    new_w = decode(changed(WORKLOAD, "spec.podGroupTemplates.0.name", "leaders"))
    assert any(str(e).startswith("spec.podGroupTemplates: Invalid value:") and "immutable" in str(e)
               for e in validate_update(new_w, old_w))


def test_a_pods_scheduling_group_names_a_pod_group() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c"}], "schedulingGroup": {"podGroupName": "Train_0"}}}
    assert any(e.startswith('spec.schedulingGroup.podGroupName: Invalid value: "Train_0": a lowercase RFC 1123 '
                            "subdomain") for e in errors(pod))
    assert errors(changed(pod, "spec.schedulingGroup", {})) == [
        'spec.schedulingGroup: Invalid value: "": must specify one of: `podGroupName`']
    assert errors(changed(pod, "spec.schedulingGroup.podGroupName", "train-0")) == []
