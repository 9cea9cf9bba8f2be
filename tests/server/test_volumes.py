"""The storage kinds served writable: PersistentVolumeClaims and PersistentVolumes (core/v1), StorageClasses,
CSIDrivers, CSINodes, CSIStorageCapacities and VolumeAttachments (storage.k8s.io/v1), with kube-apiserver's
defaults, validation texts, admission (DefaultStorageClass, the protection finalizers) and columns."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.registry.storage import default_class_name  # noqa: E402

PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
PVS = "/api/v1/persistentvolumes"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
STORAGE = "/apis/storage.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def claim(name: str = "data", size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}}


def volume(name: str = "pv-1", size: str = "5Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/data"}, **spec}}


def storage_class(name: str = "fast", default: bool = False, **fields: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "example.com/csi", **fields}


def message(r: Any) -> str:
    return str(r.json()["message"])


# --- PersistentVolumeClaims ---------------------------------------------------------------------------

def test_a_claim_is_created_pending_with_its_defaults_and_the_protection_finalizer(client: TestClient) -> None:
    r = client.post(PVCS, json=claim())
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["status"] == {"phase": "Pending"}
    assert made["spec"]["volumeMode"] == "Filesystem"
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert "storageClassName" not in made["spec"]  # no default class


def test_a_claim_without_a_class_gets_the_default_class(client: TestClient) -> None:
    assert client.post(CLASSES, json=storage_class("slow")).status_code == 201
    assert client.post(CLASSES, json=storage_class("standard", default=True)).status_code == 201
    assert client.post(PVCS, json=claim("a")).json()["spec"]["storageClassName"] == "standard"
    # one that names a class, even "", keeps it; so does one with the beta annotation
    assert client.post(PVCS, json=claim("b", storageClassName="")).json()["spec"]["storageClassName"] == ""
    beta = claim("c")
    beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "slow"}
    assert "storageClassName" not in client.post(PVCS, json=beta).json()["spec"]


def test_of_several_default_classes_the_newest_wins() -> None:
    def sc(name: str, created: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "creationTimestamp": created,
                             "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"}}}
    assert default_class_name([sc("b", "2026-01-01T00:00:00Z"), sc("a", "2026-01-02T00:00:00Z")]) == "a"
    assert default_class_name([sc("b", "2026-01-01T00:00:00Z"), sc("a", "2026-01-01T00:00:00Z")]) == "a"
    assert default_class_name([{"metadata": {"name": "x"}}]) is None


def test_a_claim_needs_access_modes_and_a_storage_request(client: TestClient) -> None:
    bad = claim()
    bad["spec"] = {"resources": {}}
    r = client.post(PVCS, json=bad)
    assert r.status_code == 422
    assert message(r) == ('PersistentVolumeClaim "data" is invalid: [spec.accessModes: Required value: at least 1 '
                          'access mode is required, spec.resources[storage]: Required value]')


def test_a_claim_spec_is_immutable_but_for_expansion_once_bound(client: TestClient) -> None:
    made = client.post(PVCS, json=claim()).json()
    changed = {**made, "spec": {**made["spec"], "accessModes": ["ReadWriteMany"]}}
    r = client.put(f"{PVCS}/data", json=changed)
    assert r.status_code == 422 and message(r) == (
        'PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except '
        'resources.requests and volumeAttributesClassName for bound claims')
    bigger = {**made, "spec": {**made["spec"], "resources": {"requests": {"storage": "2Gi"}}}}
    assert client.put(f"{PVCS}/data", json=bigger).status_code == 422  # not bound: no expansion
    # bound (as the PV controller writes it): the request may grow, not shrink below the capacity
    status = {**made, "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    bound = client.put(f"{PVCS}/data/status", json=status)
    assert bound.status_code == 200, bound.text
    bigger["metadata"]["resourceVersion"] = bound.json()["metadata"]["resourceVersion"]
    grown = client.put(f"{PVCS}/data", json=bigger)
    assert grown.status_code == 200, grown.text
    smaller = {**grown.json(), "spec": {**grown.json()["spec"], "resources": {"requests": {"storage": "512Mi"}}}}
    r = client.put(f"{PVCS}/data", json=smaller)
    assert r.status_code == 422 and message(r) == ('PersistentVolumeClaim "data" is invalid: '
                                                   'spec.resources.requests.storage: Forbidden: field can not be '
                                                   'less than status.capacity')


def test_the_volume_name_may_be_set_once(client: TestClient) -> None:
    made = client.post(PVCS, json=claim()).json()
    named = client.put(f"{PVCS}/data", json={**made, "spec": {**made["spec"], "volumeName": "pv-1"}})
    assert named.status_code == 200, named.text
    again = named.json()
    r = client.put(f"{PVCS}/data", json={**again, "spec": {**again["spec"], "volumeName": "pv-2"}})
    assert r.status_code == 422 and "spec is immutable after creation" in message(r)


def test_the_main_endpoint_keeps_the_status(client: TestClient) -> None:
    made = client.post(PVCS, json=claim()).json()
    r = client.put(f"{PVCS}/data", json={**made, "status": {"phase": "Bound"}})
    assert r.status_code == 200 and r.json()["status"] == {"phase": "Pending"}


# --- PersistentVolumes --------------------------------------------------------------------------------

def test_a_volume_is_created_pending_with_retain_and_its_finalizer(client: TestClient) -> None:
    r = client.post(PVS, json=volume())
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["status"]["phase"] == "Pending" and "lastPhaseTransitionTime" in made["status"]
    assert made["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert made["spec"]["volumeMode"] == "Filesystem"
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]


def test_a_volume_has_exactly_one_source(client: TestClient) -> None:
    none = volume()
    del none["spec"]["hostPath"]
    r = client.post(PVS, json=none)
    assert r.status_code == 422 and message(r) == ('PersistentVolume "pv-1" is invalid: spec: Required value: '
                                                   'must specify a volume type')
    two = volume(nfs={"server": "nfs", "path": "/x"})
    r = client.post(PVS, json=two)
    assert r.status_code == 422 and message(r) == ('PersistentVolume "pv-1" is invalid: spec.nfs: Forbidden: may '
                                                   'not specify more than 1 volume type')


def test_a_volume_needs_capacity_and_access_modes(client: TestClient) -> None:
    bad = volume()
    del bad["spec"]["capacity"], bad["spec"]["accessModes"]
    r = client.post(PVS, json=bad)
    assert r.status_code == 422 and message(r) == ('PersistentVolume "pv-1" is invalid: [spec.accessModes: '
                                                   'Required value, spec.capacity: Required value]')


def test_a_volume_source_and_mode_never_change(client: TestClient) -> None:
    made = client.post(PVS, json=volume()).json()
    r = client.put(f"{PVS}/pv-1", json={**made, "spec": {**made["spec"], "hostPath": {"path": "/other"}}})
    assert r.status_code == 422 and message(r) == ('PersistentVolume "pv-1" is invalid: spec.persistentvolumesource: '
                                                   'Forbidden: spec.persistentvolumesource is immutable after creation')
    r = client.put(f"{PVS}/pv-1", json={**made, "spec": {**made["spec"], "volumeMode": "Block"}})
    assert r.status_code == 422 and message(r) == ('PersistentVolume "pv-1" is invalid: volumeMode: Invalid value: '
                                                   '"Block": field is immutable')
    grown = client.put(f"{PVS}/pv-1", json={**made, "spec": {**made["spec"], "capacity": {"storage": "10Gi"}}})
    assert grown.status_code == 200, grown.text


def test_a_volume_phase_change_through_status_stamps_its_time(client: TestClient) -> None:
    made = client.post(PVS, json=volume()).json()
    r = client.put(f"{PVS}/pv-1/status", json={**made, "status": {"phase": "Available"}})
    assert r.status_code == 200 and r.json()["status"]["phase"] == "Available"
    assert r.json()["status"]["lastPhaseTransitionTime"]


# --- storage.k8s.io -----------------------------------------------------------------------------------

def test_a_storage_class_is_defaulted_and_what_it_provisions_with_never_changes(client: TestClient) -> None:
    r = client.post(CLASSES, json=storage_class(parameters={"type": "ssd"}))
    assert r.status_code == 201, r.text
    made = r.json()
    assert (made["reclaimPolicy"], made["volumeBindingMode"]) == ("Delete", "Immediate")
    changed = {**made, "parameters": {"type": "hdd"}, "provisioner": "other.example.com",
               "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}
    r = client.put(f"{CLASSES}/fast", json=changed)
    assert r.status_code == 422 and message(r) == (
        'StorageClass.storage.k8s.io "fast" is invalid: [parameters: Forbidden: updates to parameters are '
        'forbidden., provisioner: Forbidden: updates to provisioner are forbidden., reclaimPolicy: Forbidden: '
        'updates to reclaimPolicy are forbidden., volumeBindingMode: Invalid value: "WaitForFirstConsumer": '
        'field is immutable]')
    r = client.put(f"{CLASSES}/fast", json={**made, "allowVolumeExpansion": True})
    assert r.status_code == 200 and r.json()["allowVolumeExpansion"] is True


def test_a_storage_class_needs_a_provisioner(client: TestClient) -> None:
    bad = storage_class()
    del bad["provisioner"]
    r = client.post(CLASSES, json=bad)
    assert r.status_code == 422 and message(r) == ('StorageClass.storage.k8s.io "fast" is invalid: provisioner: '
                                                   'Required value')


def test_a_csi_driver_gets_kube_apiservers_defaults(client: TestClient) -> None:
    r = client.post(f"{STORAGE}/csidrivers", json={"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                                   "metadata": {"name": "example.com"}, "spec": {}})
    assert r.status_code == 201, r.text
    assert r.json()["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                                "requiresRepublish": False, "seLinuxMount": False}
    bad = client.post(f"{STORAGE}/csidrivers", json={"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                                     "metadata": {"name": "b.example.com"},
                                                     "spec": {"fsGroupPolicy": "Sometimes"}})
    assert bad.status_code == 422 and message(bad) == (
        'CSIDriver.storage.k8s.io "b.example.com" is invalid: spec.fsGroupPolicy: Unsupported value: "Sometimes": '
        'supported values: "File", "None", "ReadWriteOnceWithFSType"')


def test_csi_nodes_capacities_and_attachments_are_stored(client: TestClient) -> None:
    node = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-1"},
            "spec": {"drivers": [{"name": "example.com", "nodeID": "n1", "topologyKeys": ["zone"]}]}}
    assert client.post(f"{STORAGE}/csinodes", json=node).status_code == 201
    cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "c1"},
           "storageClassName": "fast", "capacity": "100Gi"}
    assert client.post(f"{STORAGE}/namespaces/default/csistoragecapacities", json=cap).status_code == 201
    va = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va-1"},
          "spec": {"attacher": "example.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}}}
    assert client.post(f"{STORAGE}/volumeattachments", json=va).status_code == 201
    table = client.get(f"{STORAGE}/volumeattachments", headers=TABLE).json()
    assert table["rows"][0]["cells"][:5] == ["va-1", "example.com", "pv-1", "node-1", False]
    assert client.get(f"{STORAGE}/csinodes", headers=TABLE).json()["rows"][0]["cells"][:2] == ["node-1", 1]


# --- columns ------------------------------------------------------------------------------------------

def test_kubectl_columns_of_claims_volumes_and_classes(client: TestClient) -> None:
    client.post(CLASSES, json=storage_class("standard", default=True, volumeBindingMode="WaitForFirstConsumer"))
    client.post(PVCS, json=claim())
    table = client.get(PVCS, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
        "VolumeMode"]
    assert table["rows"][0]["cells"][:7] == ["data", "Pending", "", "", "", "standard", "<unset>"]
    client.post(PVS, json=volume(claimRef={"namespace": "default", "name": "data"}, storageClassName="standard",
                                 accessModes=["ReadWriteOnce", "ReadOnlyMany"]))
    table = client.get(PVS, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
        "VolumeAttributesClass", "Reason", "Age", "VolumeMode"]
    assert table["rows"][0]["cells"][:9] == ["pv-1", "5Gi", "RWO,ROX", "Retain", "Pending", "default/data",
                                             "standard", "<unset>", ""]
    table = client.get(CLASSES, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"]
    assert table["rows"][0]["cells"][:5] == ["standard (default)", "example.com/csi", "Delete",
                                             "WaitForFirstConsumer", False]
