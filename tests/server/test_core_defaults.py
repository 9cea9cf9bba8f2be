"""kube-apiserver's nested core/v1 defaults (pkg/apis/core/v1 defaults.go and the types' ``+default`` markers):
what a create or an update that lacks a field stores, that a set field is kept, that a pod template gets the
defaults of every pod spec but not a pod's own, that defaulting is idempotent and never changes a set field,
and that the example manifests still create."""

from __future__ import annotations

import copy
import warnings
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.api.quantity import Quantity  # noqa: E402
from dralloc.server.registry import core_defaults  # noqa: E402
from dralloc.server.registry.pods import apply_pod_defaults  # noqa: E402

PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def client() -> TestClient:
    return api_client()


def pod(name: str = "web", container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    app = {"name": "app", "image": "nginx:1", **(container or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [app], **spec}}


def created_spec(client: TestClient, sent: dict[str, Any]) -> dict[str, Any]:
    response = client.post(PODS, json=sent)
    assert response.status_code == 201, response.text
    spec: dict[str, Any] = client.get(f"{PODS}/{sent['metadata']['name']}").json()["spec"]
    return spec


def created_container(client: TestClient, **container: Any) -> dict[str, Any]:
    app: dict[str, Any] = created_spec(client, pod(container=container))["containers"][0]
    return app


def created_volume(client: TestClient, volume: dict[str, Any]) -> dict[str, Any]:
    spec = created_spec(client, pod(volumes=[volume]))
    first: dict[str, Any] = spec["volumes"][0]  # the ServiceAccount admission's token volume comes after it
    return first


# --- containers ----------------------------------------------------------------------------------------------


def test_a_port_without_protocol_is_tcp_and_a_set_protocol_is_kept(client: TestClient) -> None:
    app = created_container(client, ports=[{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}])
    assert app["ports"] == [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]


def test_init_and_ephemeral_containers_get_the_container_defaults_too() -> None:
    sent = pod(initContainers=[{"name": "init", "image": "busybox", "ports": [{"containerPort": 1}]}],
               ephemeralContainers=[{"name": "debug", "image": "busybox:1", "ports": [{"containerPort": 2}],
                                     "readinessProbe": {"exec": {"command": ["true"]}}}])
    apply_pod_defaults(sent)
    init, = sent["spec"]["initContainers"]
    debug, = sent["spec"]["ephemeralContainers"]
    assert init["ports"][0]["protocol"] == "TCP" and debug["ports"][0]["protocol"] == "TCP"
    assert debug["readinessProbe"]["timeoutSeconds"] == 1
    assert debug["imagePullPolicy"] == "IfNotPresent" and debug["terminationMessagePolicy"] == "File"


@pytest.mark.parametrize("image,policy", [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.27", "IfNotPresent"),
    ("registry.example:5000/app", "Always"), ("registry.example:5000/app:2", "IfNotPresent"),
    ("app@sha256:" + "0" * 64, "IfNotPresent"), ("", "Always")])
def test_the_image_pull_policy_is_always_for_an_untagged_or_latest_image(image: str, policy: str) -> None:
    sent = pod(container={"name": "app", "image": image})
    apply_pod_defaults(sent)
    assert sent["spec"]["containers"][0]["imagePullPolicy"] == policy
    kept = pod(container={"name": "app", "image": image, "imagePullPolicy": "Never"})
    apply_pod_defaults(kept)
    assert kept["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_with_the_host_network_a_port_is_a_host_port_of_the_same_number(client: TestClient) -> None:
    spec = created_spec(client, pod(container={"ports": [{"containerPort": 8080}, {"containerPort": 9090,
                                                                                   "hostPort": 9090}]},
                                    hostNetwork=True))
    assert [p.get("hostPort") for p in spec["containers"][0]["ports"]] == [8080, 9090]


def test_without_the_host_network_a_port_gets_no_host_port(client: TestClient) -> None:
    app = created_container(client, ports=[{"containerPort": 8080}])
    assert "hostPort" not in app["ports"][0]


def test_a_limited_resource_not_requested_is_requested_at_its_limit(client: TestClient) -> None:
    app = created_container(client, resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})
    assert app["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    spec = created_spec(client, pod("init", initContainers=[{"name": "i", "image": "busybox",
                                                             "resources": {"limits": {"cpu": "500m"}}}]))
    assert spec["initContainers"][0]["resources"]["requests"] == {"cpu": "500m"}


def test_requests_from_limits_make_a_pod_guaranteed(client: TestClient) -> None:
    sent = pod(container={"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}})
    assert client.post(PODS, json=sent).json()["status"]["qosClass"] == "Guaranteed"


def test_a_resource_quantity_is_rounded_up_to_milli_units_and_written_canonically(client: TestClient) -> None:
    app = created_container(client, resources={"limits": {"cpu": "0.5", "memory": "1.5Gi"},
                                               "requests": {"cpu": "0.0001", "ephemeral-storage": "1e3"}})
    assert app["resources"] == {"limits": {"cpu": "500m", "memory": "1536Mi"},
                                "requests": {"cpu": "1m", "ephemeral-storage": "1e3", "memory": "1536Mi"}}


def test_equal_requests_and_limits_written_differently_make_a_pod_guaranteed(client: TestClient) -> None:
    sent = pod(container={"resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                        "requests": {"cpu": "1000m", "memory": "1024Mi"}}})
    assert client.post(PODS, json=sent).json()["status"]["qosClass"] == "Guaranteed"


def test_a_probe_gets_its_timings_and_an_http_get_its_path_and_scheme(client: TestClient) -> None:
    app = created_container(client, livenessProbe={"httpGet": {"port": 80}},
                            readinessProbe={"tcpSocket": {"port": 80}, "periodSeconds": 5, "failureThreshold": 7},
                            startupProbe={"grpc": {"port": 9000}})
    assert app["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                    "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert app["readinessProbe"] == {"tcpSocket": {"port": 80}, "timeoutSeconds": 1, "periodSeconds": 5,
                                     "successThreshold": 1, "failureThreshold": 7}
    assert app["startupProbe"]["grpc"] == {"port": 9000, "service": ""}


def test_a_set_http_get_path_and_scheme_and_grpc_service_are_kept(client: TestClient) -> None:
    app = created_container(client, livenessProbe={"httpGet": {"port": 443, "path": "/healthz", "scheme": "HTTPS"}},
                            startupProbe={"grpc": {"port": 9000, "service": "health"}})
    assert app["livenessProbe"]["httpGet"] == {"port": 443, "path": "/healthz", "scheme": "HTTPS"}
    assert app["startupProbe"]["grpc"]["service"] == "health"


def test_a_lifecycle_handlers_http_get_is_defaulted(client: TestClient) -> None:
    app = created_container(client, lifecycle={"postStart": {"httpGet": {"port": 80}},
                                               "preStop": {"httpGet": {"port": 80, "path": "/stop"}}})
    assert app["lifecycle"] == {"postStart": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}},
                                "preStop": {"httpGet": {"port": 80, "path": "/stop", "scheme": "HTTP"}}}


def test_an_env_field_ref_is_of_v1_unless_set(client: TestClient) -> None:
    app = created_container(client, env=[
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "OLD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "PLAIN", "value": "x"}])
    assert app["env"] == [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName",
                                                                      "apiVersion": "v1"}}},
                          {"name": "OLD", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                     "fieldPath": "metadata.name"}}},
                          {"name": "PLAIN", "value": "x"}]


# --- volumes -------------------------------------------------------------------------------------------------


def test_a_volume_without_a_source_is_an_empty_dir(client: TestClient) -> None:
    assert created_volume(client, {"name": "scratch"}) == {"name": "scratch", "emptyDir": {}}


@pytest.mark.parametrize("source", ["secret", "configMap"])
def test_secret_and_config_map_volumes_get_mode_0644_unless_set(client: TestClient, source: str) -> None:
    ref = {"secretName": "s"} if source == "secret" else {"name": "c"}
    assert created_volume(client, {"name": "v", source: ref})[source]["defaultMode"] == 420
    set_mode = {"name": "v", source: {**ref, "defaultMode": 256}}
    spec = created_spec(client, pod("kept", volumes=[set_mode]))
    assert spec["volumes"][0][source]["defaultMode"] == 256


def test_a_downward_api_volume_gets_its_mode_and_its_items_field_refs_v1(client: TestClient) -> None:
    volume = created_volume(client, {"name": "info", "downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}})
    assert volume["downwardAPI"] == {"defaultMode": 420, "items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels", "apiVersion": "v1"}}]}


def test_a_projected_volume_gets_its_mode_token_expiry_and_field_refs(client: TestClient) -> None:
    volume = created_volume(client, {"name": "p", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token"}},
        {"serviceAccountToken": {"path": "short", "expirationSeconds": 600}},
        {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}})
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
        {"serviceAccountToken": {"path": "short", "expirationSeconds": 600}},
        {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace",
                                                               "apiVersion": "v1"}}]}}]}


def test_a_host_path_gets_the_empty_type_unless_set(client: TestClient) -> None:
    assert created_volume(client, {"name": "h", "hostPath": {"path": "/var"}})["hostPath"] == {"path": "/var",
                                                                                            "type": ""}
    spec = created_spec(client, pod("kept", volumes=[{"name": "h", "hostPath": {"path": "/d", "type": "Directory"}}]))
    assert spec["volumes"][0]["hostPath"]["type"] == "Directory"


def test_the_in_tree_volume_sources_get_their_declared_defaults() -> None:
    sent = pod(volumes=[
        {"name": "i", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}},
        {"name": "r", "rbd": {"monitors": ["m"], "image": "img"}},
        {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "s", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}},
        {"name": "kept", "rbd": {"monitors": ["m"], "image": "img", "pool": "fast", "user": "me"},
         "azureDisk": {"diskName": "d", "diskURI": "u", "readOnly": True, "kind": "Managed"}}])
    apply_pod_defaults(sent)
    iscsi, rbd, azure, scale_io, kept = sent["spec"]["volumes"]
    assert iscsi["iscsi"]["iscsiInterface"] == "default"
    assert {k: rbd["rbd"][k] for k in ("pool", "user", "keyring")} == {"pool": "rbd", "user": "admin",
                                                                       "keyring": "/etc/ceph/keyring"}
    assert azure["azureDisk"] == {"diskName": "d", "diskURI": "u", "cachingMode": "ReadWrite", "fsType": "ext4",
                                  "readOnly": False, "kind": "Shared"}
    assert (scale_io["scaleIO"]["storageMode"], scale_io["scaleIO"]["fsType"]) == ("ThinProvisioned", "xfs")
    assert (kept["rbd"]["pool"], kept["rbd"]["user"]) == ("fast", "me")
    assert (kept["azureDisk"]["readOnly"], kept["azureDisk"]["kind"]) == (True, "Managed")


def test_an_ephemeral_volumes_claim_template_is_of_filesystem_mode_unless_set(client: TestClient) -> None:
    claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    volume = created_volume(client, {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": claim}}})
    assert volume["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"
    block = {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {**claim, "volumeMode": "Block"}}}}
    spec = created_spec(client, pod("block", volumes=[block]))
    assert spec["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Block"


# --- updates, templates, nodes -------------------------------------------------------------------------------


def test_an_update_that_drops_a_defaulted_field_gets_it_again(client: TestClient) -> None:
    created_container(client, ports=[{"containerPort": 80}], livenessProbe={"exec": {"command": ["true"]}})
    stored = client.get(f"{PODS}/web").json()
    stored["metadata"]["labels"] = {"new": "label"}
    del stored["spec"]["containers"][0]["livenessProbe"]["timeoutSeconds"]
    replaced = client.put(f"{PODS}/web", json=stored)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["spec"]["containers"][0]["livenessProbe"]["timeoutSeconds"] == 1


def test_a_pod_template_gets_the_pod_spec_defaults_but_not_the_pods_own(client: TestClient) -> None:
    template_spec = {"hostNetwork": True, "containers": [
        {"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}],
         "resources": {"limits": {"cpu": "1"}}, "readinessProbe": {"httpGet": {"port": 80}}}],
        "volumes": [{"name": "scratch"}]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": template_spec}}}
    response = client.post(DEPLOYMENTS, json=deployment)
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]["template"]["spec"]
    app = spec["containers"][0]
    assert app["ports"] == [{"containerPort": 80, "protocol": "TCP"}]  # no hostPort: SetDefaults_Pod's
    assert "requests" not in app["resources"]  # nor requests from limits
    assert app["readinessProbe"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {}}]


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": status}


def test_a_node_without_allocatable_has_its_capacity_allocatable(client: TestClient) -> None:
    response = client.post(NODES, json=node(capacity={"cpu": "8", "pods": "110"}))
    assert response.status_code == 201, response.text
    assert response.json()["status"]["allocatable"] == {"cpu": "8", "pods": "110"}


def test_a_nodes_resources_are_rounded_up_to_milli_units(client: TestClient) -> None:
    response = client.post(NODES, json=node(capacity={"cpu": "8000m", "memory": "0.5Ki"},
                                            allocatable={"cpu": "7.5"}))
    assert response.status_code == 201, response.text
    status = response.json()["status"]
    assert (status["capacity"], status["allocatable"]) == ({"cpu": "8", "memory": "512"}, {"cpu": "7500m"})


def test_a_nodes_own_allocatable_is_kept_and_a_status_write_is_defaulted(client: TestClient) -> None:
    created = client.post(NODES, json=node(capacity={"cpu": "8"}, allocatable={"cpu": "7"})).json()
    assert created["status"]["allocatable"] == {"cpu": "7"}
    written = client.put(f"{NODES}/n1/status", json={**created, "status": {"capacity": {"cpu": "16"}}})
    assert written.status_code == 200, written.text
    assert written.json()["status"]["allocatable"] == {"cpu": "16"}


# --- every default at once: idempotent, never changing a set field ----------------------------------------------

_INTS = st.integers(min_value=1, max_value=1000)
_WORDS = st.sampled_from(["a", "b", "/x", "HTTPS", "UDP", "Block", "Directory"])


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.just("v"), strategy, max_size=1)


@st.composite
def _probes(draw: st.DrawFn) -> dict[str, Any]:
    probe: dict[str, Any] = draw(st.fixed_dictionaries({}, optional={
        "timeoutSeconds": _INTS, "periodSeconds": _INTS, "successThreshold": _INTS, "failureThreshold": _INTS}))
    handler = draw(st.sampled_from(["httpGet", "grpc", "exec"]))
    if handler == "httpGet":
        probe["httpGet"] = {"port": 80, **draw(st.fixed_dictionaries({}, optional={"path": _WORDS,
                                                                                   "scheme": _WORDS}))}
    elif handler == "grpc":
        probe["grpc"] = {"port": 9000, **draw(st.fixed_dictionaries({}, optional={"service": _WORDS}))}
    else:
        probe["exec"] = {"command": ["true"]}
    return probe


@st.composite
def _containers(draw: st.DrawFn) -> dict[str, Any]:
    container: dict[str, Any] = {"name": draw(st.sampled_from(["a", "b"])), "image": "busybox"}
    container["ports"] = draw(st.lists(st.fixed_dictionaries({"containerPort": _INTS}, optional={
        "protocol": _WORDS, "hostPort": _INTS}), max_size=2))
    container["env"] = draw(st.lists(st.fixed_dictionaries({"name": _WORDS}, optional={"valueFrom": st.just(
        {"fieldRef": {"fieldPath": "metadata.name"}}) | st.just({"fieldRef": {"fieldPath": "x", "apiVersion": "a"}})}),
        max_size=2))
    names = st.sampled_from(["cpu", "memory", "example.com/gpu"])
    container["resources"] = draw(st.fixed_dictionaries({}, optional={
        "limits": st.dictionaries(names, st.sampled_from(["1", "2Gi"]), max_size=3),
        "requests": st.dictionaries(names, st.sampled_from(["500m", "1Gi"]), max_size=3)}))
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if draw(st.booleans()):
            container[key] = draw(_probes())
    return container


_VOLUME_SOURCES: st.SearchStrategy[dict[str, Any]] = st.sampled_from([
    {}, {"secret": {"secretName": "s"}}, {"secret": {"secretName": "s", "defaultMode": 256}},
    {"configMap": {"name": "c"}}, {"downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "x"}}]}},
    {"projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
    {"projected": {"defaultMode": 256, "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 60}}]}},
    {"hostPath": {"path": "/x"}}, {"hostPath": {"path": "/x", "type": "Directory"}},
    {"iscsi": {"iqn": "i", "targetPortal": "t", "lun": 0}}, {"rbd": {"image": "i", "monitors": ["m"], "pool": "p"}},
    {"azureDisk": {"diskName": "d", "diskURI": "u", "readOnly": True}}, {"scaleIO": {"gateway": "g", "system": "s"}},
    {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
    {"ephemeral": {"volumeClaimTemplate": {"spec": {"volumeMode": "Block"}}}}])


@st.composite
def _pods(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(_containers(), min_size=1, max_size=2)),
                            "initContainers": draw(st.lists(_containers(), max_size=1)),
                            "volumes": [{"name": f"v{i}", **copy.deepcopy(source)}
                                        for i, source in enumerate(draw(st.lists(_VOLUME_SOURCES, max_size=4)))]}
    if draw(st.booleans()):
        spec["hostNetwork"] = True
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    """Every scalar of a JSON value by its path (an empty object or list is a leaf too)."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _leaves(item, (*path, key)).items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, (*path, i)).items()}
    return {path: value}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pods())
def test_defaulting_is_idempotent_and_never_removes_or_changes_a_set_field(sent: dict[str, Any]) -> None:
    once = copy.deepcopy(sent)
    apply_pod_defaults(once)
    twice = copy.deepcopy(once)
    apply_pod_defaults(twice)
    assert twice == once
    defaulted = _leaves(once)
    for path, value in _leaves(sent).items():
        if value in ({}, []):
            continue  # an empty object a default may fill (a source's settings, a volume's emptyDir)
        assert defaulted.get(path, "<removed>") == value, path


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["cpu", "memory", "pods"]), st.sampled_from(["1", "4Gi"]), max_size=3),
       st.none() | st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "4Gi"]), max_size=2))
def test_node_defaulting_is_idempotent_and_keeps_a_set_allocatable(capacity: dict[str, str],
                                                                   allocatable: dict[str, str] | None) -> None:
    sent = node(capacity=capacity, **({} if allocatable is None else {"allocatable": allocatable}))
    once = copy.deepcopy(sent)
    core_defaults.default_node(once)
    twice = copy.deepcopy(once)
    core_defaults.default_node(twice)
    assert twice == once
    expected = allocatable if allocatable is not None else (capacity or None)
    assert once["status"].get("allocatable") == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=-9, max_value=6),
       st.sampled_from(["", "m", "k", "M", "Ki", "Mi", "Gi"]))
def test_a_quantity_is_rounded_up_to_the_next_milli_unit_once(mantissa: int, exponent: int, suffix: str) -> None:
    plain = format(Decimal(mantissa).scaleb(exponent), "f")
    text = f"{mantissa}e{exponent}" if not suffix else f"{plain}{suffix}"
    holder = {"r": {"x": text}}
    core_defaults.default_resource_list(holder, "r")
    rounded = holder["r"]["x"]
    exact, after = Quantity(text).as_fraction(), Quantity(rounded).as_fraction()
    assert after * 1000 == int(after * 1000) and exact <= after < exact + Fraction(1, 1000)
    core_defaults.default_resource_list(holder, "r")
    assert holder["r"]["x"] == rounded


# --- the examples ----------------------------------------------------------------------------------------------


def _example_objects(kind: str, api_version: str = "v1") -> list[dict[str, Any]]:
    found = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if "invalid" in path.parts:
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == kind and doc.get("apiVersion") == api_version:
                found.append(doc)
    return found


@pytest.mark.slow
def test_the_example_pods_and_nodes_still_create() -> None:
    pods, nodes = _example_objects("Pod"), _example_objects("Node")
    assert pods and nodes
    client = api_client()
    for sent in _example_objects("PriorityClass", "scheduling.k8s.io/v1"):  # what their pods name
        client.post("/apis/scheduling.k8s.io/v1/priorityclasses", json=sent)
    for sent in nodes:
        response = client.post(NODES, json=sent)
        assert response.status_code in (201, 409), response.text  # 409: the same node in two examples
    namespaces = {p.get("metadata", {}).get("namespace") or "default" for p in pods}
    for namespace in sorted(namespaces - {"default"}):
        client.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": namespace}})
    for sent in pods:
        # a cluster dump's pods carry the priority their class gave them; a create leaves it to the admission
        sent.get("spec", {}).pop("priority", None)
        meta = sent["metadata"]
        namespace = meta.get("namespace") or "default"
        response = client.post(f"/api/v1/namespaces/{namespace}/pods", json=sent)
        if response.status_code == 409:
            continue  # the same pod in two examples
        assert response.status_code == 201, (meta.get("name"), response.text)
