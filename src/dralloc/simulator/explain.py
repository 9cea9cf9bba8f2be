"""Why a pending pod's claims fit no node: the allocator's explanation on the nodes that pass every other
filter (``dralloc simulate --explain``)."""

from __future__ import annotations

from typing import Any

from dralloc.scheduler.framework import Code, Cycle
from dralloc.scheduler.plugins.dynamic_resources import NAME as DRA
from dralloc.scheduler.plugins.dynamic_resources import DraCycle
from dralloc.simulator.view import SimulationView


def explain_pod(sched: SimulationView, key: str, limit: int = 3) -> list[Any]:
    """Explanations (``dralloc.allocator`` Explanation objects) for up to ``limit`` nodes."""
    info = sched.infos.get(key)
    if info is None:
        return []
    fw = sched.framework
    cycle = Cycle(info, sched.snapshot)
    for plugin in fw.pre_filters:
        result = plugin.pre_filter(cycle)
        if isinstance(result, set) or result is None:
            continue
        if result.code == Code.SKIP:
            cycle.skip_filter.add(plugin.name)
        else:
            return []
    st: DraCycle | None = cycle.data.get(DRA)
    if st is None or not st.to_allocate:
        return []
    out = []
    cycle.skip_filter.add(DRA)
    for node in sched.snapshot.nodes:
        if fw.run_filters(cycle, node) is not None:
            continue
        outcome = sched.snapshot.dra.allocator.allocate(node.node, st.to_allocate)
        if not outcome.allocated and outcome.explanation is not None:
            out.append(outcome.explanation)
            if len(out) >= limit:
                break
    return out
