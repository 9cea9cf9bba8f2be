"""Look-ahead bounds from Hall's condition: requests that together need more devices than they can share.

Every request without adminAccess takes devices of its own, so any set of such requests needs no more
devices than the union of their free devices holds. The union over every request hides a shortage among a
few (two claims that each want most of the NICs, next to requests for GPUs), so subsets are checked too.
An adminAccess request may reuse devices of other claims, but its claim's requests and the later claims'
requests without adminAccess still need devices of their own (:meth:`HallBounds._admin_hall_violated`). The claims under matchAttribute constraints
are checked the same way over the value groups they choose (:meth:`HallBounds._hall_ok`, called by
:mod:`~dralloc.allocator.lookahead_groups`). Sets of devices are bit masks (one bit per candidate device of
the node): the checks are arithmetic on ints and read no search state.
"""

from __future__ import annotations


class HallBounds:
    """The Hall's-condition checks of the look-ahead (see the module docstring)."""

    @staticmethod
    def _hall_violated(requests: list[tuple[int, int, int]]) -> bool:
        """True when some requests together need more devices than their free devices hold (Hall's condition).

        ``requests``: per request without adminAccess (those may reuse devices of other claims), the bit
        mask of its free devices that only one request may take, how many devices it needs, and how many
        free devices it has that allow multiple allocations (each request may take each of those once).
        Checked for the sets of requests whose exclusive devices lie within one request's, or within two
        requests' together: requests of one device class or selector form such nested sets (two claims that
        each want most of the NICs, among requests for GPUs), where the union over every request hides the
        shortage.
        """
        if len(requests) < 2:
            return False
        unions = [mask for mask, _, _ in requests]
        if len(requests) <= 12:
            unions += [a | b for i, (a, _, _) in enumerate(requests) for b, _, _ in requests[i + 1:]]
        for union in set(unions):
            need = 0
            can = union.bit_count()
            for mask, n, shared in requests:
                if mask & ~union == 0:
                    need += n
                    can += shared
            if need > can:
                return True
        return False

    def _admin_hall_violated(self, requests: list[tuple[int, bool, int, int, int]]) -> bool:
        """Hall's condition over requests that include an adminAccess request's claim.

        An adminAccess request may take a device that an earlier claim took, or that a later adminAccess
        request takes again, but never one of its own claim, and a later request without adminAccess never
        takes a device it holds. So the requests of its claim and those without adminAccess of the claims
        after it all need devices of their own. Without this an ``allocationMode: All`` request with
        adminAccess over the NICs of one NUMA node looks free of cost, and a later claim that needs the NICs
        it holds makes the search try every combination of the claims before.
        ``requests``: per request, its claim, whether it may have adminAccess, then as :meth:`_hall_violated`.
        """
        for claim in sorted({cj for cj, admin, _, _, _ in requests if admin}):
            family = [(mask, n, shared) for cj, admin, mask, n, shared in requests
                      if cj == claim or (cj > claim and not admin)]
            if self._hall_violated(family):
                return True
        return False

    @staticmethod
    def _hall_ok(chosen: list[tuple[int, int]], need: int, group: int, uncovered: list[tuple[int, int]]) -> bool:
        """Whether every set of claims that includes the new one needs no more devices than their groups
        hold, alone, with each request outside the groups, and with all of those (groups and free devices
        as bit masks of devices; every request here takes devices of its own)."""
        extra = [*uncovered]
        if len(uncovered) > 1:
            all_need, all_mask = 0, 0
            for n, m in uncovered:
                all_need += n
                all_mask |= m
            extra.append((all_need, all_mask))
        for subset in range(1 << len(chosen)):
            total = need
            devices = group
            for j, (n, g) in enumerate(chosen):
                if subset >> j & 1:
                    total += n
                    devices |= g
            if total > devices.bit_count():
                return False
            for n, m in extra:
                if total + n > (devices | m).bit_count():
                    return False
        return True
