"""A Deployment paused and resumed (no rollout while paused, scaling in proportion) and its progress deadline
(Progressing False, ProgressDeadlineExceeded), one controller pass at a time with the workload controllers'
clock moved on."""

from __future__ import annotations

import time
from typing import Any

from cluster import Cluster
from test_workload_controllers import APPS, MERGE, cluster, pods, settle, template, workload

from dralloc.server.controllers import kubelet
from dralloc.server.controllers.snapshot import Snapshot

STRATEGIC = {"content-type": "application/strategic-merge-patch+json"}


def run_pods(c: Cluster) -> None:
    """The bound pods start and are ready (the fake kubelet, once, where the test says)."""
    c.manager._changes()
    kubelet.run_bound_pods(c.manager.writer, Snapshot(c.manager.mirror))
    settle(c)


def patch(c: Cluster, name: str, body: dict[str, Any], headers: dict[str, str] = MERGE) -> None:
    r = c.http.patch(f"{APPS}/deployments/{name}", json=body, headers=headers)
    assert r.status_code == 200, r.text


def set_image(c: Cluster, name: str, image: str) -> None:
    patch(c, name, {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}, STRATEGIC)


def progressing(c: Cluster, name: str = "web") -> tuple[str, str, str]:
    [cond] = [x for x in c.get("deployments", name)["status"]["conditions"] if x["type"] == "Progressing"]
    return cond["status"], cond["reason"], cond["message"]


def sizes(c: Cluster) -> dict[str, int]:
    images = {r["spec"]["template"]["spec"]["containers"][0]["image"]: r["spec"]["replicas"]
              for r in c.store.list("replicasets")[0]}
    return images


def test_a_paused_deployment_rolls_nothing_out_until_resumed() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2))
    settle(c)
    patch(c, "web", {"spec": {"paused": True}})
    settle(c)
    assert progressing(c) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    set_image(c, "web", "nginx:2")
    settle(c)
    assert sizes(c) == {"nginx:1": 2}  # no new ReplicaSet while paused
    assert [p["spec"]["containers"][0]["image"] for p in pods(c)] == ["nginx:1"] * 2
    assert "updatedReplicas" not in c.get("deployments", "web")["status"]  # (0: no new ReplicaSet)
    patch(c, "web", {"spec": {"replicas": 3}})  # scaling still happens
    settle(c)
    assert sizes(c) == {"nginx:1": 3} and len(pods(c)) == 3
    patch(c, "web", {"spec": {"paused": None}})
    settle(c)
    assert sizes(c) == {"nginx:1": 0, "nginx:2": 3}
    assert progressing(c)[:2] == ("True", "NewReplicaSetAvailable")
    reasons = [e["message"] for e in c.events("ScalingReplicaSet")]
    assert any(m.startswith("Scaled up replica set web-") and m.endswith(" from 2 to 3") for m in reasons)


def test_resuming_shows_deployment_resumed_until_the_rollout_moves() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=1, paused=True))
    settle(c)
    # paused from the start: nothing made, the condition says so
    assert progressing(c) == ("Unknown", "DeploymentPaused", "Deployment is paused") and sizes(c) == {}
    patch(c, "web", {"spec": {"paused": False}})
    settle(c)
    status, reason, message = progressing(c)  # the new ReplicaSet made, its pod pending
    assert (status, reason) == ("True", "ReplicaSetUpdated") and message.startswith('ReplicaSet "web-')
    patch(c, "web", {"spec": {"paused": True}})
    settle(c)
    patch(c, "web", {"spec": {"paused": False}})
    settle(c)
    assert progressing(c) == ("Unknown", "DeploymentResumed", "Deployment is resumed")  # nothing moved since
    run_pods(c)
    assert progressing(c)[:2] == ("True", "NewReplicaSetAvailable")


def test_a_paused_deployment_scales_its_replicasets_in_proportion() -> None:
    c = cluster(fake_kubelet=False)
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=10, strategy=strategy))
    settle(c)
    run_pods(c)
    set_image(c, "web", "nginx:2")
    settle(c)
    assert sizes(c) == {"nginx:1": 8, "nginx:2": 5}  # the rollout stalls: the new pods never get ready
    patch(c, "web", {"spec": {"paused": True, "replicas": 20}})
    settle(c)
    # 10 to add up to 20 + 3, each its share of the 13 it was made for: 8 * 23 / 13 -> 14, 5 * 23 / 13 -> 9
    assert sizes(c) == {"nginx:1": 14, "nginx:2": 9}
    for rs in c.store.list("replicasets")[0]:
        annotations = rs["metadata"]["annotations"]
        assert (annotations["deployment.kubernetes.io/desired-replicas"],
                annotations["deployment.kubernetes.io/max-replicas"]) == ("20", "23")
    patch(c, "web", {"spec": {"replicas": 10}})
    settle(c)
    # 10 to take away: 14 * 13 / 23 -> 8 and 9 * 13 / 23 -> 5
    assert sizes(c) == {"nginx:1": 8, "nginx:2": 5}
    patch(c, "web", {"spec": {"replicas": 11}})
    settle(c)
    # 1 to add: 8 * 14 / 13 -> 9 takes it (min of its share and what is left), 5 gets none
    assert sizes(c) == {"nginx:1": 9, "nginx:2": 5}


def test_a_rollout_that_makes_no_progress_times_out_after_its_deadline() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2, progressDeadlineSeconds=60))
    settle(c)
    status, reason, message = progressing(c)
    assert (status, reason) == ("True", "ReplicaSetUpdated") and message.endswith(" is progressing.")
    rs_name = c.store.list("replicasets")[0][0]["metadata"]["name"]
    start = time.time()
    assert c.manager.workloads.next_due is not None and c.manager.workloads.next_due <= start + 62
    c.manager.workloads.clock = lambda: start + 30
    settle(c)
    assert progressing(c)[1] == "ReplicaSetUpdated"  # within the deadline
    c.manager.workloads.clock = lambda: start + 62
    settle(c)
    assert progressing(c) == ("False", "ProgressDeadlineExceeded", f'ReplicaSet "{rs_name}" has timed out progressing.')
    assert c.manager.workloads.next_due is None
    run_pods(c)  # the pods come up: the rollout completes after all
    assert progressing(c) == ("True", "NewReplicaSetAvailable", f'ReplicaSet "{rs_name}" has successfully progressed.')


def test_a_paused_deployment_does_not_time_out_and_no_deadline_means_no_progressing_condition() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=2, progressDeadlineSeconds=60))
    free = workload("Deployment", "free", replicas=1, progressDeadlineSeconds=2**31 - 1,
                    selector={"matchLabels": {"app": "free"}}, template=template(labels={"app": "free"}))
    c.post(f"{APPS}/deployments", free)
    settle(c)
    patch(c, "web", {"spec": {"paused": True}})
    settle(c)
    start = time.time()
    c.manager.workloads.clock = lambda: start + 600
    settle(c)
    assert progressing(c) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    assert [x["type"] for x in c.get("deployments", "free")["status"]["conditions"]] == ["Available"]


def test_old_replicasets_beyond_the_history_limit_are_deleted_once_the_rollout_completes() -> None:
    c = cluster()
    c.post(f"{APPS}/deployments", workload("Deployment", "web", replicas=1, revisionHistoryLimit=1))
    settle(c)
    for image in ("nginx:2", "nginx:3", "nginx:4"):
        set_image(c, "web", image)
        settle(c)
    # the new one and one old one (the newest old revision) stay
    revisions = sorted((int(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]),
                        r["spec"]["template"]["spec"]["containers"][0]["image"]) for r in c.store.list("replicasets")[0])
    assert revisions == [(3, "nginx:3"), (4, "nginx:4")]
    patch(c, "web", {"spec": {"revisionHistoryLimit": 0}})
    settle(c)
    assert sizes(c) == {"nginx:4": 1}
