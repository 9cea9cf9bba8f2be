"""The endpoints controllers' index of pods by label: a selector's pods found from the index are those a walk
over every pod of the namespace finds, however pods come, change their labels and go."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dralloc.server.controllers.endpoints_index import PodsByLabel, SelectorKey

NAMESPACES = ("a", "b")
label_sets = st.dictionaries(st.sampled_from(("app", "tier")), st.sampled_from(("x", "y")), max_size=2)
selectors = label_sets.map(lambda labels: tuple(sorted(labels.items())))
# (namespace, pod name, labels or None for a delete) or (namespace, None, None): index that namespace whole again
operations = st.lists(st.tuples(st.sampled_from(NAMESPACES), st.one_of(st.none(), st.sampled_from("pqrs")),
                                st.one_of(st.none(), label_sets)), max_size=30)


def walk(pods: dict[tuple[str, str], dict[str, Any]], namespace: str, selector: SelectorKey) -> set[tuple[str, str]]:
    return {key for key, labels in pods.items()
            if key[0] == namespace and all(labels.get(k) == v for k, v in selector)}


@settings(max_examples=100)
@given(operations, st.lists(selectors, min_size=1, max_size=4))
@example([("a", "p", {"app": "x"}), ("a", "q", {"tier": "x"})], [(("app", "x"), ("tier", "x"))])
def test_a_selectors_pods_by_the_index_are_those_a_walk_finds(ops: list[Any], asked: list[SelectorKey]) -> None:
    pods: dict[tuple[str, str], dict[str, Any]] = {}
    index = PodsByLabel()
    index.index("a", [])
    for namespace, name, labels in ops:
        if name is None:
            index.index(namespace, [(k, v) for k, v in pods.items() if k[0] == namespace])
            continue
        key = (namespace, name)
        if labels is None:
            pods.pop(key, None)
        else:
            pods[key] = labels
        if index.indexed(namespace):
            index.put(key, labels)
            assert all(index.by_label[namespace].values())  # (a label no pod has any longer is let go)
    for namespace in NAMESPACES:
        if index.indexed(namespace):
            for selector in asked:
                assert index.matching(namespace, selector) == walk(pods, namespace, selector)
        index.drop(namespace)
    assert index.labels == {} and index.by_label == {} and index.in_namespace == {}


def test_a_label_value_that_is_no_string_matches_no_selector() -> None:
    index = PodsByLabel()
    index.index("a", [(("a", "p"), {"app": ["x"], "tier": "y"})])
    assert index.matching("a", (("tier", "y"),)) == {("a", "p")}
    assert index.matching("a", (("app", "x"),)) == set()
    index.put(("a", "p"), None)
    assert index.matching("a", ()) == set()
