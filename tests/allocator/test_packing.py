"""The counter-set packing bound: where MIG-style partitions sit on their GPUs (their memory slices).

Each case runs the plain search (``prune=False``, upstream's exhaustive order) and the pruned one with the
look-ahead on from the first step; their answers must be identical. The cases where the bound cuts also run
the pruned search without it, to show the steps it saves.
"""

from __future__ import annotations

from typing import Any

import pytest
from cases_loader import expand
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.allocator import AllocationError, Allocator
from dralloc.allocator.lookahead_packing import PackingBounds
from dralloc.api import codec

DRIVER = "d.example.com"
# profile -> (slices, placements): slice 7 is only covered by "3g" at 4 and by "full"
PROFILES = {"1g": (1, (0, 1, 2, 3, 4, 5, 6)), "2g": (2, (0, 2, 4)), "3g": (4, (4,)), "4g": (4, (0,)),
            "full": (8, (0,))}


def _gpus(gpus: int, profiles: tuple[str, ...] | list[str] = tuple(PROFILES),
          taken: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """GPUs with 8 memory slices each (capacity-1 counters of the GPU's counter set) and the partitions of
    ``profiles`` at every placement; ``taken``: partitions an allocated claim holds."""
    sets = [{"name": f"gpu-{g}", "counters": {f"slice{i}": {"value": "1"} for i in range(8)}}
            for g in range(gpus)]
    devices = []
    for g in range(gpus):
        for prof in profiles:
            size, places = PROFILES[prof]
            for p in places:
                devices.append({
                    "name": f"gpu-{g}-{prof}-{p}",
                    "attributes": {"profile": {"string": prof}, "parent": {"string": f"gpu-{g}"}},
                    "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {
                        f"slice{p + i}": {"value": "1"} for i in range(size)}}]})
    objs: list[dict[str, Any]] = [
        {"kind": "DeviceClass", "name": "gpu", "driver": DRIVER}, {"kind": "Node", "name": "node-1"},
        {"kind": "ResourceSlice", "name": "counters", "driver": DRIVER, "pool": "gpus", "count": 2,
         "nodeName": "node-1", "sharedCounters": sets},
        {"kind": "ResourceSlice", "name": "devices", "driver": DRIVER, "pool": "gpus", "count": 2,
         "nodeName": "node-1", "devices": devices}]
    if taken:
        objs.append({"kind": "ResourceClaim", "name": "running",
                     "requests": [{"name": "r", "class": "gpu", "count": len(taken)}],
                     "allocated": [f"r {DRIVER}/gpus/{name}" for name in taken]})
    return objs


def _request(name: str, profile: str, count: int, **extra: Any) -> dict[str, Any]:
    return {"name": name, "class": "gpu", "count": count,
            "selectors": [f'device.attributes["{DRIVER}"].profile == "{profile}"'], **extra}


def _claim(name: str, requests: list[dict[str, Any]], constraint: str | None = None) -> dict[str, Any]:
    claim: dict[str, Any] = {"kind": "ResourceClaim", "name": name, "requests": requests}
    if constraint:
        claim["constraints"] = [{constraint: f"{DRIVER}/parent"}]
    return claim


def _run(objs: list[dict[str, Any]], **options: Any) -> tuple[Any, int | None]:
    docs = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in docs if type(o).__name__ == "Node")
    claims = [o for o in docs if type(o).__name__ == "ResourceClaim" and o.status is None]
    try:
        res = Allocator.from_objects(docs, **options).allocate(node, claims)
    except AllocationError as exc:
        return f"error: {exc}", None
    return (res.status, [[r.device for r in c.devices.results] for c in res.results]), res.steps


def _three_ways(objs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Any]:
    """(answer, steps) of the plain search, of the pruned one, and of the pruned one without this bound."""
    plain = _run(objs, prune=False)
    pruned = _run(objs, hard_after=0)
    with monkeypatch.context() as patch:
        patch.setattr(PackingBounds, "_packing_doomed", lambda self, steps: False)
        without = _run(objs, hard_after=0)
    return plain, pruned, without


def test_a_slice_only_one_profile_covers_is_lost_on_the_gpus_it_does_not_take(monkeypatch):
    # 3 GPUs of 8 slices: 4 x 1g, 2 x 3g (slices 4-7) and 3 x 4g (slices 0-3) need all 24 slices, and the
    # draws fit per slice position and summed. But slice 7 is only covered by a 3g: the GPU without one
    # loses it (a 1g cannot sit there). The plain search tries every placement of the 1g profiles.
    objs = [*_gpus(3, ["1g", "3g", "4g"]),
            _claim("a", [_request("r", "1g", 4)]),
            _claim("b", [_request("r", "3g", 2), _request("s", "4g", 3)])]
    (plain, plain_steps), (pruned, pruned_steps), (_, without_steps) = _three_ways(objs, monkeypatch)
    assert plain == pruned == ("unschedulable", [])
    assert plain_steps > 10_000
    assert pruned_steps < 10 < 200 < without_steps


def test_partitions_under_matchattribute_on_the_parent_share_one_gpu(monkeypatch):
    # claim b wants three 2g and two 1g partitions on one GPU: 8 slices, but the 1g profiles cannot take
    # slice 7 and the 2g ones only sit at 0, 2 and 4, so no GPU holds them all; the plain search tries every
    # placement of a's partitions before it
    objs = [*_gpus(3, ["1g", "2g", "3g", "4g"]),
            _claim("a", [_request("r", "1g", 3)]),
            _claim("b", [_request("r", "2g", 3), _request("s", "1g", 2)], "matchAttribute")]
    (plain, plain_steps), (pruned, pruned_steps), (_, without_steps) = _three_ways(objs, monkeypatch)
    assert plain == pruned == ("unschedulable", [])
    assert plain_steps > 10_000
    assert pruned_steps < 10 < 1_000 < without_steps


def test_partitions_under_distinctattribute_take_one_gpu_each(monkeypatch):
    # claim a's three 1g partitions go to three different GPUs (their parents run side by side); claim b's
    # 4g profiles take slices 0-3 of every GPU and its 3g profiles slices 4-7 of two: only one GPU keeps room
    # for a 1g. Counted without the spread, the three 1g fit on that GPU.
    objs = [*_gpus(3, ["1g", "3g", "4g"]),
            _claim("a", [_request("r", "1g", 3)], "distinctAttribute"),
            _claim("b", [_request("r", "4g", 3), _request("s", "3g", 2)])]
    (plain, plain_steps), (pruned, pruned_steps), (_, without_steps) = _three_ways(objs, monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(PackingBounds, "_spreads_over_bins", lambda self, attribute, free: False)
        _, unspread_steps = _run(objs, hard_after=0)
    assert plain == pruned == ("unschedulable", [])
    assert plain_steps > 1_000
    assert pruned_steps < 10 < 40 < min(unspread_steps or 0, without_steps or 0)


def test_a_request_after_one_with_two_picks_may_come_back_to_its_first_gpu(monkeypatch):
    # upstream remembers only the last device of each request under distinctAttribute: b's second request
    # avoids the GPU of r's second pick, not of its first. The only fit puts s on r's first GPU, so a bound
    # that spread the claim's picks over distinct GPUs would cut the one solution.
    objs = [*_gpus(2, ["1g"], taken=tuple(f"gpu-{g}-1g-{p}" for g in range(2) for p in range(2, 7))),
            _claim("b", [_request("r", "1g", 2), _request("s", "1g", 1)], "distinctAttribute")]
    (plain, _), (pruned, _), _ = _three_ways(objs, monkeypatch)
    assert plain == pruned
    assert plain[0] == "allocated"
    assert plain[1] == [["gpu-0-1g-0", "gpu-1-1g-0", "gpu-0-1g-1"]]


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gpus=st.integers(2, 3), profiles=st.lists(st.sampled_from(list(PROFILES)), min_size=1, max_size=4,
                                                unique=True),
       taken=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["1g-0", "1g-5", "2g-2", "3g-4"])),
                      max_size=2, unique=True),
       claims=st.lists(st.tuples(
           st.lists(st.tuples(st.sampled_from(list(PROFILES)), st.integers(1, 3), st.booleans(),
                              st.sampled_from(["exact", "first", "admin"])), min_size=1, max_size=2),
           st.sampled_from([None, "matchAttribute", "distinctAttribute"])), min_size=1, max_size=3))
def test_pruning_keeps_the_plain_answer_on_small_mig_like_inputs(gpus, profiles, taken, claims):
    names = tuple(sorted({f"gpu-{g}-{p}" for g, p in taken if g < gpus and p.split("-")[0] in profiles}))
    objs = _gpus(gpus, profiles, names)
    for ci, (requests, constraint) in enumerate(claims):
        built = []
        for ri, (profile, count, _, kind) in enumerate(requests):
            if kind == "first":
                built.append({"name": f"r{ri}", "firstAvailable": [
                    {**_request("big", profile, 1)},
                    {**_request("small", "1g", count)}]})
            elif kind == "admin":
                built.append(_request(f"r{ri}", profile, 1, adminAccess=True))
            else:
                built.append(_request(f"r{ri}", profile, count))
        objs.append(_claim(f"c{ci}", built, constraint))
    plain, _ = _run(objs, prune=False)
    pruned, _ = _run(objs, hard_after=0)
    assert plain == pruned
