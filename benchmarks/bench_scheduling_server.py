"""Pods scheduled per second through the API: a real `dralloc serve` process (its scheduler loop on), pods with
ResourceClaimTemplate claims created over HTTP, timed until every pod is bound.

    .venv/bin/python benchmarks/bench_scheduling_server.py [--pods 1000] [--nodes 100] [--gpus 8] [--clients 4]
                                                           [--gang N]

Setup (not timed): N Nodes, one ResourceSlice per node with G GPUs, a DeviceClass and a ResourceClaimTemplate.
Then P pods are created from C client connections while one watch on pods records when each gets
``spec.nodeName``. Prints pods/s from the first create to the last binding, and when the median and the last binding came. Every pod passes through the resourceclaim controller (its claim is
created), the scheduler (allocation, reservedFor) and the binding. Plain HTTP (``--insecure-http``) so the
figure is the server's, not TLS's. With ``--gang N`` the pods come in gangs of N (a PodGroup of ``minCount`` N
each, made in the setup; the server runs with ``--feature-gates GenericWorkload=true,GangScheduling=true``),
so each gang binds in one pod group cycle once its last pod is there. Also prints the server's CPU time per pod bound (requests, controllers and
store together), which moves far less than the rates when the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

from bench_server import Target, cpu_seconds, percentile, run_parallel, start_server

R = "/apis/resource.k8s.io/v1"


def setup_objects(nodes: int, gpus: int) -> list[tuple[str, str, bytes | None]]:
    work: list[tuple[str, str, bytes | None]] = [
        ("POST", f"{R}/deviceclasses", json.dumps({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}).encode()),
        ("POST", f"{R}/namespaces/default/resourceclaimtemplates", json.dumps({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
        }).encode())]
    for i in range(nodes):
        work.append(("POST", "/api/v1/nodes", json.dumps({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}).encode()))
        work.append(("POST", f"{R}/resourceslices", json.dumps({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"node-{i}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": f"node-{i}",
                     "pool": {"name": f"node-{i}", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{g}", "attributes": {"index": {"int": g}}} for g in range(gpus)]}
        }).encode()))
    return work


def pod_groups(pods: int, gang: int) -> list[tuple[str, str, bytes | None]]:
    return [("POST", "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups", json.dumps({
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": f"gang-{g}"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": gang}}}}).encode()) for g in range(-(-pods // gang))]


def pod_body(i: int, gang: int = 0) -> bytes:
    group = {"schedulingGroup": {"podGroupName": f"gang-{i // gang}"}} if gang else {}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}"},
                       "spec": {"containers": [{"name": "main", "image": "x:1",
                                                "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}],
                                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                                **group}}).encode()


def watch_bindings(target: Target, rv: str, bound: dict[str, float], want: int, done: threading.Event) -> None:
    conn = target.connect()
    conn.request("GET", f"/api/v1/namespaces/default/pods?watch=true&resourceVersion={rv}&timeoutSeconds=600")
    resp = conn.getresponse()
    while len(bound) < want and not done.is_set():
        line = resp.readline()
        if not line:
            return
        event = json.loads(line)
        obj = event.get("object") or {}
        if (obj.get("spec") or {}).get("nodeName"):
            bound.setdefault(obj["metadata"]["name"], time.perf_counter())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--gpus", type=int, default=10, help="GPUs per node (default: room for every pod)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--gang", type=int, default=0, metavar="N", help="pods in gangs of N (PodGroups, minCount N)")
    args = parser.parse_args()
    gates = ["--feature-gates", "GenericWorkload=true,GangScheduling=true"] if args.gang else []
    with tempfile.TemporaryDirectory() as tmp:
        proc, target = start_server(Path(tmp) / "data", False, *gates)
        try:
            run_parallel(args.clients, target, setup_objects(args.nodes, args.gpus))
            if args.gang:
                run_parallel(args.clients, target, pod_groups(args.pods, args.gang))
            conn = target.connect()
            conn.request("GET", "/api/v1/namespaces/default/pods?limit=1")
            rv = json.loads(conn.getresponse().read())["metadata"]["resourceVersion"]
            capacity = min(args.pods, args.nodes * args.gpus)
            bound: dict[str, float] = {}
            done = threading.Event()
            watcher = threading.Thread(target=watch_bindings, args=(target, rv, bound, capacity, done), daemon=True)
            watcher.start()
            time.sleep(0.3)
            work = [("POST", "/api/v1/namespaces/default/pods", pod_body(i, args.gang)) for i in range(args.pods)]
            cpu0 = cpu_seconds(proc)
            t0 = time.perf_counter()
            create_s, _ = run_parallel(args.clients, target, work)
            created_at = t0 + create_s
            deadline = time.monotonic() + 600
            while len(bound) < capacity and time.monotonic() < deadline:
                time.sleep(0.05)
            done.set()
            cpu = cpu_seconds(proc) - cpu0
            elapsed = (max(bound.values()) if bound else time.perf_counter()) - t0
        finally:
            proc.terminate()
            proc.wait()
    print(f"schedule: {len(bound) / elapsed:8.1f} pods/s  ({len(bound)} of {args.pods} pods bound on {args.nodes} "
          f"nodes x {args.gpus} GPUs, a template claim each{f', gangs of {args.gang}' if args.gang else ''}, "
          f"{args.clients} clients; {elapsed:.2f} s from the first "
          f"create to the last binding; creates took {create_s:.2f} s)")
    if bound:
        last = max(bound.values())
        print(f"          last binding {1000 * (last - created_at):.0f} ms after the last acknowledged create; "
              f"median binding at {1000 * (percentile(list(bound.values()), 0.5) - t0):.0f} ms")
    print(f"          server CPU {1000 * cpu / max(len(bound), 1):.2f} ms per pod bound ({cpu:.2f} s, all threads; "
          "steadier than the rates on a shared machine)")


if __name__ == "__main__":
    main()
