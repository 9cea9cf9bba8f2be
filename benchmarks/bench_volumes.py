"""Scheduling throughput of pods with volumes and images, beside the same pods without them.

    .venv/bin/python benchmarks/bench_volumes.py [--nodes 500] [--pods 2000]

Shapes (every pod requests 100m cpu; nodes in 3 zones, labelled with their hostname):

* ``plain``: no volumes, no images (the fast path every volume-less pod keeps);
* ``images``: nodes list 3 images of 200-900 MB, a third of them hold the pods' image (ImageLocality scores);
* ``local-bound``: each pod's claim is bound to a local PV pinned to one node (VolumeBinding narrows to it);
* ``wffc-static``: WaitForFirstConsumer claims matched to local PVs, two per node (the PV controller's choice);
* ``wffc-provision``: WaitForFirstConsumer claims provisioned in the zones a class allows, CSINode limits of 30.

Prints build and scheduling seconds and pods/s per shape.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from dralloc.api.core_v1 import (
    Container,
    ContainerImage,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectReference,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodSpec,
    ResourceRequirements,
    Volume,
    VolumeResourceRequirements,
)
from dralloc.api.core_v1 import NodeStatus as Status
from dralloc.api.core_v1_storage import (
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    VolumeNodeAffinity,
)
from dralloc.api.meta import ObjectMeta
from dralloc.api.quantity import Quantity
from dralloc.api.storage_v1 import (
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    VolumeNodeResources,
)
from dralloc.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
DRIVER = "ebs.csi.aws.com"


def nodes(count: int, images: bool = False) -> list[Node]:
    out = []
    for i in range(count):
        held = [ContainerImage(names=[f"base:v{k}"], size_bytes=(k + 2) * 100_000_000) for k in range(3)]
        if images and i % 3 == 0:
            held.append(ContainerImage(names=["app:v1"], size_bytes=900_000_000))
        out.append(Node(metadata=ObjectMeta(name=f"n{i}", labels={HOST: f"n{i}", ZONE: f"z{i % 3}"}),
                        status=Status(allocatable={"cpu": Quantity("64"), "memory": Quantity("256Gi"),
                                                   "pods": Quantity("110")}, images=held if images else None)))
    return out


def pod(i: int, claim: str | None = None) -> Pod:
    volumes = [Volume(name="data", persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim))] \
        if claim else None
    return Pod(metadata=ObjectMeta(name=f"p{i}", namespace="default"), spec=PodSpec(
        containers=[Container(name="c", image="app:v1",
                              resources=ResourceRequirements(requests={"cpu": Quantity("100m")}))],
        volumes=volumes))


def claim(name: str, cls: str, volume: str | None = None) -> PersistentVolumeClaim:
    ann = {"pv.kubernetes.io/bind-completed": "yes"} if volume else None
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name=name, namespace="default", annotations=ann),
        spec=PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"], storage_class_name=cls, volume_name=volume,
                                       resources=VolumeResourceRequirements(requests={"storage": Quantity("5Gi")})))


def local_pv(name: str, host: str, bound_to: str | None = None) -> PersistentVolume:
    affinity = VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[NodeSelectorTerm(
        match_expressions=[NodeSelectorRequirement(key=HOST, operator="In", values=[host])])]))
    ref = ObjectReference(namespace="default", name=bound_to) if bound_to else None
    return PersistentVolume(metadata=ObjectMeta(name=name), spec=PersistentVolumeSpec(
        capacity={"storage": Quantity("10Gi")}, access_modes=["ReadWriteOnce"], storage_class_name="local",
        local={"path": "/mnt"}, node_affinity=affinity, claim_ref=ref),
        status=PersistentVolumeStatus(phase="Bound" if bound_to else "Available"))


def shape(name: str, n: int, p: int) -> dict[str, Any]:
    local = StorageClass(metadata=ObjectMeta(name="local"), provisioner="kubernetes.io/no-provisioner",
                         volume_binding_mode="WaitForFirstConsumer")
    if name == "plain":
        return {"nodes": nodes(n), "pods": [pod(i) for i in range(p)]}
    if name == "images":
        return {"nodes": nodes(n, images=True), "pods": [pod(i) for i in range(p)]}
    if name == "local-bound":
        return {"nodes": nodes(n), "pods": [pod(i, f"c{i}") for i in range(p)], "storage_classes": [local],
                "persistent_volume_claims": [claim(f"c{i}", "local", f"pv{i}") for i in range(p)],
                "persistent_volumes": [local_pv(f"pv{i}", f"n{i % n}", f"c{i}") for i in range(p)]}
    if name == "wffc-static":
        return {"nodes": nodes(n), "pods": [pod(i, f"c{i}") for i in range(p)], "storage_classes": [local],
                "persistent_volume_claims": [claim(f"c{i}", "local") for i in range(p)],
                "persistent_volumes": [local_pv(f"pv{i}", f"n{i % n}") for i in range(2 * n)]}
    ebs = StorageClass(metadata=ObjectMeta(name="ebs"), provisioner=DRIVER,
                       volume_binding_mode="WaitForFirstConsumer",
                       allowed_topologies=[TopologySelectorTerm(match_label_expressions=[
                           TopologySelectorLabelRequirement(key=ZONE, values=["z0", "z1"])])])
    csi = [CSINode(metadata=ObjectMeta(name=f"n{i}"), spec=CSINodeSpec(drivers=[CSINodeDriver(
        name=DRIVER, node_id=f"n{i}", allocatable=VolumeNodeResources(count=30))])) for i in range(n)]
    return {"nodes": nodes(n), "pods": [pod(i, f"c{i}") for i in range(p)], "storage_classes": [ebs],
            "persistent_volume_claims": [claim(f"c{i}", "ebs") for i in range(p)], "csi_nodes": csi}


SHAPES = ("plain", "images", "local-bound", "wffc-static", "wffc-provision")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'shape':16} {'nodes':>6} {'pods':>6} {'build s':>8} {'sched s':>8} {'pods/s':>8} {'pending':>8}")
    for name in SHAPES:
        inputs = shape(name, args.nodes, args.pods)
        t0 = time.perf_counter()
        sched = Scheduler(inputs.pop("nodes"), inputs.pop("pods"), **inputs)
        t1 = time.perf_counter()
        result = sched.schedule()
        t2 = time.perf_counter()
        print(f"{name:16} {args.nodes:6} {args.pods:6} {t1 - t0:8.2f} {t2 - t1:8.2f} "
              f"{args.pods / (t2 - t1):8.0f} {len(result.unschedulable):8}")


if __name__ == "__main__":
    main()
