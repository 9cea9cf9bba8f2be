"""CEL selector benchmark: compile time (parse, type-check, plan, generate) and evaluations per second on a
pre-converted device. Figures are medians of several rounds, so a busy machine disturbs them less.

    .venv/bin/python benchmarks/bench_cel.py

cel-go (upstream) takes 6–30 µs per device match on this machine kind (research/python-deps.md); the
targets are ≥ 1,000,000 evaluations/s for the driver+model selector and ≥ 10× cel-go on every selector.
"""

from __future__ import annotations

import io
import statistics
import time

from dralloc import load
from dralloc.cel import compile_selector
from dralloc.cel.device import _SELECTORS

SLICE = """
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n
  pool: {name: n, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: a100}
      productName: {string: NVIDIA A100-SXM4-80GB}
      index: {int: 3}
      driverVersion: {version: 535.104.5}
      dra.example.com/numa: {int: 1}
    capacity:
      memory: {value: 80Gi}
"""

SELECTORS = [
    'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"',
    'device.driver == "gpu.example.com"',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("530.0.0"))',
    'device.attributes["gpu.example.com"].productName.startsWith("NVIDIA A100")',
    '"dra.example.com" in device.attributes && device.attributes["dra.example.com"].numa == 1',
    'device.attributes["gpu.example.com"].?missing.orValue("x") == "x"',
    'cel.bind(g, device.attributes["gpu.example.com"], g.model == "a100" && g.index > 2)',
]


def main() -> None:
    (s,) = load(io.StringIO(SLICE))
    device = s.spec.devices[0]
    try:
        from dralloc.cel.decls import environment
    except ImportError:  # an older dralloc without the declarations table
        pass
    else:
        t0 = time.perf_counter()
        environment()
        print(f"declarations table built once per version: {(time.perf_counter() - t0) * 1e3:.1f} ms")
    print(f"{'selector':<92} {'compile µs':>10} {'evals/s':>12} {'µs/eval':>8}")
    for expr in SELECTORS:
        compile_times = []
        for _ in range(21):
            _SELECTORS.clear()
            t0 = time.perf_counter()
            sel = compile_selector(expr)
            compile_times.append(time.perf_counter() - t0)
        compile_us = statistics.median(compile_times) * 1e6
        sel.matches(device, "gpu.example.com")  # converts the device once
        n = 50_000
        rounds = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                sel.matches(device, "gpu.example.com")
            rounds.append(time.perf_counter() - t0)
        dt = statistics.median(rounds)
        print(f"{expr[:92]:<92} {compile_us:>10.1f} {n / dt:>12,.0f} {dt / n * 1e6:>8.2f}")


if __name__ == "__main__":
    main()
