"""Builders for pod group tests: racks of nodes, PodGroups and their member pods, as YAML."""

from __future__ import annotations

import io
import textwrap
from typing import Any

from dralloc.api import codec
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator
from dralloc.simulator.result import SimulationResult

ALL_ON = "GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
RACK = "example.com/rack"


def rack_nodes(racks: int, per_rack: int, cpu: str = "4", unlabelled: int = 0) -> str:
    docs = []
    for r in range(racks):
        for i in range(per_rack):
            docs.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: r{r}-n{i}, labels: {{{RACK}: rack-{r}}}}}\n"
                        f"status: {{allocatable: {{cpu: \"{cpu}\", memory: 8Gi, pods: \"110\"}}}}\n")
    for i in range(unlabelled):
        docs.append(f"apiVersion: v1\nkind: Node\nmetadata: {{name: loose-{i}}}\n"
                    f"status: {{allocatable: {{cpu: \"{cpu}\", memory: 8Gi, pods: \"110\"}}}}\n")
    return "---\n".join(docs)


def pod_group(name: str, min_count: int | None = None, rack: bool = False, ns: str = "default") -> str:
    policy = f"{{gang: {{minCount: {min_count}}}}}" if min_count is not None else "{basic: {}}"
    text = textwrap.dedent(f"""\
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: PodGroup
        metadata: {{name: {name}, namespace: {ns}}}
        spec:
          schedulingPolicy: {policy}
        """)
    if rack:
        text += f"  schedulingConstraints: {{topology: [{{key: {RACK}}}]}}\n"
    return text


def members(group: str, count: int, cpu: str = "1", prefix: str | None = None, priority: int = 0,
            ns: str = "default", node_name: str = "") -> str:
    docs = []
    for i in range(count):
        bound = f"  nodeName: {node_name}\n" if node_name else ""
        docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {prefix or group}-{i}, namespace: {ns}}}\n"
                    f"spec:\n  priority: {priority}\n  schedulingGroup: {{podGroupName: {group}}}\n{bound}"
                    f"  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n")
    return "---\n".join(docs)


def simulate(*docs: str, gates: str = ALL_ON, seed: int = 0) -> SimulationResult:
    objects: list[Any] = codec.load(io.StringIO("---\n".join(docs)))
    return Simulator.from_objects(objects, seed=seed, feature_gates=FeatureGates.parse(gates)).schedule()


def by_name(result: SimulationResult) -> dict[str, Any]:
    return {p.name: p for p in result.pods}
