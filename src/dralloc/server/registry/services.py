"""The ``default/kubernetes`` Service kube-apiserver keeps, so that ``kubectl cluster-info``, ``kubectl get svc
-A`` and ``kubectl get all`` see what a cluster shows; its EndpointSlice (discovery.k8s.io/v1), which ``kubectl
describe service kubernetes`` lists, and Endpoints; and the columns kube-apiserver prints for these kinds.

kube-apiserver's kubernetes-service controller creates ``default/kubernetes`` once the server is ready (and
again whenever it is missing), and since 1.17 never rewrites one that exists: a ClusterIP Service labelled
``provider=kubernetes, component=apiserver`` whose port ``https`` 443/TCP targets the apiserver's secure port,
with the first address of the service range as its cluster IP (``service_network``: 10.96.0.0/12 unless
``--service-cluster-ip-range`` says otherwise) and no selector. The object below is that create after the
Service defaults and the registry's IP allocation (``clusterIPs``, ``ipFamilies``), with the ``managedFields``
entry of the ``kube-apiserver`` manager (the fields it sent, defaults included; the allocated ones and status
are nobody's).

kube-apiserver's endpoint reconciler keeps the EndpointSlice ``default/kubernetes`` (labelled with the
service name) pointing at the apiserver: one IPv4 endpoint, ready, at the address the server advertises, with
the port ``https`` on the secure port; unlike the Service it is rewritten when that changes. It writes the
same in the core/v1 Endpoints ``default/kubernetes`` (labelled for the mirroring controller to skip), a
resource every request of which is warned about since 1.33.

The server makes these objects when it starts. Other Services are written by clients (``service_strategy``).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from dralloc.server.apply.managed_fields import record_update
from dralloc.server.clock import now
from dralloc.server.registry.service_network import network_of
from dralloc.server.uids import new_uid
from dralloc.store import Conflict, NotFound, SQLStore

KUBERNETES_SERVICE = "kubernetes"
KUBERNETES_NAMESPACE = "default"
SERVICE_PORT = 443  # the Service's port; its targetPort is the port the server listens on
MANAGER = "kube-apiserver"


def kubernetes_service(target_port: int, created: str, service_ip: str) -> dict[str, Any]:
    """``default/kubernetes`` as kube-apiserver stores it, made at ``created`` with the range's first address
    ``service_ip``, before the store gives it its uid and version."""
    svc: dict[str, Any] = {
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": KUBERNETES_SERVICE, "namespace": KUBERNETES_NAMESPACE, "creationTimestamp": created,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": SERVICE_PORT, "targetPort": target_port}],
                 "clusterIP": service_ip, "type": "ClusterIP", "sessionAffinity": "None",
                 "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
    }
    record_update(None, svc, MANAGER, "v1", time=created)  # what the controller's create sent, defaulted
    spec = svc["spec"]
    spec["clusterIPs"] = [service_ip]  # the registry's allocation, after the field manager ran
    spec["ipFamilies"] = ["IPv6" if ":" in service_ip else "IPv4"]
    svc["status"] = {"loadBalancer": {}}
    return svc


def ensure_kubernetes_service(store: SQLStore, target_port: int) -> None:
    """Create ``default/kubernetes`` when it is not stored (an existing one is left as it is, as upstream)."""
    _ensure(store, "services", kubernetes_service(target_port, now(), network_of(store).first_ip), ())


def endpoint_address(advertised: str | None, listening: str) -> str:
    """The IPv4 address the kubernetes EndpointSlice names: the advertised address if it is one, else the
    listening address unless it is a wildcard, else loopback."""
    for candidate in (advertised, listening):
        try:
            ip = ipaddress.ip_address(candidate or "")
        except ValueError:
            continue
        if ip.version == 4 and not ip.is_unspecified:
            return str(ip)
    return "127.0.0.1"


def kubernetes_endpoint_slice(address: str, port: int, created: str) -> dict[str, Any]:
    """The EndpointSlice kube-apiserver's reconciler writes for ``default/kubernetes``."""
    eps: dict[str, Any] = {
        "kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
        "metadata": {"name": KUBERNETES_SERVICE, "namespace": KUBERNETES_NAMESPACE, "creationTimestamp": created,
                     "labels": {"kubernetes.io/service-name": KUBERNETES_SERVICE}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    }
    record_update(None, eps, MANAGER, "discovery.k8s.io/v1", time=created)
    return eps


def kubernetes_endpoints(address: str, port: int, created: str) -> dict[str, Any]:
    """The (deprecated) core/v1 Endpoints the reconciler writes beside the slice, marked for the mirroring
    controller to skip."""
    ep: dict[str, Any] = {
        "kind": "Endpoints", "apiVersion": "v1",
        "metadata": {"name": KUBERNETES_SERVICE, "namespace": KUBERNETES_NAMESPACE, "creationTimestamp": created,
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": address}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}],
    }
    record_update(None, ep, MANAGER, "v1", time=created)
    return ep


def ensure_kubernetes_endpoints(store: SQLStore, address: str, port: int) -> None:
    """Create ``default/kubernetes``'s Endpoints and EndpointSlice, or point them at ``address:port`` again."""
    created = now()
    for resource, wanted, fields in (("endpoints", kubernetes_endpoints(address, port, created), ("subsets",)),
                                     ("endpointslices", kubernetes_endpoint_slice(address, port, created),
                                      ("endpoints", "ports"))):
        _ensure(store, resource, wanted, fields)


def _ensure(store: SQLStore, resource: str, wanted: dict[str, Any], fields: tuple[str, ...]) -> None:
    """Store ``wanted`` (with a uid), or set ``fields`` of the stored one to ``wanted``'s where they differ
    (none: a stored one is left as it is)."""
    def build(_old: Any, rv: str) -> dict[str, Any]:
        meta = {**wanted["metadata"], "uid": new_uid(), "resourceVersion": rv}
        return {**wanted, "metadata": meta}

    def repoint(old: dict[str, Any], rv: str) -> dict[str, Any]:
        if all(old.get(name) == wanted[name] for name in fields):
            return old
        return {**old, **{name: wanted[name] for name in fields}, "metadata": {**old["metadata"],
                                                                               "resourceVersion": rv}}

    try:
        store.update(resource, KUBERNETES_NAMESPACE, KUBERNETES_SERVICE, repoint)
        return
    except NotFound:
        pass
    try:
        store.create(resource, KUBERNETES_NAMESPACE, KUBERNETES_SERVICE, build)
    except Conflict:  # another replica made it meanwhile
        pass


def endpoints(ep: dict[str, Any]) -> str:
    """ENDPOINTS of core/v1 Endpoints: ``ip:port`` of every address and port (an address alone without
    ports), three at most; ``<none>`` without subsets."""
    subsets = [s for s in ep.get("subsets") or [] if isinstance(s, dict)]
    if not subsets:
        return "<none>"
    shown = []
    for subset in subsets:
        ips = [str(a.get("ip") or "") for a in subset.get("addresses") or [] if isinstance(a, dict)]
        ports = [p for p in subset.get("ports") or [] if isinstance(p, dict)]
        if not ports:
            shown += ips
        for port in ports:
            shown += [f"[{ip}]:{port.get('port')}" if ":" in ip else f"{ip}:{port.get('port')}" for ip in ips]
    text = ",".join(shown[:3])
    return f"{text} + {len(shown) - 3} more..." if len(shown) > 3 else text


def _listed(items: list[str]) -> str:
    """kubectl's list of at most three (``a,b,c + 2 more...``); ``<unset>`` when empty."""
    shown = ",".join(items[:3])
    if len(items) > 3:
        return f"{shown} + {len(items) - 3} more..."
    return shown or "<unset>"


def endpoint_slice_ports(eps: dict[str, Any]) -> str:
    """PORTS: each port's number, else its name, else ``*``."""
    return _listed([str(p.get("port") if p.get("port") is not None else p.get("name") or "*")
                    for p in eps.get("ports") or [] if isinstance(p, dict)])


def endpoint_slice_endpoints(eps: dict[str, Any]) -> str:
    """ENDPOINTS: every endpoint's addresses."""
    return _listed([str(a) for e in eps.get("endpoints") or [] if isinstance(e, dict)
                    for a in e.get("addresses") or []])


def external_ip(svc: dict[str, Any]) -> str:
    """kubectl's EXTERNAL-IP of a Service, by type (the wide form kube-apiserver's table uses)."""
    spec = svc.get("spec") or {}
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    kind = spec.get("type") or ""
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        found = [str(i.get("ip") or i.get("hostname") or "") for i in ingress if isinstance(i, dict)]
        found = [f for f in found if f] + external
        return ",".join(found) if found else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def cluster_ip(svc: dict[str, Any]) -> str:
    ips = (svc.get("spec") or {}).get("clusterIPs") or []
    return str(ips[0]) if ips else "<none>"


def ports(svc: dict[str, Any]) -> str:
    """PORT(S): ``port/protocol`` (``port:nodePort/protocol`` with a node port), comma-joined."""
    shown = []
    for port in (svc.get("spec") or {}).get("ports") or []:
        if not isinstance(port, dict):
            continue
        node_port = port.get("nodePort") or 0
        number = f"{port.get('port')}:{node_port}" if node_port else f"{port.get('port')}"
        shown.append(f"{number}/{port.get('protocol') or ''}")
    return ",".join(shown) or "<none>"


def selector(svc: dict[str, Any]) -> str:
    """SELECTOR: the selector's labels as ``k=v`` pairs sorted by key, ``<none>`` without any."""
    labels = (svc.get("spec") or {}).get("selector") or {}
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels)) or "<none>"
