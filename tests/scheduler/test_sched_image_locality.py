"""ImageLocality: nodes holding the pod's images score higher, by size scaled by spread."""

from __future__ import annotations

import textwrap

from hypothesis import given
from hypothesis import strategies as st
from sched_builders import by_name, load

from dralloc.scheduler import Scheduler
from dralloc.scheduler.plugins.image_locality import (
    MAX_CONTAINER_THRESHOLD,
    MB,
    MIN_THRESHOLD,
    calculate_priority,
    normalized_image_name,
)

GB = 1024 * MB


def imaged_node(name: str, images: str = "[]") -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Node
        metadata: {{name: {name}}}
        status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}, images: {images}}}
        """)


def image_pod(name: str, *images: str) -> str:
    containers = ", ".join(f"{{name: c{i}, image: '{img}'}}" for i, img in enumerate(images))
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}, namespace: default}}
        spec: {{containers: [{containers}]}}
        """)


def test_names_without_a_tag_get_latest() -> None:
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("registry:5000/team/app") == "registry:5000/team/app:latest"
    assert normalized_image_name("nginx:1.25") == "nginx:1.25"
    assert normalized_image_name("docker.io/library/nginx@sha256:abc") == "docker.io/library/nginx@sha256:abc"


def test_priority_is_linear_between_the_thresholds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(MIN_THRESHOLD, 1) == 0
    assert calculate_priority(5 * GB, 1) == 100
    # halfway between 23 MiB and 1000 MiB for one image
    half = MIN_THRESHOLD + (MAX_CONTAINER_THRESHOLD - MIN_THRESHOLD) // 2
    assert calculate_priority(half, 1) == 50
    # two images: the ceiling doubles
    assert calculate_priority(1000 * MB, 2) == 100 * (1000 * MB - MIN_THRESHOLD) // (2000 * MB - MIN_THRESHOLD)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=1, max_value=20))
def test_priority_stays_in_range_and_grows_with_the_sum(total: int, images: int) -> None:
    score = calculate_priority(total, images)
    assert 0 <= score <= 100
    assert calculate_priority(total + 100 * MB, images) >= score


def test_the_node_holding_a_large_image_wins_a_tie(simulate) -> None:
    big = "[{names: ['registry.example/train:v1'], sizeBytes: 900000000}]"
    for seed in range(4):
        _, result = simulate(imaged_node("a"), imaged_node("b", big), imaged_node("c"),
                             image_pod("p", "registry.example/train:v1"), seed=seed)
        assert by_name(result)["p"].node == "b"


def test_an_untagged_container_image_matches_the_latest_tag_only(simulate) -> None:
    latest = "[{names: ['train:latest'], sizeBytes: 900000000}]"
    _, result = simulate(imaged_node("a"), imaged_node("b", latest), image_pod("p", "train"))
    assert by_name(result)["p"].node == "b"


def _scores(docs: list[str], pod_name: str) -> dict[str, int]:
    sched = Scheduler.from_objects(load(*docs))
    plugin = next(p for p in sched.framework.plugins if p.name == "ImageLocality")
    from dralloc.scheduler.framework import Cycle

    info = next(i for i in sched.pending if i.name == pod_name)
    cycle = Cycle(info, sched.snapshot)
    plugin.pre_filter(cycle)
    if plugin.pre_score(cycle, sched.snapshot.nodes) is not None:
        return {n.name: 0 for n in sched.snapshot.nodes}
    return {n.name: plugin.score(cycle, n) for n in sched.snapshot.nodes}


def test_spread_scales_the_image_size() -> None:
    image = "[{names: ['app:v1'], sizeBytes: 1048576000}]"  # 1000 MiB
    one_of_four = [imaged_node("a", image), imaged_node("b"), imaged_node("c"), imaged_node("d"),
                   image_pod("p", "app:v1")]
    # 1000 MiB × 1/4 = 250 MiB → 100 × (250 − 23) / (1000 − 23)
    assert _scores(one_of_four, "p") == {"a": 100 * (250 - 23) // 977, "b": 0, "c": 0, "d": 0}
    two_of_four = [imaged_node("a", image), imaged_node("b", image), imaged_node("c"), imaged_node("d"),
                   image_pod("p", "app:v1")]
    assert _scores(two_of_four, "p") == {"a": 100 * (500 - 23) // 977, "b": 100 * (500 - 23) // 977, "c": 0, "d": 0}


def test_every_container_counts_towards_the_ceiling() -> None:
    image = "[{names: ['app:v1'], sizeBytes: 1048576000}]"
    docs = [imaged_node("a", image), image_pod("p", "app:v1", "sidecar:v1")]
    # 1000 MiB held, ceiling 2000 MiB
    assert _scores(docs, "p")["a"] == 100 * (1000 - 23) // (2000 - 23)


def test_image_states_are_part_of_node_keys_and_grouping_keeps_answers() -> None:
    big = "[{names: ['app:v1'], sizeBytes: 600000000}]"
    docs = [imaged_node(f"n{i}", big if i % 3 == 0 else "[]") for i in range(9)]
    docs += [image_pod(f"p{i}", "app:v1") for i in range(6)] + [image_pod(f"q{i}", "other:v1") for i in range(3)]
    answers = []
    for group in (True, False):
        sched = Scheduler.from_objects(load(*docs), seed=1)
        sched.framework.group_nodes = group
        answers.append([(p.name, p.node) for p in sched.schedule().pods])
    assert answers[0] == answers[1]
    assert all(node in ("n0", "n3", "n6") for name, node in answers[0] if name.startswith("p"))
