"""Identical GPUs: counter sets whose devices differ only by name, interchangeable in the failure memo.

A MIG-style pool publishes one counter set per physical GPU and, per GPU, the same partitions. When two
GPUs look the same to every request of the call — their devices, in candidate order, are acceptable to the
same requests, consume the same counters by name, have the same attribute values except for a *label*
attribute (a value of its own per GPU, such as ``parent: gpu-3``, compared only with other devices' values
by the claims' constraints) — then swapping the two GPUs (their devices, their counters and their labels)
maps every state of the search onto one that succeeds or fails alike, wherever the order of picks cannot
matter (no ``distinctAttribute`` from there on, no device shared between requests, nothing that could
raise). The failure memo then describes such GPUs by their state, not their name: each GPU's devices in use
(and by whom), those in the current request's window, its counters consumed and whether a constraint holds
its label, sorted within each class of identical GPUs. The search itself still walks devices by name in
upstream's order, so the answer and every device name in it stay upstream's: the memo only skips subtrees
proven to fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import attribute_set
from dralloc.allocator.pools import Candidate, Pool


class Gpu:
    """One counter set of identical-GPU class ``cls``, with its devices in candidate order."""

    __slots__ = ("cls", "devices", "label", "pool", "set_name")

    def __init__(self, cls: int, pool: Pool, set_name: str, devices: list[str], label: dict[str, Any]) -> None:
        self.cls = cls
        self.pool = pool
        self.set_name = set_name
        self.devices = devices
        self.label = label  # per label attribute: this GPU's value


class IdenticalGpus:
    """The classes of identical GPUs of one search (only classes of two or more GPUs are kept)."""

    def __init__(self, gpus: list[Gpu], labels: set[str]) -> None:
        self.gpus = gpus
        self.labels = labels
        self.index: dict[str, tuple[int, int]] = {}  # device id -> (GPU number, position within the GPU)
        for g, gpu in enumerate(gpus):
            for j, did in enumerate(gpu.devices):
                self.index[did] = (g, j)
        self.sets = {(gpu.pool.name, gpu.set_name): g for g, gpu in enumerate(gpus)}
        self.label_owner = {(attr, value): g for g, gpu in enumerate(gpus) for attr, value in gpu.label.items()}

    def __bool__(self) -> bool:
        return bool(self.gpus)


def find_identical_gpus(candidates: list[Candidate], requests: Iterable[RequestData], attributes: set[str],
                        available: Any) -> IdenticalGpus:
    """Group the node's counter sets into classes of identical GPUs (see the module docstring).

    ``requests``: every request and subrequest of the call, with ``feasible`` computed; ``attributes``: the
    attributes the claims' constraints compare; ``available(pool)``: a pool's available counters.
    """
    rds = list(requests)
    by_set: dict[tuple[str, str], list[Candidate]] = {}
    rigid: list[Candidate] = []
    for cand in candidates:
        sets = {set_name for set_name, _, _ in cand.info.consumes}
        if len(sets) == 1 and not cand.info.allow_multi:
            by_set.setdefault((cand.pool.name, next(iter(sets))), []).append(cand)
        else:
            rigid.append(cand)
    if len(by_set) < 2:
        return IdenticalGpus([], set())
    labels = set()
    for attr in sorted(attributes):
        values = []
        for members in by_set.values():
            found = {attribute_set(c.info, attr) for c in members}
            if len(found) != 1:
                break
            value = next(iter(found))
            if not value or len(value[1]) != 1:
                break
            values.append(value)
        else:
            taken = {(kind, item) for kind, items in values for item in items}
            if len(taken) == len(values) and not any(
                    (v[0], item) in taken for c in rigid if (v := attribute_set(c.info, attr)) for item in v[1]):
                labels.add(attr)
    position = [(rd.feasible[1], rd.feasible[0]) for rd in rds]
    classes: dict[Any, list[tuple[str, str]]] = {}
    for key, members in by_set.items():
        pool = members[0].pool
        avail = available(pool)
        shape = []
        for c in members:
            info = c.info
            member = tuple(p.get(info.id, -1) >= 0 and ok[p[info.id]] for p, ok in position)
            seen = tuple("label" if attr in labels else attribute_set(info, attr) for attr in sorted(attributes))
            draws = tuple(sorted((cname, amount) for _, cname, amount in info.consumes))
            shape.append((member, seen, draws))
        counters = tuple(sorted((cname, value) for (set_name, cname), value in avail.items() if set_name == key[1]))
        classes.setdefault((key[0], counters, tuple(shape)), []).append(key)
    gpus: list[Gpu] = []
    for number, keys in enumerate(v for v in classes.values() if len(v) >= 2):
        for key in keys:
            members = by_set[key]
            label = {attr: attribute_set(members[0].info, attr) for attr in labels}
            gpus.append(Gpu(number, members[0].pool, key[1], [c.info.id for c in members], label))
    return IdenticalGpus(gpus, labels if gpus else set())


def gpu_states(gpus: IdenticalGpus, allocating: dict[str, set[int]], ci: int, window: list[tuple[bool, ...]],
               consumed: dict[str, dict[tuple[str, str], Any]], marks: dict[int, tuple[int, ...]]) -> Any:
    """The identical GPUs' part of a memo key: per class, the sorted states of its GPUs.

    ``window``: per GPU, which of its devices the current request may still pick; ``marks``: per GPU, the
    constraints of the current claim whose value is that GPU's label.
    """
    used: list[list[int]] = [[0] * len(gpu.devices) for gpu in gpus.gpus]
    index = gpus.index
    for did, users in allocating.items():
        at = index.get(did)
        if at is not None:
            used[at[0]][at[1]] = 2 if ci in users else 1
    states: dict[int, list[Any]] = {}
    for g, gpu in enumerate(gpus.gpus):
        pool_consumed = consumed.get(gpu.pool.name)
        drawn: tuple[Any, ...] = ()
        if pool_consumed:
            drawn = tuple(sorted((cname, v) for (set_name, cname), v in pool_consumed.items()
                                 if set_name == gpu.set_name and v))
        states.setdefault(gpu.cls, []).append((tuple(used[g]), window[g], drawn, marks.get(g, ())))
    return tuple((cls, tuple(sorted(s))) for cls, s in sorted(states.items()))
