"""The strict loading path shared by validate, allocate and simulate: codec.load_checked / iter_checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api import codec, parsing, strict
from dralloc.errors import DecodeError

CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
       "spec": {"containers": [{"name": "c", "image": "x", "terminationMessagePath": "/dev/termination-log"}],
                "dnsPolicy": "ClusterFirst"}}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_json_list_reports_each_items_duplicates_under_that_item(tmp_path) -> None:
    text = ('{"apiVersion":"v1","kind":"List","items":[' + json.dumps(CLASS) + ","
            '{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"b","name":"c"},"spec":{}}]}')
    objects, problems = codec.load_checked([_write(tmp_path, "l.json", text)])
    assert [o.metadata.name for o in objects] == ["gpu", "c"]
    assert [str(p) for p in problems] == ['DeviceClass/c: duplicate field "metadata.name"']


def test_yaml_duplicates_are_found_by_the_fast_builder_with_paths(tmp_path) -> None:
    text = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a}\n"
            "spec:\n  selectors:\n  - cel: {expression: 'true', expression: 'false'}\n")
    objects, problems = codec.load_checked([_write(tmp_path, "c.yaml", text)])
    assert [p.message for p in problems] == ['duplicate field "spec.selectors[0].cel.expression"']
    assert objects[0].spec.selectors[0].cel.expression == "false"  # the last one wins, as in Go


def test_unknown_fields_are_not_reported_inside_a_pod_spec_dralloc_models_in_part(tmp_path) -> None:
    bad_class = {**CLASS, "spec": {"selectr": []}}
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [bad_class, POD]})
    objects, problems = codec.load_checked([_write(tmp_path, "d.json", text)])
    assert [type(o).__name__ for o in objects] == ["DeviceClass", "Pod"]
    # dnsPolicy and terminationMessagePath exist upstream; dralloc just does not model them
    assert [str(p) for p in problems] == ['DeviceClass/gpu: unknown field "spec.selectr"']


def test_every_bad_document_is_yielded_and_load_checked_raises_on_the_first(tmp_path) -> None:
    text = ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: ok}\n---\n"
            "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: bad}\nspec: {devices: 3}\n")
    path = _write(tmp_path, "x.yaml", text)
    checked = list(codec.iter_checked([path]))
    assert [c.error is None for c in checked] == [True, False]
    assert checked[1].kind == "ResourceSlice" and checked[1].name == "bad"
    assert checked[1].document.line == 5
    with pytest.raises(DecodeError, match="document 2"):
        codec.load_checked([path])


def test_yaml_syntax_errors_name_the_document_they_are_in(tmp_path) -> None:
    path = _write(tmp_path, "y.yaml", "a: 1\n---\nb: [unclosed\n")
    with pytest.raises(DecodeError, match=r"document 2: line 4"):
        codec.load_checked([path])


@pytest.mark.parametrize("text", [
    "a: &x {b: 1}\nc: *x\n",  # aliases share the object, as PyYAML does
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",  # merge keys go to the node loader
    "t: 2026-11-01T00:00:00Z\nd: 2026-11-01\n",  # timestamps stay text, as Kubernetes keeps them
    "i: 0x1F\nj: 1_000\nk: 0o17\nf: .inf\nn: ~\nb: yes\nq: 'yes'\ns: !!str 5\ne:\n",
    "- 1\n- [2, {a: b}]\n- !!binary aGVsbG8=\n",
])
def test_the_event_builder_reads_yaml_exactly_as_pyyaml_does(text: str) -> None:
    loader = parsing.CheckedYAMLLoader(text)
    expected = loader.get_single_data()
    loader.dispose()
    [(_, data, dups)] = parsing.load_yaml_documents(text)
    assert repr(data) == repr(expected) and dups == []


def test_a_collection_as_a_key_is_the_same_error_as_in_pyyaml(tmp_path) -> None:
    with pytest.raises(DecodeError, match="found unhashable key"):
        codec.load_checked([_write(tmp_path, "k.yaml", "? [a, b]\n: c\n")])


def test_merged_keys_may_be_overridden_but_own_keys_may_not_repeat() -> None:
    text = "base: &b {x: 1}\nd:\n  <<: *b\n  x: 2\n  y: 3\n  y: 4\n"
    [(_, data, dups)] = parsing.load_yaml_documents(text)
    assert data["d"] == {"x": 2, "y": 4} and dups == ["d.y"]


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.text(max_size=8),
                     st.floats(allow_nan=False), st.sampled_from(["yes", "No", "~", "0x10", "1e3", "null", ""]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=20)


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(_values, min_size=1, max_size=3), flow=st.booleans())
def test_any_dumped_yaml_reads_back_the_same_through_both_builders(docs, flow) -> None:
    text = yaml.dump_all(docs, Dumper=yaml.SafeDumper, default_flow_style=flow)
    loader = parsing.CheckedYAMLLoader(text)
    expected = []
    while loader.check_node():
        expected.append(loader.get_data())
    loader.dispose()
    assert [d for _, d, _ in parsing.load_yaml_documents(text)] == expected


def test_json_and_yaml_of_the_same_objects_load_alike(tmp_path) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [CLASS, POD]}
    from_json = codec.load_checked([_write(tmp_path, "a.json", json.dumps(doc))])
    from_yaml = codec.load_checked([_write(tmp_path, "a.yaml", yaml.safe_dump(doc))])
    assert from_json == from_yaml


def _dict_paths(value: object, path: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(value, dict):
        out.append(path)
        for k, v in value.items():
            out += _dict_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _dict_paths(v, (*path, i))
    return out


_EXAMPLE_DOCS = [d.data for d in codec.read_documents(Path(__file__).resolve().parents[2] / "examples")
                 if isinstance(d.data, dict) and d.data.get("apiVersion", "").startswith("resource.k8s.io")]


@settings(max_examples=80, deadline=None)
@given(data=st.data(), key=st.sampled_from(["typo", "name", "value", "string", "counters", "x-y"]))
def test_the_quick_unknown_field_check_agrees_with_the_full_walk(data, key) -> None:
    import copy

    doc = copy.deepcopy(data.draw(st.sampled_from(_EXAMPLE_DOCS)))
    target = data.draw(st.sampled_from(_dict_paths(doc)))
    parent = doc
    for step in target:
        parent = parent[step]
    parent[key] = "injected"
    model = codec.model_for(doc["apiVersion"], doc["kind"])
    found: list[str] = []
    strict._walk(doc, strict._node(model), "", found)
    assert strict.unknown_fields(doc) == [f'unknown field "{p}"' for p in found]


def test_skipped_kinds_are_summed_up_in_one_warning_per_kind(tmp_path) -> None:
    endpoints = [{"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": f"s{i}"}} for i in range(3)]
    webhook = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": {"name": "i"}}
    path = _write(tmp_path, "all.json", json.dumps({"apiVersion": "v1", "kind": "List",
                                                    "items": [*endpoints, webhook, CLASS]}))
    with pytest.warns(codec.UnknownKindWarning) as caught:
        objects, _ = codec.load_checked([path])
    assert [o.metadata.name for o in objects] == ["gpu"]
    messages = sorted(str(w.message) for w in caught)
    assert messages == [(f"{path}: document 1 (line 1) and 2 more: skipping 3 Endpoints objects (v1): "
                         "not a kind dralloc reads"),
                        f"{path}: document 1 (line 1): skipping CertificateSigningRequest (certificates.k8s.io/v1): "
                        "not a kind dralloc reads"]


def test_the_collector_pause_restores_the_previous_state_even_on_errors() -> None:
    import gc

    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), codec.cyclic_gc_paused():
        assert not gc.isenabled()
        1 / 0  # noqa: B018
    assert gc.isenabled()
    gc.disable()
    try:
        with codec.cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000),
                          st.sampled_from(['a":b', 'q"', "x:y", "\\", "é", '"', ":", "plain", "a > b && c"]))


def _render(value: object, draw) -> str:
    if isinstance(value, list):
        return "[" + ",".join(_render(v, draw) for v in value) + "]"
    if isinstance(value, tuple):  # an object as a list of pairs: keys may repeat
        sep = draw(st.sampled_from([":", ": ", " :", "\n:"]))
        return "{" + ",".join(_string(k, draw) + sep + _render(v, draw) for k, v in value) + "}"
    if isinstance(value, str):
        return _string(value, draw)
    return json.dumps(value)


def _string(text: str, draw) -> str:
    encoded = json.dumps(text, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):  # some writers escape quotes and colons as \u sequences
        colon = draw(st.sampled_from(["\\u003a", "\\u003A"]))
        encoded = '"' + encoded[1:-1].replace('\\"', "\\u0022").replace(":", colon) + '"'
    if draw(st.booleans()):  # Go's encoder escapes <, > and & (as in CEL expressions)
        encoded = encoded.replace(">", "\\u003e").replace("&", "\\u0026")
    return encoded


_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.lists(st.tuples(st.sampled_from(["a", "b", 'k":', "c"]), inner), max_size=4).map(tuple)),
    max_leaves=15)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(value=_json_values.filter(lambda v: isinstance(v, tuple)), data=st.data())
def test_the_quick_json_path_finds_exactly_the_repeats_the_pairs_hook_finds(value, data) -> None:
    text = _render(value, data.draw)
    assert parsing.load_json_checked(text) == parsing._load_json_noting_repeats(text)
    assert parsing.load_json_checked(text.encode()) == parsing._load_json_noting_repeats(text)


def test_an_object_that_appears_twice_is_an_error_naming_both_places(tmp_path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    first = tmp_path / "a.yaml"
    first.write_text(yaml.safe_dump_all([node, pod]))
    again = tmp_path / "b.yaml"
    again.write_text(yaml.safe_dump({**pod, "metadata": {"name": "p", "namespace": "default"}}))
    with pytest.raises(DecodeError, match=r'b\.yaml: document 1 \(line 1\): Pod "default/p" already exists '
                                          r'\(first at .*a\.yaml: document 2'):
        codec.load_checked([str(first), str(again)])
    # The same name in another namespace, or for another kind, is another object.
    again.write_text(yaml.safe_dump_all([{**pod, "metadata": {"name": "p", "namespace": "other"}},
                                         {**node, "kind": "Namespace"}]))
    objects, _ = codec.load_checked([str(first), str(again)])
    assert len(objects) == 4


@pytest.mark.parametrize("merge", [False, True])  # (a merge key sends the stream through the node loader)
def test_a_yaml_float_is_the_json_number_go_writes_for_it(merge: bool) -> None:
    # sigs.k8s.io/yaml converts YAML to JSON with json.Marshal: an integral float below 1e21 is written as an
    # integer, so `containerPort: 80.0` reaches the decoder as 80, which an int32 field takes
    text = "base: &b {x: 1}\n" + ("m:\n  <<: *b\n" if merge else "m:\n") + \
        "  port: 80.0\n  big: 1.0e+21\n  half: 0.5\n  neg: -2.0\n  inf: .inf\n"
    (_, data, _), = parsing.load_yaml_documents(text)
    values = {k: data["m"][k] for k in ("port", "big", "half", "neg", "inf")}
    assert values == {"port": 80, "big": 1e21, "half": 0.5, "neg": -2, "inf": float("inf")}
    assert [type(values[k]) for k in ("port", "big", "half", "neg")] == [int, float, float, int]


def test_a_manifest_with_an_integral_yaml_float_in_an_int_field_is_valid(tmp_path) -> None:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
           "spec:\n  containers:\n  - name: c\n    image: x\n    ports: [{containerPort: PORT}]\n")
    (loaded,), problems = codec.load_checked([_write(tmp_path, "ok.yaml", pod.replace("PORT", "80.0"))])
    assert problems == [] and loaded.spec.containers[0].ports[0].container_port == 80
    with pytest.raises(DecodeError, match="cannot unmarshal number 80.5 into Go struct field ContainerPort"):
        codec.load_checked([_write(tmp_path, "bad.yaml", pod.replace("PORT", "80.5"))])
