"""Service account tokens (server/auth/tokens.py): what authenticating a request's bearer token costs, a static
token beside a service account token (ES256 verification and the store reads of the account and, when bound,
the pod), and what issuing one costs.

    .venv/bin/python benchmarks/bench_tokens.py [--calls 2000]

Prints the µs per call (the median of 5 runs), on an in-memory store.
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
import warnings

from dralloc.server import create_app
from dralloc.server.auth import tokens
from dralloc.server.auth.users import User


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    n = parser.parse_args().calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = create_app(tokens={"admin-token": User("admin", "", ("system:masters",))}).api
    api.store.create("pods", "default", "p", lambda _old, rv: {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u-p",
                                                        "resourceVersion": rv},
        "spec": {"serviceAccountName": "default", "containers": []}})
    account = api.store.get("serviceaccounts", "default", "default")
    pod = api.store.get("pods", "default", "p")
    key = api.service_account_key
    now = int(time.time())
    plain = key.sign(tokens.claims(account, tokens.API_AUDIENCES, 3600, now))
    bound = key.sign(tokens.claims(account, tokens.API_AUDIENCES, 3600, now, pod=pod))
    cases = {
        "static token": lambda: api.token_user("admin-token"),
        "service account token": lambda: tokens.authenticate(key, api.store, plain),
        "pod-bound token": lambda: tokens.authenticate(key, api.store, bound),
        "issue (claims + sign)": lambda: key.sign(tokens.claims(account, tokens.API_AUDIENCES, 3600, now)),
    }
    for label, call in cases.items():
        times = timeit.repeat(call, number=n, repeat=5)
        print(f"{label:24} {statistics.median(times) / n * 1e6:8.1f} µs")


if __name__ == "__main__":
    main()
