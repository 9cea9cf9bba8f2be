"""``dralloc kubeconfig``: write a kubeconfig that points kubectl at ``dralloc serve``.

    dralloc kubeconfig [--data-dir DIR] [-o FILE]
                       [--server URL] [--token T | --no-token] [--certificate-authority F | --insecure-skip-tls-verify]

With no other flag it describes the server of that data directory: the address it serves at, its CA
certificate (embedded) and its admin token. The other flags override each part.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from dralloc.errors import InputError
from dralloc.server.datadir import DataDir, default_data_dir, kubeconfig

__all__ = ["kubeconfig", "register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("kubeconfig", help="print or write a kubeconfig for dralloc serve",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", help=f"the server's data directory (default: {default_data_dir()})")
    p.add_argument("--server", help="server URL (default: the address the server of --data-dir serves at)")
    p.add_argument("--token", help="bearer token (default: the admin token in the data directory)")
    p.add_argument("--no-token", action="store_true", help="no token (a server started with --anonymous)")
    p.add_argument("--certificate-authority", help="PEM file of the CA that signed the server's certificate "
                                                   "(default: the data directory's CA)")
    p.add_argument("--insecure-skip-tls-verify", action="store_true")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    data = DataDir(args.data_dir)
    record = data.recorded_server() or {}
    server = args.server or record.get("server")
    if not server:
        raise InputError(f"no server has run with the data directory {data.path}: start `dralloc serve` or "
                         f"give --server")
    token = args.token
    if token is None and not args.no_token:
        token = data.admin_token(create=False)
    ca_path = args.certificate_authority or record.get("certificateAuthority")
    if ca_path is None and data.ca_cert.exists():
        ca_path = str(data.ca_cert)
    ca_data = None
    if ca_path and not args.insecure_skip_tls_verify:
        try:
            ca_data = Path(ca_path).read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read the CA certificate: {exc}") from None
    text = yaml.safe_dump(kubeconfig(server, token, args.insecure_skip_tls_verify, ca_data), sort_keys=False)
    if args.output:
        path = Path(args.output).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
    else:
        sys.stdout.write(text)
    return 0
