"""The report's topology view: per rack, free devices and the largest gang of a PodGroup's shape that fits."""

from __future__ import annotations

import io
import json

from gang_builders import ALL_ON, members, pod_group, rack_nodes
from sched_builders import GPU_CLASS, GPU_TEMPLATE, gpu_slice

from dralloc.api import codec
from dralloc.scheduler.features import FeatureGates
from dralloc.simulator import Simulator
from dralloc.simulator.report import render_report
from dralloc.simulator.report_topology import topology_rows


def gpu_members(group: str, count: int) -> str:
    return members(group, count).replace(
        "  containers:", "  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]\n  containers:")


def cluster() -> Simulator:
    # rack-0: 2 nodes x 2 GPUs, rack-1: 2 nodes x 2 GPUs; a 3-GPU gang takes 3 GPUs of one rack
    slices = [gpu_slice(f"r{r}-n{i}", 2) for r in range(2) for i in range(2)]
    docs = [rack_nodes(2, 2, cpu="64"), *slices, GPU_CLASS, GPU_TEMPLATE, pod_group("job", 3, rack=True),
            gpu_members("job", 3)]
    objects = codec.load(io.StringIO("---\n".join(docs)))
    return Simulator.from_objects(objects, feature_gates=FeatureGates.parse(ALL_ON))


def test_each_rack_shows_its_free_devices_and_the_largest_gang_that_fits() -> None:
    sim = cluster()
    result = sim.schedule()
    domain = result.pod_groups[0].domain
    rows = {r.domain: r for r in topology_rows(sim, result, "example.com/rack")}
    assert set(rows) == {"rack-0", "rack-1"}
    used, other = rows[domain or ""], rows[({"rack-0", "rack-1"} - {domain}).pop()]
    assert (used.devices_free, used.devices_total, used.fits) == (1, 4, (("default/job", 1),))
    assert (other.devices_free, other.fits) == (4, (("default/job", 4),))


def test_the_view_leaves_the_simulation_as_it_was() -> None:
    sim = cluster()
    result = sim.schedule()
    before = json.dumps(result.to_dict(), sort_keys=True)
    html = render_report(sim, result, topology_key="example.com/rack")
    assert 'id="topology"' in html and "Largest gang like default/job" in html
    assert json.dumps(sim.result().to_dict(), sort_keys=True) == before
    assert len(sim.snapshot.claims) == 3


def test_each_pod_group_is_one_row_of_the_report() -> None:
    sim = cluster()
    result = sim.schedule()
    html = render_report(sim, result)
    assert 'id="pod-groups"' in html and "<td>default/job</td><td>placed</td>" in html
    assert 'id="topology"' not in html
