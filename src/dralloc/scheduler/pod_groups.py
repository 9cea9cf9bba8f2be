"""The scheduler's view of PodGroups (kube-scheduler's PodGroupManager and its PodGroupStates): each group's
object and every known pod that names it in ``spec.schedulingGroup.podGroupName``, in the order they came.

A member counts as scheduled while the cache holds it assumed or bound (``ScheduledPodsCount``); every
member the scheduler knows, pending or not, counts in ``all_pods_count`` (``AllPodsCount``, which the
GangScheduling PreEnqueue barrier compares with minCount).
"""

from __future__ import annotations

from collections.abc import Iterator

from dralloc.api.scheduling_v1alpha2 import PodGroup
from dralloc.scheduler.cache import SchedulerCache
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo


def group_name(pod: PodInfo) -> str | None:
    """The PodGroup the pod names, or None."""
    group = pod.pod.spec.scheduling_group
    return group.pod_group_name if group is not None and group.pod_group_name else None


def group_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


class PodGroupStates:
    def __init__(self, cache: SchedulerCache) -> None:
        self.cache = cache
        self.groups: dict[str, PodGroup] = {}
        self.members: dict[str, list[PodInfo]] = {}

    def add_group(self, group: PodGroup) -> None:
        key = group_key(group.metadata.namespace or "default", group.metadata.name or "")
        self.groups[key] = group
        self.members.setdefault(key, [])

    def add_pod(self, pod: PodInfo) -> None:
        name = group_name(pod)
        if name is not None:
            self.members.setdefault(group_key(pod.namespace, name), []).append(pod)

    def remove_pod(self, pod: PodInfo) -> None:
        """A member taken out (gone, or to be taken in again as it now is): no longer counted."""
        key = self.key_of(pod)
        members = self.members.get(key) if key is not None else None
        if members is not None and pod in members:
            members.remove(pod)

    def key_of(self, pod: PodInfo) -> str | None:
        name = group_name(pod)
        return group_key(pod.namespace, name) if name is not None else None

    def get(self, key: str) -> PodGroup | None:
        return self.groups.get(key)

    def all_pods_count(self, key: str) -> int:
        return len(self.members.get(key, ()))

    def is_scheduled(self, pod: PodInfo) -> bool:
        return pod.uid in self.cache.placed or pod.uid in self.cache.assumed

    def scheduled(self, key: str) -> list[PodInfo]:
        """Members assumed or bound, in member order."""
        return [p for p in self.members.get(key, ()) if self.is_scheduled(p)]

    def scheduled_nodes(self, key: str) -> Iterator[NodeInfo]:
        cache = self.cache
        for p in self.members.get(key, ()):
            node = cache.placed.get(p.uid) or cache.assumed.get(p.uid)
            if node is not None:
                yield node
