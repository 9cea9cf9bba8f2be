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


def running_with_claim(name: str, node_name: str, cpu: str = "100m", priority: int | None = None,
                       pool: str | None = None) -> tuple[str, str]:
    """A pod running on ``node_name`` and the claim generated for it, allocated to gpu-0 of the node's pool."""
    running = pod(name, cpu=cpu, priority=priority, node_name=node_name,
                  claims=f"[{{name: gpu, resourceClaimName: {name}-gpu}}]").replace(
        "namespace: default}", f"namespace: default, uid: {name}-uid}}")
    claim = textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata:
          name: {name}-gpu
          namespace: default
          ownerReferences: [{{apiVersion: v1, kind: Pod, name: {name}, uid: {name}-uid, controller: true}}]
        spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu}}}}]}}}}
        status:
          reservedFor: [{{resource: pods, name: {name}, uid: {name}-uid}}]
          allocation:
            devices: {{results: [{{request: gpu, driver: gpu.example.com, pool: {pool or node_name}, device: gpu-0}}]}}
        """)
    return running, claim
