"""Builders for scheduler tests: small clusters written as YAML."""

from __future__ import annotations

import io
import textwrap
from typing import Any

from dralloc.api import codec
from dralloc.scheduler import SimulationResult


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: str = "{}",
         extra: str = "") -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Node
        metadata: {{name: {name}, labels: {labels}}}
        {extra}
        status: {{allocatable: {{cpu: "{cpu}", memory: {memory}, pods: "{pods}"}}}}
        """)


def pod(name: str, cpu: str = "100m", extra_spec: str = "", claims: str = "", priority: int | None = None,
        node_name: str = "", ns: str = "default") -> str:
    lines = [
        "apiVersion: v1", "kind: Pod", f"metadata: {{name: {name}, namespace: {ns}}}", "spec:",
        f"  containers: [{{name: c, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]",
    ]
    if claims:
        lines.append(f"  resourceClaims: {claims}")
    if priority is not None:
        lines.append(f"  priority: {priority}")
    if node_name:
        lines.append(f"  nodeName: {node_name}")
    for extra in textwrap.dedent(extra_spec).splitlines():
        if extra.strip():
            lines.append("  " + extra)
    return "\n".join(lines) + "\n"


def gpu_slice(node_name: str, count: int = 2, driver: str = "gpu.example.com") -> str:
    devices = ", ".join(f"{{name: gpu-{i}}}" for i in range(count))
    return textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {{name: {node_name}-gpu}}
        spec:
          driver: {driver}
          nodeName: {node_name}
          pool: {{name: {node_name}, generation: 1, resourceSliceCount: 1}}
          devices: [{devices}]
        """)


GPU_CLASS = textwrap.dedent("""\
    apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu}
    spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
    """)

GPU_TEMPLATE = textwrap.dedent("""\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: one-gpu, namespace: default}
    spec:
      spec:
        devices:
          requests: [{name: gpu, exactly: {deviceClassName: gpu}}]
    """)

TEMPLATE_CLAIM = "[{name: gpu, resourceClaimTemplateName: one-gpu}]"


def load(*docs: str) -> list[Any]:
    return codec.load(io.StringIO("\n---\n".join(docs)))


def by_name(result: SimulationResult) -> dict[str, Any]:
    return {p.name: p for p in result.pods}
