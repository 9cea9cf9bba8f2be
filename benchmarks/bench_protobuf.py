"""Protobuf bodies (server/protobuf/decoder.py) beside JSON: what reading and writing the objects kube-scheduler, DRA
drivers and the Kubernetes e2e framework send costs — a ResourceClaim status update (an allocation), a
driver's ResourceSlice of 8 devices, an e2e pod, a Node and a scheduling Event.

    .venv/bin/python benchmarks/bench_protobuf.py [--calls 2000] [--runs 7]

Each object is encoded as a Go client encodes it (protobuf.encode: every non-pointer field, empty or not) and
as JSON (msgspec). Prints, per object, the µs per decode and per encode of each form — the best of ``--runs``
runs of ``--calls`` calls, the forms alternating run by run so a busy machine slows both alike — the body
sizes and protobuf's cost as a multiple of JSON's.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec

from dralloc.server.protobuf.decoder import decode, encode

_META = {"name": "web-gpu-x7k2p", "generateName": "web-gpu-", "namespace": "default", "uid": "0d6c4e3a",
         "resourceVersion": "1234", "generation": 1, "creationTimestamp": "2025-01-02T03:04:05Z",
         "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "5f1c",
                              "controller": True, "blockOwnerDeletion": True}],
         "finalizers": ["resource.kubernetes.io/delete-protection"],
         "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                            "apiVersion": "resource.k8s.io/v1", "time": "2025-01-02T03:04:05Z",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:metadata": {"f:generateName": {}}, "f:spec": {"f:devices": {}}}}]}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": _META,
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                  "allocationMode": "ExactCount", "count": 1}}]}},
    "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                       "pool": "node-1", "device": "gpu-0"}]},
                              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                  {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                              "allocationTimestamp": "2025-01-02T03:04:06Z"},
               "reservedFor": [{"resource": "pods", "name": "web", "uid": "5f1c"}]}}
SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu-7fz2q", "generateName": "node-1-gpu-", "uid": "9b2d",
                 "creationTimestamp": "2025-01-02T03:04:05Z"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "nodeName": "node-1",
             "devices": [{"name": f"gpu-{g}", "attributes": {"driverVersion": {"version": "560.35.3"},
                                                             "index": {"int": g}, "model": {"string": "h100"}},
                          "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]}}
POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "pod-7f2c", "namespace": "e2e-dra-4821", "labels": {"app": "dra-test"}},
    "spec": {"volumes": [{"name": "kube-api-access", "projected": {"sources": [
                 {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}],
             "containers": [{"name": "with-resource", "image": "registry.k8s.io/e2e-test-images/busybox:1.36",
                             "command": ["sh", "-c", "env && sleep 100000"],
                             "resources": {"claims": [{"name": "my-inline-claim"}]},
                             "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                                               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                             "terminationMessagePath": "/dev/termination-log",
                             "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
             "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
             "serviceAccountName": "default", "securityContext": {}, "schedulerName": "default-scheduler",
             "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300}],
             "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
             "resourceClaims": [{"name": "my-inline-claim", "resourceClaimTemplateName": "pod-7f2c-template"}]},
    "status": {"phase": "Pending", "qosClass": "BestEffort"}}
NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux"}},
    "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
             "taints": [{"key": "gpu.example.com/maintenance", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "64", "ephemeral-storage": "1Ti", "memory": "512Gi", "pods": "110"},
               "allocatable": {"cpu": "63500m", "ephemeral-storage": "1Ti", "memory": "510Gi", "pods": "110"}}}
EVENT = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "web.17f2c3a4b5", "namespace": "default"},
    "eventTime": "2025-06-07T08:09:10.000005Z", "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-node-1", "action": "Scheduling", "reason": "FailedScheduling",
    "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "5f1c", "apiVersion": "v1",
                  "resourceVersion": "1234"},
    "note": "0/8 nodes are available: 8 cannot allocate all claims.", "type": "Warning", "deprecatedSource": {}}
OBJECTS = {"ResourceClaim status update": CLAIM, "ResourceSlice of 8 devices": SLICE, "Pod (e2e)": POD,
           "Node": NODE, "Event (scheduler)": EVENT}


def best_of(runs: int, calls: int, timed: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The best µs per call of each function, the functions alternating run by run."""
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(runs):
        for name, call in timed.items():
            times[name].append(timeit.timeit(call, number=calls) / calls * 1e6)
    return {name: min(found) for name, found in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(f"{'object':29} {'form':9} {'bytes':>6} {'decode µs':>10} {'× JSON':>7} {'encode µs':>10} {'× JSON':>7}")
    for label, obj in OBJECTS.items():
        pb, js = encode(obj), msgspec.json.encode(obj)
        assert msgspec.json.encode(decode(pb)) == js, f"{label}: protobuf does not give the JSON back"
        µs = best_of(args.runs, args.calls, {
            "protobuf decode": partial(decode, pb), "JSON decode": partial(msgspec.json.decode, js),
            "protobuf encode": partial(encode, obj), "JSON encode": partial(msgspec.json.encode, obj)})
        for form, size in (("protobuf", len(pb)), ("JSON", len(js))):
            dec, enc = µs[f"{form} decode"], µs[f"{form} encode"]
            ratios = (f"{dec / µs['JSON decode']:6.1f}×", f"{enc / µs['JSON encode']:6.1f}×") \
                if form == "protobuf" else ("", "")
            print(f"{label:29} {form:9} {size:6} {dec:10.1f} {ratios[0]:>7} {enc:10.1f} {ratios[1]:>7}")


if __name__ == "__main__":
    main()
