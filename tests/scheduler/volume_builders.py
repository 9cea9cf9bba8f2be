"""Builders for the volume tests: nodes with hostname and zone labels, PVs, PVCs, StorageClasses, CSINodes."""

from __future__ import annotations

import textwrap


def zoned_node(name: str, zone: str, cpu: str = "4") -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Node
        metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}}}
        status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}
        """)


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "kubernetes.io/no-provisioner",
                  extra: str = "") -> str:
    return textwrap.dedent(f"""\
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {{name: {name}}}
        provisioner: {provisioner}
        volumeBindingMode: {mode}
        """) + extra


def pv(name: str, size: str = "10Gi", cls: str = "local", host: str = "", claim: str = "", labels: str = "{}",
       modes: str = "[ReadWriteOnce]", csi: str = "", zone: str = "") -> str:
    lines = ["apiVersion: v1", "kind: PersistentVolume", f"metadata: {{name: {name}, labels: {labels}}}", "spec:",
             f"  capacity: {{storage: {size}}}", f"  accessModes: {modes}", f"  storageClassName: {cls}"]
    if csi:
        lines.append(f"  csi: {{driver: {csi}, volumeHandle: {name}}}")
    else:
        lines.append("  local: {path: /mnt/disk}")
    if claim:
        lines.append(f"  claimRef: {{namespace: default, name: {claim}}}")
    if host or zone:
        key, value = ("kubernetes.io/hostname", host) if host else ("topology.kubernetes.io/zone", zone)
        lines += ["  nodeAffinity:", "    required:", "      nodeSelectorTerms:",
                  f"      - matchExpressions: [{{key: {key}, operator: In, values: [{value}]}}]"]
    elif not csi:
        lines += ["  nodeAffinity:", "    required:", "      nodeSelectorTerms:",
                  "      - matchExpressions: [{key: kubernetes.io/hostname, operator: Exists}]"]
    lines.append(f"status: {{phase: {'Bound' if claim else 'Available'}}}")
    return "\n".join(lines) + "\n"


def pvc(name: str, size: str = "5Gi", cls: str = "local", volume: str = "", modes: str = "[ReadWriteOnce]") -> str:
    bound = volume != ""
    ann = "{pv.kubernetes.io/bind-completed: \"yes\"}" if bound else "{}"
    lines = ["apiVersion: v1", "kind: PersistentVolumeClaim",
             f"metadata: {{name: {name}, namespace: default, annotations: {ann}}}", "spec:",
             f"  accessModes: {modes}", f"  resources: {{requests: {{storage: {size}}}}}", f"  storageClassName: {cls}"]
    if bound:
        lines.append(f"  volumeName: {volume}")
    lines.append(f"status: {{phase: {'Bound' if bound else 'Pending'}}}")
    return "\n".join(lines) + "\n"


def csi_node(name: str, driver: str, count: int) -> str:
    return textwrap.dedent(f"""\
        apiVersion: storage.k8s.io/v1
        kind: CSINode
        metadata: {{name: {name}}}
        spec: {{drivers: [{{name: {driver}, nodeID: {name}, allocatable: {{count: {count}}}}}]}}
        """)


def claims(*names: str) -> str:
    """A pod spec's ``volumes`` using the PVCs ``names`` (volume i is ``v<i>``)."""
    vols = ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {n}}}}}" for i, n in enumerate(names))
    return f"volumes: [{vols}]"
