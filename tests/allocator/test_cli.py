"""`dralloc allocate` and `dralloc bench allocate`: outputs and every exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from cases_loader import expand

from dralloc.cli.main import main

HERE = Path(__file__).resolve().parent


def _write(tmp_path, objs, name="in.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all([expand(o) for o in objs]))
    return str(path)


BASE = [
    {"kind": "DeviceClass", "name": "gpu", "driver": "d.example.com"},
    {"kind": "ResourceSlice", "name": "s1", "driver": "d.example.com", "pool": "p1", "nodeName": "node-1",
     "devices": ["gpu-0"]},
]


def test_allocated_prints_the_claims_as_a_list_and_exits_0(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    claim = doc["items"][0]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def test_yaml_and_table_outputs(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f]) == 0
    doc = yaml.safe_load(capsys.readouterr().out)
    assert doc["kind"] == "List"
    assert main(["allocate", "-f", f, "-o", "table"]) == 0
    assert "gpu-0" in capsys.readouterr().out


def test_results_output_has_the_oracle_shape(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f, "-o", "results"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "ok": true,\n  "status": "allocated",\n  "results": [')


def test_unschedulable_exits_1_with_an_explanation(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu", "count": 2}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f]) == 1
    err = capsys.readouterr().err
    assert "claim default/c1, request r: needs 2, node offers 1, 1 usable" in err
    assert main(["allocate", "-f", f, "-o", "json", "--explain"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "unschedulable"
    assert doc["nodes"][0]["requests"][0]["usable"] == 1
    assert main(["allocate", "-f", f, "-o", "results"]) == 1
    assert json.loads(capsys.readouterr().out) == {"ok": False, "status": "unschedulable", "unschedulable": True}


def test_invalid_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {devices: 3}\n")
    assert main(["allocate", "-f", str(bad), "--node", "node-1"]) == 2
    assert main(["allocate", "-f", str(tmp_path / "missing.yaml")]) == 2


def test_no_node_exits_2(tmp_path, capsys):
    f = _write(tmp_path, BASE)
    assert main(["allocate", "-f", f]) == 2
    assert "Node" in capsys.readouterr().err


def test_allocation_error_exits_3(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "nope"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f]) == 3
    assert 'could not retrieve device class nope' in capsys.readouterr().err
    assert main(["allocate", "-f", f, "-o", "results"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "error" and doc["ok"] is False and "nope" in doc["error"]


def test_several_nodes_use_the_first_that_fits_and_say_which(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-0"}, {"kind": "Node", "name": "node-1"}])
    assert main(["allocate", "-f", f, "-o", "results"]) == 0
    assert "allocated on node node-1" in capsys.readouterr().err
    assert main(["allocate", "-f", f, "--node", "node-0", "-o", "results"]) == 1


def test_bench_prints_json(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["bench", "allocate", "-f", f, "--iterations", "3", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "allocated" and doc["iterations"] == 3
    assert doc["fresh_us"] > 0 and doc["reused_us"] > 0
    assert doc["steps"] == 4  # claim start, one slot, end of request, end of claims


def test_bench_prints_the_search_steps(tmp_path, capsys):
    f = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                 {"kind": "Node", "name": "node-1"}])
    assert main(["bench", "allocate", "-f", f, "--iterations", "3"]) == 0
    assert "steps:    4\n" in capsys.readouterr().out


@pytest.mark.slow
def test_console_script_exit_codes(tmp_path, dralloc_cmd):
    ok = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                                  {"kind": "Node", "name": "node-1"}], "ok.yaml")
    unsched = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu", "count": 5}]},
                                       {"kind": "Node", "name": "node-1"}], "unsched.yaml")
    err = _write(tmp_path, BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "x"}]},
                                   {"kind": "Node", "name": "node-1"}], "err.yaml")
    codes = [subprocess.run(dralloc_cmd + ["allocate", "-f", f], capture_output=True, text=True).returncode
             for f in (ok, unsched, str(tmp_path / "missing.yaml"), err)]
    assert codes == [0, 1, 2, 3]


def test_device_taint_rules_taint_the_selected_devices(tmp_path, capsys):
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "maint"},
            "spec": {"deviceSelector": {"driver": "d.example.com", "device": "gpu-0"},
                     "taint": {"key": "maintenance", "effect": "NoSchedule"}}}
    objs = BASE + [{"kind": "ResourceClaim", "name": "c1", "requests": [{"name": "r", "class": "gpu"}]},
                   {"kind": "Node", "name": "node-1"}]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([expand(o) for o in objs] + [rule]))
    assert main(["allocate", "-f", str(path)]) == 1
    assert "taint not tolerated" in capsys.readouterr().err


def test_explain_says_when_upstream_would_time_out_before_this_allocation(tmp_path, capsys):
    # claim z needs the first four "other" devices, which claim a takes first in upstream's order: for every
    # choice of claim a that holds one of them upstream tries every alternation of claim b before claim z
    # fails. dralloc gets the same answer at once; --explain says that kube-scheduler would time out.
    numa = [0, 1, 0, 2, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0]
    first_four = 'device.attributes["o.example.com"].index < 4'
    objs = [{"kind": "DeviceClass", "name": "any", "driver": "d.example.com"},
            {"kind": "DeviceClass", "name": "other", "driver": "o.example.com"},
            {"kind": "ResourceSlice", "name": "s", "driver": "d.example.com", "pool": "p", "nodeName": "node-1",
             "devices": [{"name": f"dev-{i:02d}", "attributes": {"numa": {"int": n}}} for i, n in enumerate(numa)]},
            {"kind": "ResourceSlice", "name": "t", "driver": "o.example.com", "pool": "q", "nodeName": "node-1",
             "devices": [{"name": f"o-{i:02d}", "attributes": {"index": {"int": i}}} for i in range(30)]},
            {"kind": "ResourceClaim", "name": "a", "requests": [{"name": "r", "class": "other", "count": 4}]},
            {"kind": "ResourceClaim", "name": "b", "requests": [{"name": "r", "class": "any", "count": 8}],
             "constraints": [{"distinctAttribute": "d.example.com/numa"}]},
            {"kind": "ResourceClaim", "name": "z", "requests": [{"name": "r", "class": "other", "count": 4,
                                                                 "selectors": [first_four]}]},
            {"kind": "Node", "name": "node-1"}]
    f = _write(tmp_path, objs)
    assert main(["allocate", "-f", f, "-o", "results", "--explain"]) == 0
    captured = capsys.readouterr()
    picked = [[r["device"] for r in res["devices"]["results"]] for res in json.loads(captured.out)["results"]]
    assert picked[0] == ["o-04", "o-05", "o-06", "o-07"] and picked[2] == ["o-00", "o-01", "o-02", "o-03"]
    assert "past its 10 s DRA filter timeout" in captured.err
    assert main(["allocate", "-f", f, "-o", "results"]) == 0
    assert "timeout" not in capsys.readouterr().err


@pytest.mark.slow
def test_explain_says_why_upstreams_timeout_is_the_answer(tmp_path, capsys):
    # generated hard input 385: upstream's search provably runs past kube-scheduler's filter timeout
    from hard_inputs import hard_case_dicts

    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(hard_case_dicts(385)))
    assert main(["allocate", "-f", str(path), "--explain"]) == 3
    err = capsys.readouterr().err
    assert "error: filter operation aborted: context deadline exceeded" in err
    assert 'it reports "node node-0: timed out trying to allocate devices"' in err
    assert "at an assumed 5 µs a step" in err
    assert main(["allocate", "-f", str(path)]) == 3
    assert "assumed" not in capsys.readouterr().err


@pytest.mark.slow
def test_filter_timeout_zero_answers_with_what_the_search_reaches(tmp_path, capsys):
    # generated hard input 245: with kube-scheduler's default 10 s the answer is its timeout; with the timeout
    # off (--filter-timeout 0, as filterTimeout: 0s), the allocation dralloc's search finds
    from hard_inputs import hard_case_dicts

    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(hard_case_dicts(245)))
    assert main(["allocate", "-f", str(path)]) == 3
    assert "context deadline exceeded" in capsys.readouterr().err
    assert main(["allocate", "-f", str(path), "--filter-timeout", "0s", "-o", "results"]) == 0
    assert main(["allocate", "-f", str(path), "--filter-timeout", "soon"]) == 2
    assert capsys.readouterr().err.endswith('error: --filter-timeout: time: invalid duration "soon"\n')
