"""DeviceTaintRules applied to ResourceSlices, as kube-scheduler's slice tracker does before allocation.

A rule's ``deviceSelector`` picks devices by driver, pool and device name (each unset = any); its taint is
appended to every selected device. Slices without a selected device are returned unchanged (same object,
so identity-keyed caches keep working).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec.structs import replace


def _selects(sel: Any, driver: str, pool: str, device: str) -> bool:
    if sel is None:
        return True
    return ((not sel.driver or sel.driver == driver) and (not sel.pool or sel.pool == pool)
            and (not sel.device or sel.device == device))


def apply_taint_rules(slices: Iterable[Any], rules: Iterable[Any]) -> list[Any]:
    rules = list(rules)
    out = []
    for s in slices:
        if not rules or not s.spec.devices:
            out.append(s)
            continue
        changed = False
        devices = []
        for d in s.spec.devices:
            extra = [r.spec.taint for r in rules
                     if _selects(r.spec.device_selector, s.spec.driver, s.spec.pool.name, d.name)]
            if extra:
                d = replace(d, taints=list(d.taints or ()) + extra)
                changed = True
            devices.append(d)
        out.append(replace(s, spec=replace(s.spec, devices=devices)) if changed else s)
    return out
