"""The structured allocator: pick exactly the devices kube-scheduler's allocator would pick.

``Allocator(slices, classes, allocated_claims)`` is built once; ``allocate(node, claims)`` allocates the
pending claims together for one node (all or nothing) and returns an :class:`AllocationOutcome`; hard errors
raise :class:`~dralloc.errors.AllocationError`. The allocated state is updated with :meth:`claim_allocated`
/ :meth:`claim_released`, the slices with :meth:`add_slices` / :meth:`remove_slices`, no rebuild needed.

Module layout (imports go one way, top to bottom):

* ``allocator``  this class: slices by node and pool, caches, the entry point;
* ``explain``    why a node cannot take the claims (after a failed search);
* ``results``    AllocationResults from the search's picks;
* ``search``     the depth-first search and its pruning;
* ``claims``     validation of the pending claims (node-independent plan + per-node part);
* ``views``      one node's pools and candidate devices; the per-device cache;
* ``pools``, ``state``, ``constraints``, ``capacity``, ``selectors``, ``tolerations``: the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import EllipsisType
from typing import Any

from dralloc.allocator.claims import MAX_DEVICES_PER_CLAIM, ClaimPlan
from dralloc.allocator.errors import AllocationTimeout
from dralloc.allocator.explain import Explanation, explain_failure
from dralloc.allocator.numbers import to_num
from dralloc.allocator.outcome import INVALID_POOLS_MESSAGE, AllocationOutcome
from dralloc.allocator.pools import Candidate, Pool
from dralloc.allocator.results import SHARE_ID_NAMESPACE, build_results
from dralloc.allocator.search import HARD_AFTER, Search
from dralloc.allocator.selectors import SelectorCache
from dralloc.allocator.state import AllocatedState
from dralloc.allocator.upstream_cost import TIMEOUT_STEPS, UpstreamCost
from dralloc.allocator.views import DeviceInfoCache, NodeView, build_node_view
from dralloc.api.core_v1 import Node
from dralloc.api.defaults import apply_defaults
from dralloc.api.resource_v1 import DeviceClass, ResourceClaim, ResourceSlice

__all__ = ["INVALID_POOLS_MESSAGE", "MAX_DEVICES_PER_CLAIM", "SHARE_ID_NAMESPACE", "AllocationOutcome", "Allocator"]

_PLANS_MAX = 65536  # claim plans kept; beyond that the oldest half is dropped
_VIEWS_MAX = 4096  # node views kept; beyond that all are dropped


class Allocator:
    """Slices, classes and allocated state of a cluster; allocates pending claims node by node.

    ``prune=False`` runs upstream's plain search (same answers, exponential time on hard inputs): the
    reference the tests compare the pruned search with. ``hard_after`` is the number of search steps after
    which look-ahead and the failure memo switch on (0: from the start, as the tests run them).
    ``timeout_steps``: where the pruned search proves that upstream's plain search takes more steps than this
    before it answers, ``allocate`` raises :class:`~dralloc.allocator.errors.AllocationTimeout` (upstream's
    answer is its filter timeout then); the default is kube-scheduler's 10 s at the assumed cost per step,
    None never stops.

    Caches, all owned by this object (none at module level) — what they hold and when they are dropped:

    * device infos (:class:`~dralloc.allocator.views.DeviceInfoCache`): static facts and selector outcomes
      per device object, checked by identity; entries of removed slices are dropped by :meth:`remove_slices`.
      A caller that builds a new Allocator per scheduling cycle over the same slice objects may pass one
      ``device_cache`` owned by its cluster snapshot (whose life matches the devices), so selectors are not
      evaluated again on devices already seen.
    * node views: pools and candidate devices per (node name, node labels); all dropped when slices are added
      or removed (pool membership and completeness may change).
    * available counters per pool: dropped when the allocated state changes (its ``version``) or slices change.
    * claim plans: the node-independent validation of a pending claim (defaults, classes, counts, constraint
      kinds), keyed by the claim object (checked by identity, so a new object — e.g. a new resourceVersion —
      gets a new plan). Classes are fixed for the life of the Allocator, so a plan never goes stale; pending
      claim objects must not be mutated in place. This is what makes ``allocate(node_i, same_claims)`` for
      hundreds of nodes cheap: only the node-dependent part (All-mode device lists) is redone per node.
    """

    def __init__(self, slices: Iterable[ResourceSlice], classes: Iterable[DeviceClass],
                 allocated_claims: Iterable[ResourceClaim] = (), *, state: AllocatedState | None = None,
                 prune: bool = True, hard_after: int = HARD_AFTER, timeout_steps: int | None = TIMEOUT_STEPS,
                 device_cache: DeviceInfoCache | None = None) -> None:
        self.slices: list[ResourceSlice] = []
        self.classes: dict[str, DeviceClass] = {c.metadata.name: c for c in classes}  # type: ignore[misc]
        self.state = state if state is not None else AllocatedState(allocated_claims)
        self.prune = prune
        self.hard_after = hard_after
        self.timeout_steps = timeout_steps
        self.selectors = SelectorCache()
        self._on_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        self._by_pool_cache: dict[tuple[str, str], list[ResourceSlice]] | None = None
        self._views: dict[Any, NodeView] = {}
        self._infos = device_cache if device_cache is not None else DeviceInfoCache()
        self._available: dict[str, dict[tuple[str, str], Any]] = {}
        self._available_negative: dict[str, bool] = {}
        self._available_version = self.state.version
        self._plans: dict[int, ClaimPlan] = {}
        self.add_slices(slices)

    @classmethod
    def from_objects(cls, objects: Iterable[Any], **options: Any) -> Allocator:
        """Build from decoded objects: ResourceSlices, DeviceClasses, and the allocated ResourceClaims
        (``options``: the constructor's keywords)."""
        slices, classes, claims = [], [], []
        for o in objects:
            kind = type(o).__name__
            if kind == "ResourceSlice":
                slices.append(o)
            elif kind == "DeviceClass":
                classes.append(o)
            elif kind == "ResourceClaim" and o.status is not None and o.status.allocation is not None:
                claims.append(o)
        return cls(slices, classes, claims, **options)

    # --- slices ---
    def add_slices(self, slices: Iterable[ResourceSlice]) -> None:
        """Add ResourceSlices (a node joining, a driver publishing): as if the Allocator were rebuilt."""
        new = list(slices)
        if not new:
            return
        self.slices.extend(new)
        on_node, shared = self._on_node, self._shared
        for s in new:
            name = s.spec.node_name
            if name:
                lst = on_node.get(name)
                if lst is None:
                    on_node[name] = [s]
                else:
                    lst.append(s)
            else:
                shared.append(s)
        self._slices_changed()

    def remove_slices(self, slices: Iterable[ResourceSlice]) -> None:
        """Remove ResourceSlices (matched by identity): as if the Allocator were rebuilt without them."""
        gone = {id(s): s for s in slices}
        if not gone:
            return
        self.slices = [s for s in self.slices if id(s) not in gone]
        for name in {s.spec.node_name for s in gone.values() if s.spec.node_name}:
            kept = [s for s in self._on_node.get(name, ()) if id(s) not in gone]
            if kept:
                self._on_node[name] = kept
            else:
                self._on_node.pop(name, None)
        self._shared = [s for s in self._shared if id(s) not in gone]
        self._infos.forget(list(gone.values()))
        self._slices_changed()

    def _slices_changed(self) -> None:
        self._by_pool_cache = None
        self._views.clear()
        self._available.clear()
        self._available_negative.clear()

    @property
    def by_pool(self) -> dict[tuple[str, str], list[ResourceSlice]]:
        """All slices by pool ID (built on first need: only incomplete-looking pools look cluster-wide)."""
        by_pool = self._by_pool_cache
        if by_pool is None:
            by_pool = {}
            for s in self.slices:
                by_pool.setdefault((s.spec.driver, s.spec.pool.name), []).append(s)
            self._by_pool_cache = by_pool
        return by_pool

    # --- allocated state ---
    def claim_allocated(self, claim: ResourceClaim) -> None:
        """Record a claim that got allocated (its devices and capacity are now taken)."""
        self.state.add_claim(claim)

    def claim_released(self, claim: ResourceClaim) -> None:
        """Forget an allocated claim (deallocated or deleted)."""
        self.state.remove_claim(claim)

    # --- per-node views and counters ---
    def node_view(self, node: Node) -> NodeView:
        name = node.metadata.name or ""
        labels = node.metadata.labels or {}
        key = (name, tuple(sorted(labels.items()))) if labels else (name, ())
        view = self._views.get(key)
        if view is None:
            slices_for_node = self._on_node.get(name, []) + self._shared
            view = build_node_view(name, labels, slices_for_node, lambda: self.by_pool, self._infos)
            if len(self._views) >= _VIEWS_MAX:
                self._views.clear()
            self._views[key] = view
        return view

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], Any]:
        """Counter sets of a pool minus what allocated devices consume (cached per pool name, as upstream)."""
        if self._available_version != self.state.version:
            self._available.clear()
            self._available_negative.clear()
            self._available_version = self.state.version
        avail = self._available.get(pool.name)
        if avail is None:
            avail = {}
            for set_name, counters in pool.counter_sets.items():
                for cname, value in counters.items():
                    avail[(set_name, cname)] = value
            state = self.state
            for slices in (pool.device_slices, pool.other_slices):
                for s in slices:
                    spec = s.spec
                    prefix = f"{spec.driver}/{spec.pool.name}/"
                    for d in spec.devices or ():
                        if not d.consumes_counters or not state.is_allocated(prefix + d.name):
                            continue
                        for c in d.consumes_counters:
                            for cname, counter in (c.counters or {}).items():
                                k = (c.counter_set, cname)
                                if k in avail:
                                    avail[k] = avail[k] - to_num(counter.value)
            self._available[pool.name] = avail
            self._available_negative[pool.name] = any(v < 0 for v in avail.values())
        return avail

    def pool_overcommitted(self, pool: Pool) -> bool:
        """Whether allocated devices already consume more of some counter than the pool has."""
        negative = self._available_negative.get(pool.name)
        if negative is None or self._available_version != self.state.version:
            self.available_counters(pool)
            negative = self._available_negative.get(pool.name, False)
        return negative

    # --- claims ---
    def _plan(self, claim: ResourceClaim) -> ClaimPlan:
        plan = self._plans.get(id(claim))
        if plan is not None and plan.source is claim:
            return plan
        plan = ClaimPlan(apply_defaults(claim), self.classes, source=claim)
        if len(self._plans) >= _PLANS_MAX:
            for old in list(self._plans)[: _PLANS_MAX // 2]:
                del self._plans[old]
        self._plans[id(claim)] = plan
        return plan

    def search(self, node: Node, claims: list[ResourceClaim], device_order: DeviceOrder | None = None, *,
               estimate: bool = False, timeout_steps: int | None | EllipsisType = ...) -> Search:
        """A prepared search for the claims on the node (validation errors raise here); ``estimate``: it
        also estimates upstream's step count (:meth:`Search.upstream_cost`); ``timeout_steps``: this call's
        budget instead of the Allocator's (``...``: the Allocator's)."""
        budget = self.timeout_steps if timeout_steps is ... else timeout_steps
        cached = self._plans
        plans = []
        for c in claims:
            plan = cached.get(id(c))
            plans.append(plan if plan is not None and plan.source is c else self._plan(c))
        view = self.node_view(node)
        if device_order is not None:
            view = _reordered(view, device_order)
        search = Search(self, view, node.metadata.name or "", plans, prune=self.prune,
                        hard_after=self.hard_after, estimate=estimate,
                        step_budget=None if estimate else budget)
        search.prepare()
        return search

    # --- the entry point ---
    def allocate(self, node: Node, claims: list[ResourceClaim], *, device_order: DeviceOrder | None = None,
                 timeout_steps: int | None | EllipsisType = ...) -> AllocationOutcome:
        """Allocate ``claims`` (pending, in order) together on ``node``.

        ``device_order`` (not upstream: a scheduling policy's device preference on top of the allocator)
        is a sort key over (driver, pool, device name): the candidates are tried in that order instead of
        upstream's pool → slice → device order (stable, so equal keys keep upstream's order). The rules
        are unchanged; only which fitting devices come first is."""
        budget = self.timeout_steps if timeout_steps is ... else timeout_steps
        if budget == 0 and any(c.spec.devices is not None and c.spec.devices.requests for c in claims):
            # A timeout shorter than one upstream step (kube-scheduler's own tests use 1 ns): upstream's
            # allocator finds its deadline passed at its first step, whatever the claims ask for.
            raise AllocationTimeout(node.metadata.name or "", 1)
        search = self.search(node, claims, device_order, timeout_steps=timeout_steps)
        if not search.run():
            return AllocationOutcome("unschedulable", None, search.node_name, invalid_pools=search.view.has_invalid,
                                     explain=lambda: self.explain(node, claims), claims=claims, steps=search.steps,
                                     upstream=lambda: self.upstream_cost(node, claims))
        return AllocationOutcome("allocated", build_results(search), search.node_name, claims=claims,
                                 steps=search.steps, upstream=lambda: self.upstream_cost(node, claims))

    def explain(self, node: Node, claims: list[ResourceClaim]) -> Explanation:
        """Why the claims do not fit the node: what each filter removed, per request, and whether upstream's
        search would have run past kube-scheduler's filter timeout first."""
        explanation = explain_failure(self.search(node, claims), self.by_pool)
        explanation.upstream = self.upstream_cost(node, claims)
        return explanation

    def upstream_cost(self, node: Node, claims: list[ResourceClaim]) -> UpstreamCost:
        """How many steps kube-scheduler's allocator would search for this call, estimated (off the hot path:
        the search runs again, estimating the subtrees it cuts; see :mod:`dralloc.allocator.upstream_cost`)."""
        search = self.search(node, claims, estimate=True)
        search.run()
        return search.upstream_cost()


DeviceOrder = Callable[[str, str, str], Any]


def _reordered(view: NodeView, device_order: DeviceOrder) -> NodeView:
    """A node view whose candidates come in ``device_order`` (fresh per-request caches: the order is
    part of what they hold)."""
    ranked = sorted(view.candidates, key=lambda c: device_order(c.info.driver, c.info.pool, c.info.name))
    return NodeView(view.pools, [Candidate(c.info, c.pool, c.node_ok, i) for i, c in enumerate(ranked)])
