"""Hand-made GPU clusters for the trace tests: nodes whose GPUs already carry given shares."""

from __future__ import annotations

from typing import Any

from dralloc.api import codec
from dralloc.scheduler.features import FeatureGates
from dralloc.scheduler.framework import Cycle
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DynamicResources
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.snapshot import ClusterSnapshot
from dralloc.trace import alibaba
from dralloc.trace.alibaba import TraceNode, TracePod


def allocated_share(node: str, gpu: int, milli: int, n: int) -> Any:
    """A claim allocated on the node's GPU ``gpu``, consuming ``milli`` of it."""
    return codec.decode({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": f"used-{node}-{n}", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": alibaba.DEVICE_CLASS, "capacity": {"requests": {"milli": str(milli)}}}}]}},
        "status": {"allocation": {"devices": {"results": [{
            "request": "gpu", "driver": alibaba.DRIVER, "pool": node, "device": f"gpu-{gpu}",
            "shareID": f"00000000-0000-0000-0000-{n:012d}", "consumedCapacity": {"milli": str(milli)}}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
    })


def cluster(nodes: list[TraceNode], used: dict[str, list[int]] | None = None,
            cpu_used: dict[str, int] | None = None, pods: list[TracePod] = ()) -> ClusterSnapshot:  # type: ignore[assignment]
    """A snapshot of the nodes; ``used[node][i]``: milli already taken on GPU i; ``cpu_used``: milli-CPU
    taken by a running pod; ``pods``' claims are present (pending)."""
    docs = alibaba.cluster_documents(nodes)
    objects = [codec.decode(d) for d in docs]
    claims = []
    n = 0
    for node, per_gpu in (used or {}).items():
        for gpu, milli in enumerate(per_gpu):
            if milli:
                n += 1
                claims.append(allocated_share(node, gpu, milli, n))
    for pod in pods:
        if pod.num_gpu:
            claims.append(codec.decode(alibaba.claim_document(pod)))
    kinds: dict[str, list[Any]] = {}
    for o in objects:
        kinds.setdefault(type(o).__name__, []).append(o)
    snap = ClusterSnapshot(kinds["Node"], kinds.get("ResourceSlice", []), kinds["DeviceClass"], claims, [],
                           FeatureGates(), None)
    for name, cpu in (cpu_used or {}).items():
        filler = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"cpu-{name}"},
                               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": f"{cpu}m"}}}]}})
        snap.by_name[name].add_pod(PodInfo.build(filler, 0, 0))
    return snap


def cycle_for(snap: ClusterSnapshot, pod: TracePod) -> Cycle:
    """A cycle of the pod after DynamicResources' PreFilter (what the policies read)."""
    if pod.num_gpu and ("default", alibaba.claim_name(pod)) not in snap.claims:
        snap.set_claim(codec.decode(alibaba.claim_document(pod)))
    info = PodInfo.build(codec.decode(alibaba.pod_document(pod)), 0, 0)
    cycle = Cycle(info, snap)
    DynamicResources().pre_filter(cycle)
    assert DRA in cycle.data or not pod.num_gpu
    return cycle


def node(snap: ClusterSnapshot, name: str) -> NodeInfo:
    return snap.by_name[name]
