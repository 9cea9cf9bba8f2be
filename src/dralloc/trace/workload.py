"""A replay's input as API objects: the cluster (nodes, slices, classes) and the pods with their claims,
from the trace's CSVs or from manifests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from msgspec.structs import replace

from dralloc.api import codec
from dralloc.api.core_v1 import Node, Pod
from dralloc.api.resource_v1 import DeviceClass, ResourceClaim, ResourceSlice
from dralloc.errors import InputError
from dralloc.scheduler.plugins.trace_policies.fragmentation import PodClass, typical_pods
from dralloc.scheduler.plugins.trace_policies.gpus import GpuDemand, claims_demand
from dralloc.scheduler.podinfo import PodInfo
from dralloc.trace import alibaba

# The selector `dralloc generate trace` writes for gpu_spec; other selectors are not read as model lists.
_MODELS = re.compile(r'^device\.attributes\["[^"]+"\]\.model in \[(.*)\]$')


@dataclass
class WorkPod:
    pod: Pod
    claims: list[ResourceClaim]
    demand: GpuDemand
    models: tuple[str, ...] = ()
    created: int | None = None  # the trace's creation_time (seconds), when it has one
    deleted: int | None = None  # its deletion_time; None: the pod never leaves

    def copy(self, name: str) -> WorkPod:
        """The pod and its claims renamed (a copy of an inflated workload)."""
        claims = [replace(c, metadata=replace(c.metadata, name=f"{name}-{i}")) for i, c in enumerate(self.claims)]
        refs = {c.metadata.name: n.metadata.name for c, n in zip(self.claims, claims)}
        spec = self.pod.spec
        if spec.resource_claims:
            spec = replace(spec, resource_claims=[replace(pc, resource_claim_name=refs.get(
                pc.resource_claim_name or "", pc.resource_claim_name)) for pc in spec.resource_claims])
        pod = replace(self.pod, metadata=replace(self.pod.metadata, name=name, uid=None), spec=spec)
        return WorkPod(pod, claims, self.demand, self.models, self.created, self.deleted)


@dataclass
class Workload:
    nodes: list[Node]
    slices: list[ResourceSlice]
    classes: list[DeviceClass]
    pods: list[WorkPod] = field(default_factory=list)

    @property
    def total_gpus(self) -> int:
        return sum(1 for s in self.slices for d in s.spec.devices or () if d.capacity and "milli" in d.capacity)

    def typical(self) -> tuple[PodClass, ...]:
        """The workload's typical pods (FGD's target workload and the fragmentation metric's)."""
        return typical_pods((p.demand.cpu, p.demand.milli, p.demand.count, p.models) for p in self.pods)


def _models(claims: list[ResourceClaim]) -> tuple[str, ...]:
    for claim in claims:
        for request in claim.spec.devices.requests or () if claim.spec.devices is not None else ():
            for sel in (request.exactly.selectors or ()) if request.exactly is not None else ():
                found = _MODELS.match(sel.cel.expression) if sel.cel is not None else None
                if found:
                    return tuple(m.strip().strip('"') for m in found.group(1).split(",") if m.strip())
    return ()


def _work_pod(pod: Pod, claims: dict[tuple[str, str], ResourceClaim], cache: dict[bytes, Any]) -> WorkPod:
    ns = pod.metadata.namespace or "default"
    if pod.metadata.namespace is None:
        pod = replace(pod, metadata=replace(pod.metadata, namespace=ns))
    mine = []
    for pc in pod.spec.resource_claims or ():
        if not pc.resource_claim_name:
            raise InputError(f"pod {ns}/{pod.metadata.name}: spec.resourceClaims[{pc.name}]: a replay needs "
                             f"resourceClaimName (claims created up front)")
        claim = claims.get((ns, pc.resource_claim_name))
        if claim is None:
            raise InputError(f"pod {ns}/{pod.metadata.name}: spec.resourceClaims[{pc.name}]: ResourceClaim "
                             f"{pc.resource_claim_name} not in the input")
        mine.append(claim)
    info = PodInfo.build(pod, 0, 0, cache)
    return WorkPod(pod, mine, claims_demand(mine, info.request.get("cpu", 0)), _models(mine))


def from_objects(objects: list[Any]) -> Workload:
    nodes, slices, classes, pods, claims = [], [], [], [], {}
    for obj in objects:
        kind = type(obj).__name__
        if kind == "Node":
            nodes.append(obj)
        elif kind == "ResourceSlice":
            slices.append(obj)
        elif kind == "DeviceClass":
            classes.append(obj)
        elif kind == "Pod" and not obj.spec.node_name:
            pods.append(obj)
        elif kind == "ResourceClaim":
            claims[(obj.metadata.namespace or "default", obj.metadata.name or "")] = obj
    cache: dict[bytes, Any] = {}
    return Workload(nodes, slices, classes, [_work_pod(p, claims, cache) for p in pods])


def from_csv(nodes_csv: str, pods_csv: str) -> Workload:
    """The Alibaba trace: GPU nodes only, every pod of the list."""
    rows = alibaba.read_pods(pods_csv)
    docs = alibaba.cluster_documents(alibaba.read_nodes(nodes_csv))
    docs += alibaba.workload_documents(rows)
    work = from_objects([codec.decode(d) for d in docs])
    for pod, row in zip(work.pods, rows):  # one pod per row, in order
        pod.created, pod.deleted = row.creation_time, row.deletion_time
    return work


def from_manifests(cluster: list[str], pods: list[str]) -> Workload:
    from dralloc.simulator.loading import load_validated

    objects, _ = load_validated([*cluster, *pods])
    return from_objects(objects)
