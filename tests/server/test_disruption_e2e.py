"""End to end with the real kubectl on `dralloc serve --fake-kubelet`: a PodDisruptionBudget holds `kubectl
drain` back as on a cluster (its evictions answered 429 until the budget allows them)."""

# ruff: noqa: F811 - the tests take test_workloads_e2e's kubectl fixture, imported by name

from __future__ import annotations

import pytest
from test_workloads_e2e import Kubectl, _eventually, kubectl  # noqa: F401 - the kubectl fixture

pytestmark = pytest.mark.e2e

BUDGET = """apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
"""


def test_drain_waits_on_a_budget_and_goes_through_once_it_allows(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    kubectl("apply", "-f", "-", stdin=BUDGET)
    _eventually(lambda: kubectl("get", "pdb", "web", "-o", "jsonpath={.status.currentHealthy}").stdout == "2")
    row = kubectl("get", "pdb", "web", "--no-headers").stdout.split()
    assert row[:4] == ["web", "2", "N/A", "0"]
    node = kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].spec.nodeName}").stdout
    held = kubectl("drain", node, "--timeout=8s", check=False)
    assert held.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in held.stderr
    assert len(kubectl("get", "pods", "-l", "app=web", "--no-headers").stdout.splitlines()) == 2
    kubectl("scale", "deployment/web", "--replicas=3")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    _eventually(lambda: kubectl("get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}").stdout == "1")
    drained = kubectl("drain", node, "--timeout=60s")
    assert f"node/{node} drained" in drained.stdout
    on_node = kubectl("get", "pods", "-l", "app=web", "-o", f"jsonpath={{.items[?(@.spec.nodeName==\"{node}\")]"
                                                             ".metadata.name}").stdout
    assert on_node == ""
