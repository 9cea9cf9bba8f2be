"""The Alibaba GPU trace (cluster-trace-gpu-v2023, "openb") as DRA objects.

Node CSV columns: ``sn, cpu_milli, memory_mib, gpu, model``; pod CSV columns: ``name, cpu_milli, memory_mib,
num_gpu, gpu_milli[, gpu_spec, ...]`` (further columns — qos, phase, times — are read when present).

The mapping (one DRA driver, ``gpu.dralloc.io``):

* a node with GPUs gets one ResourceSlice whose devices ``gpu-0`` … ``gpu-<N-1>`` carry the attributes
  ``model`` (string) and ``index`` (int) and a consumable capacity ``milli`` of 1000 with
  ``allowMultipleAllocations`` (KEP-5075): several claims share a GPU, each consuming its part;
* a pod with ``num_gpu`` = k gets a ResourceClaim with one request of k devices, each consuming
  ``gpu_milli`` (1000 for a whole GPU, which no other claim can then share);
* ``gpu_spec`` ("A|B", empty = any model) becomes a CEL selector on the model attribute;
* cpu and memory are ordinary container requests (= limits) against the node's allocatable.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dralloc.errors import InputError

DRIVER = "gpu.dralloc.io"
DEVICE_CLASS = "gpu.dralloc.io"
CAPACITY = "milli"  # the consumable capacity of a GPU: 1000 = the whole GPU
GPU_MILLI = 1000
MODEL_ATTRIBUTE = "model"
INDEX_ATTRIBUTE = "index"
MODEL_LABEL = "gpu.dralloc.io/model"
CLAIM_REQUEST = "gpu"
NAMESPACE = "default"
PODS_PER_NODE = "110"
FORMATS = ("alibaba-gpu-2023",)


@dataclass(frozen=True, slots=True)
class TraceNode:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class TracePod:
    """One row of the pod CSV. ``gpu_milli`` is per GPU (clamped to 1000); 0 when ``num_gpu`` is 0."""

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: tuple[str, ...] = ()  # allowed models, without duplicates, in their first order; () = any
    creation_time: int | None = None
    deletion_time: int | None = None

    @property
    def gpu_demand(self) -> int:
        """Milli-GPU the pod takes: num_gpu × gpu_milli."""
        return self.num_gpu * self.gpu_milli

    def renamed(self, name: str) -> TracePod:
        return TracePod(name, self.cpu_milli, self.memory_mib, self.num_gpu, self.gpu_milli, self.gpu_spec,
                        self.creation_time, self.deletion_time)


# ---------------------------------------------------------------------------------------------- reading
def _rows(path: str | Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        handle = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in required if c not in (reader.fieldnames or ())]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)} (the header has "
                             f"{', '.join(reader.fieldnames or ()) or 'nothing'})")
        yield from enumerate(reader, start=2)


def _int(path: str | Path, line: int, row: dict[str, str], column: str, *, optional: bool = False) -> int:
    text = (row.get(column) or "").strip()
    if not text and optional:
        return -1
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{path}:{line}: {column}: not an integer: {text!r}") from None
    if value < 0:
        raise InputError(f"{path}:{line}: {column}: must not be negative: {value}")
    return value


def read_nodes(path: str | Path) -> list[TraceNode]:
    """The node CSV's rows (all of them: nodes without GPUs too)."""
    nodes = []
    seen: set[str] = set()
    for line, row in _rows(path, ("sn", "cpu_milli", "memory_mib", "gpu", "model")):
        name = (row["sn"] or "").strip()
        if not name:
            raise InputError(f"{path}:{line}: sn: empty node name")
        if name in seen:
            raise InputError(f"{path}:{line}: sn: node {name!r} appears twice")
        seen.add(name)
        gpus = _int(path, line, row, "gpu")
        model = (row["model"] or "").strip()
        if gpus and not model:
            raise InputError(f"{path}:{line}: model: a node with GPUs needs a model")
        nodes.append(TraceNode(name, _int(path, line, row, "cpu_milli"), _int(path, line, row, "memory_mib"),
                               gpus, model))
    return nodes


def read_pods(path: str | Path) -> list[TracePod]:
    """The pod CSV's rows, in file order."""
    pods = []
    seen: set[str] = set()
    for line, row in _rows(path, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")):
        name = (row["name"] or "").strip()
        if not name:
            raise InputError(f"{path}:{line}: name: empty pod name")
        if name in seen:
            raise InputError(f"{path}:{line}: name: pod {name!r} appears twice")
        seen.add(name)
        num_gpu = _int(path, line, row, "num_gpu")
        milli = min(_int(path, line, row, "gpu_milli"), GPU_MILLI) if num_gpu else 0
        if num_gpu and milli == 0:
            raise InputError(f"{path}:{line}: gpu_milli: a pod with num_gpu {num_gpu} needs gpu_milli > 0")
        if num_gpu > 1 and milli != GPU_MILLI:
            raise InputError(f"{path}:{line}: gpu_milli: a pod with several GPUs takes each whole (1000), "
                             f"not {milli}")
        spec = tuple(dict.fromkeys(p.strip() for p in (row.get("gpu_spec") or "").split("|") if p.strip()))
        created = _int(path, line, row, "creation_time", optional=True) if "creation_time" in row else -1
        deleted = _int(path, line, row, "deletion_time", optional=True) if "deletion_time" in row else -1
        pods.append(TracePod(name, _int(path, line, row, "cpu_milli"), _int(path, line, row, "memory_mib"),
                             num_gpu, milli, spec if num_gpu else (),
                             created if created >= 0 else None, deleted if deleted >= 0 else None))
    return pods


def gpu_nodes(nodes: list[TraceNode]) -> list[TraceNode]:
    """The nodes with GPUs: the cluster the paper's experiments use."""
    return [n for n in nodes if n.gpus > 0]


# ---------------------------------------------------------------------------------------------- DRA objects
def model_selector(models: tuple[str, ...]) -> str:
    """The CEL expression a claim uses to accept only the listed GPU models."""
    listed = ", ".join('"' + m.replace("\\", "\\\\").replace('"', '\\"') + '"' for m in models)
    return f'device.attributes["{DRIVER}"].{MODEL_ATTRIBUTE} in [{listed}]'


def device_class() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DEVICE_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def node_document(node: TraceNode) -> dict[str, Any]:
    resources = {"cpu": f"{node.cpu_milli}m", "memory": f"{node.memory_mib}Mi", "pods": PODS_PER_NODE}
    labels = {"kubernetes.io/hostname": node.name}
    if node.model:
        labels[MODEL_LABEL] = node.model
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": labels},
            "status": {"capacity": resources, "allocatable": dict(resources)}}


def slice_document(node: TraceNode) -> dict[str, Any]:
    devices = [{"name": f"gpu-{i}",
                "attributes": {MODEL_ATTRIBUTE: {"string": node.model}, INDEX_ATTRIBUTE: {"int": i}},
                "capacity": {CAPACITY: {"value": str(GPU_MILLI)}},
                "allowMultipleAllocations": True}
               for i in range(node.gpus)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node.name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node.name,
                     "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def claim_name(pod: TracePod) -> str:
    return f"{pod.name}-gpu"


def claim_document(pod: TracePod) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": DEVICE_CLASS, "allocationMode": "ExactCount",
                               "count": pod.num_gpu, "capacity": {"requests": {CAPACITY: str(pod.gpu_milli)}}}
    if pod.gpu_spec:
        exactly["selectors"] = [{"cel": {"expression": model_selector(pod.gpu_spec)}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": claim_name(pod), "namespace": NAMESPACE},
            "spec": {"devices": {"requests": [{"name": CLAIM_REQUEST, "exactly": exactly}]}}}


def pod_document(pod: TracePod) -> dict[str, Any]:
    resources = {"cpu": f"{pod.cpu_milli}m", "memory": f"{pod.memory_mib}Mi"}
    container: dict[str, Any] = {"name": "main", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": resources, "limits": dict(resources)}}
    spec: dict[str, Any] = {"containers": [container]}
    if pod.num_gpu:
        container["resources"]["claims"] = [{"name": CLAIM_REQUEST}]
        spec["resourceClaims"] = [{"name": CLAIM_REQUEST, "resourceClaimName": claim_name(pod)}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod.name, "namespace": NAMESPACE},
            "spec": spec}


def cluster_documents(nodes: list[TraceNode]) -> list[dict[str, Any]]:
    """The DeviceClass, then each node with GPUs and its ResourceSlice."""
    out = [device_class()]
    for node in gpu_nodes(nodes):
        out.append(node_document(node))
        out.append(slice_document(node))
    return out


def workload_documents(pods: list[TracePod]) -> list[dict[str, Any]]:
    """Each pod's ResourceClaim (if it uses GPUs), then the pod."""
    out = []
    for pod in pods:
        if pod.num_gpu:
            out.append(claim_document(pod))
        out.append(pod_document(pod))
    return out
