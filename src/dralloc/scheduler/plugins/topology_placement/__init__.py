"""TopologyPlacementGenerator and PodGroupPodsCount (gate ``TopologyAwareWorkloadScheduling``).

TopologyPlacementGenerator: a PodGroup with a topology constraint gets one candidate placement per value of
the constraint's label among the nodes that carry it (nodes without the label are in none); once some member
is scheduled, only its domain is a candidate (members on nodes in two domains, or on a node without the
label, are an error). A group without a constraint has one placement: every node.

PodGroupPodsCount (placement score, weight 1): the members a placement holds — scheduled ones plus those the
cycle placed there — normalised so the largest count scores 100.

Upstream lists the domains in Go map order (random); here they come sorted by value, so a run is
reproducible, and ties between top-scoring placements are broken with the scheduler's seeded generator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dralloc.scheduler.framework import MAX_NODE_SCORE
from dralloc.scheduler.nodeinfo import NodeInfo

GENERATOR = "TopologyPlacementGenerator"
SCORER = "PodGroupPodsCount"
SCORER_WEIGHT = 1
PLACEMENTS_UNAVAILABLE = "0/{count} placements are available, first placement status: {status}"


class PlacementError(Exception):
    """The generator's error (the cycle ends in SchedulerError)."""


@dataclass
class Placement:
    """A candidate set of nodes for the whole group; ``name`` is its domain ("" for every node)."""

    name: str
    nodes: list[NodeInfo] = field(default_factory=list)


def generate_placements(key: str, nodes: Iterable[NodeInfo], scheduled: Iterable[NodeInfo]) -> list[Placement]:
    """One placement per value of label ``key`` (sorted), restricted to the domain of the scheduled members."""
    required: str | None = None
    for node in scheduled:
        domain = node.labels.get(key)
        if domain is None:
            raise PlacementError(f"cannot determine domain for already scheduled pods: no topology domain "
                                 f"found for node {node.name}")
        if required is not None and required != domain:
            raise PlacementError(f"cannot determine domain for already scheduled pods: more than 1 domain "
                                 f"found for pod group: {required}, {domain}")
        required = domain
    by_domain: dict[str, list[NodeInfo]] = {}
    for node in nodes:
        domain = node.labels.get(key)
        if domain is not None and (required is None or domain == required):
            by_domain.setdefault(domain, []).append(node)
    return [Placement(domain, by_domain[domain]) for domain in sorted(by_domain)]


def pods_count_scores(counts: dict[str, int]) -> dict[str, int]:
    """PodGroupPodsCount over the feasible placements (by name): count × 100 / the largest count."""
    top = max(counts.values(), default=0)
    if top == 0:
        return {name: 0 for name in counts}
    return {name: n * MAX_NODE_SCORE // top for name, n in counts.items()}
