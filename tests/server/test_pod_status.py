"""Writes of pods/{name}/status as kube-apiserver 1.36 takes them: ValidatePodStatusUpdate's rules with its
messages and field paths (a PUT and a merge patch of the status refused alike), what the pod status strategy
keeps from the stored pod, the v1 decoding of podIP/podIPs, and the warnings of non-standard IP addresses."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
MERGE = {"content-type": "application/merge-patch+json"}
APPLY = {"content-type": "application/apply-patch+yaml"}
SUBDOMAIN_RE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
QUALIFIED_RE = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
NOT_AN_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
ONE_PER_FAMILY = "may specify no more than one IP for each IP family"
NOT_TERMINATED = "Forbidden: may not be transitioned to non-terminated state"


@pytest.fixture
def client() -> TestClient:
    return api_client()


def pod(name: str = "p", restart: str = "Always") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"restartPolicy": restart,
                     "containers": [{"name": "app", "image": "nginx:1",
                                     "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}],
                     "initContainers": [{"name": "setup", "image": "busybox:1"},
                                        {"name": "sidecar", "image": "busybox:1", "restartPolicy": "Always"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}]}}


def create(client: TestClient, **kwargs: Any) -> dict[str, Any]:
    r = client.post(PODS, json=pod(**kwargs))
    assert r.status_code == 201, r.text
    return dict(r.json())


def put_status(client: TestClient, name: str = "p", metadata: dict[str, Any] | None = None,
               **status: Any) -> Any:
    """PUT pods/<name>/status with the pod as read, its status fields (and metadata) replaced by these."""
    body = client.get(f"{PODS}/{name}").json()
    body["status"] = {**body.get("status", {}), **status}
    body["metadata"] = {k: v for k, v in {**body["metadata"], **(metadata or {})}.items() if v is not None}
    return client.put(f"{PODS}/{name}/status", json=body)


def patch_status(client: TestClient, name: str = "p", metadata: dict[str, Any] | None = None,
                 **status: Any) -> Any:
    body: dict[str, Any] = {"status": status}
    if metadata:
        body["metadata"] = metadata
    return client.patch(f"{PODS}/{name}/status", json=body, headers=MERGE)


def message(response: Any) -> str:
    assert response.status_code == 422, response.text
    text = response.json()["message"]
    assert text.startswith('Pod "p" is invalid: ')
    return str(text[len('Pod "p" is invalid: '):])


def kubelet_status() -> dict[str, Any]:
    started = "2026-01-01T00:00:00Z"
    return {"phase": "Running", "hostIP": "192.168.1.10", "hostIPs": [{"ip": "192.168.1.10"}, {"ip": "fd00::10"}],
            "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}, {"ip": "fd00:10:244:1::5"}],
            "startTime": started, "observedGeneration": 1,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": started}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                     "PodScheduled")],
            "initContainerStatuses": [
                {"name": "setup", "image": "busybox:1", "imageID": "", "ready": False, "restartCount": 0,
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": started,
                                          "finishedAt": started}}},
                {"name": "sidecar", "image": "busybox:1", "imageID": "", "ready": True, "restartCount": 0,
                 "started": True, "state": {"running": {"startedAt": started}}}],
            "containerStatuses": [
                {"name": "app", "image": "nginx:1", "imageID": "", "ready": True, "restartCount": 0,
                 "started": True, "state": {"running": {"startedAt": started}},
                 "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0, 10]}},
                 "allocatedResourcesStatus": [
                     {"name": "claim:gpu", "resources": [{"resourceID": "gpu-0", "health": "Healthy"}]},
                     {"name": "cpu", "resources": []}]}],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "shared-gpu"}]}


def test_a_kubelets_status_is_accepted_by_a_put_a_merge_patch_and_an_apply(client: TestClient) -> None:
    create(client)
    status = kubelet_status()
    r = put_status(client, **status)
    assert r.status_code == 200, r.text
    written = r.json()["status"]
    stored = json.loads(json.dumps(status))  # (an omitempty list left empty is not stored, as Go encodes it)
    stored["containerStatuses"][0]["allocatedResourcesStatus"][1] = {"name": "cpu"}
    assert written == {**stored, "qosClass": "Burstable"} and "warning" not in r.headers
    r = patch_status(client, phase="Succeeded", nominatedNodeName="node-1",
                     conditions=[*status["conditions"], {"type": "example.com/Drained", "status": "True"}])
    assert r.status_code == 200, r.text
    applied = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "status": {"conditions": [{"type": "example.com/Checked", "status": "True"}]}}
    r = client.patch(f"{PODS}/p/status", params={"fieldManager": "checker"}, content=json.dumps(applied),
                     headers=APPLY)
    assert r.status_code == 200, r.text
    bad = {**applied, "status": {"conditions": [{"type": "not ok", "status": "True"}]}}
    r = client.patch(f"{PODS}/p/status", params={"fieldManager": "checker"}, content=json.dumps(bad),
                     headers=APPLY)
    assert message(r) == f'metadata.conditions[6].Type: Invalid value: "not ok": {QUALIFIED_RE}'  # (after the 6 others)


REFUSED = [
    ({"nominatedNodeName": "Node_1"}, f'status.nominatedNodeName: Invalid value: "Node_1": {SUBDOMAIN_RE}'),
    ({"qosClass": "Guaranteed"}, 'status.qosClass: Invalid value: "Guaranteed": field is immutable'),
    ({"conditions": [{"type": "Ready", "status": "True"}, {"type": "not ok", "status": "True"}]},
     f'metadata.conditions[1].Type: Invalid value: "not ok": {QUALIFIED_RE}'),
    # a podIP alone is podIPs[0] for kube-apiserver, and it is checked there
    ({"podIP": "10.1.1"}, f'status.podIPs[0]: Invalid value: "10.1.1": {NOT_AN_IP}'),
    ({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::00007"}]},
     'status.podIPs[1]: Invalid value: "fd00::00007": must not have leading 0s'),
    ({"podIPs": [{"ip": "::ffff:10.0.0.1"}]},
     'status.podIPs[0]: Invalid value: "::ffff:10.0.0.1": must not be an IPv4-mapped IPv6 address'),
    ({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "010.0.0.2"}]},
     '[status.podIPs[1]: Invalid value: "010.0.0.2": must not have leading 0s, status.podIPs: Invalid value: '
     f'[{{"ip":"10.0.0.1"}},{{"ip":"010.0.0.2"}}]: {ONE_PER_FAMILY}]'),
    ({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}, {"ip": "fd00::2"}]},
     f'status.podIPs: Invalid value: [{{"ip":"10.0.0.1"}},{{"ip":"fd00::1"}},{{"ip":"fd00::2"}}]: {ONE_PER_FAMILY}'),
    ({"podIPs": [{"ip": "fd00::1"}, {"ip": "fd00::1"}]},
     f'[status.podIPs: Invalid value: [{{"ip":"fd00::1"}},{{"ip":"fd00::1"}}]: {ONE_PER_FAMILY}, '
     'status.podIPs[1]: Duplicate value: {"ip":"fd00::1"}]'),
    ({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "x"}]},
     f'[status.podIPs[1]: Invalid value: "x": {NOT_AN_IP}, status.podIPs: Internal error: failed to check for '
     f'dual stack with error:invalid IP[1]: x, status.podIPs: Invalid value: [{{"ip":"10.0.0.1"}},{{"ip":"x"}}]: '
     f'{ONE_PER_FAMILY}]'),
    ({"hostIP": "10.0.0.2", "hostIPs": [{"ip": "10.0.0.1"}]},
     'status.hostIPs[0].ip: Invalid value: "10.0.0.1": must be equal to `hostIP`'),
    ({"hostIP": "node-1", "hostIPs": [{"ip": "node-1"}]}, f'status.hostIPs[0]: Invalid value: "node-1": {NOT_AN_IP}'),
    ({"hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.1"}]},
     f'[status.hostIPs[1]: Duplicate value: {{"ip":"10.0.0.1"}}, status.hostIPs: Invalid value: '
     f'[{{"ip":"10.0.0.1"}},{{"ip":"10.0.0.1"}}]: {ONE_PER_FAMILY}]'),
    ({"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "shared-gpu"}]},
     'status.resourceClaimStatuses[0].name: Invalid value: "gpus": must match the name of an entry in '
     '`spec.resourceClaims`'),
    ({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "shared-gpu"}, {"name": "gpu"}]},
     'status.resourceClaimStatuses[1].name: Duplicate value: "gpu"'),
    # upstream reports a bad resourceClaimName at .name
    ({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "Shared_GPU"}]},
     f'status.resourceClaimStatuses[0].name: Invalid value: "Shared_GPU": {SUBDOMAIN_RE}'),
    ({"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": ""}]},
     f'status.resourceClaimStatuses[0].name: Invalid value: "": {SUBDOMAIN_RE}'),
    # upstream's path of a container status's user leaves out .user
    ({"containerStatuses": [{"name": "app", "user": {"linux": {"uid": -1, "gid": 7, "supplementalGroups": [2**31]}}}]},
     '[status.containerStatuses[0].linux.uid: Invalid value: -1: must be between 0 and 2147483647, inclusive, '
     'status.containerStatuses[0].linux.supplementalGroups[0]: Invalid value: 2147483648: must be between 0 and '
     '2147483647, inclusive]'),
    ({"containerStatuses": [{"name": "app", "allocatedResourcesStatus": [
        {"name": "claim:gpu/other", "resources": [{"resourceID": "gpu-0", "health": "Healthy"},
                                                  {"resourceID": "gpu-0", "health": "Sick"}]},
        {"name": "memory"}]}]},
     "[status.containerStatuses[0].allocatedResourcesStatus[0].name: Invalid value: \"claim:gpu/other\": must match "
     "one of the container's resource claims in a format 'claim:<claimName>/<request>' or 'claim:<claimName>' if "
     "request is empty, status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].health: Unsupported "
     'value: "Sick": supported values: "Healthy", "Unhealthy", "Unknown", '
     'status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].resourceID: Duplicate value: "gpu-0", '
     'status.containerStatuses[0].allocatedResourcesStatus[1].name: Invalid value: "memory": must match one of the '
     "container's resource requests]"),
    ({"ephemeralContainerStatuses": [{"name": "debug", "allocatedResourcesStatus": [{"name": "cpu"}]}]},
     "status.ephemeralContainerStatuses[0].allocatedResourcesStatus: Forbidden: must not be specified in container "
     "status"),
]


@pytest.mark.parametrize("status,expected", REFUSED)
def test_a_status_kube_apiserver_refuses_is_refused_with_its_message_by_a_put_and_a_merge_patch(
        client: TestClient, status: dict[str, Any], expected: str) -> None:
    create(client)
    before = client.get(f"{PODS}/p").json()
    assert message(put_status(client, **status)) == expected
    assert message(patch_status(client, **status)) == expected
    assert client.get(f"{PODS}/p").json() == before


@pytest.mark.parametrize("metadata,expected", [
    ({"annotations": {"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}},
     "metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Forbidden: may not add AppArmor "
     "annotations"),
    ({"annotations": {"kubernetes.io/config.mirror": "hash"}},
     "[metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod annotation, "
     'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "hash": must set spec.nodeName if mirror '
     "pod annotation is set]"),
    ({"annotations": {"controller.kubernetes.io/pod-deletion-cost": "08"}},
     'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "08": must be a 32bit '
     "integer"),
    ({"labels": {"app": "-web"}},
     'metadata.labels: Invalid value: "-web": a valid label must be an empty string or consist of alphanumeric '
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
     "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ({"deletionGracePeriodSeconds": 5}, "metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable"),
])
def test_a_status_write_may_change_the_metadata_by_kube_apiservers_update_rules(
        client: TestClient, metadata: dict[str, Any], expected: str) -> None:
    create(client)
    assert message(put_status(client, metadata=metadata)) == expected
    assert message(patch_status(client, metadata=metadata)) == expected


def test_the_pod_status_strategy_keeps_the_spec_and_owners_but_takes_labels_annotations_and_finalizers(
        client: TestClient) -> None:
    created = create(client)
    owner = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}]
    body = copy.deepcopy(created)
    body["metadata"] = {**body["metadata"], "labels": {"app": "web", "tier": "1"}, "annotations": {"a": "b"},
                        "finalizers": ["example.com/keep"], "ownerReferences": owner}
    body["spec"]["containers"][0]["image"] = "nginx:2"
    body["status"] = {"phase": "Running"}
    r = client.put(f"{PODS}/p/status", json=body)
    assert r.status_code == 200, r.text
    meta, spec = r.json()["metadata"], r.json()["spec"]
    assert (meta["labels"], meta["annotations"], meta["finalizers"]) == ({"app": "web", "tier": "1"}, {"a": "b"},
                                                                        ["example.com/keep"])
    assert "ownerReferences" not in meta and spec == created["spec"] and meta["generation"] == 1
    # the QOS class a write leaves out is the stored one
    assert r.json()["status"] == {"phase": "Running", "qosClass": "Burstable"}
    r = patch_status(client, metadata={"finalizers": None}, phase="Running")
    assert r.status_code == 200 and "finalizers" not in r.json()["metadata"]


def test_no_finalizer_may_be_added_through_the_status_of_a_pod_being_deleted(client: TestClient) -> None:
    create(client)
    assert client.post(f"{PODS}/p/binding", json={"metadata": {"name": "p"}, "target": {"name": "n"}}).status_code == 201
    patch_status(client, metadata={"finalizers": ["example.com/a"]})
    client.delete(f"{PODS}/p", params={"gracePeriodSeconds": "30"})
    r = patch_status(client, metadata={"finalizers": ["example.com/a", "example.com/c", "example.com/b"]})
    assert message(r) == ('metadata.finalizers: Forbidden: no new finalizers can be added if the object is being '
                          'deleted, found new finalizers []string{"example.com/b", "example.com/c"}')
    # the deletion timestamp sent is not the pod's: the stored one is kept
    r = put_status(client, metadata={"deletionTimestamp": "2000-01-01T00:00:00Z"}, phase="Running")
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"] != "2000-01-01T00:00:00Z"


def test_a_pod_ip_that_differs_from_pod_ips_wins_and_pod_ip_is_pod_ips_first(client: TestClient) -> None:
    # as kube-apiserver decodes a v1 PodStatus: older clients set podIP alone
    create(client)
    r = put_status(client, podIP="10.0.0.9", podIPs=[{"ip": "10.0.0.1"}, {"ip": "fd00::1"}])
    assert r.status_code == 200 and (r.json()["status"]["podIP"], r.json()["status"]["podIPs"]) == (
        "10.0.0.9", [{"ip": "10.0.0.9"}])
    r = patch_status(client, podIP=None, podIPs=[{"ip": "10.0.0.2"}, {"ip": "fd00::2"}])
    assert r.status_code == 200 and r.json()["status"]["podIP"] == "10.0.0.2"
    r = patch_status(client, podIP="10.0.0.3")
    assert r.json()["status"]["podIPs"] == [{"ip": "10.0.0.3"}]


def test_an_ipv6_address_not_in_canonical_form_is_kept_with_a_warning(client: TestClient) -> None:
    create(client)
    r = patch_status(client, podIPs=[{"ip": "10.0.0.1"}, {"ip": "FD00:0:0::1"}], hostIP="2001:DB8::1",
                     hostIPs=[{"ip": "2001:DB8::1"}])
    assert r.status_code == 200, r.text
    assert r.headers["warning"] == (
        '299 - "status.podIPs[1].ip: IPv6 address \\"FD00:0:0::1\\" should be in RFC 5952 canonical format '
        '(\\"fd00::1\\")", 299 - "status.hostIPs[0].ip: IPv6 address \\"2001:DB8::1\\" should be in RFC 5952 '
        'canonical format (\\"2001:db8::1\\")"')


def test_an_address_stored_before_strict_validation_may_stay_but_no_new_one_like_it(client: TestClient) -> None:
    create(client)
    store = client.app.api.store  # type: ignore[attr-defined]

    def legacy(old: dict[str, Any], rv: str) -> dict[str, Any]:
        return {**old, "metadata": {**old["metadata"], "resourceVersion": rv},
                "status": {**old["status"], "podIP": "010.0.0.1", "podIPs": [{"ip": "010.0.0.1"}]}}

    store.update("pods", "default", "p", legacy)
    r = patch_status(client, phase="Running")
    assert r.status_code == 200, r.text
    assert r.headers["warning"] == ('299 - "status.podIPs[0].ip: non-standard IP address \\"010.0.0.1\\" will be '
                                    'considered invalid in a future Kubernetes release: use \\"10.0.0.1\\""')
    r = patch_status(client, podIPs=[{"ip": "010.0.0.1"}, {"ip": "fd00::00001"}])
    assert message(r) == 'status.podIPs[1]: Invalid value: "fd00::00001": must not have leading 0s'


@pytest.mark.parametrize("restart,exit_code,refused", [
    ("Never", 0, True), ("Never", 1, True), ("OnFailure", 0, True), ("OnFailure", 2, False), ("Always", 0, False)])
def test_a_container_that_may_not_restart_stays_terminated(client: TestClient, restart: str, exit_code: int,
                                                           refused: bool) -> None:
    create(client, restart=restart)
    done = [{"name": "app", "state": {"terminated": {"exitCode": exit_code}}}]
    assert put_status(client, containerStatuses=done).status_code == 200
    running = [{"name": "app", "state": {"running": {}}, "lastState": done[0]["state"]}]
    r = patch_status(client, containerStatuses=running)
    if refused:
        assert message(r) == f"status.containerStatuses[0].state: {NOT_TERMINATED}"
    else:
        assert r.status_code == 200, r.text


def test_a_restartable_init_container_may_restart_and_an_ephemeral_one_never(client: TestClient) -> None:
    create(client, restart="Always")  # (ephemeral containers are never restarted, whatever the pod's policy)
    done = {"terminated": {"exitCode": 1}}
    assert put_status(client, ephemeralContainerStatuses=[{"name": "debug", "state": done}]).status_code == 200
    r = patch_status(client, ephemeralContainerStatuses=[{"name": "debug", "state": {"waiting": {}}}])
    assert message(r) == f"status.ephemeralContainerStatuses[0].state: {NOT_TERMINATED}"
    create(client, name="never", restart="Never")
    init = [{"name": "setup", "state": done}, {"name": "sidecar", "state": done}]
    assert put_status(client, "never", initContainerStatuses=init).status_code == 200
    again = [{"name": "sidecar", "state": {"running": {}}}, {"name": "setup", "state": {"running": {}}}]
    r = patch_status(client, "never", initContainerStatuses=again)
    assert r.status_code == 422 and r.json()["message"] == (
        f'Pod "never" is invalid: status.initContainerStatuses[0].state: {NOT_TERMINATED}')


def test_a_write_that_clears_observed_generations_keeps_the_stored_ones(client: TestClient) -> None:
    create(client)
    conditions = [{"type": "Ready", "status": "False", "observedGeneration": 1},
                  {"type": "example.com/A", "status": "True", "observedGeneration": 1}]
    assert put_status(client, observedGeneration=1, conditions=conditions).status_code == 200
    r = patch_status(client, observedGeneration=None, conditions=[{"type": "Ready", "status": "True"},
                                                                  {"type": "example.com/B", "status": "True"}])
    assert r.json()["status"]["observedGeneration"] == 1
    assert r.json()["status"]["conditions"] == [{"type": "Ready", "status": "True", "observedGeneration": 1},
                                                {"type": "example.com/B", "status": "True"}]


@pytest.mark.parametrize("status,message", [
    ({"podIPs": "10.0.0.1"}, "string into Go struct field PodStatus.status.podIPs of type []v1.PodIP"),
    ({"hostIPs": [{"ip": 10}]}, "number into Go struct field HostIP.status.hostIPs.ip of type string"),
    ({"containerStatuses": [{"name": "app", "state": {"terminated": {"exitCode": "1"}}}]},
     "string into Go struct field ContainerStateTerminated.status.containerStatuses.state.terminated.exitCode of "
     "type int32"),
    ({"qosClass": ["Burstable"]}, "array into Go struct field PodStatus.status.qosClass of type v1.PodQOSClass"),
])
def test_a_status_of_the_wrong_json_types_is_a_400(client: TestClient, status: dict[str, Any], message: str) -> None:
    create(client)
    for r in (put_status(client, **status), patch_status(client, **status)):
        assert r.status_code == 400 and r.json()["message"] == (
            f'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal {message}'), r.text


IPISH = st.text(alphabet="0123456789abcdefABCDEF:.x%", max_size=24)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pod_ips=st.lists(IPISH, max_size=3), host_ips=st.lists(IPISH, max_size=3), host_ip=IPISH)
def test_no_ip_string_makes_a_status_write_fail_other_than_by_a_422(client: TestClient, pod_ips: list[str],
                                                                    host_ips: list[str], host_ip: str) -> None:
    if client.get(f"{PODS}/p").status_code == 404:
        create(client)
    r = patch_status(client, podIPs=[{"ip": ip} for ip in pod_ips], hostIPs=[{"ip": ip} for ip in host_ips],
                     hostIP=host_ip)
    assert r.status_code in (200, 422), r.text
    if r.status_code == 422:
        assert all(c["field"].startswith(("status.podIPs", "status.hostIPs")) for c in r.json()["details"]["causes"])
