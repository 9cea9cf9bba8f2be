"""End to end with client libraries besides kubectl and the official Python client: lightkube (sync and
async, its typed resource.k8s.io models), kubernetes_asyncio, kr8s and the JavaScript @kubernetes/client-node.
Each loads the kubeconfig `dralloc kubeconfig` writes as it is: HTTPS verified with the embedded CA, the
admin token."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served import Server

pytestmark = pytest.mark.e2e

NODE_CLIENT = Path(__file__).resolve().parents[1] / "clients" / "node"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    tmp = tmp_path_factory.mktemp("clients")
    server = Server(tmp, tmp / "db.sqlite", extra=[])  # HTTPS with the generated CA, token required
    try:
        yield server, server.kubeconfig(tmp / "kubeconfig")
    finally:
        server.stop()


def _device_class(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{name}"'}}]}}


def test_lightkube_creates_patches_applies_watches_and_deletes_with_its_typed_models(served) -> None:
    pytest.importorskip("lightkube")
    from lightkube import ApiError, Client, KubeConfig, codecs
    from lightkube.resources.resource_v1 import DeviceClass

    _, kubeconfig = served
    client = Client(config=KubeConfig.from_file(str(kubeconfig)))
    created = client.create(codecs.from_dict(_device_class("lk.example.com")))
    assert isinstance(created, DeviceClass) and created.metadata.generation == 1
    patched = client.patch(DeviceClass, "lk.example.com", {"metadata": {"labels": {"tier": "fast"}}})
    assert patched.metadata.labels == {"tier": "fast"}
    applied = client.apply(codecs.from_dict(_device_class("lk-applied.example.com")), field_manager="lightkube")
    assert applied.metadata.managedFields[0].manager == "lightkube"
    names = [c.metadata.name for c in client.list(DeviceClass, labels={"tier": "fast"})]
    assert names == ["lk.example.com"]
    events = []
    for event, obj in client.watch(DeviceClass, labels={"tier": "fast"}):
        events.append((event, obj.metadata.name))
        if len(events) == 1:
            client.delete(DeviceClass, "lk.example.com")
        if len(events) == 2:
            break
    assert events == [("ADDED", "lk.example.com"), ("DELETED", "lk.example.com")]
    with pytest.raises(ApiError) as missing:
        client.get(DeviceClass, "lk.example.com")
    assert missing.value.status.code == 404


def test_lightkube_async_client_lists_and_watches(served) -> None:
    pytest.importorskip("lightkube")
    from lightkube import AsyncClient, KubeConfig, codecs
    from lightkube.resources.resource_v1 import DeviceClass

    _, kubeconfig = served

    async def run() -> list[tuple[str, str]]:
        client = AsyncClient(config=KubeConfig.from_file(str(kubeconfig)))
        try:
            await client.create(codecs.from_dict(_device_class("lk-async.example.com")))
            assert "lk-async.example.com" in [c.metadata.name async for c in client.list(DeviceClass)]
            seen = []
            async for event, obj in client.watch(DeviceClass, fields={"metadata.name": "lk-async.example.com"}):
                seen.append((event, obj.metadata.name))
                if len(seen) == 1:
                    await client.delete(DeviceClass, "lk-async.example.com")
                else:
                    return seen
            return seen
        finally:
            await client.close()

    assert asyncio.run(asyncio.wait_for(run(), 20)) == [("ADDED", "lk-async.example.com"),
                                                        ("DELETED", "lk-async.example.com")]


def test_kubernetes_asyncio_lists_creates_and_watches(served) -> None:
    pytest.importorskip("kubernetes_asyncio")
    from kubernetes_asyncio import client, config, watch

    _, kubeconfig = served

    async def run() -> list[tuple[str, str]]:
        cfg = client.Configuration()
        await config.load_kube_config(str(kubeconfig), client_configuration=cfg)
        async with client.ApiClient(cfg) as api_client:
            api = client.ResourceV1Api(api_client)
            await api.create_device_class(_device_class("ka.example.com"))
            listed = await api.list_device_class(field_selector="metadata.name=ka.example.com")
            assert [c.metadata.name for c in listed.items] == ["ka.example.com"]
            # its Watch sends watch=True (a Python bool, urlencoded)
            stream = watch.Watch()
            seen = []
            async for event in stream.stream(api.list_device_class, field_selector="metadata.name=ka.example.com",
                                             timeout_seconds=10):
                seen.append((event["type"], event["object"].metadata.name))
                if len(seen) == 1:
                    await api.delete_device_class("ka.example.com")
                else:
                    stream.stop()
            return seen

    assert asyncio.run(asyncio.wait_for(run(), 20)) == [("ADDED", "ka.example.com"), ("DELETED", "ka.example.com")]


@pytest.mark.filterwarnings("ignore:Kubernetes version:UserWarning")  # kr8s names the versions it was tested on
def test_kr8s_gets_creates_labels_watches_and_asks_who_am_i(served) -> None:
    kr8s = pytest.importorskip("kr8s")
    from kr8s.objects import new_class

    _, kubeconfig = served
    api = kr8s.api(kubeconfig=str(kubeconfig))
    assert api.version()["minor"] == "36"
    device_class = new_class(kind="DeviceClass", version="resource.k8s.io/v1", namespaced=False,
                             plural="deviceclasses")
    created = device_class(_device_class("kr.example.com"), api=api)
    created.create()
    created.label(team="ml")
    assert [c.name for c in api.get("deviceclasses", label_selector={"team": "ml"})] == ["kr.example.com"]
    events = []
    for event, obj in api.watch("deviceclasses", label_selector={"team": "ml"}):
        events.append((event, obj.name))
        if len(events) == 1:
            created.delete()
        else:
            break
    assert events == [("ADDED", "kr.example.com"), ("DELETED", "kr.example.com")]
    assert api.whoami() == "admin"  # a TokenReview of its own token


def test_javascript_client_informer_and_crud_on_resource_claims(served) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the JavaScript client test needs node 20+)")
    if not (NODE_CLIENT / "node_modules" / "@kubernetes" / "client-node").is_dir():
        pytest.skip(f"@kubernetes/client-node is not installed: run `npm ci` in {NODE_CLIENT}")
    server, kubeconfig = served
    headers = {"content-type": "application/json", "authorization": "Bearer " + _token(server)}
    with server.open("/apis/resource.k8s.io/v1/deviceclasses", json.dumps(_device_class("gpu.example.com")).encode(),
                     "POST", headers):
        pass
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "node-team"}}
    with server.open("/api/v1/namespaces", json.dumps(namespace).encode(), "POST", headers):
        pass
    proc = subprocess.run([node, "informer.mjs", str(kubeconfig), "node-team"], cwd=NODE_CLIENT,
                          capture_output=True, text=True, timeout=60)
    steps = {line[0]: line[1:] for line in map(json.loads, proc.stdout.splitlines())}
    assert proc.returncode == 0 and "failed" not in steps, (proc.stdout, proc.stderr)
    assert "informer-error" not in steps, steps
    assert steps["listed"] == [[]]
    assert steps["created"] == ["from-node", "ExactCount"]  # defaulted by the server
    assert steps["replaced"] == [{"step": "replaced"}]
    assert steps["json-patched"] == [{"note": "json-patch"}]
    assert steps["merge-patched"] == [{"step": "merged"}]
    assert steps["selected"] == [["from-node"]]
    seen = [(kind, labels) for kind, _, labels in steps["informer"][0]]
    assert seen[0] == ("add", {}) and seen[-1] == ("delete", {"step": "merged"})
    assert ("update", {"step": "merged"}) in seen


def _token(server: Server) -> str:
    return (server.data_dir / "token").read_text().strip()
