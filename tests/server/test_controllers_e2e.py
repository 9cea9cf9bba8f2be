"""End to end: `dralloc serve` schedules pods with DRA claims, as kubectl and the Python client see it over
HTTPS with the generated CA and the admin token (`dralloc kubeconfig`)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served import EXAMPLES, KUBECTL, Server

pytestmark = pytest.mark.e2e

SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
"""
SHARED_CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
"""


def _pod(name: str, claim: str) -> str:
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{{name: main, image: "x:1", resources: {{claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, {claim}}}]
"""


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Server, Any]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, tmp_path / "db.sqlite", extra=[])  # HTTPS with the admin token
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}

    def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([KUBECTL, *args], check=False, input=stdin, capture_output=True, text=True, env=env, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    kubectl.kubeconfig = cfg  # type: ignore[attr-defined]
    yield server, kubectl
    server.stop()


def _example_without(kind: str) -> str:
    docs = (EXAMPLES / "pod-with-claim.yaml").read_text().split("\n---\n")
    return "\n---\n".join(d for d in docs if f"\nkind: {kind}\n" not in f"\n{d}\n")


def test_a_pod_with_a_template_claim_is_scheduled_bound_and_its_claim_allocated_and_reserved(cluster) -> None:
    _, kubectl = cluster
    kubectl("apply", "-f", str(EXAMPLES / "pod-with-claim.yaml"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "--timeout=20s")
    table = kubectl("get", "pods,resourceclaims", "-o", "wide").stdout
    assert any(line.startswith("pod/trainer") and " node-1 " in line for line in table.splitlines())
    claim_line = next(line for line in table.splitlines() if line.startswith("resourceclaim"))
    assert "trainer-gpu-" in claim_line and "allocated,reserved" in claim_line

    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes import client, config

    api = client.ApiClient(config.load_kube_config(config_file=str(kubectl.kubeconfig)) or None)
    pod = client.CoreV1Api(api).read_namespaced_pod("trainer", "default")
    assert pod.spec.node_name == "node-1"
    claim_name = pod.status.resource_claim_statuses[0].resource_claim_name
    claim = client.CustomObjectsApi(api).get_namespaced_custom_object("resource.k8s.io", "v1", "default",
                                                                       "resourceclaims", claim_name)
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer", "uid": pod.metadata.uid}]
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    events = client.CoreV1Api(api).list_namespaced_event("default", field_selector="reason=Scheduled").items
    assert [e.message for e in events] == ["Successfully assigned default/trainer to node-1"]
    assert kubernetes is not None


def test_a_pending_pod_shows_failed_scheduling_then_is_scheduled_when_a_slice_appears(cluster) -> None:
    _, kubectl = cluster
    kubectl("apply", "-f", "-", stdin=_example_without("ResourceSlice"))
    kubectl("wait", "--for=jsonpath={.status.conditions[0].reason}=Unschedulable", "pod/trainer", "--timeout=20s")
    described = kubectl("describe", "pod", "trainer").stdout
    assert "FailedScheduling" in described and "default-scheduler" in described
    assert "0/1 nodes are available: 1 cannot allocate all claims." in described
    kubectl("apply", "-f", "-", stdin=SLICE)
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "--timeout=20s")
    assert "Successfully assigned default/trainer to node-1" in kubectl("describe", "pod", "trainer").stdout


def test_deleting_pods_deletes_the_generated_claim_and_unreserves_and_deallocates_a_shared_one(cluster) -> None:
    _, kubectl = cluster
    kubectl("apply", "-f", str(EXAMPLES / "pod-with-claim.yaml"))
    kubectl("apply", "-f", "-", stdin=SLICE.replace("[{name: gpu-0}]", "[{name: gpu-0}, {name: gpu-1}]"))
    kubectl("apply", "-f", "-", stdin=SHARED_CLAIM + "---\n" + _pod("user", "resourceClaimName: shared"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "pod/user", "--timeout=20s")
    assert "allocated,reserved" in kubectl("get", "resourceclaim", "shared").stdout
    kubectl("delete", "pod", "trainer", "user", "--grace-period=1")
    deadline = time.monotonic() + 20
    while True:
        shared = json.loads(kubectl("get", "resourceclaim", "shared", "-o", "json").stdout)
        names = kubectl("get", "resourceclaims", "-o", "name").stdout.split()
        done = "status" not in shared and names == ["resourceclaim.resource.k8s.io/shared"]
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert "status" not in shared and "finalizers" not in shared["metadata"]
    assert names == ["resourceclaim.resource.k8s.io/shared"]


def test_a_noexecute_device_taint_evicts_the_pod_using_the_device(cluster) -> None:
    _, kubectl = cluster
    kubectl("apply", "-f", "-", stdin=_example_without("Pod") + "\n---\n" + _pod("victim", "resourceClaimTemplateName: one-gpu"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/victim", "--timeout=20s")
    rule = """apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata: {name: gpu-broken}
spec:
  deviceSelector: {driver: gpu.example.com, device: gpu-0}
  taint: {key: example.com/broken, effect: NoExecute}
"""
    kubectl("apply", "-f", "-", stdin=rule)
    kubectl("wait", "--for=delete", "pod/victim", "--timeout=20s")
    kubectl("wait", "--for=jsonpath={.status.conditions[0].reason}=Completed", "devicetaintrule/gpu-broken",
            "--timeout=20s")
    events = kubectl("get", "events", "--field-selector", "reason=DeviceTaintManagerEviction", "-o", "json").stdout
    assert [e["message"] for e in json.loads(events)["items"]] == ["Marking for deletion"]
    assert kubectl("get", "resourceclaims", "-o", "name").stdout.strip() == ""


HIGH_PRIORITY = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
"""


def _priority_pod(name: str, priority_class: str = "") -> str:
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  priorityClassName: "{priority_class}"
  terminationGracePeriodSeconds: 2
  containers: [{{name: main, image: "x:1", resources: {{requests: {{cpu: "6"}}, claims: [{{name: gpu}}]}}}}]
  resourceClaims: [{{name: gpu, resourceClaimName: shared}}]
"""


def test_a_preemption_victim_terminates_for_its_grace_period_then_the_preemptor_gets_its_node_and_claim(
        cluster) -> None:
    # low holds the only GPU (through the shared claim) and 6 of the node's 8 cpus; high needs both.
    _, kubectl = cluster
    kubectl("apply", "-f", "-", stdin=_example_without("Pod") + "\n---\n" + SHARED_CLAIM + "---\n"
            + _priority_pod("low"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/low", "--timeout=20s")
    kubectl("apply", "-f", "-", stdin=HIGH_PRIORITY + _priority_pod("high", "high"))
    kubectl("wait", "--for=jsonpath={.status.nominatedNodeName}=node-1", "pod/high", "--timeout=20s")
    seen = json.loads(kubectl("get", "pods,resourceclaims", "-o", "json").stdout)["items"]
    low, high, claim = (next(o for o in seen if o["metadata"]["name"] == n) for n in ("low", "high", "shared"))
    assert low["metadata"]["deletionTimestamp"] and low["metadata"]["deletionGracePeriodSeconds"] == 2
    assert [(c["status"], c["reason"]) for c in low["status"]["conditions"] if c["type"] == "DisruptionTarget"] == [
        ("True", "PreemptionByScheduler")]
    assert "nodeName" not in high["spec"] and high["status"]["phase"] == "Pending"
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["low"]  # until low is gone

    kubectl("wait", "--for=delete", "pod/low", "--timeout=20s")
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/high", "--timeout=20s")
    claim = json.loads(kubectl("get", "resourceclaim", "shared", "-o", "json").stdout)
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["high"]
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    # kube-scheduler's sequence: the preempting cycle's FailedScheduling (no preemption text: it succeeded),
    # nothing while the victim terminates, then Scheduled once it is gone.
    events = json.loads(kubectl("get", "events", "--field-selector", "involvedObject.name=high",
                                "-o", "json").stdout)["items"]
    events.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    assert [(e["reason"], e["message"]) for e in events] == [
        ("FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu."),
        ("Scheduled", "Successfully assigned default/high to node-1")]
    table = kubectl("get", "events", "--field-selector", "reason=Preempted").stdout
    assert "pod/low" in table and "Preempted by pod " in table


def test_slices_owned_by_a_node_are_collected_when_kubectl_deletes_the_node(cluster) -> None:
    # A DRA driver's kubelet plugin publishes its slices owned by the Node; the garbage collector removes
    # them with it, and `--cascade=orphan` keeps them, without the reference.
    _, kubectl = cluster
    for node in ("node-8", "node-9"):
        kubectl("apply", "-f", "-", stdin=f"apiVersion: v1\nkind: Node\nmetadata: {{name: {node}}}\n")
        uid = kubectl("get", "node", node, "-o", "jsonpath={.metadata.uid}").stdout
        kubectl("apply", "-f", "-", stdin=_owned_slice(f"{node}-gpus", node, uid))
    kubectl("delete", "node", "node-9")
    kubectl("wait", "--for=delete", "resourceslice/node-9-gpus", "--timeout=20s")
    kubectl("delete", "node", "node-8", "--cascade=orphan")
    kubectl("wait", "--for=delete", "node/node-8", "--timeout=20s")
    kept = json.loads(kubectl("get", "resourceslice", "node-8-gpus", "-o", "json").stdout)
    assert "ownerReferences" not in kept["metadata"]


def _owned_slice(name: str, node: str, node_uid: str) -> str:
    return f"""apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: {name}
  ownerReferences: [{{apiVersion: v1, kind: Node, name: {node}, uid: {node_uid}}}]
spec:
  driver: gpu.example.com
  nodeName: {node}
  pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: gpu-0}}]
"""


def test_the_fake_kubelet_flag_makes_a_scheduled_pod_running_and_ready(tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, tmp_path / "db.sqlite", extra=["--fake-kubelet"])
    try:
        cfg = server.kubeconfig(tmp_path / "kubeconfig")
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}
        run = [KUBECTL, "--kubeconfig", str(cfg)]
        subprocess.run([*run, "apply", "-f", str(EXAMPLES / "pod-with-claim.yaml")], check=True, env=env,
                       capture_output=True)
        subprocess.run([*run, "wait", "--for=condition=Ready", "pod/trainer", "--timeout=20s"], check=True, env=env,
                       capture_output=True)
        table = subprocess.run([*run, "get", "pod", "trainer"], check=True, env=env, capture_output=True,
                               text=True).stdout
        assert table.splitlines()[1].split()[1:3] == ["1/1", "Running"]
    finally:
        server.stop()


def test_a_restarted_server_schedules_the_pods_left_pending_from_its_store(tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    db = tmp_path / "db.sqlite"
    server = Server(tmp_path, db, extra=["--no-scheduler"])
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    run = [KUBECTL, "--kubeconfig", str(cfg)]
    env = {**os.environ, "HOME": str(tmp_path)}
    try:
        subprocess.run([*run, "apply", "-f", str(EXAMPLES / "pod-with-claim.yaml")], check=True, env=env,
                       capture_output=True)
        claim = subprocess.run([*run, "wait", "--for=jsonpath={.status.resourceClaimStatuses[0].name}=gpu",
                                "pod/trainer", "--timeout=20s"], check=False, env=env, capture_output=True)
        assert claim.returncode == 0, claim.stderr  # the resourceclaim controller runs without the scheduler
        pod = json.loads(subprocess.run([*run, "get", "pod", "trainer", "-o", "json"], check=True, env=env,
                                        capture_output=True, text=True).stdout)
        assert "nodeName" not in pod["spec"]
    finally:
        server.stop()
    server = Server(tmp_path, db, extra=[])
    try:
        cfg = server.kubeconfig(tmp_path / "kubeconfig")
        subprocess.run([*run, "wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "--timeout=20s"],
                       check=True, env=env, capture_output=True)
        names = subprocess.run([*run, "get", "resourceclaims", "-o", "name"], check=True, env=env,
                               capture_output=True, text=True).stdout.split()
        assert len(names) == 1  # the claim made before the restart, not a second one
    finally:
        server.stop()
