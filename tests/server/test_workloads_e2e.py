"""End to end with the real kubectl: `dralloc serve --fake-kubelet` runs Deployments (create, scale, set image,
rollout status, delete), DaemonSets, Jobs, and a DRA driver's install manifest applied as it is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from served import Kubectl, eventually, kubectl_session

pytestmark = pytest.mark.e2e

NODES = "\n---\n".join(f"""apiVersion: v1
kind: Node
metadata: {{name: node-{i}}}
status:
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}""" for i in (1, 2))

# What dra-example-driver's chart installs (its namespace, service account, RBAC, class and kubelet plugin)
DRIVER = """apiVersion: v1
kind: Namespace
metadata: {name: dra-example-driver}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: dra-example-driver-service-account, namespace: dra-example-driver}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: dra-example-driver-role}
rules:
- apiGroups: ["resource.k8s.io"]
  resources: ["resourceclaims"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get"]
- apiGroups: ["resource.k8s.io"]
  resources: ["resourceslices"]
  verbs: ["list", "watch", "create", "update", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: dra-example-driver-role-binding}
subjects:
- kind: ServiceAccount
  name: dra-example-driver-service-account
  namespace: dra-example-driver
roleRef:
  kind: ClusterRole
  name: dra-example-driver-role
  apiGroup: rbac.authorization.k8s.io
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dra-example-driver-kubeletplugin, namespace: dra-example-driver}
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: dra-example-driver}
  updateStrategy: {type: RollingUpdate}
  template:
    metadata:
      labels: {app.kubernetes.io/name: dra-example-driver}
    spec:
      serviceAccountName: dra-example-driver-service-account
      containers:
      - name: plugin
        image: registry.k8s.io/dra-example-driver/dra-example-driver:v0.2.0
        command: ["dra-example-kubeletplugin"]
        env:
        - name: NODE_NAME
          valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
        securityContext: {privileged: true}
        volumeMounts:
        - {name: plugins-registry, mountPath: /var/lib/kubelet/plugins_registry}
      volumes:
      - name: plugins-registry
        hostPath: {path: /var/lib/kubelet/plugins_registry}
"""

AGENT = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "busybox:1"}]
"""

@pytest.fixture
def kubectl(tmp_path: Path) -> Iterator[Kubectl]:
    yield from kubectl_session(tmp_path, NODES)


_eventually = eventually


def _pods(kubectl: Kubectl, *selector: str) -> list[list[str]]:
    out = kubectl("get", "pods", "--no-headers", "-o", "wide", *selector).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def test_a_deployment_is_created_scaled_rolled_out_and_deleted(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    kubectl("wait", "--for=condition=Available", "deployment/web", "--timeout=30s")
    running = _pods(kubectl, "-l", "app=web")
    assert len(running) == 2 and all(p[2] == "Running" and p[6].startswith("node-") for p in running)
    kubectl("scale", "deployment/web", "--replicas=3")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert len(_pods(kubectl, "-l", "app=web")) == 3
    kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    _eventually(lambda: len(_pods(kubectl, "-l", "app=web")) == 3)
    images = kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].spec.containers[0].image}").stdout
    assert images.split() == ["nginx:2"] * 3
    table = kubectl("get", "deployment", "web").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert table[1].split()[:4] == ["web", "3/3", "3", "3"]
    assert len(kubectl("get", "rs", "--no-headers").stdout.splitlines()) == 2
    kubectl("delete", "deployment", "web")
    _eventually(lambda: not _pods(kubectl, "-l", "app=web")
                and not kubectl("get", "rs", "--no-headers").stdout.strip())


def test_a_daemonset_gets_a_pod_on_every_node_and_a_job_completes(kubectl: Kubectl) -> None:
    kubectl("create", "job", "pi", "--image=perl:5", "--", "perl", "-e", "print 1")
    kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=30s")
    assert kubectl("get", "job", "pi", "--no-headers").stdout.split()[1:3] == ["Complete", "1/1"]
    kubectl("apply", "-f", "-", stdin=AGENT)
    kubectl("rollout", "status", "daemonset/agent", "--timeout=30s")
    assert sorted(p[6] for p in _pods(kubectl, "-l", "app=agent")) == ["node-1", "node-2"]
    kubectl("apply", "-f", "-", stdin=NODES.replace("node-1", "node-3").split("---")[0])
    _eventually(lambda: len(_pods(kubectl, "-l", "app=agent")) == 3)


def test_a_dra_drivers_install_manifest_applies_and_its_kubelet_plugin_pods_are_scheduled(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", "-", stdin=DRIVER).stdout
    assert "clusterrolebinding.rbac.authorization.k8s.io/dra-example-driver-role-binding created" in applied
    assert "daemonset.apps/dra-example-driver-kubeletplugin created" in applied
    kubectl("rollout", "status", "-n", "dra-example-driver", "daemonset/dra-example-driver-kubeletplugin",
            "--timeout=30s")
    pods = _pods(kubectl, "-n", "dra-example-driver")
    assert sorted(p[6] for p in pods) == ["node-1", "node-2"] and all(p[2] == "Running" for p in pods)
    again = kubectl("apply", "-f", "-", stdin=DRIVER).stdout  # the same manifest again: nothing changes
    assert "daemonset.apps/dra-example-driver-kubeletplugin unchanged" in again
    resources = kubectl("api-resources", "--api-group=rbac.authorization.k8s.io", "--no-headers").stdout
    assert sorted(line.split()[0] for line in resources.splitlines()) == [
        "clusterrolebindings", "clusterroles", "rolebindings", "roles"]
    assert "DESCRIPTION" in kubectl("explain", "deployment").stdout


def test_a_list_of_workloads_with_fields_dralloc_does_not_model_is_created_as_kubectl_checks_it(
        kubectl: Kubectl) -> None:
    """kubectl checks a List's items against /openapi/v2 on the client: a Deployment's container env, which
    dralloc's models leave out, must pass."""
    items = """apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: api}
  spec:
    selector: {matchLabels: {app: api}}
    template:
      metadata: {labels: {app: api}}
      spec:
        containers:
        - name: api
          image: "api:1"
          env: [{name: MODE, value: fast}]
          readinessProbe: {httpGet: {path: /healthz, port: 8080}}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: reader}
  rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
"""
    created = kubectl("create", "-f", "-", stdin=items).stdout
    assert "deployment.apps/api created" in created and "role.rbac.authorization.k8s.io/reader created" in created
    env = kubectl("get", "deploy", "api", "-o", "jsonpath={.spec.template.spec.containers[0].env[0].value}").stdout
    assert env == "fast"


def test_a_changed_manifest_applied_again_rolls_the_deployment_out(kubectl: Kubectl) -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: "app:1"
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
"""
    kubectl("apply", "-f", "-", stdin=manifest)
    kubectl("rollout", "status", "deployment/app", "--timeout=30s")
    changed = manifest.replace("app:1", "app:2").replace('{name: B, value: "2"}', '{name: C, value: "3"}')
    assert "deployment.apps/app configured" in kubectl("apply", "-f", "-", stdin=changed).stdout
    kubectl("rollout", "status", "deployment/app", "--timeout=30s")
    container = kubectl("get", "deploy", "app", "-o", "jsonpath={.spec.template.spec.containers[0]}").stdout
    assert '"image":"app:2"' in container and '"name":"C"' in container and '"name":"B"' not in container
    _eventually(lambda: kubectl("get", "pods", "-l", "app=app", "-o",
                                "jsonpath={.items[*].spec.containers[0].image}").stdout.split() == ["app:2"] * 2)


def test_rollout_history_undo_and_restart(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    history = kubectl("rollout", "history", "deployment/web").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    kubectl("rollout", "undo", "deployment/web")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    image = kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}").stdout
    assert image == "nginx:1"
    revision = kubectl("get", "deploy", "web", "-o",
                       "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}").stdout
    assert revision == "3"  # the old template back, as the newest revision
    assert len(kubectl("get", "rs", "--no-headers").stdout.splitlines()) == 2  # its ReplicaSet, not a new one
    kubectl("rollout", "restart", "deployment/web")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    _eventually(lambda: len(kubectl("get", "rs", "--no-headers").stdout.splitlines()) == 3)
