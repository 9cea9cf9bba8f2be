"""The report's gang views: each PodGroup as one row (placed in which domain, or why not), and the topology
view (``--topology-key``): per value of a node label (a rack, an NVLink domain), its
nodes, free devices, and for each PodGroup's pod shape the largest gang of that shape that still fits there —
so fragmentation across domains shows (256 free GPUs spread over 12 racks hold no 64-GPU job).

"Fits" is the scheduler's own answer: copies of the group's first member are filtered, scored, assumed and
reserved on the domain's nodes one after another (their devices taken for the next), then all let go again;
the simulation's state, names and random draws are left as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from msgspec.structs import replace

from dralloc.api.core_v1 import Pod, PodStatus
from dralloc.api.resource_v1 import ResourceClaim
from dralloc.controllers.names import NameGenerator
from dralloc.controllers.resourceclaims import claims_for_pod
from dralloc.errors import InputError
from dralloc.scheduler.framework import Code
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.podinfo import PodInfo
from dralloc.simulator.result import PodGroupResult, SimulationResult

__all__ = ["DomainRow", "largest_fit", "render_pod_groups", "render_topology", "topology_rows"]

HOLDER = "topology-view"
MAX_FIT = 1000  # copies tried per domain and shape


@dataclass(frozen=True)
class DomainRow:
    domain: str
    nodes: int
    devices_free: int
    devices_total: int
    fits: tuple[tuple[str, int], ...]  # (PodGroup, largest gang of its pod shape that fits here)


def _device_counts(sched: object, nodes: list[NodeInfo]) -> tuple[int, int]:
    """(free, total) devices of the nodes' node-local slices."""
    from dralloc.simulator.simulator import Simulator

    assert isinstance(sched, Simulator)
    names = {n.name for n in nodes}
    state = sched.snapshot.dra.allocator.state
    free = total = 0
    for s in sched.snapshot.slices:
        spec = s.spec
        if spec.node_name not in names:
            continue
        for d in spec.devices or ():
            total += 1
            free += not state.is_allocated(f"{spec.driver}/{spec.pool.name}/{d.name}")
    return free, total


def largest_fit(sched: object, template: Pod, nodes: list[NodeInfo], limit: int = MAX_FIT) -> int:
    """How many copies of ``template`` fit on ``nodes`` together (see the module docstring)."""
    from dralloc.simulator.simulator import Simulator

    assert isinstance(sched, Simulator)
    fw = sched.framework
    snap = sched.snapshot
    saved = (fw.state.next_start_node_index, fw.rng.getstate(), fw.placement)
    names = NameGenerator(0)
    templates = sched.templates.get(template.metadata.namespace or "default", {})
    held: list[PodInfo] = []
    created: list[ResourceClaim] = []
    base_name = template.metadata.name or "pod"
    fw.placement = nodes
    try:
        for i in range(limit):
            meta = replace(template.metadata, name=f"{base_name}-fit-{i}", uid=names.uid(), resource_version=None)
            pod = replace(template, metadata=meta, spec=replace(template.spec, node_name=None),
                          status=PodStatus())
            try:
                pod, claims = claims_for_pod(pod, templates, names)
            except InputError:
                break
            for claim in claims:
                snap.set_claim(claim)
                created.append(claim)
            info = PodInfo.build(pod, -1 - i, 0)
            attempt = fw.attempt(info, hold=HOLDER)
            if attempt.code != Code.WAIT:
                break
            held.append(info)
    finally:
        for info in reversed(held):
            fw.reject(info, HOLDER, "")
        for claim in created:
            current = snap.claims.get((claim.metadata.namespace or "default", claim.metadata.name or ""))
            if current is not None:
                snap.delete_claim(current)
        fw.state.next_start_node_index, state, fw.placement = saved
        fw.rng.setstate(state)
    return len(held)


def topology_rows(sched: object, result: SimulationResult, key: str) -> list[DomainRow]:
    """One row per value of label ``key`` (sorted), with the largest fitting gang for each PodGroup shape."""
    from dralloc.simulator.simulator import Simulator

    assert isinstance(sched, Simulator)
    domains: dict[str, list[NodeInfo]] = {}
    for node in sched.snapshot.nodes:
        value = node.labels.get(key)
        if value is not None:
            domains.setdefault(value, []).append(node)
    shapes: list[tuple[str, Pod]] = []
    by_key = {p.key: p for p in result.pods}
    for group in result.pod_groups:
        if group.members and group.members[0] in by_key:
            shapes.append((f"{group.namespace}/{group.name}", by_key[group.members[0]].pod))
    rows = []
    for domain in sorted(domains):
        nodes = domains[domain]
        free, total = _device_counts(sched, nodes)
        fits = tuple((name, largest_fit(sched, pod, nodes)) for name, pod in shapes)
        rows.append(DomainRow(domain, len(nodes), free, total, fits))
    return rows


def render_topology(rows: list[DomainRow], key: str) -> str:
    """The report section."""
    if not rows:
        return (f'<section id="topology"><h2>Topology: {escape(key)}</h2><p class="empty">No node has the label '
                f"{escape(key)}.</p></section>")
    shapes = [name for name, _ in rows[0].fits]
    head = ["Domain", "Nodes", "Free devices"] + [f"Largest gang like {escape(s)}" for s in shapes]
    body = []
    for r in rows:
        cells = [f"<td>{escape(r.domain)}</td>", f'<td class="num">{r.nodes}</td>',
                 f'<td class="num">{r.devices_free}/{r.devices_total}</td>']
        cells += [f'<td class="num">{n}</td>' for _, n in r.fits]
        body.append("<tr>" + "".join(cells) + "</tr>")
    header = "".join(f"<th>{h}</th>" for h in head)
    note = ("Per value of the label: free devices, and how many pods shaped like each PodGroup's members fit "
            "there together — the largest gang of that shape the domain still holds.")
    return (f'<section id="topology"><h2>Topology: {escape(key)}</h2><p class="note">{note}</p>'
            f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(body)}</tbody></table></section>")



def render_pod_groups(groups: list[PodGroupResult]) -> str:
    """The pod groups section: one row per group (empty when the input has none or the gates are off)."""
    if not groups:
        return ""
    body = []
    for g in groups:
        state = "preempted" if g.preempted_by is not None and g.scheduled < g.min_count else \
            "placed" if g.placed else "pending"
        where = escape(g.domain or ("—" if not g.placed else "any node"))
        body.append(f"<tr><td>{escape(g.namespace)}/{escape(g.name)}</td><td>{state}</td>"
                    f'<td class="num">{g.scheduled}/{len(g.members)}</td><td class="num">{g.min_count}</td>'
                    f"<td>{where}</td><td>{escape(g.message)}</td></tr>")
    header = "".join(f"<th>{h}</th>" for h in ("Pod group", "State", "Scheduled", "minCount", "Domain", "Why not"))
    return (f'<section id="pod-groups"><h2>Pod groups</h2><table><thead><tr>{header}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></section>")
