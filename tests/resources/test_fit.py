"""Claim footprints (seed 000 examples, KEP-5517 worked examples) and node fit with scheduler messages."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dralloc.api.codec import decode, dump_yaml_stream
from dralloc.cli.main import main
from dralloc.resources import DeviceIndex, claim_footprint, node_fit, pod_requests
from dralloc.resources.fit import FastFit, check_fit, node_free, pod_footprint


def slice_(devices: list[dict[str, Any]], driver: str = "dra.example.com") -> Any:
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                   "spec": {"driver": driver, "nodeName": "n1", "pool": {"name": "n1", "resourceSliceCount": 1},
                            "devices": devices}})


def claim(results: list[dict[str, Any]], name: str = "c") -> Any:
    full = [{"request": "r", "driver": "dra.example.com", "pool": "n1", **r} for r in results]
    return decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"name": name, "namespace": "default"},
                   "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}},
                   "status": {"allocation": {"devices": {"results": full}}}})


def footprint(devices: list[dict[str, Any]], results: list[dict[str, Any]], containers: int = 1) -> dict[str, str]:
    return claim_footprint(claim(results), DeviceIndex([slice_(devices)]), containers).as_dict()


def test_seed_cpu_core_devices_times_multiplier() -> None:
    # "4 devices are allocated to the claim, 4 * 2 CPUs would be considered as allocated"
    devices = [{"name": f"core-{i}", "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "2"}}}
               for i in range(4)]
    assert footprint(devices, [{"device": f"core-{i}"} for i in range(4)]) == {"cpu": "8"}


def test_seed_gpu_host_memory_per_device() -> None:
    devices = [{"name": f"gpu-{i}", "nodeAllocatableResourceMappings": {"memory": {"allocationMultiplier": "2Gi"}}}
               for i in range(2)]
    assert footprint(devices, [{"device": "gpu-0"}, {"device": "gpu-1"}]) == {"memory": "4Gi"}


def test_seed_consumed_cores_times_multiplier() -> None:
    # "If a claim consumes 8 dra.example.com/cores, the CPU footprint is 8 * 2 = 16."
    devices = [{"name": "socket-0", "allowMultipleAllocations": True,
                "capacity": {"dra.example.com/cores": {"value": "64"}},
                "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "dra.example.com/cores",
                                                            "allocationMultiplier": "2"}}}]
    results = [{"device": "socket-0", "shareID": "7e2b6f2e-6a57-4c0e-9d55-2f1c1b0f6d0a",
                "consumedCapacity": {"dra.example.com/cores": "8"}}]
    assert footprint(devices, results) == {"cpu": "16"}


def test_seed_memory_capacity_without_multiplier_and_short_key() -> None:
    devices = [{"name": "mem-0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "128Gi"}},
                "nodeAllocatableResourceMappings": {"memory": {"capacityKey": "dra.example.com/memory"}}}]
    results = [{"device": "mem-0", "consumedCapacity": {"memory": "4Gi"}}]
    assert footprint(devices, results) == {"memory": "4Gi"}


def test_exclusive_device_consumes_its_whole_capacity() -> None:
    devices = [{"name": "numa-0", "capacity": {"cores": {"value": "32"}},
                "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "cores"}}}]
    assert footprint(devices, [{"device": "numa-0"}]) == {"cpu": "32"}


def test_137_mapping_and_overhead() -> None:
    devices = [{"name": "ccx-0", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "8"}}}},
               {"name": "ccx-1", "nodeAllocatableResources": {"cpu": {"mapping": {"deviceMultiplier": "8"}}}},
               {"name": "gpu-0", "nodeAllocatableResources": {"memory": {"overhead": {"perPod": "1Gi",
                                                                                      "perContainer": "512Mi"}}}}]
    assert footprint(devices, [{"device": "ccx-0"}, {"device": "ccx-1"}]) == {"cpu": "16"}
    assert footprint(devices, [{"device": "gpu-0"}], containers=2) == {"memory": "2Gi"}


def pod(name: str = "p", node: str | None = None, containers: list[dict[str, Any]] | None = None,
        **spec: Any) -> Any:
    body = {"containers": containers or [{"name": "c"}], **spec}
    if node:
        body["nodeName"] = node
    return decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                   "spec": body})


def ctr(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
        claims: list[str] | None = None, restart: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "resources": {}}
    if requests:
        c["resources"]["requests"] = requests
    if limits:
        c["resources"]["limits"] = limits
    if claims:
        c["resources"]["claims"] = [{"name": n} for n in claims]
    if restart:
        c["restartPolicy"] = restart
    return c


def node(allocatable: dict[str, str], name: str = "n1") -> Any:
    return decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                   "status": {"allocatable": allocatable}})


def test_pod_requests_like_the_scheduler() -> None:
    p = pod(containers=[ctr("a", {"cpu": "1"}), ctr("b", {"cpu": "500m", "memory": "1Gi"})],
            initContainers=[ctr("init", {"cpu": "2"}), ctr("sidecar", {"cpu": "100m"}, restart="Always"),
                            ctr("late-init", {"cpu": "1900m"})],
            overhead={"cpu": "50m"})
    # apps 1.5 + sidecar 0.1 = 1.6; init max(2, 1.9 + 0.1) = 2; max = 2; + overhead.
    assert pod_requests(p).as_dict() == {"cpu": "2050m", "memory": "1Gi"}


def test_limit_without_request_is_the_request() -> None:
    assert pod_requests(pod(containers=[ctr("a", limits={"cpu": "2"})])).as_dict() == {"cpu": "2"}


def test_pod_level_resources_replace_cpu_and_memory() -> None:
    p = pod(containers=[ctr("a", {"cpu": "1", "nvidia.com/gpu": "1"})], resources={"requests": {"cpu": "4"}})
    assert pod_requests(p).as_dict() == {"cpu": "4", "nvidia.com/gpu": "1"}


def test_fit_message_names_requested_and_free() -> None:
    running = pod("old", node="n1", containers=[ctr("a", {"cpu": "1500m"})])
    new = pod(containers=[ctr("a", {"cpu": "4", "memory": "1Gi"})])
    result = node_fit(new, node({"cpu": "4", "memory": "8Gi", "pods": "110"}), [running])
    assert not result.fits
    assert result.reasons == ["Insufficient cpu: requested 4, free 2500m"]


def test_fit_missing_extended_resource_and_too_many_pods() -> None:
    new = pod(containers=[ctr("a", {"nvidia.com/gpu": "1"})])
    result = node_fit(new, node({"cpu": "4", "pods": "1"}), [pod("old", node="n1")])
    assert result.reasons == ["Too many pods", "Insufficient nvidia.com/gpu: requested 1, free 0"]


def test_claims_are_added_to_the_pod_once() -> None:
    # KEP worked example D: claim A (cpu 4) used by two containers, claim B (cpu 2) by one; containers 1 + 2.
    s = slice_([{"name": "a", "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "4"}}},
                {"name": "b", "nodeAllocatableResourceMappings": {"cpu": {"allocationMultiplier": "2"}}}])
    ca, cb = claim([{"device": "a"}], "claim-a"), claim([{"device": "b"}], "claim-b")
    p = pod(containers=[ctr("c1", {"cpu": "1"}, claims=["ra", "rb"]), ctr("c2", {"cpu": "2"}, claims=["ra"])],
            resourceClaims=[{"name": "ra", "resourceClaimName": "claim-a"},
                            {"name": "rb", "resourceClaimName": "claim-b"}])
    ok = node_fit(p, node({"cpu": "9"}), [], [ca, cb], [s])
    assert ok.fits and ok.request.as_dict() == {"cpu": "9"}
    short = node_fit(p, node({"cpu": "8"}), [], [ca, cb], [s])
    assert short.reasons == ["Insufficient cpu: requested 9, free 8"]


@pytest.mark.parametrize("budget,fits", [("4", True), ("2", False)])
def test_pod_level_budget_must_hold_claims(budget: str, fits: bool) -> None:
    # KEP worked examples E and F.
    s = slice_([{"name": f"core-{i}", "nodeAllocatableResourceMappings": {"cpu": {}}} for i in range(2)])
    c = claim([{"device": "core-0"}, {"device": "core-1"}])
    p = pod(containers=[ctr("c1", {"cpu": "1"}, claims=["r"])], resources={"requests": {"cpu": budget}},
            resourceClaims=[{"name": "r", "resourceClaimName": "c"}])
    result = node_fit(p, node({"cpu": "16"}), [], [c], [s])
    assert result.fits is fits
    assert result.request.as_dict() == {"cpu": budget}
    if not fits:
        assert result.reasons == ["pod-level cpu request 2 is less than its containers' 1 plus claim resources 2"]


def test_fast_fit_agrees_with_check_fit() -> None:
    n = node({"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2", "pods": "10"})
    free = node_free(n)
    fast = FastFit("n1", free)
    for req in ({"cpu": "4"}, {"cpu": "4001m"}, {"memory": "8Gi", "nvidia.com/gpu": "3"}, {"example.com/x": "1"}):
        p = pod(containers=[ctr("a", req)])
        fp = pod_footprint(p)
        assert fast.fits(FastFit.prepare(fp.total)) == check_fit("n1", fp, free).fits, req


def test_fit_cli(tmp_path, capsys) -> None:
    objs = [node({"cpu": "4", "memory": "8Gi"}, "small"), node({"cpu": "16", "memory": "64Gi"}, "big"),
            pod(containers=[ctr("a", {"cpu": "8", "memory": "1Gi"})])]
    f = tmp_path / "cluster.yaml"
    f.write_text(dump_yaml_stream(objs))
    assert main(["fit", "-f", str(f)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["small: Insufficient cpu: requested 8, free 4", "big: fits"]
    assert main(["fit", "-f", str(f), "--node", "small", "-o", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["nodes"][0]["reasons"] == ["Insufficient cpu: requested 8, free 4"]
