"""A core/v1 object's values are refused as kube-apiserver's decoder (sigs.k8s.io/json, Go's encoding/json)
refuses them, with its texts; the msgspec shape (the fast path) never takes what the walk refuses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from go_type_cases import LEAVES, WRONG, build, expected
from hypothesis import given, settings
from hypothesis import strategies as st
from json_places import places

from dralloc.api import codec, core_v1_fields, gotime, gotypes, strict
from dralloc.api.quantity import ERR_FORMAT_WRONG, ERR_SUFFIX
from dralloc.errors import DecodeError

ROOT = Path(__file__).resolve().parents[2]
POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "a"}},
    "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                             "resources": {"requests": {"cpu": "100m"}}}]}}


def _with(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parent = out
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return out


def _error(data: dict[str, Any]) -> str | None:
    return gotypes.type_error(data)


def _field(struct: str, fields: str, go_type: str, what: str) -> str:
    return f"json: cannot unmarshal {what} into Go struct field {struct}.{fields} of type {go_type}"


C0 = ("spec", "containers", 0)


@pytest.mark.parametrize("path,value,message", [
    # a value of another JSON type: Go names the innermost struct, the field path without indices, the Go type
    (("spec", "hostname"), 5, _field("PodSpec", "spec.hostname", "string", "number")),
    ((*C0, "stdin"), "yes", _field("Container", "spec.containers.stdin", "bool", "string")),
    ((*C0, "command"), "sh", _field("Container", "spec.containers.command", "[]string", "string")),
    ((*C0, "command"), [True], _field("Container", "spec.containers.command", "string", "bool")),
    (("metadata", "labels"), {"a": 1}, _field("ObjectMeta", "metadata.labels", "string", "number")),
    (("metadata", "labels"), ["a"], _field("ObjectMeta", "metadata.labels", "map[string]string", "array")),
    ((*C0, "ports", 0, "protocol"), 6, _field("ContainerPort", "spec.containers.ports.protocol", "v1.Protocol",
                                               "number")),
    (("spec", "containers"), {}, _field("PodSpec", "spec.containers", "[]v1.Container", "object")),
    (("spec", "containers", 0), 5, _field("PodSpec", "spec.containers", "v1.Container", "number")),
    (("spec",), "x", _field("Pod", "spec", "v1.PodSpec", "string")),
    (("spec", "tolerations"), [{"key": "k", "tolerationSeconds": "60"}],
     _field("Toleration", "spec.tolerations.tolerationSeconds", "int64", "string")),
    # ints: a float, or an int beyond the Go width, is "number <its text>"
    ((*C0, "ports", 0, "containerPort"), 1.5,
     _field("ContainerPort", "spec.containers.ports.containerPort", "int32", "number 1.5")),
    ((*C0, "ports", 0, "containerPort"), 4294967296,
     _field("ContainerPort", "spec.containers.ports.containerPort", "int32", "number 4294967296")),
    ((*C0, "ports", 0, "containerPort"), True,
     _field("ContainerPort", "spec.containers.ports.containerPort", "int32", "bool")),
    (("spec", "activeDeadlineSeconds"), 2 ** 63,
     _field("PodSpec", "spec.activeDeadlineSeconds", "int64", "number 9223372036854775808")),
    # (a number whose JSON text is not known is quoted as Go's encoder writes it: a YAML body reaches Go so)
    (("spec", "activeDeadlineSeconds"), 0.00001,
     _field("PodSpec", "spec.activeDeadlineSeconds", "int64", "number 0.00001")),
    (("spec", "activeDeadlineSeconds"), 1.5e-7, _field("PodSpec", "spec.activeDeadlineSeconds", "int64", "number 1.5e-7")),
    # a quantity: the parser's error, unwrapped, for any JSON value that is not a number or a good string
    ((*C0, "resources", "limits"), {"cpu": "1x"}, ERR_FORMAT_WRONG),
    ((*C0, "resources", "limits"), {"memory": "1kk"}, ERR_SUFFIX),
    ((*C0, "resources", "limits"), {"cpu": True}, ERR_FORMAT_WRONG),
    ((*C0, "resources", "limits"), {"cpu": {"v": 1}}, ERR_FORMAT_WRONG),
    ((*C0, "resources", "limits"), "1", _field("ResourceRequirements", "spec.containers.resources.limits",
                                               "v1.ResourceList", "string")),
    # an IntOrString: a string or an int32, else its own decoding of an int32, in the field's context
    ((*C0, "livenessProbe"), {"httpGet": {"port": 1.5}},
     _field("HTTPGetAction", "spec.containers.livenessProbe.httpGet.port", "int32", "number 1.5")),
    ((*C0, "livenessProbe"), {"tcpSocket": {"port": 2 ** 31}},
     _field("TCPSocketAction", "spec.containers.livenessProbe.tcpSocket.port", "int32", "number 2147483648")),
    ((*C0, "livenessProbe"), {"tcpSocket": {"port": False}},
     _field("TCPSocketAction", "spec.containers.livenessProbe.tcpSocket.port", "int32", "bool")),
    # a time: Go's parse error, or the error of the string it decodes first
    (("metadata", "creationTimestamp"), "garbage",
     'parsing time "garbage" as "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"'),
    (("metadata", "creationTimestamp"), "2026-02-29T00:00:00Z", 'parsing time "2026-02-29T00:00:00Z": day out of range'),
    (("metadata", "creationTimestamp"), 5, _field("ObjectMeta", "metadata.creationTimestamp", "string", "number")),
    # a field of an inlined Go struct (VolumeSource in Volume) has the outer struct as its context
    (("spec", "volumes"), [{"name": "v", "hostPath": "/x"}],
     _field("Volume", "spec.volumes.hostPath", "v1.HostPathVolumeSource", "string")),
])
def test_a_wrongly_typed_value_gets_gos_error(path: tuple[Any, ...], value: Any, message: str) -> None:
    assert _error(_with(POD, path, value)) == message


@pytest.mark.parametrize("path,value", [
    (("spec", "hostname"), None), (("spec", "containers", 0), None), (("metadata", "labels"), {"a": None}),
    ((*C0, "ports", 0, "containerPort"), None), ((*C0, "ports", 0, "containerPort"), -2 ** 31),
    ((*C0, "command"), [None, "x"]), ((*C0, "resources", "limits"), {"cpu": 1.5, "memory": " 1Gi "}),
    ((*C0, "resources", "limits"), {"cpu": None}), ((*C0, "livenessProbe"), {"httpGet": {"port": "http"}}),
    (("metadata", "creationTimestamp"), "2024-02-29T23:59:59.123+05:30"), (("metadata", "deletionTimestamp"), None),
    (("spec", "activeDeadlineSeconds"), 2 ** 63 - 1), (("spec", "unknownField"), 5),  # (strict reports that one)
])
def test_values_go_decodes_are_taken(path: tuple[Any, ...], value: Any) -> None:
    assert _error(_with(POD, path, value)) is None


def test_the_first_type_error_in_document_order_is_reported() -> None:
    pod = _with(_with(POD, ("spec", "hostname"), 1), ("spec", "subdomain"), 2)
    assert _error(pod) == _field("PodSpec", "spec.hostname", "string", "number")
    pod["spec"] = {"subdomain": 2, **pod["spec"]}  # (now first in the document)
    assert _error(pod) == _field("PodSpec", "spec.subdomain", "string", "number")


def test_a_quantity_or_time_error_stops_decoding_and_wins_over_an_earlier_type_error() -> None:
    pod = _with(_with(POD, ("spec", "hostname"), 1), (*C0, "resources", "limits"), {"cpu": "bad"})
    assert _error(pod) == ERR_FORMAT_WRONG
    pod = _with(_with(POD, ("metadata", "creationTimestamp"), "x"), ("spec", "hostname"), 1)
    assert _error(pod).startswith('parsing time "x"')  # type: ignore[union-attr]


@pytest.mark.parametrize("text,go_type", [
    ("1e2", "int32"), ("1E+2", "int32"), ("1.50", "int32"), ("30.0", "int32"), ("-0.0", "int32"), ("3000000000", "int32"),
    ("-2147483649", "int32"), ("1.0e-7", "int32"),
])
def test_a_number_is_quoted_as_the_json_text_wrote_it(text: str, go_type: str) -> None:
    sent = json.dumps(POD).replace('"containerPort": 80', f'"containerPort": {text}')
    data = json.loads(sent)
    message = _field("ContainerPort", "spec.containers.ports.containerPort", go_type, f"number {text}")
    assert gotypes.type_error(data, sent=sent) == message
    assert gotypes.type_error(data, sent=sent.encode()) == message
    probe_port = '"readinessProbe": {"tcpSocket": {"port": ' + text + '}}, "ports"'  # (an IntOrString's own decoding)
    probe = sent.replace('"containerPort"', '"name": "p", "containerPort"').replace('"ports"', probe_port)
    assert gotypes.type_error(json.loads(probe), sent=probe) == _field(
        "TCPSocketAction", "spec.containers.readinessProbe.tcpSocket.port", "int32", f"number {text}")


def test_only_a_number_error_reads_the_text_again() -> None:
    sent = json.dumps(_with(POD, ("spec", "hostname"), 1e2))  # (a number into a string: no text in Go's error)
    assert gotypes.type_error(json.loads(sent), sent="not JSON at all") == _field("PodSpec", "spec.hostname", "string",
                                                                                   "number")


def _pod_text(cpu: str, label: str = '"a"') -> str:
    """The JSON text of POD with a cpu request and a label value written as given (escapes and all)."""
    return json.dumps(POD).replace('"100m"', cpu).replace('{"app": "a"}', '{"app": ' + label + '}')


@pytest.mark.parametrize("cpu", [r'"\u0031"', r'"1\u004bi"', r'"\u0031kk"', r'"1\t"', r'" 1\u2028"', r'"1\/"'])
def test_a_quantity_written_with_an_escape_never_parses(cpu: str) -> None:
    """Quantity.UnmarshalJSON parses the text between the quotes as it is: a backslash is no quantity's."""
    text = _pod_text(cpu)
    assert gotypes.type_error(json.loads(text), sent=text) == ERR_FORMAT_WRONG
    assert not strict.check_body(text).typed  # (the unknown-field check's shape, which decoded it, says nothing)


@pytest.mark.parametrize("cpu,label", [
    ('"1"', r'"\u0031"'),  # the same value, written with an escape elsewhere
    ('" 1 "', '"x"'),  # a literal separator Go's TrimSpace removes
    ('"1"', r'"\"quoted\""'),
])
def test_a_quantity_written_plainly_parses_whatever_else_has_escapes(cpu: str, label: str) -> None:
    text = _pod_text(cpu, label)
    assert gotypes.type_error(json.loads(text), sent=text) is None


def test_an_escaped_quantity_stops_decoding_after_an_earlier_type_error() -> None:
    text = _pod_text(r'"\u0031"').replace('"name": "p"', '"name": 5')
    assert gotypes.type_error(json.loads(text), sent=text) == ERR_FORMAT_WRONG
    text = text.replace(r'"\u0031"', '"1"')
    assert gotypes.type_error(json.loads(text), sent=text) == _field("ObjectMeta", "metadata.name", "string", "number")


@pytest.mark.parametrize("cpu", ["1\\t", "1\\u2028", "<1", "1&"])
def test_a_quantity_without_its_text_is_read_as_gos_encoder_writes_it(cpu: str) -> None:
    """A YAML body reaches Go's decoder as JSON its encoder wrote: a quantity with a character it escapes
    (a tab, a line separator, the HTML characters) never parses."""
    data = _with(POD, (*C0, "resources", "requests", "cpu"), json.loads(f'"{cpu}"'))
    assert gotypes.type_error(data) == ERR_FORMAT_WRONG


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "YQ=="}}


@pytest.mark.parametrize("value,message", [
    ("YQ", "illegal base64 data at input byte 0"), ("YQ=", "illegal base64 data at input byte 3"),
    ("YQ==x", "illegal base64 data at input byte 4"), ("a!==", "illegal base64 data at input byte 1"),
    ("YWJjZA=====", "illegal base64 data at input byte 8"),
    (5, _field("Secret", "data", "[]uint8", "number")), ({}, _field("Secret", "data", "[]uint8", "object")),
    ([1, 300], _field("Secret", "data", "uint8", "number 300")), ([1, "a"], _field("Secret", "data", "uint8", "string")),
    ("YQ==", None), ("YQ\n==\n", None), ("", None), ([97, 98], None), (None, None),
])
def test_secret_data_is_base64_or_a_list_of_bytes(value: Any, message: str | None) -> None:
    assert _error({**SECRET, "data": {"a": value}}) == message
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "binaryData": {"b": value}}
    assert _error(config_map) == (message and message.replace("Secret", "ConfigMap").replace(".data", ".binaryData")
                                  .replace("field Secret.data", "field ConfigMap.binaryData"))


@pytest.mark.parametrize("text,offset", [
    # encoding/base64's own table of corrupt inputs (TestDecodeCorrupt): -1 decodes
    ("", -1), ("\n", -1), ("AAA=\n", -1), ("AAAA\n", -1), ("!!!!", 0), ("====", 0), ("x===", 1), ("=AAA", 0),
    ("A=AA", 1), ("AA=A", 2), ("AA==A", 4), ("AAA=AAAA", 4), ("AAAAA", 4), ("AAAAAA", 4), ("A=", 1), ("A==", 1),
    ("AA=", 3), ("AA==", -1), ("AAA=", -1), ("AAAA", -1), ("AAAAAA=", 7), ("YWJjZA=====", 8), ("A!\n", 1),
    ("A=\n", 1)])
def test_base64_errors_are_at_gos_offsets(text: str, offset: int) -> None:
    found = gotypes.base64_error_offset(text.encode())
    assert (-1 if found is None else found) == offset


def test_micro_times_need_six_fraction_digits() -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {},
             "eventTime": "2026-01-01T00:00:00Z"}
    assert _error(event) == ('parsing time "2026-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot '
                             'parse "Z" as ".000000"')
    assert _error({**event, "eventTime": "2026-01-01T00:00:00.000001Z"}) is None
    assert _error({**event, "eventTime": None, "count": "1"}) == _field("Event", "count", "int32", "string")


def test_node_and_pvc_fields() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "8"}, "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}
    assert _error(node) is None
    assert _error(_with(node, ("status", "capacity", "cpu"), [])) == ERR_FORMAT_WRONG
    assert _error(_with(node, ("status", "daemonEndpoints", "kubeletEndpoint", "Port"), "x")) == _field(
        "DaemonEndpoint", "status.daemonEndpoints.kubeletEndpoint.Port", "int32", "string")
    assert _error(_with(node, ("spec",), {"unschedulable": "true"})) == _field(
        "NodeSpec", "spec.unschedulable", "bool", "string")
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    assert _error(pvc) is None
    assert _error(_with(pvc, ("spec", "accessModes"), [1])) == _field(
        "PersistentVolumeClaimSpec", "spec.accessModes", "v1.PersistentVolumeAccessMode", "number")


def test_other_kinds_are_not_checked_here() -> None:
    assert _error({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "spec": 5}) is None
    assert _error({"apiVersion": "v2", "kind": "Pod", "spec": 5}) is None


def test_validate_names_the_object_and_the_path(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(json.dumps(_with(POD, (*C0, "ports", 0, "containerPort"), 1.5)))
    with pytest.raises(DecodeError) as caught:
        codec.load_checked([path])
    assert str(caught.value).endswith(
        'Pod "p": spec.containers[0].ports[0].containerPort: ' + _field(
            "ContainerPort", "spec.containers.ports.containerPort", "int32", "number 1.5"))


# --- every leaf of the Pod, Node, PersistentVolumeClaim, Event and Secret schemas, with a value of another JSON type -------

def test_the_leaves_cover_the_schemas() -> None:
    kinds = {t.kind for _, _, t, _, _ in LEAVES}
    assert kinds == set(WRONG) and len(LEAVES) > 1000


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.sampled_from(LEAVES), st.data())
def test_every_leaf_refuses_a_value_of_another_type_with_its_go_type(leaf: Any, draw: st.DataObject) -> None:
    kind, steps, t, struct, fields = leaf
    value = draw.draw(st.sampled_from(WRONG[t.kind]))
    data = build(kind, steps, value)
    assert not gotypes.fits_shape(data, gotypes.go_type("v1." + kind))
    assert gotypes.type_error(data) == expected(value, t, struct, fields)


# --- the corpus: every well-typed core/v1 object of the examples and the tests' manifests is taken --------------

_CORPUS = [doc.data for path in sorted([*ROOT.joinpath("examples").rglob("*.yaml"), *ROOT.joinpath("tests").rglob(
    "*.yaml")]) for doc in codec.read_documents(path) if isinstance(doc.data, dict)
    and doc.data.get("apiVersion") == "v1" and doc.data.get("kind") in core_v1_fields.ROOTS]


def test_the_corpus_has_core_objects() -> None:
    assert {"Pod", "Node"} <= {d["kind"] for d in _CORPUS}


@pytest.mark.parametrize("data", _CORPUS, ids=lambda d: f"{d['kind']}/{(d.get('metadata') or {}).get('name')}")
def test_every_corpus_object_decodes(data: dict[str, Any]) -> None:
    assert gotypes.type_problem(data) is None
    assert gotypes.fits_shape(data, gotypes.go_type("v1." + data["kind"]))  # (answered by the fast path)


def test_a_stored_object_with_managed_fields_is_answered_by_the_fast_path() -> None:
    """An update sends the object back with its managedFields, whose fieldsV1 is free-form JSON."""
    pod = _with(POD, ("metadata", "managedFields"), [{
        "manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": "2026-11-30T20:55:17Z",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}}}}}}])
    assert gotypes.fits_shape(pod, gotypes.go_type("v1.Pod")) and gotypes.type_problem(pod) is None


_OTHER_VALUES: list[Any] = ["text", 7, -1, 2 ** 40, 1.5, True, None, [], [None], {}, {"k": 1}, [{"k": "v"}], "1Gi",
                            "2026-01-01T00:00:00Z", "YQ=="]



@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_CORPUS), st.data())
def test_the_shape_never_takes_what_the_walk_refuses(document: dict[str, Any], draw: st.DataObject) -> None:
    data = copy.deepcopy(document)
    where = [p for p in places(data)[1:] if p not in (("kind",), ("apiVersion",))]
    path = draw.draw(st.sampled_from(where))
    data = _with(data, path, draw.draw(st.sampled_from(_OTHER_VALUES)))
    root = gotypes.go_type("v1." + data["kind"])
    if gotypes.fits_shape(data, root):
        assert gotypes.walk(data, root) is None


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="AQgw+/=\n\r!é", max_size=12))
def test_the_shape_takes_only_base64_go_decodes(text: str) -> None:
    secret = {**SECRET, "data": {"a": text}}
    assert gotypes.fits_shape(secret, gotypes.go_type("v1.Secret")) <= (
        gotypes.base64_error_offset(text.encode()) is None)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,7})?(Z|[+-][0-9]{2}:[0-9]{2})",
                     fullmatch=True), st.booleans())
def test_the_shape_takes_only_times_go_parses(text: str, micro: bool) -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "involvedObject": {}}
    event["eventTime" if micro else "lastTimestamp"] = text
    if gotypes.fits_shape(event, gotypes.go_type("v1.Event")):
        assert gotime.parse_error(text, micro) is None


def test_the_unknown_field_check_says_when_a_core_body_has_go_types_throughout() -> None:
    """strict's unknown-field check decodes a write's JSON text into its kind's typed shape: when that succeeds
    the server need not check the object's values again; when it fails (a wrong type, or any other reason)
    it says nothing, and the type check answers."""
    raw = json.dumps(POD).encode()
    assert strict.check_body(raw, decoded=json.loads(raw)) == ([], [], True)
    wrong = _with(POD, ("spec", "hostname"), 5)
    raw = json.dumps(wrong).encode()
    assert strict.check_body(raw, decoded=json.loads(raw)) == ([], [], False)
    assert gotypes.type_error(wrong) == _field("PodSpec", "spec.hostname", "string", "number")
    device_class = json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                               "metadata": {"name": "c"}}).encode()
    assert strict.check_body(device_class) == ([], [], False)  # (no unknown field; its values are not Go-typed)


@pytest.mark.parametrize("command", [["validate"], ["simulate"], ["plan", "--scale-down"]])
def test_the_cli_refuses_a_wrongly_typed_core_value_with_exit_2(command: list[str], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from dralloc.cli.main import main

    path = tmp_path / "pod.yaml"
    path.write_text(json.dumps(_with(POD, ("spec", "hostname"), 5)))
    assert main([*command, "-f", str(path)]) == 2
    printed = capsys.readouterr()  # (validate reports each object's problems on stdout, the others on stderr)
    assert ('Pod "p": spec.hostname: json: cannot unmarshal number into Go struct field PodSpec.spec.hostname of '
            "type string") in printed.out + printed.err


# --- the workload kinds: their own fields and their pod templates ---------------------------------------------

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "w"}},
             "template": {"metadata": {"labels": {"app": "w"}}, "spec": POD["spec"]}}}
CRONJOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
    "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": POD["spec"]}}}}}
STATEFULSET: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
    "spec": {"selector": {"matchLabels": {"app": "d"}}, "serviceName": "db",
             "template": {"metadata": {"labels": {"app": "d"}}, "spec": POD["spec"]},
             "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                       "spec": {"resources": {"requests": {"storage": "1Gi"}}}}]}}
TEMPLATE = ("spec", "template", "spec")


@pytest.mark.parametrize("data,path,value,message", [
    # a pod template holds core/v1 types: Go names them, with the path from the workload's root
    (DEPLOYMENT, (*TEMPLATE, "hostname"), 5, _field("PodSpec", "spec.template.spec.hostname", "string", "number")),
    (DEPLOYMENT, (*TEMPLATE, "containers", 0, "ports", 0, "containerPort"), 1.5,
     _field("ContainerPort", "spec.template.spec.containers.ports.containerPort", "int32", "number 1.5")),
    (CRONJOB, ("spec", "jobTemplate", *TEMPLATE, "containers", 0, "stdin"), "yes",
     _field("Container", "spec.jobTemplate.spec.template.spec.containers.stdin", "bool", "string")),
    (STATEFULSET, ("spec", "volumeClaimTemplates", 0, "spec", "storageClassName"), 7,
     _field("PersistentVolumeClaimSpec", "spec.volumeClaimTemplates.spec.storageClassName", "string", "number")),
    # and the workload's own fields, with their Go types and named types
    (DEPLOYMENT, ("spec", "replicas"), "3", _field("DeploymentSpec", "spec.replicas", "int32", "string")),
    (DEPLOYMENT, ("spec", "strategy"), {"type": 1},
     _field("DeploymentStrategy", "spec.strategy.type", "v1.DeploymentStrategyType", "number")),
    (CRONJOB, ("spec", "startingDeadlineSeconds"), 1 << 63,
     _field("CronJobSpec", "spec.startingDeadlineSeconds", "int64", f"number {1 << 63}")),
    (CRONJOB, ("spec", "concurrencyPolicy"), False,
     _field("CronJobSpec", "spec.concurrencyPolicy", "v1.ConcurrencyPolicy", "bool")),
])
def test_a_workload_is_checked_against_its_go_types_and_its_templates_core_types(
        data: dict[str, Any], path: tuple[Any, ...], value: Any, message: str) -> None:
    assert gotypes.type_problem(data) is None
    wrong = _with(data, path, value)
    assert gotypes.type_error(wrong) == message
    with pytest.raises(DecodeError, match="cannot unmarshal"):  # (validate, simulate: exit 2)
        codec.decode(wrong)


def test_a_rolling_update_takes_an_int_or_a_percentage_and_nothing_else() -> None:
    strategy = ("spec", "strategy")
    for surge in (1, "25%"):
        assert gotypes.type_error(_with(DEPLOYMENT, strategy, {"rollingUpdate": {"maxSurge": surge}})) is None
    assert gotypes.type_error(_with(DEPLOYMENT, strategy, {"rollingUpdate": {"maxSurge": True}})) == _field(
        "RollingUpdateDeployment", "spec.strategy.rollingUpdate.maxSurge", "int32", "bool")


def test_nulls_are_settled_as_go_decodes_them() -> None:
    pod = _with(POD, ("spec", "nodeSelector"), None)
    pod["metadata"].update(creationTimestamp=None, labels=None, annotations={"a": None})
    container = pod["spec"]["containers"][0]
    container.update(command=[None, "x"], ports=[None], resources={"limits": {"cpu": None}}, stdin=None)
    pod["spec"]["tolerations"] = [{"key": "k", "tolerationSeconds": None}]
    pod["status"] = {"conditions": [{"type": "Ready", "lastProbeTime": None}], "startTime": None}
    pod["spec"]["unknownField"] = None  # (unknown fields are the unknown-field check's)
    gotypes.settle_zeros(pod, "Pod", "v1")
    assert pod["metadata"] == {"name": "p", "creationTimestamp": None, "annotations": {"a": ""}}
    assert "nodeSelector" not in pod["spec"] and pod["spec"]["unknownField"] is None
    assert container["command"] == ["", "x"] and container["ports"] == [{}] and "stdin" not in container
    assert container["resources"] == {"limits": {"cpu": "0"}} and pod["spec"]["tolerations"] == [{"key": "k"}]
    assert pod["status"] == {"conditions": [{"type": "Ready", "lastProbeTime": None}]}  # (a value time stays)
    secret = {**SECRET, "data": {"a": None, "b": [1, None]}}
    gotypes.settle_zeros(secret, "Secret", "v1")
    assert secret["data"] == {"a": None, "b": [1, 0]}  # (a nil []byte is written as null)


def test_the_zero_tables_name_fields_of_the_field_table() -> None:
    from dralloc.api import core_v1_zeros

    for name in core_v1_zeros.POINTERS | core_v1_zeros.NOT_OMITEMPTY | core_v1_zeros.VALUE_TIMES:
        struct, field = name.rsplit(".", 1)
        assert field in core_v1_fields.GO_TYPES[struct], name


def test_zero_values_are_settled_as_go_writes_them() -> None:
    pod = _with(POD, ("spec", "hostNetwork"), False)
    pod["spec"].update(hostname="", nodeSelector={}, automountServiceAccountToken=False, volumes=[])
    pod["spec"]["containers"][0].update(stdin=False, args=[], ports=[{"containerPort": 0, "hostPort": 0}])
    pod["spec"]["hostIPC"] = 0  # (a value of another type: the type check's)
    gotypes.settle_zeros(pod, "Pod", "v1")
    assert pod["spec"]["automountServiceAccountToken"] is False and pod["spec"]["hostIPC"] == 0
    assert not {"hostNetwork", "hostname", "nodeSelector", "volumes"} & pod["spec"].keys()
    container = pod["spec"]["containers"][0]
    assert not {"stdin", "args"} & container.keys() and container["ports"] == [{"containerPort": 0}]
    port = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": None, "ports": [
        {"containerPort": None}]}]}}
    gotypes.settle_zeros(port, "Pod", "v1")  # (a null of a field without omitempty is its zero)
    assert port["spec"]["containers"] == [{"name": "", "ports": [{"containerPort": 0}]}]


@pytest.mark.parametrize("sent,stored", [
    ("1000m", "1"), (" 1Gi ", "1Gi"), ("1024Mi", "1Gi"), (1.5, "1500m"), (2, "2"), (0.00001, "10u"), ("100m", "100m"),
])
def test_a_quantity_is_settled_in_the_form_kube_apiserver_stores(sent: Any, stored: str) -> None:
    pod = _with(POD, (*C0, "resources", "limits"), {"cpu": sent})
    assert gotypes.fits_shape(pod, gotypes.go_type("v1.Pod")) is (sent == stored)  # (else the walk settles it)
    gotypes.settle_zeros(pod, "Pod", "v1")
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"cpu": stored}


def test_only_kinds_whose_types_reach_a_quantity_have_their_escaped_strings_read_again() -> None:
    # (a ConfigMap's multi-line data is written with escapes on every write: no quantity can stand there)
    from dralloc.api.gotypes import holds_quantity

    assert [k for k in ("ConfigMap", "Secret", "Namespace", "ServiceAccount", "Event", "Pod", "Node")
            if holds_quantity("v1", k)] == ["Pod", "Node"]
    assert holds_quantity("apps/v1", "Deployment") and not holds_quantity("events.k8s.io/v1", "Event")
    assert holds_quantity("v1", "NoSuchKind")  # (nothing known of it: read again)
