"""The controllers' mirror of the store (an informer's cache kept from the event log) and what a pass looks at
when little changed."""

from __future__ import annotations

import time
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import CLASS, NODE, NS, TEMPLATE, Cluster, R, pod, slice_  # noqa: E402

from dralloc.server.controllers import ControllerManager  # noqa: E402
from dralloc.server.controllers.snapshot import RESOURCES, Changes, Mirror, Snapshot  # noqa: E402
from dralloc.store import Conflict, NotFound, SQLiteStore, SQLStore  # noqa: E402

ALLOCATION = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "d"}]}}


def claim(name: str, allocated: bool, rv: str) -> dict[str, Any]:
    """Allocated claims are reserved for a pod named after their resourceVersion's parity (so that updates
    move them from one pod to another); the others are owned by a pod named after the claim."""
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
                           "spec": {"devices": {"requests": []}}}
    if allocated:
        obj["status"] = {"allocation": ALLOCATION,
                         "reservedFor": [{"resource": "pods", "name": f"pod-{int(rv) % 2}", "uid": "u"}]}
    else:
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": f"owner-{name}",
                                               "uid": "o", "controller": True}]
    return obj


def catch_up(store: SQLStore, mirror: Mirror, position: int) -> int:
    changes = store.changes_since(position, with_data=RESOURCES)
    mirror.apply_all(changes)  # several changes of one object in a batch: the last one counts
    return changes[-1].rv if changes else position


def a_pod(name: str, deleting: bool, rv: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "resourceVersion": rv}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"nodeName": "node-1"} if name == "q" else {}
    if int(rv) % 2:  # (so that updates add and drop a claim template)
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def write(store: SQLStore, op: str, name: str, flag: bool) -> None:
    """A claim for the names a-e (``flag``: allocated), a pod for p and q (``flag``: being deleted); a create of
    an existing or an update of a missing object writes nothing."""
    resource, make = ("pods", a_pod) if name in "pq" else ("resourceclaims", claim)
    try:
        if op == "delete":
            store.delete(resource, "default", name)
        elif op == "update":
            store.update(resource, "default", name, lambda old, rv: make(name, flag, rv))
        else:
            store.create(resource, "default", name, lambda old, rv: make(name, flag, rv))
    except (NotFound, Conflict):
        pass


ops = st.lists(st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from("abcdepq"), st.booleans()),
               max_size=30)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(before=ops, after=ops)
def test_a_mirror_kept_from_the_event_log_holds_what_a_fresh_list_holds(before: list[Any], after: list[Any]) -> None:
    store = SQLiteStore(":memory:")
    for op in before:
        write(store, *op)
    mirror = Mirror(store)
    position = store.current_rv()
    mirror.relist()
    for i, op in enumerate(after):
        write(store, *op)
        if i % 3 == 0:
            position = catch_up(store, mirror, position)
            if i % 2 == 0:  # (listed early: its order is then kept as objects come and go)
                mirror.listed("resourceclaims")
                mirror.listed("pods")
    catch_up(store, mirror, position)
    fresh = Mirror(store)
    fresh.relist()
    assert {r: mirror.items(r) for r in RESOURCES} == {r: fresh.items(r) for r in RESOURCES}
    assert mirror.listed("resourceclaims") == store.list("resourceclaims")[0]
    assert mirror.listed("pods") == store.list("pods")[0]
    allocated = [c for c in store.list("resourceclaims")[0] if (c.get("status") or {}).get("allocation")]
    assert mirror.allocated_claims() == allocated
    assert mirror._claims_of_pod == fresh._claims_of_pod and mirror._pods_of_claim == fresh._pods_of_claim
    assert mirror.terminating_pods() == [p for p in store.list("pods")[0] if p["metadata"].get("deletionTimestamp")]
    assert mirror.unbound_pods() == [p for p in store.list("pods")[0] if not p["spec"].get("nodeName")]
    templated = {("default", p["metadata"]["name"]) for p in store.list("pods")[0] if p["spec"].get("resourceClaims")}
    assert mirror.templated == fresh.templated == templated


def test_events_older_than_the_list_replayed_after_it_still_end_at_the_latest_state() -> None:
    store = SQLiteStore(":memory:")
    position = store.current_rv()
    write(store, "create", "a", False)
    write(store, "update", "a", True)
    write(store, "create", "b", False)
    write(store, "delete", "b", False)
    mirror = Mirror(store)
    mirror.relist()  # listed after the writes; their events are applied after it
    catch_up(store, mirror, position)
    assert list(mirror.items("resourceclaims")) == [("default", "a")]
    assert mirror.allocated == {("default", "a")}


def test_a_manager_whose_events_were_compacted_away_lists_again() -> None:
    cluster = Cluster()
    cluster.store.history = 5
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.post(f"{NS}/pods", pod("early"))
    cluster.settle()
    for i in range(1100):  # past a compaction: the manager's position is older than the kept history
        cluster.store.create("configmaps", "default", f"c{i}", lambda old, rv: {"metadata": {"resourceVersion": rv}})
    cluster.store.delete("pods", "default", "early")
    cluster.post(f"{NS}/pods", pod("late"))
    cluster.settle()
    assert [name for _, name in cluster.manager.mirror.items("pods")] == ["late"]


def test_a_pass_looks_at_the_claims_that_changed_and_those_naming_a_pod_that_changed() -> None:
    store = SQLiteStore(":memory:")
    for name in "abc":
        write(store, "create", name, False)

    def reserved_for(pod: str) -> Any:
        def build(old: Any, rv: str) -> Any:
            return {**old, "metadata": {**old["metadata"], "resourceVersion": rv},
                    "status": {"reservedFor": [{"resource": "pods", "name": pod, "uid": f"{pod}-uid"}]}}
        return build

    store.update("resourceclaims", "default", "a", reserved_for("p"))
    store.update("resourceclaims", "default", "c", reserved_for("q"))
    mirror = Mirror(store)
    mirror.relist()
    snap = Snapshot(mirror)

    def looked_at(changes: Changes) -> list[str]:
        return [c["metadata"]["name"] for c in ControllerManager._claims_to_release(snap, changes)]

    store.create("resourceclaims", "default", "plain", lambda old, rv: {"metadata": {
        "name": "plain", "namespace": "default", "resourceVersion": rv}})
    mirror.apply_all(store.changes_since(store.current_rv() - 1, with_data=RESOURCES))
    assert looked_at(Changes(False, {"resourceclaims": {("default", "plain")}}, False)) == []  # names no pod
    assert looked_at(Changes(False, {"resourceclaims": {("default", "a")}}, False)) == ["a"]
    assert looked_at(Changes(False, {"pods": {("default", "p")}}, False)) == ["a"]  # reserved for it
    assert looked_at(Changes(False, {"pods": {("default", "owner-b")}}, False)) == ["b"]  # owned by it
    assert looked_at(Changes(False, {"pods": {("other", "p")}}, False)) == []  # another namespace's pod
    assert looked_at(Changes(True, {}, False)) == ["a", "b", "c", "plain"]


@pytest.mark.slow
def test_a_claim_is_released_in_the_pass_that_removes_its_pod_at_the_end_of_the_grace_period() -> None:
    cluster = Cluster()
    cluster.post("/api/v1/nodes", NODE)
    cluster.post(f"{R}/deviceclasses", CLASS)
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("trainer", terminationGracePeriodSeconds=1))
    cluster.settle()
    (held,) = cluster.claims()
    assert held["status"]["reservedFor"]
    assert cluster.http.delete(f"{NS}/pods/trainer").status_code == 200
    cluster.settle()  # marked terminating; nothing else changes until its time is over
    time.sleep(1.1)
    cluster.settle()
    assert cluster.pods() == []
    assert all(not (c.get("status") or {}).get("reservedFor") for c in cluster.claims())


def test_a_pod_waiting_for_a_missing_template_does_not_keep_the_controllers_busy() -> None:
    cluster = Cluster()
    cluster.post(f"{NS}/pods", pod("waiting"))
    cluster.settle()  # one pass, then nothing to do until the template comes
    passes = cluster.manager.passes
    assert cluster.manager.run_once(force=False) is False and cluster.manager.passes == passes
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.settle()
    assert cluster.get("pods", "waiting")["status"]["resourceClaimStatuses"]


def _counting(monkeypatch: Any, cls: type, method: str) -> list[int]:
    calls: list[int] = []
    original = getattr(cls, method)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, counted)
    return calls


def _scheduled_cluster(*pods: str) -> Cluster:
    cluster = Cluster()
    cluster.post("/api/v1/nodes", NODE)
    cluster.post(f"{R}/deviceclasses", CLASS)
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.post(f"{R}/resourceslices", slice_(devices=4))
    for name in pods:
        cluster.post(f"{NS}/pods", pod(name))
    cluster.settle()
    return cluster


def test_a_cluster_change_with_no_pod_waiting_does_not_look_at_every_pod(monkeypatch: Any) -> None:
    from dralloc.server.controllers.scheduling import SchedulerLoop
    from dralloc.server.controllers.termination import TerminatingPods

    cluster = _scheduled_cluster("a", "b")
    assert all(p["spec"].get("nodeName") for p in cluster.pods())
    looks = _counting(monkeypatch, SchedulerLoop, "candidates")
    removals = _counting(monkeypatch, TerminatingPods, "cycle")
    cluster.post(f"{R}/deviceclasses", {**CLASS, "metadata": {"name": "other"}})
    cluster.settle()
    assert cluster.manager.passes and looks == [] and removals == []
    cluster.post(f"{NS}/pods", pod("c"))  # a new pod: it is looked at
    cluster.settle()
    assert looks and cluster.get("pods", "c")["spec"].get("nodeName") == "node-1"


def test_a_pass_over_new_pods_without_a_claim_template_parses_none_of_them(monkeypatch: Any) -> None:
    from dralloc.server.controllers import snapshot

    cluster = Cluster(scheduler=False)
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.settle()
    parsed: list[str] = []
    decode = snapshot._decode_json
    monkeypatch.setattr(snapshot, "_decode_json", lambda text: parsed.append(text) or decode(text))
    plain = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "labels": {"app": "x"}},
             "spec": {"containers": [{"name": "main", "image": "x:1"}]}}
    cluster.post(f"{NS}/pods", plain)
    cluster.post(f"{NS}/pods", pod("claiming"))
    cluster.settle()
    assert parsed and all('"claiming"' in text for text in parsed)
    assert cluster.get("pods", "claiming")["status"]["resourceClaimStatuses"]
    assert cluster.manager.mirror.templated == {("default", "claiming")}


def test_a_pod_waiting_for_room_is_tried_again_when_the_cluster_changes(monkeypatch: Any) -> None:
    cluster = _scheduled_cluster("a", "b", "c", "d", "e")
    (waiting,) = [p for p in cluster.pods() if not p["spec"].get("nodeName")]
    cluster.post(f"{R}/resourceslices", {**slice_(devices=1, name="node-1-more"),
                                         "spec": {**slice_()["spec"], "pool": {"name": "more", "generation": 1,
                                                                              "resourceSliceCount": 1}}})
    cluster.settle()
    assert cluster.get("pods", waiting["metadata"]["name"])["spec"].get("nodeName") == "node-1"


def test_a_placement_that_could_not_be_written_is_tried_again_after_its_backoff_with_no_other_change(
        monkeypatch: Any) -> None:
    from dralloc.server.controllers.scheduling import SchedulerLoop

    cluster = Cluster()
    cluster.post("/api/v1/nodes", NODE)
    cluster.post(f"{R}/deviceclasses", CLASS)
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    cluster.post(f"{NS}/pods", pod("a"))
    cluster.settle()  # no device yet: the pod waits
    assert not cluster.get("pods", "a")["spec"].get("nodeName")
    original = SchedulerLoop._place
    failures = [1]

    def once_lost(self: SchedulerLoop, pod: Any, res: Any) -> bool:
        if failures:
            failures.pop()
            self._undo([], None, str(pod["metadata"]["uid"]))  # as when a claim changed between the cycle and
            return False                                       # its write: nothing written, the pod backs off
        return original(self, pod, res)

    now = [1000.0]
    cluster.manager.scheduler.clock = lambda: now[0]
    monkeypatch.setattr(SchedulerLoop, "_place", once_lost)
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.settle()
    assert not failures and not cluster.get("pods", "a")["spec"].get("nodeName")  # backing off for a second
    now[0] += 1.0
    cluster.settle()
    assert cluster.get("pods", "a")["spec"].get("nodeName") == "node-1"


def test_a_noexecute_taint_a_driver_puts_on_a_running_pods_device_evicts_the_pod() -> None:
    cluster = _scheduled_cluster("a")
    assert cluster.get("pods", "a")["spec"].get("nodeName") == "node-1"
    tainted = cluster.get("resourceslices", "node-1-gpu", "")
    for device in tainted["spec"]["devices"]:
        device["taints"] = [{"key": "unhealthy", "effect": "NoExecute"}]
    assert cluster.http.put(f"{R}/resourceslices/node-1-gpu", json=tainted).status_code == 200
    cluster.settle()
    assert cluster.pods() == [] and cluster.events("DeviceTaintManagerEviction")  # no grace period: gone


def test_an_objects_labels_or_a_look_at_it_leave_its_text_unparsed() -> None:
    store = SQLiteStore(":memory:")
    mirror = Mirror(store)
    mirror.relist()
    position = store.changes_since(0)[-1].rv if store.changes_since(0) else 0
    for name, labels in (("labelled", {"app": "web"}), ("bare", None)):
        meta: dict[str, Any] = {"name": name, "namespace": "default", **({"labels": labels} if labels else {})}
        store.create("pods", "default", name, lambda _old, rv, meta=meta: {
            "apiVersion": "v1", "kind": "Pod", "metadata": {**meta, "resourceVersion": rv}, "spec": {}})
    catch_up(store, mirror, position)  # (as a pass finds them: their text, not parsed yet)
    assert mirror.labels("pods", ("default", "labelled")) == {"app": "web"}
    assert mirror.labels("pods", ("default", "bare")) == {}
    assert mirror.labels("pods", ("default", "missing")) is None
    assert all(isinstance(v, str) for v in mirror._items["pods"].values())  # (still not parsed)
    assert sorted(mirror.keys_in("pods", "default")) == [("default", "bare"), ("default", "labelled")]
    assert mirror.keys_in("pods", "other") == []
    peeked = mirror.peek("pods", ("default", "labelled"))
    assert peeked is not None and peeked["metadata"]["labels"] == {"app": "web"}
    assert isinstance(mirror._items["pods"][("default", "labelled")], str)  # (parsed for that look only)
    assert mirror.peek("pods", ("default", "missing")) is None
    mirror.get("pods", ("default", "labelled"))
    assert mirror.labels("pods", ("default", "labelled")) == {"app": "web"}  # (parsed: read from the object)
    assert mirror.peek("pods", ("default", "labelled")) is mirror.get("pods", ("default", "labelled"))
