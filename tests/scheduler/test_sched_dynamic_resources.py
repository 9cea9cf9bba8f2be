"""DynamicResources in the scheduler: claims, templates, shared claims, allocation, extended resources,
node-allocatable footprints."""

from __future__ import annotations

import textwrap

import pytest
from sched_builders import GPU_CLASS, GPU_TEMPLATE, TEMPLATE_CLAIM, by_name, gpu_slice, node, pod

CANNOT = "cannot allocate all claims"


def claim(name: str, allocated_on: str | None = None, reserved: int = 0) -> str:
    text = textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {{name: {name}, namespace: default}}
        spec:
          devices:
            requests: [{{name: gpu, exactly: {{deviceClassName: gpu}}}}]
        """)
    if allocated_on:
        refs = ", ".join(f"{{resource: pods, name: u{i}, uid: uid-{i}}}" for i in range(reserved))
        text += textwrap.dedent(f"""\
            status:
              reservedFor: [{refs}]
              allocation:
                devices:
                  results: [{{request: gpu, driver: gpu.example.com, pool: {allocated_on}, device: gpu-0}}]
                nodeSelector:
                  nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [{allocated_on}]}}]}}]
            """)
    return text


def test_template_claims_are_generated_owned_allocated_and_reserved(simulate) -> None:
    _, result = simulate(node("n1"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE,
                             pod("worker", claims=TEMPLATE_CLAIM))
    p = by_name(result)["worker"]
    assert p.node == "n1"
    (c,) = p.claims
    assert c.metadata.name.startswith("worker-gpu-") and len(c.metadata.name) == len("worker-gpu-") + 5
    assert c.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"
    owner = c.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller, owner.block_owner_deletion) == ("Pod", "worker", True, True)
    assert [r.name for r in c.status.reserved_for] == ["worker"]
    assert c.status.allocation.devices.results[0].device == "gpu-0"
    assert "resource.kubernetes.io/delete-protection" in c.metadata.finalizers
    statuses = p.pod.status.resource_claim_statuses
    assert [(s.name, s.resource_claim_name) for s in statuses] == [("gpu", c.metadata.name)]


def test_devices_run_out_with_upstreams_message(simulate) -> None:
    _, result = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), GPU_CLASS, GPU_TEMPLATE,
                         pod("a", claims=TEMPLATE_CLAIM), pod("b", claims=TEMPLATE_CLAIM))
    assert by_name(result)["b"].message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_a_missing_claim_keeps_the_pod_out_of_the_queue(simulate) -> None:
    """DynamicResources' PreEnqueue: a pod whose claim does not exist is never tried (no FitError), it waits."""
    _, result = simulate(node("n1"), GPU_CLASS, pod("p", claims="[{name: gpu, resourceClaimName: nope}]"))
    p = by_name(result)["p"]
    assert (p.status, p.attempts, p.message) == ("unschedulable", 0, 'resourceclaim.resource.k8s.io "nope" not found')


def test_a_missing_device_class_is_named(simulate) -> None:
    _, result = simulate(node("n1"), gpu_slice("n1"), claim("c"), pod("p", claims="[{name: gpu, resourceClaimName: c}]"))
    assert by_name(result)["p"].message.startswith(
        "0/1 nodes are available: request gpu: device class gpu does not exist.")


def test_a_shared_claim_is_allocated_once_and_reserved_for_every_pod(simulate) -> None:
    shared = "[{name: gpu, resourceClaimName: shared}]"
    _, result = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), GPU_CLASS, claim("shared"),
                         pod("a", claims=shared), pod("b", claims=shared))
    pods = by_name(result)
    assert pods["a"].node == pods["b"].node == "n1"
    (c,) = pods["b"].claims
    assert [r.name for r in c.status.reserved_for] == ["a", "b"]


def test_an_allocated_claim_restricts_the_node(simulate) -> None:
    docs = [node("n1"), node("n2"), gpu_slice("n1"), gpu_slice("n2"), GPU_CLASS]
    _, result = simulate(*docs, claim("on-n2", allocated_on="n2", reserved=1),
                         pod("p", claims="[{name: gpu, resourceClaimName: on-n2}]"))
    assert by_name(result)["p"].node == "n2"


def test_a_claim_takes_its_256th_consumer_and_kube_apiserver_refuses_the_257th_at_prebind(simulate) -> None:
    # 1.36's PreFilter takes a claim whatever its reservedFor holds (CanBeReserved is always true); PreBind's
    # status write of one more consumer is what fails, with kube-apiserver's validation error
    docs = [node("n1"), node("n2"), gpu_slice("n1"), gpu_slice("n2"), GPU_CLASS]
    _, result = simulate(*docs, claim("room", allocated_on="n2", reserved=255),
                         pod("p", claims="[{name: gpu, resourceClaimName: room}]"))
    p = by_name(result)["p"]
    assert p.node == "n2"
    assert len(p.claims[0].status.reserved_for) == 256 and p.claims[0].status.reserved_for[-1].name == "p"
    _, result = simulate(*docs, claim("full", allocated_on="n2", reserved=256),
                         pod("p", claims="[{name: gpu, resourceClaimName: full}]"))
    p = by_name(result)["p"]
    assert (p.status, p.node) == ("error", None)
    assert p.message == ('running PreBind plugin "DynamicResources": add reservation to claim default/full: '
                         'ResourceClaim.resource.k8s.io "full" is invalid: status.reservedFor: Too many: 257: '
                         'must have at most 256 items')
    # the claim is left as it was
    (full,) = [c for c in result.claims if c.metadata.name == "full"]
    assert len(full.status.reserved_for) == 256 and "p" not in {r.name for r in full.status.reserved_for}


def test_a_pod_already_among_a_full_claims_consumers_is_not_refused(simulate) -> None:
    full = claim("full", allocated_on="n1", reserved=256).replace("name: u0, uid: uid-0", "name: p, uid: uid-p")
    _, result = simulate(node("n1"), gpu_slice("n1"), GPU_CLASS, full,
                         pod("p", claims="[{name: gpu, resourceClaimName: full}]").replace(
                             "name: p,", "name: p, uid: uid-p,"))
    assert by_name(result)["p"].node == "n1"


def test_an_allocated_claim_that_fits_no_node_gets_deallocated_and_the_pod_retried(simulate) -> None:
    # The claim is allocated on n2, which cannot take the pod (cpu); nobody uses the claim, so PostFilter
    # deallocates it and the next attempt allocates it on n1.
    docs = [node("n1"), node("n2", cpu="1"), gpu_slice("n1"), gpu_slice("n2"), GPU_CLASS,
            claim("stale", allocated_on="n2"), pod("p", cpu="2", claims="[{name: gpu, resourceClaimName: stale}]")]
    _, result = simulate(*docs)
    p = by_name(result)["p"]
    assert p.node == "n1" and p.attempts == 2
    assert p.claims[0].status.allocation.devices.results[0].pool == "n1"


def test_an_allocated_claim_whose_binding_failed_is_unavailable_everywhere_and_gets_deallocated(simulate) -> None:
    # The device's failure condition is True in the claim's device status: Filter takes the claim for
    # unavailable on every node (even the one its allocation names), PostFilter deallocates it, and the next
    # attempt allocates it again.
    failed = claim("attach", allocated_on="n1").replace(
        "device: gpu-0}]", "device: gpu-0, bindingConditions: [Attached], bindingFailureConditions: [Failed]}]")
    failed += textwrap.indent(textwrap.dedent("""\
        devices:
        - {driver: gpu.example.com, pool: n1, device: gpu-0,
           conditions: [{type: Failed, status: "True", reason: Broken, message: m,
                         lastTransitionTime: "2026-11-01T00:00:00Z"}]}
        """), "  ")
    docs = [node("n1"), gpu_slice("n1"), GPU_CLASS, pod("p", claims="[{name: gpu, resourceClaimName: attach}]")]
    p = by_name(simulate(*docs, failed)[1])["p"]
    assert p.node == "n1" and p.attempts == 2
    assert p.claims[0].status.devices is None  # the device status went with the allocation
    ready = failed.replace("type: Failed", "type: Attached")  # the binding condition is met instead
    p = by_name(simulate(*docs, ready)[1])["p"]
    assert p.node == "n1" and p.attempts == 1
    p = by_name(simulate(*docs, failed, gates="DRADeviceBindingConditions=false")[1])["p"]
    assert p.attempts == 1  # without the gate nothing reads the conditions


def test_extended_resources_backed_by_dra_get_a_special_claim(simulate) -> None:
    cls = GPU_CLASS.replace("spec: {selectors:", "spec: {extendedResourceName: example.com/gpu, selectors:")
    want = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, "
            "resources: {requests: {example.com/gpu: 2}, limits: {example.com/gpu: 2}}}]}\n")
    _, result = simulate(node("n1"), gpu_slice("n1", 2), cls, want)
    p = by_name(result)["p"]
    assert p.node == "n1"
    (c,) = p.claims
    assert c.metadata.name.startswith("p-extended-resources-")
    assert c.metadata.annotations == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert [r.request for r in c.status.allocation.devices.results] == ["container-0-request-0"] * 2
    # the pod's status names the claim and which request serves which container's resource, for the kubelet
    assert p.pod.status.extended_resource_claim_status == {
        "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": c.metadata.name}
    # Without the gate the resource is an ordinary extended resource the node does not have.
    _, result = simulate(node("n1"), gpu_slice("n1", 2), cls, want, gates="DRAExtendedResource=false")
    assert by_name(result)["p"].message.startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")


def test_node_allocatable_footprint_counts_only_with_the_gate(simulate) -> None:
    cpu_slice = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceSlice
        metadata: {name: n1-cpu}
        spec:
          driver: gpu.example.com
          nodeName: n1
          pool: {name: n1, generation: 1, resourceSliceCount: 1}
          devices:
          - name: gpu-0
            nodeAllocatableResourceMappings: {cpu: {allocationMultiplier: "3"}}
        """)
    docs = [node("n1", cpu="4"), cpu_slice, GPU_CLASS, GPU_TEMPLATE, pod("p", cpu="2", claims=TEMPLATE_CLAIM)]
    _, result = simulate(*docs)
    assert by_name(result)["p"].node == "n1"
    _, result = simulate(*docs, gates="DRANodeAllocatableResources=true")
    assert by_name(result)["p"].message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


@pytest.mark.slow
def test_a_node_where_upstreams_allocator_would_time_out_fails_the_attempt_with_its_error(simulate) -> None:
    # the claims of generated hard input 385: upstream's search walks far more than 10 s of steps on this node,
    # and since 1.36 the timeout is an Error, which fails the scheduling attempt (retried with backoff)
    import sys
    from pathlib import Path

    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "allocator"))
    from hard_inputs import hard_case_dicts

    docs = [yaml.safe_dump(o) for o in hard_case_dicts(385) if o["kind"] != "Node"]
    claims = "[{name: c0, resourceClaimName: claim-0}, {name: c1, resourceClaimName: claim-1}]"
    _, result = simulate(node("node-0"), *docs, pod("p", claims=claims))
    assert by_name(result)["p"].message == (
        'running "DynamicResources" filter plugin: node node-0: timed out trying to allocate devices')


@pytest.mark.slow
@pytest.mark.parametrize(("args", "gates", "placed"), [
    ({}, "", False),  # the default filterTimeout, 10 s
    ({"filterTimeout": "60s"}, "", False),
    ({"filterTimeout": "0s"}, "", True),  # 0: no timeout, as kube-scheduler reads it
    ({}, "DRASchedulerFilterTimeout=false", True),
])
def test_the_filter_timeout_comes_from_the_dynamic_resources_args(args, gates, placed) -> None:
    # generated hard input 245: dralloc's search finds the allocation, but upstream's would walk well over a
    # minute of steps first (its proof counts more than 44 million), so with a timeout the node fails with it
    import sys
    from pathlib import Path

    import yaml

    from dralloc.scheduler.config import config_from_dict
    from dralloc.scheduler.features import FeatureGates
    from dralloc.simulator import Scheduler

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "allocator"))
    from hard_inputs import hard_case_dicts
    from sched_builders import load

    objs = hard_case_dicts(245)
    claims = ", ".join(f"{{name: c{i}, resourceClaimName: {o['metadata']['name']}}}"
                       for i, o in enumerate(o for o in objs if o["kind"] == "ResourceClaim" and "status" not in o))
    docs = [node("node-0"), *(yaml.safe_dump(o) for o in objs if o["kind"] != "Node"), pod("p", claims=f"[{claims}]")]
    feature_gates = FeatureGates.parse(gates)
    profile = {"schedulerName": "default-scheduler",
               "pluginConfig": [{"name": "DynamicResources", "args": args}] if args else []}
    config = config_from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                               "profiles": [profile]}, feature_gates)
    result = Scheduler.from_objects(load(*docs), feature_gates=feature_gates, config=config).schedule()
    p = by_name(result)["p"]
    if placed:
        assert p.node == "node-0", p.message
    else:
        assert p.message == ('running "DynamicResources" filter plugin: node node-0: timed out trying to allocate '
                             'devices')
