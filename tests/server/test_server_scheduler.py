"""`dralloc serve`'s scheduler against `dralloc simulate`: one scheduler for the server's whole life (its random
source and rotating start index continue from pass to pass), reading the Services and workload objects that
default topology spreading reads, so that the server places pods where the simulator does."""

from __future__ import annotations

from typing import Any

from cluster import CLASS, NS, TEMPLATE, Cluster, R, pod

from dralloc.api.codec import decode
from dralloc.simulator import Simulator


def plain_node(name: str, cpu: str = "8", zone: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, **({"topology.kubernetes.io/zone": zone} if zone else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def plain_pod(name: str, cpu: str = "100m", labels: dict[str, str] | None = None,
              node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x:1", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                           **({"labels": labels} if labels else {})}, "spec": spec}


def simulated(objects: list[dict[str, Any]], seed: int = 0) -> dict[str, str | None]:
    """Where ``dralloc simulate`` places the pods of these objects (in this order), by pod name."""
    result = Simulator.from_objects([decode(o) for o in objects], seed=seed).schedule()
    return {p.name: p.node for p in result.pods}


def placed(cluster: Cluster) -> dict[str, str | None]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in cluster.pods()}


def test_the_random_source_and_start_index_continue_across_passes_as_in_one_simulation() -> None:
    # 150 alike nodes: each cycle examines 100 of them (from where the last cycle stopped) and picks among
    # equal top scores at random. A pod per pass: the server's placements are the simulator's for all of them.
    cluster = Cluster()
    nodes = [plain_node(f"node-{i:03d}") for i in range(150)]
    for node in nodes:
        cluster.post("/api/v1/nodes", node)
    pods = [plain_pod(f"web-{i}") for i in range(5)]
    for body in pods:
        cluster.post(f"{NS}/pods", body)
        cluster.settle()
    assert placed(cluster) == simulated([*nodes, *pods])
    assert cluster.manager.scheduler.live.state.next_start_node_index == 5 * 100 % 150


def test_default_topology_spreading_reads_the_services_of_the_store() -> None:
    # node-a has two pods of the Service, node-b one busier pod of none: the least-allocated score prefers
    # node-a, spreading the Service's pods prefers node-b (as kube-scheduler's default constraints do).
    cluster = Cluster()
    nodes = [plain_node("node-a"), plain_node("node-b")]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    running = [plain_pod("web-0", labels={"app": "web"}, node="node-a"),
               plain_pod("web-1", labels={"app": "web"}, node="node-a"),
               plain_pod("batch", cpu="2", node="node-b")]
    new = plain_pod("web-2", labels={"app": "web"})
    for obj, path in [*((n, "/api/v1/nodes") for n in nodes), *((p, f"{NS}/pods") for p in running)]:
        cluster.post(path, obj)
    # Services are read-only through this API server: a Service is in its store only as restored or written
    # by another program.
    cluster.store.create("services", "default", "web", lambda _old, rv: {
        **service, "metadata": {**service["metadata"], "resourceVersion": rv, "uid": "0b6c1d2e-web"}})
    cluster.settle()
    cluster.post(f"{NS}/pods", new)
    cluster.settle()
    expected = simulated([*nodes, service, *running, new])
    assert expected["web-2"] == "node-b"
    assert simulated([*nodes, *running, new])["web-2"] == "node-a"  # (without the Service)
    assert placed(cluster) == expected


def test_pod_affinity_selects_namespaces_by_the_labels_of_the_stored_namespaces() -> None:
    cluster = Cluster()
    nodes = [plain_node("node-a"), plain_node("node-b")]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "data", "labels": {"team": "data"}}}
    database = {**plain_pod("db", labels={"app": "db"}, node="node-b")}
    database["metadata"] = {**database["metadata"], "namespace": "data"}
    client = plain_pod("client")
    client["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "db"}}, "namespaceSelector": {"matchLabels": {"team": "data"}},
        "topologyKey": "kubernetes.io/hostname"}]}}
    for node in nodes:
        cluster.post("/api/v1/nodes", node)
    cluster.post("/api/v1/namespaces", namespace)
    cluster.post("/api/v1/namespaces/data/pods", database)
    cluster.post(f"{NS}/pods", client)
    cluster.settle()
    assert simulated([*nodes, namespace, database, client])["client"] == "node-b"
    assert cluster.get("pods", "client")["spec"].get("nodeName") == "node-b"


def test_pods_with_claims_arriving_in_batches_land_where_one_simulation_puts_them() -> None:
    # 120 nodes of 2 GPUs, 30 pods with a template claim, 10 per pass: nodes, devices and the claims the
    # server keeps between passes (allocated by it, read back from the store) match one simulation.
    cluster = Cluster()
    cluster.post(f"{R}/deviceclasses", CLASS)
    cluster.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    nodes, slices = [], []
    for i in range(120):
        nodes.append(plain_node(f"node-{i:03d}"))
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                       "metadata": {"name": f"node-{i:03d}-gpus"},
                       "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i:03d}",
                                "pool": {"name": f"node-{i:03d}", "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{g}"} for g in range(2)]}})
        cluster.post("/api/v1/nodes", nodes[-1])
        cluster.post(f"{R}/resourceslices", slices[-1])
    cluster.settle()
    pods = []
    for batch in range(3):
        for i in range(10):
            pods.append(pod(f"trainer-{batch}{i}"))
            cluster.post(f"{NS}/pods", pods[-1])
        cluster.settle()
    result = Simulator.from_objects([decode(o) for o in (CLASS, TEMPLATE, *nodes, *slices, *pods)]).schedule()
    devices = {(c.metadata.namespace, c.metadata.name): [r.device for r in c.status.allocation.devices.results]
               for c in result.claims if c.status is not None and c.status.allocation is not None}
    expected = {p.name: (p.node, devices[("default", p.pod.status.resource_claim_statuses[0].resource_claim_name)])
                for p in result.pods}
    stored = {(c["metadata"]["namespace"], c["metadata"]["name"]):
              [r["device"] for r in c["status"]["allocation"]["devices"]["results"]] for c in cluster.claims()}
    served = {p["metadata"]["name"]: (p["spec"].get("nodeName"),
                                      stored[("default", p["status"]["resourceClaimStatuses"][0]["resourceClaimName"])])
              for p in cluster.pods()}
    assert served == expected
    assert cluster.manager.scheduler.live.builds == 1  # the cluster side was built once, then kept
