"""The Alibaba GPU trace as DRA objects: what each CSV column becomes, and bad rows named by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from dralloc.api import codec
from dralloc.errors import InputError
from dralloc.trace import alibaba
from dralloc.validation import validate

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,16000,65536,2,T4\ncpu-only,32000,65536,0,\n"
PODS = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "share,4000,8192,1,460,,LS,Running,10,20,10\n"
        "two,8000,8192,2,1000,V100M16|T4|V100M16,LS,Running,11,,11\n"
        "cpu,2000,1024,0,0,,BE,Running,12,30,12\n")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_gpu_nodes_become_nodes_with_a_slice_of_shareable_gpus(tmp_path: Path) -> None:
    nodes = alibaba.read_nodes(write(tmp_path, "n.csv", NODES))
    docs = alibaba.cluster_documents(nodes)
    kinds = [d["kind"] for d in docs]
    assert kinds == ["DeviceClass", "Node", "ResourceSlice"]  # the node without GPUs is left out
    node, slice_ = docs[1], docs[2]
    assert node["status"]["allocatable"] == {"cpu": "16000m", "memory": "65536Mi", "pods": "110"}
    devices = slice_["spec"]["devices"]
    assert [d["name"] for d in devices] == ["gpu-0", "gpu-1"]
    assert devices[1]["attributes"] == {"model": {"string": "T4"}, "index": {"int": 1}}
    assert devices[0]["capacity"] == {"milli": {"value": "1000"}}
    assert devices[0]["allowMultipleAllocations"] is True
    assert slice_["spec"]["nodeName"] == "n1" and slice_["spec"]["pool"]["name"] == "n1"


def test_pods_get_claims_for_a_share_or_whole_gpus_and_a_model_selector(tmp_path: Path) -> None:
    pods = alibaba.read_pods(write(tmp_path, "p.csv", PODS))
    assert pods[1].gpu_spec == ("V100M16", "T4")  # split on |, duplicates dropped
    assert pods[0].creation_time == 10 and pods[1].deletion_time is None
    docs = alibaba.workload_documents(pods)
    assert [d["kind"] for d in docs] == ["ResourceClaim", "Pod", "ResourceClaim", "Pod", "Pod"]
    share = docs[0]["spec"]["devices"]["requests"][0]["exactly"]
    assert share["count"] == 1 and share["capacity"] == {"requests": {"milli": "460"}}
    assert "selectors" not in share
    two = docs[2]["spec"]["devices"]["requests"][0]["exactly"]
    assert two["count"] == 2 and two["capacity"] == {"requests": {"milli": "1000"}}
    assert two["selectors"][0]["cel"]["expression"] == \
        'device.attributes["gpu.dralloc.io"].model in ["V100M16", "T4"]'
    pod = docs[1]
    assert pod["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimName": "share-gpu"}]
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "4000m", "memory": "8192Mi"}
    assert "resourceClaims" not in docs[4]["spec"]  # the CPU-only pod


def test_every_generated_object_passes_validation(tmp_path: Path) -> None:
    docs = alibaba.cluster_documents(alibaba.read_nodes(write(tmp_path, "n.csv", NODES)))
    docs += alibaba.workload_documents(alibaba.read_pods(write(tmp_path, "p.csv", PODS)))
    for doc in docs:
        assert validate(codec.decode(doc)) == [], doc["metadata"]["name"]


@pytest.mark.parametrize(("text", "message"), [
    ("name,cpu_milli\nx,1\n", "missing column(s) memory_mib, num_gpu, gpu_milli"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,one,0\n", ":2: num_gpu: not an integer: 'one'"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,2,500\n", ":2: gpu_milli: a pod with several GPUs"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,1,0\ny,1,2,0,0\n", ":2: gpu_milli: a pod with num_gpu 1"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,0,0\nx,1,2,0,0\n", ":3: name: pod 'x' appears twice"),
    ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,-1,2,0,0\n", ":2: cpu_milli: must not be negative"),
])
def test_bad_pod_rows_are_named_by_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=None) as err:
        alibaba.read_pods(write(tmp_path, "p.csv", text))
    assert message in str(err.value)


def test_a_gpu_share_above_a_whole_gpu_is_clamped(tmp_path: Path) -> None:
    pods = alibaba.read_pods(write(tmp_path, "p.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,2,1,1500\n"))
    assert pods[0].gpu_milli == 1000
