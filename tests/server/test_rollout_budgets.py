"""How many pods a rollout takes down at once: a StatefulSet's ``rollingUpdate.maxUnavailable`` (a count or a
share, highest ordinals first, counting the pods already unavailable) and a DaemonSet's ``maxSurge`` (the new
pod started beside the old one, which goes once the new one is available)."""

from __future__ import annotations

from functools import partial
from typing import Any

from cluster import Cluster
from test_controller_revisions import images, set_image
from test_workload_controllers import APPS, cluster, pods, settle, template, workload


def taken_down(c: Cluster, *names: str) -> list[str]:
    """Which of these pods are gone or being deleted."""
    live = {p["metadata"]["name"] for p in c.pods() if not p["metadata"].get("deletionTimestamp")}
    return [name for name in names if name not in live]


def running(pod: dict[str, Any], ready: bool) -> dict[str, Any]:
    """The kubelet's word: the pod runs (ready or not)."""
    return {**pod, "status": {**pod["status"], "phase": "Running", "conditions": [
        {"type": "Ready", "status": str(ready)}]}}


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
        c.manager.writer.update("pods", "default", f"db-{i}", partial(running, ready=i != 0))
    settle(c)
    set_image(c, "statefulsets", "db", "nginx:2")
    c.manager.run_once()
    assert taken_down(c, "db-0", "db-1", "db-2") == ["db-2"]  # one of the two: db-0 is unavailable already


def agents(c: Cluster) -> dict[str, list[tuple[str, str]]]:
    """The live daemon pods by node: (image, ready) of each, by image."""
    out: dict[str, list[tuple[str, str]]] = {}
    for p in sorted(pods(c, "agent-"), key=lambda p: p["spec"]["containers"][0]["image"]):
        node = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
        ready = next((x["status"] for x in p["status"].get("conditions", []) if x["type"] == "Ready"), "False")
        out.setdefault(node, []).append((p["spec"]["containers"][0]["image"], ready))
    return out


def make_ready(c: Cluster) -> None:
    """The kubelet's word: every daemon pod runs and is ready."""
    for p in pods(c, "agent-"):
        c.manager.writer.update("pods", "default", p["metadata"]["name"], partial(running, ready=True))
    settle(c)


def daemon_set(**rolling_update: Any) -> dict[str, Any]:
    return workload("DaemonSet", "agent", selector={"matchLabels": {"app": "agent"}},
                    template=template(labels={"app": "agent"}), updateStrategy=rolling(**rolling_update))


def test_a_daemonset_with_max_surge_starts_the_new_pod_beside_the_old_one() -> None:
    c = cluster(nodes=3, fake_kubelet=False)
    c.post(f"{APPS}/daemonsets", daemon_set(maxSurge=1, maxUnavailable=0))
    settle(c)
    make_ready(c)
    old = [("nginx:1", "True")]
    assert agents(c) == {"node-1": old, "node-2": old, "node-3": old}
    set_image(c, "daemonsets", "agent", "nginx:2")
    settle(c)
    # one node at a time (maxSurge 1): the new pod beside the old one, which stays while the new is not available
    assert agents(c) == {"node-1": old + [("nginx:2", "False")], "node-2": old, "node-3": old}
    make_ready(c)
    assert agents(c) == {"node-1": [("nginx:2", "True")], "node-2": old + [("nginx:2", "False")], "node-3": old}
    make_ready(c)
    make_ready(c)
    assert agents(c) == {f"node-{i}": [("nginx:2", "True")] for i in (1, 2, 3)}
    status = c.get("daemonsets", "agent")["status"]
    assert (status["updatedNumberScheduled"], status["numberAvailable"], status["desiredNumberScheduled"]) == (3, 3, 3)


def test_a_daemonset_takes_down_up_to_max_unavailable_nodes_at_once() -> None:
    for budget, down in ((None, 1), (2, 2), ("50%", 2), ("100%", 3)):
        c = cluster(nodes=3)
        c.post(f"{APPS}/daemonsets", daemon_set(**({} if budget is None else {"maxUnavailable": budget})))
        settle(c)
        before = [p["metadata"]["name"] for p in pods(c, "agent-")]
        set_image(c, "daemonsets", "agent", "nginx:2")
        c.manager.run_once()
        assert len(taken_down(c, *before)) == down, budget
        settle(c)
        assert {image for here in agents(c).values() for image, _ in here} == {"nginx:2"}


def test_rollout_budgets_are_checked_as_kube_apiserver_checks_them() -> None:
    c = cluster(nodes=1)
    where = "spec.updateStrategy.rollingUpdate"
    percent = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
               "regex used for validation is '[0-9]+%')")
    cases = [
        ("daemonsets", daemon_set(maxSurge=1),  # (maxUnavailable defaults to 1)
         f"{where}.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"),
        ("daemonsets", daemon_set(maxSurge=0, maxUnavailable=0),
         f"{where}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"),
        ("daemonsets", daemon_set(maxSurge="150%", maxUnavailable=0),
         f'{where}.maxSurge: Invalid value: "150%": must not be greater than 100%'),
        ("daemonsets", daemon_set(maxUnavailable="one"), f'{where}.maxUnavailable: Invalid value: "one": {percent}'),
        ("statefulsets", workload("StatefulSet", "db", updateStrategy=rolling(maxUnavailable=0)),
         f"{where}.maxUnavailable: Invalid value: 0: cannot be 0"),
        ("statefulsets", workload("StatefulSet", "db", updateStrategy=rolling(maxUnavailable=-1)),
         f"{where}.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"),
        ("statefulsets", workload("StatefulSet", "db", updateStrategy=rolling(partition=-1)),
         f"{where}.partition: Invalid value: -1: must be greater than or equal to 0"),
    ]
    for resource, body, message in cases:
        r = c.http.post(f"{APPS}/{resource}", json=body)
        assert r.status_code == 422 and message in r.json()["message"], (message, r.text)
