"""What already-allocated claims take away: exclusive devices, shared devices and consumed capacity.

Mirrors the state kube-scheduler hands the allocator. For each result of an allocated claim:

* ``adminAccess: true`` → ignored (blocks nothing);
* ``shareID`` set → a shared allocation; its ``consumedCapacity`` adds to the device's aggregated
  consumed capacity; the device stays available to others;
* otherwise → the device ``driver/pool/device`` is exclusively allocated.

The state is updated incrementally (:meth:`AllocatedState.add_claim` / :meth:`remove_claim`), counting
references so that releasing one of two claims that list the same device keeps it allocated.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dralloc.allocator.numbers import to_num


def device_id(driver: str, pool: str, device: str) -> str:
    return f"{driver}/{pool}/{device}"


class AllocatedState:
    """Allocated devices, shared allocations and aggregated consumed capacity, by device ID."""

    __slots__ = ("_exclusive", "_shared", "_capacity", "_capacity_refs", "version")

    def __init__(self, claims: Iterable[Any] = ()) -> None:
        self._exclusive: dict[str, int] = {}
        self._shared: dict[str, int] = {}  # device ID -> number of shared allocations
        self._capacity: dict[str, dict[str, Any]] = {}  # device ID -> capacity name -> amount
        self._capacity_refs: dict[str, int] = {}
        self.version = 0
        for claim in claims:
            self.add_claim(claim)

    # --- queries (hot path) ---
    @property
    def exclusive(self) -> dict[str, int]:
        return self._exclusive

    @property
    def aggregated_capacity(self) -> dict[str, dict[str, Any]]:
        return self._capacity

    def is_allocated(self, dev_id: str) -> bool:
        """Upstream's IsDeviceAllocated: exclusive, shared, or with aggregated consumed capacity."""
        return dev_id in self._exclusive or dev_id in self._shared or dev_id in self._capacity

    # --- updates ---
    @staticmethod
    def _results(claim: Any) -> list[Any]:
        status = claim.status
        alloc = status.allocation if status is not None else None
        if alloc is None or alloc.devices is None:
            return []
        return alloc.devices.results or []

    def add_claim(self, claim: Any) -> None:
        self._apply(claim, +1)

    def remove_claim(self, claim: Any) -> None:
        self._apply(claim, -1)

    def _apply(self, claim: Any, sign: int) -> None:
        changed = False
        for r in self._results(claim):
            if r.admin_access:
                continue
            did = device_id(r.driver, r.pool, r.device)
            changed = True
            if r.share_id:
                _bump(self._shared, did, sign)
                if r.consumed_capacity is not None:
                    _bump(self._capacity_refs, did, sign)
                    caps = self._capacity.setdefault(did, {})
                    for name, q in r.consumed_capacity.items():
                        caps[name] = caps.get(name, 0) + sign * to_num(q)
                    if did not in self._capacity_refs:
                        del self._capacity[did]
            else:
                _bump(self._exclusive, did, sign)
        if changed:
            self.version += 1


def _bump(counts: dict[str, int], key: str, sign: int) -> None:
    n = counts.get(key, 0) + sign
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)
