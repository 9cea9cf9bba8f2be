"""The HTML report: what it computes (report_data) and what a browser shows (headless Chromium)."""

from __future__ import annotations

import functools
import io
import re
import shutil
import subprocess
import warnings
from html import escape
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api import codec
from dralloc.api.core_v1 import Pod
from dralloc.scheduler import PodResult, Scheduler, SimulationResult
from dralloc.simulator.report import counters_text, heat_colour, render_report, usage_text
from dralloc.simulator.report_data import (
    CounterLeft,
    HeatRow,
    Usage,
    build_report_data,
    fold_rows,
    pending_groups,
    reasons_of,
)
from dralloc.validation import validate

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "examples" / "cluster"

NODE = """
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "8", memory: 32Gi, pods: "10"}}}}
"""

CLASSES = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].type == "gpu"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig}
spec: {selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].type == "mig"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: anything}
spec: {}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: tpu}
spec: {selectors: [{cel: {expression: 'device.driver == "tpu.example.com"'}}]}
"""

# One GPU with two memory slices: the whole GPU takes both, each 1-slice partition one; profile "b" is a
# second shape of the slice-1 partition that nobody asks for.
SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}-counters}}
spec:
  driver: gpu.example.com
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 2}}
  sharedCounters:
  - name: gpu-0
    counters: {{slice-0: {{value: "1"}}, slice-1: {{value: "1"}}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}-gpu}}
spec:
  driver: gpu.example.com
  nodeName: {node}
  pool: {{name: {node}, generation: 1, resourceSliceCount: 2}}
  devices:
  - name: gpu-0
    attributes: {{type: {{string: gpu}}}}
    consumesCounters: [{{counterSet: gpu-0, counters: {{slice-0: {{value: "1"}}, slice-1: {{value: "1"}}}}}}]
  - name: gpu-0-a-0
    attributes: {{type: {{string: mig}}, profile: {{string: a}}}}
    consumesCounters: [{{counterSet: gpu-0, counters: {{slice-0: {{value: "1"}}}}}}]
  - name: gpu-0-a-1
    attributes: {{type: {{string: mig}}, profile: {{string: a}}}}
    consumesCounters: [{{counterSet: gpu-0, counters: {{slice-1: {{value: "1"}}}}}}]
  - name: gpu-0-b-1
    attributes: {{type: {{string: mig}}, profile: {{string: b}}}}
    consumesCounters: [{{counterSet: gpu-0, counters: {{slice-1: {{value: "1"}}}}}}]
"""

TEMPLATE = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: mig-a, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: mig
        exactly:
          deviceClassName: mig
          selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].profile == "a"'}}]
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
  resourceClaims: [{{name: mig, resourceClaimTemplateName: mig-a}}]
"""


def simulate(*docs: str) -> tuple[Scheduler, SimulationResult]:
    objs = codec.load(io.StringIO("\n---\n".join(docs)))
    assert [err for obj in objs for err in validate(obj)] == []
    sched = Scheduler.from_objects(objs)
    return sched, sched.schedule()


def one_node_cluster(pods: int) -> tuple[Scheduler, SimulationResult]:
    return simulate(NODE.format(name="n1"), CLASSES, SLICE.format(node="n1"), TEMPLATE,
                    *(POD.format(name=f"p{i}", cpu=1) for i in range(pods)))


# ---------------------------------------------------------------------------------------------- heat map
def test_heat_map_counts_allocated_of_total_devices_matching_each_class():
    sched, result = one_node_cluster(pods=1)
    hm = build_report_data(sched, result).heatmap
    assert hm.columns == ("cpu", "memory", "pods", "anything", "gpu", "mig")
    (row,) = hm.rows
    cells = dict(zip(hm.columns, row.cells))
    assert (cells["gpu"].used, cells["gpu"].total) == (0, 1)
    assert (cells["mig"].used, cells["mig"].total) == (1, 3)
    assert (cells["anything"].used, cells["anything"].total) == (1, 4)  # a class without selectors takes all
    assert (cells["cpu"].used, cells["cpu"].total, cells["cpu"].unit) == (1000, 8000, "milli")
    assert (cells["pods"].used, cells["pods"].total) == (1, 10)


def test_heat_map_counts_free_devices_whose_counters_are_used_up_as_blocked():
    sched, result = one_node_cluster(pods=1)
    hm = build_report_data(sched, result).heatmap
    cells = dict(zip(hm.columns, hm.rows[0].cells))
    assert cells["gpu"].blocked == 1  # the whole GPU needs slice-0, taken by the partition
    assert cells["mig"].blocked == 0


def test_a_class_that_matches_no_device_gets_no_column():
    sched, result = one_node_cluster(pods=0)
    assert "tpu" not in build_report_data(sched, result).heatmap.columns


def test_nodes_without_devices_have_empty_device_cells():
    sched, result = simulate(NODE.format(name="n1"), NODE.format(name="cpu-only"), CLASSES, SLICE.format(node="n1"))
    rows = {r.label: r for r in build_report_data(sched, result).heatmap.rows}
    assert rows["cpu-only"].cells[3:] == (None, None, None)
    assert rows["n1"].cells[3] is not None


def test_nodes_with_different_devices_are_counted_apart_and_identical_ones_alike():
    other = SLICE.format(node="n3").replace("{type: {string: gpu}}", "{type: {string: mig}}")
    sched, result = simulate(*(NODE.format(name=n) for n in ("n1", "n2", "n3")), CLASSES,
                             SLICE.format(node="n1"), SLICE.format(node="n2"), other)
    hm = build_report_data(sched, result).heatmap
    gpu, mig = hm.columns.index("gpu"), hm.columns.index("mig")
    counts = {r.label: tuple(c.total if c is not None else 0 for c in (r.cells[gpu], r.cells[mig]))
              for r in hm.rows}
    assert counts == {"n1": (1, 3), "n2": (1, 3), "n3": (0, 4)}


NETWORK_POOL = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {rack: a}}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fpga}
spec: {selectors: [{cel: {expression: 'device.driver == "fpga.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: rack-a}
spec:
  driver: fpga.example.com
  nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [a]}]}]}
  pool: {name: rack-a, generation: 1, resourceSliceCount: 1}
  devices: [{name: f0}, {name: f1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: fc, namespace: default}
spec: {devices: {requests: [{name: f, exactly: {deviceClassName: fpga}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c}]
  resourceClaims: [{name: f, resourceClaimName: fc}]
"""


def test_a_pool_that_is_not_node_local_gets_its_own_heat_map_row():
    sched, result = simulate(NETWORK_POOL)
    rows = {r.label: r for r in build_report_data(sched, result).heatmap.rows}
    assert set(rows) == {"n1", "pool fpga.example.com/rack-a"}
    pool = rows["pool fpga.example.com/rack-a"]
    assert pool.cells[:3] == (None, None, None) and (pool.cells[3].used, pool.cells[3].total) == (1, 2)
    assert rows["n1"].cells[3] is None


def test_an_empty_simulation_still_renders_a_page():
    sched = Scheduler.from_objects([])
    html = render_report(sched, sched.schedule())
    assert "Every pod was placed." in html and "No nodes." in html


def row(name: str, used: int, total: int = 8) -> HeatRow:
    return HeatRow(name, (name,), (Usage(used, total, "milli"), Usage(0, 4)))


def test_fold_rows_keeps_every_node_while_they_fit():
    rows = [row(f"n{i}", i) for i in range(5)]
    assert fold_rows(rows, 5) == (rows, "")


def test_fold_rows_merges_nodes_with_identical_usage_first():
    rows = [row(f"n{i}", 1) for i in range(100)] + [row("busy", 8)]
    folded, note = fold_rows(rows, 10)
    assert [r.label for r in folded] == ["100 identical nodes, each (n0, …)", "busy"]
    assert len(folded[0].nodes) == 100 and "identical" in note
    assert folded[0].cells == rows[0].cells  # one node's figures, not the sum


def test_fold_rows_then_sums_nodes_of_one_shape():
    rows = [row(f"n{i}", i % 9) for i in range(100)] + [row(f"big{i}", 1, total=64) for i in range(3)]
    folded, note = fold_rows(rows, 5)
    assert len(folded) == 2 and "shape" in note
    assert folded[0].cells[0] == Usage(sum(i % 9 for i in range(100)), 800, "milli")
    assert folded[1].cells[0] == Usage(3, 192, "milli")


def test_fold_rows_caps_many_shapes_with_a_last_row_that_sums_the_rest():
    rows = [row(f"n{i}", 0, total=i + 1) for i in range(50)]
    folded, note = fold_rows(rows, 10)
    assert len(folded) == 10
    assert folded[-1].label == "41 other nodes"
    assert folded[-1].cells[0].total == sum(range(10, 51))
    assert "41 nodes" in note


@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([4, 8, 16])), min_size=1, max_size=80),
       st.integers(2, 12))
def test_folding_keeps_every_node_once_and_every_total(spec: list[tuple[int, int]], max_rows: int):
    rows = [row(f"n{i}", used, total) for i, (used, total) in enumerate(spec)]
    folded, note = fold_rows(rows, max_rows)
    assert len(folded) <= max_rows
    assert sorted(n for r in folded for n in r.nodes) == sorted(r.nodes[0] for r in rows)
    per_node = not note or "one node's figures" in note
    cpu = [(len(r.nodes) if per_node else 1, r.cells[0]) for r in folded]
    assert all(c is not None for _, c in cpu)
    assert sum(w * c.total for w, c in cpu if c is not None) == sum(total for _, total in spec)
    assert sum(w * c.used for w, c in cpu if c is not None) == sum(used for used, _ in spec)


# ---------------------------------------------------------------------------------------------- fragmentation
def test_a_free_partition_that_no_request_matches_is_stranded():
    sched, result = one_node_cluster(pods=1)
    data = build_report_data(sched, result)
    by_device = {s.device: s for s in data.stranded}
    assert by_device["gpu-0-b-1"].reason == "no request"
    assert "gpu-0-a-1" not in by_device  # profile a is asked for and its counter is free


def test_a_free_partition_whose_counters_are_used_up_is_stranded():
    sched, result = one_node_cluster(pods=1)
    by_device = {s.device: s for s in build_report_data(sched, result).stranded}
    assert by_device["gpu-0"].reason == "counters used up"
    assert by_device["gpu-0"].detail == "gpu-0/slice-0"


def test_when_every_slice_is_taken_the_unrequested_partition_is_blocked_by_counters():
    sched, result = one_node_cluster(pods=2)
    by_device = {s.device: s for s in build_report_data(sched, result).stranded}
    assert set(by_device) == {"gpu-0", "gpu-0-b-1"}
    assert by_device["gpu-0-b-1"].reason == "counters used up"


def test_without_pods_asking_for_devices_every_free_partition_is_stranded():
    sched, result = one_node_cluster(pods=0)
    data = build_report_data(sched, result)
    assert data.requests == ()
    assert {s.device: s.reason for s in data.stranded} == dict.fromkeys(
        ("gpu-0", "gpu-0-a-0", "gpu-0-a-1", "gpu-0-b-1"), "no request")


def test_requests_are_a_class_and_the_request_selectors():
    sched, result = one_node_cluster(pods=1)
    data = build_report_data(sched, result)
    assert [r.describe() for r in data.requests] == ['mig where device.attributes["gpu.example.com"].profile == "a"']


def three_node_cluster() -> tuple[Scheduler, SimulationResult]:
    nodes = ("n1", "n2", "n3")
    return simulate(*(NODE.format(name=n) for n in nodes), CLASSES, *(SLICE.format(node=n) for n in nodes),
                    TEMPLATE, POD.format(name="p0", cpu=1))


def test_pools_with_the_same_free_devices_and_counters_share_a_row():
    sched, result = three_node_cluster()
    data = build_report_data(sched, result)
    (used,) = [p.node for p in data.pools if p.allocated]
    groups = data.pool_groups
    assert sorted(g.pools for g in groups) == sorted([(used,), tuple(n for n in ("n1", "n2", "n3") if n != used)])


def test_the_same_stranded_devices_on_several_nodes_form_one_group():
    sched, result = three_node_cluster()
    groups = build_report_data(sched, result).stranded_groups
    unrequested = sorted((g.devices, g.places) for g in groups if g.reason == "no request")
    (used,) = [p.node for p in result.pods]
    idle = tuple(n for n in ("n1", "n2", "n3") if n != used)
    assert unrequested == [(("gpu-0", "gpu-0-b-1"), idle), (("gpu-0-b-1",), (used,))]
    blocked = [g for g in groups if g.reason == "counters used up"]
    assert [(g.devices, g.places, g.counter_set) for g in blocked] == [(("gpu-0",), (used,), "gpu-0")]


# ---------------------------------------------------------------------------------------------- pending pods
def pending(name: str, message: str) -> PodResult:
    pod = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
                        "spec": {"containers": [{"name": "c"}]}})
    assert isinstance(pod, Pod)
    return PodResult(pod, None, message, status="unschedulable")


def test_pending_pods_with_the_same_message_form_one_group_largest_first():
    taint = "0/3 nodes are available: 3 node(s) had untolerated taint(s). preemption: 0/3 nodes are available: ..."
    cpu = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: ..."
    groups = pending_groups([pending("a", cpu), pending("b", taint), pending("c", taint)])
    assert [(g.count, g.reasons, g.pods) for g in groups] == [
        (2, "3 node(s) had untolerated taint(s)", ("ns/b", "ns/c")),
        (1, "3 Insufficient cpu", ("ns/a",)),
    ]
    assert groups[0].message == taint


def test_reasons_of_keeps_a_message_without_the_fit_error_prefix():
    assert reasons_of("Scheduling is blocked due to non-empty scheduling gates") == \
        "Scheduling is blocked due to non-empty scheduling gates"


def test_the_example_cluster_leaves_pods_pending_for_gpus_and_a_taint():
    sched, result = simulate_example()
    data = build_report_data(sched, result)
    reasons = {g.reasons: g.pods for g in data.pending}
    assert reasons["1 node(s) had untolerated taint(s), 2 Insufficient cpu, 3 cannot allocate all claims"] == \
        ("ml/train-1", "ml/train-2")
    assert any("untolerated taint" in r for r in reasons if "finance/report-builder-0" in reasons[r])
    assert data.summary.evicted == 1 and data.summary.pending == 3
    nic = next(p for p in data.pools if p.driver == "nic.example.com")
    assert [(c.device, c.capacity, c.available, c.total) for c in nic.capacity] == [("nic-0", "bandwidth", "80G", "200G")]


# ---------------------------------------------------------------------------------------------- rendering
def simulate_example() -> tuple[Scheduler, SimulationResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objs = codec.load(CLUSTER)
    sched = Scheduler.from_objects(objs)
    return sched, sched.schedule()


def test_counters_named_alike_are_summed_into_one_entry():
    counters = [CounterLeft("s", "memory", "80Gi", "40Gi")] + \
        [CounterLeft("s", f"memory-slice-{i}", "1", "1" if i > 3 else "0") for i in range(8)]
    assert counters_text(counters) == "memory 40Gi/80Gi, memory-slice-0…7 4/8"


def test_usage_text_speaks_cores_and_binary_sizes():
    assert usage_text(Usage(1500, 4000, "milli")) == "1.5/4"
    assert usage_text(Usage(3 * 2**30, 64 * 2**30, "bytes")) == "3Gi/64Gi"
    assert heat_colour(0) == "#e2f2e9" and heat_colour(1) == "#dc2626"


def test_input_strings_are_escaped():
    sched, result = one_node_cluster(pods=1)
    html = render_report(sched, result, title='<script>alert("x")</script>')
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "device.attributes[&quot;gpu.example.com&quot;]" in html


@functools.cache
def one_pod_simulation() -> tuple[Scheduler, SimulationResult]:
    return one_node_cluster(pods=1)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_any_text_in_a_scheduler_message_reaches_the_page_escaped(text: str):
    sched, result = one_pod_simulation()  # the message is overwritten by every example
    result.pods[0].status, result.pods[0].message = "unschedulable", f"0/1 nodes are available: {text}"
    html = render_report(sched, result)
    assert escape(text.split(". ", 1)[0].rstrip("."), quote=True) in html
    # Whatever the text, it adds no element to the page.
    result.pods[0].message = "0/1 nodes are available: x"
    assert _tags(html) == _tags(render_report(sched, result))


def _tags(html: str) -> int:
    from html.parser import HTMLParser

    class Counter(HTMLParser):
        count = 0

        def handle_starttag(self, tag: str, attrs: list) -> None:
            self.count += 1

    parser = Counter()
    parser.feed(html)
    return parser.count


def test_the_page_is_self_contained_and_byte_identical_across_runs():
    first = render_report(*simulate_example())
    second = render_report(*simulate_example())
    assert first == second
    assert not re.search(r"""(?:src|href)\s*=""", first)
    assert re.findall(r"https?://[^\"' ]+", first) == ["http://www.w3.org/2000/svg"]  # a namespace, not a fetch


def chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.skip("no chromium binary on the PATH (Debian: apt-get install chromium)")
    return exe


def browser(exe: str, tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", *args, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.slow
def test_the_report_of_the_example_cluster_renders_in_headless_chromium(tmp_path: Path):
    exe = chromium()
    page = tmp_path / "report.html"
    page.write_text(render_report(*simulate_example(), title="example cluster"), encoding="utf-8")
    dom = browser(exe, tmp_path, page, "--dump-dom").stdout
    assert "<title>example cluster</title>" in dom
    cards = dict(re.findall(r'data-key="([^"]+)"><div class="k">[^<]*</div><div class="v">([^<]*)</div>', dom))
    assert cards["Nodes"] == "6"
    assert cards["Pending"] == "3"
    assert cards["Evicted"] == "1"
    assert cards["Devices allocated"] == "9/53"
    assert "3 node(s) didn't match Pod's node affinity/selector, 3 node(s) had untolerated taint(s)" in \
        dom.replace("&#x27;", "'").replace("&#39;", "'")
    # MIG partitions: 4 notebooks and an inference pod on one GPU node, the other inference pod on the other.
    mig = re.findall(r'<g class="cell" data-row="(gpu-node-[ab])" data-column="mig.nvidia.com">.*?>([^<>]*)</text></g>',
                     dom)
    assert sorted(text for _, text in mig) == ["1/24", "5/24"]
    assert {node for node, _ in mig} == {"gpu-node-a", "gpu-node-b"}
    assert "<svg" in dom and "ml/train-1" in dom

