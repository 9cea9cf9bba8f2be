"""The JSON-type check of core/v1 objects (dralloc.api.gotypes), per object, as the API server's writes and
``dralloc validate`` / ``simulate`` / ``plan`` run it on every Pod, Node and other core/v1 object:

    .venv/bin/python benchmarks/bench_core_types.py [--repeat 2000]

Prints the microseconds per object (the best of five rounds of ``--repeat`` checks) of: the check of a
well-typed object (msgspec's shape, the fast path), the same object with one wrong value deep down (the shape
refuses, the walk words Go's error), and, for scale, decoding the object into dralloc's model (the check
included; "-" for a kind the CLI does not read) — for a small
Pod (one container, as ``bench_server.py`` creates), the largest Pod and Node of examples/, and a Secret.
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dralloc.api import codec, gotypes
from dralloc.api.kinds import model_for

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SMALL_POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "bench"}},
             "spec": {"containers": [{"name": "main", "image": "registry.example/app:1.0",
                                      "resources": {"requests": {"cpu": "100m"}}}]}}
SECRET: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque",
          "data": {f"key-{i}": "c2VjcmV0IHZhbHVlIG51bWJlciAx" for i in range(8)}}


def per_call(fn: Callable[[], Any], repeat: int) -> float:
    """Microseconds per call: the best of five rounds."""
    fn()
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, time.perf_counter() - started)
    return best / repeat * 1e6


def deepest_string(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    """The path of the deepest string of ``value`` (where a wrong value costs the walk most)."""
    best = path if isinstance(value, str) else ()
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if path == () and key in ("apiVersion", "kind"):
            continue
        found = deepest_string(item, (*path, key))
        if len(found) > len(best):
            best = found
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    documents = [d.data for path in sorted(EXAMPLES.rglob("*.yaml")) for d in codec.read_documents(path)
                 if isinstance(d.data, dict) and d.data.get("apiVersion") == "v1"]
    objects: dict[str, dict[str, Any]] = {"small Pod": SMALL_POD, "Secret (8 keys)": SECRET}
    for kind in ("Pod", "Node"):
        of_kind = [d for d in documents if d.get("kind") == kind]
        objects[f"largest example {kind}"] = max(of_kind, key=lambda d: len(repr(d)))
    print(f"{'object':24} {'check':>10} {'wrong value':>12} {'decode':>10}   (microseconds per object)")
    for name, data in objects.items():
        assert gotypes.type_problem(data) is None, name
        wrong = copy.deepcopy(data)
        path = deepest_string(wrong)
        parent = wrong
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = True  # (no field that takes a string takes a bool)
        assert gotypes.type_problem(wrong) is not None, name
        checked = per_call(partial(gotypes.type_problem, data), args.repeat)
        walked = per_call(partial(gotypes.type_problem, wrong), args.repeat)
        decoded = per_call(partial(codec.decode, data), args.repeat) if model_for("v1", data["kind"]) else None
        print(f"{name:24} {checked:10.2f} {walked:12.2f} " + ("         -" if decoded is None else f"{decoded:10.2f}"))


if __name__ == "__main__":
    main()
