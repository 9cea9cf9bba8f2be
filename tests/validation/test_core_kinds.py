"""kube-apiserver's rules for the core, apps and batch kinds a simulation reads (Node, Pod and the workloads),
each with a failing case and upstream's exact text; and `dralloc validate` / `dralloc simulate` refusing them."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralloc.api.codec import decode
from dralloc.validation import validate

NODE: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                        "status": {"capacity": {"cpu": "8", "pods": "110"}, "allocatable": {"cpu": "8"}}}
POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}},
             "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c"}]}}}}
JOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}}}}


def _errors(doc: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(decode(doc))]


def _with(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``base`` with the dotted ``path`` set (digits index lists)."""
    doc = copy.deepcopy(base)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return doc


def test_the_valid_bases_are_valid() -> None:
    for doc in (NODE, POD, DEPLOYMENT, JOB):
        assert _errors(doc) == []


@pytest.mark.parametrize("path,value,expected", [
    ("status.allocatable", {"cpu": "-4"},
     ['status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0']),
    ("status.capacity", {"memory": "-1Gi"},
     ['status.capacity.memory: Invalid value: "-1Gi": must be greater than or equal to 0']),
    ("status.capacity", {"pods": "1500m"}, ['status.capacity.pods: Invalid value: "1500m": must be an integer']),
    ("status.allocatable", {"example.com/gpu": "0.5"},
     ['status.allocatable.example.com/gpu: Invalid value: "500m": must be an integer']),
    ("spec.taints", [{"key": "k", "effect": "Sometimes"}],
     ['metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", '
      '"PreferNoSchedule", "NoExecute"']),
    ("spec.taints", [{"key": "k"}], ["metadata.taints[0].effect: Required value"]),
    ("spec.taints", [{"key": "bad key", "effect": "NoSchedule"}],
     ['metadata.taints[0].key: Invalid value: "bad key": name part must consist of alphanumeric characters, '
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("spec.taints", [{"key": "k", "value": "-x", "effect": "NoSchedule"}],
     ['metadata.taints[0].value: Invalid value: "-x": a valid label must be an empty string or consist of '
      "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
      "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ("spec.taints", [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}],
     ['metadata.taints[1]: Duplicate value: {"key":"k","value":"v","effect":"NoSchedule"}: taints must be unique '
      "by key and effect pair"]),
])
def test_node_rules(path: str, value: Any, expected: list[str]) -> None:
    assert _errors(_with(NODE, path, value)) == expected


RESOURCES = "spec.containers.0.resources"


@pytest.mark.parametrize("path,value,expected", [
    (RESOURCES, {"requests": {"cpu": "-1"}},
     ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0']),
    (RESOURCES, {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
     ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']),
    (RESOURCES, {"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}},
     ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2']),
    (RESOURCES, {"requests": {"example.com/gpu": "1"}},
     ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"]),
    (RESOURCES, {"limits": {"example.com/gpu": "1.5"}},
     ['spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "1500m": must be an integer']),
    (RESOURCES, {"requests": {"cpuu": "1"}},
     ['spec.containers[0].resources.requests[cpuu]: Invalid value: "cpuu": must be a standard resource type or '
      "fully qualified",
      'spec.containers[0].resources.requests[cpuu]: Invalid value: "cpuu": must be a standard resource for '
      "containers"]),
    (RESOURCES, {"requests": {"pods": "1"}},
     ['spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
      "containers"]),
    (RESOURCES, {"limits": {"hugepages-2Mi": "4Mi"}},
     ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]),
    ("spec.containers.0.name", "Bad_Name",
     ['spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case '
      "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
      "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
    ("spec.containers.0.name", "", ["spec.containers[0].name: Required value"]),
    ("spec.containers", [], ["spec.containers: Required value"]),
    ("spec.initContainers", [{"name": "c"}], ['spec.initContainers[0].name: Duplicate value: "c"']),
    ("spec.containers.0.restartPolicy", "Always",
     ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]),
    ("spec.restartPolicy", "Sometimes",
     ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']),
    ("spec.nodeSelector", {"zone": "-a"},
     ['spec.nodeSelector: Invalid value: "-a": a valid label must be an empty string or consist of alphanumeric '
      "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ("spec.nodeName", "Node_1",
     ['spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case '
      "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
      "'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ("spec.priorityClassName", "High",
     ['spec.priorityClassName: Invalid value: "High": a lowercase RFC 1123 subdomain must consist of lower case '
      "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
      "'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ("spec.preemptionPolicy", "Sometimes",
     ['spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"']),
    ("spec.overhead", {"cpu": "-100m"},
     ['spec.overhead.limits[cpu]: Invalid value: "-100m": must be greater than or equal to 0']),
    ("spec.schedulingGates", [{"name": "a/b"}, {"name": "a/b"}],
     ['spec.schedulingGates[1]: Duplicate value: "a/b"']),
    ("spec.schedulingGates", [{"name": "bad gate"}],
     ['spec.schedulingGates[0]: Invalid value: "bad gate": name part must consist of alphanumeric characters, '
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
])
def test_pod_spec_rules(path: str, value: Any, expected: list[str]) -> None:
    assert _errors(_with(POD, path, value)) == expected


@pytest.mark.parametrize("toleration,expected", [
    ({"operator": "Equal", "value": "v"},
     ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
      'means "match all values and all keys"']),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5},
     ["spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
      "`tolerationSeconds` is set"]),
    ({"key": "k", "operator": "Exists", "value": "v"},
     ["spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"]),
    ({"key": "k", "operator": "Above"},
     ['spec.tolerations[0].operator: Unsupported value: "Above": supported values: "Equal", "Exists"']),
    ({"key": "k", "operator": "Exists", "effect": "Always"},
     ['spec.tolerations[0].effect: Unsupported value: "Always": supported values: "NoSchedule", '
      '"PreferNoSchedule", "NoExecute"']),
    ({"key": "k", "value": "a b"},
     ['spec.tolerations[0].operator: Invalid value: "a b": a valid label must be an empty string or consist of '
      "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
      "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
])
def test_toleration_rules(toleration: dict[str, Any], expected: list[str]) -> None:
    assert _errors(_with(POD, "spec.tolerations", [toleration])) == expected


NODE_AFFINITY = "spec.affinity.nodeAffinity"


@pytest.mark.parametrize("path,value,expected", [
    (NODE_AFFINITY, {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required "
      "value: must have at least one node selector term"]),
    (NODE_AFFINITY, {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}},
     ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]'
      '.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator']),
    (NODE_AFFINITY, {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["-a"]}]}}]},
     ["spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
      "must be in the range 1-100"]),  # (a preferred term may hold a label value that is not valid)
    ("spec.affinity.podAntiAffinity", {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "a"}}}]},
     ["spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required "
      "value: can not be empty",
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid '
      'value: "": name part must be non-empty',
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid '
      "value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
      "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("spec.affinity.podAffinity", {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}]},
     ["spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: "
      "must be in the range 1-100"]),
])
def test_affinity_rules(path: str, value: Any, expected: list[str]) -> None:
    assert _errors(_with(POD, path, value)) == expected


@pytest.mark.parametrize("claims,refs,expected", [
    ([{"name": "gpu", "resourceClaimName": "c"}, {"name": "gpu", "resourceClaimName": "d"}], [],
     ['spec.resourceClaims[1].name: Duplicate value: "gpu"']),
    ([{"name": "gpu", "resourceClaimName": "c", "resourceClaimTemplateName": "t"}], [],
     ['spec.resourceClaims[0]: Invalid value: {"name":"gpu","resourceClaimName":"c","resourceClaimTemplateName":'
      '"t"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`']),
    ([{"name": "gpu", "resourceClaimName": "c"}], [{"name": "nic"}],
     ['spec.containers[0].resources.claims[0]: Not found: "nic": must be one of the names in '
      "pod.spec.resourceClaims: gpu"]),
    ([{"name": "gpu", "resourceClaimName": "c"}], [{"name": "gpu", "request": "a"}, {"name": "gpu"}],
     ['spec.containers[0].resources.claims[1]: Duplicate value: "gpu"']),
])
def test_resource_claim_rules(claims: list[Any], refs: list[Any], expected: list[str]) -> None:
    doc = _with(_with(POD, "spec.resourceClaims", claims), RESOURCES + ".claims", refs)
    assert _errors(doc) == expected


def test_a_claim_made_from_a_template_must_get_a_valid_name_from_the_pods() -> None:
    doc = _with(_with(POD, "metadata.name", "p" * 200), "spec.resourceClaims",
                [{"name": "g" * 60, "resourceClaimTemplateName": "t"}])
    assert _errors(doc) == [f'spec.resourceClaims[0].name: Invalid value: "{"p" * 200}-{"g" * 60}": final '
                            "ResourceClaim name: must be no more than 253 bytes"]
    doc["spec"]["resourceClaims"][0] = {"name": "g" * 60, "resourceClaimName": "c"}  # (named as it is)
    assert _errors(doc) == []


@pytest.mark.parametrize("path,value,expected", [
    ("spec.replicas", -1, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("spec.selector", None, ["spec.selector: Required value",
                             'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match '
                             "template `labels`"]),
    ("spec.selector", {}, ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]),
    ("spec.selector", {"matchLabels": {"app": "b"}},
     ['spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`']),
    ("spec.selector", {"matchExpressions": [{"key": "app", "operator": "Near"}]},
     ['spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
      'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Near"}]}: invalid label '
      "selector"]),
    ("spec.selector", {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
     ['spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`']),
    ("spec.template.spec.restartPolicy", "Never",
     ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']),
    ("spec.template.spec.containers.0.resources", {"requests": {"memory": "-1"}},
     ['spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or '
      "equal to 0"]),
    ("spec.template.metadata.labels", {"app": "a", "bad key": "x"},
     ['spec.template.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
])
def test_deployment_rules(path: str, value: Any, expected: list[str]) -> None:
    assert _errors(_with(DEPLOYMENT, path, value)) == expected


APPS_BAD_CONTAINER = "spec.template.spec.containers.0.name"


def _as(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    doc = {**doc, "kind": kind}
    if kind == "DaemonSet":
        doc["spec"] = {k: v for k, v in doc["spec"].items() if k != "replicas"}
    return doc


def test_a_replica_set_is_checked_as_a_deployment_is_even_its_empty_selector_text() -> None:
    assert _errors(_as("ReplicaSet", _with(DEPLOYMENT, "spec.selector", {}))) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"]
    assert [e.split(":")[0] for e in _errors(_as("ReplicaSet", _with(DEPLOYMENT, APPS_BAD_CONTAINER, "C")))] == [
        "spec.template.spec.containers[0].name"]


def test_a_stateful_set_checks_its_templates_labels_but_leaves_its_pod_spec_to_the_pods() -> None:
    doc = _as("StatefulSet", _with(DEPLOYMENT, "spec.selector", {}))
    assert _errors(doc) == ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"]
    assert _errors(_as("StatefulSet", _with(DEPLOYMENT, APPS_BAD_CONTAINER, "C"))) == []
    doc = _as("StatefulSet", _with(DEPLOYMENT, "spec.selector", {"matchExpressions": [{"key": "a", "operator": "X"}]}))
    assert _errors(doc) == [
        'spec.selector.matchExpressions[0].operator: Invalid value: "X": not a valid selector operator',
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"a","operator":"X"}]}']
    doc = _as("StatefulSet", _with(DEPLOYMENT, "metadata.name", "web.v1"))  # its pods' names are DNS labels
    assert [e.split(":")[0] for e in _errors(doc)] == ["metadata.name"]


def test_a_daemon_set_without_a_selector_selects_nothing_and_an_empty_one_is_refused() -> None:
    doc = _as("DaemonSet", _with(DEPLOYMENT, "spec.selector", None))
    del doc["spec"]["selector"]
    assert _errors(doc) == [
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`']
    assert _errors(_as("DaemonSet", _with(DEPLOYMENT, "spec.selector", {}))) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for daemonset"]
    assert [e.split(":")[0] for e in _errors(_as("DaemonSet", _with(DEPLOYMENT, APPS_BAD_CONTAINER, "C")))] == [
        "spec.template.spec.containers[0].name"]


@pytest.mark.parametrize("path,value,expected", [
    ("spec.parallelism", -1, ["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"]),
    ("spec.completions", -2, ["spec.completions: Invalid value: -2: must be greater than or equal to 0"]),
    ("spec.backoffLimit", -1, ["spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"]),
    ("spec.template.spec.restartPolicy", None,  # (defaulted to Always, which a Job does not take)
     ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']),
    ("spec.template.spec.restartPolicy", "Sometimes",  # (the pod spec's rule, then the Job's)
     ['spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", '
      '"Never"',
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"']),
    ("spec.template.spec.containers.0.resources", {"limits": {"cpu": "-1"}},
     ['spec.template.spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal '
      "to 0"]),
    ("spec.selector", {"matchLabels": {"job": "x"}},
     ["spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`"]),
])
def test_job_rules(path: str, value: Any, expected: list[str]) -> None:
    doc = _with(JOB, path, value)
    if value is None:
        del doc["spec"]["template"]["spec"]["restartPolicy"]
    assert _errors(doc) == expected


def _write(tmp_path: Path, *docs: dict[str, Any]) -> Path:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    return f


@pytest.mark.slow
@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_the_cli_refuses_a_node_with_negative_allocatable_with_its_field_path(tmp_path: Path, command: str) -> None:
    f = _write(tmp_path, _with(NODE, "status.allocatable", {"cpu": "-4"}), POD)
    proc = subprocess.run([sys.executable, "-m", "dralloc", command, "-f", str(f)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert 'Node/n1: status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0' in \
        proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_simulate_reports_every_invalid_object_of_the_input(tmp_path: Path) -> None:
    f = _write(tmp_path, NODE, _with(POD, RESOURCES, {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
               _with(DEPLOYMENT, "spec.replicas", -3))
    proc = subprocess.run([sys.executable, "-m", "dralloc", "simulate", "-f", str(f)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[1:] == [
        '  Pod/p: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu '
        "limit of 1",
        "  Deployment/d: spec.replicas: Invalid value: -3: must be greater than or equal to 0"]


def test_a_namespace_name_is_a_dns_label_and_its_finalizers_standard_or_qualified() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"},
                 "spec": {"finalizers": ["kubernetes", "example.com/keep"]}}
    assert _errors(namespace) == []
    assert _errors(_with(namespace, "spec.finalizers", ["keep"])) == [
        'spec.finalizers: Invalid value: "keep": name is neither a standard finalizer name nor is it fully qualified']
    assert [e.split(":")[0] for e in _errors(_with(namespace, "metadata.name", "team.a"))] == ["metadata.name"]


SPREAD = "spec.topologySpreadConstraints"
ZONE_SPREAD = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "a"}}}


@pytest.mark.parametrize("constraints,expected", [
    ([{**ZONE_SPREAD, "maxSkew": 0}],
     ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"]),
    ([{**ZONE_SPREAD, "topologyKey": ""}],
     ["spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"]),
    ([{**ZONE_SPREAD, "whenUnsatisfiable": "Sometimes"}],
     ['spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: '
      '"DoNotSchedule", "ScheduleAnyway"']),
    ([ZONE_SPREAD, {**ZONE_SPREAD, "maxSkew": 2}],
     ['spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, '
      'DoNotSchedule}"']),
    ([{**ZONE_SPREAD, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 0}],
     ["spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero",
      "spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: can only use minDomains if "
      "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"]),
    ([{**ZONE_SPREAD, "nodeTaintsPolicy": "Sometimes"}],
     ['spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Sometimes": supported values: '
      '"Honor", "Ignore"']),
    ([{**ZONE_SPREAD, "matchLabelKeys": ["app"]}],
     ['spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys '
      "and labelSelector"]),
    ([{**ZONE_SPREAD, "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}],
     ["spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values: Required value: must be "
      "specified when `operator` is 'In' or 'NotIn'"]),
])
def test_topology_spread_constraint_rules(constraints: list[Any], expected: list[str]) -> None:
    assert _errors(_with(POD, SPREAD, constraints)) == expected


def test_pod_affinity_terms_check_their_selectors_and_namespaces() -> None:
    term = {"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]},
            "namespaces": ["Team_A"]}
    errors = _errors(_with(POD, "spec.affinity.podAffinity", {"requiredDuringSchedulingIgnoredDuringExecution": [term]}))
    where = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert [e.split(": ")[0] for e in errors] == [f"{where}.labelSelector.matchExpressions[0].operator",
                                                  f"{where}.namespace"]
    assert errors[0].endswith('Invalid value: "Near": not a valid selector operator')
