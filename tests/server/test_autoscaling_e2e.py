"""End to end with the real kubectl on `dralloc serve --fake-kubelet`: `kubectl autoscale` (an autoscaling/v1
protobuf body) makes an HPA whose controller scales the Deployment up to minReplicas, `kubectl get hpa` and
`kubectl describe hpa` print what they print on a cluster without metrics-server, `kubectl explain` reads v2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import NODE, Kubectl, eventually, kubectl_session

pytestmark = pytest.mark.e2e



@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, NODE)


def test_kubectl_autoscale_keeps_the_deployment_within_bounds(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx", "--replicas=1")
    kubectl("autoscale", "deployment", "web", "--min=2", "--max=4", "--cpu-percent=60")
    eventually(lambda: kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}").stdout == "2")
    lines = kubectl("get", "hpa").stdout.splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert lines[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/60%", "2", "4", "1"]
    described = kubectl("describe", "hpa", "web").stdout
    assert "SuccessfulRescale" in described
    assert "New size: 2; reason: Current number of replicas below Spec.MinReplicas" in described
    v1 = kubectl("get", "horizontalpodautoscalers.v1.autoscaling", "web", "-o",
                 "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}").stdout
    assert v1 == "autoscaling/v1 60"
    explained = kubectl("explain", "hpa.spec.behavior.scaleDown").stdout
    assert "stabilizationWindowSeconds" in explained and "VERSION:    v2" in explained


def test_an_hpa_applied_from_a_manifest_is_validated_and_defaulted(kubectl: Kubectl) -> None:
    bad = kubectl("apply", "-f", "-", check=False, stdin="""
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 2
""")
    assert bad.returncode != 0
    assert "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`" in bad.stderr
    kubectl("apply", "-f", "-", stdin="""
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  behavior:
    scaleDown: {stabilizationWindowSeconds: 30}
""")
    spec = kubectl("get", "hpa", "web", "-o",
                   "jsonpath={.spec.minReplicas} {.spec.metrics[0].resource.target.averageUtilization} "
                   "{.spec.behavior.scaleUp.selectPolicy}").stdout
    assert spec == "1 80 Max"
    eventually(lambda: "FailedGetScale" in kubectl("get", "hpa", "web", "-o", "yaml").stdout)
