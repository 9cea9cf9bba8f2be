"""The framework's extension points: CycleState clone, PreFilter extensions with nominated pods and in the
preemption dry run, plugin node keys, PreEnqueue, Reserve/Unreserve, Permit, PreBind and Bind."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from sched_builders import GPU_CLASS, by_name, gpu_slice, load, node, pod

from dralloc.controllers.names import NameGenerator
from dralloc.scheduler import Scheduler
from dralloc.scheduler.framework import Code, Cycle, Plugin, Status, error, unschedulable
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo
from dralloc.scheduler.profile import default_plugins
from dralloc.simulator.loading import sort_objects

GPU_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
"""


def build(*docs: str, extra: list[Plugin], seed: int = 0, **kwargs: object) -> Scheduler:
    """A scheduler over ``docs`` whose profile is the default one plus ``extra`` (before DefaultBinder)."""
    plugins = default_plugins()
    plugins[-1:-1] = extra
    names = NameGenerator(seed)
    objs = sort_objects(load(*docs), names)
    return Scheduler(objs.nodes, objs.pods, slices=objs.slices, classes=objs.classes, claims=objs.claims,
                     templates=objs.templates, seed=seed, names=names, plugins=plugins, **kwargs)  # type: ignore[arg-type]


def labelled(name: str, label: str, **kwargs: object) -> str:
    return pod(name, **kwargs).replace(  # type: ignore[arg-type]
        "namespace: default}", f"namespace: default, labels: {{role: {label}}}}}")


# ---------------------------------------------------------------------- CycleState clone
@dataclass
class Counter:
    count: int = 0

    def clone(self) -> Counter:
        return Counter(self.count)


def test_clone_copies_state_with_a_clone_method_and_shares_the_rest() -> None:
    sched = build(node("n1"), pod("p"), extra=[])
    shared: list[int] = []
    cycle = Cycle(sched.infos["default/p"], sched.snapshot, data={"a": Counter(1), "b": shared})
    cycle.skip_filter.add("X")
    clone = cycle.clone()
    clone.data["a"].count += 1
    clone.skip_filter.add("Y")
    assert cycle.data["a"].count == 1 and clone.data["a"].count == 2
    assert clone.data["b"] is shared
    assert cycle.skip_filter == {"X"} and clone.skip_filter == {"X", "Y"}


# ---------------------------------------------------------------------- an affinity-like test plugin
@dataclass
class RoleState:
    """How many pods of the wanted role each node holds, as PreFilter found it."""

    per_node: dict[str, int] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)

    def clone(self) -> RoleState:
        return RoleState(dict(self.per_node), list(self.added))


class RoleCount(Plugin):
    """Filter: a node passes when its count of pods with label ``role=<role>`` is what ``want`` says
    (``"none"``: zero, ``"some"``: at least one). Keeps the counts right through AddPod/RemovePod."""

    name = "RoleCount"
    has_filter = True
    has_pre_filter_extensions = True

    def __init__(self, role: str, want: str, reason: str = "role count") -> None:
        self.role, self.want, self.reason = role, want, reason
        self.seen: list[RoleState] = []

    def _has_role(self, p: PodInfo) -> bool:
        return (p.pod.metadata.labels or {}).get("role") == self.role

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        state = RoleState({n.name: sum(self._has_role(p) for p in n.pods) for n in cycle.snapshot.nodes})
        cycle.data[self.name] = state
        self.seen.append(state)
        cycle.keyed.append(self)
        return None

    def add_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: RoleState = cycle.data[self.name]
        state.added.append(pod.name)
        if self._has_role(pod):
            state.per_node[node.name] = state.per_node.get(node.name, 0) + 1
        return None

    def remove_pod(self, cycle: Cycle, pod: PodInfo, node: NodeInfo) -> Status | None:
        state: RoleState = cycle.data[self.name]
        if self._has_role(pod):
            state.per_node[node.name] -= 1
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        count = cycle.data[self.name].per_node.get(node.name, 0)
        ok = count == 0 if self.want == "none" else count > 0
        return None if ok else unschedulable(self.name, self.reason)

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        return cycle.data[self.name].per_node.get(node.name, 0)


def test_the_preemption_dry_run_tells_remove_pod_and_add_pod_on_a_clone() -> None:
    # The blocker is in the way only through RoleCount's state: without RemovePod the dry run would still
    # count it, and evict the more important filler on n2 instead.
    plugin = RoleCount("blocker", "none", "node(s) had a blocker")
    sched = build(node("n1"), node("n2", cpu="1"),
                  labelled("blocker", "blocker", cpu="100m", priority=1, node_name="n1"),
                  pod("filler", cpu="1", priority=50, node_name="n2"),
                  pod("high", cpu="1", priority=100), extra=[plugin])
    result = sched.schedule()
    pods = by_name(result)
    assert pods["blocker"].status == "evicted"
    assert [(e.name, e.node) for e in result.evicted] == [("blocker", "n1")]
    assert pods["high"].node == "n1"
    # The first cycle's own state was never touched by the dry run (it ran on clones).
    assert plugin.seen[0].per_node == {"n1": 1, "n2": 0} and plugin.seen[0].added == []


def test_nominated_pods_are_added_on_a_clone_and_a_second_pass_runs_without_them() -> None:
    # "wants-friend" needs a pod of role friend on its node. The only friend is nominated to n1 (not running):
    # the first pass (with it) passes, the second (without it) fails, so the node is infeasible.
    plugin = RoleCount("friend", "some", "node(s) had no friend")
    friend = labelled("friend", "friend", cpu="100m", priority=100) + "status: {nominatedNodeName: n1}\n"
    sched = build(node("n1"), extra=[plugin], nominated=load(friend))
    result = sched.schedule_pod(load(pod("wants-friend", priority=1))[0])
    assert result.status == "unschedulable"
    assert result.message.startswith("0/1 nodes are available: 1 node(s) had no friend.")
    # AddPod ran for the nominated friend, on a clone: the cycle's own state has no added pods.
    assert plugin.seen[0].added == []


def test_nominated_pods_count_through_add_pod() -> None:
    # With nominated pods the filter sees them through AddPod: "avoid" rejects a node holding a nominated
    # pod of role blocker of at least its priority.
    plugin = RoleCount("blocker", "none", "node(s) had a blocker")
    blocker = labelled("nominee", "blocker", cpu="100m", priority=100) + "status: {nominatedNodeName: n1}\n"
    sched = build(node("n1"), node("n2"), extra=[plugin], nominated=load(blocker))
    result = sched.schedule_pod(load(pod("avoid", priority=1))[0])
    assert result.node == "n2"


class NameBan(Plugin):
    """Rejects the nodes named in ``banned``: a verdict that reads the node's name."""

    name = "NameBan"
    has_filter = True

    def __init__(self, banned: set[str]) -> None:
        self.banned = banned

    def pre_filter(self, cycle: Cycle) -> Status | set[str] | None:
        cycle.keyed.append(self)
        return None

    def filter(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return unschedulable(self.name, "node(s) were banned") if node.name in self.banned else None

    def node_key(self, cycle: Cycle, node: NodeInfo) -> Hashable:
        return node.name in self.banned


def test_a_plugin_node_key_keeps_identical_nodes_apart() -> None:
    # Four identical nodes (alike devices too), the first examined banned: its key differs, so its verdict is
    # not shared with the others, in the group-table path and the per-node path alike.
    for grouped in (True, False):
        docs = [node(f"n{i}", cpu="1") for i in range(4)] + [gpu_slice(f"n{i}") for i in range(4)]
        docs += [GPU_CLASS] + [pod(f"p{i}", cpu="1") for i in range(4)]
        sched = build(*docs, extra=[NameBan({"n0"})], group_nodes=grouped)
        pods = by_name(sched.schedule())
        assert sorted(pods[f"p{i}"].node or "-" for i in range(4)) == ["-", "n1", "n2", "n3"]
        assert pods["p3"].message == (
            "0/4 nodes are available: 1 node(s) were banned, 3 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.")


# ---------------------------------------------------------------------- PreEnqueue
class Gate(Plugin):
    name = "Gate"

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        return unschedulable(self.name, "held at the gate") if pod.name.startswith("held") else None


def test_pre_enqueue_keeps_a_pod_out_of_the_queue() -> None:
    sched = build(node("n1"), pod("held-1"), pod("free"), extra=[Gate()])
    pods = by_name(sched.schedule())
    assert pods["free"].node == "n1"
    assert (pods["held-1"].status, pods["held-1"].message, pods["held-1"].attempts) == \
        ("unschedulable", "held at the gate", 0)


# ---------------------------------------------------------------------- Reserve / Permit / PreBind / Bind
class Recorder(Plugin):
    """Records the points called; fails at ``fail_at`` with ``status``."""

    def __init__(self, name: str, calls: list[str], fail_at: str = "", status: Status | None = None) -> None:
        self.name, self.calls, self.fail_at, self.status = name, calls, fail_at, status

    def _point(self, point: str) -> Status | None:
        self.calls.append(f"{self.name}.{point}")
        return self.status if point == self.fail_at else None

    def reserve(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return self._point("reserve")

    def unreserve(self, cycle: Cycle, node: NodeInfo) -> None:
        self._point("unreserve")

    def permit(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return self._point("permit")

    def pre_bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return self._point("pre_bind")


def gpu_docs() -> list[str]:
    return [node("n1"), gpu_slice("n1", count=1), GPU_CLASS, GPU_CLAIM,
            pod("p", claims="[{name: gpu, resourceClaimName: gpu}]"),
            pod("q", claims="[{name: gpu, resourceClaimName: gpu}]")]


def test_the_points_run_in_order_and_a_reserve_rejection_unreserves_in_reverse() -> None:
    calls: list[str] = []
    a = Recorder("A", calls)
    b = Recorder("B", calls, "reserve", unschedulable("B", "no room in B"))
    sched = build(node("n1"), pod("p"), extra=[a, b])
    pods = by_name(sched.schedule())
    assert calls == ["A.reserve", "B.reserve", "B.unreserve", "A.unreserve"]
    assert pods["p"].status == "unschedulable"
    assert pods["p"].message == "0/1 nodes are available: 1 no room in B."
    assert sched.snapshot.by_name["n1"].pods == []  # assumed, then forgotten


def test_a_permit_rejection_releases_the_dra_reservation() -> None:
    calls: list[str] = []
    sched = build(*gpu_docs()[:-1], extra=[Recorder("P", calls, "permit", unschedulable("P", "not now"))])
    pods = by_name(sched.schedule())
    assert pods["p"].message == "0/1 nodes are available: 1 not now."
    claim = sched.snapshot.claims[("default", "gpu")]
    assert claim.status is None or claim.status.allocation is None
    assert calls == ["P.reserve", "P.permit", "P.unreserve"]


def test_pre_bind_writes_the_claims_and_a_pre_bind_error_is_the_attempts_error() -> None:
    calls: list[str] = []
    ok = build(*gpu_docs()[:-1], extra=[Recorder("R", calls)])
    ok.schedule()
    claim = ok.snapshot.claims[("default", "gpu")]
    assert claim.status is not None and claim.status.allocation is not None
    assert [r.name for r in claim.status.reserved_for or ()] == ["p"]
    failing = build(*gpu_docs()[:-1], extra=[Recorder("R", calls, "pre_bind", error("R", "disk on fire"))])
    pods = by_name(failing.schedule())
    assert (pods["p"].status, pods["p"].message) == ("error", 'running PreBind plugin "R": disk on fire')


class Holder(Plugin):
    name = "Holder"

    def permit(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        return Status(Code.WAIT)


def test_permit_wait_holds_the_assumed_pod_until_allowed() -> None:
    sched = build(node("n1", cpu="1"), extra=[Holder()])
    fw = sched.framework
    first = sched.schedule_pod(load(pod("first", cpu="600m"))[0])
    assert first.message == 'one or more plugins asked to wait and no plugin rejected pod "first"'
    # Held, it still occupies its node.
    second = sched.schedule_pod(load(pod("second", cpu="600m"))[0])
    assert second.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    info = sched.infos["default/first"]
    done = fw.allow(info, "Holder")
    assert done is not None and done.code == Code.SUCCESS and info.pod.spec.node_name == "n1"
    third = sched.schedule_pod(load(pod("third", cpu="100m"))[0])
    rejected = fw.reject(sched.infos["default/third"], "Holder", "timed out")
    assert third.status == "unschedulable"
    assert rejected is not None and rejected.message == "0/1 nodes are available: 1 timed out."
    assert [p.name for p in sched.snapshot.by_name["n1"].pods] == ["first"]


def test_a_held_pod_is_not_tried_again_when_the_cluster_changes() -> None:
    # "held" waits at Permit, assumed on n1; "mid" then preempts "low" (a cluster change that retries the
    # unschedulable pods): the held pod is not among them, so it is assumed once.
    class HoldFirst(Plugin):
        name = "HoldFirst"

        def permit(self, cycle: Cycle, node: NodeInfo) -> Status | None:
            return Status(Code.WAIT) if cycle.pod.name == "held" else None

    sched = build(node("n1", cpu="2"), pod("low", cpu="1", priority=1, node_name="n1"),
                  pod("held", cpu="500m", priority=100), pod("mid", cpu="1", priority=50), extra=[HoldFirst()])
    pods = by_name(sched.schedule())
    assert pods["low"].status == "evicted" and pods["mid"].node == "n1"
    assert pods["held"].attempts == 1
    assert [p.name for p in sched.snapshot.by_name["n1"].pods].count("held") == 1


class SkippingBinder(Plugin):
    name = "SkippingBinder"

    def __init__(self) -> None:
        self.asked = 0

    def bind(self, cycle: Cycle, node: NodeInfo) -> Status | None:
        self.asked += 1
        return Status(Code.SKIP)


def test_a_skipping_binder_hands_the_pod_to_the_default_binder() -> None:
    binder = SkippingBinder()
    sched = build(node("n1"), pod("p"), extra=[binder])
    pods = by_name(sched.schedule())
    assert binder.asked == 1
    assert pods["p"].pod.spec.node_name == "n1"


def test_the_simulator_keeps_its_old_names() -> None:
    import dralloc
    import dralloc.scheduler
    from dralloc.simulator import SimulationResult, Simulator

    assert dralloc.Scheduler is Simulator and dralloc.scheduler.Scheduler is Simulator
    assert dralloc.scheduler.SimulationResult is SimulationResult


def test_profiles_by_scheduler_name_with_their_own_plugins_and_weights() -> None:
    from dralloc.scheduler.profile import Profile

    # "banning-scheduler" has NameBan on top of the defaults; "plain-scheduler" drops NodeResourcesFit and
    # weighs TaintToleration 0. Pods of the default scheduler see neither change.
    banning = Profile("banning-scheduler", enabled=(lambda: NameBan({"n0"}),))
    plain = Profile("plain-scheduler", disabled=frozenset({"NodeResourcesFit"}), weights={"TaintToleration": 0})
    assert [p.name for p in plain.plugins()].count("NodeResourcesFit") == 0
    assert next(p for p in plain.plugins() if p.name == "TaintToleration").weight == 0
    assert banning.plugins()[-1].name == "DefaultBinder" and banning.plugins()[-2].name == "NameBan"
    docs = [node("n0", cpu="1"),
            pod("banned", cpu="100m", extra_spec="schedulerName: banning-scheduler"),
            pod("huge", cpu="64", extra_spec="schedulerName: plain-scheduler"),
            pod("other", extra_spec="schedulerName: someone-else"),
            pod("default", cpu="64")]
    sched = build(*docs, extra=[], profiles=[banning, plain])
    pods = by_name(sched.schedule())
    assert pods["banned"].message.startswith("0/1 nodes are available: 1 node(s) were banned.")
    assert pods["huge"].node == "n0"  # no NodeResourcesFit in its profile
    assert pods["other"].status == "skipped"
    assert pods["default"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_the_fit_error_histogram_counts_every_node_whatever_status_objects_they_share() -> None:
    from dralloc.scheduler.framework import Diagnosis, fit_error_message, interned, unresolvable

    shared = interned(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit")
    assert interned(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit") is shared
    statuses = {f"n{i}": shared for i in range(11)}
    statuses["a"] = unschedulable("NodeResourcesFit", "Insufficient cpu")  # same reason, another object
    statuses["b"] = unresolvable("TaintToleration", "node(s) had untolerated taint {k: v}")
    text = fit_error_message(20, Diagnosis(node_statuses=statuses, absent_status=unresolvable("X", "absent")))
    assert text == ("0/20 nodes are available: 1 node(s) had untolerated taint {k: v}, 11 Insufficient memory, "
                    "12 Insufficient cpu, 7 absent.")
