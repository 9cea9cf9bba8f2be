"""End to end: `dralloc serve` as a process, driven by /usr/bin/kubectl and the official Python client;
and a crash test (kill -9 during a write burst loses nothing that was acknowledged)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KUBECTL = shutil.which("kubectl")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tmp: Path, db: Path, extra: list[str] | None = None, scheme: str = "http") -> None:
        self.port = free_port()
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data")}  # the default token lives there
        self.proc = subprocess.Popen([sys.executable, "-m", "dralloc", "serve", "--db", str(db), "--port",
                                      str(self.port), *(["--anonymous"] if extra is None else extra)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        context = ssl._create_unverified_context() if scheme == "https" else None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/healthz", timeout=1, context=context).read()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(self.proc.stderr.read().decode())
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path, tmp_path / "db.sqlite")
    yield s
    s.stop()


@pytest.fixture
def kubectl(server: Server, tmp_path: Path):
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    from dralloc.cli.kubeconfig import kubeconfig

    import yaml

    cfg = tmp_path / "kubeconfig"
    cfg.write_text(yaml.safe_dump(kubeconfig(server.url)))
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
    kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"))
    claims = kubectl("get", "resourceclaims", "-n", "ml-team", "-o", "name").stdout.split()
    assert len(claims) == 7
    assert "deleted" in kubectl("delete", "deviceclass", "gpu.nvidia.com").stdout
    missing = kubectl("get", "deviceclass", "gpu.nvidia.com", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


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


def test_python_client_typed_and_dynamic(server: Server) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes import client, dynamic

    import yaml

    cfg = client.Configuration()
    cfg.host = server.url
    api_client = client.ApiClient(cfg)
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


def test_kill_9_loses_no_acknowledged_write(tmp_path: Path) -> None:
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
            req = urllib.request.Request(f"{server.url}/apis/resource.k8s.io/v1/deviceclasses", data=body,
                                         headers={"content-type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 201:
                        acknowledged.append(name)
            except OSError:
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    server.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acknowledged) > 10
    restarted = Server(tmp_path, db)
    try:
        with urllib.request.urlopen(f"{restarted.url}/apis/resource.k8s.io/v1/deviceclasses") as r:
            stored = {i["metadata"]["name"] for i in json.load(r)["items"]}
    finally:
        restarted.stop()
    assert set(acknowledged) <= stored


def test_kubectl_explain_uses_generated_schemas(kubectl) -> None:
    out = kubectl("explain", "resourceslices.spec.pool").stdout
    assert "KIND:       ResourceSlice" in out and "resourceSliceCount" in out


def test_kubectl_create_namespace_and_claim_state(kubectl) -> None:
    # `kubectl create namespace` sends protobuf; claims print kubectl's STATE column.
    assert "namespace/team-a created" in kubectl("create", "namespace", "team-a").stdout
    assert "team-a" in kubectl("get", "namespaces").stdout
    kubectl("apply", "-f", str(EXAMPLES / "30-claims.yaml"))
    lines = kubectl("get", "resourceclaims", "-n", "ml-team").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE"] and all(" pending " in line for line in lines[1:])


def _status_of(url: str, token: str | None = None) -> int:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    context=ssl._create_unverified_context()) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_serve_needs_a_token_unless_anonymous(tmp_path: Path) -> None:
    # No --token-file: the server makes an admin token that `dralloc kubeconfig` picks up.
    server = Server(tmp_path, tmp_path / "db.sqlite", extra=[])
    try:
        slices = f"{server.url}/apis/resource.k8s.io/v1/resourceslices"
        assert _status_of(slices) == 401
        token = (tmp_path / "data" / "dralloc" / "token").read_text().strip()
        assert (tmp_path / "data" / "dralloc" / "token").stat().st_mode & 0o077 == 0
        assert _status_of(slices, token) == 200
        cfg = tmp_path / "kubeconfig"
        subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "--server", server.url, "-o", str(cfg)],
                       check=True, env=server.env)
        if KUBECTL:
            env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}
            out = subprocess.run([KUBECTL, "get", "resourceslices"], capture_output=True, text=True, env=env)
            assert out.returncode == 0 and "No resources found" in out.stderr, (cfg.read_text(), out.stderr)
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
    server = Server(tmp_path, tmp_path / "db.sqlite", scheme="https",
                    extra=["--tls-cert", str(cert), "--tls-key", str(key), "--token-file", str(tokens),
                           "--authz-file", str(authz)])
    try:
        slices = f"{server.url}/apis/resource.k8s.io/v1/resourceslices"
        assert _status_of(slices) == 401
        assert _status_of(slices, "read-token") == 200
        assert _status_of(f"{server.url}/apis/resource.k8s.io/v1/deviceclasses", "read-token") == 403
        if KUBECTL:
            cfg = tmp_path / "kubeconfig"
            subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "--server", server.url, "--token",
                            "admin-token", "--insecure-skip-tls-verify", "-o", str(cfg)], check=True)
            env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}
            out = subprocess.run([KUBECTL, "apply", "-f", str(EXAMPLES / "10-deviceclasses.yaml")],
                                 capture_output=True, text=True, env=env)
            assert out.returncode == 0, out.stderr
    finally:
        server.stop()
