"""The Priority admission plugin: pod priority and preemption policy from PriorityClasses."""

from __future__ import annotations

from typing import Any

import pytest

from dralloc.api import codec
from dralloc.controllers.priority import PriorityAdmissionError, admit_pod_group_priority, admit_pod_priority


def pod(**spec: Any) -> Any:
    return codec.decode({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
                         "spec": {"containers": [{"name": "c"}], **spec}})


def pclass(name: str, value: int, **fields: Any) -> Any:
    return codec.decode({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                         "value": value, **fields})


def test_a_named_class_gives_its_value_and_preemption_policy() -> None:
    admitted = admit_pod_priority(pod(priorityClassName="batch"), [pclass("batch", 100, preemptionPolicy="Never")])
    assert (admitted.spec.priority, admitted.spec.preemption_policy) == (100, "Never")


def test_a_class_without_a_policy_preempts_lower_priority() -> None:
    admitted = admit_pod_priority(pod(priorityClassName="batch"), [pclass("batch", 100)])
    assert admitted.spec.preemption_policy == "PreemptLowerPriority"


def test_without_a_class_the_lowest_global_default_applies_and_is_named_in_the_pod() -> None:
    classes = [pclass("high", 1000, globalDefault=True), pclass("low", 10, globalDefault=True), pclass("x", 5)]
    admitted = admit_pod_priority(pod(), classes)
    assert (admitted.spec.priority_class_name, admitted.spec.priority) == ("low", 10)


def test_without_any_default_class_priority_is_zero() -> None:
    admitted = admit_pod_priority(pod(), [pclass("x", 5)])
    assert (admitted.spec.priority_class_name, admitted.spec.priority, admitted.spec.preemption_policy) == \
        (None, 0, "PreemptLowerPriority")


def test_the_system_classes_always_exist() -> None:
    assert admit_pod_priority(pod(priorityClassName="system-node-critical"), []).spec.priority == 2000001000
    assert admit_pod_priority(pod(priorityClassName="system-cluster-critical"), []).spec.priority == 2000000000


def test_an_unknown_class_is_forbidden() -> None:
    with pytest.raises(PriorityAdmissionError) as err:
        admit_pod_priority(pod(priorityClassName="nope"), [])
    assert str(err.value) == 'pods "p" is forbidden: no PriorityClass with name nope was found'


def test_a_stated_priority_must_match_the_class() -> None:
    assert admit_pod_priority(pod(priorityClassName="batch", priority=100), [pclass("batch", 100)]).spec.priority == 100
    with pytest.raises(PriorityAdmissionError, match=r"the integer value of priority \(7\) must not be provided in "
                                                     r"pod spec; priority admission controller computed 100"):
        admit_pod_priority(pod(priorityClassName="batch", priority=7), [pclass("batch", 100)])


def test_a_stated_preemption_policy_must_match_the_class() -> None:
    with pytest.raises(PriorityAdmissionError, match=r"PreemptionPolicy \(Never\) must not be provided"):
        admit_pod_priority(pod(priorityClassName="batch", preemptionPolicy="Never"), [pclass("batch", 100)])


# ---------------------------------------------------------------------- PodGroups (WorkloadAwarePreemption)
def pod_group(**spec: Any) -> Any:
    return codec.decode({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                         "metadata": {"name": "job", "namespace": "ns"},
                         "spec": {"schedulingPolicy": {"basic": {}}, **spec}})


def test_a_pod_group_gets_its_class_value_or_the_global_default() -> None:
    classes = [pclass("default1", 5, globalDefault=True), pclass("nondefault1", 7)]
    named = admit_pod_group_priority(pod_group(priorityClassName="nondefault1"), classes)
    assert (named.spec.priority_class_name, named.spec.priority) == ("nondefault1", 7)
    defaulted = admit_pod_group_priority(pod_group(), classes)
    assert (defaulted.spec.priority_class_name, defaulted.spec.priority) == ("default1", 5)
    assert admit_pod_group_priority(pod_group(), classes[1:]).spec.priority == 0


def test_a_pod_group_naming_a_missing_class_or_another_priority_is_refused() -> None:
    with pytest.raises(PriorityAdmissionError, match='^podgroups.scheduling.k8s.io "job" is forbidden: no '
                                                     'PriorityClass with name gone was found$'):
        admit_pod_group_priority(pod_group(priorityClassName="gone"), [])
    with pytest.raises(PriorityAdmissionError, match=r"the integer value of priority \(9999\)"):
        admit_pod_group_priority(pod_group(priorityClassName="b", priority=9999), [pclass("b", 7)])
    assert admit_pod_group_priority(pod_group(priorityClassName="b", priority=7), [pclass("b", 7)]).spec.priority == 7
