"""A scale-up plan as one self-contained HTML page: what to add, what each added node hosts, and the
devices and shared counters still free on the added nodes (the room the plan leaves)."""

from __future__ import annotations

from typing import Any

from dralloc.simulator.planner.scale_up import ScaleUpPlan
from dralloc.simulator.report import CSS, _e, _pools, _table
from dralloc.simulator.report_data import fold_pools, pool_usage


def render_plan(plan: ScaleUpPlan, *, title: str = "dralloc capacity plan") -> str:
    trial = plan.trial
    added = trial.added if trial is not None else {}
    hosted: dict[str, list[str]] = {name: [] for names in added.values() for name in names}
    for p in plan.pods:
        if p.node in hosted:
            hosted[p.node].append(f"{p.namespace}/{p.name}")
    cards = "".join(f'<div class="card"><div class="k">add {_e(name)}</div><div class="v">{count}</div></div>'
                    for name, count in plan.add.items()) or \
        '<div class="card"><div class="k">add</div><div class="v">0</div></div>'
    placed = len(plan.pods) - plan.unschedulable
    cards += (f'<div class="card"><div class="k">pending pods placed</div><div class="v">{placed}/{len(plan.pods)}'
              f'</div></div><div class="card{" bad" if plan.unschedulable else ""}"><div class="k">fit no template'
              f'</div><div class="v">{plan.unschedulable}</div></div>')
    parts = [f'<section id="summary"><div class="cards">{cards}</div>'
             f'<p class="note">Expander: {_e(", ".join(plan.expander))}. Templates: '
             f'{_e(", ".join(t.name for t in plan.templates))}.</p></section>']
    for name, nodes in added.items():
        rows = [(f"<code>{_e(n)}</code>", str(len(hosted[n])), ", ".join(f"<code>{_e(k)}</code>" for k in hosted[n])
                 or '<span class="empty">nothing</span>') for n in nodes]
        parts.append(f'<section class="template"><h2>Template {_e(name)}: {len(nodes)} node(s)</h2>'
                     f'{_table(("Added node", "Pods", "Which"), rows, numeric=(1,))}</section>')
    if trial is not None and added:
        new_nodes = set(hosted)
        simulator: Any = trial.scheduler  # a dralloc.Scheduler: the report reads its snapshot
        pools = [p for p in pool_usage(simulator, trial.result) if p.node in new_nodes]
        parts.append(_pools(fold_pools(pools)))
    stuck = [p for p in plan.pods if p.node is None]
    if stuck:
        stuck_rows = [(f"<code>{_e(p.namespace)}/{_e(p.name)}</code>", _e(p.message)) for p in stuck]
        parts.append(f'<section id="pending"><h2>Pods no template can host</h2>'
                     f'{_table(("Pod", "kube-scheduler says"), stuck_rows)}</section>')
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="dralloc"><title>{_e(title)}</title><style>{CSS}</style></head>'
            f'<body><header><h1>{_e(title)}</h1><p class="sub">the fewest nodes per template that make the '
            f'pending pods fit, on kube-scheduler\'s rules as dralloc simulates them</p></header>'
            f'{"".join(parts)}</body></html>\n')
