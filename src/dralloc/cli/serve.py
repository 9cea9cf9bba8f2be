"""``dralloc serve``: the resource.k8s.io API server, over HTTPS, on SQLite.

    dralloc serve [--data-dir DIR] [--port 6443] [--address 127.0.0.1] [--advertise-address ADDR]
                  [--db PATH|:memory:|postgresql://...] [--token-file F] [--authz-file F] [--anonymous]
                  [--tls-cert F --tls-key F | --insecure-http] [--nodes-from FILE]
                  [--no-scheduler] [--fake-kubelet] [--provision-volumes] [--feature-gates A=true,...]

The data directory (default ``$XDG_DATA_HOME/dralloc``, i.e. ``~/.local/share/dralloc``) holds the database,
a self-signed CA and serving certificate and the service account token signing key (made on first start,
reused after), the admin token and the address served at; ``dralloc kubeconfig`` turns them into a
kubeconfig. ``--token-file`` replaces the admin token
with kube-apiserver's static token file; ``--anonymous`` also accepts requests without a token.
``--insecure-http`` serves plain HTTP on loopback only.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path
from typing import Any

from dralloc.errors import InputError


def register(subparsers: Any) -> None:
    from dralloc.server.datadir import default_data_dir

    p = subparsers.add_parser("serve", help="serve resource.k8s.io over HTTPS for kubectl and client libraries",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", help=f"database, certificates and tokens (default: {default_data_dir()})")
    p.add_argument("--db", help="SQLite file, :memory:, or postgresql://... to share one database between "
                                "replicas (default: dralloc.db in the data directory)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--advertise-address", help="address clients use to reach the server (kubeconfig, certificate)")
    p.add_argument("--port", type=int, default=6443)
    p.add_argument("--token-file", help="static token file: token,user,uid[,\"group1,group2\"] per line")
    p.add_argument("--authz-file", help="YAML allow list: user or group:<name> → [{verbs, resources}]")
    p.add_argument("--anonymous", action="store_true",
                   help="accept requests without a token (alone: no token is needed at all)")
    p.add_argument("--tls-cert", help="serve with this certificate (PEM) instead of the generated one")
    p.add_argument("--tls-key", help="private key of --tls-cert (PEM)")
    p.add_argument("--insecure-http", action="store_true",
                   help="plain HTTP, loopback only (kubectl then sends no token: use with --anonymous)")
    p.add_argument("--header-timeout", type=float, default=32.0,
                   help="seconds a client has to send a request's headers (default 32)")
    p.add_argument("--idle-timeout", type=float, default=90.0,
                   help="seconds an idle keep-alive connection stays open (default 90)")
    p.add_argument("--max-connections", type=int, default=4096,
                   help="open connections beyond which requests other than health checks get 429 (default 4096)")
    p.add_argument("--nodes-from", help="create the Nodes of this manifest file or directory on start (those not "
                                        "stored yet); nodes are just objects, nothing runs their pods")
    p.add_argument("--no-scheduler", action="store_true",
                   help="do not schedule pods (leave them to an external kube-scheduler); the resourceclaim and "
                        "device taint eviction controllers still run")
    p.add_argument("--fake-kubelet", action="store_true",
                   help="report nodes Ready, mark bound pods Running and Ready, and let terminating pods go at once "
                        "(nothing runs; claims are not prepared)")
    p.add_argument("--provision-volumes", action="store_true",
                   help="act as every StorageClass's external provisioner: a claim to provision gets a volume "
                        "pvc-<uid> made for it (also with --fake-kubelet; nothing is created outside the store)")
    p.add_argument("--feature-gates", default="", metavar="A=true,B=false",
                   help="feature gates over 1.36's defaults, for the API served and its scheduler as kube-apiserver "
                        "and kube-scheduler take them (GenericWorkload=true serves scheduling.k8s.io/v1alpha2 "
                        "Workloads and PodGroups; GangScheduling=true schedules a PodGroup's pods all or none)")
    p.add_argument("--service-cluster-ip-range", default="10.96.0.0/12", metavar="CIDR",
                   help="the range Services' cluster IPs are given from, the lowest free address first (default "
                        "10.96.0.0/12; its first address is the default/kubernetes Service's)")
    p.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    p.set_defaults(func=run)


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _url(scheme: str, host: str, port: int) -> str:
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _root_ca(path: str | Path | None) -> str:
    """What every namespace's kube-root-ca.crt publishes: the generated CA, or the certificate (chain) given
    with --tls-cert; nothing over plain HTTP."""
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the certificate {path}: {exc}") from None


def run(args: Any) -> int:
    from dralloc.scheduler.features import FeatureGates
    from dralloc.server import create_app
    from dralloc.server.auth.users import Authorizer, User, load_tokens
    from dralloc.server.datadir import DataDir
    from dralloc.server.http.serving import Limits, serve
    from dralloc.store import open_store

    gates = FeatureGates.parse(args.feature_gates)  # (refused as dralloc simulate refuses it: exit 2)
    if bool(args.tls_cert) != bool(args.tls_key):
        raise InputError("--tls-cert and --tls-key go together")
    if args.insecure_http and args.tls_cert:
        raise InputError("--insecure-http and --tls-cert exclude each other")
    if args.insecure_http and not _is_loopback(args.address):
        raise InputError(f"--insecure-http serves on loopback only, not on {args.address}")
    data = DataDir(args.data_dir)
    try:
        data.create()
    except OSError as exc:
        raise InputError(f"cannot use the data directory {data.path}: {exc}") from None
    db = args.db or str(data.db)
    postgres = db.startswith(("postgresql://", "postgres://"))
    if db != ":memory:" and not postgres:
        Path(db).parent.mkdir(parents=True, exist_ok=True)

    token_note = ""
    try:
        if args.token_file:
            tokens = load_tokens(args.token_file)
        elif args.anonymous:
            tokens = None
        else:
            tokens = {data.admin_token(create=True) or "": User("admin", "", ("system:masters",))}
            token_note = f"bearer token (user admin) in {data.token_file}"
        authorizer = Authorizer.from_file(args.authz_file) if args.authz_file else None
    except (OSError, ValueError) as exc:
        raise InputError(str(exc)) from None

    certfile, keyfile, ca_file = args.tls_cert, args.tls_key, None
    if not args.insecure_http and not args.tls_cert:
        from dralloc.server.auth.certs import default_names, ensure_serving_cert

        try:
            files = ensure_serving_cert(data.pki, default_names(args.advertise_address, args.address))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot make the serving certificate in {data.pki}: {exc}") from None
        certfile, keyfile, ca_file = str(files.cert), str(files.key), files.ca_cert
    url = _url("http" if args.insecure_http else "https", args.advertise_address or args.address, args.port)

    from dralloc.server.auth.tokens import ServiceAccountKey

    sa_key_path = data.pki / "sa.key"
    try:
        sa_key = ServiceAccountKey.load_or_create(sa_key_path)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot use the service account key {sa_key_path}: {exc}") from None

    try:
        store = open_store(db)
    except Exception as exc:  # noqa: BLE001 - a database that cannot be opened is bad input, not a crash
        raise InputError(f"cannot open the store {db!r}: {exc}") from None
    from dralloc.server.registry.service_network import ServiceNetwork, parse_cidr
    from dralloc.server.registry.services import endpoint_address

    try:
        service_network = ServiceNetwork(parse_cidr(args.service_cluster_ip_range))
    except ValueError as exc:
        raise InputError(f"--service-cluster-ip-range: {exc}") from None

    app = create_app(store, tokens=tokens, authorizer=authorizer, anonymous=args.anonymous, secure_port=args.port,
                     endpoint_address=endpoint_address(args.advertise_address, args.address),
                     service_account_key=sa_key, feature_gates=gates.enabled_names(),
                     service_network=service_network)
    from dralloc.server.controllers import ControllerManager, Options

    app.api.controllers = ControllerManager(store, Options(scheduler=not args.no_scheduler,
                                                           fake_kubelet=args.fake_kubelet,
                                                           provision_volumes=args.provision_volumes,
                                                           root_ca=_root_ca(ca_file or certfile),
                                                           feature_gates=gates))
    if args.nodes_from:
        from dralloc.server.nodes_from import seed_nodes

        try:
            created = seed_nodes(app.api, args.nodes_from)
        except OSError as exc:
            raise InputError(f"cannot read --nodes-from: {exc}") from None
        print(f"--nodes-from: {created} node(s) created", file=sys.stderr)
    data.record_server(url, ca_file)
    admin = data.admin_token(create=False) if not args.token_file else None
    written = data.write_kubeconfig(url, admin, ca_file) if (admin or args.anonymous) else None
    shown = db.split("@")[-1] if postgres else db  # never print a password
    print(f"dralloc serving resource.k8s.io at {url} (store: {shown})", file=sys.stderr)
    if tokens is None:
        print("warning: --anonymous without --token-file: every request is accepted", file=sys.stderr)
    if args.insecure_http:
        print("warning: --insecure-http: no TLS; kubectl sends no token over plain HTTP", file=sys.stderr)
    if token_note:
        print(token_note, file=sys.stderr)
    dir_flag = f" --data-dir {data.path}" if args.data_dir else ""
    if written is not None:
        print(f"point kubectl at it:  kubectl --kubeconfig {written} ...  (or export KUBECONFIG={written})",
              file=sys.stderr)
    else:
        print(f"point kubectl at it:  dralloc kubeconfig{dir_flag} -o ~/.kube/dralloc.yaml && "
              f"export KUBECONFIG=~/.kube/dralloc.yaml", file=sys.stderr)
    sys.stderr.flush()
    limits = Limits(header_timeout=args.header_timeout, idle_timeout=args.idle_timeout,
                    max_connections=args.max_connections)
    serve(app, host=args.address, port=args.port, limits=limits, log_level=args.log_level,
          certfile=certfile, keyfile=keyfile)
    return 0
