"""NamespaceLifecycle on the write path: what a namespaced create pays to learn that its namespace exists and is
not being deleted.

    .venv/bin/python benchmarks/bench_admission.py [--calls 20000]

Prints the µs of one admission check answered by the server's namespace cache, beside what a read of the
namespace from the store (the alternative: one SQL read per create) costs, on a SQLite file; medians of 5 runs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import timeit
import warnings
from pathlib import Path

from dralloc.server import create_app
from dralloc.server.http.routing import target
from dralloc.store import SQLiteStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = create_app(SQLiteStore(str(Path(tmp) / "db.sqlite"))).api
        claims = target(["apis", "resource.k8s.io", "v1", "namespaces", "default", "resourceclaims"])
        body = {"metadata": {"name": "c"}}
        cached, read = [], []
        for _ in range(5):
            cached.append(timeit.timeit(lambda: api.namespaces.admit_create(claims, body), number=n) / n * 1e6)
            read.append(timeit.timeit(lambda: api.store.get("namespaces", "", "default"), number=n) / n * 1e6)
        api.store.close()
    print(f"namespace admission: {statistics.median(cached):.2f} µs per create from the cache; "
          f"a store read of the namespace would be {statistics.median(read):.1f} µs")


if __name__ == "__main__":
    main()
