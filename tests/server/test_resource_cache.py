"""The store's resource caches (``dralloc.store.cache``), which the admission plugins read as kube-apiserver's
read their informers: this server's own writes are in them at once, other processes' (a second store on the
same database) within the poll interval, and a store look-up covers what the cache has not seen yet."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from dralloc.server import create_app
from dralloc.store import SQLiteStore
from dralloc.store.cache import Feed, cached

PODS = "/api/v1/namespaces/default/pods"
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


def _obj(name: str, rv: str, **fields: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": rv}, **fields}


def _client(store: SQLiteStore) -> TestClient:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TestClient(create_app(store, anonymous=True))


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1"}], **spec}}


def _wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not seen in time"
        time.sleep(0.05)


# --- the cache itself -------------------------------------------------------------------------------------


def test_the_caches_own_stores_writes_are_in_it_at_once(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    cache = Feed(store, poll_seconds=3600).cache("priorityclasses")  # (no poll: only the own writes)
    assert cache.objects() == {}
    store.create("priorityclasses", "", "high", lambda _old, rv: _obj("high", rv, value=7))
    assert cache.get("", "high") == _obj("high", "2", value=7)
    store.update("priorityclasses", "", "high", lambda old, rv: _obj("high", rv, value=8))
    store.create("deviceclasses", "", "gpu", lambda _old, rv: _obj("gpu", rv))  # another resource's: not cached
    assert cache.objects() == {("", "high"): _obj("high", "3", value=8)}
    store.delete("priorityclasses", "", "high")
    assert cache.objects() == {}
    store.close()


@pytest.mark.slow
def test_another_stores_writes_on_the_same_database_are_seen_after_the_poll_interval(tmp_path: Path) -> None:
    mine, theirs = SQLiteStore(str(tmp_path / "s.db")), SQLiteStore(str(tmp_path / "s.db"))
    cache = Feed(mine, poll_seconds=0.2).cache("namespaces")
    assert cache.objects() == {}
    theirs.create("namespaces", "", "team", lambda _old, rv: _obj("team", rv))
    assert cache.get("", "team") is None  # not polled yet: as an informer a moment behind
    _wait_for(lambda: cache.get("", "team") is not None)
    theirs.delete("namespaces", "", "team")
    _wait_for(lambda: cache.get("", "team") is None)
    mine.close()
    theirs.close()


@pytest.mark.slow
def test_a_cache_behind_the_compacted_history_lists_again(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"), history=5)
    cache = Feed(store, poll_seconds=3600).cache("deviceclasses")
    store.create("deviceclasses", "", "a", lambda _old, rv: _obj("a", rv))
    assert set(cache.objects()) == {("", "a")}
    other = SQLiteStore(str(tmp_path / "s.db"), history=5)  # writes the cache's store does not count
    for i in range(2000):  # far past the kept history (compacted every thousand writes)
        other.create("configmaps", "ns", f"c{i}", lambda _old, rv, i=i: _obj(f"c{i}", rv))
    other.create("deviceclasses", "", "b", lambda _old, rv: _obj("b", rv))
    store.create("deviceclasses", "", "c", lambda _old, rv: _obj("c", rv))  # a write of its own: read the log
    assert set(cache.objects()) == {("", "a"), ("", "b"), ("", "c")}
    store.close()
    other.close()


def test_a_derived_value_is_computed_again_only_after_a_change(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    cache = Feed(store, poll_seconds=3600).cache("priorityclasses")
    calls: list[int] = []

    def names(objects: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
        calls.append(len(objects))
        return sorted(name for _, name in objects)

    store.create("priorityclasses", "", "a", lambda _old, rv: _obj("a", rv))
    assert cache.derived(names) == ["a"] and cache.derived(names) == ["a"] and calls == [1]
    store.create("priorityclasses", "", "b", lambda _old, rv: _obj("b", rv))
    assert cache.derived(names) == ["a", "b"] and calls == [1, 2]
    store.close()


class _Labels:
    """An index of each object's label value (as a derived value would compute it over every object)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}
        self.calls = 0

    def add(self, key: tuple[str, str], obj: dict[str, Any]) -> None:
        self.calls += 1
        self.values[key] = obj["metadata"].get("resourceVersion", "")

    def remove(self, key: tuple[str, str], obj: dict[str, Any]) -> None:
        self.calls += 1
        assert self.values.pop(key) == obj["metadata"].get("resourceVersion", "")  # (the object it was told of)


def test_an_index_is_told_of_each_change_once_and_made_again_after_a_new_list(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"), history=5)
    cache = Feed(store, poll_seconds=3600).cache("deviceclasses")
    for name in ("a", "b"):
        store.create("deviceclasses", "", name, lambda _old, rv, name=name: _obj(name, rv))
    index = cache.index(_Labels)
    assert index.calls == 2 and cache.index(_Labels) is index  # (filled once, then kept)
    updated = store.update("deviceclasses", "", "a", lambda old, rv: _obj("a", rv))
    store.delete("deviceclasses", "", "b")
    store.create("deviceclasses", "", "c", lambda _old, rv: _obj("c", rv))
    with cache.feed.locked():
        index = cache.index(_Labels)
        assert index.values == {("", "a"): updated["metadata"]["resourceVersion"],
                                ("", "c"): cache.get("", "c")["metadata"]["resourceVersion"]}  # type: ignore[index]
        assert index.calls == 2 + 2 + 1 + 1  # an update: out and in; a delete: out; a create: in
    other = SQLiteStore(str(tmp_path / "s.db"), history=5)
    for i in range(2000):  # past the kept history: the cache lists again, and the index is made again from it
        other.create("configmaps", "ns", f"c{i}", lambda _old, rv, i=i: _obj(f"c{i}", rv))
    other.delete("deviceclasses", "", "a")
    store.create("deviceclasses", "", "d", lambda _old, rv: _obj("d", rv))
    fresh = cache.index(_Labels)
    assert fresh is not index and set(fresh.values) == {("", "c"), ("", "d")}
    store.close()
    other.close()


def test_one_cache_per_store_and_resource(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    assert cached(store, "namespaces") is cached(store, "namespaces")
    assert cached(store, "namespaces") is not cached(store, "serviceaccounts")
    store.close()


def test_caches_made_one_after_the_other_share_one_read_of_the_log(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    feed = Feed(store, poll_seconds=3600)
    classes = feed.cache("priorityclasses")
    store.create("priorityclasses", "", "a", lambda _old, rv: _obj("a", rv))
    store.create("namespaces", "", "team", lambda _old, rv: _obj("team", rv))  # listed by the cache made next
    namespaces = feed.cache("namespaces")
    store.create("priorityclasses", "", "b", lambda _old, rv: _obj("b", rv))
    assert set(classes.objects()) == {("", "a"), ("", "b")}  # one read for both (the namespace: skipped)
    assert namespaces.objects() == {("", "team"): _obj("team", "3")}
    store.delete("namespaces", "", "team")
    assert namespaces.objects() == {} and len(classes.objects()) == 2
    store.close()


# --- the admission plugins that read them -------------------------------------------------------------------


def test_a_default_class_written_by_this_server_admits_the_very_next_pod(tmp_path: Path) -> None:
    client = _client(SQLiteStore(str(tmp_path / "s.db")))
    assert client.post(PODS, json=_pod("before")).json()["spec"]["priority"] == 0
    default = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "everyone"},
               "value": 50, "globalDefault": True}
    assert client.post(CLASSES, json=default).status_code == 201
    spec = client.post(PODS, json=_pod("after")).json()["spec"]
    assert (spec["priority"], spec["priorityClassName"]) == (50, "everyone")
    assert client.delete(f"{CLASSES}/everyone").status_code == 200
    assert client.post(PODS, json=_pod("gone")).json()["spec"]["priority"] == 0


def test_a_class_or_account_another_replica_just_made_is_found_in_the_store(tmp_path: Path) -> None:
    client = _client(SQLiteStore(str(tmp_path / "s.db")))
    assert client.post(PODS, json=_pod("warm")).status_code == 201  # the caches are listed
    replica = _client(SQLiteStore(str(tmp_path / "s.db")))
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 9}
    assert replica.post(CLASSES, json=high).status_code == 201
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}
    assert replica.post("/api/v1/namespaces/default/serviceaccounts", json=account).status_code == 201
    created = client.post(PODS, json=_pod("named", priorityClassName="high", serviceAccountName="robot"))
    assert created.status_code == 201, created.text
    assert (created.json()["spec"]["priority"], created.json()["spec"]["serviceAccountName"]) == (9, "robot")


@pytest.mark.slow
def test_a_namespace_another_replica_deletes_refuses_creates_once_seen(tmp_path: Path) -> None:
    client = _client(SQLiteStore(str(tmp_path / "s.db")))
    replica = _client(SQLiteStore(str(tmp_path / "s.db")))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    assert replica.post("/api/v1/namespaces", json=namespace).status_code == 201
    team_pods = "/api/v1/namespaces/team/pods"
    assert client.post(team_pods, json=_pod("a")).status_code == 201  # not cached yet: found in the store
    assert replica.delete("/api/v1/namespaces/team").status_code == 200  # terminating
    _wait_for(lambda: client.post(team_pods, json=_pod(f"p{time.monotonic_ns()}")).status_code == 403)


@pytest.mark.parametrize("mode", ["Warn", "Ignore"])
@pytest.mark.parametrize("type_meta", [True, False])
def test_fields_a_pods_schema_lacks_are_dropped_whether_or_not_they_were_checked(mode: str, type_meta: bool) -> None:
    client = _client(SQLiteStore(":memory:"))
    sent = _pod("web", futureField={"x": 1})
    sent["spec"]["containers"][0]["futureToo"] = 1
    if not type_meta:  # the URL's kind: the body's own (absent) apiVersion names no schema to check against
        del sent["apiVersion"], sent["kind"]
    created = client.post(PODS, params={"fieldValidation": mode}, json=sent)
    assert created.status_code == 201, created.text
    for spec in (created.json()["spec"], client.get(f"{PODS}/web").json()["spec"]):
        assert "futureField" not in spec and "futureToo" not in spec["containers"][0]
    warned = mode == "Warn" and type_meta
    assert ("unknown field" in created.headers.get("warning", "")) == warned


def test_caches_of_two_stores_asked_for_in_turn_never_mix() -> None:
    stores = [SQLiteStore(":memory:"), SQLiteStore(":memory:")]
    for i, store in enumerate(stores):
        store.create("limitranges", "ns", f"only-in-{i}", lambda _old, rv, i=i: _obj(f"only-in-{i}", rv))
    for _ in range(3):  # (the store asked for last is remembered: each turn asks for the other one)
        for i, store in enumerate(stores):
            assert list(cached(store, "limitranges").objects()) == [("", f"only-in-{i}")]
    for store in stores:
        store.close()
