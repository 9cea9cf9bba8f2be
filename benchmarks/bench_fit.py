"""Node-fit and comparison throughput: the checks kube-scheduler's Filter does once per node per pod.

    .venv/bin/python benchmarks/bench_fit.py

Prints checks per second for a 4-dimension pod (cpu, memory, ephemeral-storage, nvidia.com/gpu) against a
node: with the precomputed integer form (FastFit, the hot path) and with the full ResourceList path that also
builds the failure messages; and the nine comparisons per second.
"""

from __future__ import annotations

import time

from dralloc.resources import ResourceList, compare_all
from dralloc.resources.fit import FastFit, PodFootprint, check_fit


def rate(fn, n: int) -> float:
    t0 = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - t0)


def main() -> None:
    request = ResourceList.parse("cpu=3500m,memory=12Gi,ephemeral-storage=10Gi,nvidia.com/gpu=2")
    frees = [ResourceList.parse(f"cpu={c},memory=64Gi,ephemeral-storage=100Gi,nvidia.com/gpu={g},pods=100")
             for c, g in ((4, 8), (2, 8), (16, 1), (32, 8))]
    nodes = [FastFit(f"node-{i}", f) for i, f in enumerate(frees)]
    prepared = FastFit.prepare(request)
    footprint = PodFootprint(request, ResourceList())

    def fast(n: int) -> None:
        k = len(nodes)
        for i in range(n):
            nodes[i % k].fits(prepared)

    def full(n: int) -> None:
        k = len(frees)
        for i in range(n):
            check_fit("n", footprint, frees[i % k])

    left, right = ResourceList.parse("cpu=1,memory=1G"), ResourceList.parse("cpu=2,memory=2G,nvidia.com/gpu=2")

    def compare(n: int) -> None:
        for _ in range(n):
            left.less_equal(right, "infinity")

    def nine(n: int) -> None:
        for _ in range(n):
            compare_all(left, right, "zero")

    print(f"fit (FastFit, precomputed):     {rate(fast, 1_000_000):>12,.0f} checks/s")
    print(f"fit (ResourceList + messages):  {rate(full, 50_000):>12,.0f} checks/s")
    print(f"less_equal (3 dims):            {rate(compare, 200_000):>12,.0f} comparisons/s")
    print(f"all nine comparisons:           {rate(nine, 50_000):>12,.0f} sets/s")


if __name__ == "__main__":
    main()
