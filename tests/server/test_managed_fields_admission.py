"""A writer's managedFields entry is recorded on its object as kube-apiserver's decoding leaves it (the
SetDefaults_* of the kind, the v1 conversion), before mutating admission and the strategy's PrepareForCreate /
PrepareForUpdate: the writer owns a port's protocol and the pod spec's defaults, and nobody owns what the
ServiceAccount, Priority and DefaultTolerationSeconds admission add (the token volume and its mounts, the
service account, the priority, the not-ready/unreachable tolerations), nor a namespace's ``kubernetes``
finalizer."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
from cluster import api_client
from served import KUBECTL, Server

warnings.filterwarnings("ignore", message="Using `httpx`")

PODS = "/api/v1/namespaces/ns/pods"
KUBECTL_CREATE = {"user-agent": "kubectl-create/v1.36.0 (linux/amd64) kubernetes/abcdef"}
APPLY = {"content-type": "application/apply-patch+yaml"}


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"run": name}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1", "ports": [{"containerPort": 80}]}],
                     **spec}}


def entry(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    [found] = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return found


# What a kube-apiserver 1.36 records for ``kubectl create`` of the pod above (the ``kubectl run`` shape):
# decoding's defaults are the writer's; the service account, its token volume and mounts, the priority, the
# preemption policy and the default tolerations are not in it.
KUBECTL_CREATE_FIELDS = {
    "f:metadata": {"f:labels": {".": {}, "f:run": {}}},
    "f:spec": {
        "f:containers": {'k:{"name":"main"}': {
            ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
            "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
                ".": {}, "f:containerPort": {}, "f:protocol": {}}},
            "f:resources": {}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
        "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
        "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}}


def test_a_pod_create_owns_what_decoding_filled_in_and_nothing_admission_added() -> None:
    http = api_client("ns")
    r = http.post(PODS, json=pod(), headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    created = r.json()
    spec = created["spec"]  # admission did run: the object has what it adds
    assert spec["serviceAccountName"] == "default" and spec["priority"] == 0
    assert [t["key"] for t in spec["tolerations"]] == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
    assert spec["volumes"][0]["name"].startswith("kube-api-access-")
    assert entry(created, "kubectl-create")["fieldsV1"] == KUBECTL_CREATE_FIELDS
    assert created["metadata"]["managedFields"] == http.get(f"{PODS}/p").json()["metadata"]["managedFields"]


def test_a_pod_naming_its_service_account_owns_the_name_and_its_v1_mirror() -> None:
    http = api_client("ns")
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"}}
    assert http.post("/api/v1/namespaces/ns/serviceaccounts", json=account).status_code == 201
    r = http.post(PODS, json=pod(serviceAccountName="builder"), headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    owned = entry(r.json(), "kubectl-create")["fieldsV1"]["f:spec"]
    # the v1 conversion writes the name in the deprecated field too: both are the writer's, as decoded
    assert {"f:serviceAccount", "f:serviceAccountName"} <= owned.keys()
    assert not {"f:priority", "f:preemptionPolicy", "f:tolerations", "f:volumes"} & owned.keys()


def test_a_priority_from_a_class_is_not_owned_by_the_writer_that_named_the_class() -> None:
    http = api_client("ns")
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000}
    assert http.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=high).status_code == 201
    r = http.post(PODS, json=pod(priorityClassName="high"), headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["priority"] == 1000
    owned = entry(r.json(), "kubectl-create")["fieldsV1"]["f:spec"]
    assert "f:priorityClassName" in owned and "f:priority" not in owned and "f:preemptionPolicy" not in owned


def test_another_managers_apply_of_the_tolerations_admission_added_does_not_conflict_with_the_creator() -> None:
    http = api_client("ns")
    created = http.post(PODS, json=pod(), headers=KUBECTL_CREATE).json()
    tolerations = [*created["spec"]["tolerations"], {"key": "example.com/maintenance", "operator": "Exists"}]
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"tolerations": tolerations}}
    r = http.patch(f"{PODS}/p?fieldManager=ops", content=json.dumps(config), headers=APPLY)
    assert r.status_code == 200, r.text
    applied = r.json()
    assert applied["spec"]["tolerations"] == tolerations
    assert entry(applied, "ops")["fieldsV1"] == {"f:spec": {"f:tolerations": {}}}
    assert entry(applied, "kubectl-create")["fieldsV1"] == KUBECTL_CREATE_FIELDS


def test_a_server_side_apply_create_owns_exactly_its_configuration() -> None:
    http = api_client("ns")
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
              "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}
    r = http.patch(f"{PODS}/p?fieldManager=kubectl", content=json.dumps(config), headers=APPLY)
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["managedFields"] == [{**entry(r.json(), "kubectl"), "fieldsV1": {
        "f:spec": {"f:containers": {'k:{"name":"main"}': {".": {}, "f:image": {}, "f:name": {}}}}}}]


@pytest.mark.parametrize("how", ["put", "merge", "strategic", "json"])
def test_an_update_owns_what_it_changed_as_decoded_and_nothing_admission_keeps(how: str) -> None:
    http = api_client("ns")
    created = http.post(PODS, json=pod(), headers=KUBECTL_CREATE).json()
    headers = {"user-agent": "editor/1.0"}
    if how == "put":
        body = {**created, "metadata": {**created["metadata"], "labels": {"run": "p", "tier": "web"}}}
        r = http.put(f"{PODS}/p", json=body, headers=headers)
    elif how == "json":
        ops = [{"op": "add", "path": "/metadata/labels/tier", "value": "web"}]
        r = http.patch(f"{PODS}/p", content=json.dumps(ops),
                       headers={**headers, "content-type": "application/json-patch+json"})
    else:
        ctype = "application/merge-patch+json" if how == "merge" else "application/strategic-merge-patch+json"
        r = http.patch(f"{PODS}/p", content=json.dumps({"metadata": {"labels": {"tier": "web"}}}),
                       headers={**headers, "content-type": ctype})
    assert r.status_code == 200, r.text
    assert entry(r.json(), "editor")["fieldsV1"] == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    assert entry(r.json(), "kubectl-create")["fieldsV1"] == KUBECTL_CREATE_FIELDS


def test_an_update_that_leaves_out_the_priority_keeps_the_one_admission_gave() -> None:
    http = api_client("ns")
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000, "preemptionPolicy": "Never"}
    assert http.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=high).status_code == 201
    created = http.post(PODS, json=pod(priorityClassName="high")).json()
    spec = {k: v for k, v in created["spec"].items() if k not in ("priority", "preemptionPolicy")}
    r = http.put(f"{PODS}/p", json={**created, "spec": spec})  # a client that does not know the fields
    assert r.status_code == 200, r.text
    assert (r.json()["spec"]["priority"], r.json()["spec"]["preemptionPolicy"]) == (1000, "Never")


def test_a_namespace_create_owns_its_name_label_not_the_finalizer_its_strategy_adds() -> None:
    http = api_client()
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    r = http.post("/api/v1/namespaces", json=ns, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"finalizers": ["kubernetes"]}
    assert entry(r.json(), "kubectl-create")["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}}


def test_a_secrets_writer_owns_the_data_and_type_decoding_made_of_its_string_data() -> None:
    http = api_client("ns")
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"token": "x"}}
    r = http.post("/api/v1/namespaces/ns/secrets", json=secret, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert entry(r.json(), "kubectl-create")["fieldsV1"] == {"f:data": {".": {}, "f:token": {}}, "f:type": {}}


def test_a_deployments_writer_owns_its_decoded_defaults() -> None:
    http = api_client("ns")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
            "containers": [{"name": "main", "image": "nginx:1"}]}}}}
    r = http.post("/apis/apps/v1/namespaces/ns/deployments", json=deployment, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    owned = entry(r.json(), "kubectl-create")["fieldsV1"]["f:spec"]
    assert {"f:replicas", "f:revisionHistoryLimit", "f:progressDeadlineSeconds", "f:strategy"} <= owned.keys()
    assert "f:dnsPolicy" in owned["f:template"]["f:spec"]


PREEMPTION_GATES = frozenset({"GenericWorkload", "GangScheduling", "WorkloadAwarePreemption"})


def test_a_pod_groups_priority_from_admission_is_not_owned_by_its_writer() -> None:
    http = api_client(feature_gates=PREEMPTION_GATES)
    group = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
             "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    r = http.post("/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups", json=group,
                  headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["priority"] == 0
    owned = entry(r.json(), "kubectl-create")["fieldsV1"]["f:spec"]
    assert "f:schedulingPolicy" in owned and "f:priority" not in owned


# --- kubectl against ``dralloc serve`` ------------------------------------------------------------------

POD_YAML = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {run: web}}
spec:
  containers: [{name: main, image: "nginx:1", ports: [{containerPort: 80}]}]
"""
OPS_YAML = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
  - {key: example.com/maintenance, operator: Exists}
"""


@pytest.mark.e2e
@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_create_then_another_managers_server_side_apply_of_the_tolerations(tmp_path: Path) -> None:
    server = Server(tmp_path)
    try:
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(server.kubeconfig(tmp_path / "kubeconfig"))}

        def kubectl(*args: str, stdin: str | None = None) -> str:
            proc = subprocess.run([KUBECTL or "kubectl", *args], input=stdin, capture_output=True, text=True,
                                  env=env, timeout=60)
            assert proc.returncode == 0, proc.stderr
            return proc.stdout

        kubectl("create", "-f", "-", stdin=POD_YAML)
        kubectl("apply", "--server-side", "--field-manager=ops", "-f", "-", stdin=OPS_YAML)  # no conflict
        shown = json.loads(kubectl("get", "pod", "web", "-o", "json", "--show-managed-fields"))
        by_manager = {e["manager"]: e for e in shown["metadata"]["managedFields"]}
        assert by_manager["kubectl-create"]["operation"] == "Update"
        assert by_manager["kubectl-create"]["fieldsV1"] == {**KUBECTL_CREATE_FIELDS, "f:metadata": {
            "f:labels": {".": {}, "f:run": {}}}}
        assert by_manager["ops"]["operation"] == "Apply"
        assert by_manager["ops"]["fieldsV1"] == {"f:spec": {"f:tolerations": {}}}
        assert len(shown["spec"]["tolerations"]) == 3
        yaml_out = kubectl("get", "pod", "web", "-o", "yaml", "--show-managed-fields")
        assert "manager: kubectl-create" in yaml_out and "f:protocol: {}" in yaml_out
        assert "f:serviceAccountName" not in yaml_out and "f:priority" not in yaml_out
    finally:
        server.stop()


def test_a_claims_writer_owns_its_decoded_volume_mode_not_the_default_class_nor_the_protection_finalizer() -> None:
    http = api_client("ns")
    fast = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "example.com/csi",
            "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
    r = http.post("/apis/storage.k8s.io/v1/storageclasses", json=fast, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert {"f:reclaimPolicy", "f:volumeBindingMode"} <= entry(r.json(), "kubectl-create")["fieldsV1"].keys()
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    r = http.post("/api/v1/namespaces/ns/persistentvolumeclaims", json=claim, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["spec"]["storageClassName"] == "fast"  # DefaultStorageClass admission
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    owned = entry(created, "kubectl-create")["fieldsV1"]
    assert "f:volumeMode" in owned["f:spec"] and "f:storageClassName" not in owned["f:spec"]
    assert "f:metadata" not in owned


def test_a_custom_resources_writer_owns_its_schema_defaults_and_not_the_fields_pruning_dropped() -> None:
    http = api_client("ns")
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}}}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema}}]}}
    assert http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
              "spec": {"size": "small", "colour": "red"}}
    r = http.post("/apis/example.com/v1/namespaces/ns/gadgets", json=gadget, headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"size": "small", "replicas": 1}
    assert entry(r.json(), "kubectl-create")["fieldsV1"] == {
        "f:spec": {".": {}, "f:replicas": {}, "f:size": {}}}


def test_a_role_bindings_decoded_defaults_are_stored_and_owned_by_its_writer() -> None:
    http = api_client("ns")
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"},
               "roleRef": {"kind": "Role", "name": "reader"}, "subjects": [{"kind": "User", "name": "alice"}]}
    r = http.post("/apis/rbac.authorization.k8s.io/v1/namespaces/ns/rolebindings", json=binding,
                  headers=KUBECTL_CREATE)
    assert r.status_code == 201, r.text
    assert r.json()["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert r.json()["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"
    assert "f:apiGroup" in entry(r.json(), "kubectl-create")["fieldsV1"]["f:roleRef"]
