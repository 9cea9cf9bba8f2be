"""Why a node cannot take the claims: per claim and request, what each filter removed.

Computed only after a failed search. For each request (each subrequest of a firstAvailable request) the
node's devices go through the filters in upstream's order and the first filter that rejects a device is
charged with it: unusable pool (incomplete / invalid), class selector, request selector (CEL errors are
listed per device), per-device node selection, capacity / requestPolicy, already allocated, taint not
tolerated, shared counters exhausted. What survives is compared with what the request needs; constraints
are then checked on the survivors (largest group of devices sharing the matchAttribute value). The
closest near-miss is the request that lacks the fewest devices — or, when every request could be served
alone, the note that the claims compete for the same devices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralloc.allocator.capacity import consumption, fits
from dralloc.allocator.claims import RequestData
from dralloc.allocator.constraints import MatchAttribute, attribute_set
from dralloc.allocator.search import Search
from dralloc.allocator.selectors import SelectorFailure
from dralloc.allocator.tolerations import taint_blocks
from dralloc.allocator.upstream_cost import UpstreamCost
from dralloc.api.resource_v1 import ResourceSlice

FILTERS = (
    ("pool_unusable", "in an incomplete or invalid pool"),
    ("class_selector", "rejected by the device class selectors"),
    ("request_selector", "rejected by the request selectors"),
    ("cel_error", "CEL error while evaluating a selector"),
    ("node_selection", "not selected for this node (per-device node selection)"),
    ("capacity", "not enough capacity or capacity requestPolicy violated"),
    ("allocated", "already allocated to another claim"),
    ("taint", "taint not tolerated"),
    ("counters", "shared counters exhausted"),
)


@dataclass
class RequestExplanation:
    claim: str
    request: str
    needed: int | str
    offered: int
    removed: dict[str, int] = field(default_factory=dict)
    usable: int = 0
    cel_errors: list[dict[str, str]] = field(default_factory=list)
    constraint_notes: list[str] = field(default_factory=list)
    # devices that passed the selectors but were blocked by a state filter (allocated, taint, counters,
    # capacity): the "almost" candidates, first few per filter
    blocked: dict[str, list[str]] = field(default_factory=dict)

    @property
    def shortfall(self) -> int:
        need = self.needed if isinstance(self.needed, int) else 0
        return max(0, need - self.usable)

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "needed": self.needed,
            "offered": self.offered,
            "removed": {k: v for k, v in self.removed.items() if v},
            "usable": self.usable,
            "celErrors": self.cel_errors,
            "constraints": self.constraint_notes,
            "blocked": self.blocked,
        }


@dataclass
class Explanation:
    node: str
    requests: list[RequestExplanation]
    near_miss: str
    invalid_pools: list[str] = field(default_factory=list)
    incomplete_pools: list[str] = field(default_factory=list)
    upstream: UpstreamCost | None = None  # upstream's search steps here, estimated

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "nearMiss": self.near_miss,
            "incompletePools": self.incomplete_pools,
            "invalidPools": self.invalid_pools,
            "requests": [r.to_dict() for r in self.requests],
            **({"upstream": self.upstream.to_dict()} if self.upstream is not None else {}),
        }

    def text(self) -> str:
        labels = dict(FILTERS)
        lines = [f"node {self.node}: cannot allocate the claims"]
        for pool in self.incomplete_pools:
            lines.append(f"  pool {pool} is incomplete (being updated); its devices are not used")
        for pool in self.invalid_pools:
            lines.append(f"  pool {pool} is invalid; its devices are not used")
        for r in self.requests:
            lines.append(f"  claim {r.claim}, request {r.request}: needs {r.needed}, node offers {r.offered}, "
                         f"{r.usable} usable")
            for key, n in r.removed.items():
                if n:
                    names = r.blocked.get(key)
                    more = f": {', '.join(names)}{' ...' if n > len(names) else ''}" if names else ""
                    lines.append(f"    {n} {labels[key]}{more}")
            for err in r.cel_errors:
                lines.append(f"    CEL error on {err['device']}: {err['error']}")
            for note in r.constraint_notes:
                lines.append(f"    {note}")
        lines.append(f"  closest: {self.near_miss}")
        if self.upstream is not None and self.upstream.times_out:
            lines.append(f"  upstream: {self.upstream.note()}")
        return "\n".join(lines) + "\n"

    __str__ = text


def explain_failure(run: Search, slices_by_pool: dict[tuple[str, str], list[ResourceSlice]]) -> Explanation:
    """Explain a failed search from a freshly prepared (not yet run) :class:`Search` of the same input."""
    view = run.view
    node_name = run.node_name
    # devices in unusable pools, per pool id
    unusable_devices = 0
    for pool in view.pools:
        if pool.usable:
            continue
        for s in slices_by_pool.get((pool.driver, pool.name), ()):
            unusable_devices += len(s.spec.devices or ())
    explanations: list[RequestExplanation] = []
    for ci, per_claim in enumerate(run.requests):
        ref = run.claim_refs[ci]
        for options in per_claim:
            for rd in options:
                explanations.append(_explain_request(run, ref, rd, unusable_devices, ci))
    near = _near_miss(explanations)
    return Explanation(
        node=node_name,
        requests=explanations,
        near_miss=near,
        invalid_pools=[p.id for p in view.pools if p.invalid],
        incomplete_pools=[p.id for p in view.pools if p.incomplete],
    )


def _explain_request(run: Search, ref: str, rd: RequestData, unusable: int, ci: int) -> RequestExplanation:
    removed = {k: 0 for k, _ in FILTERS}
    removed["pool_unusable"] = unusable
    cel_errors: list[dict[str, str]] = []
    blocked: dict[str, list[str]] = {}
    usable = []
    sel = run.selectors
    for cand in run.view.candidates:
        info = cand.info
        out_class = sel.outcome(info, (rd.class_name, rd.class_exprs, ()), rd.class_name, rd.class_exprs, ())
        if out_class is False:
            removed["class_selector"] += 1
            continue
        if isinstance(out_class, SelectorFailure):
            removed["cel_error"] += 1
            cel_errors.append({"device": info.id, "error": str(out_class.error(ref))})
            continue
        out = sel.outcome(info, rd.sel_key, rd.class_name, rd.class_exprs, rd.request_exprs)
        if out is False:
            removed["request_selector"] += 1
            continue
        if isinstance(out, SelectorFailure):
            removed["cel_error"] += 1
            cel_errors.append({"device": info.id, "error": str(out.error(ref))})
            continue
        if not cand.node_ok:
            removed["node_selection"] += 1
            continue
        c = consumption(rd.cap_key, rd.cap_requests, info)
        if c is None or not c[0] or not fits(c[1], info, run.aggregated.get(info.id), None):
            removed["capacity"] += 1
            _note(blocked, "capacity", info.id)
            continue
        if not rd.admin and info.id in run.allocated:
            removed["allocated"] += 1
            _note(blocked, "allocated", info.id)
            continue
        if info.taints and taint_blocks(info.taints, rd.tolerations):
            removed["taint"] += 1
            _note(blocked, "taint", info.id)
            continue
        if info.consumes and not (info.allow_multi and info.id in run.aggregated):
            if not run.reserve_counters(cand):
                removed["counters"] += 1
                _note(blocked, "counters", info.id)
                continue
            run.release_counters(cand)
        usable.append(cand)
    offered = len(run.view.candidates) + unusable
    needed: int | str = rd.num if not rd.all_mode else f"all ({rd.num})"
    ex = RequestExplanation(claim=ref, request=rd.full, needed=needed, offered=offered, removed=removed,
                            usable=len(usable), cel_errors=cel_errors, blocked=blocked)
    if rd.all_mode and len(usable) < rd.num:
        ex.constraint_notes.append(f"All mode needs every matching device, {rd.num - len(usable)} of them are taken "
                                   f"or blocked")
    for con in run.constraints[ci]:
        if not con.applies(rd.base, rd.full):
            continue
        missing = sum(1 for cand in usable if not attribute_set(cand.info, con.attribute))
        if isinstance(con, MatchAttribute):
            groups: dict[Any, int] = {}
            for cand in usable:
                v = attribute_set(cand.info, con.attribute)
                if v:
                    for item in v[1]:
                        groups[(v[0], item)] = groups.get((v[0], item), 0) + 1
            best = max(groups.items(), key=lambda kv: kv[1], default=None)
            note = f"matchAttribute {con.attribute}: "
            if best is None:
                note += "no usable device has the attribute"
            else:
                note += f"at most {best[1]} usable devices share a value ({best[0][1]!r})"
            if missing:
                note += f"; {missing} usable devices lack the attribute"
            ex.constraint_notes.append(note)
        else:
            values = set()
            for cand in usable:
                v = attribute_set(cand.info, con.attribute)
                if v:
                    values |= {(v[0], x) for x in v[1]}
            note = f"distinctAttribute {con.attribute}: {len(values)} distinct values among usable devices"
            if missing:
                note += f"; {missing} usable devices lack the attribute"
            ex.constraint_notes.append(note)
    return ex


def _note(blocked: dict[str, list[str]], key: str, device: str, limit: int = 5) -> None:
    lst = blocked.setdefault(key, [])
    if len(lst) < limit:
        lst.append(device)


def _near_miss(exps: list[RequestExplanation]) -> str:
    short = [e for e in exps if e.shortfall > 0]
    if short:
        best = min(short, key=lambda e: e.shortfall)
        text = (f"claim {best.claim}, request {best.request} lacks {best.shortfall} device(s) "
                f"({best.usable} usable of {best.needed} needed)")
        labels = dict(FILTERS)
        almost = [f"{dev} ({labels[key]})" for key, devs in best.blocked.items() for dev in devs]
        if almost:
            text += "; nearest candidates: " + ", ".join(almost[: best.shortfall + 2])
        return text
    if exps:
        if any(e.constraint_notes for e in exps):
            return "every request has enough usable devices on its own; a constraint or the combination of " \
                   "requests (devices, counters, capacity shared between them) cannot be satisfied"
        return "every request has enough usable devices on its own, but not all of them together " \
               "(they compete for the same devices, shared counters or capacity)"
    return "nothing to allocate"
