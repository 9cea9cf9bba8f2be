"""One case per kube-apiserver rule: a valid object, one change, and the exact error it must produce."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dralloc.api.codec import decode
from dralloc.validation import validate, validate_status_update, validate_update

LABEL_RE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
            "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN_RE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
REF = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


# Upstream's own "CEL-cost" case: seven nested comprehensions over ten-element lists.
HOSTILE = ("".join(
    f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, " for v in ("x", "y", "z", "z2", "z3", "z4", "z5"))
    + "int('1'.find('[0-9]*')) < 100" + ")" * 7)


def slice_(**spec: Any) -> dict[str, Any]:
    base = {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "node-1",
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
                         "capacity": {"memory": {"value": "40Gi"}}}]}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": base}


def claim(requests: list[Any] | None = None, **devices: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"requests": requests if requests is not None else
                         [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}
    d.update(devices)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": d}}


def device(**fields: Any) -> dict[str, Any]:
    return {"name": "gpu-0", **fields}


def exact(**fields: Any) -> list[Any]:
    return [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", **fields}}]


def errors_of(data: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(decode(data))]


CASES: list[tuple[str, dict[str, Any], str]] = [
    # --- ResourceSlice spec
    ("driver required", slice_(driver=""), "spec.driver: Required value"),
    ("driver too long", slice_(driver="a" * 64), "spec.driver: Too long: may not be more than 63 bytes"),
    ("driver format", slice_(driver="gpu_example"), f'spec.driver: Invalid value: "gpu_example": {SUBDOMAIN_RE}'),
    ("pool name required", slice_(pool={"name": "", "resourceSliceCount": 1}), "spec.pool.name: Required value"),
    ("pool name parts", slice_(pool={"name": "a/B", "resourceSliceCount": 1}),
     f'spec.pool.name: Invalid value: "B": {SUBDOMAIN_RE}'),
    ("pool name too long", slice_(pool={"name": "a" * 254, "resourceSliceCount": 1}),
     "spec.pool.name: Too long: may not be more than 253 bytes"),
    ("slice count", slice_(pool={"name": "p", "resourceSliceCount": 0}),
     "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    ("generation", slice_(pool={"name": "p", "generation": -1, "resourceSliceCount": 1}),
     "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero"),
    ("no node selection", slice_(nodeName=None),
     "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
    ("two node selections", slice_(allNodes=True),
     'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
     "`perDeviceNodeSelection` is required, but multiple fields are set"),
    ("empty nodeName", slice_(nodeName="", allNodes=True),
     'spec.nodeName: Invalid value: "": must be either unset or set to a non-empty string'),
    ("allNodes false", slice_(nodeName=None, allNodes=False),
     "spec.allNodes: Invalid value: false: must be either unset or set to true"),
    ("perDeviceNodeSelection false", slice_(perDeviceNodeSelection=False),
     "spec.perDeviceNodeSelection: Invalid value: false: must be either unset or set to true"),
    ("nodeName format", slice_(nodeName="Node_1"), f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN_RE}'),
    ("node selector two terms", slice_(nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "b", "operator": "Exists"}]}]}),
     'spec.nodeSelector.nodeSelectorTerms: Invalid value: [{"matchExpressions":[{"key":"a","operator":"Exists"}]},'
     '{"matchExpressions":[{"key":"b","operator":"Exists"}]}]: must have exactly one node selector term'),
    ("node selector operator", slice_(nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Near"}]}]}),
     'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": '
     "not a valid selector operator"),
    ("node selector In without values", slice_(nodeName=None, nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "In"}]}]}),
     "spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'"),
    ("node selector no terms", slice_(nodeName=None, nodeSelector={"nodeSelectorTerms": []}),
     "spec.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term"),
    ("devices and counters", slice_(sharedCounters=[{"name": "s", "counters": {"c": {"value": "1"}}}]),
     'spec: Invalid value: "": only one of `sharedCounters` or `devices` is allowed'),
    ("129 devices", slice_(devices=[device(name=f"d{i}") for i in range(129)]),
     "spec.devices: Too many: 129: must have at most 128 items"),
    ("65 devices with taints", slice_(devices=[device(name=f"d{i}", taints=[{"key": "k", "effect": "NoSchedule"}])
                                               for i in range(65)]),
     "spec.devices: Too many: 65: must have at most 64 items"),
    ("65 devices with counters", slice_(devices=[device(name=f"d{i}", consumesCounters=[
        {"counterSet": "s", "counters": {"c": {"value": "1"}}}]) for i in range(65)]),
     "spec.devices: Too many: 65: must have at most 64 items"),
    ("65 devices with list attributes", slice_(devices=[device(name=f"d{i}", attributes={"l": {"ints": [1]}})
                                                        for i in range(65)]),
     "spec.devices: Too many: 65: must have at most 64 items"),
    ("duplicate device", slice_(devices=[device(), device()]), 'spec.devices[1]: Duplicate value: "gpu-0"'),
    ("device name", slice_(devices=[device(name="GPU_0")]), f'spec.devices[0].name: Invalid value: "GPU_0": {LABEL_RE}'),
    ("device name with dots", slice_(devices=[device(name="gpu.0")]),
     'spec.devices[0].name: Invalid value: "gpu.0": must not contain dots'),
    ("33 attributes and capacities", slice_(devices=[device(
        attributes={f"a{i}": {"int": i} for i in range(20)},
        capacity={f"c{i}": {"value": "1"} for i in range(13)})]),
     "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"),
    ("49 attribute values", slice_(devices=[device(attributes={"l": {"ints": list(range(49))}})]),
     "spec.devices[0]: Invalid value: 49: the total number of attribute values must not exceed 48"),
    ("attribute name", slice_(devices=[device(attributes={"1bad": {"int": 1}})]),
     'spec.devices[0].attributes: Invalid value: "1bad": a valid C identifier must start with alphabetic character '
     "or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', "
     "regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"),
    ("attribute id too long", slice_(devices=[device(attributes={"a" * 33: {"int": 1}})]),
     "spec.devices[0].attributes: Too long: may not be more than 32 bytes"),
    ("attribute two slashes", slice_(devices=[device(attributes={"a/b/c": {"int": 1}})]),
     'spec.devices[0].attributes: Invalid value: "a/b/c": must not contain more than one slash'),
    ("attribute empty domain", slice_(devices=[device(attributes={"/b": {"int": 1}})]),
     'spec.devices[0].attributes: Invalid value: "": the domain must not be empty'),
    ("attribute no value", slice_(devices=[device(attributes={"a": {}})]),
     'spec.devices[0].attributes[a]: Invalid value: "": exactly one value must be specified'),
    ("attribute two values", slice_(devices=[device(attributes={"a": {"int": 1, "bool": True}})]),
     'spec.devices[0].attributes[a]: Invalid value: {"int":1,"bool":true}: exactly one value must be specified'),
    ("string too long", slice_(devices=[device(attributes={"a": {"string": "x" * 65}})]),
     "spec.devices[0].attributes[a].string: Too long: may not be more than 64 bytes"),
    ("strings item too long", slice_(devices=[device(attributes={"a": {"strings": ["x" * 65]}})]),
     "spec.devices[0].attributes[a].strings[0]: Too long: may not be more than 64 bytes"),
    ("empty list attribute", slice_(devices=[device(attributes={"a": {"ints": []}})]),
     "spec.devices[0].attributes[a].ints: Invalid value: []: must not be empty if specified"),
    ("version not semver", slice_(devices=[device(attributes={"v": {"version": "1.2"}})]),
     'spec.devices[0].attributes[v].version: Invalid value: "1.2": must be a string compatible with semver.org spec 2.0.0'),
    ("versions item", slice_(devices=[device(attributes={"v": {"versions": ["1.0.0", "v1"]}})]),
     'spec.devices[0].attributes[v].versions[1]: Invalid value: "v1": must be a string compatible with semver.org spec 2.0.0'),
    ("request policy without multi", slice_(devices=[device(capacity={"bw": {"value": "10G", "requestPolicy": {
        "default": "1G"}}})]),
     "spec.devices[0].capacity[bw].requestPolicy: Forbidden: allowMultipleAllocations must be true"),
    ("values and range", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {"value": "10", "requestPolicy": {
        "default": "1", "validValues": ["1"], "validRange": {"min": "1"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy: Forbidden: exactly one policy can be specified, cannot specify '
     '"validValues" and "validRange" at the same time'),
    ("validValues default required", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"validValues": ["1"]}}})]),
     "spec.devices[0].capacity[bw].requestPolicy.default: Required value: required when validValues is defined"),
    ("validValues unsorted", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validValues": ["2", "1"]}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validValues[1]: Invalid value: "1": values must be sorted in ascending order'),
    ("validValues above capacity", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validValues": ["1", "20"]}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validValues[1]: Invalid value: "20": option is larger than capacity value: 10'),
    ("validValues duplicate", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validValues": ["1", "1"]}}})]),
     "spec.devices[0].capacity[bw].requestPolicy.validValues[1]: Duplicate value: \"1\""),
    ("validValues 11 options", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "100", "requestPolicy": {"default": "1", "validValues": [str(i) for i in range(1, 12)]}}})]),
     "spec.devices[0].capacity[bw].requestPolicy.validValues: Too many: 11: must have at most 10 items"),
    ("validValues default missing", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "3", "validValues": ["1", "2"]}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validValues: Invalid value: "3": default value is not valid according to the requestPolicy'),
    ("range min required", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validRange": {"max": "5"}}}})]),
     "spec.devices[0].capacity[bw].requestPolicy.validRange.min: Required value: required when validRange is defined"),
    ("range min above capacity", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "20", "validRange": {"min": "20"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.min: Invalid value: "20": min is larger than capacity value: 10'),
    ("range default below min", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validRange": {"min": "2"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.default: Invalid value: "1": default is less than min: 2'),
    ("range max above capacity", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "2", "validRange": {"min": "2", "max": "20"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.max: Invalid value: "20": max is larger than capacity value: 10'),
    ("range min above max", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "5", "validRange": {"min": "5", "max": "4"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.max: Invalid value: "5": min is larger than max: 4'),
    ("range default above max", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "6", "validRange": {"min": "1", "max": "4"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.default: Invalid value: "6": default is more than max: 4'),
    ("range step zero", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "1", "validRange": {"min": "1", "step": "0"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.step: Invalid value: "0": must be greater than zero'),
    ("range one step above capacity", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "10", "requestPolicy": {"default": "8", "validRange": {"min": "8", "step": "4"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.step: Invalid value: "4": one step 12 is larger than capacity value: 10'),
    ("range default off step", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "100", "requestPolicy": {"default": "5", "validRange": {"min": "2", "step": "2"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.step: Invalid value: "5": value is not a multiple of a given step (2) from (2)'),
    ("range max off step", slice_(devices=[device(allowMultipleAllocations=True, capacity={"bw": {
        "value": "100", "requestPolicy": {"default": "4", "validRange": {"min": "2", "max": "9", "step": "2"}}}})]),
     'spec.devices[0].capacity[bw].requestPolicy.validRange.step: Invalid value: "9": value is not a multiple of a given step (2) from (2)'),
    ("17 taints", slice_(devices=[device(taints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(17)])]),
     "spec.devices[0].taints: Too many: 17: must have at most 16 items"),
    ("taint effect required", slice_(devices=[device(taints=[{"key": "k"}])]),
     "spec.devices[0].taints[0].effect: Required value"),
    ("taint effect unsupported", slice_(devices=[device(taints=[{"key": "k", "effect": "PreferNoSchedule"}])]),
     'spec.devices[0].taints[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'),
    ("taint key", slice_(devices=[device(taints=[{"key": "", "effect": "None"}])]),
     'spec.devices[0].taints[0].key: Invalid value: "": name part must be non-empty'),
    ("taint value", slice_(devices=[device(taints=[{"key": "k", "value": "a b", "effect": "None"}])]),
     "spec.devices[0].taints[0].value: Invalid value: \"a b\": a valid label must be an empty string or consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ("3 counter consumptions", slice_(devices=[device(consumesCounters=[
        {"counterSet": f"s{i}", "counters": {"c": {"value": "1"}}} for i in range(3)])]),
     "spec.devices[0].consumesCounters: Too many: 3: must have at most 2 items"),
    ("duplicate counter set consumption", slice_(devices=[device(consumesCounters=[
        {"counterSet": "s", "counters": {"c": {"value": "1"}}}, {"counterSet": "s", "counters": {"c": {"value": "1"}}}])]),
     'spec.devices[0].consumesCounters[1]: Duplicate value: "s"'),
    ("consumption counters required", slice_(devices=[device(consumesCounters=[{"counterSet": "s"}])]),
     "spec.devices[0].consumesCounters[0].counters: Required value"),
    ("consumption counter set required", slice_(devices=[device(consumesCounters=[{"counters": {"c": {"value": "1"}}}])]),
     "spec.devices[0].consumesCounters[0].counterSet: Required value"),
    ("33 consumed counters", slice_(devices=[device(consumesCounters=[
        {"counterSet": "s", "counters": {f"c{i}": {"value": "1"}for i in range(33)}}])]),
     "spec.devices[0].consumesCounters[0].counters: Too many: 33: must have at most 32 items"),
    ("9 counter sets", slice_(devices=None, sharedCounters=[{"name": f"s{i}", "counters": {"c": {"value": "1"}}}
                                                          for i in range(9)]),
     "spec.sharedCounters: Too many: 9: must have at most 8 items"),
    ("counter set name", slice_(devices=None, sharedCounters=[{"name": "S", "counters": {"c": {"value": "1"}}}]),
     f'spec.sharedCounters[0].name: Invalid value: "S": {LABEL_RE}'),
    ("counter set empty", slice_(devices=None, sharedCounters=[{"name": "s"}]),
     "spec.sharedCounters[0].counters: Required value"),
    ("counter name", slice_(devices=None, sharedCounters=[{"name": "s", "counters": {"memorySlice": {"value": "1"}}}]),
     f'spec.sharedCounters[0].counters: Invalid value: "memorySlice": {LABEL_RE}'),
    ("33 counters", slice_(devices=None, sharedCounters=[{"name": "s", "counters": {f"c{i}": {"value": "1"}
                                                                                    for i in range(33)}}]),
     "spec.sharedCounters[0].counters: Too many: 33: must have at most 32 items"),
    ("duplicate counter set", slice_(devices=None, sharedCounters=[{"name": "s", "counters": {"c": {"value": "1"}}}] * 2),
     'spec.sharedCounters[1]: Duplicate value: "s"'),
    ("per-device fields without perDeviceNodeSelection", slice_(devices=[device(nodeName="node-1")]),
     "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
     "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    ("per-device node selection missing", slice_(nodeName=None, perDeviceNodeSelection=True, devices=[device()]),
     "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
     "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    ("per-device node selection twice", slice_(nodeName=None, perDeviceNodeSelection=True,
                                               devices=[device(nodeName="n", allNodes=True)]),
     'spec.devices[0]: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, or '
     "`allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"),
    ("per-device empty nodeName", slice_(nodeName=None, perDeviceNodeSelection=True, devices=[device(nodeName="")]),
     'spec.devices[0].nodeName: Invalid value: "": must not be empty'),
    ("5 binding conditions", slice_(devices=[device(bindingConditions=list("abcde"), bindingFailureConditions=["f"])]),
     "spec.devices[0].bindingConditions: Too many: 5: must have at most 4 items"),
    ("duplicate binding condition", slice_(devices=[device(bindingConditions=["a", "a"], bindingFailureConditions=["f"])]),
     'spec.devices[0].bindingConditions[1]: Duplicate value: "a"'),
    ("overlapping binding conditions", slice_(devices=[device(bindingConditions=["a"], bindingFailureConditions=["a"])]),
     'spec.devices[0].bindingFailureConditions[0]: Invalid value: "a": bindingFailureConditions must not overlap with bindingConditions'),
    ("failure conditions alone", slice_(devices=[device(bindingFailureConditions=["f"])]),
     "spec.devices[0].bindingConditions: Invalid value: null: bindingConditions are required to use bindingFailureConditions"),
    ("conditions alone", slice_(devices=[device(bindingConditions=["a"])]),
     "spec.devices[0].bindingFailureConditions: Invalid value: null: bindingFailureConditions are required to use bindingConditions"),
    ("binding condition format", slice_(devices=[device(bindingConditions=["a b"], bindingFailureConditions=["f"])]),
     "spec.devices[0].bindingConditions[0]: Invalid value: \"a b\": name part must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
     "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ("node allocatable name", slice_(devices=[device(nodeAllocatableResourceMappings={"nvidia.com/gpu": {}})]),
     'spec.devices[0].nodeAllocatableResourceMappings[nvidia.com/gpu]: Invalid value: "nvidia.com/gpu": must be a node allocatable resource name'),
    ("node allocatable capacity key", slice_(devices=[device(nodeAllocatableResourceMappings={"cpu": {"capacityKey": "cores"}})]),
     'spec.devices[0].nodeAllocatableResourceMappings[cpu].capacityKey: Not found: "cores"'),
    ("node allocatable multiplier", slice_(devices=[device(nodeAllocatableResourceMappings={"memory": {"allocationMultiplier": "0"}})]),
     'spec.devices[0].nodeAllocatableResourceMappings[memory].allocationMultiplier: Invalid value: "0": must be positive'),
    ("node allocatable 1.37 empty", slice_(devices=[device(nodeAllocatableResources={"cpu": {}})]),
     "spec.devices[0].nodeAllocatableResources[cpu]: Required value: at least one of mapping or overhead must be set"),
    ("node allocatable 1.37 multiplier required", slice_(devices=[device(nodeAllocatableResources={"memory": {"mapping": {"capacityKey": "memory"}}})]),
     "spec.devices[0].nodeAllocatableResources[memory].mapping.capacityMultiplier: Required value: capacityMultiplier is required when capacityKey is set"),
    ("node allocatable 1.37 overhead", slice_(devices=[device(nodeAllocatableResources={"memory": {"overhead": {"perPod": "-1"}}})]),
     'spec.devices[0].nodeAllocatableResources[memory].overhead.perPod: Invalid value: "-1": must be non-negative'),
    ("skipNodeOperations pairing", slice_(skipNodeOperations=["NodePrepareResources"]),
     'spec.skipNodeOperations: Invalid value: ["NodePrepareResources"]: NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped'),
    ("metadata name", {**slice_(), "metadata": {"name": "Bad_Name"}},
     f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_RE}'),
    ("metadata name required", {**slice_(), "metadata": {}},
     "metadata.name: Required value: name or generateName is required"),
    ("namespace on cluster object", {**slice_(), "metadata": {"name": "s", "namespace": "default"}},
     "metadata.namespace: Forbidden: not allowed on this type"),
    ("managedFields operation", {**slice_(), "metadata": {"name": "s", "managedFields": [{"manager": "m",
                                                                                      "operation": "Patch"}]}},
     'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`'),
    ("managedFields manager", {**slice_(), "metadata": {"name": "s", "managedFields": [{"manager": "é" * 65,
                                                                                    "operation": "Apply"}]}},
     "metadata.managedFields[0].manager: Too long: may not be more than 128 bytes"),
    ("label value", {**slice_(), "metadata": {"name": "s", "labels": {"a": "b c"}}},
     "metadata.labels: Invalid value: \"b c\": a valid label must be an empty string or consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
     "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    # --- ResourceClaim
    ("33 requests", claim([{"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(33)]),
     "spec.devices.requests: Too many: 33: must have at most 32 items"),
    ("duplicate request", claim(exact() + exact()), 'spec.devices.requests[1]: Duplicate value: "gpu"'),
    ("request name", claim([{"name": "GPU", "exactly": {"deviceClassName": "c"}}]),
     f'spec.devices.requests[0].name: Invalid value: "GPU": {LABEL_RE}'),
    ("neither exactly nor firstAvailable", claim([{"name": "gpu"}]),
     "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"),
    ("both exactly and firstAvailable", claim([{"name": "gpu", "exactly": {"deviceClassName": "c"},
                                                "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}]),
     "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"),
    ("class required", claim([{"name": "gpu", "exactly": {"deviceClassName": ""}}]),
     "spec.devices.requests[0].exactly.deviceClassName: Required value"),
    ("class name format", claim([{"name": "gpu", "exactly": {"deviceClassName": "GPU"}}]),
     f'spec.devices.requests[0].exactly.deviceClassName: Invalid value: "GPU": {SUBDOMAIN_RE}'),
    ("count with All", claim(exact(allocationMode="All", count=2)),
     "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"),
    ("negative count", claim(exact(count=-1)),
     "spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"),
    ("unknown mode", claim(exact(allocationMode="Some")),
     'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"'),
    ("33 selectors", claim(exact(selectors=[{"cel": {"expression": "true"}}] * 33)),
     "spec.devices.requests[0].exactly.selectors: Too many: 33: must have at most 32 items"),
    ("selector cel required", claim(exact(selectors=[{}])),
     "spec.devices.requests[0].exactly.selectors[0].cel: Required value"),
    ("selector too long", claim(exact(selectors=[{"cel": {"expression": "true" + " " * 10240}}])),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"),
    ("selector not bool", claim(exact(selectors=[{"cel": {"expression": "device.driver"}}])),
     'spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "device.driver": '
     "must evaluate to bool or the unknown type, not string"),
    ("selector too complex", claim(exact(selectors=[{"cel": {"expression": HOSTILE}}])),
     "spec.devices.requests[0].exactly.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"),
    ("toleration Exists with value", claim(exact(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])),
     'spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "v": must be empty for operator `Exists`'),
    ("toleration operator", claim(exact(tolerations=[{"key": "k", "operator": "Gt"}])),
     'spec.devices.requests[0].exactly.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", "Exists"'),
    ("toleration effect", claim(exact(tolerations=[{"key": "k", "effect": "PreferNoSchedule"}])),
     'spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'),
    ("9 subrequests", claim([{"name": "gpu", "firstAvailable": [{"name": f"s{i}", "deviceClassName": "c"}
                                                               for i in range(9)]}]),
     "spec.devices.requests[0].firstAvailable: Too many: 9: must have at most 8 items"),
    ("duplicate subrequest", claim([{"name": "gpu", "firstAvailable": [{"name": "s", "deviceClassName": "c"}] * 2}]),
     'spec.devices.requests[0].firstAvailable[1]: Duplicate value: "s"'),
    ("subrequest class", claim([{"name": "gpu", "firstAvailable": [{"name": "s"}]}]),
     "spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value"),
    ("capacity request key", claim(exact(capacity={"requests": {"a/b/c": "1"}})),
     'spec.devices.requests[0].exactly.capacity.requests: Invalid value: "a/b/c": must not contain more than one slash'),
    ("constraint unknown request", claim(constraints=[{"requests": ["nic"], "matchAttribute": "d.io/numa"}]),
     f'spec.devices.constraints[0].requests[0]: Invalid value: "nic": {REF}'),
    ("constraint unknown subrequest", claim([{"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}],
                                            constraints=[{"requests": ["gpu/b"], "matchAttribute": "d.io/numa"}]),
     f'spec.devices.constraints[0].requests[0]: Invalid value: "gpu/b": {REF}'),
    ("constraint duplicate request", claim(constraints=[{"requests": ["gpu", "gpu"], "matchAttribute": "d.io/numa"}]),
     'spec.devices.constraints[0].requests[1]: Duplicate value: "gpu"'),
    ("constraint reference with two slashes", claim(constraints=[{"requests": ["a/b/c"], "matchAttribute": "d.io/n"}]),
     f'spec.devices.constraints[0].requests[0]: Invalid value: "a/b/c": {REF}'),
    ("constraint needs an attribute", claim(constraints=[{"requests": ["gpu"]}]),
     'spec.devices.constraints[0]: Required value: exactly one of "matchAttribute" or "distinctAttribute" is '
     "required, but multiple fields are set"),
    ("matchAttribute not qualified", claim(constraints=[{"matchAttribute": "numa"}]),
     'spec.devices.constraints[0].matchAttribute: Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash'),
    ("distinctAttribute not qualified", claim(constraints=[{"distinctAttribute": "numa"}]),
     'spec.devices.constraints[0].distinctAttribute: Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash'),
    ("33 constraints", claim(constraints=[{"matchAttribute": "d.io/n"}] * 33),
     "spec.devices.constraints: Too many: 33: must have at most 32 items"),
    ("config opaque required", claim(config=[{"requests": ["gpu"]}]), "spec.devices.config[0].opaque: Required value"),
    ("config unknown request", claim(config=[{"requests": ["x"], "opaque": {"driver": "d.io", "parameters": {}}}]),
     f'spec.devices.config[0].requests[0]: Invalid value: "x": {REF}'),
    ("config parameters required", claim(config=[{"opaque": {"driver": "d.io"}}]),
     "spec.devices.config[0].opaque.parameters: Required value"),
    ("config parameters object", claim(config=[{"opaque": {"driver": "d.io", "parameters": "x"}}]),
     'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object'),
    ("config parameters size", claim(config=[{"opaque": {"driver": "d.io", "parameters": {"a": "x" * 10240}}}]),
     "spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"),
    ("config driver", claim(config=[{"opaque": {"driver": "", "parameters": {}}}]),
     "spec.devices.config[0].opaque.driver: Required value"),
    ("33 configs", claim(config=[{"opaque": {"driver": "d.io", "parameters": {}}}] * 33),
     "spec.devices.config: Too many: 33: must have at most 32 items"),
]


@pytest.mark.parametrize("data,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(data: dict[str, Any], expected: str) -> None:
    errors = errors_of(data)
    assert expected in errors, "\n".join(errors)


def test_valid_bases_have_no_errors() -> None:
    assert errors_of(slice_()) == []
    assert errors_of(claim()) == []


def test_all_errors_of_an_object_are_collected() -> None:
    data = slice_(driver="", pool={"name": "", "resourceSliceCount": 0}, devices=[device(name="A"), device(name="A")])
    errors = errors_of(data)
    assert len(errors) >= 5
    assert "spec.driver: Required value" in errors
    assert "spec.pool.name: Required value" in errors


def test_a_request_may_have_more_tolerations_than_the_documented_16() -> None:
    # kube-apiserver 1.36 has no rule for the count; only each toleration is validated
    assert errors_of(claim(exact(tolerations=[{"operator": "Exists"}] * 17))) == []


def test_a_malformed_quantity_in_a_map_names_the_map_key() -> None:
    from dralloc.errors import DecodeError

    data = slice_(devices=[{"name": "gpu-0", "capacity": {"cores": {"value": "8"}, "memory": {"value": "80Gx"}}}])
    with pytest.raises(DecodeError, match=r"spec\.devices\[0\]\.capacity\[memory\]\.value: "):
        decode(data)
    counters = slice_(devices=None, sharedCounters=[{"name": "set", "counters": {"mem": {"value": "1Q"}}}])
    with pytest.raises(DecodeError, match=r"spec\.sharedCounters\[0\]\.counters\[mem\]\.value: "):
        decode(counters)
    request = claim(exact(capacity={"requests": {"memory": "1x"}}))
    with pytest.raises(DecodeError, match=r"capacity\.requests\[memory\]: "):
        decode(request)


def test_a_selector_is_judged_by_the_same_checker_as_the_allocator() -> None:
    errors = errors_of(claim(exact(selectors=[{"cel": {"expression": "1 == 1.0"}}])))
    assert errors == ['spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "1 == 1.0": '
                      "compilation failed: ERROR: <input>:1:3: found no matching overload for '_==_' applied to "
                      "'(int, double)'\n | 1 == 1.0\n | ..^"]
    errors = errors_of(claim(exact(selectors=[{"cel": {"expression": 'int("x") == 1'}}])))
    assert errors == ["spec.devices.requests[0].exactly.selectors[0].cel.expression: Internal error: "
                      "program instantiation failed: type conversion error from 'string' to 'int'"]


def test_defaulting_happens_before_validation() -> None:
    # count 0 and no allocationMode default to ExactCount/1, as kube-apiserver defaults before validating.
    assert errors_of(claim(exact(count=0))) == []


# --- other kinds ----------------------------------------------------------------------------------

def device_class(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
            "spec": spec}


@pytest.mark.parametrize("spec,expected", [
    ({"selectors": [{"cel": {"expression": "true"}}] * 33}, "spec.selectors: Too many: 33: must have at most 32 items"),
    ({"selectors": [{"cel": {"expression": "device.driver =="}}]},
     "spec.selectors[0].cel.expression: Invalid value: \"device.driver ==\": compilation failed: ERROR: <input>:1:17: "
     "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
     "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^"),
    ({"config": [{}]}, "spec.config[0].opaque: Required value"),
    ({"config": [{"opaque": {"driver": "d.io", "parameters": {}}}] * 33}, "spec.config: Too many: 33: must have at most 32 items"),
    ({"extendedResourceName": "example.com/gpu x"}, 'spec.extendedResourceName: Invalid value: "example.com/gpu x": must be a valid extended resource name'),
    ({"extendedResourceName": "kubernetes.io/gpu"}, 'spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must be a valid extended resource name'),
])
def test_device_class_rule(spec: dict[str, Any], expected: str) -> None:
    assert expected in errors_of(device_class(**spec))


def test_device_class_extended_resource_name_ok() -> None:
    assert errors_of(device_class(extendedResourceName="example.com/gpu")) == []


def test_template_paths_and_metadata() -> None:
    data = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"metadata": {"labels": {"a": "b c"}},
                     "spec": {"devices": {"requests": [{"name": "gpu"}]}}}}
    errors = errors_of(data)
    assert "spec.spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required" in errors
    assert any(e.startswith('spec.metadata.labels: Invalid value: "b c"') for e in errors)


def test_device_taint_rule() -> None:
    data = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
            "spec": {"deviceSelector": {"driver": "Bad_Driver", "device": "GPU"}, "taint": {"key": "k"}}}
    errors = errors_of(data)
    assert "spec.taint.effect: Required value" in errors
    assert f'spec.deviceSelector.device: Invalid value: "GPU": {LABEL_RE}' in errors
    assert any(e.startswith('spec.deviceSelector.driver: Invalid value: "Bad_Driver"') for e in errors)


# --- updates --------------------------------------------------------------------------------------

def test_slice_immutable_fields() -> None:
    old = decode(slice_())
    new = decode(slice_(driver="other.example.com", nodeName="node-2",
                        pool={"name": "other", "resourceSliceCount": 1}))
    errors = [str(e) for e in validate_update(new, old)]
    assert 'spec.driver: Invalid value: "other.example.com": field is immutable' in errors
    assert 'spec.nodeName: Invalid value: "node-2": field is immutable' in errors
    assert 'spec.pool.name: Invalid value: "other": field is immutable' in errors


def test_slice_unchanged_capacity_is_not_revalidated() -> None:
    bad = slice_(devices=[device(capacity={"bw": {"value": "10", "requestPolicy": {"default": "1"}}})])
    old = decode(bad)
    assert [str(e) for e in validate_update(decode(bad), old)] == []
    assert validate(decode(bad))


def test_claim_spec_is_immutable() -> None:
    old = decode(claim())
    new = decode(claim(exact(count=2)))
    errors = [str(e) for e in validate_update(new, old)]
    assert len(errors) == 1 and errors[0].startswith("spec: Invalid value: {") and errors[0].endswith("field is immutable")


def test_device_class_unchanged_selector_is_stored() -> None:
    bad = device_class(selectors=[{"cel": {"expression": "device.driver"}}])
    assert validate(decode(bad))
    assert validate_update(decode(bad), decode(bad)) == []


def test_name_is_immutable() -> None:
    old = decode(slice_())
    new = decode({**slice_(), "metadata": {"name": "t"}})
    assert 'metadata.name: Invalid value: "t": field is immutable' in [str(e) for e in validate_update(new, old)]


# --- claim status ---------------------------------------------------------------------------------

def allocated(**status: Any) -> Any:
    data = claim()
    data["status"] = status
    return decode(data)


RESULT = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}


def status_errors(**status: Any) -> list[str]:
    return [str(e) for e in validate_status_update(allocated(**status), decode(claim()))]


def test_status_allocation_is_valid() -> None:
    assert status_errors(allocation={"devices": {"results": [RESULT]}}) == []


@pytest.mark.parametrize("status,expected", [
    ({"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]},
     "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
    ({"allocation": {"devices": {"results": [RESULT]}}, "reservedFor": [{"resource": "pods", "name": "p"}]},
     "status.reservedFor[0].uid: Required value"),
    ({"allocation": {"devices": {"results": [RESULT]}}, "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}] * 2},
     'status.reservedFor[1]: Duplicate value: "1"'),
    ({"allocation": {"devices": {"results": [{**RESULT, "request": "nic"}]}}},
     f'status.allocation.devices.results[0].request: Invalid value: "nic": {REF}'),
    ({"allocation": {"devices": {"results": [{**RESULT, "shareID": "ABC"}]}}},
     'status.allocation.devices.results[0].shareID: Invalid value: "ABC": error validating uid: invalid UUID length: 3'),
    ({"allocation": {"devices": {"results": [{**RESULT, "shareID": "A0000000-0000-0000-0000-000000000000"}]}}},
     'status.allocation.devices.results[0].shareID: Invalid value: "A0000000-0000-0000-0000-000000000000": uid must be '
     "in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"),
    ({"allocation": {"devices": {"results": [RESULT] * 33}}},
     "status.allocation.devices.results: Too many: 33: must have at most 32 items"),
    ({"allocation": {"devices": {"results": [RESULT], "config": [{"source": "FromSomewhere", "opaque": {
        "driver": "d.io", "parameters": {}}}]}}},
     'status.allocation.devices.config[0].source: Unsupported value: "FromSomewhere": supported values: "FromClaim", "FromClass"'),
    ({"allocation": {"devices": {"results": [RESULT]}}, "devices": [{"driver": "gpu.example.com", "pool": "node-1",
                                                                    "device": "gpu-9"}]},
     'status.devices[0]: Invalid value: "gpu.example.com/node-1/gpu-9": must be an allocated device in the claim'),
    ({"allocation": {"devices": {"results": [RESULT]}}, "devices": [{**{k: RESULT[k] for k in ("driver", "pool", "device")},
                                                                    "conditions": [{"type": "Ready", "status": "Maybe"}]}]},
     'status.devices[0].conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
    ({"allocation": {"devices": {"results": [RESULT]}}, "devices": [{**{k: RESULT[k] for k in ("driver", "pool", "device")},
                                                                    "networkData": {"ips": ["10.0.0.1"]}}]},
     'status.devices[0].networkData.ips[0]: Invalid value: "10.0.0.1": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)'),
])
def test_status_rule(status: dict[str, Any], expected: str) -> None:
    assert expected in status_errors(**status)


def test_allocation_cannot_change_once_set() -> None:
    old = allocated(allocation={"devices": {"results": [RESULT]}})
    new = allocated(allocation={"devices": {"results": [{**RESULT, "device": "gpu-1"}]}})
    errors = [str(e) for e in validate_status_update(new, old)]
    assert len(errors) == 1 and errors[0].startswith("status.allocation: Invalid value:")
    assert errors[0].endswith("field is immutable")
    cleared = decode(claim())
    assert validate_status_update(cleared, old) == []


def test_reserved_for_cannot_grow_while_deleting() -> None:
    ref = {"resource": "pods", "name": "p", "uid": "1"}
    old_data = claim()
    old_data["status"] = {"allocation": {"devices": {"results": [RESULT]}}, "reservedFor": [ref]}
    new_data = copy.deepcopy(old_data)
    new_data["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new_data["status"]["reservedFor"].append({**ref, "uid": "2"})
    errors = [str(e) for e in validate_status_update(decode(new_data), decode(old_data))]
    assert ("status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
            "`deletionTimestamp` are set") in errors
