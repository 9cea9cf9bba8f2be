"""End to end with the real kubectl on `dralloc serve`: ingress-nginx's install manifest (data/, its IngressClass
among RBAC, a Deployment, Services, Jobs and its ValidatingWebhookConfiguration, stored and not called) applies
whole and reads back; `kubectl create ingress` (a protobuf body)
gets the default class; NetworkPolicies apply and print their pod selector."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Kubectl, kubectl_session

pytestmark = pytest.mark.e2e

DATA = Path(__file__).parent / "data"


def manifest() -> str:
    return (DATA / "ingress-nginx-v1.5.2-deploy.yaml").read_text()


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, manifest())


def test_ingress_nginx_applies_and_its_ingresses_get_its_class(kubectl: Kubectl) -> None:
    out = kubectl("get", "ingressclass", "nginx", "-o", "jsonpath={.spec.controller} {.metadata.generation}").stdout
    assert out == "k8s.io/ingress-nginx 1"
    webhooks = ("get", "validatingwebhookconfiguration", "ingress-nginx-admission", "-o",
                "jsonpath={.metadata.resourceVersion} {.webhooks[0].rules[0].scope}")
    before = kubectl(*webhooks).stdout
    again = kubectl("apply", "-f", "-", stdin=manifest()).stdout
    assert "ingressclass.networking.k8s.io/nginx unchanged" in again
    # (kubectl sends the webhook's atomic rules again, as against kube-apiserver: the live ones carry the
    # defaulted scope; the patch changes nothing, so nothing is written)
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/ingress-nginx-admission configured" in again
    assert kubectl(*webhooks).stdout == before and before.endswith(" *")
    kubectl("annotate", "ingressclass", "nginx", "ingressclass.kubernetes.io/is-default-class=true")
    kubectl("create", "ingress", "web", "--rule=foo.example.com/api*=web:8080,tls=web-tls")
    table = kubectl("get", "ing").stdout.splitlines()
    assert table[0].split() == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert table[1].split()[:5] == ["web", "nginx", "foo.example.com", "80,", "443"]
    path = kubectl("get", "ingress", "web", "-o", "jsonpath={.spec.rules[0].http.paths[0]}").stdout
    assert '"pathType":"Prefix"' in path and '"path":"/api"' in path
    bad = kubectl("create", "ingress", "bad", "--rule=10.0.0.1/=web:80", check=False)
    assert bad.returncode != 0
    assert 'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address' in bad.stderr


def test_network_policies_apply_and_print_their_pod_selector(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin="""
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: ingress-nginx, namespace: ingress-nginx}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: ingress-nginx}}
  ingress:
  - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]
    ports: [{port: 80}, {port: https}]
""")
    lines = kubectl("get", "netpol", "-n", "ingress-nginx").stdout.splitlines()
    assert lines[0].split() == ["NAME", "POD-SELECTOR", "AGE"]
    assert lines[1].split()[:2] == ["ingress-nginx", "app.kubernetes.io/name=ingress-nginx"]
    types = kubectl("get", "networkpolicy", "ingress-nginx", "-n", "ingress-nginx", "-o",
                    "jsonpath={.spec.policyTypes} {.spec.ingress[0].ports[0].protocol}").stdout
    assert types == '["Ingress"] TCP'
    explained = kubectl("explain", "networkpolicy.spec.ingress.from.ipBlock").stdout
    assert "cidr" in explained and "except" in explained
