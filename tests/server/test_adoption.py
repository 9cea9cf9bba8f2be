"""Adoption and release (ControllerRefManager): a workload adopts the orphans its selector matches and
releases what it controls once its labels no longer match, never taking what is being deleted or what another
controller controls; one controller pass at a time."""

from __future__ import annotations

from typing import Any

from cluster import Cluster
from test_workload_controllers import APPS, BATCH, MERGE, cluster, pods, settle, template, workload

from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.workloads import WorkloadControllers


def orphan(name: str, labels: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels, **meta},
            "spec": {"containers": [{"name": "main", "image": "nginx:1"}], "terminationGracePeriodSeconds": 0}}


def controller_of(c: Cluster, name: str, resource: str = "pods") -> str | None:
    refs = c.get(resource, name)["metadata"].get("ownerReferences") or []
    return next((r["uid"] for r in refs if r.get("controller")), None)


def label(c: Cluster, name: str, labels: dict[str, Any]) -> None:
    r = c.http.patch(f"/api/v1/namespaces/default/pods/{name}", json={"metadata": {"labels": labels}},
                     headers=MERGE)
    assert r.status_code == 200, r.text


def test_a_replicaset_adopts_a_matching_orphan_and_makes_only_the_rest() -> None:
    c = cluster()
    c.post("/api/v1/namespaces/default/pods", orphan("stray", {"app": "web"}))
    c.post("/api/v1/namespaces/default/pods", orphan("other", {"app": "other"}))
    rs = c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=3))
    settle(c)
    assert controller_of(c, "stray") == rs["metadata"]["uid"]
    ref = c.get("pods", "stray")["metadata"]["ownerReferences"][0]
    assert ref == {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
                   "controller": True, "blockOwnerDeletion": True}
    assert controller_of(c, "other") is None
    assert len([p for p in pods(c, "web-")]) == 2  # the adopted pod counts: two made, not three
    assert c.get("replicasets", "web")["status"]["replicas"] == 3


def test_an_orphan_appearing_later_is_adopted_and_the_excess_deleted() -> None:
    c = cluster()
    rs = c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=2))
    settle(c)
    c.post("/api/v1/namespaces/default/pods", orphan("stray", {"app": "web"}))
    settle(c)
    owned = [p for p in pods(c) if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == rs["metadata"]["uid"]]
    assert len(owned) == 2 and len(pods(c)) == 2  # adopted, then one of three deleted
    assert len(c.events("SuccessfulDelete")) == 1


def test_a_pod_whose_labels_no_longer_match_is_released_and_replaced() -> None:
    c = cluster()
    c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=2))
    settle(c)
    name = pods(c)[0]["metadata"]["name"]
    label(c, name, {"app": None})  # kubectl label pod NAME app-
    settle(c)
    assert "ownerReferences" not in c.get("pods", name)["metadata"]
    assert len(pods(c)) == 3 and c.get("replicasets", "web")["status"]["replicas"] == 2


def test_a_pod_relabelled_from_one_replicaset_to_another_moves_over() -> None:
    c = cluster()
    c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=1))
    other = workload("ReplicaSet", "other", replicas=1, selector={"matchLabels": {"app": "other"}},
                     template=template(labels={"app": "other"}))
    rs = c.post(f"{APPS}/replicasets", other)
    settle(c)
    [moved] = pods(c, "web-")
    label(c, moved["metadata"]["name"], {"app": "other"})
    settle(c)
    # web released it and made a new pod; other adopted it and, one pod too many, deleted the newest
    others = [p for p in pods(c) if p["metadata"]["labels"]["app"] == "other"]
    assert len(others) == 1 and others[0]["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert [e["involvedObject"]["name"] for e in c.events("SuccessfulDelete")] == ["other"]
    assert len([p for p in pods(c) if p["metadata"]["labels"]["app"] == "web"]) == 1


def test_pods_being_deleted_or_controlled_by_another_are_not_adopted() -> None:
    c = cluster()
    node_uid = c.get("nodes", "node-1", "")["metadata"]["uid"]
    mirror = orphan("mirror", {"app": "web"}, ownerReferences=[
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": node_uid, "controller": True}])
    c.post("/api/v1/namespaces/default/pods", mirror)
    c.post("/api/v1/namespaces/default/pods", orphan("going", {"app": "web"}, finalizers=["example.com/hold"]))
    assert c.http.delete("/api/v1/namespaces/default/pods/going").status_code == 200
    c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=2))
    settle(c)
    assert controller_of(c, "mirror") == node_uid
    assert "ownerReferences" not in c.get("pods", "going")["metadata"]
    assert len(pods(c, "web-")) == 2


def test_a_deployment_adopts_a_replicaset_of_its_template_instead_of_making_one() -> None:
    c = cluster()
    labelled = template(labels={"app": "web", "pod-template-hash": "manual"})
    rs = workload("ReplicaSet", "web-manual", replicas=2, template=labelled,
                  selector={"matchLabels": {"app": "web", "pod-template-hash": "manual"}})
    rs["metadata"]["labels"] = {"app": "web"}  # (what the Deployment's selector matches: the set's own labels)
    c.post(f"{APPS}/replicasets", rs)
    settle(c)
    deploy = c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    settle(c)
    [only] = c.store.list("replicasets")[0]
    assert only["metadata"]["name"] == "web-manual"
    assert controller_of(c, "web-manual", "replicasets") == deploy["metadata"]["uid"]
    assert len(pods(c)) == 2


def test_a_statefulset_adopts_only_pods_named_after_it() -> None:
    c = cluster()
    c.post("/api/v1/namespaces/default/pods", orphan("db-0", {"app": "web"}))
    c.post("/api/v1/namespaces/default/pods", orphan("cache-0", {"app": "web"}))
    sts = c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=2))
    settle(c)
    assert controller_of(c, "db-0") == sts["metadata"]["uid"] and controller_of(c, "cache-0") is None
    assert sorted(p["metadata"]["name"] for p in pods(c, "db-")) == ["db-0", "db-1"]


def test_a_released_job_pod_loses_its_tracking_finalizer() -> None:
    c = cluster(fake_kubelet=False)
    job = workload("Job", "work")
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    [pod] = pods(c, "work-")
    name = pod["metadata"]["name"]
    r = c.http.patch(f"/api/v1/namespaces/default/pods/{name}",
                     json={"metadata": {"finalizers": ["batch.kubernetes.io/job-tracking", "example.com/keep"]}},
                     headers=MERGE)
    assert r.status_code == 200, r.text
    label(c, name, {"batch.kubernetes.io/controller-uid": None})
    settle(c)
    released = c.get("pods", name)["metadata"]
    assert "ownerReferences" not in released and released["finalizers"] == ["example.com/keep"]


def test_the_index_of_what_each_workload_controls_follows_every_change() -> None:
    """The cycle's indexes (controller of each object, what each controller controls, the workloads by uid, the
    orphans), kept from the changes it takes in, are at every cycle what they are built anew from every object:
    through creation, adoption, release, relabelling, deletion, a ReplicaSet given to a Deployment and a Job's
    pods."""
    c = cluster(fake_kubelet=False)
    workloads = c.manager.workloads
    checked = []
    kept_dirty = workloads._dirty

    def dirty_then_compare(snap: Snapshot) -> set[str] | None:
        found = kept_dirty(snap)
        fresh = WorkloadControllers(workloads.control)
        fresh._index_all(snap)
        assert (workloads.controller_of, workloads.owned, workloads.workload_key, workloads.workload_uid,
                workloads.orphans) == (fresh.controller_of, fresh.owned, fresh.workload_key, fresh.workload_uid,
                                       fresh.orphans)
        checked.append(bool(workloads.owned))
        return found

    workloads._dirty = dirty_then_compare  # type: ignore[method-assign]
    c.post("/api/v1/namespaces/default/pods", orphan("stray", {"app": "web"}))
    c.post(f"{APPS}/replicasets", workload("ReplicaSet", "web", replicas=2))
    settle(c)
    [made, *_] = [p for p in pods(c, "web-")]
    label(c, made["metadata"]["name"], {"app": None})  # released
    settle(c)
    label(c, made["metadata"]["name"], {"app": "web"})  # adopted again (one pod too many: deleted)
    settle(c)
    assert c.http.delete(f"{APPS}/replicasets/web").status_code == 200
    settle(c)
    c.post(f"{APPS}/deployments", workload("Deployment", "front", replicas=1,
                                           selector={"matchLabels": {"app": "front"}},
                                           template=template(labels={"app": "front"})))
    job = workload("Job", "work")
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    for p in pods(c):
        c.http.delete(f"/api/v1/namespaces/default/pods/{p['metadata']['name']}")
    settle(c)
    assert len(checked) > 5 and any(checked)
