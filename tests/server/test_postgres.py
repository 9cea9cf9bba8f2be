"""The PostgreSQL store: two server replicas on one database see each other's writes and watch events.

Starts a throwaway PostgreSQL (initdb + pg_ctl, as the `postgres` user when run as root); skipped when
PostgreSQL or psycopg is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

pytest.importorskip("psycopg")

INITDB, PG_CTL = shutil.which("initdb"), shutil.which("pg_ctl")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if not INITDB or not PG_CTL:
        pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed")
    # Not under pytest's tmp dir: the `postgres` user must be able to reach it (pytest's root is 0700).
    base = Path(tempfile.mkdtemp(prefix="dralloc-pg-"))
    data = base / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        if not shutil.which("runuser"):
            pytest.skip("running as root without runuser")
        shutil.chown(base, "postgres")
        os.chmod(base, 0o755)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    run = lambda *cmd: subprocess.run([*as_user, *cmd], capture_output=True, text=True, timeout=120)  # noqa: E731
    init = run(INITDB, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    if init.returncode != 0:
        pytest.skip(f"initdb failed: {init.stderr.strip()[:200]}")
    start = run(PG_CTL, "-D", str(data), "-l", str(base / "log"), "-w", "-o",
                f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    if start.returncode != 0:
        pytest.skip(f"pg_ctl start failed: {start.stderr.strip()[:200]}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        run(PG_CTL, "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(base, ignore_errors=True)


def test_two_replicas_share_objects_and_watch(postgres_url: str) -> None:
    from starlette.testclient import TestClient

    from dralloc.server import create_app
    from dralloc.store.postgres import PostgresStore

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = TestClient(create_app(PostgresStore(postgres_url)))
        b = TestClient(create_app(PostgresStore(postgres_url)))
    classes = "/apis/resource.k8s.io/v1/deviceclasses"
    start_rv = a.get(classes).json()["metadata"]["resourceVersion"]
    got: list[dict] = []

    def watch() -> None:
        r = b.get(classes, params={"watch": "true", "resourceVersion": start_rv, "timeoutSeconds": "3"})
        got.extend(json.loads(line) for line in r.text.splitlines())

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.5)
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "pg.example.com"}}
    created = a.post(classes, json=body)
    assert created.status_code == 201
    assert b.get(f"{classes}/pg.example.com").json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
    assert b.post(classes, json=body).status_code == 409
    watcher.join(10)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in got] == [("ADDED", "pg.example.com")]
    assert b.delete(f"{classes}/pg.example.com").status_code == 200
    assert a.get(f"{classes}/pg.example.com").status_code == 404


def test_concurrent_replicas_never_lose_an_update(postgres_url: str) -> None:
    from dralloc.store.postgres import PostgresStore

    stores = [PostgresStore(postgres_url), PostgresStore(postgres_url)]
    name = f"c{time.time_ns()}"
    stores[0].create("counters", "", name, lambda _o, rv: {"metadata": {"name": name, "resourceVersion": rv}, "n": 0})

    def bump(old: dict, rv: str) -> dict:
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv}, "n": old["n"] + 1}

    def worker(store: PostgresStore) -> None:
        for _ in range(25):
            store.update("counters", "", name, bump)

    threads = [threading.Thread(target=worker, args=(stores[i % 2],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert stores[1].get("counters", "", name)["n"] == 100


def test_the_change_feed_says_which_changes_name_owners_or_are_deletions_in_progress(postgres_url: str) -> None:
    # The controllers (the garbage collector among them) read it on PostgreSQL as on SQLite.
    from dralloc.store.postgres import PostgresStore

    store = PostgresStore(postgres_url)
    start = store.current_rv()
    name = f"o{time.time_ns()}"
    store.create("things", "", name, lambda _o, rv: {"metadata": {
        "name": name, "resourceVersion": rv, "ownerReferences": [{"kind": "Node", "name": "n", "uid": "u"}]}})
    store.create("things", "", name + "-2", lambda _o, rv: {"metadata": {
        "name": name + "-2", "resourceVersion": rv, "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    changes = store.changes_since(start)
    assert [(c.type, c.name, c.owned, c.deleting) for c in changes] == [
        ("ADDED", name, True, False), ("ADDED", name + "-2", False, True)]
    assert [c.data for c in changes] == [None, None]
    # The controllers' mirror asks for the objects of the resources it holds.
    with_data = store.changes_since(start, with_data=("things",))
    assert [json.loads(c.data or "")["metadata"]["name"] for c in with_data] == [name, name + "-2"]
    assert [c.data for c in store.changes_since(start, with_data=("others", "more"))] == [None, None]


def _slices_of_web(store: Any) -> list[str]:
    for name, service in (("web-a", "web"), ("web2-a", "web2"), ("other", "web"), ("api-a", "api")):
        store.create("endpointslices", "ns1", name, lambda _o, rv, name=name, service=service: {
            "metadata": {"name": name, "namespace": "ns1", "resourceVersion": rv,
                         "labels": {"kubernetes.io/service-name": service}}})
    store.create("endpointslices", "ns2", "web-b", lambda _o, rv: {
        "metadata": {"name": "web-b", "namespace": "ns2", "resourceVersion": rv,
                     "labels": {"kubernetes.io/service-name": "web"}}})
    found, _ = store.list("endpointslices", "ns1", containing='"kubernetes.io/service-name":"web"')
    return [o["metadata"]["name"] for o in found]


def test_a_list_of_the_objects_whose_text_holds_a_string(postgres_url: str, tmp_path: Path) -> None:
    """The endpoints controller finds a Service's slices among thousands without decoding the others."""
    from dralloc.store import SQLiteStore
    from dralloc.store.postgres import PostgresStore

    sqlite = SQLiteStore(str(tmp_path / "s.db"))
    assert _slices_of_web(sqlite) == ["other", "web-a"]  # (web2's label is another text; ns2 is another namespace)
    sqlite.close()
    postgres = PostgresStore(postgres_url)
    assert _slices_of_web(postgres) == ["other", "web-a"]


def test_creates_admitted_together_take_no_more_than_a_quota_leaves_on_postgres(postgres_url: str) -> None:
    """The quota charges of concurrent creates, made on the committer thread (not the loop's) on PostgreSQL:
    of ten ConfigMaps sent at once against a quota of three, three are made."""
    import asyncio

    import httpx

    from dralloc.server import create_app
    from dralloc.store.postgres import PostgresStore

    store = PostgresStore(postgres_url)
    app = create_app(store, anonymous=True)
    namespace = f"quota-{time.time_ns()}"
    base = f"/api/v1/namespaces/{namespace}"

    async def run() -> tuple[list[int], dict[str, str]]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api") as client:
            made = await client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                                 "metadata": {"name": namespace}})
            assert made.status_code == 201, made.text
            quota = (await client.post(f"{base}/resourcequotas", json={
                "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                "spec": {"hard": {"count/configmaps": "3"}}})).json()
            quota["status"] = {"hard": {"count/configmaps": "3"}, "used": {"count/configmaps": "0"}}
            assert (await client.put(f"{base}/resourcequotas/q/status", json=quota)).status_code == 200
            answers = await asyncio.gather(*(client.post(f"{base}/configmaps", json={
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}}) for i in range(10)))
            used = (await client.get(f"{base}/resourcequotas/q")).json()["status"]["used"]
        return sorted(a.status_code for a in answers), used

    try:
        codes, used = asyncio.run(run())
        assert codes == [201] * 3 + [403] * 7 and used == {"count/configmaps": "3"}
    finally:
        store.close()
