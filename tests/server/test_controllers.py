"""The controllers inside `dralloc serve`, one pass at a time over a real store: the resourceclaim controller,
the scheduler loop (dralloc.scheduler), device taint eviction and the fake kubelet."""

from __future__ import annotations

import copy
import time
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import CLASS, NODE, NS, TEMPLATE, Cluster, R, gpu_cluster, pod, slice_  # noqa: E402

from dralloc.api.codec import decode, to_dict  # noqa: E402
from dralloc.controllers.preemption import preemption_condition  # noqa: E402
from dralloc.server.controllers import ControllerManager  # noqa: E402
from dralloc.server.controllers.writes import Writer  # noqa: E402


@pytest.fixture
def cluster() -> Cluster:
    return gpu_cluster()


def test_a_template_claim_is_created_as_the_resourceclaim_controller_names_and_owns_it(cluster: Cluster) -> None:
    created = cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    (claim,) = cluster.claims()
    meta = claim["metadata"]
    assert meta["generateName"] == "trainer-gpu-" and meta["name"].startswith("trainer-gpu-")
    assert len(meta["name"]) == len("trainer-gpu-") + 5
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "trainer",
                                        "uid": created["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert claim["spec"] == cluster.get("resourceclaimtemplates", "one-gpu")["spec"]["spec"]
    status = cluster.get("pods", "trainer")["status"]
    assert status["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": meta["name"]}]


def test_a_pod_that_fits_gets_its_claim_allocated_and_reserved_then_is_bound(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    created = cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    bound = cluster.get("pods", "trainer")
    assert bound["spec"]["nodeName"] == "node-1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= bound["status"]["conditions"][0].items()
    (claim,) = cluster.claims()
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["driver"], r["pool"], r["device"]) for r in results] == [("gpu.example.com", "node-1", "gpu-0")]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer",
                                               "uid": created["metadata"]["uid"]}]
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    (event,) = cluster.events("Scheduled")
    assert (event["type"], event["message"], event["source"]) == (
        "Normal", "Successfully assigned default/trainer to node-1", {"component": "default-scheduler"})


def test_a_pod_that_does_not_fit_waits_with_kube_schedulers_message_until_a_slice_appears(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("waiter"))
    cluster.settle()
    pending = cluster.get("pods", "waiter")
    assert "nodeName" not in pending["spec"]
    (cond,) = [c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    (event,) = cluster.events("FailedScheduling")
    assert (event["type"], event["message"], event["count"]) == ("Warning", cond["message"], 1)
    passes = cluster.manager.passes
    cluster.manager.run_once(force=False)  # nothing changed: the pod is not tried again
    assert cluster.manager.passes == passes and cluster.events("FailedScheduling")[0]["count"] == 1
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.settle()
    assert cluster.get("pods", "waiter")["spec"]["nodeName"] == "node-1"


def test_an_identical_failure_after_a_change_bumps_the_count_of_the_same_event(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("waiter"))
    cluster.settle()
    cluster.post(f"{R}/deviceclasses", {**CLASS, "metadata": {"name": "unrelated"}})  # may matter: retried
    cluster.settle()
    (event,) = cluster.events("FailedScheduling")
    assert event["count"] == 2 and event["lastTimestamp"] >= event["firstTimestamp"]


def test_deleting_a_pod_deletes_its_generated_claim_and_deallocates_a_shared_one(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_(devices=2))
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    cluster.post(f"{R}/namespaces/default/resourceclaims", shared)
    cluster.post(f"{NS}/pods", pod("own"))
    cluster.post(f"{NS}/pods", pod("user", {"resourceClaimName": "shared"}))
    cluster.settle()
    assert all(c["status"].get("reservedFor") for c in cluster.claims())
    assert cluster.http.delete(f"{NS}/pods/own").status_code == 200
    assert cluster.http.delete(f"{NS}/pods/user").status_code == 200
    cluster.settle()
    (left,) = cluster.claims()
    assert left["metadata"]["name"] == "shared"
    assert "status" not in left and "finalizers" not in left["metadata"]


def test_a_finished_pod_releases_its_claim_which_stays_until_the_pod_is_gone(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("job"))
    cluster.settle()
    done = cluster.get("pods", "job")
    done["status"]["phase"] = "Succeeded"
    assert cluster.http.put(f"{NS}/pods/job/status", json=done).status_code == 200
    cluster.settle()
    (claim,) = cluster.claims()
    assert "allocation" not in claim.get("status", {})
    cluster.http.delete(f"{NS}/pods/job")
    cluster.settle()
    assert cluster.claims() == []


def test_a_noexecute_device_taint_rule_evicts_the_pod_and_reports_on_the_rule(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("victim"))
    cluster.settle()
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "broken"},
            "spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "broken", "effect": "NoExecute"}}}
    cluster.post(f"{R}/devicetaintrules", rule)
    cluster.settle()
    assert cluster.pods() == [] and cluster.claims() == []
    (event,) = cluster.events("DeviceTaintManagerEviction")
    assert (event["message"], event["source"]) == ("Marking for deletion", {"component": "device-taint-eviction"})
    (cond,) = cluster.get("devicetaintrules", "broken", "")["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "EvictionInProgress", "False", "Completed", "1 pod evicted since starting the controller.")


def test_a_claim_that_tolerates_the_taint_keeps_its_pod(cluster: Cluster) -> None:
    tolerant = copy.deepcopy(TEMPLATE)
    tolerant["metadata"]["name"] = "tolerant"
    tolerant["spec"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "broken", "operator": "Exists"}]
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", tolerant)
    cluster.post(f"{R}/resourceslices", slice_(taints=[{"key": "broken", "effect": "NoExecute"}]))
    cluster.post(f"{NS}/pods", pod("stays", {"resourceClaimTemplateName": "tolerant"}))
    cluster.settle()
    assert cluster.get("pods", "stays")["spec"]["nodeName"] == "node-1"
    assert cluster.events("DeviceTaintManagerEviction") == []


def test_a_bound_pod_with_a_grace_period_is_only_marked_terminating_with_its_disruption_condition(
        cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("slow", terminationGracePeriodSeconds=30))
    cluster.settle()
    cluster.post(f"{R}/devicetaintrules", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                                           "metadata": {"name": "broken"},
                                           "spec": {"taint": {"key": "broken", "effect": "NoExecute"}}})
    cluster.settle()
    marked = cluster.get("pods", "slow")
    assert marked["metadata"]["deletionTimestamp"] and cluster.manager.terminating.next_due is not None
    (cond,) = [c for c in marked["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (cond["reason"], cond["message"]) == ("DeletionByDeviceTaintManager",
                                                 "Device Taint manager: deleting due to NoExecute taint")


def test_without_the_scheduler_claims_are_made_but_pods_stay_unbound() -> None:
    c = Cluster(scheduler=False)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    c.post(f"{R}/resourceslices", slice_())
    c.post(f"{NS}/pods", pod("external"))
    c.settle()
    assert len(c.claims()) == 1 and "nodeName" not in c.get("pods", "external")["spec"]


def test_pods_of_another_scheduler_are_left_alone(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("other", schedulerName="my-scheduler"))
    cluster.settle()
    assert "nodeName" not in cluster.get("pods", "other")["spec"] and cluster.events() == []


def test_the_fake_kubelet_marks_bound_pods_running_and_ready() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                          "spec": {"containers": [{"name": "main", "image": "x:1"}]}})
    c.settle()
    status = c.get("pods", "plain")["status"]
    assert status["phase"] == "Running"
    assert {x["type"] for x in status["conditions"] if x["status"] == "True"} >= {"Ready", "PodScheduled"}
    assert status["containerStatuses"][0]["ready"] is True


def test_the_fake_kubelet_reports_its_nodes_ready_as_a_kubelet_does() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    pressured = {"type": "DiskPressure", "status": "True", "reason": "Mine", "message": "set by a test"}
    c.post("/api/v1/nodes", {**NODE, "metadata": {"name": "node-2"},
                             "status": {**NODE.get("status", {}), "conditions": [pressured]}})
    c.settle()
    conditions = c.get("nodes", "node-1", "")["status"]["conditions"]
    assert [(x["type"], x["status"], x["reason"]) for x in conditions] == [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory"), ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID"), ("Ready", "True", "KubeletReady")]
    assert conditions[-1]["message"] == "kubelet is posting ready status"
    kept = c.get("nodes", "node-2", "")["status"]["conditions"]
    assert kept[0] == pressured and [x["type"] for x in kept[1:]] == ["MemoryPressure", "PIDPressure", "Ready"]
    lease = c.get("leases", "node-1", "kube-node-lease")  # kubectl describe node prints it
    assert lease["spec"]["holderIdentity"] == "node-1" and lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0]["uid"] == c.get("nodes", "node-1", "")["metadata"]["uid"]
    plain = Cluster()  # no kubelet at all: nobody reports for the node
    plain.post("/api/v1/nodes", NODE)
    plain.settle()
    assert "conditions" not in plain.get("nodes", "node-1", "").get("status", {})


def test_the_fake_kubelet_reports_its_nodes_address_as_the_pods_host_ip() -> None:
    # kubectl describe pod prints Node: <name>/<hostIP>; a pod on the host network has the node's IP too
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", {**NODE, "status": {**NODE["status"], "addresses": [
        {"type": "Hostname", "address": "node-1"}, {"type": "InternalIP", "address": "172.18.0.2"}]}})
    for name, extra in (("plain", {}), ("host", {"hostNetwork": True})):
        c.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                              "spec": {"containers": [{"name": "main", "image": "x:1"}], **extra}})
    c.settle()
    plain, host = c.get("pods", "plain")["status"], c.get("pods", "host")["status"]
    assert (plain["hostIP"], plain["hostIPs"]) == ("172.18.0.2", [{"ip": "172.18.0.2"}])
    assert plain["podIP"] == "10.88.0.2"  # (a node without a pod CIDR: the cluster-wide pod network)
    assert (host["podIP"], host["podIPs"]) == ("172.18.0.2", [{"ip": "172.18.0.2"}])


def test_the_fake_kubelet_gives_pods_addresses_from_their_nodes_pod_cidrs() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", {**NODE, "spec": {"podCIDR": "10.244.1.0/24",
                                              "podCIDRs": ["10.244.1.0/24", "fd00:10:244:1::/64"]}})
    for name, extra in (("a", {}), ("b", {}), ("host", {"hostNetwork": True})):
        c.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                              "spec": {"containers": [{"name": "main", "image": "x:1"}], **extra}})
        c.settle()
    a, b = c.get("pods", "a")["status"], c.get("pods", "b")["status"]
    assert (a["podIP"], a["podIPs"]) == ("10.244.1.2", [{"ip": "10.244.1.2"}, {"ip": "fd00:10:244:1::2"}])
    assert b["podIPs"] == [{"ip": "10.244.1.3"}, {"ip": "fd00:10:244:1::3"}]  # the next free ones
    assert "podIP" not in c.get("pods", "host")["status"]  # the host network: its node's address (it has none)


def test_the_fake_kubelet_reports_a_host_ip_kube_apiserver_takes_in_its_canonical_form() -> None:
    # a node address that is no IP kube-apiserver takes in a pod status is passed over (it would refuse the
    # write: tests/server/conftest.py checks every pod the controllers write); an IPv6 one is written as
    # kubelets write it, lowercase and shortened
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", {**NODE, "status": {**NODE["status"], "addresses": [
        {"type": "InternalIP", "address": "node-1.internal"}, {"type": "InternalIP", "address": "010.0.0.2"},
        {"type": "ExternalIP", "address": "2001:DB8:0:0::2"}]}})
    c.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                          "spec": {"containers": [{"name": "main", "image": "x:1"}]}})
    c.settle()
    status = c.get("pods", "plain")["status"]
    assert (status["hostIP"], status["hostIPs"]) == ("2001:db8::2", [{"ip": "2001:db8::2"}])


def test_a_restarted_controller_reuses_the_claim_it_made_before_recording_it(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("trainer"))
    cluster.settle()
    pod_now = cluster.get("pods", "trainer")
    pod_now["status"].pop("resourceClaimStatuses")  # as if the server stopped between the two writes
    assert cluster.http.put(f"{NS}/pods/trainer/status", json=pod_now).status_code == 200
    again = ControllerManager(cluster.store)
    again.run_once()
    (claim,) = cluster.claims()
    assert cluster.get("pods", "trainer")["status"]["resourceClaimStatuses"] == [
        {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


def test_a_controller_write_retries_on_conflict_and_keeps_the_other_clients_change(cluster: Cluster) -> None:
    cluster.post(f"{NS}/pods", pod("raced"))
    writer = Writer(cluster.store)
    calls = []

    def label(current: dict[str, Any]) -> dict[str, Any]:
        if not calls:  # another client writes between our read and our write
            other = cluster.get("pods", "raced")
            other["metadata"]["annotations"] = {"by": "client"}
            assert cluster.http.put(f"{NS}/pods/raced", json=other).status_code == 200
        calls.append(1)
        current["metadata"].setdefault("labels", {})["by"] = "controller"
        return current

    writer.update("pods", "default", "raced", label)
    meta = cluster.get("pods", "raced")["metadata"]
    assert len(calls) == 2 and meta["annotations"] == {"by": "client"} and meta["labels"] == {"by": "controller"}


def test_preemption_deletes_the_victim_and_releases_its_claims(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    low = pod("low")
    low["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "6"}
    cluster.post(f"{NS}/pods", low)
    cluster.settle()
    assert cluster.claims()[0]["status"]["reservedFor"][0]["name"] == "low"
    cluster.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "high"},
                                "spec": {"priorityClassName": cluster.priority_class(1000), "containers": [
                                    {"name": "main", "image": "x:1", "resources": {"requests": {"cpu": "6"}}}]}})
    cluster.settle()
    assert [p["metadata"]["name"] for p in cluster.pods()] == ["high"]
    assert cluster.get("pods", "high")["spec"]["nodeName"] == "node-1"
    assert cluster.claims() == []  # the victim's generated claim went with it
    (event,) = cluster.events("Preempted")
    assert event["involvedObject"]["name"] == "low"
    assert event["message"] == f"Preempted by pod {cluster.get('pods', 'high')['metadata']['uid']} on node node-1"


def _preemption_on_a_shared_gpu(cluster: Cluster, grace: int) -> None:
    """low holds the only GPU (through a shared claim) and 6 of 8 cpus; high needs the claim and 6 cpus."""
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{R}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
        "spec": TEMPLATE["spec"]["spec"]})
    for name, priority in (("low", 0), ("high", 1000)):
        p = pod(name, {"resourceClaimName": "shared"}, terminationGracePeriodSeconds=grace)
        if priority:
            p["spec"]["priorityClassName"] = cluster.priority_class(priority)
        p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "6"}
        cluster.post(f"{NS}/pods", p)
        cluster.settle()


def test_a_preemption_victim_terminates_for_its_grace_period_while_the_preemptor_waits(cluster: Cluster) -> None:
    _preemption_on_a_shared_gpu(cluster, grace=30)
    low, high = cluster.get("pods", "low"), cluster.get("pods", "high")
    assert low["metadata"]["deletionTimestamp"] and low["metadata"]["deletionGracePeriodSeconds"] == 30
    (cond,) = [c for c in low["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    typed = to_dict(preemption_condition(decode(low), high["spec"].get("schedulerName")))  # the one rule
    assert {k: cond.get(k) for k in typed} == typed and typed["observedGeneration"] == low["metadata"]["generation"]
    assert "nodeName" not in high["spec"] and high["status"]["nominatedNodeName"] == "node-1"
    (scheduled,) = [c for c in high["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled["message"] == "0/1 nodes are available: 1 Insufficient cpu."  # the preempting cycle's
    (claim,) = cluster.claims()
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["low"]  # kept while low terminates
    (event,) = cluster.events("Preempted")
    assert event["message"] == f"Preempted by pod {high['metadata']['uid']} on node node-1"

    cluster.manager.terminating.clock = lambda: time.time() + 31  # the grace period is over
    cluster.settle()
    assert [p["metadata"]["name"] for p in cluster.pods()] == ["high"]
    assert cluster.get("pods", "high")["spec"]["nodeName"] == "node-1"
    (claim,) = cluster.claims()
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["high"] and claim["status"]["allocation"]
    assert len(cluster.events("Preempted")) == 1  # the terminating victim was not preempted twice


def test_with_the_fake_kubelet_a_preemption_victim_goes_at_once() -> None:
    c = Cluster(fake_kubelet=True)
    c.post("/api/v1/nodes", NODE)
    c.post(f"{R}/deviceclasses", CLASS)
    _preemption_on_a_shared_gpu(c, grace=30)
    assert [p["metadata"]["name"] for p in c.pods()] == ["high"]
    assert c.get("pods", "high")["spec"]["nodeName"] == "node-1"


def test_a_gated_pod_is_marked_scheduling_gated_without_an_event_and_scheduled_once_ungated(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_())
    created = cluster.post(f"{NS}/pods", pod("gated", schedulingGates=[{"name": "example.com/wait"}]))
    # kube-apiserver's pod strategy marks it when it is created; the scheduler then writes nothing for it
    (cond,) = created["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"], cond["lastProbeTime"]) == (
        "PodScheduled", "False", "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates", None)
    cluster.settle()
    gated = cluster.get("pods", "gated")
    assert gated["status"]["conditions"] == [cond]
    assert cluster.events() == []
    gated["spec"]["schedulingGates"] = []
    assert cluster.http.put(f"{NS}/pods/gated", json=gated).status_code == 200
    cluster.settle()
    assert cluster.get("pods", "gated")["spec"]["nodeName"] == "node-1"


def test_a_pod_whose_claim_is_missing_is_held_back_with_no_event_or_condition(cluster: Cluster) -> None:
    # DynamicResources' PreEnqueue keeps the pod out of the queue until its claim exists: kube-scheduler's
    # queue writes nothing for it (no FailedScheduling event, no PodScheduled condition).
    cluster.post(f"{R}/resourceslices", slice_())
    created = cluster.post(f"{NS}/pods", pod("waiting", claim={"resourceClaimName": "later"}))
    cluster.settle()
    held = cluster.get("pods", "waiting")
    assert "conditions" not in held["status"] and "nodeName" not in held["spec"]
    assert held["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert cluster.events() == []
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "later", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
    cluster.post(f"{R}/namespaces/default/resourceclaims", claim)
    cluster.settle()
    assert cluster.get("pods", "waiting")["spec"]["nodeName"] == "node-1"


def test_a_pod_that_finishes_lets_a_waiting_pod_in(cluster: Cluster) -> None:
    def cpu_pod(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": "6"}}}]}}

    cluster.post(f"{NS}/pods", cpu_pod("first"))
    cluster.settle()
    cluster.post(f"{NS}/pods", cpu_pod("second"))
    cluster.settle()
    assert "nodeName" not in cluster.get("pods", "second")["spec"]
    done = cluster.get("pods", "first")
    done["status"]["phase"] = "Succeeded"
    assert cluster.http.put(f"{NS}/pods/first/status", json=done).status_code == 200
    cluster.settle()
    assert cluster.get("pods", "second")["spec"]["nodeName"] == "node-1"


@pytest.mark.parametrize("added_hours_ago", [0, 2])
def test_toleration_seconds_delay_the_eviction_to_the_taints_time_plus_those_seconds(
        cluster: Cluster, added_hours_ago: int) -> None:
    tolerant = copy.deepcopy(TEMPLATE)
    tolerant["metadata"]["name"] = "for-an-hour"
    tolerant["spec"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [
        {"key": "broken", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}]
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", tolerant)
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{NS}/pods", pod("patient", {"resourceClaimTemplateName": "for-an-hour"}))
    cluster.settle()
    added = datetime.now(UTC) - timedelta(hours=added_hours_ago)
    cluster.post(f"{R}/devicetaintrules", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "broken"},
        "spec": {"taint": {"key": "broken", "effect": "NoExecute", "timeAdded": added.strftime("%Y-%m-%dT%H:%M:%SZ")}}})
    cluster.settle()
    (cond,) = cluster.get("devicetaintrules", "broken", "")["status"]["conditions"]
    if added_hours_ago:  # the hour is over: evicted now
        assert cluster.pods() == [] and (cond["status"], cond["reason"]) == ("False", "Completed")
        return
    assert cluster.get("pods", "patient")["spec"]["nodeName"] == "node-1"
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")
    due = cluster.manager.taints.next_due
    assert due is not None and abs(due - (added.timestamp() + 3600)) < 2


def test_a_rule_with_effect_none_previews_what_noexecute_would_evict(cluster: Cluster) -> None:
    cluster.post(f"{R}/resourceslices", slice_(devices=2))
    cluster.post(f"{NS}/pods", pod("user"))
    cluster.settle()
    cluster.post(f"{R}/devicetaintrules", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                                           "metadata": {"name": "preview"},
                                           "spec": {"taint": {"key": "maintenance", "effect": "None"}}})
    cluster.settle()
    assert cluster.get("pods", "user")["spec"]["nodeName"] == "node-1"
    (cond,) = cluster.get("devicetaintrules", "preview", "")["status"]["conditions"]
    assert (cond["status"], cond["reason"]) == ("False", "NoEffect")
    assert cond["message"] == ("2 published devices selected. 1 allocated device selected. 1 pod would be evicted "
                               "in 1 namespace if the effect was NoExecute. This information will not be updated "
                               "again. Recreate the DeviceTaintRule to trigger an update.")


STEPS = st.lists(st.one_of(
    st.tuples(st.just("template"), st.integers(0, 5)),
    st.tuples(st.just("shared"), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("finish"), st.integers(0, 5)),
    st.tuples(st.just("slice"), st.integers(1, 3)),
), min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_after_any_sequence_of_pod_changes_claims_and_pods_agree(steps: list[tuple[str, int]]) -> None:
    c = Cluster()
    c.post("/api/v1/nodes", NODE)
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    c.post(f"{R}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    for action, n in steps:
        name = f"p{n}"
        exists = c.http.get(f"{NS}/pods/{name}").status_code == 200
        if action in ("template", "shared") and not exists:
            claim = {"resourceClaimTemplateName": "one-gpu"} if action == "template" else {"resourceClaimName": "shared"}
            c.post(f"{NS}/pods", pod(name, claim))
        elif action == "delete" and exists:
            c.http.delete(f"{NS}/pods/{name}")
        elif action == "finish" and exists:
            current = c.get("pods", name)
            current["status"]["phase"] = "Failed"
            c.http.put(f"{NS}/pods/{name}/status", json=current)
        elif action == "slice":
            c.http.delete(f"{R}/resourceslices/node-1-gpu")
            c.post(f"{R}/resourceslices", slice_(devices=n))
        c.settle(passes=10)
    pods = {p["metadata"]["uid"]: p for p in c.pods()}
    active = {u for u, p in pods.items() if p["status"].get("phase") not in ("Succeeded", "Failed")}
    devices = []
    for claim in c.claims():
        status = claim.get("status") or {}
        reserved = {r["uid"] for r in status.get("reservedFor") or []}
        assert reserved <= active  # only pods that still need it
        assert bool(reserved) == ("allocation" in status)  # allocated exactly while reserved
        for r in reserved:
            assert pods[r]["spec"].get("nodeName") == "node-1"
        owner = (claim["metadata"].get("ownerReferences") or [{}])[0].get("uid")
        assert owner is None or owner in pods  # a generated claim goes with its pod
        devices += [d["device"] for d in ((status.get("allocation") or {}).get("devices") or {}).get("results", [])]
    assert len(devices) == len(set(devices))  # no device allocated twice
    for p in pods.values():
        if p["spec"].get("nodeName") and p["metadata"]["uid"] in active:
            claim_name = (p["spec"]["resourceClaims"][0].get("resourceClaimName")
                          or p["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
            claim = c.get("resourceclaims", claim_name)
            assert p["metadata"]["uid"] in {r["uid"] for r in claim["status"]["reservedFor"]}


def test_setting_a_pod_condition_replaces_it_and_keeps_its_transition_time_while_its_status_stays() -> None:
    from dralloc.server.controllers.termination import set_condition

    before = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByDeviceTaintManager",
              "lastTransitionTime": "2026-01-01T00:00:00Z"}
    pod = {"status": {"conditions": [{"type": "Ready", "status": "True"}, before]}}
    preempted = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    assert set_condition(pod, preempted)
    assert pod["status"]["conditions"][1] == {**preempted, "lastProbeTime": None,
                                              "lastTransitionTime": "2026-01-01T00:00:00Z"}
    assert not set_condition(pod, preempted)  # nothing new: no write
    assert set_condition(pod, {**preempted, "status": "False"})
    assert pod["status"]["conditions"][1]["lastTransitionTime"] != "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("fake_kubelet", [False, True])
def test_a_foreground_deletion_of_a_pod_with_a_generated_claim_completes(fake_kubelet: bool) -> None:
    """The pod waits for its claim (blockOwnerDeletion), the claim for the pod to stop using it: the kubelet ends
    the standoff by reporting the pod's terminal phase once its grace period is over (before its final delete),
    which releases the claim; the claim goes, then the pod."""
    c = Cluster(fake_kubelet=fake_kubelet)
    for path, obj in (("/api/v1/nodes", NODE), (f"{R}/deviceclasses", CLASS),
                      (f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE), (f"{R}/resourceslices", slice_())):
        c.post(path, obj)
    c.post(f"{NS}/pods", pod("trainer", terminationGracePeriodSeconds=30))
    c.settle()
    assert c.claims()[0]["status"]["reservedFor"]
    r = c.http.delete(f"{NS}/pods/trainer", params={"propagationPolicy": "Foreground"})
    assert r.status_code == 200 and r.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    c.settle()
    if not fake_kubelet:
        (claim,) = c.claims()  # the pod is still in its grace period: the claim stays reserved
        assert claim["metadata"]["deletionTimestamp"] and claim["status"]["reservedFor"]
        assert c.get("pods", "trainer")["status"]["phase"] == "Pending"
        c.manager.terminating.clock = lambda: time.time() + 31  # the grace period is over
        c.settle()
    assert c.pods() == [] and c.claims() == []


@pytest.mark.parametrize("fake_kubelet,phase", [(False, "Failed"), (True, "Succeeded")])
def test_a_pod_held_by_a_finalizer_past_its_grace_period_is_reported_terminal(fake_kubelet: bool, phase: str) -> None:
    """As the kubelet once it stopped a deleted pod's containers (killed at the end of the grace period, or
    stopped at once with the fake kubelet): the pod's phase is terminal and its final delete has no grace."""
    c = Cluster(fake_kubelet=fake_kubelet)
    c.post("/api/v1/nodes", NODE)
    held = pod("held", terminationGracePeriodSeconds=30)
    held["spec"].pop("resourceClaims")
    held["spec"]["containers"][0].pop("resources")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    c.post(f"{NS}/pods", held)
    c.settle()
    assert c.http.delete(f"{NS}/pods/held").status_code == 200
    c.manager.terminating.clock = lambda: time.time() + 31
    c.settle()
    stopped = c.get("pods", "held")
    assert stopped["status"]["phase"] == phase and stopped["metadata"]["deletionGracePeriodSeconds"] == 0


def test_a_pod_requesting_a_dra_backed_extended_resource_gets_its_claim_as_kube_scheduler_makes_it() -> None:
    c = Cluster()
    c.post("/api/v1/nodes", NODE)  # advertises no example.com/gpu: DRA provides it
    c.post(f"{R}/deviceclasses", {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}})
    c.post(f"{R}/resourceslices", slice_(devices=2))
    want = {"requests": {"example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}}
    c.post(f"{NS}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [{"name": "main", "image": "x:1", "resources": want}]}})
    c.settle()
    bound = c.get("pods", "p")
    assert bound["spec"]["nodeName"] == "node-1"
    (claim,) = c.claims()
    meta = claim["metadata"]
    assert meta["name"].startswith("p-extended-resources-") and meta["generateName"] == "p-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                        "uid": bound["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert meta["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}]
    assert sorted(r["device"] for r in claim["status"]["allocation"]["devices"]["results"]) == ["gpu-0", "gpu-1"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": bound["metadata"]["uid"]}]
    assert bound["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": meta["name"]}
    # the claim goes with its pod
    c.http.delete(f"{NS}/pods/p", params={"gracePeriodSeconds": "0"})
    c.settle()
    assert c.claims() == []


def test_a_placement_that_cannot_be_written_backs_the_pod_off_instead_of_spinning(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    from dralloc.server.controllers import scheduling
    from dralloc.server.http.errors import ApiError

    cluster.post(f"{R}/resourceslices", slice_())
    binds: list[str] = []

    def refused(store: Any, namespace: str, name: str, node: str, uid: str | None = None, *_: Any) -> Any:
        binds.append(name)
        raise ApiError(409, "the binding keeps failing")

    monkeypatch.setattr(scheduling.pod_registry, "bind", refused)
    now = [1000.0]
    loop = cluster.manager.scheduler
    loop.clock = lambda: now[0]
    cluster.post(f"{NS}/pods", pod("p"))
    cluster.settle()  # one attempt, then quiet: no pass asks for another
    assert binds == ["p"]
    assert cluster.claims()[0]["status"].get("reservedFor") in (None, [])  # its claim was released
    assert loop.next_due == 1001.0  # one second of backoff
    now[0] = 1001.5
    cluster.settle()
    assert binds == ["p", "p"] and loop.next_due == 1003.5  # then two
    now[0] = 2000.0
    monkeypatch.undo()
    cluster.settle()
    assert cluster.get("pods", "p")["spec"]["nodeName"] == "node-1" and not loop.backoff


def test_the_server_makes_the_claim_the_typed_resourceclaim_controller_makes(cluster: Cluster) -> None:
    """One rule (``dralloc.controllers.resourceclaims``) for `dralloc simulate` and `dralloc serve`: a pod
    whose name is long enough that both names are cut, and a template with labels and annotations."""
    from dralloc.controllers.resourceclaims import template_claim

    template = copy.deepcopy(TEMPLATE)
    template["metadata"]["name"] = "annotated"
    template["spec"]["metadata"]["annotations"] = {"note": "from the template"}
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", template)
    name = "a-pod-with-a-rather-long-name-" + "x" * 30
    created = cluster.post(f"{NS}/pods", pod(name, {"resourceClaimTemplateName": "annotated"}))
    cluster.settle()
    (claim,) = cluster.claims()
    typed_pod = decode(created)
    expected = to_dict(template_claim(typed_pod, typed_pod.spec.resource_claims[0],
                                      decode(cluster.get("resourceclaimtemplates", "annotated")),
                                      claim["metadata"]["name"]))
    # both parts cut in proportion (52 of 60, 2 of 3 characters), no trailing hyphen, 5 random characters
    assert claim["metadata"]["generateName"] == name[:52] + "-gp" and len(claim["metadata"]["name"]) == 55 + 5
    for field in ("name", "generateName", "namespace", "labels", "annotations", "ownerReferences"):
        assert claim["metadata"].get(field) == expected["metadata"].get(field), field
    assert claim["spec"] == expected["spec"]
