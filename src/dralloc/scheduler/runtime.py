"""The framework runtime: each extension point run over the profile's plugins that implement it, in order,
with kube-scheduler's texts for a plugin's error (``framework/runtime/framework.go``). The cycle that calls
these points is :mod:`dralloc.scheduler.schedule_one`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from dralloc.scheduler.framework import (
    Code,
    Cycle,
    K,
    Plugin,
    Status,
    implements,
    scoring_plugins,
    unresolvable,
)
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo


class PluginRuntime:
    """The profile's plugins, listed per extension point."""

    def __init__(self, plugins: list[Plugin], points: Mapping[str, Sequence[str]] | None = None) -> None:
        """``points``: a configured profile's plugin names per extension point (``preFilter``, ``filter``,
        ``score``, ...), in run order; without it every plugin runs at every point it implements, in list
        order."""
        self.plugins = plugins
        by_name = {p.name: p for p in plugins}

        def at(point: str, fits: Callable[[Plugin], bool]) -> list[Plugin]:
            if points is None:
                return [p for p in plugins if fits(p)]
            return [by_name[n] for n in points.get(point, ()) if n in by_name and fits(by_name[n])]

        self.pre_enqueuers = at("preEnqueue", lambda p: implements(p, "pre_enqueue"))
        self.pre_filters = at("preFilter", lambda p: implements(p, "pre_filter"))
        self.extenders = [p for p in self.pre_filters if p.has_pre_filter_extensions]
        self.filters = at("filter", lambda p: p.has_filter)
        self.scorers = at("score", lambda p: p.has_score)
        self.reservers = at("reserve", lambda p: implements(p, "reserve") or implements(p, "unreserve"))
        self.permitters = at("permit", lambda p: implements(p, "permit"))
        self.pre_binders = at("preBind", lambda p: implements(p, "pre_bind"))
        self.binders = at("bind", lambda p: implements(p, "bind"))

    # ------------------------------------------------------------------ PreEnqueue
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        """Every PreEnqueue plugin in order; the first that does not let the pod in answers."""
        for plugin in self.pre_enqueuers:
            status = plugin.pre_enqueue(pod)
            if status is not None and status.code != Code.SUCCESS:
                return Status(status.code, status.reasons, plugin.name)
        return None

    # ------------------------------------------------------------------ filters
    def run_filters(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """``RunFilterPluginsWithNominatedPods``: with pods nominated to the node of at least the pod's
        priority counted on it (their AddPod run on a clone of the cycle), then — when that passed and some
        were added — again without them, so that a filter that needs other pods (affinity) cannot pass only
        thanks to pods that may land elsewhere."""
        if node.nominated:
            others = [p for p in node.nominated if p is not cycle.pod and p.priority >= cycle.pod.priority]
            if others:
                with_nominated = node.copy_with([])
                state = cycle.clone() if self.extenders else cycle
                for p in others:
                    with_nominated.add_pod(p, p.claim_footprint)
                    added = self.run_add_pod(state, p, with_nominated)
                    if added is not None:
                        return added
                status = self.run_filter_plugins(state, with_nominated)
                if status is not None:
                    return status
        return self.run_filter_plugins(cycle, node)

    def run_filter_plugins(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """Every filter plugin in order, stopping at the first that rejects."""
        skip = cycle.skip_filter
        for plugin in self.filters:
            if plugin.name in skip:
                continue
            status = plugin.filter(cycle, node)
            if status is not None:
                if status.code == Code.ERROR:  # the attempt's error text, as RunFilterPlugins wraps it
                    return Status(Code.ERROR, (f'running "{plugin.name}" filter plugin: {status.message}',),
                                  plugin.name)
                return status
        return None

    def run_add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        """``RunPreFilterExtensionAddPod``: ``pod`` was added to ``node`` (a copy) for this cycle."""
        for plugin in self.extenders:
            if plugin.name in cycle.skip_filter:
                continue
            status = plugin.add_pod(cycle, pod, node)
            if status is not None and status.code != Code.SUCCESS:
                return Status(Code.ERROR, (f'running AddPod on PreFilter plugin "{plugin.name}": '
                                           f"{status.message}",), plugin.name)
        return None

    def run_remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        """``RunPreFilterExtensionRemovePod``: ``pod`` was removed from ``node`` (a copy) for this cycle."""
        for plugin in self.extenders:
            if plugin.name in cycle.skip_filter:
                continue
            status = plugin.remove_pod(cycle, pod, node)
            if status is not None and status.code != Code.SUCCESS:
                return Status(Code.ERROR, (f'running RemovePod on PreFilter plugin "{plugin.name}": '
                                           f"{status.message}",), plugin.name)
        return None

    def run_pre_filter(self, cycle: Cycle) -> tuple[Status | None, set[str] | None, list[str]]:
        names: set[str] | None = None
        with_nodes: list[str] = []
        rejected: Status | None = None
        for plugin in self.pre_filters:
            result = plugin.pre_filter(cycle)
            if result is None:
                continue
            if isinstance(result, set):
                with_nodes.append(plugin.name)
                names = set(result) if names is None else names & result
                if not names:
                    plugins = sorted(with_nodes)
                    text = (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1 else
                            f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")
                    return unresolvable(plugin.name, text), names, with_nodes
                continue
            if result.code == Code.SKIP:
                cycle.skip_filter.add(plugin.name)
                continue
            if result.code == Code.UNRESOLVABLE or result.code == Code.ERROR:
                return result, None, with_nodes
            rejected = result  # Unschedulable: the other PreFilters still run (preemption may help)
        return rejected, names, with_nodes

    def run_scores(self, cycle: Cycle, feasible: list[NodeInfo], reps: dict[K, NodeInfo]) -> dict[K, int]:
        """Weighted sum of every score plugin's normalised score, for one representative node per state
        (normalisation only reads the maximum, which the representatives have)."""
        totals = dict.fromkeys(reps, 0)
        for plugin, scores in self.plugin_scores(cycle, feasible, reps):
            for key, score in scores.items():
                totals[key] += score * plugin.weight
        return totals

    def plugin_scores(self, cycle: Cycle, feasible: list[NodeInfo], reps: dict[K, NodeInfo]
                      ) -> Iterator[tuple[Plugin, dict[K, int]]]:
        """Each score plugin that scores the pod (its PreScore did not skip), with its normalised, unweighted
        score per key of ``reps`` — what kube-scheduler's RunScorePlugins holds before it applies weights."""
        for plugin in scoring_plugins(self.scorers, cycle, feasible):
            yield plugin, plugin.normalize(cycle, {key: plugin.score(cycle, rep) for key, rep in reps.items()})

    # ------------------------------------------------------------------ Reserve, Permit, PreBind, Bind
    def run_reserve(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        for plugin in self.reservers:
            status = plugin.reserve(cycle, node)
            if status is not None and status.code != Code.SUCCESS:
                if status.rejected:
                    return Status(status.code, status.reasons, plugin.name)
                return Status(Code.ERROR, (f'running Reserve plugin "{plugin.name}": {status.message}',),
                              plugin.name)
        return None

    def run_unreserve(self, cycle: Cycle, node: NodeInfo) -> None:
        """Every Reserve plugin's Unreserve, in reverse order."""
        for plugin in reversed(self.reservers):
            plugin.unreserve(cycle, node)

    def run_permit(self, cycle: Cycle, node: NodeInfo) -> tuple[Status | None, set[str]]:
        """The first rejection or error, else WAIT with the plugins that asked to wait, else None."""
        waiting_on: set[str] = set()
        for plugin in self.permitters:
            status = plugin.permit(cycle, node)
            if status is None or status.code == Code.SUCCESS:
                continue
            if status.rejected:
                return Status(status.code, status.reasons, plugin.name), waiting_on
            if status.code == Code.WAIT:
                waiting_on.add(plugin.name)
                continue
            return Status(Code.ERROR, (f'running Permit plugin "{plugin.name}": {status.message}',),
                          plugin.name), waiting_on
        if waiting_on:
            text = f'one or more plugins asked to wait and no plugin rejected pod "{cycle.pod.name}"'
            return Status(Code.WAIT, (text,)), waiting_on
        return None, waiting_on

    def run_pre_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        for plugin in self.pre_binders:
            status = plugin.pre_bind(cycle, node)
            if status is not None and status.code != Code.SUCCESS:
                if status.rejected:
                    return Status(status.code, status.reasons, plugin.name)
                return Status(Code.ERROR, (f'running PreBind plugin "{plugin.name}": {status.message}',),
                              plugin.name)
        return None

    def run_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        """The Bind plugins in order until one does not SKIP."""
        for plugin in self.binders:
            status = plugin.bind(cycle, node)
            if status is not None and status.code == Code.SKIP:
                continue
            if status is None or status.code == Code.SUCCESS:
                return None
            if status.rejected:
                return Status(status.code, status.reasons, plugin.name)
            return Status(Code.ERROR, (f'running Bind plugin "{plugin.name}": {status.message}',), plugin.name)
        return Status(Code.ERROR, ("no Bind plugin bound the pod",))
