"""Clusters shaped like kube-scheduler's scheduler_perf DRA workloads, built in memory for
``dralloc bench schedule`` (test/integration/scheduler_perf/dra/performance-config.yaml).

The driver is scheduler_perf's: one ResourceSlice per node, pool = node name, devices ``instance-<i>``,
driver ``test-driver.cdi.k8s.io``, one DeviceClass ``test-class`` selecting it.
"""

from __future__ import annotations

from typing import Any

from dralloc.api.core_v1 import (
    Container,
    Node,
    NodeStatus,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceClaimReference,
    ResourceRequirements,
)
from dralloc.api.meta import ObjectMeta
from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import (
    CELDeviceSelector,
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequest,
    DeviceSelector,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceClaimTemplateSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
NAMESPACE = "test"


def _nodes(count: int) -> list[Node]:
    alloc = {"cpu": Quantity("32"), "memory": Quantity("128Gi"), "pods": Quantity("110")}
    return [Node(metadata=ObjectMeta(name=f"node-{i:05d}", labels={"kubernetes.io/hostname": f"node-{i:05d}"}),
                 status=NodeStatus(capacity=alloc, allocatable=alloc)) for i in range(count)]


def _slices(count: int, devices: int) -> list[ResourceSlice]:
    return [ResourceSlice(metadata=ObjectMeta(name=f"node-{i:05d}-{DRIVER}"), spec=ResourceSliceSpec(
        driver=DRIVER, node_name=f"node-{i:05d}", pool=ResourcePool(name=f"node-{i:05d}", generation=1,
                                                                   resource_slice_count=1),
        devices=[Device(name=f"instance-{d}") for d in range(devices)])) for i in range(count)]


def _class() -> DeviceClass:
    return DeviceClass(metadata=ObjectMeta(name=CLASS), spec=DeviceClassSpec(selectors=[DeviceSelector(
        cel=CELDeviceSelector(expression=f'device.driver == "{DRIVER}"'))]))


def _claim_spec() -> ResourceClaimSpec:
    return ResourceClaimSpec(devices=DeviceClaim(requests=[DeviceRequest(
        name="req-0", exactly=ExactDeviceRequest(device_class_name=CLASS))]))


def _pod(name: str, claim: PodResourceClaim) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=NAMESPACE), spec=PodSpec(
        containers=[Container(name="pause", image="registry.k8s.io/pause:3.10",
                              resources=ResourceRequirements(claims=[ResourceClaimReference(name=claim.name)]))],
        resource_claims=[claim]))


def claim_template(nodes: int = 500, devices: int = 10, pods: int = 5000) -> list[Any]:
    """SchedulingWithResourceClaimTemplate: every pod gets its own claim from one template."""
    template = ResourceClaimTemplate(metadata=ObjectMeta(name="test-claim-template", namespace=NAMESPACE),
                                     spec=ResourceClaimTemplateSpec(spec=_claim_spec()))
    ref = PodResourceClaim(name="resource", resource_claim_template_name="test-claim-template")
    return [*_nodes(nodes), *_slices(nodes, devices), _class(), template,
            *(_pod(f"pod-{i:05d}", ref) for i in range(pods))]


def shared_claims(nodes: int = 500, devices: int = 2, pods: int = 5000, pods_per_claim: int = 5) -> list[Any]:
    """SchedulingWithResourceClaim: claims shared by ``pods_per_claim`` pods each."""
    claims = [ResourceClaim(metadata=ObjectMeta(name=f"claim-{i:05d}", namespace=NAMESPACE), spec=_claim_spec())
              for i in range((pods + pods_per_claim - 1) // pods_per_claim)]
    out: list[Any] = [*_nodes(nodes), *_slices(nodes, devices), _class(), *claims]
    for i in range(pods):
        ref = PodResourceClaim(name="resource", resource_claim_name=f"claim-{i // pods_per_claim:05d}")
        out.append(_pod(f"pod-{i:05d}", ref))
    return out


def steady_state(nodes: int = 500, devices: int = 10, fill: str = "empty", pods: int = 100) -> list[Any]:
    """SteadyStateClusterResourceClaimTemplate: a cluster pre-filled to 0 %, 50 % or full minus ``pods``
    devices (running pods holding allocated claims), then ``pods`` new pods with template claims."""
    from dralloc.api.resource_v1 import (
        AllocationResult,
        DeviceAllocationResult,
        DeviceRequestAllocationResult,
        ResourceClaimConsumerReference,
        ResourceClaimStatus,
    )

    total = nodes * devices
    used = {"empty": 0, "half": total // 2, "full": total - pods}[fill]
    out = claim_template(nodes, devices, 0)
    for k in range(used):
        node_i, dev = divmod(k, devices)
        node = f"node-{node_i:05d}"
        name = f"running-{k:06d}"
        uid = f"uid-{name}"
        claim = ResourceClaim(metadata=ObjectMeta(name=f"{name}-resource", namespace=NAMESPACE), spec=_claim_spec(),
                              status=ResourceClaimStatus(
                                  allocation=AllocationResult(devices=DeviceAllocationResult(results=[
                                      DeviceRequestAllocationResult(request="req-0", driver=DRIVER, pool=node,
                                                                    device=f"instance-{dev}")])),
                                  reserved_for=[ResourceClaimConsumerReference(resource="pods", name=name, uid=uid)]))
        pod = _pod(name, PodResourceClaim(name="resource", resource_claim_name=claim.metadata.name))
        pod.metadata.uid = uid
        pod.spec.node_name = node
        out.extend([claim, pod])
    ref = PodResourceClaim(name="resource", resource_claim_template_name="test-claim-template")
    out.extend(_pod(f"pod-{i:05d}", ref) for i in range(pods))
    return out


def h100_mig(nodes: int = 500, pods: int = 2000) -> list[Any]:
    """A ``dralloc generate cluster --profile gpu-h100`` cluster (8 H100 per node, every MIG placement on
    shared counters, per-GPU UUIDs) and pods asking for MIG profiles and whole GPUs in a fixed mix."""
    from dralloc.simulator.generate import generate_cluster

    mix = [("mig.nvidia.com", "1g.10gb")] * 4 + [("mig.nvidia.com", "2g.20gb")] * 2 + \
        [("mig.nvidia.com", "3g.40gb"), ("gpu.nvidia.com", None)]
    objs = generate_cluster(nodes, "gpu-h100")
    templates = []
    for cls, profile in dict.fromkeys(mix):
        selectors = [DeviceSelector(cel=CELDeviceSelector(
            expression=f'device.attributes["gpu.nvidia.com"].profile == "{profile}"'))] if profile else None
        name = f"{cls.split('.')[0]}-{(profile or 'full').replace('.', '-')}"
        templates.append(ResourceClaimTemplate(metadata=ObjectMeta(name=name, namespace=NAMESPACE),
                                               spec=ResourceClaimTemplateSpec(spec=ResourceClaimSpec(
                                                   devices=DeviceClaim(requests=[DeviceRequest(
                                                       name="gpu", exactly=ExactDeviceRequest(
                                                           device_class_name=cls, selectors=selectors))])))))
    names = [t.metadata.name or "" for t in templates]
    order = {key: names[i] for i, key in enumerate(dict.fromkeys(mix))}
    out: list[Any] = [*objs, *templates]
    for i in range(pods):
        ref = PodResourceClaim(name="resource", resource_claim_template_name=order[mix[i % len(mix)]])
        out.append(_pod(f"pod-{i:05d}", ref))
    return out
