"""End to end with the real kubectl on `dralloc serve --fake-kubelet`: a LimitRange's defaults show in the pods
created after it, a ResourceQuota (`kubectl create quota`) counts them and refuses what goes over it."""

# ruff: noqa: F811 - the tests take test_workloads_e2e's kubectl fixture, imported by name

from __future__ import annotations

import json

import pytest
from test_workloads_e2e import Kubectl, _eventually, kubectl  # noqa: F401 - the kubectl fixture

pytestmark = pytest.mark.e2e

LIMITS = """apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
    max: {cpu: "1"}
"""


def test_a_limit_range_default_shows_in_a_created_pod_and_a_quota_counts_it(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=LIMITS)
    kubectl("run", "web", "--image=nginx:1")
    resources = json.loads(kubectl("get", "pod", "web", "-o", "jsonpath={.spec.containers[0].resources}").stdout)
    assert resources == {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m",
                                                                                    "memory": "256Mi"}}
    big = kubectl("run", "big", "--image=nginx:1", "--overrides",
                  '{"spec": {"containers": [{"name": "big", "image": "nginx:1", '
                  '"resources": {"limits": {"cpu": "2"}}}]}}', check=False)
    assert big.returncode == 1
    assert 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2' in big.stderr
    kubectl("create", "quota", "compute", "--hard=requests.cpu=250m,pods=5")
    _eventually(lambda: "requests.cpu: 100m/250m" in kubectl("get", "quota", "compute", "--no-headers").stdout)
    kubectl("run", "second", "--image=nginx:1")
    third = kubectl("run", "third", "--image=nginx:1", check=False)
    assert third.returncode == 1
    assert ('pods "third" is forbidden: exceeded quota: compute, requested: requests.cpu=100m, used: '
            "requests.cpu=200m, limited: requests.cpu=250m") in third.stderr
