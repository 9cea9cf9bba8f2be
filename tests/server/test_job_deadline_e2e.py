"""kubectl against ``dralloc serve``: a Job whose pod cannot start fails once its active deadline passed, as
``kubectl wait --for=condition=failed`` and ``kubectl describe`` read it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Kubectl, kubectl_session

pytestmark = pytest.mark.e2e

NODE = """apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

STUCK = """apiVersion: batch/v1
kind: Job
metadata: {name: stuck}
spec:
  activeDeadlineSeconds: 1
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {pool: none}
      containers: [{name: main, image: "busybox:1"}]
"""


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, NODE)


def test_a_job_past_its_active_deadline_fails(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=STUCK)
    kubectl("wait", "--for=condition=failed", "job/stuck", "--timeout=30s")
    reason = kubectl("get", "job", "stuck", "-o", "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}")
    assert reason.stdout == "DeadlineExceeded"
    described = kubectl("describe", "job", "stuck").stdout
    assert "DeadlineExceeded" in described and "Job was active longer than specified deadline" in described
    assert kubectl("get", "pods", "-l", "job-name=stuck", "--no-headers").stdout.strip() == ""
