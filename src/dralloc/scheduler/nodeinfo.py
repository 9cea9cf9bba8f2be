"""A node and what is assumed on it (kube-scheduler's ``NodeInfo``), plus the node tree's order."""

from __future__ import annotations

from dataclasses import dataclass, field

from dralloc.api.core_v1 import Node, Taint
from dralloc.resources.resourcelist import ResourceList
from dralloc.scheduler.podinfo import PodInfo, scheduler_units

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


@dataclass(eq=False)
class NodeInfo:
    """Allocatable, what the assigned pods request, their host ports, and the node's static facts."""

    node: Node
    allocatable: dict[str, int] = field(default_factory=dict)
    requested: dict[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    pods: list[PodInfo] = field(default_factory=list)
    used_ports: list[tuple[str, str, int]] = field(default_factory=list)
    nominated: list[PodInfo] = field(default_factory=list)
    # Bumped on every change of the pods or requests: keys caches of per-node verdicts.
    generation: int = 0
    # What the filters and scores read of the node itself, without and with its name and labels.
    static_key: int = 0
    named_key: int = 0
    # (set, index): where to report a change of the node's state (NodeGroups).
    dirty_sink: tuple[set[int], int] | None = None
    # Where to report each pod added (+1) or removed (-1) here (the snapshot's PodIndex); None for a scratch copy.
    pod_sink: list[tuple[NodeInfo, PodInfo, int]] | None = None
    _state_gen: int = -2
    _state_dra: object = None
    _state: tuple[object, ...] = ()

    def __post_init__(self) -> None:
        self.name = self.node.metadata.name or ""
        self._labels = self.node.metadata.labels or {}  # read for every node a pod's affinity examines

    @property
    def labels(self) -> dict[str, str]:
        return self._labels

    @property
    def taints(self) -> list[Taint]:
        spec = self.node.spec
        return list(spec.taints or ()) if spec is not None else []

    @property
    def unschedulable(self) -> bool:
        spec = self.node.spec
        return bool(spec is not None and spec.unschedulable)

    @property
    def allowed_pods(self) -> int:
        return self.allocatable.get("pods", 0)

    @classmethod
    def build(cls, node: Node) -> NodeInfo:
        status = node.status
        values = (status.allocatable or status.capacity or {}) if status is not None else {}
        return cls(node=node, allocatable=scheduler_units(ResourceList(values)))

    def set_static_keys(self, interned: dict[tuple[object, ...], int]) -> None:
        """Intern the node's static facts (taints, unschedulable, allocatable; plus name and labels)."""
        from dralloc.api.codec import encode_json

        spec = self.node.spec
        base = (encode_json(spec.taints) if spec is not None and spec.taints else b"", self.unschedulable,
                tuple(sorted(self.allocatable.items())))
        self.static_key = interned.setdefault(base, len(interned))
        named = (*base, self.name, tuple(sorted(self.labels.items())))
        self.named_key = interned.setdefault(named, len(interned))

    def dynamic_key(self, dra_state: object) -> tuple[object, ...]:
        """With ``static_key`` or ``named_key``: equal for two nodes when every default plugin gives a pod the
        same verdict and score on both — its requests and ports, and its DRA state (``dra_state``).
        Cached per generation."""
        if self._state_gen != self.generation or self._state_dra is not dra_state:
            self._state = (tuple(sorted(self.requested.items())), self.nonzero_cpu, self.nonzero_memory,
                           len(self.pods), tuple(sorted(self.used_ports)), dra_state)
            self._state_gen = self.generation
            self._state_dra = dra_state
        return self._state

    def add_pod(self, pod: PodInfo, extra: dict[str, int] | None = None) -> None:
        """Count the pod (and ``extra``, its claims' node-allocatable footprint) as assigned here."""
        self.pods.append(pod)
        self._apply(pod, 1, extra)

    def remove_pod(self, pod: PodInfo, extra: dict[str, int] | None = None) -> None:
        self.pods.remove(pod)
        self._apply(pod, -1, extra)

    def set_footprint(self, pod: PodInfo, footprint: dict[str, int]) -> None:
        """Replace the node-allocatable footprint of the claims of ``pod`` (assumed here) with ``footprint``
        (DynamicResources' Reserve and Unreserve)."""
        req = self.requested
        for name, value in pod.claim_footprint.items():
            req[name] = req.get(name, 0) - value
        for name, value in footprint.items():
            req[name] = req.get(name, 0) + value
        pod.claim_footprint = footprint
        self.generation += 1
        if self.dirty_sink is not None:
            self.dirty_sink[0].add(self.dirty_sink[1])

    def _apply(self, pod: PodInfo, sign: int, extra: dict[str, int] | None) -> None:
        req = self.requested
        for name, value in pod.request.items():
            req[name] = req.get(name, 0) + sign * value
        for name, value in (extra or {}).items():
            req[name] = req.get(name, 0) + sign * value
        self.nonzero_cpu += sign * pod.nonzero_cpu
        self.nonzero_memory += sign * pod.nonzero_memory
        if sign > 0:
            self.used_ports.extend(pod.host_ports)
        else:
            for port in pod.host_ports:
                self.used_ports.remove(port)
        self.generation += 1
        if self.dirty_sink is not None:
            self.dirty_sink[0].add(self.dirty_sink[1])
        if self.pod_sink is not None:
            self.pod_sink.append((self, pod, sign))

    def copy_with(self, pods: list[PodInfo]) -> NodeInfo:
        """A copy with ``pods`` added too (kube-scheduler's view with nominated pods)."""
        clone = NodeInfo(node=self.node, allocatable=self.allocatable, requested=dict(self.requested),
                         nonzero_cpu=self.nonzero_cpu, nonzero_memory=self.nonzero_memory, pods=list(self.pods),
                         used_ports=list(self.used_ports), generation=-1, static_key=-1, named_key=-1,
                         dirty_sink=None)
        for p in pods:
            clone.add_pod(p, p.claim_footprint)
        return clone


def zone_key(node: Node) -> str:
    """``utilnode.GetZoneKey``: region and zone labels joined, or "" without either."""
    labels = node.metadata.labels or {}
    region = next((labels[k] for k in REGION_LABELS if k in labels), "")
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(nodes: list[Node]) -> list[Node]:
    """The scheduler cache's node list: zones in order of first appearance, one node of each zone per round
    (``nodeTree.list``), so consecutive nodes alternate zones."""
    zones: dict[str, list[Node]] = {}
    for n in nodes:
        zones.setdefault(zone_key(n), []).append(n)
    out: list[Node] = []
    lists = list(zones.values())
    depth = 0
    while len(out) < len(nodes):
        for lst in lists:
            if depth < len(lst):
                out.append(lst[depth])
        depth += 1
    return out
