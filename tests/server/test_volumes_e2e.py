"""End to end with the real kubectl: `dralloc serve --fake-kubelet` binds volumes as a cluster does: a
WaitForFirstConsumer class whose claim is provisioned on the node its pod is scheduled to, a static volume
bound to an Immediate claim, a StatefulSet's claim templates, and a claim in use that waits on its
protection finalizer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Kubectl, eventually, kubectl_session

pytestmark = pytest.mark.e2e

NODES = "\n---\n".join(f"""apiVersion: v1
kind: Node
metadata:
  name: node-{i}
  labels: {{kubernetes.io/hostname: node-{i}}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}""" for i in (1, 2))

WAIT_FOR_CONSUMER = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers: [{name: app, image: "busybox:1", volumeMounts: [{name: data, mountPath: /data}]}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""

STATIC = """apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-static}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: manual
  hostPath: {path: /srv/static}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: static}
spec:
  storageClassName: manual
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
"""

STATEFUL_SET = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16", volumeMounts: [{name: data, mountPath: /var/lib/data}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""

@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, NODES)


_eventually = eventually


def _row(kubectl: Kubectl, *args: str) -> list[str]:
    return kubectl("get", *args, "--no-headers").stdout.split()


def test_a_claim_of_a_wait_for_first_consumer_class_is_provisioned_where_its_pod_runs(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", "-", stdin=WAIT_FOR_CONSUMER).stdout
    assert "storageclass.storage.k8s.io/standard created" in applied
    assert "persistentvolumeclaim/data created" in applied
    kubectl("wait", "--for=condition=Ready", "pod/app", "--timeout=30s")
    _eventually(lambda: _row(kubectl, "pvc", "data")[1] == "Bound")
    pvc = _row(kubectl, "pvc", "data")
    assert pvc[0] == "data" and pvc[2].startswith("pvc-") and pvc[3:6] == ["1Gi", "RWO", "standard"]
    node = kubectl("get", "pod", "app", "-o", "jsonpath={.spec.nodeName}").stdout
    selected = kubectl("get", "pvc", "data", "-o",
                       r"jsonpath={.metadata.annotations.volume\.kubernetes\.io/selected-node}").stdout
    assert selected == node
    header = kubectl("get", "pvc").stdout.splitlines()[0].split()
    assert header == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                      "VOLUMEATTRIBUTESCLASS", "AGE"]
    assert _row(kubectl, "sc")[:5] == ["standard", "(default)", "example.com/csi", "Delete", "WaitForFirstConsumer"]
    pv = _row(kubectl, "pv")
    assert pv[1:6] == ["1Gi", "RWO", "Delete", "Bound", "default/data"]


def test_a_static_volume_binds_an_immediate_claim(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=STATIC)
    _eventually(lambda: _row(kubectl, "pvc", "static")[1] == "Bound")
    assert _row(kubectl, "pvc", "static")[2:4] == ["pv-static", "5Gi"]
    assert _row(kubectl, "pv", "pv-static")[4:6] == ["Bound", "default/static"]
    explained = kubectl("explain", "storageclass.volumeBindingMode").stdout
    assert "KIND:       StorageClass" in explained and "FIELD: volumeBindingMode" in explained


def test_a_statefulsets_pods_run_with_bound_claims(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=WAIT_FOR_CONSUMER.split("---")[0])
    kubectl("apply", "-f", "-", stdin=STATEFUL_SET)
    kubectl("rollout", "status", "statefulset/db", "--timeout=30s")
    _eventually(lambda: [line.split()[1] for line in kubectl("get", "pvc", "--no-headers").stdout.splitlines()]
                == ["Bound", "Bound"])
    claims = kubectl("get", "pvc", "-o", "jsonpath={.items[*].metadata.name}").stdout.split()
    assert claims == ["data-db-0", "data-db-1"]


def test_deleting_a_claim_in_use_waits_for_its_pod(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=WAIT_FOR_CONSUMER)
    kubectl("wait", "--for=condition=Ready", "pod/app", "--timeout=30s")
    kubectl("delete", "pvc", "data", "--wait=false")
    time.sleep(1)
    assert _row(kubectl, "pvc", "data")[1] == "Terminating"
    kubectl("delete", "pod", "app")
    _eventually(lambda: not kubectl("get", "pvc", "--no-headers").stdout.strip())
    # the provisioned volume (reclaim policy Delete) goes with its claim
    _eventually(lambda: not kubectl("get", "pv", "--no-headers").stdout.strip())
