"""apps/v1, batch/v1 and scheduling.k8s.io/v1 kinds and the scheduling parts of Pod decode through the codec."""

from __future__ import annotations

import pytest

from dralloc.api import apps_v1, batch_v1, codec, core_v1, scheduling_v1
from dralloc.api.strict import unknown_fields
from dralloc.validation import validate

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [{"name": "c", "image": "nginx",
                        "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP", "hostIP": "10.0.0.1"}],
                        "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu", "request": "r"}]}}],
        "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                     "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}],
            },
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone"}]},
        },
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "priority": 1000, "priorityClassName": "high", "preemptionPolicy": "Never",
        "overhead": {"cpu": "250m"}, "hostNetwork": True, "restartPolicy": "Always",
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
    },
}

WORKLOADS = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
     "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
     "status": {"collisionCount": 1}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
     "spec": {"replicas": 2, "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
              "template": TEMPLATE}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
     "spec": {"replicas": 2, "serviceName": "db", "ordinals": {"start": 5}, "podManagementPolicy": "Parallel",
              "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
     "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
     "spec": {"parallelism": 2, "completions": 4, "completionMode": "Indexed",  # (a Job's pods never restart)
              "template": {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
     "value": 1000, "globalDefault": False, "description": "important", "preemptionPolicy": "Never"},
]


@pytest.mark.parametrize("data", WORKLOADS, ids=lambda d: d["kind"])
def test_workload_kinds_round_trip_through_the_codec_and_validate(data) -> None:
    obj = codec.decode(data)
    assert codec.to_dict(obj) == data
    assert validate(obj) == []


def test_the_pod_template_is_typed_down_to_node_affinity_and_ports() -> None:
    deployment = codec.decode(WORKLOADS[0])
    assert isinstance(deployment, apps_v1.Deployment)
    spec = deployment.spec.template.spec
    assert isinstance(spec, core_v1.PodSpec)
    required = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required.node_selector_terms[0].match_fields[0].values == ["n1"]
    preferred = spec.affinity.node_affinity.preferred_during_scheduling_ignored_during_execution
    assert preferred[0].weight == 10 and preferred[0].preference.match_expressions[0].operator == "Exists"
    assert spec.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution[0].topology_key == "zone"
    port = spec.containers[0].ports[0]
    assert (port.container_port, port.host_port, port.protocol, port.host_ip) == (80, 8080, "TCP", "10.0.0.1")
    assert spec.init_containers[0].restart_policy == "Always"
    assert spec.preemption_policy == "Never" and spec.priority == 1000
    assert deployment.status.collision_count == 1


def test_typed_lists_of_workloads_load_item_by_item(tmp_path) -> None:
    import json

    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"apiVersion": "batch/v1", "kind": "JobList",
                                "items": [{k: v for k, v in WORKLOADS[4].items() if k not in ("apiVersion", "kind")}]}))
    [job] = codec.load(path)
    assert isinstance(job, batch_v1.Job) and job.spec.completion_mode == "Indexed"


def test_priority_class_fields_are_checked_strictly_and_pods_against_their_whole_upstream_schema() -> None:
    assert unknown_fields({**WORKLOADS[5], "valeu": 1}) == ['unknown field "valeu"']
    container = {"name": "c", "image": "x", "imagePullPolicy": "Always",
                 "livenessProbe": {"httpGet": {"port": 80, "path": "/"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [container], "dnsPolicy": "None", "volumes": [{"name": "v", "emptyDir": {}}]}}
    assert unknown_fields(pod) == []  # fields dralloc's models lack are still fields
    container["livenessProbe"] = {"httpGet": {"port": 80, "pth": "/"}}
    pod["spec"]["volumes"] = [{"name": "v", "emptyDir": {}, "hostpath": {"path": "/"}}]
    assert unknown_fields(pod) == ['unknown field "spec.containers[0].livenessProbe.httpGet.pth"',
                                   'unknown field "spec.volumes[0].hostpath"']
    template = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicey": "Never"}}
    job = {**WORKLOADS[4], "spec": {**WORKLOADS[4]["spec"], "template": template}}
    assert unknown_fields(job) == ['unknown field "spec.template.spec.restartPolicey"']


def test_pod_status_carries_what_preemption_and_claims_need() -> None:
    pod = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u",
                                          "controller": True}]},
        "spec": {"containers": []},
        "status": {"phase": "Running", "startTime": "2026-11-01T00:00:00Z", "nominatedNodeName": "n",
                   "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None}],
                   "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x2k4q"}]}})
    assert pod.status.start_time == "2026-11-01T00:00:00Z" and pod.status.conditions[0].type == "PodScheduled"
    assert pod.metadata.owner_references[0].controller is True
    assert isinstance(scheduling_v1.PriorityClass(value=5).value, int)


def test_typos_in_workloads_and_pod_metadata_are_unknown_fields() -> None:
    deployment = {**WORKLOADS[0], "spec": {**WORKLOADS[0]["spec"], "replica": 3}}
    assert unknown_fields(deployment) == ['unknown field "spec.replica"']
    job = {**WORKLOADS[4], "metadata": {"name": "train", "lables": {}}}
    assert unknown_fields(job) == ['unknown field "metadata.lables"']
    template = {**TEMPLATE, "metadata": {"labels": {}, "annotation": {}}}
    sts = {**WORKLOADS[2], "spec": {**WORKLOADS[2]["spec"], "template": template}}
    assert unknown_fields(sts) == ['unknown field "spec.template.metadata.annotation"']
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}, "stauts": {}}
    assert unknown_fields(pod) == ['unknown field "stauts"']
