"""End to end with the real kubectl on `dralloc serve --fake-kubelet`: a ReplicationController applied from a
manifest gets its pods, `kubectl scale rc` changes them, `kubectl get rc` prints DESIRED, CURRENT and READY."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import NODE, Kubectl, eventually, kubectl_session

pytestmark = pytest.mark.e2e

MANIFEST = NODE + """---
apiVersion: v1
kind: ReplicationController
metadata: {name: nginx, namespace: default}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27", ports: [{containerPort: 80}]}]
"""


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, MANIFEST)


def _row(kubectl: Kubectl) -> list[str]:
    lines = kubectl("get", "rc", "nginx").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    return lines[1].split()[:4]


def test_a_replication_controller_is_applied_scaled_and_printed(kubectl: Kubectl) -> None:
    eventually(lambda: _row(kubectl) == ["nginx", "3", "3", "3"])
    selector = kubectl("get", "rc", "nginx", "-o", "jsonpath={.spec.selector.app} {.status.fullyLabeledReplicas}")
    assert selector.stdout == "nginx 3"
    kubectl("scale", "rc", "nginx", "--replicas=1")
    eventually(lambda: _row(kubectl) == ["nginx", "1", "1", "1"])
    eventually(lambda: len(kubectl("get", "pods", "-l", "app=nginx", "--no-headers").stdout.splitlines()) == 1)
    kubectl("delete", "rc", "nginx")
    eventually(lambda: kubectl("get", "pods", "-l", "app=nginx", "--no-headers").stdout.strip() == "")
