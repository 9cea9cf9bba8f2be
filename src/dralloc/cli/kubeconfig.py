"""``dralloc kubeconfig``: write a kubeconfig that points kubectl at ``dralloc serve``.

    dralloc kubeconfig --server http://127.0.0.1:6443 [--token T] [--insecure-skip-tls-verify] [-o FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("kubeconfig", help="print or write a kubeconfig for dralloc serve",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="http://127.0.0.1:6443")
    p.add_argument("--token", help="bearer token (from the server's --token-file)")
    p.add_argument("--insecure-skip-tls-verify", action="store_true")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=run)


def kubeconfig(server: str, token: str | None = None, insecure: bool = False) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": server}
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {"token": token} if token else {}
    return {"apiVersion": "v1", "kind": "Config", "current-context": "dralloc",
            "clusters": [{"name": "dralloc", "cluster": cluster}],
            "users": [{"name": "dralloc", "user": user}],
            "contexts": [{"name": "dralloc", "context": {"cluster": "dralloc", "user": "dralloc",
                                                         "namespace": "default"}}]}


def run(args: Any) -> int:
    text = yaml.safe_dump(kubeconfig(args.server, args.token, args.insecure_skip_tls_verify), sort_keys=False)
    if args.output:
        path = Path(args.output).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
    else:
        sys.stdout.write(text)
    return 0
