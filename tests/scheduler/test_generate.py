"""Synthetic clusters: deterministic, valid, and shaped so the allocator sees what real drivers publish."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from dralloc.allocator import Allocator
from dralloc.api import codec
from dralloc.api.resource_v1 import ResourceClaimStatus
from dralloc.cli.main import main
from dralloc.simulator.generate import PROFILES, generate_cluster
from dralloc.validation import validate


def claim(name: str, device_class: str, selector: str | None = None, count: int = 1):
    exactly = {"deviceClassName": device_class, "count": count}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return codec.decode({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": name, "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}})


@pytest.mark.parametrize("profile", PROFILES)
def test_every_generated_object_is_valid(profile) -> None:
    objects = generate_cluster(2, profile)
    assert [e for o in objects for e in validate(o)] == []
    assert sum(type(o).__name__ == "Node" for o in objects) == 2


def test_the_same_arguments_print_the_same_bytes_and_the_seed_changes_uuids(capsys) -> None:
    outputs = []
    for seed in ("1", "1", "2"):
        assert main(["generate", "cluster", "--nodes", "2", "--profile", "dra-example", "--seed", seed]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] != outputs[2]


def test_an_h100_node_publishes_152_devices_over_8_counter_sets() -> None:
    objects = generate_cluster(1, "gpu-h100")
    slices = [o for o in objects if type(o).__name__ == "ResourceSlice"]
    assert len(slices) == 9 and all(s.spec.pool.resource_slice_count == 9 for s in slices)
    assert sum(len(s.spec.devices or []) for s in slices) == 8 * 19
    [counters] = [s for s in slices if s.spec.shared_counters]
    assert len(counters.spec.shared_counters) == 8


def test_mig_partitions_share_the_gpus_counters_with_the_full_gpu() -> None:
    objects = generate_cluster(1, "gpu-h100")
    node = next(o for o in objects if type(o).__name__ == "Node")
    slices = [o for o in objects if type(o).__name__ == "ResourceSlice"]
    classes = [o for o in objects if type(o).__name__ == "DeviceClass"]
    alloc = Allocator(slices, classes)
    gpu0 = 'device.attributes["gpu.nvidia.com"].parentIndex == 0'
    seven = claim("seven", "mig.nvidia.com", gpu0 + ' && device.attributes["gpu.nvidia.com"].profile == "1g.10gb"',
                  count=7)
    result = alloc.allocate(node, [seven])
    assert result.status == "allocated"
    alloc.claim_allocated(replace(seven, status=ResourceClaimStatus(allocation=result.results[0])))
    # Seven 1g.10gb slices use 7 of gpu-0's 8 memory slices: no 2g.20gb fits there any more, nor the full GPU.
    two_g = claim("two-g", "mig.nvidia.com", gpu0 + ' && device.attributes["gpu.nvidia.com"].profile == "2g.20gb"')
    assert alloc.allocate(node, [two_g]).status == "unschedulable"
    full = claim("full", "gpu.nvidia.com", 'device.attributes["gpu.nvidia.com"].index == 0')
    assert alloc.allocate(node, [full]).status == "unschedulable"
    other = claim("other", "gpu.nvidia.com", 'device.attributes["gpu.nvidia.com"].index == 1')
    assert alloc.allocate(node, [other]).status == "allocated"


def test_nic_bandwidth_is_consumable_by_many_claims() -> None:
    objects = generate_cluster(1, "nic")
    node = next(o for o in objects if type(o).__name__ == "Node")
    slices = [o for o in objects if type(o).__name__ == "ResourceSlice"]
    assert all(d.allow_multiple_allocations for s in slices for d in s.spec.devices)
    assert str(slices[0].spec.devices[0].capacity["bandwidth"].value) == "200G"
    alloc = Allocator(slices, [o for o in objects if type(o).__name__ == "DeviceClass"])
    assert alloc.allocate(node, [claim("a", "nic.example.com")]).status == "allocated"


def test_generate_rejects_a_negative_node_count(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "cluster", "--nodes", "-3", "--profile", "nic"])
    assert exit_info.value.code == 2
    assert "must not be negative" in capsys.readouterr().err
