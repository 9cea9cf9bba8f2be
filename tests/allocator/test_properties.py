"""Property tests on random small clusters.

* the same input gives byte-identical output;
* pruning never changes the answer (compared with the plain upstream-order search);
* every result satisfies selectors, counters, capacities, constraints and taints when checked independently;
* a failed search leaves no reservation behind (counters, capacity, constraint state: kubernetes#140436).
"""

from __future__ import annotations

import json

import pytest
from cases_loader import expand
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.allocator import AllocationError, Allocator
from dralloc.api import codec

DRIVER = "d.example.com"


@st.composite
def clusters(draw):
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "DeviceClass", "name": "gpu", "driver": DRIVER},
            {"kind": "Node", "name": "node-1"}]
    n_pools = draw(st.integers(1, 2))
    devices_by_pool = {}
    for p in range(n_pools):
        pool = f"pool-{p}"
        counters = draw(st.booleans())
        count = 2 if counters else 1
        devs = []
        for i in range(draw(st.integers(2, 6))):
            d = {"name": f"dev-{i}", "attributes": {
                "model": {"string": draw(st.sampled_from(["X", "Y"]))},
                "numa": {"int": draw(st.integers(0, 2))}}}
            if draw(st.integers(0, 5)) == 0:
                d["taints"] = [{"key": "t", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "None"]))}]
            if counters:  # two counter sets with the same counter name, as one per physical GPU
                d["consumesCounters"] = [{"counterSet": draw(st.sampled_from(["cs", "cs2"])),
                                          "counters": {"mem": {"value": str(draw(st.integers(1, 4)))}}}]
            if draw(st.integers(0, 6)) == 0:
                d["allowMultipleAllocations"] = True
                d["capacity"] = {"bw": {"value": "10"}}
            devs.append(d)
        devices_by_pool[pool] = devs
        objs.append({"kind": "ResourceSlice", "name": f"{pool}-devices", "driver": DRIVER, "pool": pool,
                     "count": count, "nodeName": "node-1", "devices": devs})
        if counters:
            objs.append({"kind": "ResourceSlice", "name": f"{pool}-counters", "driver": DRIVER, "pool": pool,
                         "count": count, "nodeName": "node-1",
                         "sharedCounters": [{"name": name, "counters": {"mem": {"value": str(draw(st.integers(3, 9)))}}}
                                            for name in ("cs", "cs2")]})
    if draw(st.booleans()):
        pool = draw(st.sampled_from(sorted(devices_by_pool)))
        dev = draw(st.sampled_from(devices_by_pool[pool]))["name"]
        objs.append({"kind": "ResourceClaim", "name": "old", "requests": [{"name": "r", "class": "any"}],
                     "allocated": [f"r {DRIVER}/{pool}/{dev}"]})
    for c in range(draw(st.integers(1, 3))):
        reqs = []
        for r in range(draw(st.integers(1, 2))):
            req = {"name": f"r{r}", "class": draw(st.sampled_from(["any", "gpu"])), "count": draw(st.integers(1, 3))}
            if draw(st.integers(0, 3)) == 0:
                req["tolerations"] = [{"key": "t", "operator": "Exists"}]
            if draw(st.integers(0, 3)) == 0:
                req = {"name": f"r{r}", "firstAvailable": [dict(req, name="a"), {"name": "b", "class": "any", "count": 1}]}
            if draw(st.integers(0, 6)) == 0:
                req["mode"] = "All"
                req.pop("count", None)
            reqs.append(req)
        claim = {"kind": "ResourceClaim", "name": f"c{c}", "requests": reqs}
        kind = draw(st.integers(0, 3))
        if kind == 1:
            claim["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
        elif kind == 2:
            claim["constraints"] = [{"distinctAttribute": f"{DRIVER}/numa"}]
        objs.append(claim)
    return [codec.decode(expand(o)) for o in objs]


def _split(objs):
    node = next(o for o in objs if type(o).__name__ == "Node")
    pending = [o for o in objs if type(o).__name__ == "ResourceClaim" and o.status is None]
    return node, pending


def _answer(objs, **options):
    node, pending = _split(objs)
    try:
        out = Allocator.from_objects(objs, **options).allocate(node, pending)
    except AllocationError as exc:
        return ("error", str(exc)), None
    if out.status != "allocated":
        return ("unschedulable", out.invalid_pools), out
    return ("allocated", json.dumps([codec.to_dict(r) for r in out.results], sort_keys=True)), out


SETTINGS = settings(max_examples=int(__import__("os").environ.get("DRALLOC_PROP_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@SETTINGS
@given(clusters())
def test_same_input_gives_byte_identical_output(objs):
    assert _answer(objs)[0] == _answer(objs)[0]


@pytest.mark.slow
@SETTINGS
@given(clusters())
def test_pruning_never_changes_the_answer(objs):
    plain = _answer(objs, prune=False)[0]
    assert _answer(objs)[0] == plain
    assert _answer(objs, hard_after=0)[0] == plain  # look-ahead and failure memo from the first step


def _independent_check(objs, outcome):
    node, pending = _split(objs)
    slices = [o for o in objs if type(o).__name__ == "ResourceSlice"]
    devices = {}
    counter_sets = {}
    for s in slices:
        for d in s.spec.devices or ():
            devices[(s.spec.pool.name, d.name)] = d
        for cs in s.spec.shared_counters or ():
            counter_sets[(s.spec.pool.name, cs.name)] = {n: c.value.as_fraction() for n, c in cs.counters.items()}
    used = {}
    allocated = [o for o in objs if type(o).__name__ == "ResourceClaim" and o.status is not None]
    taken = set()
    for c in allocated:
        for r in c.status.allocation.devices.results:
            if not r.share_id:
                taken.add((r.pool, r.device))
            used.setdefault((r.pool, r.device), 0)
    consumed = {}
    exclusive = set()
    for claim, result in zip(pending, outcome.results):
        reqs = {r.name: r for r in claim.spec.devices.requests}
        picked = []
        for r in result.devices.results:
            dev = devices[(r.pool, r.device)]
            key = (r.pool, r.device)
            base, _, sub = r.request.partition("/")
            req = reqs[base]
            exact = req.exactly if not sub else next(s for s in req.first_available if s.name == sub)
            if exact.device_class_name == "gpu":
                assert r.driver == DRIVER
            if not dev.allow_multiple_allocations:
                assert key not in taken and key not in exclusive
                exclusive.add(key)
                assert r.share_id is None
            else:
                assert r.share_id
            for t in dev.taints or ():
                if t.effect in ("NoSchedule", "NoExecute"):
                    assert any(tol.operator == "Exists" and tol.key == t.key for tol in exact.tolerations or ())
            picked.append((r, dev))
        for con in claim.spec.devices.constraints or ():
            if con.match_attribute:
                values = {d.attributes["model"].string for _, d in picked}
                assert len(values) <= 1
        for r, dev in picked:
            if not dev.allow_multiple_allocations:
                for cc in dev.consumes_counters or ():
                    for n, c in cc.counters.items():
                        k = (r.pool, cc.counter_set, n)
                        consumed[k] = consumed.get(k, 0) + c.value.as_fraction()
    # capacity of shared devices: everything consumed fits
    shared_use = {}
    for result in outcome.results:
        for r in result.devices.results:
            for name, q in (r.consumed_capacity or {}).items():
                shared_use[(r.pool, r.device, name)] = shared_use.get((r.pool, r.device, name), 0) + q.as_fraction()
    for (pool, dev_name, name), v in shared_use.items():
        assert v <= devices[(pool, dev_name)].capacity[name].value.as_fraction()
    # counters: where new devices consume, allocated devices + newly allocated ones must fit
    base = {}
    for (pool, dev_name), dev in devices.items():
        if (pool, dev_name) in taken:
            for cc in dev.consumes_counters or ():
                for n, c in cc.counters.items():
                    k = (pool, cc.counter_set, n)
                    base[k] = base.get(k, 0) + c.value.as_fraction()
    for (pool, cs, n), v in consumed.items():
        if v > 0:
            assert base.get((pool, cs, n), 0) + v <= counter_sets[(pool, cs)][n]


@pytest.mark.slow
@SETTINGS
@given(clusters())
def test_every_result_satisfies_the_rules_when_checked_independently(objs):
    answer, outcome = _answer(objs)
    if answer[0] == "allocated":
        _independent_check(objs, outcome)


@pytest.mark.slow
@SETTINGS
@given(clusters())
def test_a_failed_search_leaves_no_reservation_behind(objs):
    node, pending = _split(objs)
    alloc = Allocator.from_objects(objs)
    try:
        run = alloc.search(node, pending)
        if run.run():
            return
    except AllocationError:
        return
    for pool_counters in run.consumed.values():
        assert all(v == 0 for v in pool_counters.values())
    assert not any(run.allocating.values())
    assert all(not r for r in run.results)
    for cons in run.constraints:
        for con in cons:
            assert con.count == 0
