"""µs per managedFields bookkeeping call on the write path: ``record_update`` (every create, update and patch)
and ``apply`` (server-side apply), for a DeviceClass, a ResourceSlice with 8 devices and a Pod with 2 containers.

    .venv/bin/python benchmarks/bench_managed_fields.py [--repeat 5] [--number 2000]

create = record_update of a new object; update = another manager changes one label of an object that has its
creator's entry; apply = a second apply of the same configuration plus one label. Prints the median of the
repeats.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

META = {"uid": "0b5b6a7e-8f8e-4a47-9d0e-3d1f9c4a1f00", "resourceVersion": "12", "generation": 1,
        "creationTimestamp": "2026-01-01T00:00:00Z"}


def objects() -> dict[str, dict[str, Any]]:
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": "gpu.example.com", **META},
                    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "A100"}, "index": {"int": i}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
    resource_slice = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": "node-1-gpu", **META},
                      "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "devices": devices,
                               "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}}}
    container = {"image": "registry.example.com/app:1.0", "imagePullPolicy": "IfNotPresent",
                 "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                 "ports": [{"containerPort": 8080, "protocol": "TCP"}], "env": [{"name": "MODE", "value": "fast"}],
                 "resources": {"claims": [{"name": "gpu"}], "limits": {"cpu": "1"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": "default", **META,
                                                           "labels": {"app": "demo"}},
           "spec": {"containers": [{"name": "app", **container}, {"name": "sidecar", **container}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                    "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
                    "terminationGracePeriodSeconds": 30},
           "status": {"phase": "Pending", "qosClass": "Burstable"}}
    return {"DeviceClass": device_class, "ResourceSlice (8 devices)": resource_slice, "Pod (2 containers)": pod}


def per_call(fn: Any, make: Any, number: int, repeat: int) -> float:
    """Median µs per call of ``fn(arg)`` over fresh arguments (copies are made outside the timing)."""
    results = []
    for _ in range(repeat):
        args = [make() for _ in range(number)]
        it = iter(args)
        results.append(timeit.timeit(lambda it=it: fn(next(it)), number=number) / number * 1e6)
    return statistics.median(results)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    from dralloc.server.apply.managed_fields import apply, record_update

    print(f"{'object':28} {'create µs':>10} {'update µs':>10} {'apply µs':>10}")
    for name, obj in objects().items():
        version = obj["apiVersion"]
        create = per_call(lambda new, v=version: record_update(None, new, "creator", v),
                          lambda o=obj: copy.deepcopy(o), args.number, args.repeat)
        old = copy.deepcopy(obj)
        record_update(None, old, "creator", version)

        def edited(old: dict[str, Any] = old) -> dict[str, Any]:
            new = copy.deepcopy(old)
            new["metadata"].setdefault("labels", {})["tier"] = "gold"
            return new

        update = per_call(lambda new, o=old, v=version: record_update(o, new, "editor", v), edited, args.number,
                          args.repeat)
        config = {k: v for k, v in obj.items() if k != "status"}
        config["metadata"] = {"name": obj["metadata"]["name"], "labels": {"team": "ml"}}
        live = apply(old, config, "applier", True, version)
        config2 = copy.deepcopy(config)
        config2["metadata"]["labels"]["tier"] = "gold"
        applied = per_call(lambda c, lv=live, v=version: apply(lv, c, "applier", False, v), lambda c2=config2: c2,
                           args.number, args.repeat)
        print(f"{name:28} {create:>10.1f} {update:>10.1f} {applied:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
