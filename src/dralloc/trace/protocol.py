"""The arrival order of the FGD paper's experiments (its simulator's ``-tune R -tuneseed S --shuffle-pod``).

With one seeded generator, in this order: the pods sorted by name are shuffled; then, while the workload's
GPU demand is below R × the cluster's milli-GPU, a pod drawn uniformly (with replacement) from the
pods sorted by name is appended as a renamed copy (``<name>-tuned-<i>``) — until the first draw whose
milli per GPU would pass the target (the simulator's test; the running total grows by k × milli). Above
the target, random pods are removed instead. Finally a random permutation ranks the nodes (by name):
among equally scored nodes the lowest rank wins.

The generator is Python's, not Go's, so a seed gives a different order than the paper's: the results
match in distribution over seeds, not pod by pod.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Demand:
    """What the protocol reads of a pod: its name, milli per GPU and total milli-GPU (k × milli)."""

    name: str
    milli: int
    total: int


@dataclass(frozen=True, slots=True)
class Arrival:
    source: int  # index of the pod in the input
    name: str  # its name, or the copy's


def arrivals(pods: list[Demand], capacity: int, inflate: float, rng: random.Random) -> list[Arrival]:
    """The arrival sequence for a cluster of ``capacity`` milli-GPU (``inflate`` 0: no tuning)."""
    by_name = sorted(range(len(pods)), key=lambda i: pods[i].name)
    order = list(by_name)
    rng.shuffle(order)
    out = [Arrival(i, pods[i].name) for i in order]
    if inflate <= 0 or not pods:
        return out
    target = inflate * capacity
    total = sum(p.total for p in pods)
    if total < target:
        copy = 0
        while True:
            i = by_name[rng.randrange(len(by_name))]
            if total + pods[i].milli > target:
                break
            total += pods[i].total
            out.append(Arrival(i, f"{pods[i].name}-tuned-{copy}"))
            copy += 1
    else:
        while total > target and out:
            gone = out.pop(rng.randrange(len(out)))
            total -= pods[gone.source].total
    return out


def node_ranks(names: list[str], rng: random.Random) -> dict[str, int]:
    """A random rank per node (nodes taken by name)."""
    ordered = sorted(names)
    perm = list(range(len(ordered)))
    rng.shuffle(perm)
    return {name: perm[i] for i, name in enumerate(ordered)}
