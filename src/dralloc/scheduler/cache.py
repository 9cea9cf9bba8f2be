"""The scheduler's long-lived cache (kube-scheduler's ``internal/cache``): which pods count on which node,
including pods assumed by a cycle but not yet bound, over one :class:`ClusterSnapshot` for the scheduler's
whole life.

Upstream takes a fresh snapshot of the cache at the start of every cycle because binding runs concurrently.
Here a cycle and its binding run one after the other on one thread, so the snapshot a cycle reads is the
cache's own state (:meth:`SchedulerCache.update_snapshot` returns it): nothing can change it mid-cycle.
"""

from __future__ import annotations

from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.snapshot import ClusterSnapshot


class SchedulerCache:
    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.snapshot = snapshot
        self.assumed: dict[str, NodeInfo] = {}  # pod uid → the node it is assumed on
        self.placed: dict[str, NodeInfo] = {}  # pod uid → the node it is bound to

    def update_snapshot(self) -> ClusterSnapshot:
        """The view one cycle schedules against."""
        return self.snapshot

    # ------------------------------------------------------------------ a cycle's pod
    def assume_pod(self, pod: PodInfo, node: NodeInfo) -> None:
        """``AssumePod``: count the pod on the node before it is bound."""
        pod.claim_footprint = {}
        node.add_pod(pod)
        self.assumed[pod.uid] = node

    def forget_pod(self, pod: PodInfo) -> None:
        """``ForgetPod``: a failure after assume takes the pod off its node again."""
        node = self.assumed.pop(pod.uid, None)
        if node is not None and pod in node.pods:
            node.remove_pod(pod, pod.claim_footprint)
        pod.claim_footprint = {}

    def finish_binding(self, pod: PodInfo) -> None:
        """``FinishBinding``: the assumed pod is bound; it stays counted as a bound pod."""
        node = self.assumed.pop(pod.uid, None)
        if node is not None:
            self.placed[pod.uid] = node

    def is_assumed(self, pod: PodInfo) -> bool:
        return pod.uid in self.assumed

    # ------------------------------------------------------------------ pods bound or deleted elsewhere
    def add_pod(self, pod: PodInfo, node: NodeInfo) -> None:
        """A bound pod the scheduler did not place (running in the input, or bound by someone else)."""
        node.add_pod(pod, pod.claim_footprint)
        self.placed[pod.uid] = node

    def remove_pod(self, pod: PodInfo, node: NodeInfo) -> None:
        """A pod deleted, evicted or moved off ``node``: it and its claims' footprint no longer count there."""
        self.placed.pop(pod.uid, None)
        self.assumed.pop(pod.uid, None)
        if pod in node.pods:
            node.remove_pod(pod, pod.claim_footprint)
