"""scheduling.k8s.io PriorityClasses and kube-apiserver's Priority admission: the system classes, the rules of
a class, one global default, and a pod's priority from its class."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def client() -> TestClient:
    return api_client()


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "a", "image": "x:1"}], **spec}}


def test_the_system_classes_exist_from_the_start_and_cannot_be_deleted(client: TestClient) -> None:
    listed = {pc["metadata"]["name"]: pc for pc in client.get(CLASSES).json()["items"]}
    assert {name: pc["value"] for name, pc in listed.items()} == {"system-cluster-critical": 2000000000,
                                                                   "system-node-critical": 2000001000}
    assert listed["system-node-critical"]["preemptionPolicy"] == "PreemptLowerPriority"
    r = client.delete(f"{CLASSES}/system-node-critical")
    assert r.status_code == 403 and r.json()["message"] == (
        'priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class '
        "and cannot be deleted")


def test_a_class_defaults_its_preemption_policy_and_keeps_its_value(client: TestClient) -> None:
    created = client.post(CLASSES, json=priority_class("high", 1000))
    assert created.status_code == 201 and created.json()["preemptionPolicy"] == "PreemptLowerPriority"
    body = {**created.json(), "value": 2000}
    r = client.put(f"{CLASSES}/high", json=body)
    assert r.status_code == 422 and "value: Forbidden: may not be changed in an update." in r.json()["message"]
    body = {**created.json(), "preemptionPolicy": "Never"}
    r = client.put(f"{CLASSES}/high", json=body)
    assert r.status_code == 422 and 'preemptionPolicy: Invalid value: "Never": field is immutable' in \
        r.json()["message"]
    r = client.put(f"{CLASSES}/high", json={**created.json(), "description": "for the important ones"})
    assert r.status_code == 200 and r.json()["description"] == "for the important ones"


@pytest.mark.parametrize("pc,message", [
    (priority_class("huge", 1000000001),
     "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
    (priority_class("system-mine", 5),
     "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
     "error: system-mine is not a known system priority class"),
    (priority_class("system-node-critical", 5),
     "error: value of system-node-critical PriorityClass must be 2000001000"),
    (priority_class("polite", 5, preemptionPolicy="Sometimes"),
     'preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'),
])
def test_a_class_is_validated_as_kube_apiserver_validates_it(client: TestClient, pc: dict[str, Any],
                                                             message: str) -> None:
    r = client.post(CLASSES, json=pc)
    assert r.status_code == 422 and message in r.json()["message"], r.text


def test_only_one_class_may_be_the_global_default(client: TestClient) -> None:
    assert client.post(CLASSES, json=priority_class("normal", 10, globalDefault=True)).status_code == 201
    r = client.post(CLASSES, json=priority_class("other", 20, globalDefault=True))
    assert r.status_code == 403 and r.json()["message"] == (
        'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is already marked as '
        "default. Only one default can exist")
    assert client.post(CLASSES, json=priority_class("other", 20)).status_code == 201
    patch = client.patch(f"{CLASSES}/other", json={"globalDefault": True},
                         headers={"content-type": "application/merge-patch+json"})
    assert patch.status_code == 403
    # the default may be written again
    assert client.patch(f"{CLASSES}/normal", json={"description": "x"},
                        headers={"content-type": "application/merge-patch+json"}).status_code == 200


def test_a_pod_gets_its_priority_from_its_class(client: TestClient) -> None:
    assert client.post(CLASSES, json=priority_class("polite", 500, preemptionPolicy="Never")).status_code == 201
    spec = client.post(PODS, json=pod("a", priorityClassName="polite")).json()["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (500, "Never")
    spec = client.post(PODS, json=pod("b", priorityClassName="system-node-critical")).json()["spec"]
    assert spec["priority"] == 2000001000
    spec = client.post(PODS, json=pod("c")).json()["spec"]  # no class, no default class
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in spec
    # the same priority as the class's may be sent
    assert client.post(PODS, json=pod("d", priorityClassName="polite", priority=500)).status_code == 201


def test_without_a_class_a_pod_gets_the_default_class(client: TestClient) -> None:
    assert client.post(CLASSES, json=priority_class("normal", 10, globalDefault=True)).status_code == 201
    spec = client.post(PODS, json=pod("a")).json()["spec"]
    assert (spec["priorityClassName"], spec["priority"]) == ("normal", 10)


def test_a_pod_is_admitted_by_the_classes_as_they_are_when_it_is_created(client: TestClient) -> None:
    # what a class name gives is remembered only as long as the classes it came from are the cached ones
    assert client.post(PODS, json=pod("a")).json()["spec"]["priority"] == 0
    assert client.post(CLASSES, json=priority_class("normal", 10, globalDefault=True)).status_code == 201
    spec = client.post(PODS, json=pod("b")).json()["spec"]
    assert (spec["priorityClassName"], spec["priority"]) == ("normal", 10)
    assert client.post(PODS, json=pod("c", priorityClassName="later")).status_code == 403
    assert client.post(CLASSES, json=priority_class("later", 7, preemptionPolicy="Never")).status_code == 201
    spec = client.post(PODS, json=pod("d", priorityClassName="later")).json()["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (7, "Never")
    assert client.delete(f"{CLASSES}/later").status_code == 200
    assert client.post(CLASSES, json=priority_class("later", 8)).status_code == 201
    spec = client.post(PODS, json=pod("e", priorityClassName="later")).json()["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (8, "PreemptLowerPriority")
    assert client.delete(f"{CLASSES}/normal").status_code == 200
    spec = client.post(PODS, json=pod("f")).json()["spec"]
    assert spec["priority"] == 0 and "priorityClassName" not in spec
    # a refusal still names the pod refused
    r = client.post(PODS, json=pod("g", priority=3))
    assert r.status_code == 403 and r.json()["message"].startswith('pods "g" is forbidden: the integer value')


@pytest.mark.parametrize("spec,message", [
    ({"priorityClassName": "nope"}, 'pods "p" is forbidden: no PriorityClass with name nope was found'),
    ({"priority": 1000},
     'pods "p" is forbidden: the integer value of priority (1000) must not be provided in pod spec; priority '
     "admission controller computed 0 from the given PriorityClass name"),
    ({"priorityClassName": "polite", "preemptionPolicy": "PreemptLowerPriority"},
     'pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in '
     "pod spec; priority admission controller computed Never from the given PriorityClass name"),
])
def test_a_pod_may_not_choose_its_own_priority(client: TestClient, spec: dict[str, Any], message: str) -> None:
    assert client.post(CLASSES, json=priority_class("polite", 500, preemptionPolicy="Never")).status_code == 201
    r = client.post(PODS, json=pod("p", **spec))
    assert r.status_code == 403 and r.json()["message"] == message and r.json()["reason"] == "Forbidden"


def test_a_priority_of_the_wrong_type_is_the_decoders_400(client: TestClient) -> None:
    r = client.post(PODS, json=pod("p", priority="high"))
    assert r.status_code == 400


def test_kubectl_get_prints_kube_apiservers_columns(client: TestClient) -> None:
    table = client.get(CLASSES, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"), ("Value", "integer"), ("Global-Default", "boolean"), ("Age", "string"),
        ("PreemptionPolicy", "string")]
    assert table["rows"][0]["cells"][:3] == ["system-cluster-critical", 2000000000, False]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(class_name=st.sampled_from([None, "", "low-default", "high-never", "missing", "system-node-critical"]),
       priority=st.sampled_from([None, 0, 7, 1000, 2000001000]),
       policy=st.sampled_from([None, "Never", "PreemptLowerPriority"]))
def test_the_server_admits_a_pod_as_the_typed_priority_rule_does(client: TestClient, class_name: str | None,
                                                                 priority: int | None, policy: str | None) -> None:
    from dralloc.api.codec import decode
    from dralloc.controllers.priority import PriorityAdmissionError, admit_pod_priority

    classes = [priority_class("low-default", 7, globalDefault=True),
               priority_class("high-never", 1000, preemptionPolicy="Never")]
    for pc in classes:
        client.post(CLASSES, json=pc)  # (a 409 after the first example)
    asked = {k: v for k, v in (("priorityClassName", class_name), ("priority", priority),
                               ("preemptionPolicy", policy)) if v is not None}
    body = pod("p", **asked)
    r = client.post(f"{PODS}?dryRun=All", json=body)
    try:
        admitted = admit_pod_priority(decode({**body, "metadata": {"name": "p", "namespace": "default"}}),
                                      [decode(pc) for pc in classes])
    except PriorityAdmissionError as exc:
        assert (r.status_code, r.json()["message"]) == (403, str(exc))
    else:
        assert r.status_code == 201, r.text
        spec = r.json()["spec"]
        assert (spec.get("priorityClassName"), spec["priority"], spec["preemptionPolicy"]) == (
            admitted.spec.priority_class_name, admitted.spec.priority, admitted.spec.preemption_policy)


def test_a_preemption_policy_of_the_wrong_type_is_the_decoders_400_not_an_admission_403(client: TestClient) -> None:
    r = client.post(PODS, json=pod("p", preemptionPolicy=5))
    assert r.status_code == 400, r.text
