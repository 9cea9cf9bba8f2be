"""How full the cluster ends up: per node (pods, cpu, memory, devices) and per pool (devices, counters)."""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from dralloc.allocator.numbers import to_num
from dralloc.api.quantity import Quantity
from dralloc.scheduler.snapshot import ClusterSnapshot


def _fmt(value: int | Fraction, like: Quantity) -> str:
    """An exact number printed as a Quantity in the format of the counter it counts."""
    return _format(value, like.format)


@lru_cache(maxsize=4096)
def _format(value: int | Fraction, fmt: str) -> str:
    # A cluster's counters repeat a few values thousands of times (every GPU of a model alike).
    return str(Quantity.from_fraction(value, fmt))


def utilization(snap: ClusterSnapshot) -> dict[str, Any]:
    state = snap.dra.allocator.state
    pools: dict[tuple[str, str], dict[str, Any]] = {}
    node_devices: dict[str, list[int]] = {}
    for s in snap.slices:
        spec = s.spec
        key = (spec.driver, spec.pool.name)
        pool = pools.get(key)
        if pool is None:
            pool = pools[key] = {"driver": spec.driver, "pool": spec.pool.name, "node": spec.node_name or None,
                                 "devices": {"total": 0, "allocated": 0}, "free": [], "counters": {}}
        for cs in spec.shared_counters or ():
            for cname, counter in (cs.counters or {}).items():
                pool["counters"][(cs.name, cname)] = [to_num(counter.value), to_num(counter.value),
                                                       counter.value]
        for d in spec.devices or ():
            did = f"{spec.driver}/{spec.pool.name}/{d.name}"
            used = state.is_allocated(did)
            pool["devices"]["total"] += 1
            if used:
                pool["devices"]["allocated"] += 1
            else:
                pool["free"].append(d.name)
            if spec.node_name:
                counts = node_devices.setdefault(spec.node_name, [0, 0])
                counts[0] += 1
                counts[1] += int(used)
    for s in snap.slices:
        spec = s.spec
        pool = pools[(spec.driver, spec.pool.name)]
        for d in spec.devices or ():
            if not d.consumes_counters or not state.is_allocated(f"{spec.driver}/{spec.pool.name}/{d.name}"):
                continue
            for c in d.consumes_counters:
                for cname, counter in (c.counters or {}).items():
                    entry = pool["counters"].get((c.counter_set, cname))
                    if entry is not None:
                        entry[1] -= to_num(counter.value)
    nodes = []
    for n in snap.nodes:
        devices = node_devices.get(n.name, [0, 0])
        nodes.append({
            "name": n.name,
            "pods": {"count": len(n.pods), "allocatable": n.allocatable.get("pods", 0)},
            "cpu": {"requestedMilli": n.requested.get("cpu", 0), "allocatableMilli": n.allocatable.get("cpu", 0)},
            "memory": {"requested": n.requested.get("memory", 0), "allocatable": n.allocatable.get("memory", 0)},
            "devices": {"total": devices[0], "allocated": devices[1]},
        })
    pool_list = []
    for key in sorted(pools):
        pool = pools[key]
        pool["counters"] = [{"counterSet": cs, "counter": cname, "total": _fmt(v[0], v[2]),
                             "available": _fmt(v[1], v[2])}
                            for (cs, cname), v in sorted(pool["counters"].items())]
        pool_list.append(pool)
    total = sum(p["devices"]["total"] for p in pool_list)
    allocated = sum(p["devices"]["allocated"] for p in pool_list)
    return {"devices": {"total": total, "allocated": allocated}, "nodes": nodes, "pools": pool_list}
