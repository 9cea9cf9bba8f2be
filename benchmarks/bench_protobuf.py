"""Protobuf bodies (server/protobuf/decoder.py) beside JSON: what reading and writing the objects kube-scheduler, DRA
drivers and the Kubernetes e2e framework send costs — a ResourceClaim status update (an allocation), a
driver's ResourceSlice of 8 devices (and one of 128), an e2e pod, a Node, a scheduling Event, the CronJob
``kubectl create cronjob`` sends, a PersistentVolumeClaim as the PV controller's bind leaves it and a
CustomResourceDefinition (whose OpenAPI schema only the Python path reads).

    .venv/bin/python benchmarks/bench_protobuf.py [--calls 500] [--runs 20] [--profile] [--bytecodes] [--server 2000]

Each object is encoded as a Go client encodes it (protobuf.encode: every non-pointer field, empty or not) and
as JSON (msgspec); a last row decodes slices whose every attribute and capacity value is new (the decoder
finds a map entry it has read before by its bytes: these it never finds). Prints, per object, the µs per
decode and per encode of each form — protobuf read by the C reader (where it is built) and, as "protobuf
(Python)", by the Python path alone — the best of ``--runs`` runs of ``--calls`` calls, the forms and the two
readers alternating run by run, timed in CPU time of this process (a shared
machine's other processes then move the figures far less) — the body sizes and protobuf's cost as a multiple
of JSON's. The "request" columns time a create's body as the server reads it: JSON — msgspec's decoding, the
limits (depth, int64) and the unknown and duplicate field check; protobuf — decoding and the limits, whose
walk over the decoded object runs only when the JSON embedded in the body might break one.

``--profile``: cProfile of each object's decoding (the functions the time goes to). ``--bytecodes``: the Python
bytecodes one decode of each object executes (counted with sys.settrace, once the decoder has compiled the
object's messages and kept what it keeps of a body read before), per function — a figure the machine's load
does not move, to compare two versions of the decoder by. ``--server N``: end to
end, a `dralloc serve` process (benchmarks/bench_server.py's) takes N ResourceClaims and N ResourceSlices of
8 devices from 8 client connections, once with JSON bodies and once with protobuf bodies (dry-run creates,
so both rounds create the same objects and only the reading differs), first a server with the C reader, then
one with ``DRALLOC_PURE_PYTHON=1``; prints creates/s and the server's CPU µs per create.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import itertools
import os
import pstats
import sys
import tempfile
import threading
import time
import timeit
import types
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from dralloc.api import strict
from dralloc.server.http.bodies import JSON, check_limits, parse
from dralloc.server.protobuf import accelerated
from dralloc.server.protobuf.decoder import (
    CONTENT_TYPE,
    accelerator_in_use,
    decode,
    encode,
    nesting,
    use_accelerator,
)

_META = {"name": "web-gpu-x7k2p", "generateName": "web-gpu-", "namespace": "default", "uid": "0d6c4e3a",
         "resourceVersion": "1234", "generation": 1, "creationTimestamp": "2025-01-02T03:04:05Z",
         "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "5f1c",
                              "controller": True, "blockOwnerDeletion": True}],
         "finalizers": ["resource.kubernetes.io/delete-protection"],
         "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                            "apiVersion": "resource.k8s.io/v1", "time": "2025-01-02T03:04:05Z",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:metadata": {"f:generateName": {}}, "f:spec": {"f:devices": {}}}}]}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": _META,
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                  "allocationMode": "ExactCount", "count": 1}}]}},
    "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                       "pool": "node-1", "device": "gpu-0"}]},
                              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                  {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                              "allocationTimestamp": "2025-01-02T03:04:06Z"},
               "reservedFor": [{"resource": "pods", "name": "web", "uid": "5f1c"}]}}
SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu-7fz2q", "generateName": "node-1-gpu-", "uid": "9b2d",
                 "creationTimestamp": "2025-01-02T03:04:05Z"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "nodeName": "node-1",
             "devices": [{"name": f"gpu-{g}", "attributes": {"driverVersion": {"version": "560.35.3"},
                                                             "index": {"int": g}, "model": {"string": "h100"}},
                          "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]}}
POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "pod-7f2c", "namespace": "e2e-dra-4821", "labels": {"app": "dra-test"}},
    "spec": {"volumes": [{"name": "kube-api-access", "projected": {"sources": [
                 {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}],
             "containers": [{"name": "with-resource", "image": "registry.k8s.io/e2e-test-images/busybox:1.36",
                             "command": ["sh", "-c", "env && sleep 100000"],
                             "resources": {"claims": [{"name": "my-inline-claim"}]},
                             "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                                               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                             "terminationMessagePath": "/dev/termination-log",
                             "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
             "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
             "serviceAccountName": "default", "securityContext": {}, "schedulerName": "default-scheduler",
             "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                              "tolerationSeconds": 300}],
             "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
             "resourceClaims": [{"name": "my-inline-claim", "resourceClaimTemplateName": "pod-7f2c-template"}]},
    "status": {"phase": "Pending", "qosClass": "BestEffort"}}
NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux"}},
    "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"],
             "taints": [{"key": "gpu.example.com/maintenance", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "64", "ephemeral-storage": "1Ti", "memory": "512Gi", "pods": "110"},
               "allocatable": {"cpu": "63500m", "ephemeral-storage": "1Ti", "memory": "510Gi", "pods": "110"},
               "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},  # (Go writes these two whatever they hold)
               "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                            "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "",
                            "operatingSystem": "", "architecture": ""}}}
EVENT = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "web.17f2c3a4b5", "namespace": "default"},
    "eventTime": "2025-06-07T08:09:10.000005Z", "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-node-1", "action": "Scheduling", "reason": "FailedScheduling",
    "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "5f1c", "apiVersion": "v1",
                  "resourceVersion": "1234"},
    "note": "0/8 nodes are available: 8 cannot allocate all claims.", "type": "Warning", "deprecatedSource": {}}
CRON_JOB = {
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "tick", "namespace": "default"},
    "spec": {"schedule": "*/1 * * * *", "jobTemplate": {
        "metadata": {"name": "tick"},
        "spec": {"template": {"metadata": {}, "spec": {
            "containers": [{"name": "tick", "image": "busybox", "command": ["date"], "resources": {}}],
            "restartPolicy": "OnFailure"}}}}},
    "status": {}}
CLAIM_BOUND = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data-web-0", "namespace": "default", "uid": "7c1d", "resourceVersion": "4321",
                 "creationTimestamp": "2025-01-02T03:04:05Z", "labels": {"app": "web"},
                 "annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                 "pv.kubernetes.io/bound-by-controller": "yes",
                                 "volume.beta.kubernetes.io/storage-provisioner": "csi.example.com",
                                 "volume.kubernetes.io/selected-node": "node-1"},
                 "finalizers": ["kubernetes.io/pvc-protection"]},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
             "volumeName": "pvc-7c1d", "storageClassName": "standard", "volumeMode": "Filesystem"},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced",
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {
                     "spec": {"type": "object", "required": ["size"], "properties": {
                         "ports": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                             "name": {"type": "string"}, "port": {"type": "integer", "maximum": 65535, "minimum": 1}}},
                             "x-kubernetes-list-map-keys": ["name"], "x-kubernetes-list-type": "map"},
                         "replicas": {"type": "integer", "default": 1, "maximum": 100, "minimum": 0},
                         "size": {"type": "string", "enum": ["small", "large"]}}},
                     "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}},
                 "subresources": {"status": {}}}]},
    "status": {"acceptedNames": {"plural": "", "kind": ""}}}
BIG_SLICE = {**SLICE, "spec": {**SLICE["spec"], "devices": [
    {**device, "name": f"gpu-{g}"} for g in range(128) for device in SLICE["spec"]["devices"][:1]]}}
OBJECTS = {"ResourceClaim status update": CLAIM, "ResourceSlice of 8 devices": SLICE, "Pod (e2e)": POD,
           "Node": NODE, "Event (scheduler)": EVENT, "CronJob (kubectl create)": CRON_JOB,
           "PersistentVolumeClaim, bound": CLAIM_BOUND, "CustomResourceDefinition": CRD,
           "ResourceSlice of 128 devices": BIG_SLICE}


def new_values_slice(i: int) -> dict[str, Any]:
    """A slice of 8 devices no attribute or capacity value of which another slice has (the decoder keeps map
    entries it has read, by their bytes: these are never found)."""
    return {**SLICE, "spec": {**SLICE["spec"], "devices": [
        {"name": f"gpu-{g}", "attributes": {"driverVersion": {"version": f"560.{i}.{g}"}, "index": {"int": i * 8 + g},
                                            "model": {"string": f"h100-{i}-{g}"}},
         "capacity": {"memory": {"value": f"{i * 8 + g}Gi"}}} for g in range(8)]}}


NEW_VALUES = "slice of 8, every value new"


def best_of(runs: int, calls: int, timed: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The least CPU µs per call of each function, the functions alternating run by run; a protobuf function
    whose name ends in "(Python)" runs with the C reader switched off (use_accelerator), the others with it
    where it is built."""
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(runs):
        for name, call in timed.items():
            use_accelerator(not name.endswith("(Python)"))
            times[name].append(timeit.timeit(call, number=calls, timer=time.process_time) / calls * 1e6)
    use_accelerator(True)
    return {name: min(found) for name, found in times.items()}


def json_request(body: bytes, kind: str) -> Any:
    """A JSON create's body as the server reads it (server/verbs/objects.py): decoded with its limits, then
    its unknown and duplicate fields found."""
    data = parse(body, JSON, kind, "v1")
    strict.field_problems(body, decoded=data)
    return data


def protobuf_request(body: bytes, kind: str) -> Any:
    """A protobuf create's body as the server reads it: decoded, then the limits where embedded JSON may
    break them."""
    data = decode(body)
    check_limits(data, body, kind, "v1", nesting(data["apiVersion"], data["kind"]))
    return data


def on_next(call: Callable[..., Any], bodies: Iterator[bytes], *args: Any) -> Any:
    """``call`` on the next body (the same one again, or each a new one)."""
    return call(next(bodies), *args)


def per_object(args: argparse.Namespace) -> None:
    reader = "C reader" if accelerator_in_use() else f"Python path (no C reader: {accelerated.IMPORT_ERROR})"
    print(f"protobuf: the {reader}; protobuf (Python): the Python path alone")
    print(f"{'object':29} {'form':17} {'bytes':>6} {'decode µs':>10} {'× JSON':>7} {'encode µs':>10} {'× JSON':>7} "
          f"{'request µs':>11} {'× JSON':>7}")
    rows: dict[str, list[dict[str, Any]]] = {label: [obj] for label, obj in OBJECTS.items()}
    rows[NEW_VALUES] = [new_values_slice(i) for i in range(args.runs * args.calls * 3)]  # (each decoded once)
    for label, objects in rows.items():
        pbs, jss = [encode(o) for o in objects], [msgspec.json.encode(o) for o in objects]
        assert msgspec.json.encode(decode(pbs[0])) == jss[0], f"{label}: protobuf does not give the JSON back"
        devices = len(objects[0].get("spec", {}).get("devices", ()))
        calls = max(1, args.calls * 8 // max(8, devices))  # (fewer calls of the large slice)
        kind = objects[0]["kind"]
        obj, pb, js = objects[0], itertools.cycle(pbs), itertools.cycle(jss)
        µs = best_of(args.runs, calls, {
            "protobuf decode": partial(on_next, decode, pb), "JSON decode": partial(on_next, msgspec.json.decode, js),
            "protobuf decode (Python)": partial(on_next, decode, pb),
            "protobuf encode": partial(encode, obj), "JSON encode": partial(msgspec.json.encode, obj),
            "protobuf request": partial(on_next, protobuf_request, pb, kind),
            "protobuf request (Python)": partial(on_next, protobuf_request, pb, kind),
            "JSON request": partial(on_next, json_request, js, kind)})
        µs["protobuf encode (Python)"] = µs["protobuf encode"]  # (one encoder)
        for form, size in (("protobuf", len(pbs[0])), ("protobuf (Python)", len(pbs[0])), ("JSON", len(jss[0]))):
            figures = [µs[f"{form.replace(' (', f' {what} (') if '(' in form else f'{form} {what}'}"]
                       for what in ("decode", "encode", "request")]
            ratios = [f"{figure / µs[f'JSON {what}']:6.2f}×" if form != "JSON" else ""
                      for figure, what in zip(figures, ("decode", "encode", "request"), strict=True)]
            print(f"{label:29} {form:17} {size:6} {figures[0]:10.2f} {ratios[0]:>7} {figures[1]:10.2f} {ratios[1]:>7} "
                  f"{figures[2]:11.2f} {ratios[2]:>7}")


def profile() -> None:
    for label, obj in OBJECTS.items():
        pb = encode(obj)
        decode(pb)  # (compiled)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(1000):
            decode(pb)
        profiler.disable()
        print(f"--- {label}: 1000 decodes")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(6)


def executed_bytecodes(call: Callable[[], Any]) -> collections.Counter[str]:
    """The bytecodes ``call`` executes, per function."""
    per_function: collections.Counter[str] = collections.Counter()

    def count(frame: types.FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            per_function[frame.f_code.co_name] += 1
        return count

    sys.settrace(count)
    try:
        call()
    finally:
        sys.settrace(None)
    return per_function


def bytecodes() -> None:
    for reader, accelerated_reading in (("C", True), ("Python", False)):
        use_accelerator(accelerated_reading)
        if accelerated_reading and not accelerator_in_use():
            continue
        for label, obj in OBJECTS.items():
            pb = encode(obj)
            decode(pb), decode(pb)  # (compiled, and its entries read twice: kept)
            per_function = executed_bytecodes(partial(decode, pb))
            most = ", ".join(f"{name} {n}" for name, n in per_function.most_common(4))
            print(f"{reader:6} {label:29} {sum(per_function.values()):7} bytecodes  ({most})")
    use_accelerator(True)


def server_creates(n: int, clients: int) -> None:
    """Creates/s and server CPU µs per create of claims and slices, JSON bodies then protobuf bodies."""
    import bench_server  # (beside this script)

    def claim(i: int) -> dict[str, Any]:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": f"claim-{i}"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}}

    def slice_(i: int) -> dict[str, Any]:
        return {**SLICE, "metadata": {"name": f"node-{i}-gpus"},
                "spec": {**SLICE["spec"], "nodeName": f"node-{i}", "pool": {**SLICE["spec"]["pool"],
                                                                           "name": f"node-{i}"}}}

    def request(path: str, body: bytes, content_type: str) -> bytes:
        return (f"POST {path}?dryRun=All HTTP/1.1\r\nHost: bench\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body

    def run(requests: list[bytes]) -> float:
        chunks = [requests[c::clients] for c in range(clients)]
        errors: list[str] = []

        def client(mine: list[bytes]) -> None:
            conn = bench_server.LeanConnection(target)
            for req in mine:
                status, answer = conn.roundtrip(req)
                if status >= 300:
                    errors.append(f"{status} {answer[:200]!r}")
                    return

        threads = [threading.Thread(target=client, args=(chunk,)) for chunk in chunks]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError(errors[0])
        return time.perf_counter() - t0

    kinds = {"ResourceClaim": (bench_server.CLAIMS, claim), "ResourceSlice": (bench_server.SLICES, slice_)}
    # a server with the C reader (where built) and one with the Python path alone (DRALLOC_PURE_PYTHON)
    for reader, pure in (("C", ""), ("Python", "1")):
        os.environ["DRALLOC_PURE_PYTHON"] = pure
        with tempfile.TemporaryDirectory() as tmp:
            proc, target = bench_server.start_server(Path(tmp) / "data", False, "--max-connections", "100000")
            try:
                for kind, (path, make) in kinds.items():
                    objects = [make(i) for i in range(n)]
                    forms = {"JSON": [request(path, msgspec.json.encode(o), "application/json") for o in objects],
                             f"protobuf ({reader})": [request(path, encode(o), CONTENT_TYPE) for o in objects]}
                    for requests in forms.values():  # (warm: the first bodies compile the decoder's messages)
                        run(requests[: n // 10])
                    for form, requests in forms.items():
                        cpu = bench_server.cpu_seconds(proc)
                        wall = run(requests)
                        cpu = bench_server.cpu_seconds(proc) - cpu
                        print(f"{kind:14} {form:17} {n / wall:8.0f} creates/s (dry run, {clients} clients); "
                              f"server CPU {cpu / n * 1e6:5.0f} µs per create")
            finally:
                proc.terminate()
                proc.wait()
    os.environ.pop("DRALLOC_PURE_PYTHON")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="cProfile each object's decoding")
    parser.add_argument("--bytecodes", action="store_true", help="count the bytecodes of each object's decoding")
    parser.add_argument("--server", type=int, default=0, metavar="N",
                        help="also N dry-run creates of claims and slices through dralloc serve, JSON and protobuf")
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    if args.profile:
        profile()
        return
    if args.bytecodes:
        bytecodes()
        return
    per_object(args)
    if args.server:
        server_creates(args.server, args.clients)


if __name__ == "__main__":
    main()
