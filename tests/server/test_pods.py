"""core/v1 Pods and Events: stored as sent, created Pending, validated lightly with field paths, bound once
through /binding, updated only where kube-apiserver allows, strategically merged by container name, deleted
gracefully when bound; Events for `kubectl describe`."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.api.codec import decode  # noqa: E402
from dralloc.api.core_v1 import Pod  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
SMP = {"content-type": "application/strategic-merge-patch+json"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1", "command": ["nginx"],
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m"}}}],
                     "volumes": [{"name": "data", "emptyDir": {}}], **spec}}


def test_a_created_pod_is_pending_with_its_qos_class_and_keeps_every_field_of_its_schema(client: TestClient) -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 7}
    assert client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=high).status_code == 201
    sent = pod(priorityClassName="high", dnsPolicy="None", dnsConfig={"nameservers": ["1.1.1.1"]},
               futureField={"x": 1})
    sent["status"] = {"phase": "Running"}
    created = client.post(PODS, json=sent)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["status"] == {"phase": "Pending", "qosClass": "Burstable"}
    data, token = body["spec"]["volumes"]  # the token volume of the ServiceAccount admission follows
    assert data == {"name": "data", "emptyDir": {}} and token["name"].startswith("kube-api-access-")
    assert body["spec"]["containers"][0]["command"] == ["nginx"]
    assert body["spec"]["dnsConfig"] == {"nameservers": ["1.1.1.1"]}  # fields dralloc does not model are kept
    # a field the schema lacks is dropped, as decoding into kube-apiserver's Go types drops it, with a warning
    assert "futureField" not in body["spec"] and "futureField" not in client.get(f"{PODS}/web").json()["spec"]
    assert created.headers["warning"] == '299 - "unknown field \\"spec.futureField\\""'
    assert body["metadata"]["namespace"] == "default" and body["metadata"]["uid"]
    typed = decode(client.get(f"{PODS}/web").json())
    assert isinstance(typed, Pod) and typed.spec.containers[0].name == "app"


def test_generate_name_gets_a_five_character_suffix(client: TestClient) -> None:
    sent = pod()
    sent["metadata"] = {"generateName": "job-"}
    name = client.post(PODS, json=sent).json()["metadata"]["name"]
    assert name.startswith("job-") and len(name) == 9 and not set(name[4:]) & set("aeiou013")


@pytest.mark.parametrize("spec,message", [
    ({"containers": []}, "spec.containers: Required value"),
    ({"containers": [{"name": "a"}]}, "spec.containers[0].image: Required value"),
    ({"containers": [{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]},
     'spec.containers[1].name: Duplicate value: "a"'),
    ({"containers": [{"name": "a", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]},
     'spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in '
     'pod.spec.resourceClaims which is empty'),
    ({"containers": [{"name": "a", "image": "x"}], "resourceClaims": [{"name": "gpu"}]},
     "spec.resourceClaims[0]: Invalid value"),
    ({"containers": [{"name": "a", "image": "x"}], "activeDeadlineSeconds": 0},
     "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"),
    ({"containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
     'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ({"containers": [{"name": "a", "image": "x"}], "tolerations": [{"operator": "Equal", "value": "v"}]},
     'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty'),
])
def test_pod_validation_names_the_field(client: TestClient, spec: dict[str, Any], message: str) -> None:
    r = client.post(PODS, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}, "spec": spec})
    assert r.status_code == 422 and message in r.json()["message"], r.text
    assert r.json()["message"].startswith('Pod "bad" is invalid: ')


def test_a_pod_with_wrong_json_types_is_a_400(client: TestClient) -> None:
    r = client.post(PODS, json={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                                "spec": {"containers": "nginx"}})
    assert r.status_code == 400 and "cannot be handled as a Pod" in r.json()["message"]


def test_binding_sets_the_node_once_as_kube_scheduler_binds(client: TestClient) -> None:
    client.post(PODS, json=pod())
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    r = client.post(f"{PODS}/web/binding", json=binding)
    assert (r.status_code, r.json()["status"]) == (201, "Success")
    bound = client.get(f"{PODS}/web").json()
    assert bound["spec"]["nodeName"] == "node-1"
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    again = client.post(f"{PODS}/web/binding", json={**binding, "target": {"name": "node-2"}})
    assert again.status_code == 409 and again.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"')
    assert client.post(f"{PODS}/missing/binding", json={**binding, "metadata": {"name": "missing"}}).status_code == 404
    r = client.post(f"{PODS}/web/binding", json={**binding, "target": {}})
    assert r.status_code == 422 and "target.name: Required value" in r.json()["message"]
    names = client.get(PODS, params={"fieldSelector": "spec.nodeName=node-1"}).json()["items"]
    assert [p["metadata"]["name"] for p in names] == ["web"]
    assert client.get(PODS, params={"fieldSelector": "spec.nodeName="}).json()["items"] == []


def test_binding_clears_the_nomination_adds_its_labels_and_refuses_a_gated_pod(client: TestClient) -> None:
    # kube-apiserver's assignPod: status.nominatedNodeName goes, the Binding's labels and annotations are
    # added to the pod, and a pod with scheduling gates cannot be bound.
    client.post(PODS, json=pod())
    client.put(f"{PODS}/web/status", json={**client.get(f"{PODS}/web").json(),
                                           "status": {"nominatedNodeName": "node-1"}})
    assert client.get(f"{PODS}/web").json()["status"]["nominatedNodeName"] == "node-1"
    binding = {"apiVersion": "v1", "kind": "Binding",
               "metadata": {"name": "web", "labels": {"placed": "yes"}, "annotations": {"by": "test"}},
               "target": {"kind": "Node", "name": "node-1"}}
    assert client.post(f"{PODS}/web/binding", json=binding).status_code == 201
    bound = client.get(f"{PODS}/web").json()
    assert "nominatedNodeName" not in bound["status"]
    assert bound["metadata"]["labels"]["placed"] == "yes" and bound["metadata"]["annotations"] == {"by": "test"}
    gated = pod()
    gated["metadata"]["name"] = "gated"
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    client.post(PODS, json=gated)
    r = client.post(f"{PODS}/gated/binding", json={**binding, "metadata": {"name": "gated"}})
    assert r.status_code == 409 and r.json()["message"] == (
        'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates')


def test_pod_updates_may_change_images_but_not_the_rest_of_the_spec(client: TestClient) -> None:
    created = client.post(PODS, json=pod()).json()
    moved = copy.deepcopy(created)
    moved["spec"]["nodeName"] = "node-9"
    r = client.put(f"{PODS}/web", json=moved)
    assert r.status_code == 422 and "spec: Forbidden: pod updates may not change fields other than" in r.text
    newer = copy.deepcopy(created)
    newer["spec"]["containers"][0]["image"] = "nginx:2"
    assert client.put(f"{PODS}/web", json=newer).json()["spec"]["containers"][0]["image"] == "nginx:2"
    status = client.get(f"{PODS}/web").json()
    status["status"]["phase"] = "Running"
    status["spec"]["containers"][0]["image"] = "ignored"
    written = client.put(f"{PODS}/web/status", json=status).json()
    assert written["status"]["phase"] == "Running" and written["spec"]["containers"][0]["image"] == "nginx:2"


def test_strategic_merge_patch_merges_containers_by_name_with_directives(client: TestClient) -> None:
    two = pod()
    two["spec"]["containers"].append({"name": "sidecar", "image": "busybox", "env": [{"name": "A", "value": "1"}]})
    client.post(PODS, json=two)
    patch = {"spec": {"containers": [{"name": "sidecar", "image": "busybox:2", "env": [{"name": "B", "value": "2"}]},
                                     {"name": "app", "$patch": "delete"}],
                      "$setElementOrder/containers": [{"name": "sidecar"}]},
             "metadata": {"labels": {"tier": "a"}}}
    r = client.patch(f"{PODS}/web", json=patch, headers=SMP)
    assert r.status_code == 422  # containers cannot be removed from a pod: an update rule, not a patch error
    patch["spec"]["containers"] = patch["spec"]["containers"][:1]
    patch["spec"]["$setElementOrder/containers"] = [{"name": "sidecar"}, {"name": "app"}]
    merged = client.patch(f"{PODS}/web", json=patch, headers=SMP)
    assert merged.status_code == 422  # env is part of the spec: forbidden too; check the merge on a dry run
    from dralloc.server.apply.strategic_merge import strategic_merge_patch

    result = strategic_merge_patch(two, patch, "Pod")
    assert [c["name"] for c in result["spec"]["containers"]] == ["sidecar", "app"]
    assert result["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert result["spec"]["containers"][0]["image"] == "busybox:2" and result["metadata"]["labels"]["tier"] == "a"
    gone = strategic_merge_patch(two, {"spec": {"containers": [{"name": "app", "$patch": "delete"}]}}, "Pod")
    assert [c["name"] for c in gone["spec"]["containers"]] == ["sidecar"]
    retained = strategic_merge_patch(two, {"spec": {"volumes": [{"name": "data", "hostPath": {"path": "/x"},
                                                                "$retainKeys": ["name", "hostPath"]}]}}, "Pod")
    assert retained["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/x"}}]
    labels = client.patch(f"{PODS}/web", json={"metadata": {"labels": {"tier": "b"}},
                                               "spec": {"containers": [{"name": "app", "image": "nginx:3"}]}},
                          headers=SMP).json()
    assert labels["metadata"]["labels"] == {"app": "web", "tier": "b"}
    assert [c["image"] for c in labels["spec"]["containers"]] == ["nginx:3", "busybox"]


def test_an_unbound_pod_is_deleted_at_once_and_a_bound_one_is_marked_terminating(client: TestClient) -> None:
    client.post(PODS, json=pod("pending"))
    assert client.delete(f"{PODS}/pending").status_code == 200
    assert client.get(f"{PODS}/pending").status_code == 404
    client.post(PODS, json=pod("running"))
    client.post(f"{PODS}/running/binding", json={"metadata": {"name": "running"}, "target": {"name": "n"}})
    r = client.delete(f"{PODS}/running", params={"gracePeriodSeconds": "30"})
    assert r.status_code == 200 and r.json()["metadata"]["deletionGracePeriodSeconds"] == 30
    assert client.get(f"{PODS}/running").json()["metadata"]["deletionTimestamp"]
    table = client.get(PODS, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:3] == ["running", "0/1", "Terminating"]
    assert client.delete(f"{PODS}/running", params={"gracePeriodSeconds": "0"}).status_code == 200
    assert client.get(f"{PODS}/running").status_code == 404


def test_events_are_stored_and_found_by_their_involved_object(client: TestClient) -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"}, "type": "Warning",
             "reason": "FailedScheduling", "message": "0/1 nodes are available",
             "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1"},
             "source": {"component": "default-scheduler"}, "count": 1}
    assert client.post(EVENTS, json=event).status_code == 201
    found = client.get(EVENTS, params={"fieldSelector": "involvedObject.name=web,involvedObject.namespace=default,"
                                                        "involvedObject.kind=Pod,involvedObject.uid=u1"}).json()
    assert [e["reason"] for e in found["items"]] == ["FailedScheduling"]
    elsewhere = {**event, "metadata": {"name": "web.2"}, "involvedObject": {"namespace": "other", "name": "web"}}
    r = client.post(EVENTS, json=elsewhere)
    assert r.status_code == 422 and "involvedObject.namespace" in r.json()["message"]


def test_events_print_as_kube_apiservers_event_table(client: TestClient) -> None:
    old = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"}, "type": "Warning",
           "reason": "FailedScheduling", "message": " 0/1 nodes are available\n",
           "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "fieldPath": "spec.containers{a}"},
           "source": {"component": "default-scheduler", "host": "cp-1"}, "count": 3,
           "firstTimestamp": "2020-01-01T00:00:00Z", "lastTimestamp": "2020-01-01T00:00:00Z"}
    # as events.k8s.io/v1 writers leave it: eventTime (a MicroTime), a reporting controller, no count
    new = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.2"}, "type": "Normal",
           "reason": "Scheduled", "message": "bound", "involvedObject": {"kind": "Pod", "namespace": "default"},
           "eventTime": "2020-01-01T00:00:00.123456Z", "reportingComponent": "sched", "reportingInstance": "i-1",
           "action": "Binding"}
    assert client.post(EVENTS, json=old).status_code == 201
    assert client.post(EVENTS, json=new).status_code == 201
    table = client.get(EVENTS, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1), ("Source", 1),
        ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1)]
    first, second = (row["cells"] for row in table["rows"])
    assert first[1:] == ["Warning", "FailedScheduling", "pod/web", "spec.containers{a}", "default-scheduler, cp-1",
                         "0/1 nodes are available", first[7], 3, "web.1"]
    assert second[1:] == ["Normal", "Scheduled", "pod", "", "sched, i-1", "bound", second[7], 1, "web.2"]
    assert first[0].endswith(("d", "y")) and second[0] == second[7] and second[0].endswith(("d", "y"))


def test_pods_are_discovered_in_the_all_category_that_kubectl_get_all_lists(client: TestClient) -> None:
    legacy = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert legacy["pods"]["categories"] == ["all"] and "categories" not in legacy["events"]
    aggregated = client.get("/api", headers={"accept": "application/json;g=apidiscovery.k8s.io;v=v2;"
                                                       "as=APIGroupDiscoveryList"}).json()
    resources = {r["resource"]: r for r in aggregated["items"][0]["versions"][0]["resources"]}
    assert resources["pods"]["categories"] == ["all"]


def test_a_created_pod_gets_kube_apiserver_defaults_a_scheduler_reads(client: TestClient) -> None:
    sent = pod()
    sent["spec"]["containers"].append({"name": "latest", "image": "busybox"})
    spec = client.post(PODS, json=sent).json()["spec"]
    assert (spec["schedulerName"], spec["restartPolicy"], spec["priority"]) == ("default-scheduler", "Always", 0)
    assert spec["terminationGracePeriodSeconds"] == 30 and spec["dnsPolicy"] == "ClusterFirst"
    assert [c["imagePullPolicy"] for c in spec["containers"]] == ["IfNotPresent", "Always"]
    assert spec["containers"][0]["terminationMessagePath"] == "/dev/termination-log"


NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {**NOT_READY, "key": "node.kubernetes.io/unreachable"}


def test_a_pod_tolerates_a_node_not_ready_or_unreachable_for_300s_as_default_toleration_seconds_admits_it(
        client: TestClient) -> None:
    assert client.post(PODS, json=pod()).json()["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    # a pod's own toleration of either taint (a key or effect left out matches any) is kept as it is
    own = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 10}
    assert client.post(PODS, json=pod("own", tolerations=[own])).json()["spec"]["tolerations"] == [own, NOT_READY]
    every = {"operator": "Exists"}
    assert client.post(PODS, json=pod("every", tolerations=[every])).json()["spec"]["tolerations"] == [every]
    # an update without them gets them again, so it is not a change of the pod's tolerations
    sent = client.get(f"{PODS}/own").json()
    sent["spec"]["tolerations"] = [own]
    r = client.put(f"{PODS}/own", json=sent)
    assert r.status_code == 200 and r.json()["spec"]["tolerations"] == [own, NOT_READY], r.text


def test_replacing_a_pod_with_what_was_read_is_not_a_spec_change_but_its_bare_manifest_is(client: TestClient) -> None:
    created = client.post(PODS, json=pod()).json()
    defaulted = copy.deepcopy(created)  # the defaults kube-apiserver fills in need not be sent again ...
    for container in defaulted["spec"]["containers"]:
        del container["imagePullPolicy"], container["terminationMessagePath"]
    r = client.put(f"{PODS}/web", json=defaulted)
    assert r.status_code == 200, r.text
    # ... but what the ServiceAccount admission added on create (the account, the token volume) must: as on a
    # cluster, `kubectl replace -f pod.yaml` of the manifest it was created from changes the spec
    again = {**pod(), "metadata": {**pod()["metadata"], "resourceVersion": r.json()["metadata"]["resourceVersion"]}}
    refused = client.put(f"{PODS}/web", json=again)
    assert refused.status_code == 422 and "pod updates may not change fields" in refused.json()["message"]


def test_a_pod_has_generation_1_and_a_spec_change_bumps_it_but_a_status_write_does_not(client: TestClient) -> None:
    # kube-apiserver's pod strategy (1.33+): generation 1 on create, +1 when the spec changes
    created = client.post(PODS, json=pod())
    assert created.json()["metadata"]["generation"] == 1
    current = created.json()
    current["spec"]["containers"][0]["image"] = "registry.example.com/app:2"
    assert client.put(f"{PODS}/web", json=current).json()["metadata"]["generation"] == 2
    status = client.get(f"{PODS}/web").json()
    status["status"]["phase"] = "Running"
    assert client.put(f"{PODS}/web/status", json=status).json()["metadata"]["generation"] == 2
    labelled = client.patch(f"{PODS}/web", json={"metadata": {"labels": {"a": "b"}}},
                            headers={"content-type": "application/merge-patch+json"})
    assert labelled.json()["metadata"]["generation"] == 2


def test_a_node_gets_no_generation(client: TestClient) -> None:
    node = client.post("/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert "generation" not in node.json()["metadata"]


def test_a_collection_delete_deletes_each_pod_as_its_own_delete_would(client: TestClient) -> None:
    for name in ("pending", "running", "other"):
        p = pod(name)
        if name == "other":
            p["metadata"]["labels"] = {"app": "db"}
        client.post(PODS, json=p)
    client.post(f"{PODS}/running/binding", json={"metadata": {"name": "running"}, "target": {"name": "n"}})
    r = client.request("DELETE", PODS, params={"labelSelector": "app=web"},
                       json={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 20})
    assert r.status_code == 200 and r.json()["kind"] == "PodList"
    assert sorted(i["metadata"]["name"] for i in r.json()["items"]) == ["pending", "running"]
    assert client.get(f"{PODS}/pending").status_code == 404  # never bound: gone at once
    running = client.get(f"{PODS}/running").json()["metadata"]  # bound: given its grace period
    assert running["deletionGracePeriodSeconds"] == 20 and running["deletionTimestamp"]
    assert client.get(f"{PODS}/other").status_code == 200


def test_pods_nodes_and_events_take_collection_deletes_and_namespaces_do_not(client: TestClient) -> None:
    verbs = {r["name"]: r["verbs"] for r in client.get("/api/v1").json()["resources"]}
    for name in ("pods", "nodes", "events"):
        assert "deletecollection" in verbs[name]
    assert "deletecollection" not in verbs["namespaces"]
    assert client.delete("/api/v1/namespaces").status_code == 405


@pytest.mark.parametrize("old,new,messages", [
    (None, 60, []), (60, 30, []), (60, 60, []),
    (60, 90, ["spec.activeDeadlineSeconds: Invalid value: 90: must be less than or equal to previous value"]),
    (60, None, ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil "
                "value"]),
    (None, -1, ["spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, inclusive",
                "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, inclusive"]),
])
def test_an_update_may_set_or_lower_the_active_deadline_but_not_raise_or_unset_it(
        client: TestClient, old: int | None, new: int | None, messages: list[str]) -> None:
    created = client.post(PODS, json=pod(**({"activeDeadlineSeconds": old} if old else {}))).json()
    created["spec"]["activeDeadlineSeconds"] = new
    if new is None:
        del created["spec"]["activeDeadlineSeconds"]
    r = client.put(f"{PODS}/web", json=created)
    if not messages:
        assert r.status_code == 200 and r.json()["spec"].get("activeDeadlineSeconds") == new
        return
    assert r.status_code == 422, r.text
    assert [f"{c['field']}: {c['message']}" for c in r.json()["details"]["causes"]] == messages


def test_a_strategic_merge_patch_leaves_the_object_it_patches_unchanged() -> None:
    from dralloc.server.apply.strategic_merge import strategic_merge_patch

    current = pod()
    current["metadata"]["finalizers"] = ["a.example/x"]
    current["metadata"]["ownerReferences"] = [{"uid": "u1", "name": "o"}]
    before = copy.deepcopy(current)
    patch = {"metadata": {"labels": {"app": None, "tier": "x"}, "finalizers": ["b.example/y"],
                          "ownerReferences": [{"uid": "u1", "name": "renamed"}],
                          "$deleteFromPrimitiveList/finalizers": ["a.example/x"]},
             "spec": {"containers": [{"name": "app", "image": "nginx:2", "ports": [{"containerPort": 80,
                                                                                      "name": "http"}]}],
                      "volumes": [{"name": "data", "$patch": "delete"}]}}
    patched = strategic_merge_patch(current, patch, "Pod")
    assert current == before
    assert patched["metadata"]["labels"] == {"tier": "x"} and patched["metadata"]["finalizers"] == ["b.example/y"]
    assert patched["metadata"]["ownerReferences"] == [{"uid": "u1", "name": "renamed"}]
    assert patched["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "name": "http"}]
    assert patched["spec"]["volumes"] == []


def test_strict_field_validation_refuses_a_pod_with_a_typo_or_a_repeated_key_as_kube_apiserver(
        client: TestClient) -> None:
    sent = pod()
    sent["spec"]["containers"][0]["resources"]["claim"] = [{"name": "gpu"}]
    sent["metadata"]["lables"] = {}
    refused = client.post(PODS, params={"fieldValidation": "Strict"}, json=sent)
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.lables", '
        'unknown field "spec.containers[0].resources.claim"')
    body = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[]}}'
    repeated = client.post(PODS, params={"fieldValidation": "Strict"}, content=body,
                           headers={"content-type": "application/json"})
    assert repeated.status_code == 400 and 'duplicate field "metadata.name"' in repeated.json()["message"]
    assert client.get(f"{PODS}/web").status_code == 404 and client.get(f"{PODS}/b").status_code == 404


@pytest.mark.slow
@pytest.mark.parametrize("annotations,message", [
    ({"seccomp.security.alpha.kubernetes.io/pod": "bogus"},
     'metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "bogus": must be a valid seccomp '
     'profile'),
    ({"container.seccomp.security.alpha.kubernetes.io/app": "localhost//etc/../x"},
     '[metadata.annotations.container.seccomp.security.alpha.kubernetes.io/app: Invalid value: "/etc/../x": must be '
     'a relative path, metadata.annotations.container.seccomp.security.alpha.kubernetes.io/app: Invalid value: '
     '"/etc/../x": must not contain \'..\']'),
    ({"container.apparmor.security.beta.kubernetes.io/other": "runtime/default"},
     'metadata.annotations[container.apparmor.security.beta.kubernetes.io/other]: Invalid value: "other": container '
     'not found'),
    ({"container.apparmor.security.beta.kubernetes.io/app": "bogus"},
     'metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Invalid value: "bogus": invalid '
     'AppArmor profile name: "bogus"'),
    ({"kubernetes.io/config.mirror": "hash"},
     'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "hash": must set spec.nodeName if mirror pod '
     'annotation is set'),
    ({"controller.kubernetes.io/pod-deletion-cost": "+1"},
     'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+1": must be a 32bit '
     'integer'),
])
def test_pod_specific_annotations_are_validated_on_create_as_kube_apiserver_does(
        client: TestClient, annotations: dict[str, str], message: str) -> None:
    sent = pod()
    sent["metadata"]["annotations"] = annotations
    r = client.post(PODS, json=sent)
    assert r.status_code == 422 and r.json()["message"] == f'Pod "web" is invalid: {message}', r.text


def test_apparmor_annotations_are_fixed_once_a_pod_exists_and_a_deletion_cost_is_an_int32(client: TestClient) -> None:
    sent = pod()
    sent["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/app": "localhost/p1",
                                       "controller.kubernetes.io/pod-deletion-cost": "-2147483648"}
    created = client.post(PODS, json=sent)
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/app": "localhost/p2",
                                          "controller.kubernetes.io/pod-deletion-cost": "2147483648"}
    r = client.put(f"{PODS}/web", json=changed)
    assert r.status_code == 422 and r.json()["message"] == (
        'Pod "web" is invalid: [metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: '
        '"2147483648": must be a 32bit integer, metadata.annotations[container.apparmor.security.beta.kubernetes.io/'
        'app]: Forbidden: may not remove or update AppArmor annotations]')


def test_a_node_with_negative_allocatable_is_refused_with_its_field_path(client: TestClient) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n-bad"},
            "status": {"allocatable": {"cpu": "-4"}}}
    r = client.post("/api/v1/nodes", json=node)
    assert (r.status_code, r.json()["message"]) == (
        422, 'Node "n-bad" is invalid: status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0')
