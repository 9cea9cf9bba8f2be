"""Synthetic clusters shaped like what real DRA drivers publish, for benchmarks, docs and tests.

    generate_cluster(nodes=4, profile="gpu-h100", seed=0) -> [DeviceClass..., Node, ResourceSlice, ...]

Profiles:

* ``gpu-h100``: DGX-style nodes with 8 H100 80GB GPUs in one pool per node, as NVIDIA's DRA driver publishes
  them with dynamic MIG: one counter-only slice with a counter set per GPU (``multiprocessors``,
  ``copy-engines``, ``decoders``, ``encoders``, ``jpeg-engines``, ``ofa-engines``, ``memory`` and one
  ``memory-slice-<i>`` counter per memory slice), and one device slice per GPU holding the full GPU (it
  consumes every counter) and every MIG placement (1g.10gb x7, 1g.20gb x4, 2g.20gb x3, 3g.40gb x2,
  4g.40gb, 7g.80gb), each consuming its profile's engines and the memory slices its placement covers.
  Device classes ``gpu.nvidia.com`` and ``mig.nvidia.com`` select on the ``type`` attribute.
* ``dra-example``: the dra-example-driver's ``gpu`` profile: 8 devices ``gpu-<i>`` of driver
  ``gpu.example.com`` with ``index``, ``uuid``, ``model`` and ``driverVersion`` and 80Gi memory, 100 compute.
* ``nic``: 2 shareable 200G NICs per node (``allowMultipleAllocations``) whose ``bandwidth`` and ``queues``
  are consumable capacity with request policies.

Every node gets cpu/memory/pods allocatable and the usual labels. The same arguments always give the same
objects: UUIDs come from a seeded random generator, never from the clock.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

from dralloc.api import codec

__all__ = ["PROFILES", "cluster_documents", "generate_cluster", "node_template_documents"]

PROFILES = ("gpu-h100", "dra-example", "nic")

# H100 80GB MIG profiles: (name, profile id, memory slices, compute slices, usable memory, SMs,
# copy engines, decoders, encoders, jpeg engines, ofa engines, placement starts). The engine counts follow
# NVIDIA's MIG user guide for H100 as far as published; usable memory is what nvidia-smi reports.
_H100_MIG = (
    ("1g.10gb", 19, 1, 1, "9856Mi", 16, 1, 1, 0, 1, 0, (0, 1, 2, 3, 4, 5, 6)),
    ("1g.20gb", 15, 2, 1, "19968Mi", 16, 1, 1, 0, 1, 0, (0, 2, 4, 6)),
    ("2g.20gb", 14, 2, 2, "19968Mi", 32, 2, 2, 0, 2, 0, (0, 2, 4)),
    ("3g.40gb", 9, 4, 3, "40192Mi", 60, 3, 3, 0, 3, 0, (0, 4)),
    ("4g.40gb", 5, 4, 4, "40192Mi", 64, 4, 4, 0, 4, 0, (0,)),
    ("7g.80gb", 0, 8, 7, "80Gi", 132, 8, 7, 3, 7, 1, (0,)),
)
_H100_TOTAL = {"multiprocessors": 132, "copy-engines": 8, "decoders": 7, "encoders": 3, "jpeg-engines": 7,
               "ofa-engines": 1, "memory": "80Gi"}
_GPUS_PER_NODE = 8
_NVIDIA = "gpu.nvidia.com"
_EXAMPLE = "gpu.example.com"
_NIC = "nic.example.com"


def generate_cluster(nodes: int, profile: str, *, seed: int = 0) -> list[Any]:
    """The typed objects of a synthetic cluster: DeviceClasses, then per node its Node and ResourceSlices.
    Documents are decoded as they are made, so a large cluster never holds both forms at once, and the
    parts identical devices have in common are shared (:mod:`dralloc.simulator.sharing`)."""
    from dralloc.simulator.sharing import share_slices

    return share_slices(codec.decode(doc) for doc in iter_cluster_documents(nodes, profile, seed=seed))


def cluster_documents(nodes: int, profile: str, *, seed: int = 0) -> list[dict[str, Any]]:
    """The same cluster as plain JSON-ready documents (what ``kubectl get -o json`` items look like)."""
    return list(iter_cluster_documents(nodes, profile, seed=seed))


def iter_cluster_documents(nodes: int, profile: str, *, seed: int = 0) -> Iterator[dict[str, Any]]:
    """``cluster_documents``, one document at a time."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: one of {', '.join(PROFILES)}")
    if nodes < 0:
        raise ValueError("the number of nodes must not be negative")
    rng = random.Random(f"{profile}/{seed}")
    yield from _device_classes(profile)
    for i in range(nodes):
        name = f"{profile}-node-{i}"
        yield _node(name, profile, i)
        if profile == "gpu-h100":
            yield from _h100_slices(name, rng)
        elif profile == "dra-example":
            yield _example_slice(name, rng)
        else:
            yield _nic_slice(name, i)


def node_template_documents(profile: str, name: str, *, zone: str | None = None, seed: int = 0
                            ) -> list[dict[str, Any]]:
    """One node of a profile with its ResourceSlices and nothing else: a node template for ``dralloc plan``
    (scale-from-zero: no such node needs to exist). Every pool is complete: ``resourceSliceCount`` is the
    number of slices the pool has."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: one of {', '.join(PROFILES)}")
    rng = random.Random(f"{profile}/{seed}")
    node = _node(name, profile, 0)
    if zone is not None:
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
    if profile == "gpu-h100":
        slices = _h100_slices(name, rng)
    elif profile == "dra-example":
        slices = [_example_slice(name, rng)]
    else:
        slices = [_nic_slice(name, 0)]
    return [node, *slices]


# --- shared pieces ----------------------------------------------------------------------------------


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _device_class(name: str, expression: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _device_classes(profile: str) -> list[dict[str, Any]]:
    if profile == "gpu-h100":
        return [_device_class(f"{kind}.nvidia.com",
                              f'device.driver == "{_NVIDIA}" && device.attributes["{_NVIDIA}"].type == "{kind}"')
                for kind in ("gpu", "mig")]
    if profile == "dra-example":
        return [_device_class(_EXAMPLE, f'device.driver == "{_EXAMPLE}"')]
    return [_device_class(_NIC, f'device.driver == "{_NIC}"')]


_NODE_SHAPES = {  # cpu, memory, labels
    "gpu-h100": ("224", "2015Gi", {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                   "node.kubernetes.io/instance-type": "dgx-h100"}),
    "dra-example": ("32", "128Gi", {"node.kubernetes.io/instance-type": "example-gpu-8"}),
    "nic": ("64", "256Gi", {"node.kubernetes.io/instance-type": "net-2x200g"}),
}


def _node(name: str, profile: str, index: int) -> dict[str, Any]:
    cpu, memory, labels = _NODE_SHAPES[profile]
    allocatable_cpu = str(int(cpu) - 2)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": f"zone-{'abc'[index % 3]}", **labels}},
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "1Ti"},
            "allocatable": {"cpu": allocatable_cpu, "memory": memory, "pods": "110", "ephemeral-storage": "900Gi"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status"}],
        },
    }


def _slice(name: str, node: str, driver: str, count: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": count}, **body}}


# --- gpu-h100 ---------------------------------------------------------------------------------------


def _counter_values(values: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {k: {"value": str(v)} for k, v in values.items()}


def _h100_slices(node: str, rng: random.Random) -> list[dict[str, Any]]:
    counter_sets = []
    for g in range(_GPUS_PER_NODE):
        counters = {**_H100_TOTAL, **{f"memory-slice-{s}": 1 for s in range(8)}}
        counter_sets.append({"name": f"gpu-{g}-counter-set", "counters": _counter_values(counters)})
    out = [_slice(f"{node}-{_NVIDIA}-counters", node, _NVIDIA, _GPUS_PER_NODE + 1, {"sharedCounters": counter_sets})]
    for g in range(_GPUS_PER_NODE):
        parent = f"GPU-{_uuid(rng)}"
        common: dict[str, dict[str, Any]] = {
            "architecture": {"string": "Hopper"}, "brand": {"string": "Nvidia"},
            "productName": {"string": "NVIDIA H100 80GB HBM3"},
            "cudaComputeCapability": {"version": "9.0.0"}, "cudaDriverVersion": {"version": "12.8.0"},
            "driverVersion": {"version": "570.124.6"}, "addressingMode": {"string": "HMM"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:{0x18 + 0x10 * g:02x}:00.0"},
            "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{0x10 * g:02x}"},
        }
        full = {**_H100_TOTAL, **{f"memory-slice-{s}": 1 for s in range(8)}}
        devices: list[dict[str, Any]] = [{
            "name": f"gpu-{g}",
            "attributes": {"type": {"string": "gpu"}, "index": {"int": g}, "uuid": {"string": parent}, **common},
            "capacity": _counter_values(_capacity_names(_H100_TOTAL)),
            "consumesCounters": [{"counterSet": f"gpu-{g}-counter-set", "counters": _counter_values(full)}],
        }]
        for (profile, pid, mem_slices, _compute, memory, sms, ce, dec, enc, jpg, ofa, starts) in _H100_MIG:
            engines: dict[str, Any] = {"multiprocessors": sms, "copy-engines": ce, "decoders": dec, "encoders": enc,
                       "jpeg-engines": jpg, "ofa-engines": ofa, "memory": memory}
            for start in starts:
                used = {**engines, **{f"memory-slice-{s}": 1 for s in range(start, start + mem_slices)}}
                devices.append({
                    "name": f"gpu-{g}-mig-{profile.replace('.', '')}-{pid}-{start}",
                    "attributes": {**_mig_attributes(profile, g, parent, start, mem_slices), **common},
                    "capacity": _counter_values(_capacity_names(engines)),
                    "consumesCounters": [{"counterSet": f"gpu-{g}-counter-set", "counters": _counter_values(used)}],
                })
        out.append(_slice(f"{node}-{_NVIDIA}-gpu-{g}", node, _NVIDIA, _GPUS_PER_NODE + 1, {"devices": devices}))
    return out


def _mig_attributes(profile: str, gpu: int, parent: str, start: int, size: int) -> dict[str, dict[str, Any]]:
    return {"type": {"string": "mig"}, "profile": {"string": profile}, "parentIndex": {"int": gpu},
            "parentUUID": {"string": parent}, "placementStart": {"int": start}, "placementSize": {"int": size}}


def _capacity_names(counters: dict[str, Any]) -> dict[str, Any]:
    """Capacity names are camelCase where counter names are DNS labels (copy-engines -> copyEngines)."""
    out = {}
    for k, v in counters.items():
        head, *rest = k.split("-")
        out[head + "".join(p.capitalize() for p in rest)] = v
    return out


# --- dra-example ------------------------------------------------------------------------------------


def _example_slice(node: str, rng: random.Random) -> dict[str, Any]:
    devices = [{"name": f"gpu-{i}",
                "attributes": {"index": {"int": i}, "uuid": {"string": f"gpu-{_uuid(rng)}"},
                               "model": {"string": "LATEST-GPU-MODEL"}, "driverVersion": {"version": "1.0.0"}},
                "capacity": {"memory": {"value": "80Gi"}, "compute": {"value": "100"}}}
               for i in range(8)]
    return _slice(f"{node}-{_EXAMPLE}", node, _EXAMPLE, 1, {"devices": devices})


# --- nic --------------------------------------------------------------------------------------------


def _nic_slice(node: str, index: int) -> dict[str, Any]:
    devices = []
    for n in range(2):
        devices.append({
            "name": f"nic-{n}", "allowMultipleAllocations": True,
            "attributes": {"interfaceName": {"string": f"ens{5 + n}f0"},
                           "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{0x10 * n:02x}"},
                           "linkSpeedGbps": {"int": 200}, "rdma": {"bool": True},
                           "firmware": {"version": "28.41.1000"},
                           "mac": {"string": f"0c:42:a1:{index >> 8 & 0xff:02x}:{index & 0xff:02x}:{n:02x}"}},
            "capacity": {
                "bandwidth": {"value": "200G", "requestPolicy": {
                    "default": "1G", "validRange": {"min": "1G", "max": "100G", "step": "1G"}}},
                "queues": {"value": "64", "requestPolicy": {"default": "1", "validValues": ["1", "2", "4", "8", "16"]}},
            },
        })
    return _slice(f"{node}-{_NIC}", node, _NIC, 1, {"devices": devices})
