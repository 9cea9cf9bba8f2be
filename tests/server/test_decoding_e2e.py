"""The real kubectl's bodies decode as kube-apiserver decodes them: a templated manifest's empty fields
(``labels:``, ``nodeSelector:``, ``env:``, as Helm charts render them) are nulls kubectl sends, and empty maps
and lists, which are neither stored nor returned, so applying the manifest again changes nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served import Kubectl, kubectl_session

pytestmark = pytest.mark.e2e

RENDERED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: rendered
  labels:
  annotations:
spec:
  replicas: 1
  selector:
    matchLabels: {app: rendered}
  template:
    metadata:
      labels: {app: rendered}
      annotations:
    spec:
      nodeSelector:
      tolerations:
      containers:
      - name: app
        image: registry.example/app:1
        args:
        env:
        resources:
          limits:
          requests: {cpu: 100m}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: rendered
  labels:
data:
  empty:
"""


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: decoding}", extra=())


def _settled(kubectl: Kubectl) -> dict[str, Any]:
    """The Deployment once its controller has stopped writing its status (its ReplicaSet made, its conditions
    set): the same resourceVersion twice, a second apart."""
    last = ""
    for _ in range(30):
        deployment: dict[str, Any] = json.loads(
            kubectl("get", "deployment", "rendered", "-o", "json", "--show-managed-fields").stdout)
        if deployment["metadata"]["resourceVersion"] == last:
            return deployment
        last = deployment["metadata"]["resourceVersion"]
        time.sleep(1.0)
    raise AssertionError("the Deployment's controller kept writing it")


def test_a_rendered_manifests_empty_fields_are_dropped_and_a_second_apply_changes_nothing(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=RENDERED)
    deployment = _settled(kubectl)
    assert "labels" not in deployment["metadata"]  # (its annotations: kubectl's last-applied-configuration)
    template = deployment["spec"]["template"]
    assert "annotations" not in template["metadata"]
    assert not {"nodeSelector", "tolerations"} & template["spec"].keys()
    container = template["spec"]["containers"][0]
    assert not {"args", "env"} & container.keys() and container["resources"] == {"requests": {"cpu": "100m"}}
    owned = json.dumps([entry["fieldsV1"] for entry in deployment["metadata"]["managedFields"]])
    assert '"f:nodeSelector"' not in owned and '"f:env"' not in owned
    config_map = json.loads(kubectl("get", "configmap", "rendered", "-o", "json").stdout)
    # (kubectl's apply drops a new object's null map values itself: the empty data it sends is not stored)
    assert "labels" not in config_map["metadata"] and "data" not in config_map
    # Applied again, kubectl's patch sends the nulls (it says "configured"): they delete what is not there
    kubectl("apply", "-f", "-", stdin=RENDERED)
    again = json.loads(kubectl("get", "deployment", "rendered", "-o", "json").stdout)
    assert again["metadata"]["resourceVersion"] == deployment["metadata"]["resourceVersion"]
    assert again["spec"] == deployment["spec"]

