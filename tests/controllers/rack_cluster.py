"""Nodes in racks (label ``rack``), as YAML for the workload-set tests that schedule what they expand."""

from __future__ import annotations


def rack_nodes(racks: int = 2, per_rack: int = 2, cpu: int = 4) -> str:
    """``racks`` × ``per_rack`` nodes ``r<rack>-n<i>`` with ``cpu`` CPUs each."""
    out = []
    for r in range(racks):
        for n in range(per_rack):
            out.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: r{r}-n{n}, labels: {{rack: r{r}, "
                       f"kubernetes.io/hostname: r{r}-n{n}}}}}\nstatus: {{allocatable: {{cpu: '{cpu}', "
                       "memory: 16Gi, pods: '110'}}\n")
    return "---\n".join(out)
