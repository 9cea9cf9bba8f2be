"""In-place pod resize (InPlacePodVerticalScaling, on by default since 1.35): once the kubelet reports a container's
resources, kube-scheduler counts the larger of the spec, the reported and the allocated requests, per resource; a
resize the kubelet found ``Infeasible`` counts what is reported and allocated only. Sidecars (restartable init
containers) are read from ``initContainerStatuses``; other init containers never are."""

from __future__ import annotations

from sched_builders import load, node, pod

from dralloc.api.core_v1 import Pod
from dralloc.resources.fit import pod_requests
from dralloc.scheduler.podinfo import nonzero_requests
from dralloc.simulator import Scheduler


def resized(name: str, spec_cpu: str, status_cpu: str, allocated_cpu: str = "", infeasible: bool = False) -> str:
    """A pod running on n1 whose container status reports other requests than its spec."""
    allocated = f", allocatedResources: {{cpu: \"{allocated_cpu}\"}}" if allocated_cpu else ""
    conditions = "\n  conditions: [{type: PodResizePending, status: 'True', reason: Infeasible}]" \
        if infeasible else ""
    return pod(name, cpu=spec_cpu, node_name="n1") + (
        "status:\n  phase: Running\n"
        f"  containerStatuses: [{{name: c, resources: {{requests: {{cpu: \"{status_cpu}\"}}}}{allocated}}}]"
        + conditions + "\n")


def outcome(*docs: str) -> dict[str, str]:
    """Each pending pod's node, or its message."""
    result = Scheduler.from_objects(load(*docs)).schedule()
    return {p.name: p.node or p.message for p in result.pods if p.status != "running"}


def test_a_resize_up_in_flight_holds_the_larger_reported_request() -> None:
    # r asks for 1 cpu in its spec, but the kubelet reports 3500m: a (1 cpu) no longer fits on the 4-cpu node.
    assert outcome(node("n1", cpu="4"), resized("r", "1", "3500m"), pod("a", cpu="1"))["a"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert outcome(node("n1", cpu="4"), resized("r", "1", "3"), pod("a", cpu="1")) == {"a": "n1"}


def test_the_allocated_request_counts_too() -> None:
    assert outcome(node("n1", cpu="4"), resized("r", "1", "1", allocated_cpu="3500m"), pod("a", cpu="1"))["a"] != "n1"


def test_a_resize_down_in_flight_still_holds_the_spec() -> None:
    # The spec says 3500m, the status already 500m: until the resize is done both sizes are held.
    assert outcome(node("n1", cpu="4"), resized("r", "3500m", "500m"), pod("a", cpu="1"))["a"] != "n1"


def test_an_infeasible_resize_counts_the_status_even_below_the_spec() -> None:
    # The spec asks for 3500m the node cannot give; the kubelet keeps running the pod at 500m.
    assert outcome(node("n1", cpu="4"), resized("r", "3500m", "500m", infeasible=True), pod("a", cpu="1")) == {
        "a": "n1"}


def test_a_status_without_resources_counts_the_spec() -> None:
    running = pod("r", cpu="3500m", node_name="n1") + "status:\n  phase: Running\n  containerStatuses: [{name: c}]\n"
    assert outcome(node("n1", cpu="4"), running, pod("a", cpu="1"))["a"] != "n1"


def _pod(spec: str, status: str) -> Pod:
    (obj,) = load(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: default}}\nspec:\n{spec}\n"
                  f"status:\n{status}\n")
    assert isinstance(obj, Pod)
    return obj


def test_a_sidecar_is_read_from_the_init_container_statuses_and_a_plain_init_container_never() -> None:
    spec = ("  initContainers:\n"
            "  - {name: side, restartPolicy: Always, resources: {requests: {cpu: 100m}}}\n"
            "  - {name: setup, resources: {requests: {cpu: 200m}}}\n"
            "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]")
    sidecar_grown = "  initContainerStatuses: [{name: side, resources: {requests: {cpu: 1}}}]"
    # while setup runs, the sidecar started before it runs too: 200m + 1 = 1200m, above app 100m + sidecar 1
    assert str(pod_requests(_pod(spec, sidecar_grown))) == "cpu=1200m"
    setup_grown = "  initContainerStatuses: [{name: setup, resources: {requests: {cpu: 4}}}]"
    # the plain init container's status is not read: max(100m + 100m, 200m + 100m) = 300m
    assert str(pod_requests(_pod(spec, setup_grown))) == "cpu=300m"


def test_the_scoring_default_fills_only_what_neither_the_spec_nor_the_status_requests() -> None:
    # No cpu in the spec, 50m reported: NonZeroRequested counts 50m, not the 100m default; memory takes the
    # 200Mi default as nothing requests it.
    spec = "  containers: [{name: c}]"
    reported = "  containerStatuses: [{name: c, resources: {requests: {cpu: 50m}}}]"
    assert nonzero_requests(_pod(spec, reported)) == (50, 200 * 1024 * 1024)
    assert nonzero_requests(_pod(spec, "  phase: Running")) == (100, 200 * 1024 * 1024)
