"""Protobuf bodies of every writable built-in kind: the registry's guard (a writable kind without a protobuf
table fails it), each kind's body as a Go client writes it (field numbers from upstream's generated.proto,
written out here, not taken from the server's tables) read as its JSON, and creates through the server that
store what the same JSON create stores. A custom resource's protobuf body is refused as kube-apiserver refuses
it."""

from __future__ import annotations

import json
import struct
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from protobuf_readers import reader  # noqa: E402, F401 (each test: C reader, then Python)
from starlette.testclient import TestClient  # noqa: E402
from test_protobuf import PROTOBUF, entry, envelope, ld, meta, num, quantity, raw, time, varint  # noqa: E402

from dralloc.server.protobuf.decoder import ProtobufError, accepts, custom_resource_refusal, decode  # noqa: E402
from dralloc.server.registry import kinds  # noqa: E402

WRITES = ("create", "update")


def _writable() -> list[tuple[str, str]]:
    """(apiVersion, kind) of every resource the server writes with a body: the core group, every served group
    with every gate on, and the reviews."""
    every_gate = kinds.served_groups({kinds.pod_groups.SERVING_GATE})
    tables = [kinds.CORE, *every_gate.values(), kinds.REVIEWS]
    found = set()
    for table in tables:
        for r in table.values():
            if r.stored_as is not None or (r.verbs and not set(r.verbs) & set(WRITES)):
                continue  # (another view of a kind, or read-only)
            for version in r.versions:
                found.add((f"{r.group}/{version}" if r.group else version, r.kind))
    return sorted(found)


# writable kinds whose protobuf bodies are not read yet (each an expected failure, strict: it must go when read)
NOT_YET: set[tuple[str, str]] = set()


@pytest.mark.parametrize(("api_version", "kind"), [
    pytest.param(*names, marks=pytest.mark.xfail(strict=True)) if names in NOT_YET else names for names in _writable()])
def test_every_writable_built_in_kind_reads_protobuf_bodies(api_version: str, kind: str) -> None:
    assert accepts(api_version, kind), f"{api_version} {kind} is writable but has no protobuf table"


def test_the_guard_sees_the_kinds_it_is_about() -> None:
    writable = _writable()
    for expected in [("batch/v1", "CronJob"), ("v1", "PersistentVolumeClaim"), ("storage.k8s.io/v1", "CSINode"),
                     ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ("apps/v1", "ControllerRevision")]:
        assert expected in writable


# --- each kind, as a Go client writes it -----------------------------------------------------------------

def _label_selector(number: int, key: str, value: str) -> bytes:
    return ld(number, entry(1, key, value))


_TEMPLATE = ld(1, ld(1, ""), ld(2, ""), ld(3, ""), ld(4, ""), ld(5, ""), ld(6, ""), num(7, 0), ld(8),
               ld(11, ld(1, "app"), ld(2, "tick")))
_CONTAINER = ld(2, ld(1, "tick"), ld(2, "busybox"), ld(5, ""), ld(8), ld(13, ""), ld(14, "IfNotPresent"),
                num(16, False), num(17, False), num(18, False), ld(20, ""))
# a JobSpec: its pod template, a pod failure policy and a success policy
_JOB_SPEC = ld(2, ld(6, _TEMPLATE, ld(2, _CONTAINER, ld(3, "OnFailure"))),
               ld(11, ld(1, ld(1, "FailJob"), ld(2, ld(1, "tick"), ld(2, "In"), num(3, 3), num(3, 5))),
                  ld(1, ld(1, "Ignore"), ld(3, ld(1, "DisruptionTarget"), ld(2, "True")))),
               ld(16, ld(1, ld(1, "0-2"), num(2, 2))), num(7, 4))
_JOB_SPEC_JSON = {
    "podFailurePolicy": {"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "tick", "operator": "In", "values": [3, 5]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]},
    "successPolicy": {"rules": [{"succeededIndexes": "0-2", "succeededCount": 2}]},
    "backoffLimit": 4,
    "template": {"metadata": {"labels": {"app": "tick"}},
                 "spec": {"containers": [{"name": "tick", "image": "busybox", "resources": {},
                                          "imagePullPolicy": "IfNotPresent"}],
                          "restartPolicy": "OnFailure"}}}

_RULE = ld(1, "CREATE") + ld(1, "UPDATE") + ld(2, ld(1, "resource.k8s.io"), ld(2, "v1"), ld(3, "resourceclaims"),
                                              ld(4, "Namespaced"))
_RULE_JSON = {"operations": ["CREATE", "UPDATE"], "apiGroups": ["resource.k8s.io"], "apiVersions": ["v1"],
              "resources": ["resourceclaims"], "scope": "Namespaced"}

CASES: dict[str, tuple[str, str, bytes, dict[str, Any]]] = {
    # a webhook's rule embeds its Rule (json:""): one JSON object of both, also inside a named rule
    "ValidatingWebhookConfiguration": (
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
        ld(2, ld(1, "dra.example.com"),
           ld(2, ld(1, ld(1, "drivers"), ld(2, "webhook"), ld(3, "/validate"), num(4, 443)), ld(2, b"\x01\x02")),
           ld(3, _RULE), ld(4, "Fail"), ld(9, "Equivalent"), ld(5), ld(10), ld(6, "None"), num(7, 10),
           ld(8, "v1"), ld(11, ld(1, "not-system"), ld(2, "true"))),
        {"webhooks": [{"name": "dra.example.com",
                       "clientConfig": {"service": {"namespace": "drivers", "name": "webhook", "path": "/validate",
                                                    "port": 443}, "caBundle": "AQI="},
                       "rules": [_RULE_JSON], "failurePolicy": "Fail", "matchPolicy": "Equivalent",
                       "namespaceSelector": {}, "objectSelector": {}, "sideEffects": "None", "timeoutSeconds": 10,
                       "admissionReviewVersions": ["v1"],
                       "matchConditions": [{"name": "not-system", "expression": "true"}]}]}),
    "ValidatingAdmissionPolicy": (
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy",
        ld(2, ld(2, ld(3, ld(1, "claim-a"), ld(2, _RULE)), ld(7, "Equivalent")),
           ld(3, ld(1, "object.spec.devices.requests.size() < 4"), ld(2, "too many"), ld(3, "Invalid")),
           ld(4, "Fail"), ld(7, ld(1, "n"), ld(2, "object.metadata.name"))),
        {"spec": {"matchConstraints": {"resourceRules": [{"resourceNames": ["claim-a"], **_RULE_JSON}],
                                       "matchPolicy": "Equivalent"},
                  "validations": [{"expression": "object.spec.devices.requests.size() < 4", "message": "too many",
                                   "reason": "Invalid"}],
                  "failurePolicy": "Fail", "variables": [{"name": "n", "expression": "object.metadata.name"}]}}),
    "ValidatingAdmissionPolicyBinding": (
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding",
        ld(2, ld(1, "claims"), ld(2, ld(1, "limits"), ld(2, "ns"), ld(4, "Deny")), ld(4, "Deny"), ld(4, "Audit")),
        {"spec": {"policyName": "claims",
                  "paramRef": {"name": "limits", "namespace": "ns", "parameterNotFoundAction": "Deny"},
                  "validationActions": ["Deny", "Audit"]}}),
    "ReplicationController": (
        "v1", "ReplicationController",
        ld(2, num(1, 2), entry(2, "app", "tick"), ld(3, _TEMPLATE, ld(2, _CONTAINER, ld(3, "Always"))),
           num(4, 5)) + ld(3, num(1, 2), num(2, 2), num(3, 1), num(4, 1), num(5, 1)),
        {"spec": {"replicas": 2, "minReadySeconds": 5, "selector": {"app": "tick"},
                  "template": {"metadata": {"labels": {"app": "tick"}},
                               "spec": {"containers": [{"name": "tick", "image": "busybox", "resources": {},
                                                        "imagePullPolicy": "IfNotPresent"}],
                                        "restartPolicy": "Always"}}},
         "status": {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                    "observedGeneration": 1}}),
    "CronJob": ("batch/v1", "CronJob", ld(2, ld(1, "*/1 * * * *"), num(2, 30), ld(3, "Forbid"), num(4, False),
                                             ld(5, ld(1, ld(1, "")), _JOB_SPEC), num(6, 3), ld(8, "Etc/UTC")),
                {"spec": {"schedule": "*/1 * * * *", "timeZone": "Etc/UTC", "startingDeadlineSeconds": 30,
                          "concurrencyPolicy": "Forbid", "suspend": False,
                          "jobTemplate": {"metadata": {}, "spec": _JOB_SPEC_JSON}, "successfulJobsHistoryLimit": 3}}),
    "CronJob status": ("batch/v1", "CronJob", ld(3, ld(1, ld(1, "Job"), ld(3, "tick-1")),
                                                   time(4, "2025-07-08T09:10:00Z")),
                       {"status": {"active": [{"kind": "Job", "name": "tick-1"}],
                                   "lastScheduleTime": "2025-07-08T09:10:00Z"}}),
    "PersistentVolumeClaim": (
        "v1", "PersistentVolumeClaim",
        ld(2, ld(1, "ReadWriteOnce"), ld(2, entry(2, "storage", ld(1, "5Gi"))), ld(3, ""), ld(5, "fast"),
           ld(6, "Filesystem"), ld(8, ld(1, "snapshot.storage.k8s.io"), ld(2, "VolumeSnapshot"), ld(3, "snap"))) +
        ld(3, ld(1, "Bound"), ld(2, "ReadWriteOnce"), entry(3, "storage", ld(1, "5Gi")),
           ld(4, ld(1, "Resizing"), ld(2, "True"), ld(3), time(4, "2025-07-08T09:10:00Z"), ld(5, ""), ld(6, "")),
           ld(7, ld(1, "storage"), ld(2, "ControllerResizeInProgress"))),
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}},
                  "storageClassName": "fast", "volumeMode": "Filesystem",
                  "dataSourceRef": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap"}},
         "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"},
                    "conditions": [{"type": "Resizing", "status": "True",
                                    "lastTransitionTime": "2025-07-08T09:10:00Z"}],
                    "allocatedResourceStatuses": {"storage": "ControllerResizeInProgress"}}}),
    "PersistentVolume": (
        "v1", "PersistentVolume",
        ld(2, entry(1, "storage", ld(1, "10Gi")),
           ld(2, ld(22, ld(1, "csi.example.com"), ld(2, "vol-1"), num(3, False), ld(4, "ext4"),
                    entry(5, "tier", "gold"), ld(7, ld(1, "stage"), ld(2, "kube-system")))),
           ld(3, "ReadWriteOnce"), ld(4, ld(1, "PersistentVolumeClaim"), ld(2, "ns"), ld(3, "data")),
           ld(5, "Delete"), ld(6, "fast"), ld(7, "noatime"),
           ld(9, ld(1, ld(1, ld(1, ld(1, "topology.example.com/zone"), ld(2, "In"), ld(3, "a")))))) +
        ld(3, ld(1, "Bound"), ld(2, ""), ld(3, ""), time(4, "2025-07-08T09:10:00Z")),
        {"spec": {"capacity": {"storage": "10Gi"},
                  "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1", "fsType": "ext4",
                          "volumeAttributes": {"tier": "gold"},
                          "nodeStageSecretRef": {"name": "stage", "namespace": "kube-system"}},
                  "accessModes": ["ReadWriteOnce"],
                  "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "data"},
                  "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "fast", "mountOptions": ["noatime"],
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "topology.example.com/zone", "operator": "In", "values": ["a"]}]}]}}},
         "status": {"phase": "Bound", "lastPhaseTransitionTime": "2025-07-08T09:10:00Z"}}),
    "StorageClass": ("storage.k8s.io/v1", "StorageClass",
                     ld(2, "csi.example.com") + entry(3, "type", "ssd") + ld(4, "Retain") + num(6, True) +
                     ld(7, "WaitForFirstConsumer") +
                     ld(8, ld(1, ld(1, "topology.example.com/zone"), ld(2, "a"), ld(2, "b"))),
                     {"provisioner": "csi.example.com", "parameters": {"type": "ssd"}, "reclaimPolicy": "Retain",
                      "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer",
                      "allowedTopologies": [{"matchLabelExpressions": [
                          {"key": "topology.example.com/zone", "values": ["a", "b"]}]}]}),
    "CSIDriver": ("storage.k8s.io/v1", "CSIDriver",
                  ld(2, num(1, False), num(2, True), ld(3, "Persistent"), ld(3, "Ephemeral"), num(4, True),
                     ld(5, "File"), ld(6, ld(1, "vault"), num(2, 600)), num(9, 60)),
                  {"spec": {"attachRequired": False, "podInfoOnMount": True,
                            "volumeLifecycleModes": ["Persistent", "Ephemeral"], "storageCapacity": True,
                            "fsGroupPolicy": "File", "tokenRequests": [{"audience": "vault", "expirationSeconds": 600}],
                            "nodeAllocatableUpdatePeriodSeconds": 60}}),
    "CSINode": ("storage.k8s.io/v1", "CSINode",
                ld(2, ld(1, ld(1, "csi.example.com"), ld(2, "node-a"), ld(3, "topology.example.com/zone"),
                         ld(4, num(1, 16)))),
                {"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "node-a",
                                       "topologyKeys": ["topology.example.com/zone"], "allocatable": {"count": 16}}]}}),
    "CSIStorageCapacity": ("storage.k8s.io/v1", "CSIStorageCapacity",
                           _label_selector(2, "topology.example.com/zone", "a") + ld(3, "fast") +
                           quantity(4, "100Gi") + quantity(5, "10Gi"),
                           {"nodeTopology": {"matchLabels": {"topology.example.com/zone": "a"}},
                            "storageClassName": "fast", "capacity": "100Gi", "maximumVolumeSize": "10Gi"}),
    "VolumeAttachment": ("storage.k8s.io/v1", "VolumeAttachment",
                         ld(2, ld(1, "csi.example.com"), ld(2, ld(1, "pv-1")), ld(3, "node-a")) +
                         ld(3, num(1, True), entry(2, "devicePath", "/dev/xvdb"),
                            ld(4, time(1, "2025-07-08T09:10:00Z"), ld(2, "busy"), num(3, 5))),
                         {"spec": {"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv-1"},
                                   "nodeName": "node-a"},
                          "status": {"attached": True, "attachmentMetadata": {"devicePath": "/dev/xvdb"},
                                     "detachError": {"time": "2025-07-08T09:10:00Z", "message": "busy",
                                                     "errorCode": 5}}}),
    "VolumeAttachment inline": ("storage.k8s.io/v1", "VolumeAttachment",
                                ld(2, ld(1, "csi.example.com"),
                                   ld(2, ld(2, ld(2, ld(22, ld(1, "csi.example.com"), ld(2, "vol-1"))),
                                            ld(5, ""), ld(6, ""))),
                                   ld(3, "node-a")) + ld(3, num(1, False)),
                                {"spec": {"attacher": "csi.example.com", "source": {"inlineVolumeSpec": {
                                    "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1"}}},
                                    "nodeName": "node-a"}, "status": {"attached": False}}),
    "Role": ("rbac.authorization.k8s.io/v1", "Role",
             ld(2, ld(1, "get"), ld(1, "list"), ld(2, ""), ld(3, "pods"), ld(4, "web")),
             {"rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"],
                         "resourceNames": ["web"]}]}),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", "ClusterRole",
                    ld(2, ld(1, "get"), ld(5, "/healthz")) +
                    ld(3, _label_selector(1, "rbac.example.com/aggregate-to-view", "true")),
                    {"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                     "aggregationRule": {"clusterRoleSelectors": [
                         {"matchLabels": {"rbac.example.com/aggregate-to-view": "true"}}]}}),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", "RoleBinding",
                    ld(2, ld(1, "ServiceAccount"), ld(2, ""), ld(3, "driver"), ld(4, "kube-system")) +
                    ld(2, ld(1, "User"), ld(2, "rbac.authorization.k8s.io"), ld(3, "jane"), ld(4, "")) +
                    ld(3, ld(1, "rbac.authorization.k8s.io"), ld(2, "Role"), ld(3, "reader")),
                    {"subjects": [{"kind": "ServiceAccount", "name": "driver", "namespace": "kube-system"},
                                  {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}],
                     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}}),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
                           ld(2, ld(1, "Group"), ld(2, "rbac.authorization.k8s.io"), ld(3, "admins"), ld(4, "")) +
                           ld(3, ld(1, "rbac.authorization.k8s.io"), ld(2, "ClusterRole"), ld(3, "")),
                           {"subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "admins"}],
                            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ""}}),
    "Node status (kubelet)": (
        "v1", "Node",
        ld(3, entry(1, "cpu", ld(1, "8")), entry(2, "cpu", ld(1, "7500m")), ld(3, ""),
           ld(4, ld(1, "Ready"), ld(2, "True"), time(3, "2025-07-08T09:10:00Z"), time(4, "2025-07-08T09:00:00Z"),
              ld(5, "KubeletReady"), ld(6, "kubelet is posting ready status")),
           ld(5, ld(1, "InternalIP"), ld(2, "172.18.0.2")), ld(5, ld(1, "Hostname"), ld(2, "node-a")),
           ld(6, ld(1, num(1, 10250))),
           ld(7, ld(1, "m1"), ld(2, "u1"), ld(3, "b1"), ld(4, "6.8.0"), ld(5, "Debian GNU/Linux 12"),
              ld(6, "containerd://2.0.0"), ld(7, "v1.36.0"), ld(8, ""), ld(9, "linux"), ld(10, "amd64"),
              ld(11, num(1, 0))),
           ld(8, ld(1, "registry.k8s.io/pause:3.10"), num(2, 320000)),
           ld(12, ld(1, "runc"), ld(2, num(1, True), num(2, False))), ld(13, num(1, True))),
        {"status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "7500m"},
                    "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2025-07-08T09:10:00Z",
                                    "lastTransitionTime": "2025-07-08T09:00:00Z", "reason": "KubeletReady",
                                    "message": "kubelet is posting ready status"}],
                    "addresses": [{"type": "InternalIP", "address": "172.18.0.2"},
                                  {"type": "Hostname", "address": "node-a"}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                    "nodeInfo": {"machineID": "m1", "systemUUID": "u1", "bootID": "b1", "kernelVersion": "6.8.0",
                                 "osImage": "Debian GNU/Linux 12", "containerRuntimeVersion": "containerd://2.0.0",
                                 "kubeletVersion": "v1.36.0", "kubeProxyVersion": "", "operatingSystem": "linux",
                                 "architecture": "amd64", "swap": {"capacity": 0}},
                    "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 320000}],
                    "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True,
                                                                      "userNamespaces": False}}],
                    "features": {"supplementalGroupsPolicy": True}}}),
    "Namespace status": ("v1", "Namespace",
                         ld(2, ld(1, "kubernetes")) +
                         ld(3, ld(1, "Terminating"), ld(2, ld(1, "NamespaceDeletionContentFailure"), ld(2, "False"),
                                                        time(4, "2025-07-08T09:10:00Z"), ld(5, "ContentDeleted"),
                                                        ld(6, "All content successfully deleted"))),
                         {"spec": {"finalizers": ["kubernetes"]},
                          "status": {"phase": "Terminating", "conditions": [{
                              "type": "NamespaceDeletionContentFailure", "status": "False",
                              "lastTransitionTime": "2025-07-08T09:10:00Z", "reason": "ContentDeleted",
                              "message": "All content successfully deleted"}]}}),
    "Workload": ("scheduling.k8s.io/v1alpha2", "Workload",
                 ld(2, ld(1, ld(1, "apps"), ld(2, "Deployment"), ld(3, "web")),
                    ld(2, ld(1, "workers"), ld(2, ld(2, num(1, 4))), ld(6, ""), num(7, 10))),
                 {"spec": {"controllerRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"},
                           "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}},
                                                  "priority": 10}]}}),
    "PodGroup": ("scheduling.k8s.io/v1alpha2", "PodGroup",
                 ld(2, ld(1, ld(1, ld(1, "w"), ld(2, "workers"))), ld(2, ld(1)), ld(6, "")) +
                 ld(3, ld(1, ld(1, "PodGroupScheduled"), ld(2, "True"), num(3, 1), time(4, "2025-07-08T09:10:00Z"),
                          ld(5, "Scheduled"), ld(6, ""))),
                 {"spec": {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "workers"}},
                           "schedulingPolicy": {"basic": {}}},
                  "status": {"conditions": [{"type": "PodGroupScheduled", "status": "True", "observedGeneration": 1,
                                             "lastTransitionTime": "2025-07-08T09:10:00Z", "reason": "Scheduled",
                                             "message": ""}]}}),
    "ControllerRevision": ("apps/v1", "ControllerRevision", raw(2, {"spec": {"template": {"$patch": "replace"}}}) +
                           num(3, 0),
                           {"data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 0}),
}


# --- a CustomResourceDefinition: its schema's floats, embedded JSON and unions ----------------------------

def double(number: int, value: float) -> bytes:
    """A float64 field (wire type 1: eight bytes, little-endian)."""
    return varint(number << 3 | 1) + struct.pack("<d", value)


def _props(*fields: bytes) -> bytes:
    """A JSONSchemaProps as Go writes it: its plain strings and bools always (ids 1, 2, 4-7, 10, 12, 15, 18,
    37, 39, 40), then the given fields, in field-number order."""
    plain = {1: ld(1, ""), 2: ld(2, ""), 4: ld(4, ""), 6: ld(6, ""), 7: ld(7, ""), 10: num(10, False),
             12: num(12, False), 15: ld(15, ""), 18: num(18, False), 37: num(37, False), 39: num(39, False),
             40: num(40, False)}
    numbered = sorted([*plain.items(), *((_number_of(f), f) for f in fields)], key=lambda item: item[0])
    return b"".join(f for _, f in numbered)


def _number_of(field: bytes) -> int:
    key, shift, at = 0, 0, 0
    while True:
        key |= (field[at] & 0x7F) << shift
        if field[at] < 0x80:
            return key >> 3
        at, shift = at + 1, shift + 7


_SIZE = _props(ld(5, "integer"), ld(8, ld(1, "3")), double(9, 1.5), double(11, 0), ld(20, ld(1, "1")),
               ld(20, ld(1, '"two"')))
_TAGS = _props(ld(5, "array"), ld(24, ld(1, _props(ld(5, "string")))))
_PAIR = _props(ld(5, "array"), ld(24, ld(2, _props(ld(5, "string"))), ld(2, _props(ld(5, "integer")))))
_FREE = _props(ld(5, "object"), ld(30, num(1, False)), num(38, True))
_EXTRA = _props(ld(5, "object"), ld(30, num(1, True), ld(2, _props(ld(5, "string")))))
_SPEC = _props(ld(5, "object"), entry(29, "extra", _EXTRA), entry(29, "free", _FREE), entry(29, "pair", _PAIR),
               entry(29, "size", _SIZE), entry(29, "tags", _TAGS), entry(32, "size", ld(2, "tags")),
               ld(44, ld(1, "self.size <= 10"), ld(2, "too big"), ld(3, ""), ld(5, "")))
_CRD_SPEC = ld(2, ld(1, "example.com"), ld(3, ld(1, "gadgets"), ld(2, "gadget"), ld(4, "Gadget"), ld(5, "GadgetList")),
               ld(4, "Namespaced"),
               ld(7, ld(1, "v1"), num(2, True), num(3, True), ld(4, ld(1, _props(ld(5, "object"),
                                                                                  entry(29, "spec", _SPEC)))),
                  ld(5, ld(1)), ld(6, ld(1, "Size"), ld(2, "integer"), ld(3, ""), ld(4, ""), num(5, 0),
                                   ld(6, ".spec.size")), num(7, False)),
               num(10, False))
_SCHEMA_JSON = {"type": "object", "properties": {"spec": {
    "type": "object",
    "properties": {
        "extra": {"type": "object", "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "additionalProperties": False, "x-kubernetes-preserve-unknown-fields": True},
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
        "size": {"type": "integer", "default": 3, "maximum": 1.5, "minimum": 0, "enum": [1, "two"]},
        "tags": {"type": "array", "items": {"type": "string"}}},
    "dependencies": {"size": ["tags"]},
    "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "too big"}]}}}
_CRD_SPEC_JSON = {"group": "example.com",
                  "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                  "scope": "Namespaced",
                  "versions": [{"name": "v1", "served": True, "storage": True,
                                "schema": {"openAPIV3Schema": _SCHEMA_JSON}, "subresources": {"status": {}},
                                "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                                              "jsonPath": ".spec.size"}]}]}
CASES["CustomResourceDefinition"] = ("apiextensions.k8s.io/v1", "CustomResourceDefinition", _CRD_SPEC,
                                     {"spec": _CRD_SPEC_JSON})


def test_a_crd_schema_s_number_json_cannot_hold_is_a_protobuf_error() -> None:
    spec = ld(2, ld(1, "example.com"), ld(7, ld(1, "v1"), ld(4, ld(1, _props(entry(29, "size", _props(
        double(9, float("nan")))))))))
    with pytest.raises(ProtobufError) as caught:
        decode(envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", meta("x"), spec))
    assert str(caught.value) == ("spec.versions[0].schema.openAPIV3Schema.properties[size].maximum: a number JSON "
                                 "cannot hold (nan)")

@pytest.mark.parametrize("case", list(CASES))
def test_each_kind_reads_as_its_json(case: str) -> None:
    api_version, kind, fields, expected = CASES[case]
    decoded = decode(envelope(api_version, kind, meta("x"), fields))
    assert decoded == {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"},
                       **expected}
    assert list(decoded) == ["apiVersion", "kind", "metadata", *expected]  # (Go's struct order)


# --- through the server: the same object stored as its JSON is ------------------------------------------

@pytest.fixture
def client() -> TestClient:
    return api_client("ns")


def _unstamped(obj: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    for key in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
        out["metadata"].pop(key, None)
    return out


CREATES = {"CronJob": "/apis/batch/v1/namespaces/ns/cronjobs",
           "ReplicationController": "/api/v1/namespaces/ns/replicationcontrollers",
           "PersistentVolumeClaim": "/api/v1/namespaces/ns/persistentvolumeclaims",
           "PersistentVolume": "/api/v1/persistentvolumes",
           "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
           "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
           "CSINode": "/apis/storage.k8s.io/v1/csinodes",
           "CSIStorageCapacity": "/apis/storage.k8s.io/v1/namespaces/ns/csistoragecapacities",
           "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles",
           "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
           "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/ns/rolebindings",
           "ControllerRevision": "/apis/apps/v1/namespaces/ns/controllerrevisions"}


@pytest.mark.parametrize("case", list(CREATES))
def test_a_protobuf_create_stores_what_the_json_create_stores(client: TestClient, case: str) -> None:
    api_version, kind, fields, expected = CASES[case]
    path = CREATES[case]
    expected = {k: v for k, v in expected.items() if k != "status"}  # (a create keeps no status)
    body = envelope(api_version, kind, meta("from-protobuf"), fields)
    r = client.post(path, content=body, headers=PROTOBUF)
    assert r.status_code == 201, r.text
    from_protobuf = client.get(f"{path}/from-protobuf").json()
    r = client.post(path, json={"apiVersion": api_version, "kind": kind, "metadata": {"name": "from-json"},
                                **expected})
    assert r.status_code == 201, r.text
    from_json = client.get(f"{path}/from-json").json()
    assert _unstamped(from_protobuf) == _unstamped(from_json)


# --- custom resources: JSON and YAML only, as upstream -------------------------------------------------

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/example.com/v1/namespaces/ns/gadgets"


def test_a_custom_resources_protobuf_body_is_refused_as_kube_apiserver_refuses_it(client: TestClient) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert client.post(CRDS, json=crd).status_code == 201
    r = client.post(GADGETS, content=envelope("example.com/v1", "Gadget", meta("g")), headers=PROTOBUF)
    assert r.status_code == 400, r.text
    assert r.json()["message"] == ('Gadget in version "v1" cannot be handled as a Gadget: '
                                   "Object 'Kind' is missing in 'object has no kind field '")
    r = client.post(GADGETS, content=b'{"kind": "Gadget"}', headers=PROTOBUF)
    assert r.status_code == 400
    assert r.json()["message"] == ("the object provided is unrecognized (must be of type Gadget): provided data does "
                                   'not appear to be a protobuf message, expected prefix [107 56 115 0] '
                                   '({"kind": "Gadget"})')
    assert client.get(GADGETS).json()["items"] == []


def test_the_refusal_names_the_kind_the_envelope_names_else_the_urls() -> None:
    assert custom_resource_refusal(envelope("", "", meta("g")), "Gadget", "v2").startswith(
        'Gadget in version "v2" cannot be handled as a Gadget:')
    assert custom_resource_refusal(b"", "Gadget", "v1") == (
        "the object provided is unrecognized (must be of type Gadget): empty data (<empty>)")
    assert custom_resource_refusal(b"k8s\x00", "Gadget", "v1") == (
        "the object provided is unrecognized (must be of type Gadget): empty body (6b387300)")



def test_a_protobuf_crd_is_stored_as_its_json_and_serves_its_resources(client: TestClient) -> None:
    schema = _props(ld(5, "object"), entry(29, "spec", _props(
        ld(5, "object"), entry(29, "size", _props(ld(5, "integer"), ld(8, ld(1, "3")), double(9, 10), double(11, 0.5))),
        entry(29, "tags", _props(ld(5, "array"), ld(24, ld(1, _props(ld(5, "string")))))))))
    spec = ld(2, ld(1, "example.com"), ld(3, ld(1, "gadgets"), ld(4, "Gadget")), ld(4, "Namespaced"),
              ld(7, ld(1, "v1"), num(2, True), num(3, True), ld(4, ld(1, schema))))
    body = envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", meta("gadgets.example.com"), spec)
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    from_json = decode(body)
    dry_run = client.post(f"{crds}?dryRun=All", json=from_json)
    assert dry_run.status_code == 201, dry_run.text
    r = client.post(crds, content=body, headers=PROTOBUF)
    assert r.status_code == 201, r.text
    stored = client.get(f"{crds}/gadgets.example.com").json()
    assert stored["spec"] == dry_run.json()["spec"]
    assert stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] == {
        "size": {"type": "integer", "default": 3, "maximum": 10, "minimum": 0.5},
        "tags": {"type": "array", "items": {"type": "string"}}}
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 11}}
    r = client.post("/apis/example.com/v1/namespaces/ns/gadgets", json=gadget)
    assert r.status_code == 422 and "should be less than or equal to 10" in r.text


def test_a_kubelets_protobuf_node_status_is_stored_whole(client: TestClient) -> None:
    api_version, kind, fields, expected = CASES["Node status (kubelet)"]
    r = client.post("/api/v1/nodes", content=envelope(api_version, kind, meta("node-a"), fields), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    status = client.get("/api/v1/nodes/node-a").json()["status"]
    for key in ("conditions", "addresses", "daemonEndpoints", "nodeInfo", "images", "runtimeHandlers"):
        assert status[key] == expected["status"][key]
