"""labels.NewRequirement's checks as label selectors and node affinity terms meet them: the texts a refused
selector gets (apimachinery's field paths) and the node affinity terms that therefore match no node."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dralloc.api import codec
from dralloc.api.meta import LabelSelector, LabelSelectorRequirement
from dralloc.scheduler.labels import SelectorError, compile_selector, requirement_problem
from dralloc.scheduler.nodeinfo import NodeInfo
from dralloc.scheduler.plugins.node_affinity import required_matches


def _refusal(*exprs: LabelSelectorRequirement, labels: dict[str, str] | None = None) -> str:
    with pytest.raises(SelectorError) as err:
        compile_selector(LabelSelector(match_labels=labels, match_expressions=list(exprs)))
    return str(err.value)


def test_a_key_that_is_not_a_qualified_name() -> None:
    assert _refusal(LabelSelectorRequirement("a b", "Exists")).startswith(
        'key: Invalid value: "a b": name part must consist of alphanumeric characters')


def test_operator_and_values_texts() -> None:
    assert _refusal(LabelSelectorRequirement("app", "In", [])) == \
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    assert _refusal(LabelSelectorRequirement("app", "Exists", ["x"])) == \
        'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'


def test_a_match_label_value_is_checked_too() -> None:
    assert _refusal(labels={"app": "a b"}).startswith('values[0][app]: Invalid value: "a b": a valid label must')


def test_several_problems_of_one_requirement_print_as_an_aggregate() -> None:
    text = _refusal(LabelSelectorRequirement("a b", "In", ["c d"]))
    assert text.startswith('[key: Invalid value: "a b"') and ', values[0][a b]: Invalid value: "c d"' in text


def test_gt_and_lt_take_one_integer() -> None:
    assert requirement_problem("n", "Gt", ("5",)) == ""
    assert "exactly one value is required" in requirement_problem("n", "Lt", ("1", "2"))
    assert "the value must be an integer" in requirement_problem("n", "Gt", ("abc",))


@given(st.text(alphabet="abz09-_.", min_size=1, max_size=70))
def test_valid_values_are_exactly_what_label_values_allow(value: str) -> None:
    from dralloc.validation.formats import is_label_value

    assert (requirement_problem("k", "In", (value,)) == "") == (not is_label_value(value))


def _node(labels: dict[str, str]) -> NodeInfo:
    return NodeInfo.build(codec.decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "labels": labels}}))


def test_a_node_affinity_term_that_does_not_parse_matches_no_node() -> None:
    pod = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["not a label"]}]},
            {"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["ten"]}]}]}}}}})
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert not required_matches({}, required, _node({"tier": "web", "size": "20"}))
    valid = codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["ten"]}]},
            {"matchExpressions": [{"key": "size", "operator": "Gt", "values": ["10"]}]}]}}}}})
    required = valid.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert required_matches({}, required, _node({"size": "20"}))  # the other term still matches


PREFERRING_BAD_TERMS = """\
affinity:
  nodeAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 5
      preference: {matchExpressions: [{key: zone, operator: In, values: ["a b"]}]}
    - weight: 2
      preference: {matchExpressions: [{key: size, operator: Gt, values: ["ten"]}]}
"""


def test_a_preferred_term_that_does_not_parse_fails_the_pods_prescore() -> None:
    """nodeaffinity's PreScore parses the pod's preferred terms (NewPreferredSchedulingTerms) and returns every
    problem, with its path, as an error; the framework ends the cycle with it."""
    from sched_builders import by_name, load, node, pod

    from dralloc.simulator import Scheduler

    result = Scheduler.from_objects(load(node("n1", labels="{zone: a}"), node("n2", labels="{zone: b}"),
                                         pod("p", extra_spec=PREFERRING_BAD_TERMS))).schedule()
    placed = by_name(result)["p"]
    assert placed.node is None
    assert placed.message == (
        'running PreScore plugin "NodeAffinity": [[0].matchExpressions[0].values[0][zone]: Invalid value: "a b": '
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), [1].matchExpressions[0].values[0]: "
        "Invalid value: \"ten\": for 'Gt', 'Lt' operators, the value must be an integer]")


def test_a_single_feasible_node_is_taken_without_prescore() -> None:
    """kube-scheduler skips scoring (and so PreScore) when one node is feasible."""
    from sched_builders import by_name, load, node, pod

    from dralloc.simulator import Scheduler

    result = Scheduler.from_objects(load(node("n1", labels="{zone: a}"),
                                         pod("p", extra_spec=PREFERRING_BAD_TERMS))).schedule()
    assert by_name(result)["p"].node == "n1"
