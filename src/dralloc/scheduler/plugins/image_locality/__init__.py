"""ImageLocality (Score, weight 1): favour nodes that already hold the pod's images.

Each image of the pod (init containers, containers, image volumes) that the node lists in
``status.images`` adds its size scaled by its spread (nodes holding it / all nodes). The sum is clamped to
[23 MiB, 1000 MiB × number of images] and mapped linearly onto 0..100. An image name without a tag gets
``:latest``; nothing else is normalised (``nginx:1.25`` does not match ``docker.io/library/nginx:1.25``).
A name's size is the one the first node listing it reports.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from dralloc.api.core_v1 import Node, Pod
from dralloc.scheduler.framework import MAX_NODE_SCORE, SKIP, Cycle, Plugin, Status
from dralloc.scheduler.nodeinfo import NodeInfo

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """``normalizedImageName``: a name whose last ':' is not after its last '/' gets ``:latest``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Pod) -> list[str]:
    """The pod's image references in the order the plugin sums them."""
    spec = pod.spec
    images = [c.image or "" for c in spec.init_containers or ()]
    images += [c.image or "" for c in spec.containers or ()]
    images += [v.image.reference or "" for v in spec.volumes or () if v.image is not None]
    return images


@dataclass
class ImageIndex:
    """The scheduler cache's image states: per name the size (first node reporting it) and the number of
    nodes holding it; per node the names it holds."""

    sizes: dict[str, int]
    holders: dict[str, int]
    by_node: dict[str, frozenset[str]]

    @classmethod
    def build(cls, nodes: list[Node]) -> ImageIndex:
        sizes: dict[str, int] = {}
        holders: dict[str, int] = {}
        by_node: dict[str, frozenset[str]] = {}
        for node in nodes:
            names: set[str] = set()
            for image in (node.status.images or ()) if node.status is not None else ():
                for name in image.names or ():
                    sizes.setdefault(name, image.size_bytes or 0)
                    names.add(name)
            for name in names:
                holders[name] = holders.get(name, 0) + 1
            by_node[node.metadata.name or ""] = frozenset(names)
        return cls(sizes, holders, by_node)


def calculate_priority(sum_scores: int, num_images: int) -> int:
    """``calculatePriority``: the clamped sum mapped onto 0..100 (integer arithmetic, as upstream)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_images
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


@dataclass
class ImageCycle:
    names: list[str]  # the pod's images, normalised
    scaled: dict[str, int]  # per image name held by some node: size × spread, truncated


class ImageLocality(Plugin):
    """Scores only. Its PreFilter (dralloc's, upstream has none) computes the pod's image scores once and
    always returns Skip, so it filters nothing."""

    name = NAME
    weight = 1
    has_filter = True
    has_score = True

    def __init__(self) -> None:
        self._index: ImageIndex | None = None
        self._indexed: list[Node] | None = None

    def index(self, cycle: Cycle) -> ImageIndex:
        nodes = cycle.snapshot.node_list
        if self._index is None or self._indexed is not nodes:
            self._index = ImageIndex.build(nodes)
            self._indexed = nodes
        return self._index

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        index = self.index(cycle)
        if not index.sizes:
            return SKIP
        names = [normalized_image_name(i) for i in pod_images(cycle.pod.pod)]
        total = len(cycle.snapshot.nodes)
        scaled = {n: int(index.sizes[n] * (index.holders[n] / total)) for n in names if n in index.sizes}
        if scaled:
            cycle.data[NAME] = ImageCycle(names, scaled)
            cycle.keyed.append(self)
        return SKIP

    def pre_score(self, cycle: Cycle, nodes: list[NodeInfo]) -> Status | None:
        return None if NAME in cycle.data else SKIP

    def score(self, cycle: Cycle, node: NodeInfo) -> int:
        state: ImageCycle = cycle.data[NAME]
        held = self.index(cycle).by_node.get(node.name, frozenset())
        total = sum(state.scaled[n] for n in state.names if n in held and n in state.scaled)
        return calculate_priority(total, len(state.names))

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        state: ImageCycle = cycle.data[NAME]
        held = self.index(cycle).by_node.get(node.name, frozenset())
        return tuple(n in held for n in state.scaled)
