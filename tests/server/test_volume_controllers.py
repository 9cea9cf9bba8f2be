"""The volume controllers and the scheduler's volume plugins inside serve: the PV controller's binding, the
scheduler's PreBind for WaitForFirstConsumer claims, the simulated provisioner, reclaim, the protection
finalizers, the ephemeral volume controller, and kube-scheduler's FailedScheduling texts for volumes."""

from __future__ import annotations

from typing import Any

from cluster import NODE, NS, Cluster

PVCS = f"{NS}/persistentvolumeclaims"
PVS = "/api/v1/persistentvolumes"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str = "a") -> dict[str, Any]:
    return {**NODE, "metadata": {"name": name, "labels": {HOST: name, "topology.kubernetes.io/zone": zone}}}


def claim(name: str = "data", size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **spec}}


def volume(name: str, size: str = "5Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"},
                     **spec}}


def local_volume(name: str, host: str, size: str = "5Gi", **spec: Any) -> dict[str, Any]:
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": HOST, "operator": "In", "values": [host]}]}]}}
    return volume(name, size, nodeAffinity=affinity, **spec)


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "example.com/csi",
                  **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **fields}


def pod(name: str, *claims: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "x:1"}], "terminationGracePeriodSeconds": 0,
                     "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def unschedulable(reason: str) -> str:
    """kube-scheduler's FailedScheduling message on one node (with DynamicResources' and DefaultPreemption's
    PostFilter answers)."""
    return (f"0/1 nodes are available: {reason}. no new claims to deallocate, preemption: 0/1 nodes are "
            f"available: 1 Preemption is not helpful for scheduling.")


def failures(c: Cluster, name: str) -> list[str]:
    return [e["message"] for e in c.events("FailedScheduling") if e["involvedObject"]["name"] == name]


def test_an_immediate_claim_is_bound_to_the_smallest_volume_that_fits() -> None:
    c = Cluster()
    for name, size in (("big", "10Gi"), ("small", "2Gi"), ("tiny", "512Mi")):
        c.post(PVS, volume(name, size))
    c.post(PVCS, claim())
    c.settle()
    pvc, pv = c.get("persistentvolumeclaims", "data"), c.get("persistentvolumes", "small", "")
    assert pvc["spec"]["volumeName"] == "small"
    assert pvc["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    assert pvc["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                              "pv.kubernetes.io/bound-by-controller": "yes"}
    assert pv["status"]["phase"] == "Bound" and pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert c.get("persistentvolumes", "big", "")["status"]["phase"] == "Available"


def test_a_claim_without_a_match_or_class_stays_pending_with_the_controllers_event() -> None:
    c = Cluster()
    c.post(PVCS, claim(storageClassName=""))
    c.settle()
    assert c.get("persistentvolumeclaims", "data")["status"]["phase"] == "Pending"
    assert [e["message"] for e in c.events("FailedBinding")] == [
        "no persistent volumes available for this claim and no storage class is set"]


def test_a_pod_with_an_unbound_immediate_claim_waits_then_runs_once_a_volume_comes() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(PVCS, claim(storageClassName=""))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert failures(c, "web") == [unschedulable('pod has unbound immediate PersistentVolumeClaims')]
    c.post(PVS, volume("pv-1"))
    c.settle()
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-1"


def test_a_missing_claim_is_named_and_its_creation_retries_the_pod() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert failures(c, "web") == [unschedulable('persistentvolumeclaim "data" not found')]
    c.post(PVS, volume("pv-1"))
    c.post(PVCS, claim(storageClassName=""))
    c.settle()
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-1"


def test_wait_for_first_consumer_binds_a_local_volume_on_the_node_the_scheduler_picks() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post("/api/v1/nodes", node("node-2"))
    c.post(CLASSES, storage_class("local", provisioner="kubernetes.io/no-provisioner"))
    c.post(PVS, local_volume("local-2", "node-2", storageClassName="local"))
    c.post(PVCS, claim(storageClassName="local"))
    c.settle()
    assert c.get("persistentvolumeclaims", "data")["status"]["phase"] == "Pending"  # no consumer yet
    assert [e["message"] for e in c.events("WaitForFirstConsumer")] == [
        "waiting for first consumer to be created before binding"]
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-2"
    pvc = c.get("persistentvolumeclaims", "data")
    assert pvc["spec"]["volumeName"] == "local-2" and pvc["status"]["phase"] == "Bound"


def test_a_volume_of_another_zone_conflicts_with_every_node() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1", zone="a"))
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}
    c.post(PVS, volume("zonal", nodeAffinity=affinity, storageClassName=""))
    c.post(PVCS, claim(storageClassName=""))
    c.settle()
    assert c.get("persistentvolumeclaims", "data")["status"]["phase"] == "Bound"
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert failures(c, "web") == [unschedulable('1 node(s) had volume node affinity conflict')]


def test_without_a_volume_nor_provisioner_no_node_finds_one_to_bind() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("local", provisioner="kubernetes.io/no-provisioner"))
    c.post(PVCS, claim(storageClassName="local"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert failures(c, "web") == [unschedulable("1 node(s) didn't find available persistent volumes to bind")]


def test_a_claim_to_provision_gets_a_volume_on_the_selected_nodes_topology() -> None:
    c = Cluster(provision_volumes=True)
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("fast", reclaimPolicy="Retain", mountOptions=["noatime"]))
    made = c.post(PVCS, claim(storageClassName="fast"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-1"
    pvc = c.get("persistentvolumeclaims", "data")
    name = f"pvc-{made['metadata']['uid']}"
    assert pvc["spec"]["volumeName"] == name and pvc["status"]["phase"] == "Bound"
    annotations = pvc["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/selected-node"] == "node-1"
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "example.com/csi"
    pv = c.get("persistentvolumes", name, "")
    assert pv["spec"]["capacity"] == {"storage": "1Gi"} and pv["spec"]["csi"]["driver"] == "example.com/csi"
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and pv["spec"]["mountOptions"] == ["noatime"]
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": HOST, "operator": "In", "values": ["node-1"]}]}]
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "example.com/csi"
    assert [e["message"] for e in c.events("ProvisioningSucceeded")] == [f"Successfully provisioned volume {name}"]


def test_without_a_provisioner_a_claim_to_provision_holds_its_pod_in_prebind() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("fast"))
    c.post(PVCS, claim(storageClassName="fast"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert not c.get("pods", "web")["spec"].get("nodeName")
    pvc = c.get("persistentvolumeclaims", "data")
    assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-1"
    assert [e["reason"] for e in c.events("ExternalProvisioning")] == ["ExternalProvisioning"]


def test_a_claim_in_use_waits_on_its_protection_finalizer() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(PVS, volume("pv-1", persistentVolumeReclaimPolicy="Delete"))
    c.post(PVCS, claim(storageClassName=""))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert c.http.delete(f"{PVCS}/data").status_code in (200, 202)
    c.settle()
    held = c.get("persistentvolumeclaims", "data")
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert c.http.delete(f"{NS}/pods/web").status_code == 200
    c.settle()
    assert c.http.get(f"{PVCS}/data").status_code == 404
    # its volume (reclaim policy Delete) is released and deleted, its finalizer gone with the binding
    assert c.http.get(f"{PVS}/pv-1").status_code == 404


def test_a_retained_volume_stays_released() -> None:
    c = Cluster()
    c.post(PVS, volume("pv-1"))
    c.post(PVCS, claim(storageClassName=""))
    c.settle()
    assert c.http.delete(f"{PVCS}/data").status_code in (200, 202)
    c.settle()
    pv = c.get("persistentvolumes", "pv-1", "")
    assert pv["status"]["phase"] == "Released" and pv["spec"]["claimRef"]["name"] == "data"


def test_a_claim_whose_volume_is_gone_is_lost() -> None:
    c = Cluster()
    c.post(PVCS, claim(storageClassName="", volumeName="gone"))
    c.settle()
    assert c.get("persistentvolumeclaims", "data")["status"]["phase"] == "Lost"
    assert [e["message"] for e in c.events("ClaimLost")] == [
        "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!"]


def test_a_claim_without_a_class_gets_the_default_class_once_there_is_one() -> None:
    c = Cluster()
    c.post(PVCS, claim())
    c.settle()
    assert "storageClassName" not in c.get("persistentvolumeclaims", "data")["spec"]
    sc = storage_class("standard")
    sc["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    c.post(CLASSES, sc)
    c.settle()
    assert c.get("persistentvolumeclaims", "data")["spec"]["storageClassName"] == "standard"


def test_a_generic_ephemeral_volume_gets_its_claim_made_and_bound() -> None:
    c = Cluster(provision_volumes=True)
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("fast"))
    p = pod("web")
    p["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}}}}}]
    made = c.post(f"{NS}/pods", p)
    c.settle()
    pvc = c.get("persistentvolumeclaims", "web-scratch")
    assert pvc["metadata"]["ownerReferences"][0]["uid"] == made["metadata"]["uid"]
    assert pvc["status"]["phase"] == "Bound"
    assert c.get("pods", "web")["spec"]["nodeName"] == "node-1"


def _held_in_prebind() -> Cluster:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("fast"))
    c.post(PVCS, claim(storageClassName="fast"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()
    assert c.manager.scheduler.binding  # waiting for its claim in VolumeBinding's PreBind
    return c


def test_a_claim_never_provisioned_fails_the_binding_cycle_after_the_bind_timeout() -> None:
    c = _held_in_prebind()
    started = c.manager.scheduler.clock()
    c.manager.scheduler.clock = lambda: started + 601
    c.settle()
    assert failures(c, "web") == ['running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded']
    condition = next(x for x in c.get("pods", "web")["status"]["conditions"] if x["type"] == "PodScheduled")
    assert condition["reason"] == "SchedulerError"


def test_a_provisioner_that_gives_up_fails_the_binding_cycle() -> None:
    c = _held_in_prebind()

    def give_up(current: dict[str, Any]) -> dict[str, Any]:  # as a provisioner that cannot provision there
        del current["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        return current

    c.manager.writer.update("persistentvolumeclaims", "default", "data", give_up)
    c.manager.writer.own.clear()  # (another client's write)
    c.settle()
    assert failures(c, "web")[0] == ('running PreBind plugin "VolumeBinding": binding volumes: provisioning failed '
                                     'for PVC "data"')


def test_a_pass_after_an_unrelated_change_looks_at_no_bound_claim(monkeypatch: Any) -> None:
    from dralloc.server.controllers.volumes import VolumeControllers

    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    for i in range(5):
        c.post(PVS, volume(f"pv-{i}"))
        c.post(PVCS, claim(f"data-{i}", storageClassName=""))
    c.settle()
    assert all(x["status"]["phase"] == "Bound" for x in c.store.list("persistentvolumeclaims")[0])
    synced: list[str] = []
    original = VolumeControllers._sync_claim

    def counted(self: Any, snap: Any, claim: dict[str, Any], *args: Any) -> bool:
        synced.append(claim["metadata"]["name"])
        return original(self, snap, claim, *args)

    monkeypatch.setattr(VolumeControllers, "_sync_claim", counted)
    c.post(f"{NS}/pods", {**pod("other"), "spec": {"containers": [{"name": "main", "image": "x:1"}]}})
    c.settle()
    assert synced == []
    c.post(f"{NS}/pods", pod("web", "data-3"))  # a pod that names a claim: that claim is looked at
    c.settle()
    assert set(synced) == {"data-3"}


def test_the_scheduler_keeps_its_volumes_when_its_cluster_side_is_built_again() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(PVS, volume("pv-1"))
    c.post(PVCS, claim(storageClassName=""))
    c.post(f"{NS}/pods", pod("first", "data"))
    c.settle()
    assert c.get("pods", "first")["spec"]["nodeName"] == "node-1"
    builds = c.manager.scheduler.live.builds
    c.post("/api/v1/nodes", node("node-2"))  # (a node: the scheduler's cluster side is built again)
    c.post(f"{NS}/pods", pod("second", "data"))
    c.settle()
    assert c.manager.scheduler.live.builds > builds
    assert c.get("pods", "second")["spec"].get("nodeName"), failures(c, "second")


def test_a_waiting_pod_is_tried_again_when_a_storage_object_comes_not_when_one_goes() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", node("node-1"))
    c.post(CLASSES, storage_class("local", provisioner="kubernetes.io/no-provisioner"))
    c.post("/apis/storage.k8s.io/v1/csinodes", {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                                 "metadata": {"name": "node-1"}, "spec": {"drivers": []}})
    c.post(PVCS, claim(storageClassName="local"))
    c.post(f"{NS}/pods", pod("web", "data"))
    c.settle()

    def tries() -> int:
        return sum(e.get("count") or 1 for e in c.events("FailedScheduling") if e["involvedObject"]["name"] == "web")

    assert tries() == 1
    assert c.http.delete("/apis/storage.k8s.io/v1/csinodes/node-1").status_code == 200
    c.settle()
    assert tries() == 1  # (no volume plugin's queueing hint takes a deletion for a reason)
    c.post(CLASSES, storage_class("unrelated"))
    c.settle()
    assert tries() == 2
