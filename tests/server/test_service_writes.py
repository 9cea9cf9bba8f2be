"""Services written by clients, as kube-apiserver's Service registry writes them: decoding's defaults, the cluster
IP and node port allocators, validation with upstream's texts, and updates (immutable cluster IP, allocated
values kept, type changes)."""

from __future__ import annotations

import ipaddress
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.registry.service_network import (  # noqa: E402
    ServiceNetwork,
    _Runs,
    _Taken,
    configure,
    ip_text,
    network_of,
    parse_cidr,
)
from dralloc.store import SQLiteStore  # noqa: E402

SERVICES = "/api/v1/namespaces/default/services"
MERGE = {"content-type": "application/merge-patch+json"}


def service(name: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("ports", [{"port": 80}])
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


def create(client: TestClient, name: str, **spec: Any) -> dict[str, Any]:
    r = client.post(SERVICES, json=service(name, **spec))
    assert r.status_code == 201, r.text
    return r.json()


def refused(client: TestClient, name: str, **spec: Any) -> str:
    r = client.post(SERVICES, json=service(name, **spec))
    assert r.status_code == 422, r.text
    assert r.json()["reason"] == "Invalid"
    return str(r.json()["message"])


@pytest.fixture
def client() -> TestClient:
    return api_client()


def test_a_created_service_has_decodings_defaults_and_the_lowest_free_cluster_ip(client: TestClient) -> None:
    spec = create(client, "web", selector={"app": "web"}, ports=[{"name": "a", "port": 80},
                                                                        {"name": "b", "port": 81,
                                                                         "targetPort": "http"}])["spec"]
    # (the first address, 10.96.0.1, is default/kubernetes')
    assert spec["clusterIP"] == "10.96.0.2" and spec["clusterIPs"] == ["10.96.0.2"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert spec["ports"][0] == {"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80}
    assert spec["ports"][1]["targetPort"] == "http"  # a named target port stays
    assert client.get(f"{SERVICES}/web").json()["status"] == {"loadBalancer": {}}


def test_a_client_ip_affinity_gets_its_timeout_and_a_node_port_service_its_external_policy(client: TestClient) -> None:
    spec = create(client, "sticky", sessionAffinity="ClientIP", type="NodePort")["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert spec["externalTrafficPolicy"] == "Cluster"
    lb = create(client, "lb", type="LoadBalancer")["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True and lb["ports"][0]["nodePort"] == 30001


def test_a_deleted_services_address_is_free_again(client: TestClient) -> None:
    assert create(client, "a")["spec"]["clusterIP"] == "10.96.0.2"
    assert create(client, "b")["spec"]["clusterIP"] == "10.96.0.3"
    assert client.delete(f"{SERVICES}/a").status_code == 200
    assert create(client, "c")["spec"]["clusterIP"] == "10.96.0.2"


def test_a_dry_run_shows_the_address_the_create_then_gets(client: TestClient) -> None:
    r = client.post(SERVICES, params={"dryRun": "All"}, json=service("a"))
    assert r.status_code == 201 and r.json()["spec"]["clusterIP"] == "10.96.0.2"
    assert create(client, "b")["spec"]["clusterIP"] == "10.96.0.3"  # (held for a moment for the dry run's)
    assert create(client, "a")["spec"]["clusterIP"] == "10.96.0.2"


def test_the_range_is_the_servers_option() -> None:
    client = api_client(service_network=ServiceNetwork(parse_cidr("172.20.0.0/16")))
    assert client.get(f"{SERVICES}/kubernetes").json()["spec"]["clusterIP"] == "172.20.0.1"
    assert create(client, "a")["spec"]["clusterIP"] == "172.20.0.2"
    with pytest.raises(ValueError, match="invalid service cluster IP range"):
        parse_cidr("10.96.0.1/12")


def test_a_requested_cluster_ip_is_honoured_or_refused_with_upstreams_text(client: TestClient) -> None:
    assert create(client, "a", clusterIP="10.96.5.5")["spec"]["clusterIPs"] == ["10.96.5.5"]
    assert refused(client, "b", clusterIP="10.96.5.5") == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.5.5"]: failed to allocate IP 10.96.5.5: '
        'provided IP is already allocated')
    assert refused(client, "b", clusterIP="10.0.0.5") == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: '
        'provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/12')
    assert "not in the valid range" in refused(client, "b", clusterIP="10.96.0.0")  # the network's own address


def test_a_headless_service_gets_no_address(client: TestClient) -> None:
    spec = create(client, "h", clusterIP="None", selector={"app": "h"}, ports=[])["spec"]
    assert spec["clusterIPs"] == ["None"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert create(client, "next")["spec"]["clusterIP"] == "10.96.0.2"
    assert create(client, "ext", type="ExternalName", externalName="db.example.com", ports=[])["spec"].get(
        "clusterIPs") is None


def test_node_ports_are_the_lowest_free_or_the_requested_one(client: TestClient) -> None:
    ports = create(client, "a", type="NodePort", ports=[{"name": "x", "port": 80}, {"name": "y", "port": 81,
                                                                                     "nodePort": 30000}])
    assert [p["nodePort"] for p in ports["spec"]["ports"]] == [30001, 30000]
    assert refused(client, "b", type="NodePort", ports=[{"port": 80, "nodePort": 30001}]) == (
        'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated')
    assert refused(client, "b", type="NodePort", ports=[{"port": 80, "nodePort": 8080}]) == (
        'Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid '
        'range. The range of valid ports is 30000-32767')
    both = create(client, "dns", type="NodePort", ports=[{"name": "u", "port": 53, "protocol": "UDP"},
                                                         {"name": "t", "port": 53, "protocol": "TCP"}])
    assert [p["nodePort"] for p in both["spec"]["ports"]] == [30002, 30002]  # one per port number


@pytest.mark.parametrize("spec,message", [
    ({"ports": []}, "spec.ports: Required value"),
    ({"ports": [{"port": 80}, {"port": 81}]},
     "[spec.ports[0].name: Required value, spec.ports[1].name: Required value]"),
    ({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}, 'spec.ports[1].name: Duplicate value: "a"'),
    ({"ports": [{"port": 70000}]},
     "[spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: "
     "Invalid value: 70000: must be between 1 and 65535, inclusive]"),
    ({"ports": [{"port": 80, "protocol": "HTTP"}]},
     'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
    ({"ports": [{"port": 80, "targetPort": "Web1"}]},
     'spec.ports[0].targetPort: Invalid value: "Web1": must contain only alpha-numeric characters (a-z, 0-9), '
     'and hyphens (-)'),
    ({"ports": [{"port": 80, "nodePort": 30005}]},
     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
    ({"type": "Balanced"},
     'spec.type: Unsupported value: "Balanced": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
     '"NodePort"'),
    ({"selector": {"app": "a b"}},
     'spec.selector: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric '
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
     "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
     'spec.ports[1]: Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,'
     '"NodePort":0}'),
    ({"type": "NodePort", "clusterIP": "None"},
     "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"),
    ({"type": "ExternalName", "ports": []}, "spec.externalName: Required value"),
    ({"sessionAffinity": "Sticky"},
     'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"'),
    ({"externalTrafficPolicy": "Local"},
     'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services'),
    ({"clusterIP": "10.96.0.300"},
     'spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
])
def test_validation_has_upstreams_texts(client: TestClient, spec: dict[str, Any], message: str) -> None:
    assert refused(client, "bad", **spec) == f'Service "bad" is invalid: {message}'


def test_a_service_name_is_a_dns_1035_label(client: TestClient) -> None:
    assert "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic" \
           in refused(client, "1web")


def test_the_cluster_ip_may_not_change_and_a_put_without_it_keeps_it(client: TestClient) -> None:
    create(client, "web", type="NodePort", ports=[{"name": "http", "port": 80}])
    r = client.patch(f"{SERVICES}/web", json={"spec": {"clusterIP": "10.96.0.9"}}, headers=MERGE)
    assert r.status_code == 422
    assert r.json()["message"] == ('Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.9"]: '
                                   'may not change once set')
    stored = client.get(f"{SERVICES}/web").json()
    sent = service("web", type="NodePort", ports=[{"name": "http", "port": 8080}])
    sent["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
    r = client.put(f"{SERVICES}/web", json=sent)
    assert r.status_code == 200, r.text
    spec = r.json()["spec"]
    assert spec["clusterIP"] == "10.96.0.2" and spec["ports"][0]["nodePort"] == 30000  # (by the port's name)
    assert spec["ports"][0]["targetPort"] == 8080


def test_a_type_change_drops_and_allocates_what_the_types_use(client: TestClient) -> None:
    create(client, "web", type="NodePort")
    r = client.patch(f"{SERVICES}/web", json={"spec": {"type": "ClusterIP"}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert "nodePort" not in r.json()["spec"]["ports"][0] and "externalTrafficPolicy" not in r.json()["spec"]
    r = client.patch(f"{SERVICES}/web", json={"spec": {"type": "ExternalName", "externalName": "db.example.com"}},
                     headers=MERGE)
    assert r.status_code == 200, r.text
    assert "clusterIP" not in r.json()["spec"] and "ipFamilies" not in r.json()["spec"]
    assert create(client, "next")["spec"]["clusterIP"] == "10.96.0.2"  # released
    r = client.patch(f"{SERVICES}/web", json={"spec": {"type": "NodePort", "externalName": None}}, headers=MERGE)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["clusterIP"] == "10.96.0.3" and r.json()["spec"]["ports"][0]["nodePort"] == 30000


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["create", "delete"]), min_size=1, max_size=12))
def test_no_two_services_ever_share_an_address(steps: list[str]) -> None:
    client = api_client(service_network=ServiceNetwork(parse_cidr("10.1.0.0/29")))  # 10.1.0.2-.6 for clients
    names: list[str] = []
    for i, step in enumerate(steps):
        if step == "delete" and names:
            assert client.delete(f"{SERVICES}/{names.pop(0)}").status_code == 200
            continue
        r = client.post(SERVICES, json=service(f"s{i}"))
        if r.status_code == 201:
            names.append(f"s{i}")
        else:  # the range is full: kube-apiserver's 500
            assert len(names) == 5 and r.status_code == 500, r.text
    stored = [s["spec"]["clusterIP"] for s in client.get(SERVICES).json()["items"]]
    assert len(stored) == len(set(stored))
    assert all(ipaddress.ip_address(ip) in ipaddress.ip_network("10.1.0.0/29") for ip in stored)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=60), st.sets(st.integers(0, 40), max_size=5),
       st.integers(0, 40), st.integers(0, 40))
def test_the_lowest_free_number_is_found_by_bisection_as_a_scan_finds_it(
        steps: list[tuple[bool, int]], pending: set[int], first: int, last: int) -> None:
    """Numbers held and let go in any order: the runs are those of the numbers held, and the lowest free number
    is the one a scan finds."""
    runs, held = _Runs(), set[int]()
    for adding, value in steps:
        if adding and value not in held:
            runs.add(value)
            held.add(value)
        elif not adding:
            runs.discard(value)
            held.discard(value)
    assert [n for start, end in zip(runs.starts, runs.ends, strict=True) for n in range(start, end + 1)] == sorted(held)
    assert all(runs.ends[i] + 1 < runs.starts[i + 1] for i in range(len(runs.starts) - 1))  # (runs apart)
    expected = next((n for n in range(first, last + 1) if n not in held and n not in pending), None)
    assert runs.lowest_free(first, last, pending.__contains__) == expected
    if not pending:
        assert runs.lowest_free(first, last, None) == expected


_IPV4ISH = st.one_of(
    st.text(alphabet="0123456789.", max_size=16),
    st.tuples(*[st.integers(0, 300)] * 4).map(lambda parts: ".".join(map(str, parts))),
    st.tuples(*[st.integers(0, 255)] * 4).map(lambda parts: ".".join(f"{p:02d}" for p in parts)),
    st.ip_addresses().map(str), st.text(max_size=12))


@settings(max_examples=500, deadline=None)
@given(_IPV4ISH, st.sampled_from(["10.96.0.0/12", "0.0.0.0/0", "192.168.1.0/30", "fd00::/112"]))
def test_an_address_is_in_the_range_as_ipaddress_reads_it(text: str, cidr: str) -> None:
    network = ipaddress.ip_network(cidr)
    try:
        address = ipaddress.ip_address(text)
        expected = int(address) if address in network else None
    except ValueError:
        expected = None
    assert _Taken(network, (30000, 32767))._in_range(text) == expected


@given(st.integers(0, 2**32 - 1))
def test_an_ipv4_address_is_written_as_ipaddress_writes_it(value: int) -> None:
    assert ip_text(value, 4) == str(ipaddress.IPv4Address(value))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.lists(st.sampled_from(
    ["10.1.0.2", "10.1.0.3", "10.1.0.9", "10.2.0.1", "None", "bad"]), max_size=2), st.lists(
    st.integers(30000, 30003), max_size=2)), max_size=12))
def test_the_taken_index_holds_what_the_stored_services_hold_after_any_changes(
        writes: list[tuple[str, list[str], list[int]]]) -> None:
    """Services written (again) and removed in any order: the index's addresses, ports and versions are those
    of the Services stored at the end, counted from scratch."""
    taken = _Taken(parse_cidr("10.1.0.0/28"), (30000, 32767))
    stored: dict[tuple[str, str], dict[str, Any]] = {}
    for rv, (name, ips, ports) in enumerate(writes):
        key = ("default", name)
        if key in stored:
            taken.remove(key, stored.pop(key))
        if ips or ports:  # (else: the Service is deleted)
            svc = {"metadata": {"resourceVersion": str(rv)}, "spec": {
                "clusterIPs": ips, "ports": [{"nodePort": p} for p in ports]}}
            stored[key] = svc
            taken.add(key, svc)
    held_ips = [ip for svc in stored.values() for ip in svc["spec"]["clusterIPs"] if ip != "None"]
    held_ports = {p["nodePort"] for svc in stored.values() for p in svc["spec"]["ports"]}
    assert set(taken.ips) == set(held_ips) and set(taken.ports) == held_ports
    assert taken.versions == {f"{k[0]}/{k[1]}": svc["metadata"]["resourceVersion"] for k, svc in stored.items()}
    in_range = sorted({int(ipaddress.ip_address(ip)) for ip in held_ips if ip.startswith("10.1.")})
    first = int(ipaddress.ip_address("10.1.0.1"))
    expected = next(v for v in range(first, first + 14) if v not in in_range)
    assert taken.lowest_free_ip(first, first + 13, lambda _v: False) == expected


def test_the_network_of_a_store_is_the_one_configured_last_for_it() -> None:
    first, second = SQLiteStore(":memory:"), SQLiteStore(":memory:")
    default = network_of(first)
    assert network_of(first) is default and str(default.cidr) == "10.96.0.0/12"
    other = ServiceNetwork(parse_cidr("10.1.0.0/24"))
    configure(first, other)
    assert network_of(first) is other  # (not the one looked up before)
    assert network_of(second) is not other and network_of(first) is other
    first.close()
    second.close()


def test_a_network_allocates_from_the_services_of_the_store_it_is_asked_for() -> None:
    network = ServiceNetwork(parse_cidr("10.1.0.0/24"))
    first, second = SQLiteStore(":memory:"), SQLiteStore(":memory:")
    held = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "held", "namespace": "default"},
            "spec": {"clusterIP": "10.1.0.1", "clusterIPs": ["10.1.0.1"]}}
    first.create("services", "default", "held",
                 lambda _old, rv: {**held, "metadata": {**held["metadata"], "resourceVersion": rv}})
    assert network.allocate_ip(first, None, "default/a") == "10.1.0.2"
    assert network.allocate_ip(second, None, "default/b") == "10.1.0.1"  # (not the first store's Services)
    assert network.allocate_ip(first, None, "default/c") == "10.1.0.3"  # (a's pending)
    first.close()
    second.close()
