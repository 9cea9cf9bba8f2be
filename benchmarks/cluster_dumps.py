"""Write cluster dumps shaped like ``kubectl get nodes,pods,resourceslices,deviceclasses,... -A -o json``.

    .venv/bin/python benchmarks/cluster_dumps.py OUT.json --nodes 500 --pods 5000 [--profile dra-example]

One ``kind: List`` holding DeviceClasses, Nodes and ResourceSlices from ``dralloc.simulator.generate``, a
ResourceClaimTemplate per namespace, and pods as the API server returns them (managedFields, status, the
service-account volume, fields dralloc does not model): a tenth of them running on a node, the rest
pending with one claim from the template. Deterministic: the same arguments write the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dralloc.simulator.generate import PROFILES, cluster_documents

_CLASS = {"gpu-h100": "mig.nvidia.com", "dra-example": "gpu.example.com", "nic": "nic.example.com"}
_NAMESPACES = ("team-a", "team-b", "team-c", "batch")


def _template(namespace: str, device_class: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-device", "namespace": namespace,
                         "uid": f"00000000-0000-4000-8000-{_NAMESPACES.index(namespace):012d}",
                         "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "dev", "exactly": {"deviceClassName": device_class, "count": 1}}]}}}}


def _pod(i: int, node: str | None) -> dict[str, Any]:
    namespace = _NAMESPACES[i % len(_NAMESPACES)]
    name = f"worker-{i // 1000}-{i % 1000:04d}"
    uid = f"7a3f{i:04x}-0000-4000-8000-{i:012d}"
    ts = f"2026-11-0{1 + i % 9}T{i % 24:02d}:{i % 60:02d}:00Z"
    meta = {
        "name": name, "namespace": namespace, "uid": uid, "resourceVersion": str(100000 + i),
        "creationTimestamp": ts, "labels": {"app": f"worker-{i // 1000}", "team": namespace},
        "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl-create",
                           "operation": "Update", "time": ts,
                           "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                                        "f:spec": {"f:containers": {}, "f:resourceClaims": {}}}}],
    }
    spec: dict[str, Any] = {
        "containers": [{
            "name": "main", "image": "registry.example.com/worker:1.4.2", "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/worker", "--serve"], "env": [{"name": "MODE", "value": "batch"}],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"},
                          "claims": [{"name": "dev"}]},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                              "name": "kube-api-access", "readOnly": True}],
        }],
        "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
        "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "one-device"}],
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "tolerationSeconds": 300}],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}}]}}],
    }
    status: dict[str, Any] = {"phase": "Pending", "qosClass": "Burstable"}
    if node is not None:
        spec["nodeName"] = node
        status = {"phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.1", "podIP": f"10.1.{i // 250 % 256}.{i % 250}",
                  "startTime": ts, "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ts}],
                  "resourceClaimStatuses": [{"name": "dev", "resourceClaimName": f"{name}-dev-x{i % 10}"}]}
    else:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "lastTransitionTime": ts, "lastProbeTime": None}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def dump(nodes: int, pods: int, profile: str) -> dict[str, Any]:
    items = cluster_documents(nodes, profile)
    items += [_template(ns, _CLASS[profile]) for ns in _NAMESPACES]
    node_names = [d["metadata"]["name"] for d in items if d["kind"] == "Node"]
    for i in range(pods):
        running = node_names and i % 10 == 0
        items.append(_pod(i, node_names[i // 10 % len(node_names)] if running else None))
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def write(path: Path, nodes: int, pods: int, profile: str) -> None:
    path.write_text(json.dumps(dump(nodes, pods, profile), separators=(",", ":")) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--profile", choices=PROFILES, default="dra-example")
    args = parser.parse_args()
    write(args.out, args.nodes, args.pods, args.profile)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
