"""The volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) with kube-scheduler's
texts, each rule on a case that fails without it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sched_builders import by_name, load, node, pod
from volume_builders import claims, csi_node, pv, pvc, storage_class, zoned_node

from dralloc.scheduler import Scheduler

A, B = zoned_node("node-a", "z1"), zoned_node("node-b", "z2")
NOT_HELPFUL = "no new claims to deallocate, preemption: 0/{n} nodes are available: {n} Preemption is not helpful " \
              "for scheduling."


def fit_error(n: int, histogram: str) -> str:
    return f"0/{n} nodes are available: {histogram}. " + NOT_HELPFUL.format(n=n)


def test_a_claim_bound_to_a_local_volume_takes_the_pod_to_that_node(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pv("pv-b", claim="data", host="node-b"),
                         pvc("data", volume="pv-b"), pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].node == "node-b"
    assert result.volume_bindings == []  # already bound: nothing to bind


def test_nodes_outside_a_local_volume_are_not_examined(simulate) -> None:
    small_b = zoned_node("node-b", "z2", cpu="1")
    _, result = simulate(A, small_b, storage_class("local"), pv("pv-b", claim="data", host="node-b"),
                         pvc("data", volume="pv-b"), pod("db", cpu="2", extra_spec=claims("data")))
    assert by_name(result)["db"].message == fit_error(
        2, "1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [VolumeBinding]")


def test_bound_volume_node_affinity_conflict(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pv("pv-z3", claim="data", zone="z3"),
                         pvc("data", volume="pv-z3"), pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].message == fit_error(2, "2 node(s) had volume node affinity conflict")


def test_bound_volume_zone_affinity_picks_the_zone(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pv("pv-z2", claim="data", zone="z2"),
                         pvc("data", volume="pv-z2"), pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].node == "node-b"


def test_a_missing_claim_keeps_the_pod_pending(simulate) -> None:
    _, result = simulate(A, B, pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].message == fit_error(2, 'persistentvolumeclaim "data" not found')


def test_an_unbound_immediate_claim_keeps_the_pod_pending(simulate) -> None:
    _, result = simulate(A, B, storage_class("fast", mode="Immediate", provisioner="ebs.csi.aws.com"),
                         pvc("data", cls="fast"), pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].message == fit_error(2, "pod has unbound immediate PersistentVolumeClaims")


def test_a_claim_naming_a_volume_without_bind_completed_is_not_bound_and_is_warned_about(simulate) -> None:
    claim = pvc("data", volume="pv-b").replace('pv.kubernetes.io/bind-completed: "yes"', "")
    _, result = simulate(A, B, storage_class("local"), pv("pv-b", claim="data", host="node-b"), claim,
                         pod("db", extra_spec=claims("data")))
    assert by_name(result)["db"].message == fit_error(2, "pod has unbound immediate PersistentVolumeClaims")
    assert any("default/db" in w and "bind-completed" in w for w in result.warnings)


def test_wait_for_first_consumer_binds_the_smallest_fitting_volume_and_takes_it(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pv("pv-big", "100Gi"), pv("pv-small", "5Gi"),
                         pv("pv-tiny", "1Gi"), pvc("d1", "4Gi"), pvc("d2", "4Gi"), pvc("d3", "4Gi"),
                         pod("p1", extra_spec=claims("d1")), pod("p2", extra_spec=claims("d2")),
                         pod("p3", extra_spec=claims("d3")))
    bound = {b.claim: b.volume for b in result.volume_bindings}
    assert bound == {"default/d1": "pv-small", "default/d2": "pv-big"}
    assert by_name(result)["p3"].message == fit_error(
        2, "2 node(s) didn't find available persistent volumes to bind")


def test_a_static_volume_brings_its_node_affinity(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pv("pv-a", host="node-a"), pvc("data"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].node == "node-a"
    assert [b.to_dict() for b in result.volume_bindings] == [
        {"pod": "default/p", "claim": "default/data", "node": "node-a", "volume": "pv-a", "mode": "static"}]


def test_static_matching_checks_access_modes_class_and_volume_mode(simulate) -> None:
    rwx_claim = pvc("data", modes="[ReadWriteMany]")
    _, result = simulate(A, B, storage_class("local"), pv("pv-rwo"), pv("pv-other", cls="other"),
                         storage_class("other"), rwx_claim, pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].message == fit_error(
        2, "2 node(s) didn't find available persistent volumes to bind")


def test_dynamic_provisioning_follows_allowed_topologies_and_pins_later_users(simulate) -> None:
    topology = "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [z2]}]}]\n"
    shared = pvc("data", cls="ebs", modes="[ReadWriteMany]")
    sched, result = simulate(A, B, zoned_node("node-c", "z2"),
                             storage_class("ebs", provisioner="ebs.csi.aws.com", extra=topology), shared,
                             pod("p1", extra_spec=claims("data")), pod("p2", extra_spec=claims("data")))
    first = by_name(result)["p1"].node
    assert first in ("node-b", "node-c")
    assert by_name(result)["p2"].node == first  # the claim's selected node
    assert [(b.claim, b.node, b.volume) for b in result.volume_bindings] == [("default/data", first, None)]
    annotations = sched.snapshot.volumes.claim("default", "data").metadata.annotations  # type: ignore[union-attr]
    assert annotations["volume.kubernetes.io/selected-node"] == first


def test_no_provisioner_and_no_volume_is_a_bind_conflict(simulate) -> None:
    _, result = simulate(A, B, storage_class("local"), pvc("data"), pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].message == fit_error(
        2, "2 node(s) didn't find available persistent volumes to bind")


def test_generic_ephemeral_volumes_get_their_claim_and_are_provisioned(simulate) -> None:
    ephemeral = ("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], "
                 "storageClassName: ebs, resources: {requests: {storage: 1Gi}}}}}}]")
    _, result = simulate(A, storage_class("ebs", provisioner="ebs.csi.aws.com"), pod("p", extra_spec=ephemeral))
    assert by_name(result)["p"].node == "node-a"
    assert [(b.claim, b.volume) for b in result.volume_bindings] == [("default/p-scratch", None)]


def test_an_ephemeral_volume_claim_the_pod_does_not_own_is_refused(simulate) -> None:
    ephemeral = ("volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], "
                 "storageClassName: ebs, resources: {requests: {storage: 1Gi}}}}}}]")
    _, result = simulate(A, storage_class("ebs", provisioner="ebs.csi.aws.com"), pvc("p-scratch", cls="ebs"),
                         pod("p", extra_spec=ephemeral))
    assert by_name(result)["p"].message == fit_error(
        1, "PVC default/p-scratch was not created for pod default/p (pod is not owner)")


def test_read_write_once_pod_claims_admit_one_pod_in_the_cluster(simulate) -> None:
    rwop = "[ReadWriteOncePod]"
    _, result = simulate(A, B, storage_class("local"), pv("pv1", claim="data", modes=rwop),
                         pvc("data", volume="pv1", modes=rwop),
                         pod("user", node_name="node-a", extra_spec=claims("data")),
                         pod("p", extra_spec=claims("data")))
    reason = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
    assert by_name(result)["p"].message == (
        f"0/2 nodes are available: 2 {reason}. no new claims to deallocate, preemption: 0/2 nodes are "
        "available: 2 No preemption victims found for incoming pod.")


def test_preemption_can_free_a_read_write_once_pod_claim(simulate) -> None:
    rwop = "[ReadWriteOncePod]"
    _, result = simulate(A, B, storage_class("local"), pv("pv1", claim="data", modes=rwop),
                         pvc("data", volume="pv1", modes=rwop),
                         pod("user", node_name="node-a", extra_spec=claims("data")),
                         pod("important", priority=100, extra_spec=claims("data")))
    pods = by_name(result)
    assert pods["user"].status == "evicted"
    assert pods["important"].node == "node-a"


def test_disk_conflicts_of_in_tree_volumes(simulate) -> None:
    disk = "volumes: [{name: d, gcePersistentDisk: {pdName: disk-1}}]"
    read_only = "volumes: [{name: d, gcePersistentDisk: {pdName: disk-1, readOnly: true}}]"
    _, result = simulate(A, pod("user", node_name="node-a", extra_spec=disk), pod("p", extra_spec=disk))
    assert by_name(result)["p"].message == (
        "0/1 nodes are available: 1 node(s) had no available disk. no new claims to deallocate, preemption: "
        "0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    _, result = simulate(A, pod("user", node_name="node-a", extra_spec=read_only), pod("p", extra_spec=read_only))
    assert by_name(result)["p"].node == "node-a"


def test_rbd_images_conflict_on_a_shared_monitor_and_the_default_pool(simulate) -> None:
    one = "volumes: [{name: d, rbd: {monitors: [m1, m2], image: img}}]"
    other = "volumes: [{name: d, rbd: {monitors: [m2], pool: rbd, image: img}}]"
    _, result = simulate(A, B, pod("user", node_name="node-a", extra_spec=one), pod("p", extra_spec=other))
    assert by_name(result)["p"].node == "node-b"


def test_volume_zone_labels_of_a_bound_volume(simulate) -> None:
    zoned = pv("pv1", claim="data", csi="ebs.csi.aws.com", labels="{topology.kubernetes.io/zone: z1__z3}")
    _, result = simulate(B, A, storage_class("local"), zoned, pvc("data", volume="pv1"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].node == "node-a"
    elsewhere = pv("pv1", claim="data", csi="ebs.csi.aws.com", labels="{topology.kubernetes.io/zone: z9}")
    _, result = simulate(A, B, storage_class("local"), elsewhere, pvc("data", volume="pv1"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].message == fit_error(2, "2 node(s) had no available volume zone")


def test_a_node_without_zone_labels_takes_any_volume_zone(simulate) -> None:
    zoned = pv("pv1", claim="data", csi="ebs.csi.aws.com", labels="{topology.kubernetes.io/zone: z9}")
    _, result = simulate(node("plain"), storage_class("local"), zoned, pvc("data", volume="pv1"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].node == "plain"


def test_csi_attach_limits_from_csinode(simulate) -> None:
    ebs = storage_class("ebs", provisioner="ebs.csi.aws.com")
    attached = pv("vol-1", cls="ebs", claim="old", csi="ebs.csi.aws.com")
    docs = [A, B, ebs, attached, pvc("old", cls="ebs", volume="vol-1"), pvc("new", cls="ebs"),
            csi_node("node-a", "ebs.csi.aws.com", 1), pod("user", node_name="node-a", extra_spec=claims("old"))]
    _, result = simulate(*docs, pod("p", extra_spec=claims("new")))
    assert by_name(result)["p"].node == "node-b"
    # Sharing the attached volume adds nothing: the pod fits next to its user.
    _, result = simulate(A, ebs, attached, pvc("old", cls="ebs", volume="vol-1"),
                         csi_node("node-a", "ebs.csi.aws.com", 1), pod("user", node_name="node-a",
                                                                        extra_spec=claims("old")),
                         pod("p", extra_spec=claims("old")))
    assert by_name(result)["p"].node == "node-a"
    full = [A, ebs, attached, pvc("old", cls="ebs", volume="vol-1"), pvc("new", cls="ebs"),
            csi_node("node-a", "ebs.csi.aws.com", 1), pod("user", node_name="node-a", extra_spec=claims("old"))]
    _, result = simulate(*full, pod("p", extra_spec=claims("new")))
    assert by_name(result)["p"].message == (
        "0/1 nodes are available: 1 node(s) exceed max volume count. no new claims to deallocate, preemption: "
        "0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_grouping_nodes_never_changes_volume_answers() -> None:
    nodes = [zoned_node(f"n{i}", f"z{i % 3}") for i in range(12)]
    docs = [*nodes, storage_class("local"), storage_class("ebs", provisioner="ebs.csi.aws.com", extra=(
        "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [z1]}]}]\n")),
        *[pv(f"pv{i}", f"{i + 1}Gi", host=f"n{i}") for i in range(0, 12, 2)],
        *[pvc(f"c{i}", "1Gi") for i in range(8)], *[pvc(f"e{i}", "1Gi", cls="ebs") for i in range(4)],
        csi_node("n1", "ebs.csi.aws.com", 1), csi_node("n4", "ebs.csi.aws.com", 0),
        *[pod(f"p{i}", extra_spec=claims(f"c{i}")) for i in range(8)],
        *[pod(f"q{i}", extra_spec=claims(f"e{i}")) for i in range(4)], *[pod(f"r{i}") for i in range(6)]]
    answers = []
    for group in (True, False):
        sched = Scheduler.from_objects(load(*docs), seed=3)
        sched.framework.group_nodes = group
        result = sched.schedule()
        answers.append(([(p.name, p.node, p.message) for p in result.pods],
                        [b.to_dict() for b in result.volume_bindings]))
    assert answers[0] == answers[1]
    # six static volumes for eight claims; four provisioned in z1 (n4 attaches none); six pods without volumes
    assert sum(1 for p in answers[0][0] if p[1] is not None) == 6 + 4 + 6


def _write(tmp_path: Path, *docs: str) -> str:
    f = tmp_path / "cluster.yaml"
    f.write_text("\n---\n".join(docs))
    return str(f)


@pytest.mark.slow
def test_cli_places_the_pod_next_to_its_local_volume_and_lists_bindings(tmp_path, dralloc_cmd) -> None:
    f = _write(tmp_path, A, B, storage_class("local"), pv("pv-b", host="node-b"), pvc("data"),
               pod("db", extra_spec=claims("data")))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f, "-o", "json"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [p["node"] for p in doc["pods"]] == ["node-b"]
    assert doc["volumeBindings"] == [{"pod": "default/db", "claim": "default/data", "node": "node-b",
                                      "volume": "pv-b", "mode": "static"}]


@pytest.mark.slow
def test_cli_prints_the_fit_error_of_a_missing_claim(tmp_path, dralloc_cmd) -> None:
    f = _write(tmp_path, A, B, pod("db", extra_spec=claims("data")))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f], capture_output=True, text=True, check=False)
    assert out.returncode == 1
    assert fit_error(2, 'persistentvolumeclaim "data" not found') in out.stdout


@pytest.mark.slow
def test_cli_refuses_invalid_storage_objects_with_field_paths(tmp_path, dralloc_cmd) -> None:
    bad = storage_class("x", mode="Later") + "\n---\n" + csi_node("node-a", "d", -1)
    f = _write(tmp_path, A, bad, pvc("data").replace("accessModes: [ReadWriteOnce]", "accessModes: []"))
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f], capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert 'StorageClass/x: volumeBindingMode: Unsupported value: "Later"' in out.stderr
    assert "CSINode/node-a: spec.drivers[0].allocatable.count: Invalid value: -1" in out.stderr
    assert "PersistentVolumeClaim/data: spec.accessModes: Required value: at least 1 access mode is required" \
        in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_cli_warns_about_unknown_fields_of_storage_objects(tmp_path, dralloc_cmd) -> None:
    f = _write(tmp_path, A, pv("pv-a", host="node-a").replace("spec:\n", "spec:\n  bogus: 1\n"),
               storage_class("local") + "extra: x\n")
    out = subprocess.run([*dralloc_cmd, "simulate", "-f", f], capture_output=True, text=True, check=False)
    assert 'PersistentVolume/pv-a: unknown field "spec.bogus"' in out.stderr
    assert 'StorageClass/local: unknown field "extra"' in out.stderr


def test_storage_capacity_of_drivers_that_publish_it(simulate) -> None:
    driver = "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: lvm.csi.example}\n" \
             "spec: {storageCapacity: true}\n"

    def capacity(name: str, zone: str, size: str) -> str:
        return ("apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\n"
                f"metadata: {{name: {name}, namespace: kube-system}}\nstorageClassName: lvm\ncapacity: {size}\n"
                f"nodeTopology: {{matchLabels: {{topology.kubernetes.io/zone: {zone}}}}}\n")
    lvm = storage_class("lvm", provisioner="lvm.csi.example")
    _, result = simulate(A, B, lvm, driver, capacity("z1", "z1", "1Gi"), capacity("z2", "z2", "100Gi"),
                         pvc("data", "5Gi", cls="lvm"), pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].node == "node-b"
    _, result = simulate(A, B, lvm, driver, capacity("z1", "z1", "1Gi"), pvc("data", "5Gi", cls="lvm"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].message == fit_error(2, "2 node(s) did not have enough free storage")
    # a driver that does not publish capacity is not checked
    _, result = simulate(A, lvm, capacity("z1", "z1", "1Gi"), pvc("data", "5Gi", cls="lvm"),
                         pod("p", extra_spec=claims("data")))
    assert by_name(result)["p"].node == "node-a"


def test_the_volumes_example_places_each_pod_by_its_storage(examples_dir) -> None:
    result = Scheduler.from_objects(load(*[(examples_dir / "volumes" / "cluster.yaml").read_text()])).schedule()
    assert {p.name: p.node for p in result.pods} == {"postgres-0": "node-1", "cache": "node-2", "web": "node-3"}
    assert [(b.claim, b.volume) for b in result.volume_bindings] == [("shop/cache", "local-node-2"),
                                                                      ("shop/uploads", None)]


def test_ebs_volumes_conflict_even_read_only_and_iscsi_only_when_written(simulate) -> None:
    ebs = "volumes: [{name: d, awsElasticBlockStore: {volumeID: vol-1, readOnly: true}}]"
    _, result = simulate(A, B, pod("user", node_name="node-a", extra_spec=ebs), pod("p", extra_spec=ebs))
    assert by_name(result)["p"].node == "node-b"
    iscsi = "volumes: [{name: d, iscsi: {targetPortal: 't:3260', iqn: iqn.x, lun: 0, readOnly: true}}]"
    _, result = simulate(A, pod("user", node_name="node-a", extra_spec=iscsi), pod("p", extra_spec=iscsi))
    assert by_name(result)["p"].node == "node-a"
    written = iscsi.replace("readOnly: true", "readOnly: false")
    _, result = simulate(A, B, pod("user", node_name="node-a", extra_spec=iscsi), pod("p", extra_spec=written))
    assert by_name(result)["p"].node == "node-b"
