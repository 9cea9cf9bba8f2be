"""ControllerRevisions of StatefulSets and DaemonSets (pkg/controller/history and the two controllers): named
and hashed as upstream's, reused on a rollback, a StatefulSet's partition and OnDelete, the history limit, a
name collision, and how `kubectl get controllerrevisions` prints them."""

from __future__ import annotations

from typing import Any

from cluster import Cluster
from hypothesis import given
from hypothesis import strategies as st
from test_workload_controllers import APPS, MERGE, cluster, pods, settle, workload

from dralloc.server.controllers import revisions

STRATEGIC = {"content-type": "application/strategic-merge-patch+json"}
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def history(c: Cluster, owner: str) -> list[dict[str, Any]]:
    owned = [r for r in c.store.list("controllerrevisions")[0]
             if (r["metadata"].get("ownerReferences") or [{}])[0].get("name") == owner]
    return sorted(owned, key=lambda r: r["revision"])


def set_image(c: Cluster, resource: str, name: str, image: str) -> None:
    r = c.http.patch(f"{APPS}/{resource}/{name}", json={"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": image}]}}}}, headers=STRATEGIC)
    assert r.status_code == 200, r.text


def images(c: Cluster, prefix: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in pods(c, prefix)}


def revision_labels(c: Cluster, prefix: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"] for p in pods(c, prefix)}


def test_the_hash_is_fnv1_32_of_the_data_and_collision_count_in_safe_letters() -> None:
    # FNV-1 (32 bit) test vectors, and rand.SafeEncodeString of the decimal digits
    assert revisions.fnv32(b"") == 0x811C9DC5 and revisions.fnv32(b"a") == 0x050C5D7E
    assert revisions.fnv32(b"foobar") == 0x31F0B262
    assert revisions.safe_encode("0123456789") == "456789bcdf"
    assert revisions.revision_hash(b"foo", None) == revisions.safe_encode(str(revisions.fnv32(b"foo")))
    assert revisions.revision_hash(b"foo", 3) == revisions.safe_encode(str(revisions.fnv32(b"foo3")))
    # Go's json.Marshal of a map: sorted keys, compact, HTML characters escaped
    assert revisions.go_json({"b": [1, "<&>"], "a": {"d": None, "c": True}}) == \
        b'{"a":{"c":true,"d":null},"b":[1,"\\u003c\\u0026\\u003e"]}'
    assert revisions.revision_name("x" * 300, "abc") == "x" * 223 + "-abc"


def test_a_statefulset_keeps_its_template_in_a_controller_revision_named_by_its_hash() -> None:
    c = cluster()
    sts = workload("StatefulSet", "db", replicas=2)
    sts["metadata"]["annotations"] = {"team": "data"}
    made = c.post(f"{APPS}/statefulsets", sts)
    settle(c)
    [rev] = history(c, "db")
    stored = c.get("statefulsets", "db")
    data = {"spec": {"template": {**stored["spec"]["template"], "$patch": "replace"}}}
    assert rev["data"] == data and rev["revision"] == 1
    name = f"db-{revisions.revision_hash(revisions.go_json(data), 0)}"
    assert rev["metadata"]["name"] == name
    assert rev["metadata"]["labels"] == {"app": "web", "controller-revision-hash": rev["metadata"]["labels"][
        "controller-revision-hash"]}
    assert rev["metadata"]["annotations"] == {"team": "data"}
    assert rev["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                                   "uid": made["metadata"]["uid"], "controller": True,
                                                   "blockOwnerDeletion": True}]
    assert set(revision_labels(c, "db-").values()) == {name}
    status = stored["status"]
    assert (status["currentRevision"], status["updateRevision"], status["collisionCount"]) == (name, name, 0)


def test_a_new_template_is_a_new_revision_and_the_old_one_comes_back_renumbered() -> None:
    c = cluster()
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=2))
    settle(c)
    [first] = history(c, "db")
    set_image(c, "statefulsets", "db", "nginx:2")
    settle(c)
    [_, second] = history(c, "db")
    assert second["revision"] == 2 and images(c, "db-") == {"db-0": "nginx:2", "db-1": "nginx:2"}
    status = c.get("statefulsets", "db")["status"]
    assert status["currentRevision"] == status["updateRevision"] == second["metadata"]["name"]
    set_image(c, "statefulsets", "db", "nginx:1")  # what `kubectl rollout undo` does
    settle(c)
    names = [(r["metadata"]["name"], r["revision"]) for r in history(c, "db")]
    assert names == [(second["metadata"]["name"], 2), (first["metadata"]["name"], 3)]  # reused, not new
    assert set(revision_labels(c, "db-").values()) == {first["metadata"]["name"]}


def test_a_partition_keeps_the_lower_ordinals_at_the_current_revision() -> None:
    c = cluster()
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=3, updateStrategy=strategy))
    settle(c)
    [first] = history(c, "db")
    set_image(c, "statefulsets", "db", "nginx:2")
    settle(c)
    assert images(c, "db-") == {"db-0": "nginx:1", "db-1": "nginx:1", "db-2": "nginx:2"}
    [_, second] = history(c, "db")
    status = c.get("statefulsets", "db")["status"]
    assert (status["currentRevision"], status["updateRevision"]) == (first["metadata"]["name"],
                                                                     second["metadata"]["name"])
    assert (status["currentReplicas"], status["updatedReplicas"]) == (2, 1)
    assert c.http.delete("/api/v1/namespaces/default/pods/db-0").status_code == 200
    settle(c)
    assert images(c, "db-")["db-0"] == "nginx:1"  # made again from the current revision


def test_on_delete_replaces_only_the_pods_deleted() -> None:
    c = cluster()
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=2, updateStrategy={"type": "OnDelete"}))
    settle(c)
    set_image(c, "statefulsets", "db", "nginx:2")
    settle(c)
    assert images(c, "db-") == {"db-0": "nginx:1", "db-1": "nginx:1"}
    assert c.http.delete("/api/v1/namespaces/default/pods/db-1").status_code == 200
    settle(c)
    assert images(c, "db-") == {"db-0": "nginx:1", "db-1": "nginx:2"}


def test_revisions_beyond_the_history_limit_go_unless_a_pod_uses_them() -> None:
    c = cluster()
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=1, revisionHistoryLimit=1))
    settle(c)
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        set_image(c, "statefulsets", "db", image)
        settle(c)
    assert [r["revision"] for r in history(c, "db")] == [3, 4]  # the update revision and one old one


def test_a_name_taken_by_other_data_counts_a_collision() -> None:
    elsewhere = cluster()
    elsewhere.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=0))
    settle(elsewhere)
    [taken] = history(elsewhere, "db")  # the name the set's revision gets
    c = cluster()
    squatter = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1,
                "metadata": {"name": taken["metadata"]["name"]}, "data": {"other": True}}
    c.post(f"{APPS}/controllerrevisions", squatter)
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=0))
    settle(c)
    [mine] = history(c, "db")
    assert mine["data"] == taken["data"]
    assert mine["metadata"]["name"] == f"db-{revisions.revision_hash(revisions.go_json(mine['data']), 1)}"
    assert c.get("statefulsets", "db")["status"]["collisionCount"] == 1


def test_a_daemonset_revision_is_named_by_its_pods_hash_and_reused_on_a_rollback() -> None:
    c = cluster()
    c.post(f"{APPS}/daemonsets", workload("DaemonSet", "agent"))
    settle(c)
    [first] = history(c, "agent")
    pod_hash = set(revision_labels(c, "agent-").values())
    assert len(pod_hash) == 1 and first["metadata"]["name"] == f"agent-{pod_hash.pop()}"
    assert first["revision"] == 1 and first["data"]["spec"]["template"]["$patch"] == "replace"
    set_image(c, "daemonsets", "agent", "nginx:2")
    settle(c)
    [_, second] = history(c, "agent")
    assert second["revision"] == 2 and set(images(c, "agent-").values()) == {"nginx:2"}
    set_image(c, "daemonsets", "agent", "nginx:1")
    settle(c)
    assert [(r["metadata"]["name"], r["revision"]) for r in history(c, "agent")] == [
        (second["metadata"]["name"], 2), (first["metadata"]["name"], 3)]


def test_a_daemonset_on_delete_and_its_history_limit() -> None:
    c = cluster()
    c.post(f"{APPS}/daemonsets", workload("DaemonSet", "agent", updateStrategy={"type": "OnDelete"},
                                          revisionHistoryLimit=0))
    settle(c)
    set_image(c, "daemonsets", "agent", "nginx:2")
    settle(c)
    assert set(images(c, "agent-").values()) == {"nginx:1"}  # OnDelete: nothing replaced
    assert len(history(c, "agent")) == 2  # the old revision stays while pods use it
    for name in images(c, "agent-"):
        assert c.http.delete(f"/api/v1/namespaces/default/pods/{name}").status_code == 200
    settle(c)
    assert set(images(c, "agent-").values()) == {"nginx:2"}
    assert [r["revision"] for r in history(c, "agent")] == [2]


def test_kubectl_get_prints_the_controller_and_revision() -> None:
    c = cluster()
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=0))
    settle(c)
    table = c.http.get(f"{APPS}/controllerrevisions", headers=TABLE).json()
    assert [d["name"] for d in table["columnDefinitions"]] == ["Name", "Controller", "Revision", "Age"]
    [row] = table["rows"]
    assert row["cells"][1:3] == ["statefulset.apps/db", 1]
    r = c.http.patch(f"{APPS}/controllerrevisions/{row['cells'][0]}", json={"data": {"x": 1}}, headers=MERGE)
    assert r.status_code == 422 and "data: Invalid value" in r.json()["message"]


@given(st.text(alphabet="ab-0123456789", max_size=8), st.text(alphabet="ab-0123456789", max_size=12))
def test_a_pod_is_a_sets_member_when_named_set_dash_digits(set_name: str, pod_name: str) -> None:
    """isMemberOf: the pod's name is the set's, a dash and an ordinal (the regex ``<set>-([0-9]+)``)."""
    import re

    from dralloc.server.controllers.stateful_sets import is_member

    expected = re.fullmatch(re.escape(set_name) + "-([0-9]+)", pod_name) is not None
    assert is_member({"metadata": {"name": set_name}}, {"metadata": {"name": pod_name}}) == expected
