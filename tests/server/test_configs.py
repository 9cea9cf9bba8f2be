"""ConfigMaps and Secrets in `dralloc serve`: stored as kube-apiserver stores them (a Secret's stringData folded
into data, its type defaulted), validated with its rules, and decoded from the protobuf kubectl sends."""

from __future__ import annotations

import base64
import json
import warnings

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from test_wire import PROTOBUF, TABLE, envelope, field  # noqa: E402

CM = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"


@pytest.fixture
def client() -> TestClient:
    return api_client()


def configmap(name: str, **fields: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def test_a_configmap_is_stored_listed_in_a_table_and_immutable_once_marked(client: TestClient) -> None:
    made = client.post(CM, json=configmap("app", data={"a": "1"}, binaryData={"b.bin": "AAE="}))
    assert made.status_code == 201 and made.json()["data"] == {"a": "1"}, made.text
    (row,) = client.get(CM, headers=TABLE).json()["rows"]
    assert row["cells"][:2] == ["app", 2]
    frozen = configmap("app", data={"a": "1"}, binaryData={"b.bin": "AAE="}, immutable=True)
    assert client.put(f"{CM}/app", json=frozen).status_code == 200
    changed = client.put(f"{CM}/app", json=configmap("app", data={"a": "2"}))
    assert changed.status_code == 422
    assert changed.json()["message"] == (
        'ConfigMap "app" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, data: '
        "Forbidden: field is immutable when `immutable` is set, binaryData: Forbidden: field is immutable when "
        "`immutable` is set]")


def test_configmap_keys_and_size_are_validated_as_kube_apiserver_does(client: TestClient) -> None:
    r = client.post(CM, json=configmap("bad", data={"a b": "1", "..x": "2", "dup": "3"}, binaryData={"dup": "AA=="}))
    assert r.status_code == 422
    causes = [(c["field"], c["message"]) for c in r.json()["details"]["causes"]]
    assert causes == [
        ("data[..x]", 'Invalid value: "..x": must not start with \'..\''),
        ("data[a b]", "Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', "
                      "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                      "'[-._a-zA-Z0-9]+')"),
        ("data[dup]", 'Invalid value: "dup": duplicate of key present in binaryData')]
    big = client.post(CM, json=configmap("big", data={"a": "x" * (1024 * 1024 + 1)}))
    assert big.status_code == 422 and "Too long: may not be more than 1048576 bytes" in big.json()["message"]
    r = client.post(CM, json=configmap("b64", binaryData={"k": "not base64!"}))
    assert r.status_code == 400 and r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 3')
    r = client.post(f"{CM}?fieldValidation=Strict", json=configmap("typo", dat={"a": "1"}))
    assert r.status_code == 400 and 'unknown field "dat"' in r.json()["message"]


def test_a_secrets_string_data_is_folded_into_data_and_its_type_defaulted(client: TestClient) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pw"},
            "data": {"user": base64.b64encode(b"admin").decode(), "token": "b2xk"}, "stringData": {"token": "new"}}
    made = client.post(SECRETS, json=body)
    assert made.status_code == 201, made.text
    stored = client.get(f"{SECRETS}/pw").json()
    assert stored["type"] == "Opaque" and "stringData" not in stored
    assert {k: base64.b64decode(v) for k, v in stored["data"].items()} == {"user": b"admin", "token": b"new"}
    stored["type"] = "kubernetes.io/tls"
    r = client.put(f"{SECRETS}/pw", json=stored)
    assert r.status_code == 422 and r.json()["details"]["causes"][0] == {
        "reason": "FieldValueInvalid", "field": "type", "message": 'Invalid value: "kubernetes.io/tls": field is immutable'}
    tls = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cert"}, "type": "kubernetes.io/tls",
           "data": {"tls.crt": "AA=="}}
    r = client.post(SECRETS, json=tls)
    assert r.status_code == 422 and [c["field"] for c in r.json()["details"]["causes"]] == ["data[tls.key]"]


def test_kubectl_create_configmap_and_secret_send_protobuf(client: TestClient) -> None:
    meta = field(1, field(1, "from-proto"))
    entries = field(2, field(1, "z") + field(2, "1")) + field(2, field(1, "a") + field(2, "2"))
    r = client.post(CM, content=envelope("ConfigMap", meta + entries + field(3, field(1, "bin") + field(2, b"\x00\x01"))),
                    headers=PROTOBUF)
    assert r.status_code == 201, r.text
    assert r.json()["data"] == {"z": "1", "a": "2"} and r.json()["binaryData"] == {"bin": "AAE="}
    secret = meta + field(2, field(1, "password") + field(2, b"s3cret")) + field(3, "Opaque")
    r = client.post(SECRETS, content=envelope("Secret", secret), headers=PROTOBUF)
    assert r.status_code == 201 and base64.b64decode(r.json()["data"]["password"]) == b"s3cret", r.text


def test_every_namespace_gets_a_default_service_account_made_again_when_deleted() -> None:
    from cluster import Cluster

    cluster = Cluster()
    cluster.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    cluster.settle()
    accounts = {(a["metadata"]["namespace"], a["metadata"]["name"]) for a in cluster.store.list("serviceaccounts")[0]}
    assert {("default", "default"), ("team", "default")} <= accounts
    assert cluster.http.delete("/api/v1/namespaces/team/serviceaccounts/default").status_code == 200
    cluster.settle()
    assert cluster.http.get("/api/v1/namespaces/team/serviceaccounts/default").status_code == 200
    made = cluster.http.post("/api/v1/namespaces/team/serviceaccounts", content=envelope(
        "ServiceAccount", field(1, field(1, "builder")) + field(3, field(1, "registry")) + field(4, 0)),
        headers=PROTOBUF)  # kubectl create serviceaccount
    assert made.status_code == 201, made.text
    assert made.json()["imagePullSecrets"] == [{"name": "registry"}] and made.json()["automountServiceAccountToken"] is False
    (row, _) = sorted(cluster.http.get("/api/v1/namespaces/team/serviceaccounts", headers=TABLE).json()["rows"],
                      key=lambda r: r["cells"][0])
    assert row["cells"][:2] == ["builder", 0]


@pytest.mark.slow
def test_the_deprecated_watch_paths_watch_a_collection_or_one_object(client: TestClient) -> None:
    for name in ("one", "two"):
        assert client.post(CM, json=configmap(name, data={"a": "1"})).status_code == 201
    everything = client.get("/api/v1/watch/namespaces/default/configmaps", params={"timeoutSeconds": "1"})
    assert everything.status_code == 200
    names = [json.loads(line)["object"]["metadata"]["name"] for line in everything.text.splitlines()]
    assert names == ["one", "two"]
    one = client.get("/api/v1/watch/namespaces/default/configmaps/two", params={"timeoutSeconds": "1"})
    assert [json.loads(line)["object"]["metadata"]["name"] for line in one.text.splitlines()] == ["two"]
    assert client.get("/api/v1/watch/configmaps", params={"timeoutSeconds": "1"}).status_code == 200


def test_a_client_that_asks_for_yaml_first_gets_yaml(client: TestClient) -> None:
    import yaml

    assert client.post(CM, json=configmap("shown", data={"a": "1"})).status_code == 201
    r = client.get(f"{CM}/shown", headers={"accept": "application/yaml"})
    assert r.headers["content-type"] == "application/yaml" and yaml.safe_load(r.text)["data"] == {"a": "1"}
    assert r.text.startswith("apiVersion: v1\ndata:\n")  # keys in order, as Go's YAML writer sorts them
    missing = client.get(f"{CM}/gone", headers={"accept": "application/yaml"})
    assert missing.status_code == 404 and yaml.safe_load(missing.text)["reason"] == "NotFound"
    assert client.get(f"{CM}/shown", headers={"accept": "application/json, application/yaml"}).json()["data"]


def test_a_pod_runs_as_a_service_account_with_its_token_mounted_as_the_admission_plugin_makes_it(
        client: TestClient) -> None:
    pods = "/api/v1/namespaces/default/pods"
    base = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"initContainers": [{"name": "init", "image": "x"}], "containers": [
                {"name": "app", "image": "x"},
                {"name": "own", "image": "x", "volumeMounts": [
                    {"name": "mine", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
                "volumes": [{"name": "mine", "emptyDir": {}}]}}
    spec = client.post(pods, json=base).json()["spec"]
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    token = spec["volumes"][1]
    assert token["name"].startswith("kube-api-access-") and len(token["name"]) == len("kube-api-access-") + 5
    assert [s for source in token["projected"]["sources"] for s in source] == [
        "serviceAccountToken", "configMap", "downwardAPI"]
    mount = {"name": token["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    assert spec["initContainers"][0]["volumeMounts"] == [mount] and spec["containers"][0]["volumeMounts"] == [mount]
    assert len(spec["containers"][1]["volumeMounts"]) == 1  # its own mount at that path wins
    quiet = {**base, "metadata": {"name": "quiet"}, "spec": {**base["spec"], "automountServiceAccountToken": False}}
    assert len(client.post(pods, json=quiet).json()["spec"]["volumes"]) == 1
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"},
               "automountServiceAccountToken": False, "imagePullSecrets": [{"name": "registry"}]}
    assert client.post("/api/v1/namespaces/default/serviceaccounts", json=account).status_code == 201
    built = {**base, "metadata": {"name": "built"}, "spec": {**base["spec"], "serviceAccountName": "builder"}}
    spec = client.post(pods, json=built).json()["spec"]
    assert len(spec["volumes"]) == 1 and spec["imagePullSecrets"] == [{"name": "registry"}]
    lost = {**base, "metadata": {"name": "lost"}, "spec": {**base["spec"], "serviceAccountName": "nobody"}}
    r = client.post(pods, json=lost)
    assert r.status_code == 403 and r.json()["message"] == (
        'pods "lost" is forbidden: service account default/nobody was not found, retry after the service account '
        "is created")


def test_a_mirror_pod_mounts_no_token_and_may_not_name_a_service_account(client: TestClient) -> None:
    pods = "/api/v1/namespaces/default/pods"
    mirror = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "static", "annotations": {"kubernetes.io/config.mirror": "hash"}},
              "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "x"}]}}
    created = client.post(pods, json=mirror)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert "volumes" not in spec and "serviceAccountName" not in spec
    assert "volumeMounts" not in spec["containers"][0]
    named = {**mirror, "metadata": {**mirror["metadata"], "name": "named"},
             "spec": {**mirror["spec"], "serviceAccountName": "default"}}
    r = client.post(pods, json=named)
    assert r.status_code == 403 and r.json()["message"] == (
        'pods "named" is forbidden: a mirror pod may not reference service accounts')


def test_a_new_namespace_has_its_default_service_account_before_its_first_pod(client: TestClient) -> None:
    assert client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": "fresh"}}).status_code == 201
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "first"},
           "spec": {"containers": [{"name": "app", "image": "x"}]}}
    r = client.post("/api/v1/namespaces/fresh/pods", json=pod)
    assert r.status_code == 201 and r.json()["spec"]["serviceAccountName"] == "default", r.text


def test_every_namespace_gets_the_root_ca_configmap_put_back_when_changed_or_deleted() -> None:
    from cluster import Cluster

    from dralloc.server.controllers import rootca

    cluster = Cluster(root_ca="-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")
    cluster.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    cluster.settle()
    path = "/api/v1/namespaces/team/configmaps/kube-root-ca.crt"
    published = cluster.http.get(path).json()
    assert published["data"] == {"ca.crt": "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"}
    assert published["metadata"]["annotations"] == {"kubernetes.io/description": rootca.DESCRIPTION}
    assert cluster.http.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt").status_code == 200
    # a client's change of the data or the description is undone; its own annotation stays
    changed = {**published, "data": {"ca.crt": "forged", "extra": "1"},
               "metadata": {**published["metadata"], "annotations": {"mine": "yes"}}}
    assert cluster.http.put(path, json=changed).status_code == 200
    cluster.settle()
    mended = cluster.http.get(path).json()
    assert mended["data"] == published["data"]
    assert mended["metadata"]["annotations"] == {"mine": "yes", "kubernetes.io/description": rootca.DESCRIPTION}
    assert cluster.http.delete(path).status_code == 200
    cluster.settle()
    assert cluster.http.get(path).json()["data"] == published["data"]


def test_a_plain_http_server_publishes_an_empty_ca() -> None:
    from cluster import Cluster

    cluster = Cluster()
    cluster.settle()
    assert cluster.http.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt").json()["data"] == {"ca.crt": ""}


def test_two_publishers_with_different_cas_mend_a_namespace_once_a_minute_not_in_a_loop() -> None:
    # replicas sharing a database but not their pki: each puts its CA back, at most once a minute each
    from cluster import Cluster

    from dralloc.server.controllers.rootca import MEND_EVERY, RootCAPublisher
    from dralloc.store import Change

    cluster = Cluster(root_ca="CA-1")
    cluster.settle()
    now = [1000.0]
    first = cluster.manager.root_ca
    first.clock = lambda: now[0]
    second = RootCAPublisher(cluster.manager.writer, ca="CA-2", clock=lambda: now[0])
    path = "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"
    seen = []
    change = Change(0, "MODIFIED", "configmaps", "default", "kube-root-ca.crt", False, False)
    for _ in range(5):  # each hears of the other's write at once
        for publisher in (second, first):
            publisher.note(change)
            publisher.cycle()
            seen.append(cluster.http.get(path).json()["data"]["ca.crt"])
    assert seen == ["CA-2", "CA-1"] + ["CA-1"] * 8  # one mend each, then both wait
    assert second.next_due == 1000.0 + MEND_EVERY and not second.due  # (the first's CA is in place)
    now[0] += MEND_EVERY
    assert second.due and second.cycle() and cluster.http.get(path).json()["data"]["ca.crt"] == "CA-2"


def test_yaml_keys_that_are_not_strings_are_stored_as_their_json_text_and_a_null_key_is_refused(
        client: TestClient) -> None:
    yaml_body = {"content-type": "application/yaml"}
    made = client.post(CM, headers=yaml_body, content="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys\n"
                                                      "  labels: {1: x}\ndata: {1: a, true: b, 1.5: c}\n")
    assert made.status_code == 201, made.text
    stored = client.get(f"{CM}/keys").json()
    assert stored["data"] == {"1": "a", "true": "b", "1.5": "c"} and stored["metadata"]["labels"] == {"1": "x"}
    refused = client.post(CM, headers=yaml_body,
                          content="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nil\ndata: {~: a}\n")
    assert refused.status_code == 400 and refused.json()["kind"] == "Status"
    assert 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "a"' in refused.json()["message"]
