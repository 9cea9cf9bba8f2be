"""Loading manifests, decoding into models, converting versions and writing them back."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pytest

from dralloc import load
from dralloc.api import codec, conversion
from dralloc.api.quantity import Quantity
from dralloc.api.resource_v1 import DeviceClass, ResourceClaim, ResourceSlice
from dralloc.errors import DecodeError

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpus
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 0, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
      index: {int: 0}
      healthy: {bool: true}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 1.5Gi}
      cores: {value: 108}
"""


def test_a_yaml_slice_decodes_into_typed_fields():
    (obj,) = load(io.StringIO(SLICE))
    assert isinstance(obj, ResourceSlice)
    dev = obj.spec.devices[0]
    assert dev.attributes["model"].string == "A100"
    assert dev.attributes["index"].int_ == 0
    assert dev.attributes["healthy"].bool_ is True
    assert dev.capacity["memory"].value == Quantity("1536Mi")
    assert dev.capacity["cores"].value == Quantity("108")


def test_output_is_camel_case_with_canonical_quantities_and_no_unset_fields():
    (obj,) = load(io.StringIO(SLICE))
    out = codec.to_dict(obj)
    dev = out["spec"]["devices"][0]
    assert dev["capacity"]["memory"] == {"value": "1536Mi"}
    assert dev["attributes"]["index"] == {"int": 0}
    assert "nodeSelector" not in out["spec"] and "allNodes" not in out["spec"]
    # ResourcePool fields are never omitted by kube-apiserver, generation 0 included.
    assert out["spec"]["pool"] == {"name": "node-1", "generation": 0, "resourceSliceCount": 1}
    assert out["spec"]["nodeName"] == "node-1"


def test_load_dump_load_round_trips_unchanged(examples_dir: Path):
    objs = load(examples_dir)
    text = codec.dump_yaml(objs)
    again = load(io.StringIO(text))
    assert [codec.to_dict(o) for o in again] == [codec.to_dict(o) for o in objs]
    assert codec.dump_yaml(again) == text


def test_lists_are_flattened_typed_list_items_get_their_kind():
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClassList",
        "items": [{"metadata": {"name": "a"}, "spec": {}}, {"metadata": {"name": "b"}, "spec": {}}],
    }
    objs = load(io.StringIO(json.dumps(doc)))
    assert [type(o) for o in objs] == [DeviceClass, DeviceClass]
    generic = {"apiVersion": "v1", "kind": "List", "items": [json.loads(json.dumps(doc["items"][0])) | {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass"}]}
    assert [o.metadata.name for o in load(io.StringIO(json.dumps(generic)))] == ["a"]


def test_unknown_kinds_are_skipped_with_a_warning_naming_them():
    text = SLICE + "---\napiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: x}\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        objs = load(io.StringIO(text))
    assert len(objs) == 1
    assert any("CertificateSigningRequest" in str(w.message) and "document 2" in str(w.message) for w in caught)


def test_a_yaml_syntax_error_names_file_document_and_line(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SLICE + "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n")
    with pytest.raises(DecodeError) as err:
        load(bad)
    msg = str(err.value)
    assert str(bad) in msg and "document 2" in msg and "line" in msg


def test_a_wrongly_typed_field_names_its_path():
    text = SLICE.replace("generation: 0", "generation: zero")
    with pytest.raises(DecodeError, match=r"spec\.pool\.generation"):
        load(io.StringIO(text))


def test_a_malformed_quantity_is_a_decode_error():
    with pytest.raises(DecodeError, match="capacity"):
        load(io.StringIO(SLICE.replace("1.5Gi", "1 Gi")))


def test_a_directory_is_read_in_sorted_order(tmp_path: Path):
    (tmp_path / "b.yaml").write_text(SLICE.replace("node-1-gpus", "second"))
    (tmp_path / "a.json").write_text(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))
    (tmp_path / "notes.txt").write_text("ignored")
    names = [o.metadata.name for o in load(tmp_path)]
    assert names == ["n", "second"]


V1BETA1_CLAIM = {
    "apiVersion": "resource.k8s.io/v1beta1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [
        {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2, "adminAccess": False},
        {"name": "alt", "firstAvailable": [{"name": "a", "deviceClassName": "x"}]},
    ]}},
}


def test_v1beta1_requests_gain_an_exactly_and_firstavailable_stays():
    (claim,) = load(io.StringIO(json.dumps(V1BETA1_CLAIM)))
    assert isinstance(claim, ResourceClaim) and claim.api_version == "resource.k8s.io/v1"
    gpu, alt = claim.spec.devices.requests
    assert gpu.exactly.device_class_name == "gpu.example.com" and gpu.exactly.count == 2
    assert gpu.exactly.admin_access is False
    assert alt.exactly is None and alt.first_available[0].name == "a"


def test_v1beta1_devices_lose_basic_and_empty_node_name_means_unset():
    doc = {
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "d", "nodeName": "", "allNodes": True, "pool": {"name": "p", "resourceSliceCount": 1},
                 "devices": [{"name": "x", "basic": {"attributes": {"a": {"int": 1}}}}]},
    }
    (obj,) = load(io.StringIO(json.dumps(doc)))
    assert obj.spec.node_name is None and obj.spec.all_nodes is True
    assert obj.spec.devices[0].attributes["a"].int_ == 1


def test_v1_to_v1beta1_and_back_is_lossless(examples_dir: Path):
    for obj in load(examples_dir / "v1beta1"):
        v1 = codec.to_dict(obj)
        beta = conversion.from_v1(v1, conversion.V1BETA1)
        assert conversion.to_v1(beta) == v1


def test_v1beta2_is_v1_with_another_api_version():
    doc = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}}
    (obj,) = load(io.StringIO(json.dumps(doc)))
    assert obj.api_version == "resource.k8s.io/v1"
    assert conversion.from_v1(codec.to_dict(obj), conversion.V1BETA2)["apiVersion"] == "resource.k8s.io/v1beta2"


def test_yaml_output_quotes_strings_go_would_read_as_booleans():
    (obj,) = load(io.StringIO(SLICE.replace("{string: A100}", "{string: 'y'}")))
    text = codec.dump_yaml(obj)
    assert "string: 'y'" in text
    (again,) = load(io.StringIO(text))
    assert again.spec.devices[0].attributes["model"].string == "y"


def test_timestamps_stay_strings():
    text = SLICE.replace("name: node-1-gpus", "name: node-1-gpus\n  creationTimestamp: 2026-01-02T03:04:05Z")
    (obj,) = load(io.StringIO(text))
    assert obj.metadata.creation_timestamp == "2026-01-02T03:04:05Z"


def test_the_json_fast_path_gives_the_same_objects_as_the_general_path(tmp_path: Path, examples_dir: Path):
    slices = [o for o in load(examples_dir) if isinstance(o, ResourceSlice)]
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
           "items": [codec.to_dict(s) for s in slices]}
    path = tmp_path / "slices.json"
    path.write_text(json.dumps(doc))
    fast = load(path)
    general = load(io.StringIO(json.dumps(doc)))
    assert [codec.to_dict(o) for o in fast] == [codec.to_dict(o) for o in general]


def test_the_json_fast_path_falls_back_to_worded_errors(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                                "items": [{"metadata": {"name": "x"}, "spec": {"pool": {"generation": "one"}}}]}))
    with pytest.raises(DecodeError, match=r"spec\.pool\.generation"):
        load(path)


def test_to_dict_always_keeps_api_version_and_kind() -> None:
    from dralloc.api.codec import decode, encode_json, to_dict

    node = decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert to_dict(node)["apiVersion"] == "v1" and to_dict(node)["kind"] == "Node"
    cls = decode({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}})
    assert b'"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass"' in encode_json(cls)


@pytest.mark.parametrize(("header", "message"), [
    ("apiVersion: v1\nkind: {a: 1}", "cannot unmarshal object into Go struct field TypeMeta.kind of type string"),
    ("apiVersion: [v1]\nkind: Node", "cannot unmarshal array into Go struct field TypeMeta.apiVersion of type string"),
    ("apiVersion: v1\nkind: 5", "cannot unmarshal number into Go struct field TypeMeta.kind of type string"),
])
def test_an_api_version_or_kind_that_is_not_a_string_is_a_decode_error(header: str, message: str):
    text = f"{header}\nmetadata: {{name: x}}\n"
    with pytest.raises(DecodeError, match=message):
        codec.load_checked([io.StringIO(text)])


def test_pod_affinity_terms_are_typed_so_a_misshapen_selector_names_its_path():
    text = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: i}]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: true}
        topologyKey: zone
"""
    with pytest.raises(DecodeError, match=r"podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]"
                                          r"\.labelSelector\.matchLabels: json: cannot unmarshal bool into Go struct "
                                          r"field LabelSelector\.spec\.affinity\.podAntiAffinity\."
                                          r"requiredDuringSchedulingIgnoredDuringExecution\.labelSelector\.matchLabels "
                                          r"of type map\[string\]string$"):
        load(io.StringIO(text))
