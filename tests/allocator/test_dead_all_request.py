"""An allocationMode All request whose first device can never be taken fails there, quietly.

Upstream checks a device's use by allocated claims, its shared counters and its taints before it compares
the device with the claim's constraints, so such a request rejects its first device before it could raise
"a claim constraint would not be satisfied". The look-ahead stops at a request that could raise, but when
that request is one of these, nothing after the current pick can succeed.
"""

from __future__ import annotations

from helpers import answer_and_steps as _run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.allocator.lookahead import LookAhead

DRIVER = "d.example.com"
SPECIAL = "s.example.com"


def _cluster(devices: int, first: int, special: list[tuple[int, str]], tolerate: bool,
             taker: tuple[str, str] | None = None) -> list[dict]:
    """``devices`` devices on NUMA nodes 0 and 1, of which claim ``a`` takes ``first`` (distinct PCI
    addresses: the failure memo keeps device names), then claim ``b`` one of them and all the special
    devices, on one NUMA node. ``special``: per special device its NUMA node and its state: "ok",
    "tainted" (NoSchedule, tolerated only with ``tolerate``) or "allocated" (held by another claim).
    ``taker``: ("before" or "after" claim ``a``, a comparison such as "== 0"): a pending claim that takes one
    special device whose index compares so."""
    objs: list[dict] = [
        {"kind": "DeviceClass", "name": "any", "driver": DRIVER},
        {"kind": "DeviceClass", "name": "special", "driver": SPECIAL},
        {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "d", "driver": DRIVER, "pool": "d", "nodeName": "node-1",
         "devices": [{"name": f"dev-{i:02}", "attributes": {"pci": {"int": i}, "numa": {"int": i % 2}}}
                     for i in range(devices)]},
    ]
    special_devices = []
    held = []
    for i, (numa, state) in enumerate(special):
        dev: dict = {"name": f"special-{i}", "attributes": {"numa": {"int": numa}, "index": {"int": i}}}
        if state == "tainted":
            dev["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
        elif state == "allocated":
            held.append(f"r {SPECIAL}/s/special-{i}")
        special_devices.append(dev)
    objs.append({"kind": "ResourceSlice", "name": "s", "driver": SPECIAL, "pool": "s", "nodeName": "node-1",
                 "devices": special_devices})
    if held:
        objs.append({"kind": "ResourceClaim", "name": "held", "requests": [{"name": "r", "class": "special",
                                                                           "count": len(held)}],
                     "allocated": held})
    take = {"kind": "ResourceClaim", "name": "taker", "requests": [{
        "name": "r", "class": "special", "count": 1, "tolerations": [{"key": "broken", "operator": "Exists"}],
        "selectors": [f'device.attributes["{SPECIAL}"].index {taker[1]}' if taker else "true"]}]}
    if taker and taker[0] == "before":
        objs.append(take)
    objs.append({"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "any", "count": first}],
                 "constraints": [{"distinctAttribute": f"{DRIVER}/pci"}]})
    if taker and taker[0] == "after":
        objs.append(take)
    all_request: dict = {"name": "all", "class": "special", "mode": "All"}
    if tolerate:
        all_request["tolerations"] = [{"key": "broken", "operator": "Exists"}]
    objs.append({"kind": "ResourceClaim", "name": "b",
                 "requests": [{"name": "one", "class": "any", "count": 1}, all_request],
                 "constraints": [{"matchAttribute": "numa"}]})
    return objs


def test_an_all_request_whose_first_device_is_tainted_ends_the_search_at_once():
    # claim b's All request could raise (its devices sit on both NUMA nodes), so the look-ahead stops before
    # it, but its first device has a taint it does not tolerate: upstream tries each of the 220 ways of
    # serving claim a, and each device for claim b's first request, before it gives up
    objs = _cluster(12, 3, [(0, "tainted"), (1, "ok")], tolerate=False)
    plain, plain_steps = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert plain_steps is not None and plain_steps > 3_000
    assert eager_steps is not None and eager_steps < 10


def test_an_all_request_whose_first_device_an_allocated_claim_holds_ends_the_search_at_once():
    objs = _cluster(12, 3, [(0, "allocated"), (0, "ok")], tolerate=False)
    plain, _ = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert eager_steps is not None and eager_steps < 10


def test_an_all_request_that_raises_before_its_dead_device_still_raises():
    # the first device is fine, the second tainted: upstream raises at the first device when claim b's
    # first pick is on the other NUMA node (dev-00 is on node 0, special-0 on node 1)
    objs = _cluster(6, 2, [(1, "ok"), (0, "tainted")], tolerate=False)
    plain, _ = _run(objs, prune=False)
    assert plain.startswith("error: claim default/b, request all: cannot add device")
    assert _run(objs, hard_after=0)[0] == plain


def test_an_all_request_whose_first_device_an_earlier_pick_holds_ends_the_search_at_once(monkeypatch):
    # claim taker, before claim a, takes special-0: upstream again tries each of the 220 ways of serving
    # claim a before it gives up, as the picks of this search, not an allocated claim, hold the device.
    # (The bound below would cut at the start already, as taker has no other choice: it is left out here.)
    monkeypatch.setattr(LookAhead, "_all_blocked_by_forced", lambda self, options, requests: False)
    objs = _cluster(12, 3, [(0, "ok"), (1, "ok")], tolerate=False, taker=("before", "== 0"))
    plain, plain_steps = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert plain_steps is not None and plain_steps > 3_000
    assert eager_steps is not None and eager_steps < 20


def test_an_all_request_whose_first_device_a_later_claim_must_take_ends_the_search_at_once():
    # claim taker comes after claim a, but special-0 is the only device it may take: every way on takes
    # it before claim b's All request, so nothing is tried for claim a either
    objs = _cluster(12, 3, [(0, "ok"), (1, "ok")], tolerate=False, taker=("after", "== 0"))
    plain, plain_steps = _run(objs, prune=False)
    eager, eager_steps = _run(objs, hard_after=0)
    assert plain == eager == "unschedulable"
    assert plain_steps is not None and plain_steps > 3_000
    assert eager_steps is not None and eager_steps < 10


def test_a_later_claim_with_a_choice_does_not_block_the_all_request():
    # claim taker may take special-0 or special-1; it takes special-0 first, which blocks claim b, then
    # special-1: claim b gets special-0 and raises as upstream does (its first pick, dev-00, is on node 0)
    objs = _cluster(4, 1, [(1, "ok"), (0, "ok")], tolerate=False, taker=("after", ">= 0"))
    plain, _ = _run(objs, prune=False)
    assert plain.startswith("error: claim default/b, request all: cannot add device")
    assert _run(objs, hard_after=0)[0] == plain


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 7), st.integers(1, 3),
       st.lists(st.tuples(st.integers(0, 1), st.sampled_from(["ok", "tainted", "allocated"])), max_size=3),
       st.booleans(), st.none() | st.tuples(st.sampled_from(["before", "after"]), st.sampled_from(["== 0", ">= 0", "== 1"])))
def test_dead_all_requests_give_the_plain_search_answer(devices, first, special, tolerate, taker):
    # no special device at all: an All request that lists no device, which also fails quietly
    objs = _cluster(devices, min(first, devices), special, tolerate, taker)
    assert _run(objs, hard_after=0)[0] == _run(objs, prune=False)[0]
