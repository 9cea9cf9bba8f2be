"""How many pods a rollout takes down at once: a StatefulSet's ``rollingUpdate.maxUnavailable`` (a count or a
share, highest ordinals first, counting the pods already unavailable) and a DaemonSet's ``maxSurge`` (the new
pod started beside the old one, which goes once the new one is available)."""

from __future__ import annotations

from typing import Any

from cluster import Cluster
from test_controller_revisions import images, set_image
from test_workload_controllers import APPS, MERGE, cluster, settle, workload


def taken_down(c: Cluster, *names: str) -> list[str]:
    """Which of these pods are gone or being deleted."""
    live = {p["metadata"]["name"] for p in c.pods() if not p["metadata"].get("deletionTimestamp")}
    return [name for name in names if name not in live]


def rolling(**rolling_update: Any) -> dict[str, Any]:
    return {"type": "RollingUpdate", "rollingUpdate": rolling_update}


def test_a_statefulset_takes_down_up_to_max_unavailable_pods_at_once_from_the_highest_ordinal() -> None:
    for budget, expected in ((None, ["db-4"]), (2, ["db-3", "db-4"]), ("50%", ["db-3", "db-4"]),
                             ("10%", ["db-4"])):
        c = cluster()
        strategy = rolling(**({} if budget is None else {"maxUnavailable": budget}))
        c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=5, updateStrategy=strategy))
        settle(c)
        if budget is None:  # (kube-apiserver defaults it to 1)
            assert c.get("statefulsets", "db")["spec"]["updateStrategy"]["rollingUpdate"] == {
                "partition": 0, "maxUnavailable": 1}
        set_image(c, "statefulsets", "db", "nginx:2")
        c.manager.run_once()
        assert taken_down(c, *(f"db-{i}" for i in range(5))) == expected, budget
        settle(c)
        assert set(images(c, "db-").values()) == {"nginx:2"} and len(images(c, "db-")) == 5


def test_pods_already_unavailable_use_up_the_budget() -> None:
    c = cluster(fake_kubelet=False)
    c.post(f"{APPS}/statefulsets", workload("StatefulSet", "db", replicas=3, podManagementPolicy="Parallel",
                                           updateStrategy=rolling(maxUnavailable=2)))
    settle(c)
    for i in range(3):  # running and ready, but for db-0
        ready = i != 0
        c.manager.writer.update("pods", "default", f"db-{i}", lambda p, ready=ready: {**p, "status": {
            **p["status"], "phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]}})
    settle(c)
    set_image(c, "statefulsets", "db", "nginx:2")
    c.manager.run_once()
    assert taken_down(c, "db-0", "db-1", "db-2") == ["db-2"]  # one of the two: db-0 is unavailable already
