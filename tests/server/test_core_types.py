"""A core/v1 object whose value has a type Go's decoder refuses is refused as kube-apiserver refuses it (400,
its text, nothing stored), whichever way it is written: create, update, merge patch, apply, status; JSON or
YAML. Stored, such an object would break every Go client that reads it."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from starlette.testclient import TestClient  # noqa: E402

from dralloc.api import strict  # noqa: E402
from dralloc.server import create_app  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
from go_type_cases import LEAVES, WRONG, build, expected  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typed"},
                       "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}}
MERGE = {"content-type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield TestClient(create_app(SQLiteStore(":memory:")))


def _refused(kind: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind} in version "v1" cannot be handled as a {kind}: {message}', "reason": "BadRequest",
            "code": 400}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "ports": [{"containerPort": 80}], **spec.pop("container", {})}
    return {**POD, "metadata": {"name": name, **spec.pop("metadata", {})},
            "spec": {**POD["spec"], "containers": [container], **spec}}


@pytest.mark.parametrize("pod,message", [
    (_pod("hostname", hostname=5),
     "json: cannot unmarshal number into Go struct field PodSpec.spec.hostname of type string"),
    (_pod("stdin", container={"stdin": "yes"}),
     "json: cannot unmarshal string into Go struct field Container.spec.containers.stdin of type bool"),
    (_pod("port", container={"ports": [{"containerPort": 1.5}]}),
     "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of "
     "type int32"),
    (_pod("labels", metadata={"labels": {"a": 1}}),
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
    (_pod("wide", container={"ports": [{"containerPort": 4294967296}]}),
     "json: cannot unmarshal number 4294967296 into Go struct field ContainerPort.spec.containers.ports."
     "containerPort of type int32"),
    (_pod("limits", container={"resources": {"limits": {"cpu": "lots"}}}),
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (_pod("probe", container={"livenessProbe": {"httpGet": {"port": True}}}),
     "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port "
     "of type int32"),
])
@pytest.mark.parametrize("encoding", ["json", "yaml"])
def test_a_create_with_a_wrongly_typed_value_is_refused_and_not_stored(client: TestClient, pod: dict[str, Any],
                                                                       message: str, encoding: str) -> None:
    if encoding == "json":
        r = client.post(PODS, json=pod)
    else:
        r = client.post(PODS, content=yaml.safe_dump(pod), headers={"content-type": "application/yaml"})
    assert r.status_code == 400 and r.json() == _refused("Pod", message)
    assert client.get(f"{PODS}/{pod['metadata']['name']}").status_code == 404


@pytest.mark.parametrize("ctype,written,quoted", [
    ("application/json", "1e2", "1e2"), ("application/json", "1.50", "1.50"), ("application/json", "80.0", "80.0"),
    ("application/json", "3000000000", "3000000000"),
    # YAML reaches Go's decoder as the JSON Go's encoder writes of it
    ("application/yaml", "1.50", "1.5"), ("application/yaml", "0.00001", "0.00001"), ("application/yaml", "1.5e-7", "1.5e-7"),
])
def test_a_number_go_refuses_is_quoted_as_the_body_wrote_it(client: TestClient, ctype: str, written: str,
                                                            quoted: str) -> None:
    text = json.dumps(_pod("quoted")).replace('"containerPort": 80', f'"containerPort": {written}')
    r = client.post(PODS, content=text, headers={"content-type": ctype})  # (JSON is YAML)
    assert r.status_code == 400 and r.json() == _refused(
        "Pod", f"json: cannot unmarshal number {quoted} into Go struct field ContainerPort.spec.containers.ports."
               "containerPort of type int32")


CLAIMS = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _claim_text(name: str, memory: str) -> str:
    request = {"name": "r", "exactly": {"deviceClassName": "gpu", "capacity": {"requests": {"memory": "QUANTITY"}}}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
             "spec": {"devices": {"requests": [request]}}}
    return json.dumps(claim).replace('"QUANTITY"', memory)


@pytest.mark.parametrize("written", [r'"\u0031"', r'"1\u0047i"', r'"\u0031kk"'])
def test_a_quantity_written_with_an_escape_is_refused_as_kube_apiserver_parses_it(client: TestClient,
                                                                                 written: str) -> None:
    """Quantity's UnmarshalJSON parses the text between the quotes, escapes and all, in every kind."""
    pod = json.dumps(_pod("escaped", container={"resources": {"requests": {"cpu": "CPU"}}})).replace('"CPU"', written)
    r = client.post(PODS, content=pod, headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json() == _refused("Pod", FORMAT_WRONG)
    r = client.post(CLAIMS, content=_claim_text("escaped", written), headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["message"] == (
        f'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: {FORMAT_WRONG}')


def test_escapes_elsewhere_leave_quantities_alone(client: TestClient) -> None:
    """kubectl's client-side apply sends the object again, escaped, in an annotation: every quantity it repeats
    is there, written with escapes around it, and a label may write a quantity's text with escapes."""
    pod = _pod("annotated", metadata={"labels": {"one": "1"}}, container={"resources": {"requests": {"cpu": "1"}}})
    pod["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(pod)}
    text = json.dumps(pod).replace('"one": "1"', r'"one": "\u0031"')
    assert client.post(PODS, content=text, headers={"content-type": "application/json"}).status_code == 201
    claim = _claim_text("annotated", '"1Gi"').replace('"name": "annotated"', r'"name": "annotated", "labels": {"a": "\u0031Gi"}')
    assert client.post(CLAIMS, content=claim, headers={"content-type": "application/json"}).status_code == 201


def test_a_modelled_kinds_quantity_error_is_the_parsers_text_alone(client: TestClient) -> None:
    for written, error in (('"1x"', FORMAT_WRONG), ('"1kk"', "unable to parse quantity's suffix"), ("true", FORMAT_WRONG)):
        r = client.post(CLAIMS, content=_claim_text("unparsed", written), headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["message"] == (
            f'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: {error}')


def test_a_body_without_kind_and_api_version_is_checked_as_its_urls_kind(client: TestClient) -> None:
    r = client.post(PODS, json={"metadata": {"name": "bare"}, "spec": {"hostname": 5}})
    assert r.status_code == 400 and r.json() == _refused(
        "Pod", "json: cannot unmarshal number into Go struct field PodSpec.spec.hostname of type string")


def test_admission_never_sees_a_wrongly_typed_value(client: TestClient) -> None:
    """kube-apiserver decodes the body before admission: a value admission would replace (an empty list where
    the service account's name goes) is still the decoder's 400."""
    r = client.post(PODS, json=_pod("masked", serviceAccount=[]))
    assert r.status_code == 400 and r.json() == _refused(
        "Pod", "json: cannot unmarshal array into Go struct field PodSpec.spec.serviceAccount of type string")


def test_a_protobuf_body_needs_only_its_quantities_parsed(client: TestClient) -> None:
    """Protobuf's wire types are Go's (a string, an int32 kept to its low 32 bits, ...): only a quantity's text can
    fail to decode, here an emptyDir's sizeLimit, which dralloc does not model."""
    from test_protobuf import PROTOBUF, envelope, ld, meta, quantity

    def pod(name: str, size: str) -> bytes:
        volume = ld(1, ld(1, "data"), ld(2, ld(2, ld(1, ""), quantity(2, size))))
        return envelope("v1", "Pod", meta(name), ld(2, volume, ld(2, ld(1, "c"), ld(2, "i"))), ld(3))

    r = client.post(PODS, content=pod("sized", "1Gi"), headers=PROTOBUF)
    assert r.status_code == 201, r.text
    r = client.post(PODS, content=pod("unsized", "lots"), headers=PROTOBUF)
    assert r.status_code == 400 and r.json() == _refused(
        "Pod", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    assert client.get(f"{PODS}/unsized").status_code == 404


def test_metadata_that_is_not_an_object_names_go_s_object_meta(client: TestClient) -> None:
    for url, kind, api_version in ((PODS, "Pod", "v1"), ("/apis/resource.k8s.io/v1/deviceclasses", "DeviceClass",
                                                          "resource.k8s.io/v1")):
        r = client.post(url, json={"apiVersion": api_version, "kind": kind, "metadata": "m"})
        assert r.status_code == 400 and r.json()["message"] == (
            f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal string into Go struct '
            f"field {kind}.metadata of type v1.ObjectMeta")


def test_updates_patches_applies_and_status_writes_are_refused_and_change_nothing(client: TestClient) -> None:
    assert client.post(PODS, json=_pod("kept")).status_code == 201
    before = client.get(f"{PODS}/kept").json()
    message = _refused("Pod", "json: cannot unmarshal number into Go struct field PodSpec.spec.hostname of type "
                              "string")
    updated = {**before, "spec": {**before["spec"], "hostname": 5}}
    assert client.put(f"{PODS}/kept", json=updated).json() == message
    r = client.patch(f"{PODS}/kept", json={"spec": {"hostname": 5}}, headers=MERGE)
    assert r.status_code == 400 and r.json() == message
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kept"}, "spec": {"hostname": 5}}
    r = client.patch(f"{PODS}/kept?fieldManager=m&force=true", content=yaml.safe_dump(applied),
                     headers={"content-type": "application/apply-patch+yaml"})
    assert r.status_code == 400 and r.json() == message
    r = client.patch(f"{PODS}/kept/status", json={"status": {"containerStatuses": [{"restartCount": "1"}]}},
                     headers=MERGE)
    assert r.status_code == 400 and r.json() == _refused(
        "Pod", "json: cannot unmarshal string into Go struct field ContainerStatus.status.containerStatuses."
               "restartCount of type int32")
    assert client.get(f"{PODS}/kept").json() == before


@pytest.mark.parametrize("kind,url,body,message", [
    ("Secret", "/api/v1/namespaces/default/secrets",
     {"metadata": {"name": "s"}, "data": {"password": "cGFzcw"}}, "illegal base64 data at input byte 4"),
    ("ConfigMap", "/api/v1/namespaces/default/configmaps",
     {"metadata": {"name": "c"}, "binaryData": {"b": [1, 256]}},
     "json: cannot unmarshal number 256 into Go struct field ConfigMap.binaryData of type uint8"),
    ("Node", NODES, {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "8", "memory": True}}},
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("Event", "/api/v1/namespaces/default/events",
     {"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"}, "count": "2"},
     "json: cannot unmarshal string into Go struct field Event.count of type int32"),
    ("Namespace", "/api/v1/namespaces", {"metadata": {"name": "ns", "creationTimestamp": 5}},
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
])
def test_every_core_kind_is_checked(client: TestClient, kind: str, url: str, body: dict[str, Any],
                                    message: str) -> None:
    r = client.post(url, json={"apiVersion": "v1", "kind": kind, **body})
    assert r.status_code == 400 and r.json() == _refused(kind, message)
    assert client.get(f"{url}/{body['metadata']['name']}").status_code == 404


EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
EVENT_V1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "eventTime": "2024-01-01T00:00:00.000000Z",
            "reportingController": "example.com/c", "reportingInstance": "i", "action": "Act", "reason": "Why",
            "type": "Normal", "regarding": {"kind": "Pod", "name": "p"}}


@pytest.mark.parametrize("fields,message", [
    ({"deprecatedCount": "2"}, "json: cannot unmarshal string into Go struct field Event.deprecatedCount of type int32"),
    ({"regarding": {"kind": "Pod", "name": 3}},
     "json: cannot unmarshal number into Go struct field ObjectReference.regarding.name of type string"),
    ({"series": {"count": 1.5, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}},
     "json: cannot unmarshal number 1.5 into Go struct field EventSeries.series.count of type int32"),
    ({"related": ["x"]}, "json: cannot unmarshal array into Go struct field Event.related of type v1.ObjectReference"),
    ({"note": False}, "json: cannot unmarshal bool into Go struct field Event.note of type string"),
    ({"eventTime": 5}, "json: cannot unmarshal number into Go struct field Event.eventTime of type string"),
    ({"deprecatedSource": {"component": 1}},
     "json: cannot unmarshal number into Go struct field EventSource.deprecatedSource.component of type string"),
])
def test_an_events_v1_event_is_checked_as_go_decodes_its_own_type(client: TestClient, fields: dict[str, Any],
                                                                  message: str) -> None:
    """events.k8s.io/v1's Event is decoded into its own Go type (its field names, not core/v1's) before it is
    converted to the stored core/v1 Event."""
    name = f"typed-{len(fields)}-{next(iter(fields))}"
    r = client.post(EVENTS_V1, json={**EVENT_V1, "metadata": {"name": name}, **fields})
    assert r.status_code == 400 and r.json() == _refused("Event", message)
    assert client.get(f"{EVENTS_V1}/{name}").status_code == 404


def test_an_events_v1_events_unknown_fields_are_reported_as_for_any_kind(client: TestClient) -> None:
    body = {**EVENT_V1, "metadata": {"name": "unknown-warned"}, "regarding": {"kind": "Pod", "name": "p", "x": 1}}
    r = client.post(EVENTS_V1, json=body)
    assert r.status_code == 201 and r.headers["warning"] == '299 - "unknown field \\"regarding.x\\""'
    assert "x" not in client.get(f"{EVENTS_V1}/unknown-warned").json()["regarding"]
    r = client.post(f"{EVENTS_V1}?fieldValidation=Strict", json={**body, "metadata": {"name": "unknown-refused"}})
    assert r.status_code == 400 and r.json() == _refused("Event", 'strict decoding error: unknown field "regarding.x"')


def test_a_well_typed_events_v1_event_is_stored(client: TestClient) -> None:
    series = {"count": 2, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}
    r = client.post(EVENTS_V1, json={**EVENT_V1, "metadata": {"name": "typed-fine"}, "series": series})
    assert r.status_code == 201 and r.json()["series"] == series


def test_well_typed_values_of_every_rule_are_stored_as_sent(client: TestClient) -> None:
    pod = _pod("fine", hostname=None, container={
        "resources": {"limits": {"cpu": 1.5, "memory": "1Gi"}}, "livenessProbe": {"httpGet": {"port": "http"}},
        "command": ["sh", None]})
    r = client.post(PODS, json=pod)
    assert r.status_code == 201, r.text
    stored = client.get(f"{PODS}/fine").json()["spec"]["containers"][0]
    # (a null list item is its type's zero value, as Go decodes it: dralloc.api.gotypes.settle_nulls)
    # (and a quantity in the form Go's Quantity writes it: the number 1.5 is "1500m")
    assert stored["resources"]["limits"] == {"cpu": "1500m", "memory": "1Gi"} and stored["command"] == ["sh", ""]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "fine"}, "data": {"a": "YQ==", "b": ""}}
    assert client.post("/api/v1/namespaces/default/secrets", json=secret).status_code == 201


_SERVED = [leaf for leaf in LEAVES if leaf[0] in ("Pod", "Node")]


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_SERVED), st.data())
def test_every_leaf_of_pods_and_nodes_refuses_a_value_of_another_type(client: TestClient, leaf: Any,
                                                                      draw: st.DataObject) -> None:
    kind, steps, t, struct, fields = leaf
    # (an int beyond int64 is refused before decoding, by the body's limits, as in test_bad_input.py)
    value = draw.draw(st.sampled_from([v for v in WRONG[t.kind] if not (type(v) is int and v >= 2 ** 63)]))
    data = build(kind, steps, value)
    if not isinstance(data.get("metadata"), dict):
        data["metadata"] = {}
    data["metadata"].setdefault("name", "leaf")
    r = client.post(PODS if kind == "Pod" else NODES, json=data)
    assert r.status_code == 400 and r.json()["message"] == _refused(kind, expected(value, t, struct, fields))[
        "message"], (steps, value, r.text)


def test_a_workloads_pod_template_is_checked_as_go_decodes_it(client: TestClient) -> None:
    # apps/v1 and batch/v1 models keep the pod template in part: its values are still Go's types, or the
    # controllers' pods (and every Go client reading the workload) would carry what Go cannot decode
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "w"}},
                           "template": {"metadata": {"labels": {"app": "w"}},
                                        "spec": {"hostname": 5, "containers": [{"name": "c", "image": "x"}]}}}}
    url = "/apis/apps/v1/namespaces/default/deployments"
    r = client.post(url, json=deployment)
    assert (r.status_code, r.json()) == (400, _refused(
        "Deployment", "json: cannot unmarshal number into Go struct field PodSpec.spec.template.spec.hostname "
                      "of type string"))
    assert client.get(f"{url}/web").status_code == 404
    deployment["spec"]["template"]["spec"]["hostname"] = "web"
    assert client.post(url, json=deployment).status_code == 201
    r = client.patch(f"{url}/web", json={"spec": {"replicas": "3"}},
                     headers={"Content-Type": "application/merge-patch+json"})
    assert (r.status_code, r.json()) == (400, _refused(
        "Deployment", "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"))


def test_fields_kube_apiserver_1_36_lacks_are_unknown(client: TestClient) -> None:
    """The field table follows 1.36's Go types: a later release's fields (a pod's evictionResponders, a volume
    mount's bindMountOptions) are unknown, reported and dropped; 1.36's own (a pod status' node allocatable
    claim resources) are known."""
    pod = _pod("later", evictionResponders=[{"name": "x"}],
               container={"volumeMounts": [{"name": "v", "mountPath": "/v", "bindMountOptions": ["ro"]}]})
    pod["spec"]["volumes"] = [{"name": "v", "emptyDir": {}}]
    r = client.post(PODS, json=pod)
    assert r.status_code == 201
    assert r.headers["warning"] == ('299 - "unknown field \\"spec.containers[0].volumeMounts[0].bindMountOptions\\"", '
                                    '299 - "unknown field \\"spec.evictionResponders\\""')
    assert "evictionResponders" not in r.json()["spec"]
    assert strict.unknown_fields({"apiVersion": "v1", "kind": "Pod", "status": {"nodeAllocatableResourceClaimStatuses": [
        {"resourceClaimName": "c", "resources": {"cpu": "1"}}]}}) == []
