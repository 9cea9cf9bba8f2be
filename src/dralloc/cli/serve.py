"""``dralloc serve``: the resource.k8s.io API server on SQLite.

    dralloc serve [--db PATH|:memory:] [--address 127.0.0.1] [--port 6443] [--token-file F] [--authz-file F]
                  [--anonymous] [--tls-cert F --tls-key F]

Requests need a bearer token. ``--token-file`` names kube-apiserver's static token file; without it the server
keeps one admin token in ``$XDG_DATA_HOME/dralloc/token`` (created on first start, readable by its owner only),
which ``dralloc kubeconfig`` picks up. Anonymous access needs ``--anonymous``. The database defaults to
``$XDG_DATA_HOME/dralloc/dralloc.db`` (``~/.local/share/dralloc/dralloc.db``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from dralloc.errors import InputError


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dralloc"


def default_db() -> Path:
    return data_dir() / "dralloc.db"


def default_token_path() -> Path:
    return data_dir() / "token"


def default_token(create: bool) -> str | None:
    """The admin token of a server started without --token-file (made on first use, mode 0600)."""
    path = default_token_path()
    try:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
    except OSError:
        pass
    if not create:
        return None
    import secrets

    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="serve resource.k8s.io over HTTP for kubectl and client libraries",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--db", help=f"SQLite file, :memory:, or postgresql://... to share one database between "
                                f"replicas (default: {default_db()})")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=6443)
    p.add_argument("--token-file", help="static token file: token,user,uid[,\"group1,group2\"] per line")
    p.add_argument("--authz-file", help="YAML allow list: user or group:<name> → [{verbs, resources}]")
    p.add_argument("--anonymous", action="store_true",
                   help="accept requests without a token (alone: no token is needed at all)")
    p.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", help="private key of --tls-cert (PEM)")
    p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    p.set_defaults(func=run)


def run(args: Any) -> int:
    import uvicorn

    from dralloc.server import create_app
    from dralloc.server.auth import Authorizer, load_tokens
    from dralloc.store import open_store

    if bool(args.tls_cert) != bool(args.tls_key):
        raise InputError("--tls-cert and --tls-key go together")
    db = args.db or str(default_db())
    postgres = db.startswith(("postgresql://", "postgres://"))
    if db != ":memory:" and not postgres:
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    from dralloc.server.auth import User

    token_note = ""
    try:
        if args.token_file:
            tokens = load_tokens(args.token_file)
        elif args.anonymous:
            tokens = None
        else:
            tokens = {default_token(create=True) or "": User("admin", "", ("system:masters",))}
            token_note = f"bearer token (user admin) in {default_token_path()}"
        authorizer = Authorizer.from_file(args.authz_file) if args.authz_file else None
    except (OSError, ValueError) as exc:
        raise InputError(str(exc)) from None
    try:
        store = open_store(db)
    except Exception as exc:  # noqa: BLE001 - a database that cannot be opened is bad input, not a crash
        raise InputError(f"cannot open the store {db!r}: {exc}") from None
    app = create_app(store, tokens=tokens, authorizer=authorizer, anonymous=args.anonymous)
    scheme = "https" if args.tls_cert else "http"
    url = f"{scheme}://{args.address}:{args.port}"
    shown = db.split("@")[-1] if postgres else db  # never print a password
    print(f"dralloc serving resource.k8s.io at {url} (store: {shown})", file=sys.stderr)
    if tokens is None:
        print("warning: --anonymous without --token-file: every request is accepted", file=sys.stderr)
    if token_note:
        print(token_note, file=sys.stderr)
    insecure = " --insecure-skip-tls-verify" if args.tls_cert else ""
    print(f"point kubectl at it:  dralloc kubeconfig --server {url}{insecure} -o ~/.kube/dralloc.yaml && "
          f"export KUBECONFIG=~/.kube/dralloc.yaml", file=sys.stderr)
    sys.stderr.flush()
    uvicorn.run(app, host=args.address, port=args.port, log_level=args.log_level, access_log=False,
                ssl_certfile=args.tls_cert, ssl_keyfile=args.tls_key)
    return 0
