"""End to end: `dralloc serve` as a process, driven by /usr/bin/kubectl and the official Python client;
and a crash test (kill -9 during a write burst loses nothing that was acknowledged)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from served import EXAMPLES, KUBECTL, Server, create_class, free_port

pytestmark = pytest.mark.e2e

@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path, tmp_path / "db.sqlite")
    yield s
    s.stop()


@pytest.fixture
def kubectl(server: Server, tmp_path: Path):
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}

    def run(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    return run


def test_kubectl_apply_get_patch_delete(kubectl) -> None:
    out = kubectl("apply", "-f", str(EXAMPLES / "10-deviceclasses.yaml")).stdout
    assert "deviceclass.resource.k8s.io/gpu.nvidia.com created" in out
    kubectl("apply", "-f", str(EXAMPLES / "20-gpu-slices.yaml"))
    again = kubectl("apply", "-f", str(EXAMPLES / "20-gpu-slices.yaml")).stdout
    assert "unchanged" in again
    table = kubectl("get", "resourceslices").stdout.splitlines()
    assert table[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert len(table) == 3
    names = kubectl("get", "resourceslices", "--field-selector", "spec.driver=gpu.nvidia.com", "-o", "name")
    assert names.stdout.split() == ["resourceslice.resource.k8s.io/gpu-node-1-gpu.nvidia.com-counters",
                                    "resourceslice.resource.k8s.io/gpu-node-1-gpu.nvidia.com-devices"]
    doc = json.loads(kubectl("get", "deviceclass", "gpu.nvidia.com", "-o", "json").stdout)
    assert doc["kind"] == "DeviceClass" and doc["metadata"]["generation"] == 1
    kubectl("patch", "deviceclass", "gpu.nvidia.com", "--type", "merge", "-p", '{"metadata":{"labels":{"a":"b"}}}')
    assert kubectl("get", "deviceclasses", "-l", "a=b", "-o", "name").stdout.strip() == \
        "deviceclass.resource.k8s.io/gpu.nvidia.com"
    failed = kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"), check=False)  # no namespace yet: refused
    assert 'namespaces "ml-team" not found' in failed.stderr
    kubectl("create", "namespace", "ml-team")
    kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"))
    claims = kubectl("get", "resourceclaims", "-n", "ml-team", "-o", "name").stdout.split()
    assert len(claims) == 7
    assert "deleted" in kubectl("delete", "deviceclass", "gpu.nvidia.com").stdout
    missing = kubectl("get", "deviceclass", "gpu.nvidia.com", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_kubectl_workload_and_pod_group_round_trip(tmp_path: Path) -> None:
    """With GenericWorkload on, kubectl creates, lists and deletes scheduling.k8s.io/v1alpha2 objects."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, extra=["--anonymous", "--feature-gates", "GenericWorkload=true,GangScheduling=true"])
    try:
        env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(server.kubeconfig(tmp_path / "kubeconfig"))}

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60)

        manifest = tmp_path / "gang.yaml"
        manifest.write_text(
            "apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: train, namespace: default}\n"
            "spec:\n  podGroupTemplates:\n  - name: workers\n    schedulingPolicy: {gang: {minCount: 2}}\n---\n"
            "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: train-0, namespace: default}\n"
            "spec:\n  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}\n"
            "  schedulingPolicy: {gang: {minCount: 2}}\n")
        created = kubectl("create", "-f", str(manifest))
        assert created.returncode == 0, created.stderr
        assert created.stdout.split() == ["workload.scheduling.k8s.io/train", "created",
                                          "podgroup.scheduling.k8s.io/train-0", "created"]
        table = kubectl("get", "podgroups").stdout.splitlines()
        assert table[0].split() == ["NAME", "AGE"] and table[1].split()[0] == "train-0"
        got = json.loads(kubectl("get", "workload", "train", "-o", "json").stdout)
        assert got["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 2}}
        # kubectl explain reads the kinds' schemas from /openapi/v3
        explained = kubectl("explain", "podgroups")
        assert explained.returncode == 0, explained.stderr
        assert "KIND:       PodGroup" in explained.stdout and "VERSION:    v1alpha2" in explained.stdout
        assert "spec\t<PodGroupSpec>" in explained.stdout and "status\t<PodGroupStatus>" in explained.stdout
        templates = kubectl("explain", "workloads.spec.podGroupTemplates").stdout
        assert "FIELD: podGroupTemplates <[]PodGroupTemplate>" in templates
        assert "schedulingPolicy\t<PodGroupSchedulingPolicy>" in templates
        assert "FIELD: minCount <integer>" in kubectl("explain", "podgroups.spec.schedulingPolicy.gang.minCount").stdout
        # a List as kubectl get -o yaml writes it is validated on the client with /openapi/v2's definitions
        dump = tmp_path / "groups.yaml"
        dump.write_text(kubectl("get", "podgroups", "-o", "yaml").stdout)
        assert kubectl("delete", "podgroup", "train-0").returncode == 0
        recreated = kubectl("create", "-f", str(dump))
        assert recreated.returncode == 0, recreated.stderr
        deleted = kubectl("delete", "-f", str(manifest))
        assert deleted.returncode == 0, deleted.stderr
        assert kubectl("get", "podgroups,workloads", "-o", "name").stdout.strip() == ""
    finally:
        server.stop()


def test_kubectl_server_side_apply_dry_run_and_strict(kubectl) -> None:
    out = kubectl("apply", "--server-side", "-f", str(EXAMPLES / "21-nic-slices.yaml")).stdout
    assert "serverside-applied" in out
    out = kubectl("apply", "--dry-run=server", "-f", str(EXAMPLES / "22-cpu-slices.yaml")).stdout
    assert "(server dry run)" in out
    assert kubectl("get", "resourceslices", "-o", "name").stdout.split() == \
        ["resourceslice.resource.k8s.io/gpu-node-1-nic.example.com"]
    bad = kubectl("apply", "--validate=strict", "-f", str(EXAMPLES / "invalid" / "slice-mistakes.yaml"), check=False)
    assert bad.returncode != 0 and 'unknown field "spec.devices[2].unknownField"' in bad.stderr
    invalid = kubectl("apply", "--validate=false", "-f", str(EXAMPLES / "invalid" / "claim-mistakes.yaml"),
                      check=False)
    assert invalid.returncode != 0
    assert "spec.devices.requests[0].exactly.count: Invalid value: 2" in invalid.stderr


def test_kubectl_watch_sees_new_objects(kubectl, server: Server, tmp_path: Path) -> None:
    kubectl("apply", "-f", str(EXAMPLES / "21-nic-slices.yaml"))
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kubeconfig")}
    watcher = subprocess.Popen([KUBECTL, "get", "resourceslices", "-w"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(1.5)
        kubectl("apply", "-f", str(EXAMPLES / "22-cpu-slices.yaml"))
        time.sleep(1.5)
    finally:
        watcher.terminate()
    out = watcher.communicate(timeout=10)[0]
    assert "gpu-node-1-nic.example.com" in out and "gpu-node-1-cpu.example.com" in out


def test_kubectl_diff_shows_what_an_apply_would_change_and_nothing_else(kubectl, tmp_path: Path) -> None:
    # kubectl diff asks the server for the merged object with a dry-run patch, under the live object's
    # resourceVersion: exit 0 when nothing would change, 1 with the changed lines, and nothing is written.
    manifest = tmp_path / "class.yaml"
    manifest.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: diff.example.com}\n"
                        "spec: {selectors: [{cel: {expression: 'device.driver == \"a.example.com\"'}}]}\n")
    kubectl("apply", "-f", str(manifest))
    assert kubectl("diff", "-f", str(manifest)).returncode == 0
    manifest.write_text(manifest.read_text().replace("a.example.com", "b.example.com"))
    changed = kubectl("diff", "-f", str(manifest), check=False)
    assert changed.returncode == 1, changed.stderr
    assert '-      expression: device.driver == "a.example.com"' in changed.stdout
    assert '+      expression: device.driver == "b.example.com"' in changed.stdout
    assert "keeps changing" not in changed.stderr
    live = kubectl("get", "deviceclass", "diff.example.com", "-o", "jsonpath={.spec.selectors[0].cel.expression}")
    assert live.stdout == 'device.driver == "a.example.com"'


def test_python_client_typed_and_dynamic(server: Server, tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    import yaml
    from kubernetes import client, config, dynamic

    cfg = client.Configuration()
    config.load_kube_config(str(server.kubeconfig(tmp_path / "kubeconfig")), client_configuration=cfg)
    api_client = client.ApiClient(cfg)  # HTTPS verified with the CA the kubeconfig embeds
    api = client.ResourceV1Api(api_client)
    body = yaml.safe_load((EXAMPLES / "21-nic-slices.yaml").read_text())
    created = api.create_resource_slice(body)
    assert created.metadata.generation == 1
    listed = api.list_resource_slice(field_selector="spec.driver=nic.example.com")
    assert [s.metadata.name for s in listed.items] == [body["metadata"]["name"]]
    api.patch_resource_slice(body["metadata"]["name"], {"metadata": {"labels": {"tier": "fast"}}})
    assert api.read_resource_slice(body["metadata"]["name"]).metadata.labels == {"tier": "fast"}
    with pytest.raises(kubernetes.client.exceptions.ApiException) as info:
        api.read_resource_slice("missing")
    assert info.value.status == 404
    dyn = dynamic.DynamicClient(api_client)
    classes = dyn.resources.get(api_version="resource.k8s.io/v1", kind="DeviceClass")
    dyn.create(classes, body={"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                              "metadata": {"name": "dyn.example.com"}})
    assert [c.metadata.name for c in dyn.get(classes).items] == ["dyn.example.com"]
    api.delete_resource_slice(body["metadata"]["name"])
    assert api.list_resource_slice().items == []


def _metric(server: Server, name: str) -> int:
    with server.open("/metrics") as r:
        line = next(x for x in r.read().decode().splitlines() if x.startswith(name + " "))
    return int(line.split()[1])


def test_kill_9_loses_no_acknowledged_write_of_a_group_commit(tmp_path: Path) -> None:
    db = tmp_path / "crash.sqlite"
    server = Server(tmp_path, db)
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer(worker: int) -> None:
        i = 0
        while not stop.is_set():
            name = f"class-{worker}-{i}"
            body = json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                               "metadata": {"name": name}}).encode()
            try:
                with server.open("/apis/resource.k8s.io/v1/deviceclasses", body, "POST",
                                 {"content-type": "application/json"}, timeout=5) as r:
                    if r.status == 201:
                        acknowledged.append(name)
            except OSError:
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    writes, commits = _metric(server, "dralloc_store_writes_total"), _metric(server, "dralloc_store_commits_total")
    time.sleep(0.5)
    server.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acknowledged) > 10
    assert commits < writes  # concurrent writers did share commits (and fsyncs)
    restarted = Server(tmp_path, db)
    try:
        with restarted.open("/apis/resource.k8s.io/v1/deviceclasses") as r:
            stored = {i["metadata"]["name"] for i in json.load(r)["items"]}
    finally:
        restarted.stop()
    assert set(acknowledged) <= stored


def test_kubectl_explain_knows_no_pod_groups_with_the_gate_off(kubectl) -> None:
    missing = kubectl("explain", "podgroups", check=False)
    assert missing.returncode != 0 and 'the server doesn\'t have a resource type "podgroups"' in missing.stderr


def test_kubectl_explain_uses_generated_schemas(kubectl) -> None:
    out = kubectl("explain", "resourceslices.spec.pool").stdout
    assert "KIND:       ResourceSlice" in out and "resourceSliceCount" in out
    # optional nested objects and lists of them: kubectl explain goes through allOf and items, not anyOf
    devices = kubectl("explain", "resourceclaims.spec.devices").stdout
    assert "requests\t<[]DeviceRequest>" in devices, devices
    assert "FIELD: count <integer>" in kubectl("explain", "resourceclaims.spec.devices.requests.exactly.count").stdout
    # a Pod's DRA fields
    claims = kubectl("explain", "pod.spec.resourceClaims").stdout
    assert "FIELD: resourceClaims <[]PodResourceClaim>" in claims and "resourceClaimTemplateName\t<string>" in claims


def test_kubectl_creates_and_applies_a_list_as_get_o_yaml_writes_it(kubectl, tmp_path: Path) -> None:
    # A List is validated on the client with /openapi/v2 (kubectl's default --validate=strict)
    kubectl("apply", "-f", str(EXAMPLES / "10-deviceclasses.yaml"))
    dump = tmp_path / "classes.yaml"
    dump.write_text(kubectl("get", "deviceclasses", "-o", "yaml").stdout)
    assert yaml.safe_load(dump.read_text())["kind"] == "List"
    assert "deviceclass.resource.k8s.io/gpu.nvidia.com" in kubectl("apply", "-f", str(dump)).stdout
    listed = tmp_path / "list.yaml"
    listed.write_text("apiVersion: v1\nkind: List\nitems:\n"
                      "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: l1.example.com}}\n"
                      "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: l2.example.com}}\n")
    assert kubectl("create", "-f", str(listed)).stdout.split("\n")[:2] == [
        "deviceclass.resource.k8s.io/l1.example.com created", "deviceclass.resource.k8s.io/l2.example.com created"]
    listed.write_text(listed.read_text().replace("name: l2.example.com}", "name: l3.example.com}, spec: {x: 1}"))
    bad = kubectl("create", "-f", str(listed), check=False)
    assert 'unknown field "x" in io.k8s.api.resource.v1.DeviceClassSpec' in bad.stderr, bad.stderr


def test_kubectl_commands_driver_authors_and_test_suites_run(kubectl, tmp_path: Path) -> None:
    kubectl("apply", "-f", str(EXAMPLES / "10-deviceclasses.yaml"))
    kubectl("create", "namespace", "ml-team")
    kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"))
    assert "Server Version: v1.36.0" in kubectl("version").stdout
    assert "resource.k8s.io/v1beta2" in kubectl("api-versions").stdout.split()
    claims = ["-n", "ml-team"]
    columns = kubectl("get", "resourceclaims", *claims, "-o", "custom-columns=NAME:.metadata.name,"
                      "CLASS:.spec.devices.requests[0].exactly.deviceClassName").stdout.splitlines()
    assert columns[0].split() == ["NAME", "CLASS"] and len(columns) == 8
    template = kubectl("get", "deviceclasses", "-o", "go-template={{range .items}}{{.metadata.name}} {{end}}")
    assert template.stdout.split() == ["cpu.example.com", "gpu.nvidia.com", "mig.nvidia.com", "nic.example.com"]
    paged = kubectl("get", "resourceclaims", *claims, "--chunk-size=2", "-o", "name", "-v=6")
    assert len(paged.stdout.split()) == 7 and paged.stderr.count("continue=") == 3
    kubectl("label", "resourceclaim", *claims, "training-gpus", "team=a")
    kubectl("annotate", "resourceclaim", *claims, "training-gpus", "note=x")
    kubectl("patch", "resourceclaim", *claims, "training-gpus", "--type=json",
            "-p", '[{"op": "add", "path": "/metadata/labels/tier", "value": "gold"}]')
    claim = json.loads(kubectl("get", "resourceclaim", *claims, "-l", "team=a,tier=gold", "-o", "json").stdout)
    assert [c["metadata"]["annotations"]["note"] for c in claim["items"]] == ["x"]
    assert "managedFields" in kubectl("get", "resourceclaim", *claims, "training-gpus", "-o", "yaml",
                                      "--show-managed-fields").stdout
    live = tmp_path / "claim.json"
    live.write_text(json.dumps({**claim["items"][0], "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {**claim["items"][0]["metadata"], "labels": {"team": "b"}}}))
    assert "replaced" in kubectl("replace", "-f", str(live)).stdout
    event = tmp_path / "event.yaml"
    event.write_text("apiVersion: v1\nkind: Event\nmetadata: {name: e1, namespace: ml-team}\ntype: Normal\n"
                     "reason: Prepared\nmessage: done\ninvolvedObject: {apiVersion: resource.k8s.io/v1, "
                     "kind: ResourceClaim, name: training-gpus, namespace: ml-team}\n")
    kubectl("create", "-f", str(event))
    events = kubectl("get", "events", *claims, "--field-selector", "involvedObject.name=training-gpus").stdout
    assert events.splitlines()[0].split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"] and "Prepared" in events
    assert "ResourceClaim/training-gpus" in kubectl("events", *claims, "--for", "resourceclaim/training-gpus").stdout
    waiter = subprocess.Popen([KUBECTL, "wait", "--for=delete", "resourceclaim/pinned-cores", *claims,
                               "--timeout=20s"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "kubeconfig")})
    time.sleep(1)
    kubectl("delete", "resourceclaim", *claims, "pinned-cores")
    assert waiter.wait(20) == 0 and "condition met" in waiter.stdout.read()
    assert len(kubectl("delete", "resourceclaims", *claims, "--all").stdout.splitlines()) == 6
    assert kubectl("get", "resourceclaims", *claims, "-o", "name").stdout == ""


def test_kubectl_apply_prune_deletes_the_applied_objects_a_manifest_dropped(kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "classes.yaml"
    manifest.write_text("apiVersion: v1\nkind: List\nitems:\n"
                        "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: a.example.com, "
                        "labels: {set: s}}}\n"
                        "- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: b.example.com, "
                        "labels: {set: s}}}\n")
    kubectl("apply", "-f", str(manifest))
    manifest.write_text(manifest.read_text().rsplit("- ", 1)[0])
    # kubectl's default prune list has no resource.k8s.io kind: they are pruned when allowed explicitly
    out = kubectl("apply", "--prune", "-l", "set=s", "--prune-allowlist=resource.k8s.io/v1/DeviceClass",
                  "-f", str(manifest)).stdout
    assert "deviceclass.resource.k8s.io/b.example.com pruned" in out
    assert kubectl("get", "deviceclasses", "-o", "name").stdout.split() == ["deviceclass.resource.k8s.io/a.example.com"]


def test_kubectl_create_namespace_and_claim_state(kubectl) -> None:
    # `kubectl create namespace` sends protobuf; claims print kubectl's STATE column.
    assert "namespace/team-a created" in kubectl("create", "namespace", "team-a").stdout
    assert "team-a" in kubectl("get", "namespaces").stdout
    kubectl("create", "namespace", "ml-team")
    kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"))
    lines = kubectl("get", "resourceclaims", "-n", "ml-team").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE"] and all(" pending " in line for line in lines[1:])
    table = kubectl("get", "namespaces").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "AGE"]
    assert {line.split()[0] for line in table[1:]} == {"default", "kube-node-lease", "kube-public", "kube-system",
                                                        "ml-team", "team-a"}
    # kubectl waits until the namespace controller has deleted the claims and the namespace
    assert 'namespace "ml-team" deleted' in kubectl("delete", "namespace", "ml-team", "--timeout=30s").stdout
    assert "NotFound" in kubectl("get", "namespace", "ml-team", check=False).stderr
    assert kubectl("get", "resourceclaims", "-A", "-o", "name").stdout.strip() == ""
    refused = kubectl("delete", "namespace", "default", check=False)
    assert 'namespaces "default" is forbidden: this namespace may not be deleted' in refused.stderr


def _answer(server: Server, path: str, token: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        with server.open(path, headers=headers) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def _kubectl(cfg: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60)


def test_serve_is_https_with_a_generated_ca_and_an_admin_token_reused_across_restarts(tmp_path: Path) -> None:
    server = Server(tmp_path, extra=[])  # the data directory's defaults: database, CA, token
    try:
        code, status = _answer(server, "/apis/resource.k8s.io/v1/resourceslices")
        assert (code, status["reason"], status["message"]) == (401, "Unauthorized", "Unauthorized")
        token = (server.data_dir / "token").read_text().strip()
        for secret in ("token", "kubeconfig", "pki/ca.key", "pki/apiserver.key", "pki/sa.key"):
            assert (server.data_dir / secret).stat().st_mode & 0o077 == 0, secret
        assert _answer(server, "/apis/resource.k8s.io/v1/resourceslices", token)[0] == 200
        cfg = tmp_path / "kubeconfig"
        # `dralloc kubeconfig` with no flag: the default data directory (XDG_DATA_HOME) names server, CA, token.
        subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "-o", str(cfg)], check=True, env=server.env)
        written = cfg.read_text()
        assert "certificate-authority-data" in written and "insecure" not in written and server.url in written
        # The server also writes one into its data directory, usable at once.
        assert (server.data_dir / "kubeconfig").read_text() == written
        if KUBECTL:
            out = _kubectl(server.data_dir / "kubeconfig", tmp_path, "apply", "-f",
                           str(EXAMPLES / "10-deviceclasses.yaml"))
            assert out.returncode == 0, (written, out.stderr)
        ca = (server.data_dir / "pki" / "ca.crt").read_bytes()
        server.stop()
        server = Server(tmp_path, extra=[])  # same port not needed: the kubeconfig is rewritten, CA and token kept
        assert (server.data_dir / "pki" / "ca.crt").read_bytes() == ca
        assert (server.data_dir / "token").read_text().strip() == token
        # every namespace publishes the CA that verifies this server (kube-root-ca.crt)
        for _ in range(50):
            code, published = _answer(server, "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", token)
            if code == 200:
                break
            time.sleep(0.1)
        assert published["data"] == {"ca.crt": ca.decode()}
        if KUBECTL:
            subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "-o", str(cfg)], check=True,
                           env=server.env)
            out = _kubectl(cfg, tmp_path, "get", "deviceclasses", "-o", "name")
            assert out.returncode == 0 and "deviceclass.resource.k8s.io/gpu.nvidia.com" in out.stdout, out.stderr
    finally:
        server.stop()


def test_serving_certificate_names_loopback_the_host_and_the_advertised_address(tmp_path: Path) -> None:
    from cryptography import x509

    server = Server(tmp_path, extra=["--anonymous", "--advertise-address", "10.1.2.3"])
    server.stop()
    cert = x509.load_pem_x509_certificate((server.data_dir / "pki" / "apiserver.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    assert {"127.0.0.1", "::1", "10.1.2.3"} <= ips
    assert {"localhost", socket.gethostname()} <= set(san.get_values_for_type(x509.DNSName))
    record = json.loads((server.data_dir / "server.json").read_text())
    assert record["server"] == f"https://10.1.2.3:{server.port}"


def test_plain_http_needs_a_flag_and_loopback(tmp_path: Path) -> None:
    refused = subprocess.run([sys.executable, "-m", "dralloc", "serve", "--data-dir", str(tmp_path / "d"),
                              "--insecure-http", "--address", "0.0.0.0"], capture_output=True, text=True)
    assert refused.returncode == 2 and "loopback" in refused.stderr
    server = Server(tmp_path, extra=["--insecure-http", "--anonymous"])
    try:
        assert server.url.startswith("http://")
        assert _answer(server, "/apis/resource.k8s.io/v1/deviceclasses")[0] == 200
        # no certificate is made; the service account token signing key is
        assert sorted(f.name for f in (server.data_dir / "pki").iterdir()) == ["sa.key"]
    finally:
        server.stop()


def test_tls_token_file_and_allow_list(tmp_path: Path) -> None:
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('admin-token,alice,1,"admins"\nread-token,bob,2\n')
    authz = tmp_path / "authz.yaml"
    authz.write_text("group:admins: [{verbs: ['*'], resources: ['*']}]\n"
                     "bob: [{verbs: [get, list, watch], resources: [resourceslices]}]\n")
    server = Server(tmp_path, tmp_path / "db.sqlite",
                    extra=["--tls-cert", str(cert), "--tls-key", str(key), "--token-file", str(tokens),
                           "--authz-file", str(authz)])
    try:
        slices = "/apis/resource.k8s.io/v1/resourceslices"
        assert _answer(server, slices)[0] == 401
        assert _answer(server, slices, "read-token")[0] == 200
        code, status = _answer(server, "/apis/resource.k8s.io/v1/deviceclasses", "read-token")
        assert (code, status["reason"]) == (403, "Forbidden")
        assert status["message"] == ('deviceclasses.resource.k8s.io is forbidden: User "bob" cannot list resource '
                                     '"deviceclasses" in API group "resource.k8s.io" at the cluster scope')
        if KUBECTL:
            cfg = tmp_path / "kubeconfig"
            subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "--server", server.url, "--token",
                            "admin-token", "--insecure-skip-tls-verify", "-o", str(cfg)], check=True)
            env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}
            out = subprocess.run([KUBECTL, "apply", "-f", str(EXAMPLES / "10-deviceclasses.yaml")],
                                 capture_output=True, text=True, env=env)
            assert out.returncode == 0, out.stderr
            # kubectl auth whoami / can-i: the self reviews, sent as protobuf, answered from the allow list
            bob = tmp_path / "bob.kubeconfig"
            subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "--server", server.url, "--token",
                            "read-token", "--insecure-skip-tls-verify", "-o", str(bob)], check=True)
            env["KUBECONFIG"] = str(bob)

            def auth(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([KUBECTL, "auth", *args], capture_output=True, text=True, env=env)

            whoami = auth("whoami").stdout
            assert "bob" in whoami and "[system:authenticated]" in whoami, whoami
            assert (auth("can-i", "list", "resourceslices").stdout.strip(),
                    auth("can-i", "delete", "resourceslices").stdout.strip()) == ("yes", "no")
            assert auth("can-i", "delete", "resourceslices").returncode == 1
            assert "resourceslices" in auth("can-i", "--list").stdout
            # impersonation: bob may not act as alice; alice (an admin) may act as bob, and gets bob's answers
            as_alice = subprocess.run([KUBECTL, "get", "resourceslices", "--as", "alice"], capture_output=True,
                                      text=True, env=env)
            assert 'users "alice" is forbidden: User "bob" cannot impersonate resource "users"' in as_alice.stderr
            env["KUBECONFIG"] = str(cfg)
            assert auth("can-i", "delete", "resourceslices", "--as", "bob").stdout.strip() == "no"
            assert "bob" in auth("whoami", "--as", "bob").stdout
    finally:
        server.stop()


def test_kubectl_discovers_everything_with_two_aggregated_requests(kubectl, tmp_path: Path) -> None:
    out = kubectl("api-resources", "-v=6", "--cache-dir", str(tmp_path / "cache"))
    requests = [line.split("GET ")[1].split("?")[0] for line in out.stderr.splitlines() if "GET " in line]
    assert [r.rsplit(":", 1)[1].split("/", 1)[1] for r in requests] == ["api", "apis"]
    assert "resourceslices" in out.stdout and "namespaces" in out.stdout


def test_server_side_apply_after_kubectl_edit_names_the_editor_in_its_conflict(server: Server, tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    manifest = tmp_path / "class.yaml"
    manifest.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
                        "metadata: {name: edited.example.com, labels: {tier: gold}}\n")
    assert _kubectl(cfg, tmp_path, "apply", "--server-side", "-f", str(manifest)).returncode == 0
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg), "KUBE_EDITOR": "sed -i s/gold/silver/"}
    edit = subprocess.run([KUBECTL, "edit", "deviceclass", "edited.example.com"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert edit.returncode == 0, edit.stderr
    again = _kubectl(cfg, tmp_path, "apply", "--server-side", "-f", str(manifest))
    assert again.returncode != 0
    assert 'conflict with "kubectl-edit" using resource.k8s.io/v1: .metadata.labels.tier' in again.stderr
    forced = _kubectl(cfg, tmp_path, "apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert forced.returncode == 0, forced.stderr


def test_kubectl_server_side_applies_own_set_values_and_containers_item_by_item(kubectl, tmp_path: Path) -> None:
    for manager in ("alice", "bob"):  # two finalizers of one set, two owners, no conflict
        manifest = tmp_path / f"{manager}.yaml"
        manifest.write_text("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
                            f"metadata: {{name: shared.example.com, finalizers: [example.com/{manager}]}}\n")
        kubectl("apply", "--server-side", f"--field-manager={manager}", "-f", str(manifest))
    got = json.loads(kubectl("get", "deviceclass", "shared.example.com", "-o", "json", "--show-managed-fields").stdout)
    assert got["metadata"]["finalizers"] == ["example.com/alice", "example.com/bob"]
    owners = {e["manager"]: e["fieldsV1"] for e in got["metadata"]["managedFields"]}
    assert owners["bob"] == {"f:metadata": {"f:finalizers": {'v:"example.com/bob"': {}}}}
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: two, namespace: default}\n"
                   "spec: {containers: [{name: app, image: 'nginx:1'}, {name: side, image: busybox}]}\n")
    kubectl("apply", "--server-side", "--field-manager=alice", "-f", str(pod))
    side = tmp_path / "side.yaml"
    side.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: two, namespace: default}\n"
                    "spec: {containers: [{name: side, image: 'busybox:2'}]}\n")
    conflict = kubectl("apply", "--server-side", "--field-manager=bob", "-f", str(side), check=False)
    assert conflict.returncode != 0
    assert 'conflict with "alice": .spec.containers[name="side"].image' in conflict.stderr


def _watch_events(server: Server, query: str, until: int, timeout: float = 10) -> list[dict[str, Any]]:
    """Read watch events until ``until`` of them arrived (or the stream ended)."""
    events: list[dict[str, Any]] = []
    with server.open(f"/apis/resource.k8s.io/v1/deviceclasses?watch=true&{query}", timeout=timeout) as stream:
        while len(events) < until:
            line = stream.readline()
            if not line:
                break
            events.append(json.loads(line))
    return events


def test_an_informer_lists_then_watches_across_a_restart_without_losing_or_repeating_events(tmp_path: Path) -> None:
    db = tmp_path / "informer.sqlite"
    server = Server(tmp_path, db)
    try:
        create_class(server, "a.example.com")
        with server.open("/apis/resource.k8s.io/v1/deviceclasses") as r:
            listed = json.load(r)
        list_rv = listed["metadata"]["resourceVersion"]
        assert [i["metadata"]["name"] for i in listed["items"]] == ["a.example.com"]
        threading.Timer(0.5, create_class, (server, "b.example.com")).start()
        seen = _watch_events(server, f"resourceVersion={list_rv}&allowWatchBookmarks=true", until=1)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "b.example.com")]
        last = seen[-1]["object"]["metadata"]["resourceVersion"]
        create_class(server, "c.example.com")  # written while the informer is between watches
    finally:
        server.stop()
    server = Server(tmp_path, db)  # a restart: same database, the informer resumes from its last version
    try:
        create_class(server, "d.example.com")
        resumed = _watch_events(server, f"resourceVersion={last}&allowWatchBookmarks=true", until=2)
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in resumed] == [
            ("ADDED", "c.example.com"), ("ADDED", "d.example.com")]
        # WatchList (sendInitialEvents): the whole state, then a bookmark that ends the initial events
        initial = _watch_events(server, f"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion="
                                        f"{last}&allowWatchBookmarks=true", until=5)
        assert [e["type"] for e in initial] == ["ADDED"] * 4 + ["BOOKMARK"]
        assert initial[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert int(initial[-1]["object"]["metadata"]["resourceVersion"]) >= int(last)
    finally:
        server.stop()


POD_YAML = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: app, image: "nginx:1", env: [{name: A, value: "1"}]}
  - {name: side, image: busybox}
"""


def test_kubectl_applies_binds_describes_and_deletes_a_pod(kubectl, server: Server, tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD_YAML)
    assert "pod/web created" in kubectl("apply", "-f", str(manifest)).stdout
    manifest.write_text(POD_YAML.replace("nginx:1", "nginx:2"))  # client-side apply: a strategic merge patch
    assert "pod/web configured" in kubectl("apply", "-f", str(manifest)).stdout
    # pods and services are in the "all" category (default/kubernetes is every cluster's)
    assert kubectl("get", "all", "-o", "name").stdout.split() == ["pod/web", "service/kubernetes"]
    pod = json.loads(kubectl("get", "pod", "web", "-o", "json").stdout)
    assert [c["image"] for c in pod["spec"]["containers"]] == ["nginx:2", "busybox"]
    assert pod["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    binding = json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                          "target": {"kind": "Node", "name": "node-1"}})
    with server.open("/api/v1/namespaces/default/pods/web/binding", binding.encode(), "POST",
                     {"content-type": "application/json"}) as r:
        assert r.status == 201
    event = json.dumps({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.scheduled"},
                        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web",
                                           "uid": pod["metadata"]["uid"]},
                        "type": "Normal", "reason": "Scheduled",
                        "message": "Successfully assigned default/web to node-1",
                        "source": {"component": "default-scheduler"}, "count": 1,
                        "firstTimestamp": pod["metadata"]["creationTimestamp"],
                        "lastTimestamp": pod["metadata"]["creationTimestamp"]})
    with server.open("/api/v1/namespaces/default/events", event.encode(), "POST",
                     {"content-type": "application/json"}) as r:
        assert r.status == 201
    wide = kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert wide[1].split()[:3] == ["web", "0/2", "Pending"] and "node-1" in wide[1]
    described = kubectl("describe", "pod", "web").stdout
    assert re.search(r"^Node:\s+node-1/", described, re.MULTILINE)  # no host IP without a kubelet
    assert "Scheduled" in described and "Successfully assigned default/web to node-1" in described
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/web", "--timeout=10s")
    started = time.monotonic()
    assert 'pod "web" deleted' in kubectl("delete", "pod", "web", "--grace-period=1").stdout  # waits until gone
    assert time.monotonic() - started < 10
    assert kubectl("get", "pod", "web", check=False).returncode != 0


def test_nodes_from_a_file_are_created_once_and_keep_every_field(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: node-1, labels: {zone: a}}\n"
                     "status:\n  allocatable: {cpu: '8', pods: '110'}\n"
                     "  addresses: [{type: InternalIP, address: 10.0.0.1}]\n---\n"
                     "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: node-2}\n")
    server = Server(tmp_path, extra=["--anonymous", "--nodes-from", str(nodes)])
    try:
        with server.open("/api/v1/nodes") as r:
            listed = json.load(r)
        assert [n["metadata"]["name"] for n in listed["items"]] == ["node-1", "node-2"]
        assert listed["items"][0]["status"]["addresses"] == [{"type": "InternalIP", "address": "10.0.0.1"}]
        uid = listed["items"][0]["metadata"]["uid"]
    finally:
        server.stop()
    server = Server(tmp_path, extra=["--anonymous", "--nodes-from", str(nodes)])  # a restart keeps them
    try:
        with server.open("/api/v1/nodes/node-1") as r:
            assert json.load(r)["metadata"]["uid"] == uid
    finally:
        server.stop()
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    refused = subprocess.run([sys.executable, "-m", "dralloc", "serve", "--data-dir", str(tmp_path / "d2"),
                              "--nodes-from", str(bad), "--port", str(free_port())], capture_output=True, text=True)
    assert refused.returncode == 2 and "--nodes-from takes v1 Nodes only" in refused.stderr


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_events_an_external_scheduler_records_through_events_k8s_io_show_in_kubectl_events_and_describe(
        tmp_path: Path) -> None:
    server = Server(tmp_path, extra=["--anonymous", "--no-scheduler"])  # kube-scheduler runs elsewhere
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}

    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(KUBECTL), *args], capture_output=True, text=True, env=env, timeout=60, check=True)

    try:
        _external_scheduler_events(kubectl, tmp_path)
    finally:
        server.stop()


def _external_scheduler_events(kubectl: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD_YAML)
    kubectl("apply", "-f", str(manifest))
    uid = json.loads(kubectl("get", "pod", "web", "-o", "json").stdout)["metadata"]["uid"]
    event = tmp_path / "event.yaml"  # what kube-scheduler's event broadcaster writes (events.k8s.io/v1)
    event.write_text(f"""apiVersion: events.k8s.io/v1
kind: Event
metadata: {{name: web.18f0a1b2c3d4e5f6, namespace: default}}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: default-scheduler
reportingInstance: default-scheduler-host-a
action: Scheduling
reason: FailedScheduling
type: Warning
regarding: {{kind: Pod, namespace: default, name: web, uid: {uid}, apiVersion: v1}}
note: "0/1 nodes are available: 1 Insufficient example.com/gpu."
""")
    assert "event.events.k8s.io/web.18f0a1b2c3d4e5f6 created" in kubectl("create", "-f", str(event)).stdout
    listed = kubectl("events", "--for", "pod/web").stdout
    assert "FailedScheduling" in listed and "0/1 nodes are available: 1 Insufficient example.com/gpu." in listed
    described = kubectl("describe", "pod", "web").stdout
    assert re.search(r"Warning\s+FailedScheduling\s+.*default-scheduler\s+0/1 nodes are available", described), \
        described
    names = kubectl("get", "events.events.k8s.io", "-o", "name").stdout.split()
    assert names == ["event.events.k8s.io/web.18f0a1b2c3d4e5f6"]
