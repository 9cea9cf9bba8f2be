"""Hard allocator inputs, generated deterministically from a seed.

Shared by the tests (pruning against the plain search) and ``benchmarks/bench_allocator_hard.py``.
Each case is one node with up to ~100 devices and 1–5 pending claims, built so that demand is close to
supply: the plain depth-first search then walks many combinations before it finds the answer, or before
it proves that there is none. Families (``FAMILIES[seed % 4]``):

* ``mig``      partitionable GPUs (shared counters per GPU: memory and memory slices), MIG-style profiles,
               ``firstAvailable``, ``matchAttribute``/``distinctAttribute`` on the parent GPU, taints,
               admin access, ``allocationMode: All`` on whole GPUs, already-allocated partitions;
* ``numa``     plain devices grouped by NUMA node; claims want several devices of one group
               (``matchAttribute``) or of different groups (``distinctAttribute``);
* ``counters`` partitions of one pool that each take their own core counter plus a share of memory,
               where only few combinations fit the memory budget (upstream's partitionable backtracking);
* ``mixed``    two drivers, counters and NUMA groups together, with All-mode and admin requests.

``small=True`` keeps the cases small enough for the plain search to finish quickly (the reference).
"""

from __future__ import annotations

import random
from typing import Any

from dralloc.api import codec

FAMILIES = ("mig", "numa", "counters", "mixed")
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
V1 = "resource.k8s.io/v1"
NODE = "node-0"

# MIG-style profiles: name -> (memory slices, memory in Gi, placements)
PROFILES = {
    "1g.10gb": (1, 10, (0, 1, 2, 3, 4, 5, 6)),
    "2g.20gb": (2, 20, (0, 2, 4)),
    "3g.40gb": (4, 40, (0, 4)),
    "4g.40gb": (4, 40, (0,)),
    "7g.80gb": (8, 80, (0,)),
}


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, **extra}


def _class(name: str, expr: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if expr:
        spec["selectors"] = [{"cel": {"expression": expr}}]
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": _meta(name), "spec": spec}


def _slice(name: str, driver: str, pool: str, count: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": _meta(name),
            "spec": {"driver": driver, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                     "nodeName": NODE, **spec}}


def _exact(cls: str, count: int | None = None, *, selector: str | None = None, mode: str | None = None,
           admin: bool = False, tolerate: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": cls}
    if mode == "All":
        out["allocationMode"] = "All"
    elif count is not None:
        out["count"] = count
    if selector:
        out["selectors"] = [{"cel": {"expression": selector}}]
    if admin:
        out["adminAccess"] = True
    if tolerate:
        out["tolerations"] = [{"key": "maintenance", "operator": "Exists"}]
    return out


def _claim(name: str, requests: list[dict[str, Any]], constraints: list[dict[str, Any]] | None = None,
           allocated: list[tuple[str, str, str, str]] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    obj: dict[str, Any] = {"apiVersion": V1, "kind": "ResourceClaim",
                           "metadata": _meta(name, namespace="default", uid=f"uid-{name}"),
                           "spec": {"devices": devices}}
    if allocated:
        obj["status"] = {"allocation": {"devices": {"results": [
            {"request": r, "driver": d, "pool": p, "device": dev} for r, d, p, dev in allocated]}}}
    return obj


def _attr(domain: str, name: str) -> str:
    return f'device.attributes["{domain}"].{name}'


# --------------------------------------------------------------------------- families

def _mig(rng: random.Random, small: bool, max_claims: int = 5) -> list[dict[str, Any]]:
    gpus = rng.randint(2, 3) if small else rng.randint(3, 6)
    sets = []
    devices = []
    for g in range(gpus):
        counters = {"memory": {"value": "80Gi"}, **{f"slice{i}": {"value": "1"} for i in range(8)}}
        sets.append({"name": f"gpu-{g}-counters", "counters": counters})
        profiles = ["full", *PROFILES] if not small else ["full", "1g.10gb", "2g.20gb", "3g.40gb"]
        for prof in profiles:
            slices_, mem, places = (8, 80, (0,)) if prof == "full" else PROFILES[prof]
            for p in places:
                if small and rng.random() < 0.3:
                    continue
                name = f"gpu-{g}" if prof == "full" else f"gpu-{g}-mig-{prof}-{p}"
                d: dict[str, Any] = {
                    "name": name,
                    "attributes": {"profile": {"string": prof}, "parent": {"string": f"gpu-{g}"},
                                   "index": {"int": g}, "numa": {"int": g // 2}},
                    "capacity": {"memory": {"value": f"{mem}Gi"}},
                    "consumesCounters": [{"counterSet": f"gpu-{g}-counters", "counters": {
                        "memory": {"value": f"{mem}Gi"}, **{f"slice{p + i}": {"value": "1"} for i in range(slices_)}}}],
                }
                if rng.random() < 0.06:
                    d["taints"] = [{"key": "maintenance", "effect": rng.choice(["NoSchedule", "NoExecute"])}]
                devices.append(d)
    objs = [
        _class("gpu", f'device.driver == "{GPU_DRIVER}"'),
        _class("mig", f'device.driver == "{GPU_DRIVER}" && {_attr(GPU_DRIVER, "profile")} != "full"'),
        _class("full-gpu", f'device.driver == "{GPU_DRIVER}" && {_attr(GPU_DRIVER, "profile")} == "full"'),
        _slice("gpus-counters", GPU_DRIVER, "gpus", 2, sharedCounters=sets),
        _slice("gpus-devices", GPU_DRIVER, "gpus", 2, devices=devices),
    ]
    # already allocated partitions (their counters are taken)
    names = [d["name"] for d in devices if d["name"].count("-") > 1]
    taken = rng.sample(names, k=min(len(names), rng.randint(0, gpus)))
    if taken:
        objs.append(_claim("running", [{"name": "r", "exactly": _exact("mig", len(taken))}],
                           allocated=[("r", GPU_DRIVER, "gpus", n) for n in taken]))
    profiles = list(PROFILES) if not small else ["1g.10gb", "2g.20gb", "3g.40gb"]
    for c in range(min(max_claims, rng.randint(2, 3) if small else rng.randint(3, 5))):
        requests = []
        for r in range(rng.randint(1, 2 if small else 3)):
            prof = rng.choice(profiles)
            sel = f'{_attr(GPU_DRIVER, "profile")} == "{prof}"'
            kind = rng.random()
            tol = rng.random() < 0.3
            if kind < 0.2:
                alt = rng.choice(profiles)
                requests.append({"name": f"r{r}", "firstAvailable": [
                    {"name": "big", **_exact("mig", 1, selector=sel, tolerate=tol)},
                    {"name": "small", **_exact("mig", rng.randint(1, 3),
                                               selector=f'{_attr(GPU_DRIVER, "profile")} == "{alt}"')}]})
            elif kind < 0.25:
                requests.append({"name": f"r{r}", "exactly": _exact(
                    "full-gpu", mode="All", selector=f'{_attr(GPU_DRIVER, "index")} >= {gpus - 1}', tolerate=tol)})
            elif kind < 0.3:
                requests.append({"name": f"r{r}", "exactly": _exact("full-gpu", 1, admin=True)})
            else:
                requests.append({"name": f"r{r}", "exactly": _exact(
                    "mig", rng.randint(1, 3 if small else 4), selector=sel, tolerate=tol)})
        constraints = []
        roll = rng.random()
        if roll < 0.45:
            constraints.append({"matchAttribute": f"{GPU_DRIVER}/parent"})
        elif roll < 0.65:
            constraints.append({"distinctAttribute": f"{GPU_DRIVER}/parent"})
        elif roll < 0.8:
            constraints.append({"matchAttribute": f"{GPU_DRIVER}/numa"})
        objs.append(_claim(f"claim-{c}", requests, constraints))
    return objs


def _numa(rng: random.Random, small: bool) -> list[dict[str, Any]]:
    groups = rng.randint(2, 3) if small else rng.randint(3, 8)
    per_group = rng.randint(3, 4) if small else rng.randint(6, 12)
    devices = []
    for i in range(groups * per_group):
        d: dict[str, Any] = {"name": f"dev-{i}", "attributes": {
            "numa": {"int": (i * 7 + rng.randint(0, 1)) % groups}, "model": {"string": rng.choice(["a", "a", "b"])},
            "pci": {"int": i % (per_group + 1)}}}
        if rng.random() < 0.05:
            d["taints"] = [{"key": "maintenance", "effect": "NoSchedule"}]
        devices.append(d)
    objs = [_class("dev", None), _slice("devs", GPU_DRIVER, "devs", 1, devices=devices)]
    taken = rng.sample(range(len(devices)), k=rng.randint(0, groups))
    if taken:
        objs.append(_claim("running", [{"name": "r", "exactly": _exact("dev", len(taken))}],
                           allocated=[("r", GPU_DRIVER, "devs", f"dev-{i}") for i in taken]))
    for c in range(rng.randint(2, 3) if small else rng.randint(2, 5)):
        requests = []
        for r in range(rng.randint(1, 2)):
            count = rng.randint(1, per_group)
            tol = rng.random() < 0.2
            if rng.random() < 0.25:
                requests.append({"name": f"r{r}", "firstAvailable": [
                    {"name": "many", **_exact("dev", count + 1, tolerate=tol)},
                    {"name": "few", **_exact("dev", max(1, count - 1),
                                             selector=f'{_attr(GPU_DRIVER, "model")} == "a"')}]})
            else:
                requests.append({"name": f"r{r}", "exactly": _exact("dev", count, tolerate=tol)})
        roll = rng.random()
        constraints = []
        if roll < 0.6:
            constraints.append({"matchAttribute": f"{GPU_DRIVER}/numa"})
        elif roll < 0.8:
            constraints.append({"distinctAttribute": f"{GPU_DRIVER}/numa"})
        if rng.random() < 0.3:
            constraints.append({"matchAttribute": f"{GPU_DRIVER}/model"})
        objs.append(_claim(f"claim-{c}", requests, constraints))
    return objs


def _counters(rng: random.Random, small: bool) -> list[dict[str, Any]]:
    n = rng.randint(6, 10) if small else rng.randint(14, 28)
    cores = {f"core{i}": {"value": "1"} for i in range(n)}
    mem_costs = [rng.choice([10, 10, 11, 12, 20]) for _ in range(n)]
    want = rng.randint(max(2, n // 3), max(3, n // 2))
    budget = sorted(mem_costs)[:want]
    memory = sum(budget) + rng.choice([-1, 0, 0, 1, 5])
    devices = [{"name": f"part-{i}", "attributes": {"half": {"int": i * 2 // n}},
                "consumesCounters": [{"counterSet": "cpu", "counters": {f"core{i}": {"value": "1"}}},
                                     {"counterSet": "mem", "counters": {"memory": {"value": f"{mem_costs[i]}Gi"}}}]}
               for i in range(n)]
    objs = [_class("part", None),
            _slice("parts-counters", GPU_DRIVER, "parts", 2, sharedCounters=[
                {"name": "cpu", "counters": cores}, {"name": "mem", "counters": {"memory": {"value": f"{memory}Gi"}}}]),
            _slice("parts-devices", GPU_DRIVER, "parts", 2, devices=devices)]
    claims = rng.randint(1, 3 if small else 5)
    left = want
    for c in range(claims):
        count = left if c == claims - 1 else max(1, min(left - (claims - c - 1), rng.randint(1, max(1, want // claims + 1))))
        left -= count
        if count <= 0:
            count = 1
        constraints = [{"matchAttribute": f"{GPU_DRIVER}/half"}] if rng.random() < 0.2 else None
        objs.append(_claim(f"claim-{c}", [{"name": "r", "exactly": _exact("part", count)}], constraints))
    return objs


def _mixed(rng: random.Random, small: bool) -> list[dict[str, Any]]:
    objs = _mig(rng, small, max_claims=3)
    nics = rng.randint(4, 8) if small else rng.randint(8, 24)
    nic_devices = [{"name": f"nic-{i}", "attributes": {"numa": {"int": i % 3}}} for i in range(nics)]
    objs.insert(3, _class("nic", f'device.driver == "{NIC_DRIVER}"'))
    objs.append(_slice("nics", NIC_DRIVER, "nics", 1, devices=nic_devices))
    for c in range(rng.randint(1, 2)):
        requests = [{"name": "gpu", "exactly": _exact("mig", rng.randint(1, 3))},
                    {"name": "nic", "exactly": _exact("nic", rng.randint(1, 4))}]
        if rng.random() < 0.3:
            requests.append({"name": "all-nics", "exactly": _exact(
                "nic", mode="All", selector=f'{_attr(NIC_DRIVER, "numa")} == 2', admin=True)})
        objs.append(_claim(f"pair-{c}", requests, [{"matchAttribute": f"{GPU_DRIVER}/numa",
                                                     "requests": ["gpu"]}]))
    return objs


_BUILDERS = {"mig": _mig, "numa": _numa, "counters": _counters, "mixed": _mixed}


def hard_case_dicts(seed: int, *, small: bool = False) -> list[dict[str, Any]]:
    """The objects of case ``seed`` as API dicts: classes, slices, allocated and pending claims, the Node."""
    rng = random.Random(seed)
    objs = _BUILDERS[FAMILIES[seed % len(FAMILIES)]](rng, small)
    objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}})
    return objs


class HardCase:
    """One generated input, decoded: what ``Allocator(...)`` and ``allocate(node, pending)`` take."""

    def __init__(self, seed: int, small: bool = False) -> None:
        self.seed = seed
        self.family = FAMILIES[seed % len(FAMILIES)]
        objs = [codec.decode(o) for o in hard_case_dicts(seed, small=small)]
        kinds = [type(o).__name__ for o in objs]
        self.slices = [o for o, k in zip(objs, kinds) if k == "ResourceSlice"]
        self.classes = [o for o, k in zip(objs, kinds) if k == "DeviceClass"]
        self.allocated = [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is not None]
        self.pending = [o for o, k in zip(objs, kinds) if k == "ResourceClaim" and o.status is None]
        self.node = next(o for o, k in zip(objs, kinds) if k == "Node")
        self.devices = sum(len(s.spec.devices or ()) for s in self.slices)
