"""End to end with the real kubectl: the ValidatingAdmissionPolicy example of the Kubernetes documentation
(a Deployment with too many replicas refused in a namespace the binding selects, with kube-apiserver's text),
a Warn binding's warning printed by kubectl, and a webhook configuration applied with its warning and listed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Kubectl, kubectl_session

pytestmark = pytest.mark.e2e

# https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/
POLICY = """apiVersion: v1
kind: Namespace
metadata:
  name: test
  labels: {environment: test}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: "demo-policy.example.com"
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   ["apps"]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: "demo-binding-test.example.com"
spec:
  policyName: "demo-policy.example.com"
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
"""

WEBHOOK = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: cert-manager-webhook}
webhooks:
- name: webhook.cert-manager.io
  admissionReviewVersions: ["v1"]
  sideEffects: None
  clientConfig:
    service: {name: cert-manager-webhook, namespace: cert-manager, path: /validate}
  rules:
  - apiGroups: ["cert-manager.io"]
    apiVersions: ["v1"]
    operations: ["CREATE", "UPDATE"]
    resources: ["*/*"]
"""


@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, POLICY, extra=("--no-scheduler",))


def test_the_documented_policy_refuses_a_deployment_with_too_many_replicas(kubectl: Kubectl) -> None:
    refused = kubectl("-n", "test", "create", "deployment", "nginx", "--image=nginx", "--replicas=6", check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip() == (
        "error: failed to create deployment: deployments.apps \"nginx\" is forbidden: ValidatingAdmissionPolicy "
        "'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: "
        "object.spec.replicas <= 5")
    kubectl("-n", "test", "create", "deployment", "nginx", "--image=nginx", "--replicas=5")
    kubectl("create", "deployment", "nginx", "--image=nginx", "--replicas=6")  # default: not selected
    table = kubectl("get", "validatingadmissionpolicies,validatingadmissionpolicybindings").stdout.splitlines()
    assert table[0].split() == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert table[1].split()[:3] == ["validatingadmissionpolicy.admissionregistration.k8s.io/demo-policy.example.com",
                                    "1", "<unset>"]


def test_an_applied_manifest_is_refused_with_the_documented_text(kubectl: Kubectl) -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: test}
spec:
  replicas: 6
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: nginx}]}
"""
    refused = kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert refused.returncode != 0
    # the documentation's text: kubectl prints an Invalid Status with its causes
    assert ("The deployments \"nginx\" is invalid: : ValidatingAdmissionPolicy 'demo-policy.example.com' with "
            "binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5"
            in refused.stderr), refused.stderr


def test_a_warn_binding_is_printed_as_a_warning(kubectl: Kubectl) -> None:
    warn = POLICY.split("---\n")[-1].replace("demo-binding-test", "demo-binding-warn").replace("[Deny]", "[Warn]")
    kubectl("apply", "-f", "-", stdin=warn.replace("environment: test", "environment: warned"))
    kubectl("create", "namespace", "warned")
    kubectl("label", "namespace", "warned", "environment=warned")
    made = kubectl("-n", "warned", "create", "deployment", "nginx", "--image=nginx", "--replicas=6")
    assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding "
            "'demo-binding-warn.example.com': failed expression: object.spec.replicas <= 5") in made.stderr


def test_a_webhook_configuration_applies_with_a_warning_and_is_listed(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", "-", stdin=WEBHOOK)
    assert ("Warning: dralloc serve does not call admission webhooks: the webhooks of ValidatingWebhookConfiguration "
            "'cert-manager-webhook' are stored but never called") in applied.stderr
    table = kubectl("get", "validatingwebhookconfigurations").stdout.splitlines()
    assert table[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert table[1].split()[:2] == ["cert-manager-webhook", "1"]


DRIVER_POLICY = (Path(__file__).parent / "data" / "dra-example-driver-admission-policy.yaml").read_text()
DRIVER = "dra-example-driver"
PLUGIN_ACCOUNT = "dra-example-driver-service-account"
NODES = """apiVersion: v1
kind: Node
metadata: {name: node-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
"""


def _slice(node: str) -> str:
    return (f'{{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {{"name": "{node}-gpu"}}, '
            f'"spec": {{"driver": "gpu.example.com", "nodeName": "{node}", "pool": {{"name": "{node}", '
            f'"resourceSliceCount": 1}}, "devices": [{{"name": "gpu-0"}}]}}}}')


@pytest.fixture
def driver_kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, NODES + "---\n" + DRIVER_POLICY)


def test_a_dra_drivers_own_policy_lets_its_kubelet_plugin_write_only_its_nodes_slices(driver_kubectl: Kubectl) -> None:
    # The chart's policy reads the requester's node from its service account token (request.userInfo.extra, an
    # optional index, .?nodeName.orValue): a token bound to the plugin's pod on node-a carries that node.
    run = driver_kubectl
    run("create", "namespace", DRIVER)
    run("create", "serviceaccount", PLUGIN_ACCOUNT, "-n", DRIVER)
    unbound = run("create", "token", PLUGIN_ACCOUNT, "-n", DRIVER).stdout.strip()
    refused = run("--token", unbound, "create", "-f", "-", stdin=_slice("node-a"), check=False)
    assert refused.returncode == 1 and (
        "ValidatingAdmissionPolicy 'resourceslices-policy-dra-example-driver' with binding "
        "'resourceslices-policy-dra-example-driver' denied request: no node association found for user, this user "
        "must run in a pod on a node and ServiceAccountTokenPodNodeInfo must be enabled") in refused.stderr
    run("run", "plugin", "-n", DRIVER, "--image=registry.example/plugin:1",
        "--overrides=" + json.dumps({"spec": {"nodeName": "node-a", "serviceAccountName": PLUGIN_ACCOUNT}}))
    bound = run("create", "token", PLUGIN_ACCOUNT, "-n", DRIVER, "--bound-object-kind", "Pod",
                "--bound-object-name", "plugin").stdout.strip()
    assert run("--token", bound, "create", "-f", "-", stdin=_slice("node-a")).returncode == 0
    other = run("--token", bound, "create", "-f", "-", stdin=_slice("node-b"), check=False)
    assert other.returncode == 1 and ("denied request: this user running on node 'node-a' may not modify "
                                      "resourceslices on node 'node-b'") in other.stderr
    # the policy binds only the plugin's account: the cluster's admin writes any node's slices
    assert run("create", "-f", "-", stdin=_slice("node-b")).returncode == 0
