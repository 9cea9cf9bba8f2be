"""Verdicts and scores kept across scheduling cycles, for workloads of many alike pods (trace replays).

Within one cycle the framework already filters and scores each distinct node state once (node keys). This
keeps those per-state answers across cycles: pods with the same *signature* — everything the plugins read
of a pod: its spec but for claim names, labels, priority and its pending claims' specs — get the same
verdict and the same raw scores on nodes with the same key. Between two pods of one signature only the
nodes that changed (the node groups' change log: pods bound or removed, claims allocated or released on
them) are keyed again; a node whose key was seen before reuses that answer; only new keys run the filters
and score plugins. The outcome is the uncached cycle's, node for node and draw for draw (the tests
compare both).

Used only where that holds: every node is examined (no sampling), every claim is pending (no allocated
claim ties the pod to nodes), all devices are node-local, no node has nominated pods, the pod names no
node and has no node name, label or affinity constraint, and no plugin keys nodes by more than the node
itself (``cycle.keyed`` plugins must declare ``node_local_key``). Otherwise the cycle runs uncached.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Protocol, cast

from msgspec.structs import replace

from dralloc.api.codec import encode_json
from dralloc.scheduler.framework import Code, Cycle, Diagnosis, Plugin, Status, scoring_plugins
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DraCycle

if TYPE_CHECKING:
    from dralloc.scheduler.groups import NodeGroups

ENTRIES_MAX = 2_000_000  # answers kept over all signatures; beyond that the memo starts again


@dataclass(slots=True, eq=False)
class Answer:
    """One node state's verdict for one pod signature, and its raw scores (filled when first needed)."""

    status: Status | None
    scores: tuple[tuple[str, ...], tuple[int, ...]] | None = None  # (plugins, their raw scores)


@dataclass(slots=True)
class SignatureMemo:
    answers: dict[Hashable, Answer] = field(default_factory=dict)
    per_node: list[Answer | None] = field(default_factory=list)
    statuses: list[Status | None] = field(default_factory=list)
    position: int = 0  # how far into the change log the per-node answers are up to date


class CycleMemo:
    """Cross-cycle answers of one framework (cleared when the snapshot's node groups are rebuilt)."""

    def __init__(self) -> None:
        self.groups: NodeGroups | None = None
        self.memos: dict[bytes, SignatureMemo] = {}
        self.entries = 0
        self._names_of: list[NodeInfo] | None = None
        self._node_names: list[str] = []

    @staticmethod
    def signature(cycle: Cycle) -> bytes | None:
        """What the plugins read of the pod, or None when this pod must not use the memo."""
        pod = cycle.pod
        st: DraCycle | None = cycle.data.get(DRA)
        if st is not None and (len(st.to_allocate) != len(st.claims) or st.extended):
            return None
        if any(not getattr(p, "node_local_key", False) for p in cycle.keyed):
            return None
        spec = pod.pod.spec
        if spec.node_name or spec.node_selector or spec.affinity is not None:
            return None
        if pod.pod.status is not None and pod.pod.status.nominated_node_name:
            return None
        claims = [pc.name for pc in spec.resource_claims or ()]
        head = encode_json([replace(spec, resource_claims=None), claims, pod.pod.metadata.labels,
                            pod.namespace, pod.priority])
        return head + b"\0" + (st.signature if st is not None else b"")

    def feasible(self, framework: FrameworkLike, cycle: Cycle, signature: bytes, diagnosis: Diagnosis
                 ) -> list[NodeInfo] | None:
        """The feasible nodes in node order (when there is none, every node's status in ``diagnosis``), or
        None when a filter raised an error (the caller reruns the cycle uncached for upstream's error)."""
        snap = cycle.snapshot
        groups = snap.groups
        if groups is not self.groups or self.entries > ENTRIES_MAX:
            self.groups, self.memos, self.entries = groups, {}, 0
        nodes = snap.nodes
        memo = self.memos.get(signature)
        log = groups.dirty.log
        if memo is None or len(memo.per_node) != len(nodes):
            memo = self.memos[signature] = SignatureMemo(per_node=[None] * len(nodes), position=len(log))
            memo.statuses = [None] * len(nodes)
            stale: set[int] | range = range(len(nodes))
        else:
            stale = set(log[memo.position:])
            memo.position = len(log)
        per_node, statuses, answers = memo.per_node, memo.statuses, memo.answers
        state_id = snap.dra.state_id
        keyed = cycle.keyed
        fresh: set[int] = set()
        cycle.data[FRESH] = fresh
        for i in stale:
            node = nodes[i]
            key = (node.static_key, node.dynamic_key(state_id(node.name)),
                   tuple(p.node_key(cycle, node) for p in keyed) if keyed else ())
            answer = answers.get(key)
            if answer is None:
                status = framework.run_filters(cycle, node)
                if status is not None and status.code == Code.ERROR:
                    del self.memos[signature]  # never keep an error: the uncached cycle reports it
                    return None
                answer = answers[key] = Answer(status)
                fresh.add(id(answer))
                self.entries += 1
            per_node[i] = answer
            statuses[i] = answer.status
        # A Status is always true, None false: the feasible nodes are those whose status is not.
        flags = list(map(operator.not_, statuses))
        feasible = list(compress(nodes, flags))
        if not feasible:  # then every node has a status
            diagnosis.node_statuses.update(zip(self._names(nodes), cast("list[Status]", statuses)))
        cycle.data[MEMO] = (memo, flags)
        return feasible

    def _names(self, nodes: list[NodeInfo]) -> list[str]:
        """The nodes' names (kept while the snapshot's node list is the same object, of the same length)."""
        if self._names_of is not nodes or len(self._node_names) != len(nodes):
            self._names_of, self._node_names = nodes, [n.name for n in nodes]
        return self._node_names

    @staticmethod
    def totals(framework: FrameworkLike, cycle: Cycle, feasible: list[NodeInfo]) -> list[int]:
        """Each feasible node's weighted score: raw scores per distinct answer (kept for later pods of the
        signature), normalised over the distinct answers, as the framework's own scoring does."""
        memo, flags = cycle.data[MEMO]
        mine: list[Answer] = list(compress(memo.per_node, flags))
        # The distinct answers in order of first appearance, each with its first node (C-level passes: a
        # replay has a thousand feasible nodes and few distinct answers among them).
        ids = list(map(id, mine))
        order = dict.fromkeys(ids)
        first_node = dict(zip(reversed(ids), reversed(feasible)))
        answer_of = dict(zip(ids, mine))
        fresh: set[int] = cycle.data[FRESH]
        active = scoring_plugins(framework.scorers, cycle, feasible)
        names = tuple(p.name for p in active)
        raw: dict[int, tuple[int, ...]] = {}
        for key in order:
            answer = answer_of[key]
            scores = answer.scores
            if scores is None or scores[0] != names:
                node = first_node[key]
                if key not in fresh:
                    # Filtered in an earlier cycle: filter again so plugins hold this cycle's per-node
                    # state (DynamicResources scores from what its Filter found).
                    framework.run_filters(cycle, node)
                scores = answer.scores = (names, tuple(p.score(cycle, node) for p in active))
            raw[key] = scores[1]
        # Per plugin, a column of raw scores over the distinct answers (in their order), normalised when the
        # plugin normalises, weighted and summed.
        keys = list(raw)
        sums = [0] * len(keys)
        for plugin, column in zip(active, zip(*raw.values())):
            if type(plugin).normalize is not Plugin.normalize:
                normalised = plugin.normalize(cycle, dict(zip(keys, column)))
                column = tuple(normalised.get(key, 0) for key in keys)
            weight = plugin.weight
            sums = [total + score * weight for total, score in zip(sums, column)]
        totals = dict(zip(keys, sums))
        return list(map(totals.__getitem__, ids))


MEMO = "memo/signature"
FRESH = "memo/fresh"


class FrameworkLike(Protocol):
    """What the memo uses of the framework (kept narrow: the framework module imports this one)."""

    scorers: list[Plugin]

    def run_filters(self, cycle: Cycle, node: NodeInfo) -> Status | None: ...
