"""The resourcequota controller's running count (server/controllers/quota_tally.py) against a recount of the
objects, and when the controller writes it: a new object charged by admission is not written back over the
charges in flight, an uncharged one raises ``used``, a delete lowers it, and a pass counts only what changed."""

from __future__ import annotations

import sys
from typing import Any

from cluster import NS, Cluster
from hypothesis import given
from hypothesis import strategies as st

from dralloc.server.controllers import resource_quota
from dralloc.server.controllers.quota_tally import QuotaTally
from dralloc.server.registry.quota import decode_quota, namespace_usage

QUOTAS = f"{NS}/resourcequotas"
HARD_NAMES = ["pods", "requests.cpu", "requests.memory", "limits.memory", "memory", "count/configmaps"]
AMOUNTS = ["0", "100m", "1", "2", "1Gi", "512Mi", "500M", "1G", "1e3", "250m", "1Ki", "1024", "1k", "3e3", "2Ki"]


def _pod(name: str, cpu: str | None, memory: str | None, limit: str | None, phase: str) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if requests:
        resources["requests"] = requests
    if limit is not None:
        resources["limits"] = {"memory": limit}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "resources": resources}]},
            "status": {"phase": phase}}


_amount = st.none() | st.sampled_from(AMOUNTS)
_pods = st.builds(_pod, st.sampled_from(["a", "b", "c", "d"]), _amount, _amount, _amount,
                  st.sampled_from(["Running", "Pending", "Succeeded"]))
_changes = st.lists(st.one_of(
    st.tuples(st.just("pods"), _pods),
    st.tuples(st.just("pods-gone"), st.sampled_from(["a", "b", "c", "d"])),
    st.tuples(st.just("configmaps"), st.sampled_from(["x", "y"])),
    st.tuples(st.just("configmaps-gone"), st.sampled_from(["x", "y"]))), max_size=30)


@given(st.lists(st.sampled_from(HARD_NAMES), min_size=1, unique=True), _changes)
def test_the_running_count_is_the_recount_of_the_objects_byte_for_byte(names: list[str], changes: list[Any]) -> None:
    stored = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ns"},
              "spec": {"hard": {n: "100" for n in names}}}
    quota = decode_quota(stored)
    assert quota is not None
    tally = QuotaTally(quota, frozenset(names))
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    for what, item in changes:
        if what == "pods":
            key = ("pods", item["metadata"]["name"])
            objects[key] = item
        elif what == "configmaps":
            key = ("configmaps", item)
            objects[key] = {"metadata": {"name": item}}
        else:
            key = (what.removesuffix("-gone"), item)
            objects.pop(key, None)
        tally.take((key[0], "", key[1]), objects.get(key))
    recount = namespace_usage(quota, [(resource, "", obj) for (resource, _), obj in sorted(objects.items())])
    assert tally.used() == {name: str(value) for name, value in sorted(recount.items())}


def _status(cluster: Cluster) -> dict[str, Any]:
    return cluster.get("resourcequotas", "compute")["status"]


def _quota(**hard: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"}, "spec": {"hard": hard}}


def test_a_new_object_is_not_written_back_over_charges_in_flight_but_an_uncharged_one_raises_used() -> None:
    cluster = Cluster()
    cluster.post(QUOTAS, _quota(**{"count/configmaps": "10"}))
    cluster.settle()
    assert _status(cluster)["used"] == {"count/configmaps": "1"}  # (kube-root-ca.crt)
    # Admission charged two creates; one of them is stored so far: the count (2) is below the charges (3).
    cluster.store.update("resourcequotas", "default", "compute", lambda old, rv: {
        **old, "metadata": {**old["metadata"], "resourceVersion": rv},
        "status": {**old["status"], "used": {"count/configmaps": "3"}}})
    cluster.store.create("configmaps", "default", "one", lambda _old, rv: {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one", "namespace": "default",
                                                              "resourceVersion": rv}})
    cluster.settle()
    assert _status(cluster)["used"] == {"count/configmaps": "3"}
    # Objects no admission charged (as the controllers make them) raise it to the count.
    for name in ("two", "three", "four"):
        cluster.store.create("configmaps", "default", name, lambda _old, rv, name=name: {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default",
                                                                  "resourceVersion": rv}})
    cluster.settle()
    assert _status(cluster)["used"] == {"count/configmaps": "5"}
    # A delete writes the count as it is.
    cluster.http.delete(f"{NS}/configmaps/one")
    cluster.settle()
    assert _status(cluster)["used"] == {"count/configmaps": "4"}


def test_a_pass_looks_at_the_objects_that_changed_not_at_the_whole_namespace(monkeypatch: Any) -> None:
    cluster = Cluster()
    cluster.post(QUOTAS, _quota(**{"count/configmaps": "100"}))
    cluster.settle()
    listed: list[str] = []
    real_list = cluster.store.list

    def counting_list(resource: str, *args: Any, **kwargs: Any) -> Any:
        listed.append(resource)
        return real_list(resource, *args, **kwargs)

    monkeypatch.setattr(cluster.store, "list", counting_list)
    for i in range(5):
        cluster.post(f"{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
        cluster.settle()
    assert "configmaps" not in listed and _status(cluster)["used"] == {"count/configmaps": "6"}
    monkeypatch.setattr(resource_quota.time, "time", lambda: 10.0 ** 10)  # the periodic full count is due
    cluster.manager.run_once(force=True)
    assert "configmaps" in listed


def test_a_changed_limit_is_counted_again() -> None:
    cluster = Cluster()
    cluster.post(QUOTAS, _quota(**{"count/configmaps": "5"}))
    cluster.settle()
    stored = cluster.get("resourcequotas", "compute")
    stored["spec"]["hard"] = {"count/configmaps": "5", "count/secrets": "2"}
    assert cluster.http.put(f"{QUOTAS}/compute", json=stored).status_code == 200
    cluster.settle()
    assert _status(cluster) == {"hard": {"count/configmaps": "5", "count/secrets": "2"},
                                "used": {"count/configmaps": "1", "count/secrets": "0"}}


def test_a_changed_pod_is_read_from_the_controllers_mirror_not_from_the_store(monkeypatch: Any) -> None:
    cluster = Cluster()
    cluster.post(QUOTAS, _quota(pods="10", **{"count/configmaps": "10"}))
    cluster.settle()
    read: list[str] = []
    real_get = cluster.store.get

    def counting_get(resource: str, *args: Any, **kwargs: Any) -> Any:
        if sys._getframe(1).f_code.co_filename == resource_quota.__file__:  # (the quota controller's reads)
            read.append(resource)
        return real_get(resource, *args, **kwargs)

    monkeypatch.setattr(cluster.store, "get", counting_get)
    cluster.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}})
    cluster.post(f"{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    cluster.settle()
    assert "pods" not in read and "configmaps" in read  # (configmaps are not mirrored: read from the store)
    cluster.http.delete(f"{NS}/pods/p")
    cluster.settle()
    assert "pods" not in read and _status(cluster)["used"]["pods"] == "0"
