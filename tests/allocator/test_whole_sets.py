"""The whole-counter-set bound: whole GPUs that later requests need beside partitions spread over the GPUs.

Each case runs the plain search (``prune=False``, upstream's exhaustive order) and the pruned one with the
look-ahead on from the first step; their answers must be identical.
"""

from __future__ import annotations

from typing import Any

from cases_loader import expand
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralloc.allocator import AllocationError, Allocator
from dralloc.api import codec

DRIVER = "d.example.com"
WHOLE = f'device.attributes["{DRIVER}"].whole == true'
PART = f'device.attributes["{DRIVER}"].whole == false'


def _gpus(gpus: int, parts: int, *, interleaved: bool = False, part_memory: int = 20) -> list[dict[str, Any]]:
    """Partitionable GPUs of 80 memory: a whole device and ``parts`` partitions each, on a per-GPU counter
    set. ``interleaved`` lists the partitions round-robin over the GPUs (parents do not run side by side)."""
    sets = [{"name": f"gpu-{g}", "counters": {"memory": {"value": "80"}}} for g in range(gpus)]

    def device(g: int, p: int | None) -> dict[str, Any]:
        name = f"gpu-{g}" if p is None else f"gpu-{g}-part-{p}"
        return {"name": name, "attributes": {"parent": {"string": f"gpu-{g}"}, "whole": {"bool": p is None}},
                "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {
                    "memory": {"value": "80" if p is None else str(part_memory)}}}]}

    devices = [device(g, None) for g in range(gpus)]
    if interleaved:
        devices += [device(g, p) for p in range(parts) for g in range(gpus)]
    else:
        devices += [device(g, p) for g in range(gpus) for p in range(parts)]
    return [{"kind": "DeviceClass", "name": "gpu", "driver": DRIVER}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "counters", "driver": DRIVER, "pool": "gpus", "count": 2,
             "nodeName": "node-1", "sharedCounters": sets},
            {"kind": "ResourceSlice", "name": "devices", "driver": DRIVER, "pool": "gpus", "count": 2,
             "nodeName": "node-1", "devices": devices}]


def _claim(name: str, requests: list[dict[str, Any]], distinct: bool = False) -> dict[str, Any]:
    claim: dict[str, Any] = {"kind": "ResourceClaim", "name": name, "requests": requests}
    if distinct:
        claim["constraints"] = [{"distinctAttribute": f"{DRIVER}/parent"}]
    return claim


def _parts(name: str, count: int) -> dict[str, Any]:
    return {"name": name, "class": "gpu", "count": count, "selectors": [PART]}


def _wholes(name: str, count: int) -> dict[str, Any]:
    return {"name": name, "class": "gpu", "count": count, "selectors": [WHOLE]}


def _both_ways(objs: list[dict[str, Any]]) -> tuple[Any, Any]:
    """(plain answer, plain steps), (pruned answer, pruned steps) with the look-ahead from the first step."""
    decoded = [codec.decode(expand(o)) for o in objs]
    node = next(o for o in decoded if type(o).__name__ == "Node")
    claims = [o for o in decoded if type(o).__name__ == "ResourceClaim"]
    out = []
    for options in ({"prune": False}, {"hard_after": 0}):
        try:
            res = Allocator.from_objects(decoded, **options).allocate(node, claims)
        except AllocationError as exc:
            out.append((f"error: {exc}", None))
            continue
        out.append(((res.status, [[r.device for r in c.devices.results] for c in res.results]), res.steps))
    return out[0], out[1]


def test_partitions_on_distinct_gpus_leave_too_few_whole_gpus_for_the_later_claims():
    # 5 GPUs: claim a wants 3 partitions on distinct GPUs, claims b and c two and one whole GPUs. Memory
    # fits (5 x 20 + 3 x 80 of 400) and so does every GPU alone; but a's partitions touch 3 GPUs and leave
    # 2 whole ones for 3. Upstream tries every spread of a's partitions (and of claim z's before it).
    objs = [*_gpus(5, 3),
            _claim("z", [_parts("r", 2)]),
            _claim("a", [_parts("r", 3)], distinct=True),
            _claim("b", [_wholes("r", 2)]),
            _claim("c", [_wholes("r", 1)])]
    (plain, plain_steps), (pruned, pruned_steps) = _both_ways(objs)
    assert plain == pruned == ("unschedulable", [])
    assert plain_steps > 5_000
    assert pruned_steps < 50


def test_the_last_gpu_of_an_earlier_request_of_the_claim_counts_as_touched_too():
    # 4 GPUs: claim a's first request takes 1 partition, its second 2 partitions on other GPUs than the
    # first request's (upstream compares them with its remembered value), and claim b wants 2 whole GPUs.
    # The second request alone (2 GPUs + 2 whole = 4) fits: only with the first request's GPU it cannot.
    objs = [*_gpus(4, 3),
            _claim("z", [_parts("r", 2)]),
            _claim("a", [_parts("r0", 1), _parts("r1", 2)], distinct=True),
            _claim("b", [_wholes("r", 2)])]
    (plain, plain_steps), (pruned, pruned_steps) = _both_ways(objs)
    assert plain == pruned == ("unschedulable", [])
    assert plain_steps > 2_000
    assert pruned_steps < 50


def test_a_fitting_spread_keeps_upstreams_first_solution():
    objs = [*_gpus(6, 4),
            _claim("z", [_parts("r", 3)]),
            _claim("a", [_parts("r", 3)], distinct=True),
            _claim("b", [_wholes("r", 2)])]
    (plain, _), (pruned, _) = _both_ways(objs)
    assert plain == pruned
    assert plain[0] == "allocated"


def test_parents_that_do_not_run_side_by_side_are_not_assumed_distinct():
    # listed round-robin, a request's devices may repeat a GPU after upstream took one back, so the bound
    # makes no claim; the answer stays upstream's either way
    objs = [*_gpus(4, 3, interleaved=True),
            _claim("a", [_parts("r", 3)], distinct=True),
            _claim("b", [_wholes("r", 2)])]
    (plain, _), (pruned, _) = _both_ways(objs)
    assert plain == pruned


_request = st.tuples(st.sampled_from(["parts", "wholes", "first", "all"]), st.integers(1, 3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gpus=st.integers(2, 4), parts=st.integers(1, 3), interleaved=st.booleans(),
       part_memory=st.sampled_from([20, 30, 40, 80]),
       claims=st.lists(st.tuples(st.lists(_request, min_size=1, max_size=2), st.booleans(), st.booleans()),
                       min_size=1, max_size=3))
def test_pruning_keeps_the_plain_answer_on_small_mig_like_inputs(gpus, parts, interleaved, part_memory, claims):
    objs = _gpus(gpus, parts, interleaved=interleaved, part_memory=part_memory)
    for ci, (requests, distinct, admin) in enumerate(claims):
        built = []
        for ri, (kind, count) in enumerate(requests):
            name = f"r{ri}"
            if kind == "parts":
                built.append(_parts(name, count))
            elif kind == "wholes":
                built.append(_wholes(name, count) | ({"adminAccess": True} if admin else {}))
            elif kind == "first":
                built.append({"name": name, "firstAvailable": [
                    {"name": "whole", "class": "gpu", "count": 1, "selectors": [WHOLE]},
                    {"name": "parts", "class": "gpu", "count": count, "selectors": [PART]}]})
            else:
                last = f'device.attributes["{DRIVER}"].parent == "gpu-{gpus - 1}"'
                built.append({"name": name, "class": "gpu", "mode": "All", "selectors": [WHOLE, last]})
        objs.append(_claim(f"c{ci}", built, distinct))
    plain, pruned = _both_ways(objs)
    assert plain[0] == pruned[0]
