"""Nodes grouped by state, so one scheduling attempt filters and scores each distinct state once.

Two nodes are in one group when every default plugin must give any pod without node-name or label
dependent constraints the same verdict and score on both (``NodeInfo.static_key`` + ``dynamic_key``:
taints, allocatable, requests, ports, the DRA device class and its allocated state). The group of every
node is kept as one byte, so a pod's per-group verdicts become a per-node feasibility map with
``bytes.translate`` and the rotating search for the first N feasible nodes runs in C.

Invalidation: a node's group is recomputed when it is marked dirty — by ``NodeInfo`` when a pod is added
or removed, by the DRA state when a claim touching its devices is allocated or released. More than 255
live groups (very heterogeneous clusters) switch the fast path off until they shrink again.
"""

from __future__ import annotations

import functools

from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.dynamic_resources.manager import DraState

MAX_GROUPS = 255
JOURNAL_LIMIT = 100_000


class ChangeLog(set[int]):
    """The dirty set that also logs every change (node index, in order), for caches that live across
    scheduling cycles (:mod:`dralloc.scheduler.memo`): entries since a position name the nodes changed."""

    def __init__(self, indices: range) -> None:
        super().__init__(indices)
        self.log: list[int] = []

    def add(self, index: int) -> None:
        super().add(index)
        self.log.append(index)


class NodeGroups:
    def __init__(self, nodes: list[NodeInfo], dra: DraState) -> None:
        self.nodes = nodes
        self.dra = dra
        self.index = {n.name: i for i, n in enumerate(nodes)}
        self.dirty = ChangeLog(range(len(nodes)))
        for i, n in enumerate(nodes):
            n.dirty_sink = (self.dirty, i)
        dra.on_node_change = self.node_changed
        self.gids = bytearray(len(nodes))
        self._gid_of: dict[tuple[object, ...], int] = {}
        self._key_of: dict[int, tuple[object, ...]] = {}
        self._count: dict[int, int] = {}
        self._free: list[int] = []
        self._assigned: list[int] = [-1] * len(nodes)
        self._member: dict[int, int] = {}  # group id → one node index in it (checked before use)
        self.overflow = 0
        # Every node index refreshed, in order (readers keep their place: ``journal_start + len(journal)``
        # is the running count), so that caches of per-node facts can follow the changes.
        self.journal: list[int] = []
        self.journal_start = 0

    def node_changed(self, name: str) -> None:
        i = self.index.get(name)
        if i is not None:
            self.dirty.add(i)

    def refresh(self) -> bool:
        """Bring every dirty node's group up to date; False when there are too many groups to use."""
        if self.dirty:
            if len(self.journal) > JOURNAL_LIMIT:
                self.journal_start += len(self.journal)
                self.journal = []
            self.journal.extend(self.dirty)
            state_id = self.dra.state_id
            for i in self.dirty:
                node = self.nodes[i]
                key = (node.static_key, node.dynamic_key(state_id(node.name)))
                gid = self._gid_of.get(key)
                if gid is None:
                    gid = self._free.pop() if self._free else len(self._gid_of) + len(self._free) + self.overflow
                    self._gid_of[key] = gid
                    self._key_of[gid] = key
                old = self._assigned[i]
                if old == gid:
                    continue
                if old >= 0:
                    self._release(old)
                self._assigned[i] = gid
                self._member[gid] = i
                self._count[gid] = self._count.get(gid, 0) + 1
                if gid <= MAX_GROUPS:
                    self.gids[i] = gid
            self.dirty.clear()
        return all(g <= MAX_GROUPS for g in self._count)

    def _release(self, gid: int) -> None:
        left = self._count[gid] - 1
        if left:
            self._count[gid] = left
            return
        del self._count[gid]
        self._member.pop(gid, None)
        del self._gid_of[self._key_of.pop(gid)]
        if gid <= MAX_GROUPS:
            self._free.append(gid)
        else:
            self.overflow += 1

    def live(self) -> dict[int, int]:
        """Group id → a member node index, for every group with members. Any member stands for its group
        (they give the same verdicts); the one remembered is used while it is still in the group, so an
        attempt does not walk every node."""
        out: dict[int, int] = {}
        stale = False
        assigned = self._assigned
        for gid in self._count:
            i = self._member.get(gid)
            if i is None or assigned[i] != gid:
                stale = True
                break
            out[gid] = i
        if stale:
            out = {}
            for i, gid in enumerate(assigned):
                if gid not in out:
                    out[gid] = i
                    self._member[gid] = i
                    if len(out) == len(self._count):
                        break
        return out

    def key(self, gid: int) -> tuple[object, ...]:
        return self._key_of[gid]


@functools.lru_cache(maxsize=256)
def _times_table(m: int) -> bytes:
    """The translation table of multiplying a byte by ``m`` (modulo 256)."""
    return bytes((i * m) & 0xFF for i in range(256))


def combine_classes(first: bytes, n: int, second: bytes, m: int) -> tuple[bytes, int] | None:
    """Two per-node class arrays (values below ``n`` and ``m``) as one: ``first * m + second`` for every node,
    computed in C (the bytes, read as big integers, add without carries); None past 256 classes."""
    if n * m > 256:
        return None
    scaled = first.translate(_times_table(m))
    total = int.from_bytes(scaled, "big") + int.from_bytes(second, "big")
    return total.to_bytes(len(first), "big"), n * m
