"""`dralloc serve`'s scheduler against `dralloc simulate`: one scheduler for the server's whole life (its random
source and rotating start index continue from pass to pass), reading the Services and workload objects that
default topology spreading reads, so that the server places pods where the simulator does."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import CLASS, NS, TEMPLATE, Cluster, R, gpu_cluster, pod, slice_
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api.codec import decode
from dralloc.server.controllers.live import LiveScheduler
from dralloc.server.controllers.snapshot import Snapshot
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def cache_view(sim: Simulator) -> tuple[Any, ...]:
    """What the scheduler's cache holds: the pods on each node (with their node as the pod says), each
    claim's devices and consumers, the nominations."""
    pods = {n.name: sorted((p.key, p.pod.spec.node_name) for p in n.pods) for n in sim.snapshot.nodes}
    claims = {}
    for key, claim in sim.snapshot.claims.items():
        status = claim.status
        allocation = status.allocation if status is not None else None
        claims[key] = (sorted(r.device for r in allocation.devices.results) if allocation and allocation.devices else None,
                       sorted(r.uid for r in (status.reserved_for or ())) if status is not None else [])
    nominated = {n.name: sorted(p.key for p in n.nominated) for n in sim.snapshot.nodes if n.nominated}
    return pods, claims, nominated


STEPS = st.lists(st.one_of(
    st.tuples(st.just("template"), st.integers(0, 5)),
    st.tuples(st.just("shared"), st.integers(0, 5)),
    st.tuples(st.just("plain"), st.integers(0, 5)),
    st.tuples(st.just("urgent"), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("finish"), st.integers(0, 5)),
    st.tuples(st.just("slice"), st.integers(1, 3)),
    st.tuples(st.just("label"), st.integers(0, 1)),
), min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(steps=STEPS)
def test_the_long_lived_scheduler_holds_what_one_built_from_the_store_holds(steps: list[tuple[str, int]]) -> None:
    c = Cluster()
    for name in ("node-1", "node-2"):
        c.post("/api/v1/nodes", plain_node(name, cpu="2"))
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    c.post(f"{R}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
        "spec": TEMPLATE["spec"]["spec"]})
    loop = c.manager.scheduler
    for step, (action, n) in enumerate(steps):
        name = f"p{n}"
        exists = c.http.get(f"{NS}/pods/{name}").status_code == 200
        if action in ("template", "shared") and not exists:
            claim = {"resourceClaimTemplateName": "one-gpu"} if action == "template" else {"resourceClaimName": "shared"}
            c.post(f"{NS}/pods", pod(name, claim))
        elif action == "plain" and not exists:
            c.post(f"{NS}/pods", plain_pod(name, cpu="700m"))
        elif action == "urgent" and not exists:  # preempts plain pods (their grace period keeps them a while)
            body = plain_pod(name, cpu="1500m")
            body["spec"]["priorityClassName"] = c.priority_class(1000)
            c.post(f"{NS}/pods", body)
        elif action == "delete" and exists:
            c.http.delete(f"{NS}/pods/{name}")
        elif action == "finish" and exists:
            current = c.get("pods", name)
            current["status"]["phase"] = "Failed"
            c.http.put(f"{NS}/pods/{name}/status", json=current)
        elif action == "slice":
            c.http.delete(f"{R}/resourceslices/node-1-gpu")
            c.post(f"{R}/resourceslices", slice_(devices=n))
        elif action == "label":
            c.http.patch(f"/api/v1/nodes/node-{n + 1}", json={"metadata": {"labels": {"step": str(step)}}},
                         headers={"content-type": "application/merge-patch+json"})
        c.settle(passes=10)
        snap = Snapshot(c.manager.mirror)
        running, assumed = loop.bound_pods(snap)
        kept = loop.live.sync(snap, running, assumed)
        fresh = LiveScheduler().sync(snap, running, assumed)
        assert cache_view(kept) == cache_view(fresh)


def test_a_claim_the_scheduler_allocated_but_could_not_write_is_read_back_from_the_store(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = gpu_cluster()
    cluster.post(f"{R}/resourceslices", slice_())
    loop = cluster.manager.scheduler
    writer = loop.writer
    real_update = writer.update

    def claim_gone_meanwhile(resource: str, *args: Any, **kwargs: Any) -> Any:
        return None if resource == "resourceclaims" else real_update(resource, *args, **kwargs)

    monkeypatch.setattr(writer, "update", claim_gone_meanwhile)
    cluster.post(f"{NS}/pods", pod("p"))
    cluster.settle()  # the cycle allocated the claim; its write found nothing: nothing was written
    monkeypatch.undo()
    (claim,) = cluster.claims()
    assert "allocation" not in (claim.get("status") or {})
    snap = Snapshot(cluster.manager.mirror)
    running, assumed = loop.bound_pods(snap)
    assert cache_view(loop.live.sync(snap, running, assumed)) == cache_view(LiveScheduler().sync(snap, running, assumed))


def test_a_claim_with_256_consumers_fails_the_next_pods_prebind_as_kube_apiserver_refuses_it() -> None:
    cluster = gpu_cluster()
    cluster.post(f"{R}/resourceslices", slice_())
    cluster.post(f"{R}/namespaces/default/resourceclaims", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared"},
        "spec": TEMPLATE["spec"]["spec"]})
    claim = cluster.get("resourceclaims", "shared")
    claim["status"] = {
        "allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1",
                                                "device": "gpu-0"}]},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}},
        # consumers that are not pods: no controller takes them out
        "reservedFor": [{"apiGroup": "example.com", "resource": "widgets", "name": f"w{i}", "uid": f"w-{i}"}
                        for i in range(255)]}
    assert cluster.http.put(f"{R}/namespaces/default/resourceclaims/shared/status", json=claim).status_code == 200
    cluster.post(f"{NS}/pods", pod("a", {"resourceClaimName": "shared"}))
    cluster.settle()  # the 256th consumer: taken
    assert cluster.get("pods", "a")["spec"].get("nodeName") == "node-1"
    cluster.post(f"{NS}/pods", pod("b", {"resourceClaimName": "shared"}))
    cluster.settle()
    b = cluster.get("pods", "b")
    assert b["spec"].get("nodeName") is None
    (condition,) = [c for c in b["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert (condition["reason"], condition["message"]) == (
        "SchedulerError", 'running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
        'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: must have at most '
        "256 items")
    reserved = cluster.get("resourceclaims", "shared")["status"]["reservedFor"]
    assert len(reserved) == 256 and reserved[-1]["name"] == "a"
    # kube-apiserver's own rule, for a client that writes the 257th
    full = cluster.get("resourceclaims", "shared")
    full["status"]["reservedFor"].append({"resource": "pods", "name": "b", "uid": b["metadata"]["uid"]})
    refused = cluster.http.put(f"{R}/namespaces/default/resourceclaims/shared/status", json=full)
    assert refused.status_code == 422
    assert refused.json()["message"] == condition["message"].split("add reservation to claim default/shared: ")[1]


def test_a_resize_the_kubelet_reports_counts_and_its_end_lets_waiting_pods_in() -> None:
    # r asks for 1 cpu, but the kubelet reports it running at 3500m (a resize in flight): a (1 cpu) waits. When
    # the kubelet reports the resize done at 1 cpu, the waiting pod is tried again at once, as kube-scheduler's
    # NodeResourcesFit queueing hint does for a pod whose requests went down.
    cluster = Cluster()
    cluster.post("/api/v1/nodes", plain_node("node-a", cpu="4"))
    running = cluster.post(f"{NS}/pods", plain_pod("r", cpu="1", node="node-a"))

    def report(cpu: str) -> None:
        current = cluster.http.get(f"{NS}/pods/r").json()
        current["status"] = {"phase": "Running", "containerStatuses": [
            {"name": "main", "image": "x:1", "imageID": "", "ready": True, "restartCount": 0, "state": {},
             "resources": {"requests": {"cpu": cpu}}, "allocatedResources": {"cpu": cpu}}]}
        r = cluster.http.put(f"{NS}/pods/r/status", json=current)
        assert r.status_code == 200, r.text

    assert running["spec"]["nodeName"] == "node-a"
    report("3500m")
    cluster.settle()
    cluster.post(f"{NS}/pods", plain_pod("a", cpu="1"))
    cluster.settle()
    assert placed(cluster)["a"] is None
    report("1")
    cluster.settle()
    assert placed(cluster)["a"] == "node-a"
