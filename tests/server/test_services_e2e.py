"""End to end with the real kubectl on `dralloc serve --fake-kubelet`: Services (`kubectl expose`, `kubectl
create service`) get a cluster IP and EndpointSlices listing the ready pods they select."""

# ruff: noqa: F811 - the tests take test_workloads_e2e's kubectl fixture, imported by name

from __future__ import annotations

import pytest
from test_workloads_e2e import Kubectl, _eventually, kubectl  # noqa: F401 - the kubectl fixture

pytestmark = pytest.mark.e2e


def _slice_endpoints(kubectl: Kubectl, service: str) -> list[str]:
    out = kubectl("get", "endpointslices", "-l", f"kubernetes.io/service-name={service}", "-o",
                  "jsonpath={.items[*].endpoints[*].addresses[0]}").stdout
    return out.split()


def test_an_exposed_deployment_has_a_cluster_ip_and_a_slice_of_its_ready_pods(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2", "--port=8080")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080").stdout == \
        "service/web exposed\n"
    row = kubectl("get", "svc", "web", "--no-headers", "-o", "wide").stdout.split()
    assert row[:5] == ["web", "ClusterIP", "10.96.0.2", "<none>", "80/TCP"] and row[-1] == "app=web"
    pod_ips = sorted(kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}").stdout.split())
    assert len(pod_ips) == 2
    _eventually(lambda: sorted(_slice_endpoints(kubectl, "web")) == pod_ips)
    table = kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=web").stdout.splitlines()
    assert table[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert table[1].split()[1:4] == ["IPv4", "8080", ",".join(pod_ips)]
    described = kubectl("describe", "svc", "web").stdout
    assert "IP:                       10.96.0.2\n" in described
    kubectl("scale", "deployment/web", "--replicas=3")
    _eventually(lambda: len(_slice_endpoints(kubectl, "web")) == 3)
    kubectl("delete", "svc", "web")
    _eventually(lambda: not _slice_endpoints(kubectl, "web"))


def test_kubectl_create_service_nodeport_and_apply_of_a_manifest_with_a_service(kubectl: Kubectl) -> None:
    kubectl("create", "service", "nodeport", "np", "--tcp=80:8080")
    assert kubectl("get", "svc", "np", "--no-headers").stdout.split()[4] == "80:30000/TCP"
    manifest = """apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 8080}]
"""
    kubectl("apply", "-f", "-", stdin=manifest)
    kubectl("apply", "-f", "-", stdin=manifest)  # again: unchanged, the allocated address kept
    assert kubectl("get", "svc", "api", "-o", "jsonpath={.spec.clusterIP}").stdout == "10.96.0.3"
    clash = kubectl("create", "service", "nodeport", "np2", "--tcp=81:81", "--node-port=30000", check=False)
    assert clash.returncode == 1
    assert 'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided port is already ' \
           "allocated" in clash.stderr
