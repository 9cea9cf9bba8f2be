"""``dralloc kubeconfig``: write a kubeconfig that points kubectl at ``dralloc serve``.

    dralloc kubeconfig --server http://127.0.0.1:6443 [--token T | --no-token] [--insecure-skip-tls-verify] [-o FILE]

Without ``--token`` the token ``dralloc serve`` keeps in its data directory is used, when there is one.
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
    p.add_argument("--token", help="bearer token (default: the one dralloc serve made in its data directory)")
    p.add_argument("--no-token", action="store_true", help="no token (a server started with --anonymous)")
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
    token = args.token
    if token is None and not args.no_token:
        from dralloc.cli.serve import default_token

        token = default_token(create=False)
    text = yaml.safe_dump(kubeconfig(args.server, token, args.insecure_skip_tls_verify), sort_keys=False)
    if args.output:
        path = Path(args.output).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
    else:
        sys.stdout.write(text)
    return 0
