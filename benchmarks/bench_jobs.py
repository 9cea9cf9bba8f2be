"""The Job controller of `dralloc serve` (server/controllers/jobs.py) at scale: an Indexed Job of many
completions run to Complete (``--fake-kubelet`` ends each pod as it starts), and what one pass costs while a
Job of as many pending pods runs, when one of its pods changed (the Job is synced over all its pods).

    .venv/bin/python benchmarks/bench_jobs.py [--completions 1000] [--rounds 20]

Setup (not timed): one node per 10 pods, written straight to an in-memory store, and the first pass. Prints
the seconds (and passes) from the Job's create to its Complete condition, then the median µs of a pass after
another client changed one pending pod's label.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench_workloads import change, put, settle

from dralloc.server.controllers import ControllerManager, Options
from dralloc.store import SQLiteStore


def job(name: str, completions: int, **template_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "uid": name, "generation": 1},
            "spec": {"completions": completions, "parallelism": completions, "completionMode": "Indexed",
                     "backoffLimit": 6, "selector": {"matchLabels": {"job": name}},
                     "template": {"metadata": {"labels": {"job": name}},
                                  "spec": {"containers": [{"name": "main", "image": "busybox:1"}],
                                           "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                                           **template_spec}}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--completions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    store = SQLiteStore(":memory:")
    put(store, "namespaces", "", {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": "default", "uid": "ns"}, "status": {"phase": "Active"}})
    put(store, "serviceaccounts", "default", {"apiVersion": "v1", "kind": "ServiceAccount",
                                              "metadata": {"name": "default", "namespace": "default", "uid": "sa"}})
    for n in range(max(args.completions // 10, 1)):
        put(store, "nodes", "", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{n}", "uid": f"n{n}"},
                                 "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}})
    manager = ControllerManager(store, Options(fake_kubelet=True))
    manager.run_once(force=True)
    put(store, "jobs", "default", job("batch", args.completions))

    def complete() -> bool:
        conditions = (store.get("jobs", "default", "batch").get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions)
    seconds, passes = settle(manager, complete)
    print(f"an Indexed Job of {args.completions} completions to Complete: {seconds:.2f} s, {passes} passes")

    put(store, "jobs", "default", job("stuck", args.completions, nodeSelector={"pool": "none"}))

    def all_pending() -> bool:
        return (store.get("jobs", "default", "stuck").get("status") or {}).get("active") == args.completions
    settle(manager, all_pending)
    for _ in range(3):
        manager.run_once(force=True)
    pod = next(p["metadata"]["name"] for p in store.list("pods")[0] if p["metadata"]["name"].startswith("stuck-"))
    times = []
    for r in range(args.rounds):
        change(store, "pods", pod, lambda p, r=r: p["metadata"]["labels"].__setitem__("round", str(r)))
        start = time.perf_counter()
        while manager.run_once(force=False):
            pass
        times.append(time.perf_counter() - start)
    print(f"a pass after one of {args.completions} pending Job pods changed: "
          f"{statistics.median(times) * 1e6:.0f} µs (median)")


if __name__ == "__main__":
    main()
