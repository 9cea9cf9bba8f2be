"""The workload controllers inside `dralloc serve`, one pass at a time: Deployments make ReplicaSets, ReplicaSets
pods (scaling up and down in upstream's order), rollouts, StatefulSets' ordinals, DaemonSets' pod per node,
Jobs to completion, status as kubectl reads it, and owners deleted taking their objects with them."""

from __future__ import annotations

from typing import Any

from cluster import NODE, Cluster

from dralloc.server.controllers.workload_pods import deletion_order

APPS = "/apis/apps/v1/namespaces/default"
BATCH = "/apis/batch/v1/namespaces/default"
MERGE = {"content-type": "application/merge-patch+json"}


def template(image: str = "nginx:1", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": image, "env": [{"name": "A", "value": "1"}]}],
                     "terminationGracePeriodSeconds": 0, **spec}}


def workload(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    group = "batch/v1" if kind == "Job" else "apps/v1"
    body: dict[str, Any] = {"template": template()}
    if kind != "Job":
        body["selector"] = {"matchLabels": {"app": "web"}}
    return {"apiVersion": group, "kind": kind, "metadata": {"name": name}, "spec": {**body, **spec}}


def cluster(nodes: int = 2, fake_kubelet: bool = True) -> Cluster:
    c = Cluster(fake_kubelet=fake_kubelet)
    for i in range(1, nodes + 1):
        c.post("/api/v1/nodes", {**NODE, "metadata": {"name": f"node-{i}"}})
    return c


def pods(c: Cluster, prefix: str = "") -> list[dict[str, Any]]:
    return [p for p in c.pods() if p["metadata"]["name"].startswith(prefix) and not p["metadata"].get("deletionTimestamp")]


def settle(c: Cluster) -> None:
    c.settle(60)


def test_a_deployment_makes_a_replicaset_named_by_its_template_hash_which_makes_the_pods() -> None:
    c = cluster()
    deploy = c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    settle(c)
    [rs] = c.store.list("replicasets")[0]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{template_hash}"
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": template_hash}}
    assert rs["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                  "uid": deploy["metadata"]["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    made = pods(c)
    assert len(made) == 2 and all(p["metadata"]["name"].startswith(f"web-{template_hash}-") for p in made)
    assert all(p["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}] for p in made)  # the whole spec
    assert all(p["spec"]["nodeName"] and p["status"]["phase"] == "Running" for p in made)
    assert all(p["spec"]["serviceAccountName"] == "default" for p in made)  # created as a client's pod would be
    status = c.get("deployments", "web")["status"]
    assert {k: status[k] for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                   "availableReplicas")} == {"observedGeneration": 1, "replicas": 2,
                                                             "updatedReplicas": 2, "readyReplicas": 2,
                                                             "availableReplicas": 2}
    assert [(x["type"], x["status"], x["reason"]) for x in status["conditions"]] == [
        ("Available", "True", "MinimumReplicasAvailable"), ("Progressing", "True", "NewReplicaSetAvailable")]
    assert c.get("deployments", "web")["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"


def test_scaling_up_and_down_makes_and_deletes_pods() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    settle(c)
    c.http.patch(f"{APPS}/deployments/web/scale", json={"spec": {"replicas": 3}}, headers=MERGE)
    settle(c)
    assert len(pods(c)) == 3
    c.http.patch(f"{APPS}/deployments/web", json={"spec": {"replicas": 1}}, headers=MERGE)
    settle(c)
    assert len(pods(c)) == 1
    assert c.get("deployments", "web")["status"]["replicas"] == 1


def test_pods_are_deleted_unscheduled_then_pending_then_not_ready_first_and_newest_first() -> None:
    def pod(name: str, created: str, node: str = "", phase: str = "Pending", ready: bool = False) -> dict[str, Any]:
        conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
        return {"metadata": {"name": name, "creationTimestamp": created},
                "spec": {"nodeName": node} if node else {}, "status": {"phase": phase, "conditions": conditions}}

    ranked = deletion_order([
        pod("running-ready-old", "2026-01-01T00:00:00Z", "n", "Running", True),
        pod("running-ready-new", "2026-01-02T00:00:00Z", "n", "Running", True),
        pod("running-not-ready", "2026-01-01T00:00:00Z", "n", "Running"),
        pod("bound-pending", "2026-01-01T00:00:00Z", "n"),
        pod("unscheduled", "2026-01-01T00:00:00Z"),
    ])
    assert [p["metadata"]["name"] for p in ranked] == [
        "unscheduled", "bound-pending", "running-not-ready", "running-ready-new", "running-ready-old"]


def test_a_new_template_rolls_out_through_a_new_replicaset_and_the_old_one_goes_to_zero() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=3))
    settle(c)
    c.http.patch(f"{APPS}/deployments/web", json={"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:2"}]}}}}, headers={"content-type": "application/strategic-merge-patch+json"})
    settle(c)
    sets = sorted(c.store.list("replicasets")[0], key=lambda r: r["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"])
    assert [r["spec"]["replicas"] for r in sets] == [0, 3]
    assert [r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in sets] == ["1", "2"]
    assert {p["spec"]["containers"][0]["image"] for p in pods(c)} == {"nginx:2"}
    deploy = c.get("deployments", "web")
    assert deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert (deploy["status"]["updatedReplicas"], deploy["status"]["replicas"]) == (3, 3)


def test_a_rolling_update_keeps_replicas_minus_max_unavailable_available() -> None:
    """Without a kubelet no new pod becomes ready: the old ReplicaSet shrinks only by maxUnavailable (25% of 4:
    1), and the new one grows by maxSurge (1) plus what the old one gave up."""
    c = cluster(fake_kubelet=True)
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=4))
    settle(c)
    c.manager.options = type(c.manager.options)(fake_kubelet=False)  # from now on nothing starts
    c.http.patch(f"{APPS}/deployments/web", json={"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:2"}]}}}}, headers={"content-type": "application/strategic-merge-patch+json"})
    settle(c)
    sets = sorted(c.store.list("replicasets")[0], key=lambda r: r["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"])
    assert [r["spec"]["replicas"] for r in sets] == [3, 2]


def test_recreate_stops_the_old_pods_before_starting_new_ones() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2, strategy={"type": "Recreate"}))
    settle(c)
    c.http.patch(f"{APPS}/deployments/web", json={"spec": {"template": {"metadata": {"labels": {"app": "web",
                                                                                           "v": "2"}}}}},
                 headers=MERGE)
    c.manager.run_once(force=True)
    new = [r for r in c.store.list("replicasets")[0] if r["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"] == "2"]
    assert new and new[0]["spec"]["replicas"] == 0  # while the old pods are there
    settle(c)
    assert {p["metadata"]["labels"].get("v") for p in pods(c)} == {"2"} and len(pods(c)) == 2


def test_a_daemonset_runs_a_pod_pinned_to_each_node_it_may_run_on() -> None:
    c = cluster(nodes=2)
    c.post("/api/v1/nodes", {**NODE, "metadata": {"name": "tainted"},
                             "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}})
    c.post(f"{APPS}/daemonsets", workload("DaemonSet", "agent"))
    settle(c)
    made = pods(c, "agent-")
    assert sorted(p["spec"]["nodeName"] for p in made) == ["node-1", "node-2"]
    for p in made:
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms == {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [p["spec"]["nodeName"]]}]}]}
        assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in \
            p["spec"]["tolerations"]
    status = c.get("daemonsets", "agent")["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
            status["numberAvailable"]) == (2, 2, 2, 2)
    c.post("/api/v1/nodes", {**NODE, "metadata": {"name": "node-3"}})
    settle(c)
    assert len(pods(c, "agent-")) == 3


def test_a_statefulset_makes_its_ordinals_in_order_and_removes_the_highest_first() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=3, serviceName="db"))
    settle(c)
    assert [p["metadata"]["name"] for p in pods(c)] == ["db-0"]  # OrderedReady: db-0 is not ready yet
    c.manager.options = type(c.manager.options)(fake_kubelet=True)
    c.manager.mirror.mark_everything_changed()  # (the kubelet looks at the pods it has not seen)
    c.manager.run_once(force=True)
    settle(c)
    made = {p["metadata"]["name"]: p for p in pods(c)}
    assert sorted(made) == ["db-0", "db-1", "db-2"]
    db1 = made["db-1"]
    assert (db1["spec"]["hostname"], db1["spec"]["subdomain"]) == ("db-1", "db")
    labels = db1["metadata"]["labels"]
    assert (labels["statefulset.kubernetes.io/pod-name"], labels["apps.kubernetes.io/pod-index"]) == ("db-1", "1")
    c.http.patch(f"{APPS}/statefulsets/db", json={"spec": {"replicas": 1}}, headers=MERGE)
    settle(c)
    assert [p["metadata"]["name"] for p in pods(c)] == ["db-0"]
    status = c.get("statefulsets", "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["currentRevision"]) == \
        (1, 1, status["updateRevision"])


def test_a_statefulset_with_claim_templates_gets_a_claim_per_ordinal() -> None:
    c = cluster(fake_kubelet=False)
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "1Gi"}}}}
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=1, podManagementPolicy="Parallel",
                                            volumeClaimTemplates=[claim]))
    settle(c)
    [pod] = pods(c)
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}} in pod["spec"]["volumes"]
    made = c.get("persistentvolumeclaims", "data-db-0")
    assert made["metadata"]["labels"] == {"app": "web"} and made["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_a_job_runs_its_pods_to_completion_with_the_fake_kubelet() -> None:
    c = cluster()
    job = workload("Job", "pi", completions=3, parallelism=2)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    del job["spec"]["template"]["metadata"]
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    status = c.get("jobs", "pi")["status"]
    assert status["succeeded"] == 3 and "active" not in status and status["completionTime"]
    assert [(x["type"], x["status"], x["reason"]) for x in status["conditions"]] == [
        ("SuccessCriteriaMet", "True", "CompletionsReached"), ("Complete", "True", "CompletionsReached")]
    assert len(c.pods()) == 3


def test_a_job_keeps_parallelism_pods_active_and_indexed_jobs_name_their_indexes() -> None:
    c = cluster(fake_kubelet=False)
    job = workload("Job", "work", completions=5, parallelism=2, completionMode="Indexed")
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    made = pods(c)
    assert sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in made) == ["0", "1"]
    assert all(p["metadata"]["name"].startswith(("work-0-", "work-1-")) for p in made)
    assert c.get("jobs", "work")["status"]["active"] == 2


def test_deleting_a_deployment_deletes_its_replicasets_and_pods_unless_orphaned() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    c.post(f"{APPS}/deployments", workload("Deployment", "kept", replicas=1))
    settle(c)
    assert c.http.delete(f"{APPS}/deployments/web").status_code == 200
    r = c.http.request("DELETE", f"{APPS}/deployments/kept", json={"propagationPolicy": "Orphan"})
    assert r.status_code in (200, 202)
    settle(c)
    assert [r["metadata"]["name"].split("-")[0] for r in c.store.list("replicasets")[0]] == ["kept"]
    assert [p["metadata"]["name"].split("-")[0] for p in pods(c)] == ["kept"]


def test_a_namespace_deleted_takes_its_workloads_and_makes_no_more_pods() -> None:
    c = cluster()
    c.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    c.post("/apis/apps/v1/namespaces/team/deployments", workload("Deployment", "web", replicas=2))
    settle(c)
    assert len(pods(c)) == 2
    c.http.delete("/api/v1/namespaces/team")
    settle(c)
    assert c.store.list("deployments")[0] == [] and c.store.list("replicasets")[0] == [] and pods(c) == []


def _fail(c: Cluster, pod: dict[str, Any]) -> None:
    status = {**pod["status"], "phase": "Failed"}
    r = c.http.patch(f"/api/v1/namespaces/default/pods/{pod['metadata']['name']}/status",
                     json={"status": status}, headers=MERGE)
    assert r.status_code == 200, r.text


def test_a_job_whose_pods_fail_past_its_backoff_limit_fails() -> None:
    c = cluster(fake_kubelet=False)
    job = workload("Job", "flaky", backoffLimit=1)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    _fail(c, pods(c)[0])
    settle(c)
    status = c.get("jobs", "flaky")["status"]
    assert status["failed"] == 1 and status["active"] == 1  # a new pod for the failed one
    _fail(c, next(p for p in pods(c) if p["status"].get("phase") != "Failed"))
    settle(c)
    status = c.get("jobs", "flaky")["status"]
    assert [(x["type"], x["reason"], x["message"]) for x in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
        ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]
    assert status["failed"] == 2 and "completionTime" not in status


def test_a_suspended_job_runs_no_pods_until_resumed() -> None:
    c = cluster(fake_kubelet=False)
    job = workload("Job", "later", suspend=True)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    c.post(f"{BATCH}/jobs", job)
    settle(c)
    assert pods(c) == []
    assert [x["type"] for x in c.get("jobs", "later")["status"]["conditions"]] == ["Suspended"]
    c.http.patch(f"{BATCH}/jobs/later", json={"spec": {"suspend": False}}, headers=MERGE)
    settle(c)
    assert len(pods(c)) == 1
    assert [(x["type"], x["status"], x["reason"], x["message"]) for x in c.get("jobs", "later")["status"][
        "conditions"]] == [("Suspended", "False", "JobResumed", "Job resumed")]  # (kept, turned False)


def test_a_statefulset_rolls_a_new_template_out_from_the_highest_ordinal() -> None:
    c = cluster()
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=2))
    settle(c)
    before = c.get("statefulsets", "db")["status"]["updateRevision"]
    c.http.patch(f"{APPS}/statefulsets/db", json={"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:2"}]}}}}, headers={"content-type": "application/strategic-merge-patch+json"})
    c.manager.run_once(force=True)
    c.manager.run_once(force=True)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in c.pods()}
    assert images.get("db-0") == "nginx:1"  # the highest ordinal goes first
    settle(c)
    status = c.get("statefulsets", "db")["status"]
    assert status["updateRevision"] != before and status["currentRevision"] == status["updateRevision"]
    assert {p["spec"]["containers"][0]["image"] for p in pods(c)} == {"nginx:2"} and len(pods(c)) == 2


def test_a_daemonset_rolls_a_new_template_out_and_leaves_a_node_tainted_no_execute() -> None:
    c = cluster(nodes=2)
    c.post(f"{APPS}/daemonsets", workload("DaemonSet", "agent"))
    settle(c)
    c.http.patch(f"{APPS}/daemonsets/agent", json={"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:2"}]}}}}, headers={"content-type": "application/strategic-merge-patch+json"})
    settle(c)
    assert sorted((p["spec"]["nodeName"], p["spec"]["containers"][0]["image"]) for p in pods(c)) == [
        ("node-1", "nginx:2"), ("node-2", "nginx:2")]
    assert c.get("daemonsets", "agent")["status"]["updatedNumberScheduled"] == 2
    c.http.patch("/api/v1/nodes/node-2", json={"spec": {"taints": [{"key": "gone", "effect": "NoExecute"}]}},
                 headers=MERGE)
    settle(c)
    assert [p["spec"]["nodeName"] for p in pods(c)] == ["node-1"]
    assert c.get("daemonsets", "agent")["status"]["desiredNumberScheduled"] == 1


def test_the_controllers_record_upstreams_events() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=1))
    settle(c)
    [rs] = c.store.list("replicasets")[0]
    rs_name = rs["metadata"]["name"]
    seen = {(e["involvedObject"]["kind"], e["reason"], e["message"].split(":")[0], e["source"]["component"])
            for e in c.events()}
    assert ("Deployment", "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 0 to 2",
            "deployment-controller") in seen
    assert ("ReplicaSet", "SuccessfulCreate", "Created pod", "replicaset-controller") in seen
    assert ("StatefulSet", "SuccessfulCreate", "create Pod db-0 in StatefulSet db successful",
            "statefulset-controller") in seen
    c.http.patch(f"{APPS}/deployments/web", json={"spec": {"replicas": 1}}, headers=MERGE)
    settle(c)
    assert any(e["reason"] == "ScalingReplicaSet" and e["message"] == f"Scaled down replica set {rs_name} from 2 to 1"
               for e in c.events())
    assert any(e["reason"] == "SuccessfulDelete" and e["message"].startswith(f"Deleted pod: {rs_name}-")
               for e in c.events())
