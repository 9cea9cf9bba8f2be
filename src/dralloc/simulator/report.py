"""The simulation as one self-contained HTML page (inline CSS and SVG, no script, no network).

    from dralloc.simulator.report import render_report
    html = render_report(sched, result, title="capacity plan")   # sched: the Scheduler that produced result

What is shown is computed in :mod:`dralloc.simulator.report_data`; this module only lays it out. Every
string that comes from the input is escaped. The page is deterministic: no timestamps, stable order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from html import escape
from itertools import pairwise
from typing import TYPE_CHECKING

from dralloc.allocator.numbers import to_num
from dralloc.api.quantity import Quantity
from dralloc.simulator.report_data import (
    CounterLeft,
    HeatMap,
    PendingGroup,
    Placement,
    PoolGroup,
    ReportData,
    Summary,
    Usage,
    build_report_data,
)
from dralloc.simulator.report_devices import StrandedPartition
from dralloc.simulator.result import SimulationResult

if TYPE_CHECKING:
    from dralloc.simulator.simulator import Scheduler

OPEN_LIMIT = 200  # longer tables start folded
FREE_NAMES_SHOWN = 12

CSS = """
:root { --fg:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f8fafc; --accent:#2563eb; --bad:#b91c1c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; max-width: 1200px; padding: 24px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; }
.sub { color: var(--muted); margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 150px; background: var(--bg); }
.card .v { font-size: 22px; font-weight: 600; } .card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; }
.card.bad .v { color: var(--bad); } .card .n { color: var(--muted); font-size: 12px; }
span.node { white-space: nowrap; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.group { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 6px; padding: 8px 12px; margin: 10px 0; }
.group .count { font-weight: 700; color: var(--bad); margin-right: 6px; }
.group .msg { color: var(--muted); white-space: pre-wrap; word-break: break-word; }
.pods { margin: 4px 0; }
.pill { display: inline-block; border: 1px solid var(--line); border-radius: 10px; padding: 0 8px; margin: 2px 2px 0 0;
        background: var(--bg); font-family: ui-monospace, monospace; font-size: 12px; }
.note { color: var(--muted); font-size: 13px; }
.empty { color: var(--muted); font-style: italic; }
details > summary { cursor: pointer; color: var(--accent); margin: 4px 0; }
.heat { overflow-x: auto; } .heat svg { display: block; }
ul.warn li { color: #92400e; }
"""


# ---------------------------------------------------------------------------------------------- helpers
def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _number(value: int | Fraction) -> str:
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{float(value):.2f}".rstrip("0").rstrip(".")
    return str(int(value))


def _bytes(value: int | Fraction) -> str:
    v = float(value)
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(v) >= size:
            return f"{v / size:.1f}".rstrip("0").rstrip(".") + unit
    return _number(value)


def usage_text(u: Usage) -> str:
    """``used/total`` in the unit's natural form: cores for cpu, binary suffixes for bytes."""
    if u.unit == "milli":
        return f"{_number(Fraction(u.used) / 1000)}/{_number(Fraction(u.total) / 1000)}"
    if u.unit == "bytes":
        return f"{_bytes(u.used)}/{_bytes(u.total)}"
    return f"{_number(u.used)}/{_number(u.total)}"


def heat_colour(fraction: float) -> str:
    """Light green (empty) → amber (half) → red (full), as an #rrggbb string."""
    stops = ((0.0, (226, 242, 233)), (0.5, (253, 224, 138)), (1.0, (220, 38, 38)))
    f = min(max(fraction, 0.0), 1.0)
    for (f0, c0), (f1, c1) in pairwise(stops):
        if f <= f1:
            t = (f - f0) / (f1 - f0)
            return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(c0, c1))
    return "#dc2626"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """A table; cells are HTML already (callers escape)."""
    head = "".join(f'<th class="num">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(headers))
    body = []
    for row in rows:
        body.append("<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                                     for i, c in enumerate(row)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _foldable(summary: str, body: str, count: int) -> str:
    opened = " open" if count <= OPEN_LIMIT else ""
    return f"<details{opened}><summary>{summary}</summary>{body}</details>"


# ---------------------------------------------------------------------------------------------- sections
def _summary(s: Summary, stranded: Sequence[StrandedPartition]) -> str:
    unmatched = sum(1 for x in stranded if x.reason == "no request")
    cards = [
        ("Nodes", str(s.nodes), ""),
        ("Pods scheduled", str(s.scheduled), ""),
        ("Already running", str(s.running), ""),
        ("Pending", str(s.pending), "bad" if s.pending else ""),
        ("Evicted", str(s.evicted), "bad" if s.evicted else ""),
        ("Devices allocated", f"{s.devices_allocated}/{s.devices_total}", ""),
        ("Stranded partitions", str(len(stranded)), "bad" if stranded else ""),
    ]
    notes = {"Stranded partitions": f"{unmatched} match no request · {len(stranded) - unmatched} counters used up",
             "Devices allocated": f"{s.devices_total - s.devices_allocated} free"}
    if s.other:
        cards.append(("Not for this scheduler", str(s.other), ""))
    html = "".join(f'<div class="card {cls}" data-key="{_e(k)}"><div class="k">{_e(k)}</div>'
                   f'<div class="v">{_e(v)}</div>'
                   + (f'<div class="n">{_e(notes[k])}</div>' if k in notes else "") + "</div>"
                   for k, v, cls in cards)
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{html}</div></section>'


def _pending(groups: Sequence[PendingGroup]) -> str:
    if not groups:
        return '<section id="pending"><h2>Pending pods</h2><p class="empty">Every pod was placed.</p></section>'
    parts = []
    for g in groups:
        pods = "".join(f'<span class="pill">{_e(p)}</span>' for p in g.pods)
        parts.append(f'<div class="group"><div><span class="count">{g.count} pod{"s" if g.count != 1 else ""}'
                     f'</span><span class="reasons">{_e(g.reasons)}</span></div><div class="pods">{pods}</div>'
                     f'<details><summary>kube-scheduler\'s message</summary><div class="msg mono">{_e(g.message)}'
                     f"</div></details></div>")
    total = sum(g.count for g in groups)
    return (f'<section id="pending"><h2>Pending pods by reason</h2><p class="note">{total} pod(s) in '
            f"{len(groups)} group(s), grouped by kube-scheduler's message.</p>{''.join(parts)}</section>")


def _heatmap_svg(hm: HeatMap) -> str:
    cell_w = max(96, max((len(c) for c in hm.columns), default=0) * 7 + 16)
    cell_h = 26
    label_w = min(360, max((len(r.label) for r in hm.rows), default=8) * 7 + 20)
    head_h = 30
    width = label_w + cell_w * len(hm.columns) + 2
    height = head_h + cell_h * len(hm.rows) + 2
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="utilisation heat map" '
            f'font-family="system-ui, sans-serif" font-size="12">')]
    for j, col in enumerate(hm.columns):
        x = label_w + j * cell_w + cell_w / 2
        out.append(f'<text x="{x:.0f}" y="{head_h - 10}" text-anchor="middle" font-weight="600">{_e(col)}</text>')
    for i, row in enumerate(hm.rows):
        y = head_h + i * cell_h
        label = row.label if len(row.label) * 7 + 20 <= label_w else row.label[: (label_w - 20) // 7 - 1] + "…"
        nodes = ", ".join(row.nodes[:20]) + (" …" if len(row.nodes) > 20 else "")
        out.append(f'<text x="4" y="{y + 17}" class="row-label"><title>{_e(nodes or row.label)}</title>'
                   f"{_e(label)}</text>")
        for j, cell in enumerate(row.cells):
            x = label_w + j * cell_w
            if cell is None:
                out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" '
                           f'fill="#f8fafc" stroke="#e4e7eb"/>')
                continue
            frac = cell.fraction
            text = usage_text(cell)
            ink = "#ffffff" if frac > 0.75 else "#1f2933"
            tip = f"{row.label} · {hm.columns[j]}: {text} ({frac:.0%})"
            if cell.blocked:
                tip += f"; {cell.blocked} more free but blocked by used-up shared counters"
            out.append(f'<g class="cell" data-row="{_e(row.label)}" data-column="{_e(hm.columns[j])}">'
                       f'<title>{_e(tip)}</title><rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" '
                       f'height="{cell_h - 2}" rx="3" fill="{heat_colour(frac)}"/>'
                       f'<text x="{x + cell_w / 2:.0f}" y="{y + 17}" text-anchor="middle" fill="{ink}">'
                       f"{_e(text)}</text></g>")
    out.append("</svg>")
    return "".join(out)


def _legend() -> str:
    stops = "".join(f'<rect x="{i * 24}" y="0" width="24" height="12" fill="{heat_colour(i / 10)}"/>' for i in range(11))
    return (f'<p class="note">Cells show requested/allocatable (cpu in cores, memory, pods) and allocated/total '
            f'devices matching each DeviceClass; a shared device counts as allocated once any claim uses it. '
            f'<svg width="264" height="12" aria-label="legend">{stops}</svg> 0% → 100%</p>')


def _heatmap(hm: HeatMap) -> str:
    note = f'<p class="note">{_e(hm.note)}.</p>' if hm.note else ""
    if not hm.rows:
        return '<section id="heatmap"><h2>Utilisation</h2><p class="empty">No nodes.</p></section>'
    return (f'<section id="heatmap"><h2>Utilisation per node and DeviceClass</h2>{_legend()}{note}'
            f'<div class="heat">{_heatmap_svg(hm)}</div></section>')


def _placements(items: Sequence[Placement]) -> str:
    if not items:
        return '<section id="placements"><h2>Placements</h2><p class="empty">No pod was placed.</p></section>'
    rows = []
    for p in items:
        claims = "<br>".join(
            f"<code>{_e(c.claim)}</code> → " + (", ".join(f"<code>{_e(d)}</code>" for d in c.devices) or
                                               '<span class="empty">not allocated</span>')
            for c in p.claims)
        rows.append((_e(p.pod), _e(p.node), _e(p.status), claims))
    table = _table(("Pod", "Node", "Status", "Claim → devices"), rows)
    return (f'<section id="placements"><h2>Placements</h2>'
            f"{_foldable(f'{len(items)} pod(s) on nodes', table, len(items))}</section>")


def _evictions(data: ReportData) -> str:
    if not data.evicted:
        return ""
    rows = [(_e(e.pod), _e(e.node), _e(e.by)) for e in data.evicted]
    return (f'<section id="evicted"><h2>Evicted by preemption</h2>'
            f'{_table(("Pod", "Was on node", "Preempted by"), rows)}</section>')


def _places(names: Sequence[str], what: str) -> str:
    """One name, or "N nodes: a, b, c and N-3 more"."""
    if len(names) == 1:
        return f'<span class="node">{_e(names[0])}</span>'
    shown = ", ".join(_e(n) for n in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"<b>{len(names)} {what}</b>: {shown}{more}"


def _pools(groups: Sequence[PoolGroup]) -> str:
    if not groups:
        return '<section id="pools"><h2>Device pools</h2><p class="empty">No ResourceSlices.</p></section>'
    rows = []
    for g in groups:
        p = g.pool
        shown = ", ".join(f"<code>{_e(n)}</code>" for n in p.free[:FREE_NAMES_SHOWN])
        more = f" and {len(p.free) - FREE_NAMES_SHOWN} more" if len(p.free) > FREE_NAMES_SHOWN else ""
        free = f"{len(p.free)}: {shown}{more}" if p.free else "0"
        by_set: dict[str, list[CounterLeft]] = {}
        for c in p.counters:
            by_set.setdefault(c.counter_set, []).append(c)
        counters = "<br>".join(f"<b>{_e(cs)}</b>: {_e(counters_text(v))}" for cs, v in by_set.items()) or "—"
        capacity = "<br>".join(f"<code>{_e(c.device)}</code> {_e(c.capacity)} {_e(c.available)}/{_e(c.total)}"
                               for c in p.capacity) or "—"
        where = _places(g.pools, "pools alike") if len(g.pools) > 1 else \
            f'<code>{_e(p.pool)}</code><br><span class="node">{_e(p.node or "(not node-local)")}</span>'
        rows.append((f"{_e(p.driver)}<br>{where}", f"{p.allocated}/{p.total}", free, counters, capacity))
    table = _table(("Driver / pool, node", "Allocated", "Free devices", "Shared counters left (available/total)",
                    "Consumable capacity left"), rows, numeric=(1,))
    pools = sum(len(g.pools) for g in groups)
    note = f" in {len(groups)} row(s): pools with the same free devices and counters share one" \
        if len(groups) < pools else ""
    return (f'<section id="pools"><h2>Free devices and counters per pool</h2>'
            f"{_foldable(f'{pools} pool(s){note}', table, len(groups))}</section>")


def counters_text(counters: Sequence[CounterLeft]) -> str:
    """``name available/total`` per counter; three or more counters named alike but for a trailing number
    (memory-slice-0 … memory-slice-7) are summed into one entry, ``memory-slice-0…7``."""
    families: dict[str, list[CounterLeft]] = {}
    for c in counters:
        families.setdefault(c.counter.rstrip("0123456789"), []).append(c)
    parts: list[str] = []
    for stem, members in families.items():
        if len(members) < 3 or stem == members[0].counter:
            parts.extend(f"{c.counter} {c.available}/{c.total}" for c in members)
            continue
        numbers = sorted(int(c.counter[len(stem):]) for c in members)
        like = Quantity(members[0].total)
        available = sum((to_num(Quantity(c.available)) for c in members), start=0)
        total = sum((to_num(Quantity(c.total)) for c in members), start=0)
        parts.append(f"{stem}{numbers[0]}…{numbers[-1]} {Quantity.from_fraction(available, like.format)}"
                     f"/{Quantity.from_fraction(total, like.format)}")
    return ", ".join(parts)


def _fragmentation(data: ReportData) -> str:
    requests = "".join(f"<li><code>{_e(r.describe())}</code></li>" for r in data.requests) or \
        '<li class="empty">none: no pod asks for devices</li>'
    unmatched = sum(1 for s in data.stranded if s.reason == "no request")
    blocked = len(data.stranded) - unmatched
    groups = data.stranded_groups
    parts = [(f'<section id="fragmentation"><h2>Fragmentation</h2><p class="note">Free devices that draw on '
              f"shared counters (MIG-style partitions) and that no request of the input's pods can use: no "
              f"requested class and selectors match them, or a counter they need is already used up by allocated "
              f"devices.</p><p>Requests in the input:</p><ul>{requests}</ul>"),
             (f'<p class="stranded-total"><b>{len(data.stranded)}</b> stranded partition(s): '
              f"<b>{unmatched}</b> match no request, <b>{blocked}</b> need counters that are used up.</p>")]
    for reason, heading in (("no request", "Free, but no request matches"),
                            ("counters used up", "Blocked: shared counters used up")):
        chosen = [g for g in groups if g.reason == reason]
        if not chosen:
            continue
        rows = [(_places(g.places, "nodes"), _e(g.driver), f"<code>{_e(g.counter_set)}</code>" if g.counter_set
                 else "—", str(len(g.devices)), ", ".join(f"<code>{_e(d)}</code>" for d in g.devices))
                for g in chosen]
        count = sum(len(g.devices) * len(g.places) for g in chosen)
        table = _table(("Where", "Driver", "Counter set", "Devices", "Which"), rows, numeric=(3,))
        parts.append(f"<h3>{heading}</h3>" + _foldable(f"{count} partition(s)", table, len(chosen)))
    parts.append("</section>")
    return "".join(parts)


def _warnings(data: ReportData) -> str:
    if not data.warnings:
        return ""
    items = "".join(f"<li>{_e(w)}</li>" for w in data.warnings)
    return f'<section id="warnings"><h2>Warnings</h2><ul class="warn">{items}</ul></section>'


def render_data(data: ReportData) -> str:
    s = data.summary
    sub = (f"kube-scheduler's default profile simulated by dralloc · seed {s.seed} (ties between equally "
           f"scored nodes are broken by it) · {s.pods} pods on {s.nodes} nodes")
    body = "".join((
        _summary(s, data.stranded), _pending(data.pending), _heatmap(data.heatmap), _placements(data.placements),
        _evictions(data), _pools(data.pool_groups), _fragmentation(data), _warnings(data),
    ))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="dralloc"><title>{_e(data.title)}</title><style>{CSS}</style></head>'
            f'<body><header><h1>{_e(data.title)}</h1><p class="sub">{_e(sub)}</p></header>{body}</body></html>\n')


def render_report(sched: Scheduler, result: SimulationResult, *, title: str = "dralloc simulation",
                  topology_key: str | None = None) -> str:
    """The report of ``result`` (produced by ``sched``, whose snapshot holds the final cluster state) as one
    self-contained HTML document; ``topology_key``: add the topology view over that node label."""
    html = render_data(build_report_data(sched, result, title=title))
    if not result.pod_groups and topology_key is None:
        return html
    from dralloc.simulator.report_topology import render_pod_groups, render_topology, topology_rows

    sections = render_pod_groups(result.pod_groups)
    if topology_key is not None:
        sections += render_topology(topology_rows(sched, result, topology_key), topology_key)
    return html.replace("</body>", sections + "</body>", 1)
