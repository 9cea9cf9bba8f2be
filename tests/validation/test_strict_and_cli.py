"""Strict decoding, `dralloc validate` and `dralloc convert` from the outside."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dralloc.api.strict import duplicates_by_document, field_problems, unknown_fields
from dralloc.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_unknown_fields_have_paths() -> None:
    raw = (b'{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c","nmae":"x"},'
           b'"spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"c","cuont":2}}]}}}')
    assert field_problems(raw) == ['unknown field "metadata.nmae"',
                                   'unknown field "spec.devices.requests[0].exactly.cuont"']


def test_opaque_parameters_are_free_form() -> None:
    data = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
            "spec": {"config": [{"opaque": {"driver": "d.io", "parameters": {"anything": {"goes": 1}}}}]}}
    assert unknown_fields(data) == []


def test_duplicate_keys_json_and_yaml() -> None:
    assert field_problems(b'{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",'
                          b'"metadata":{"name":"a","name":"b"}}') == ['duplicate field "metadata.name"']
    text = "kind: DeviceClass\napiVersion: resource.k8s.io/v1\nmetadata:\n  name: a\nspec:\n  selectors: []\n  selectors: []\n"
    assert field_problems(text, yaml_input=True) == ['duplicate field "spec.selectors"']


def test_duplicates_are_found_per_document() -> None:
    text = "a: 1\n---\nb: 1\nb: 2\n---\nc: {d: 1, d: 2}\n"
    assert duplicates_by_document(text) == {2: ['duplicate field "b"'], 3: ['duplicate field "c.d"']}


def test_v1beta1_basic_fields_are_known() -> None:
    data = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d.io", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                     "devices": [{"name": "d", "basic": {"attributes": {"a": {"int": 1}}, "typo": 1}}]}}
    assert unknown_fields(data) == ['unknown field "spec.devices[0].typo"']


def test_validate_examples_are_clean(capsys) -> None:
    assert main(["validate", "-f", str(EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert "ResourceSlice/gpu-node-1-gpu.nvidia.com-devices: valid" in out


def test_validate_invalid_examples_exit_2_with_paths(capsys) -> None:
    assert main(["validate", "-f", str(EXAMPLES / "invalid"), "--strict"]) == 2
    out = capsys.readouterr().out
    assert ('ResourceSlice/node-1-gpus: spec.devices[0].name: Invalid value: "GPU_0": a lowercase RFC 1123 label'
            in out)
    assert 'ResourceSlice/node-1-gpus: unknown field "spec.devices[2].unknownField"' in out
    assert "ResourceClaim/broken-claim: spec.devices.requests[0].exactly.count: Invalid value: 2" in out


def test_unknown_fields_are_warnings_without_strict(capsys, tmp_path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectr: []}\n")
    assert main(["validate", "-f", str(f)]) == 0
    captured = capsys.readouterr()
    assert "DeviceClass/c: valid" in captured.out
    assert 'warning: DeviceClass/c: unknown field "spec.selectr"' in captured.err
    assert main(["validate", "-f", str(f), "--strict"]) == 2


def test_validate_json_output(capsys) -> None:
    assert main(["validate", "-f", str(EXAMPLES / "invalid" / "class-mistakes.yaml"), "-o", "json"]) == 2
    reports = json.loads(capsys.readouterr().out)
    assert reports[0]["kind"] == "DeviceClass" and reports[0]["valid"] is False
    fields = [e["field"] for e in reports[0]["errors"]]
    assert fields == ["metadata.name", "spec.selectors[0].cel.expression", "spec.selectors[1].cel",
                      "spec.extendedResourceName"]
    assert reports[0]["errors"][2]["type"] == "FieldValueRequired"


def test_decode_errors_are_reported_per_document(capsys, tmp_path) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a}\n---\n"
                 "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: b}\nspec: {devices: 3}\n")
    assert main(["validate", "-f", str(f)]) == 2
    out = capsys.readouterr().out
    assert "DeviceClass/a: valid" in out
    assert "ResourceSlice/b:" in out and "spec.devices" in out


@pytest.mark.slow
def test_validate_cli_process_never_tracebacks(tmp_path) -> None:
    f = tmp_path / "broken.yaml"
    f.write_text("kind: [unclosed\n")
    proc = subprocess.run([sys.executable, "-m", "dralloc", "validate", "-f", str(f)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "document 1: line 2" in proc.stderr


def test_convert_v1beta1_to_v1(capsys) -> None:
    assert main(["convert", "-f", str(EXAMPLES / "v1beta1")]) == 0
    out = capsys.readouterr().out
    assert "apiVersion: resource.k8s.io/v1\n" in out
    assert "basic:" not in out and "exactly:" in out
