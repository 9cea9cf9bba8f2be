"""What the scheduler reads of a pod, computed once per pod (kube-scheduler's ``PodInfo``).

Requests are integers in the scheduler's units: cpu in millicores (rounded up, as ``MilliValue``), every
other resource in whole units (``Value``). ``nonzero_cpu``/``nonzero_memory`` use the scoring defaults
(100m and 200Mi for a container that requests nothing) and feed LeastAllocated only, never a filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dralloc.api.core_v1 import NodeSelector, NodeSelectorTerm, Pod, Toleration
from dralloc.resources.fit import pod_requests, resize_infeasible
from dralloc.resources.resourcelist import ResourceList
from dralloc.scheduler.affinity_terms import PodAffinityTerms, parse_pod_affinity

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NONZERO_DEFAULTS = ResourceList({"cpu": f"{DEFAULT_MILLI_CPU_REQUEST}m", "memory": str(DEFAULT_MEMORY_REQUEST)})
NANO = 10**9


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def scheduler_units(rl: ResourceList) -> dict[str, int]:
    """A ResourceList in scheduler units: cpu in millicores, the rest whole units (both rounded up)."""
    out: dict[str, int] = {}
    for name in rl:
        n = rl.nanos(name)
        out[name] = ceil_div(n, 10**6) if name == "cpu" else ceil_div(n, NANO)
    return out


def nonzero_requests(pod: Pod) -> tuple[int, int]:
    """(cpu millicores, memory bytes) with the non-zero defaults for what a container does not request, as
    NodeInfo.NonZeroRequested counts them."""
    units = scheduler_units(pod_requests(pod, NONZERO_DEFAULTS))
    return units.get("cpu", 0), units.get("memory", 0)


def _requests_key(pod: Pod) -> bytes:
    """What a pod's requests are computed from: its spec's resources and, once the kubelet reports them, its
    containers' resources (an in-place resize)."""
    from dralloc.api.codec import encode_json

    spec, status = pod.spec, pod.status
    reported: list[object] = []
    if status is not None and (status.container_statuses or status.init_container_statuses):
        reported = [status.container_statuses, status.init_container_statuses, resize_infeasible(pod)]
    return encode_json([spec.containers, spec.init_containers, spec.overhead, spec.resources, *reported])


@dataclass(eq=False)
class PodInfo:
    """A pod as the scheduler sees it. ``order`` is the input position (the last tie-breaker)."""

    pod: Pod
    order: int
    priority: int = 0
    request: dict[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    host_ports: list[tuple[str, str, int]] = field(default_factory=list)
    tolerations: list[Toleration] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    required_affinity: NodeSelector | None = None
    preferred_affinity: list[tuple[int, NodeSelectorTerm]] = field(default_factory=list)
    claim_footprint: dict[str, int] = field(default_factory=dict)
    # Pod affinity and anti-affinity, parsed (None: the pod declares neither); the PodIndex group it counts in.
    affinity: PodAffinityTerms | None = None
    index_group: object = None

    @property
    def labels(self) -> dict[str, str]:
        return self.pod.metadata.labels or {}

    @property
    def namespace(self) -> str:
        return self.pod.metadata.namespace or "default"

    @property
    def name(self) -> str:
        return self.pod.metadata.name or ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid or ""

    @property
    def preemption_policy(self) -> str:
        return self.pod.spec.preemption_policy or "PreemptLowerPriority"

    @property
    def start_time(self) -> str:
        status = self.pod.status
        return (status.start_time if status is not None else None) or self.pod.metadata.creation_timestamp or ""

    @classmethod
    def build(cls, pod: Pod, order: int, priority: int,
              requests_cache: dict[bytes, tuple[dict[str, int], int, int]] | None = None) -> PodInfo:
        """``requests_cache`` (owned by the caller, keyed by what the requests are computed from) saves
        recomputing the requests of pods stamped from one template."""
        spec = pod.spec
        info = cls(pod=pod, order=order, priority=priority)
        key = _requests_key(pod) if requests_cache is not None else b""
        cached = requests_cache.get(key) if requests_cache is not None else None
        if cached is None:
            request = {k: v for k, v in scheduler_units(pod_requests(pod)).items() if v != 0}
            cached = (request, *nonzero_requests(pod))
            if requests_cache is not None:
                requests_cache[key] = cached
        info.request = dict(cached[0])
        info.nonzero_cpu, info.nonzero_memory = cached[1], cached[2]
        for c in spec.containers or ():
            for p in c.ports or ():
                if p.host_port:
                    info.host_ports.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
        for c in spec.init_containers or ():
            if c.restart_policy == "Always":
                for p in c.ports or ():
                    if p.host_port:
                        info.host_ports.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
        info.tolerations = list(spec.tolerations or ())
        info.node_selector = dict(spec.node_selector or {})
        node_affinity = spec.affinity.node_affinity if spec.affinity is not None else None
        if node_affinity is not None:
            info.required_affinity = node_affinity.required_during_scheduling_ignored_during_execution
            info.preferred_affinity = [
                (t.weight, t.preference)
                for t in node_affinity.preferred_during_scheduling_ignored_during_execution or ()
            ]
        info.affinity = parse_pod_affinity(pod)
        return info

