"""Device attributes no selector or constraint names do not keep nodes apart — and never change an answer."""

from __future__ import annotations

import textwrap

import pytest
from sched_builders import load, node, pod

from dralloc.scheduler import Scheduler
from dralloc.scheduler.attributes import expression_attributes, referenced_attributes
from dralloc.simulator.loading import sort_objects


@pytest.mark.parametrize(("expression", "names"), [
    ('device.attributes["gpu.nvidia.com"].profile == "1g.10gb"', {("gpu.nvidia.com", "profile")}),
    ("device.attributes['a.b']['c'] > 1 && has(device.attributes[\"x\"].y)", {("a.b", "c"), ("x", "y")}),
    ('device.driver == "d"', set()),
])
def test_literal_attribute_references_are_collected(expression: str, names: set) -> None:
    assert expression_attributes(expression) == names


@pytest.mark.parametrize("expression", [
    'device.attributes["a"].exists(k, k == "x")',
    "device.attributes.size() > 0",
    'device.attributes[device.driver].model == "x"',
    '"attributes" == "x"',
])
def test_anything_else_that_touches_attributes_makes_every_attribute_count(expression: str) -> None:
    assert expression_attributes(expression) is None


def _cluster(nodes: int, pods: int, selector: str) -> list:
    docs = [textwrap.dedent(f"""\
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {{name: gpu}}
        spec: {{selectors: [{{cel: {{expression: '{selector}'}}}}]}}
        """), textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: t, namespace: default}
        spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, count: 2}}]}}}
        """)]
    for i in range(nodes):
        devices = ", ".join(
            f'{{name: gpu-{d}, attributes: {{uuid: {{string: "GPU-{i}-{d}"}}, model: {{string: "{"a" if d % 3 else "b"}"}}}}}}'
            for d in range(6))
        docs.append(node(f"n{i:03d}", cpu="64"))
        docs.append(textwrap.dedent(f"""\
            apiVersion: resource.k8s.io/v1
            kind: ResourceSlice
            metadata: {{name: n{i:03d}-gpu}}
            spec:
              driver: gpu.example.com
              nodeName: n{i:03d}
              pool: {{name: n{i:03d}, generation: 1, resourceSliceCount: 1}}
              devices: [{devices}]
            """))
    docs.extend(pod(f"p{i:03d}", claims="[{name: gpu, resourceClaimTemplateName: t}]") for i in range(pods))
    return load(*docs)


@pytest.mark.slow
@pytest.mark.parametrize("selector", [
    'device.attributes["gpu.example.com"].model == "a"',      # uuid unnamed: nodes share work
    'device.attributes["gpu.example.com"].uuid.startsWith("GPU-1")',  # uuid named: nodes stay apart
])
def test_ignoring_unnamed_attributes_gives_the_same_placements(selector: str) -> None:
    objs = _cluster(110, 200, selector)
    shared = Scheduler.from_objects(objs, seed=5)
    assert (shared.snapshot.attributes is not None) and len(shared.snapshot.dra._class_ids) >= 1
    o = sort_objects(objs, __import__("dralloc.controllers.names", fromlist=["NameGenerator"]).NameGenerator(5))
    plain = Scheduler(o.nodes, o.pods, slices=o.slices, classes=o.classes, templates=o.templates, seed=5,
                      group_nodes=False)
    assert shared.schedule().to_dict() == plain.schedule().to_dict()
    classes = len(shared.snapshot.dra._class_ids)
    assert classes == (1 if "model" in selector else 110)


def test_a_claim_that_names_a_new_attribute_stops_the_sharing() -> None:
    sched = Scheduler.from_objects(_cluster(3, 0, 'device.attributes["gpu.example.com"].model == "a"'))
    assert referenced_attributes([], []) == frozenset()
    extra = load(textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: c, namespace: default}
        spec:
          devices:
            requests:
            - name: gpu
              exactly:
                deviceClassName: gpu
                selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].uuid == "GPU-2-1"'}}]
        """))[0]
    sched.snapshot.set_claim(extra)
    result = sched.schedule_pod(load(pod("p", claims="[{name: gpu, resourceClaimName: c}]"))[0])
    assert result.node == "n002" and not sched.snapshot.dra.share
