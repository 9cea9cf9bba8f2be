"""End to end with the real kubectl on `dralloc serve`: the `kubectl create <kind>` subcommands whose typed
clients send protobuf bodies (cronjob, role, rolebinding, clusterrole, clusterrolebinding, priorityclass,
poddisruptionbudget, serviceaccount, secret docker-registry) each create their object, and `kubectl get -o
json` shows the fields the body carried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from served import Kubectl, kubectl_session

pytestmark = pytest.mark.e2e

NAMESPACE = """apiVersion: v1
kind: Namespace
metadata: {name: team}"""


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path_factory.mktemp("protobuf-kinds"), NAMESPACE, extra=())


def _get(kubectl: Kubectl, *what: str) -> Any:
    return json.loads(kubectl("get", *what, "-o", "json").stdout)


def test_kubectl_create_cronjob(kubectl: Kubectl) -> None:
    out = kubectl("create", "cronjob", "tick", "-n", "team", "--image=busybox", "--schedule=*/1 * * * *",
                  "--restart=OnFailure", "--", "date").stdout
    assert out == "cronjob.batch/tick created\n"
    cronjob = _get(kubectl, "cronjob", "tick", "-n", "team")
    assert cronjob["spec"]["schedule"] == "*/1 * * * *"
    template = cronjob["spec"]["jobTemplate"]
    assert template["metadata"]["name"] == "tick"
    pod_spec = template["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "OnFailure"
    assert [(c["name"], c["image"], c["command"]) for c in pod_spec["containers"]] == [("tick", "busybox", ["date"])]
    assert cronjob["spec"]["concurrencyPolicy"] == "Allow"  # (the server's default: kubectl sends none)


def test_kubectl_create_role_and_rolebinding(kubectl: Kubectl) -> None:
    assert kubectl("create", "role", "reader", "-n", "team", "--verb=get,list", "--resource=pods,deployments.apps",
                   "--resource-name=web").stdout == "role.rbac.authorization.k8s.io/reader created\n"
    role = _get(kubectl, "role", "reader", "-n", "team")
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"],
                              "resourceNames": ["web"]},
                             {"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"],
                              "resourceNames": ["web"]}]
    assert kubectl("create", "rolebinding", "read", "-n", "team", "--role=reader", "--user=jane",
                   "--serviceaccount=team:driver").stdout == \
        "rolebinding.rbac.authorization.k8s.io/read created\n"
    binding = _get(kubectl, "rolebinding", "read", "-n", "team")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    assert binding["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"},
                                   {"kind": "ServiceAccount", "name": "driver", "namespace": "team"}]


def test_kubectl_create_clusterrole_and_clusterrolebinding(kubectl: Kubectl) -> None:
    kubectl("create", "clusterrole", "health", "--verb=get", "--non-resource-url=/healthz")
    assert _get(kubectl, "clusterrole", "health")["rules"] == [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]
    kubectl("create", "clusterrole", "viewers", "--aggregation-rule=rbac.example.com/aggregate-to-view=true")
    viewers = _get(kubectl, "clusterrole", "viewers")
    assert viewers["aggregationRule"] == {"clusterRoleSelectors": [
        {"matchLabels": {"rbac.example.com/aggregate-to-view": "true"}}]}
    assert kubectl("create", "clusterrolebinding", "health", "--clusterrole=health", "--group=ops").stdout == \
        "clusterrolebinding.rbac.authorization.k8s.io/health created\n"
    binding = _get(kubectl, "clusterrolebinding", "health")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "health"}
    assert binding["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "ops"}]


def test_kubectl_create_the_other_kinds_of_typed_clients(kubectl: Kubectl) -> None:
    kubectl("create", "priorityclass", "batch-low", "--value=-10", "--description=later",
            "--preemption-policy=Never")
    priority = _get(kubectl, "priorityclass", "batch-low")
    assert (priority["value"], priority["description"], priority["preemptionPolicy"]) == (-10, "later", "Never")
    kubectl("create", "poddisruptionbudget", "web", "-n", "team", "--selector=app=web", "--min-available=50%")
    budget = _get(kubectl, "pdb", "web", "-n", "team")["spec"]
    assert budget["minAvailable"] == "50%" and budget["selector"] == {"matchLabels": {"app": "web"}}
    kubectl("create", "serviceaccount", "driver", "-n", "team")
    assert _get(kubectl, "serviceaccount", "driver", "-n", "team")["metadata"]["name"] == "driver"
    kubectl("create", "secret", "docker-registry", "pull", "-n", "team", "--docker-server=registry.example",
            "--docker-username=u", "--docker-password=p")
    secret = _get(kubectl, "secret", "pull", "-n", "team")
    assert secret["type"] == "kubernetes.io/dockerconfigjson" and ".dockerconfigjson" in secret["data"]

