"""core/v1 Services, read-only: the ``default/kubernetes`` Service kube-apiserver keeps, so that ``kubectl
cluster-info``, ``kubectl get svc -A`` and ``kubectl get all`` see what a cluster shows.

kube-apiserver's kubernetes-service controller creates ``default/kubernetes`` once the server is ready (and
again whenever it is missing), and since 1.17 never rewrites one that exists: a ClusterIP Service labelled
``provider=kubernetes, component=apiserver`` whose port ``https`` 443/TCP targets the apiserver's secure port,
with the first address of the service range as its cluster IP (kube-apiserver's default range is
10.0.0.0/24) and no selector. The object below is that create after the Service defaults and the registry's
IP allocation (``clusterIPs``, ``ipFamilies``), with the ``managedFields`` entry of the ``kube-apiserver``
manager (the fields it sent, defaults included; the allocated ones and status are nobody's).

dralloc runs no Service network: there is no IP allocator, kube-proxy nor Endpoints controller, so Services
are served for reading only (get, list, watch); a write answers 405 MethodNotAllowed, and discovery lists
only the verbs served.
"""

from __future__ import annotations

import uuid
from typing import Any

from dralloc.server.apply import record_update
from dralloc.server.clock import now
from dralloc.store import Conflict, NotFound, SQLStore

KUBERNETES_SERVICE = "kubernetes"
KUBERNETES_NAMESPACE = "default"
SERVICE_IP = "10.0.0.1"  # the first address of kube-apiserver's default --service-cluster-ip-range, 10.0.0.0/24
SERVICE_PORT = 443  # the Service's port; its targetPort is the port the server listens on
MANAGER = "kube-apiserver"


def kubernetes_service(target_port: int, created: str) -> dict[str, Any]:
    """``default/kubernetes`` as kube-apiserver stores it, made at ``created``, before the store gives it its
    uid and version."""
    svc: dict[str, Any] = {
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": KUBERNETES_SERVICE, "namespace": KUBERNETES_NAMESPACE, "creationTimestamp": created,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": SERVICE_PORT, "targetPort": target_port}],
                 "clusterIP": SERVICE_IP, "type": "ClusterIP", "sessionAffinity": "None",
                 "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
    }
    record_update(None, svc, MANAGER, "v1", time=created)  # what the controller's create sent, defaulted
    spec = svc["spec"]
    spec["clusterIPs"] = [SERVICE_IP]  # the registry's allocation, after the field manager ran
    spec["ipFamilies"] = ["IPv4"]
    svc["status"] = {"loadBalancer": {}}
    return svc


def ensure_kubernetes_service(store: SQLStore, target_port: int) -> None:
    """Create ``default/kubernetes`` when it is not stored (an existing one is left as it is, as upstream)."""
    try:
        store.get("services", KUBERNETES_NAMESPACE, KUBERNETES_SERVICE)
        return
    except NotFound:
        pass
    svc = kubernetes_service(target_port, now())

    def build(_old: Any, rv: str) -> dict[str, Any]:
        meta = {**svc["metadata"], "uid": str(uuid.uuid4()), "resourceVersion": rv}
        return {**svc, "metadata": meta}

    try:
        store.create("services", KUBERNETES_NAMESPACE, KUBERNETES_SERVICE, build)
    except Conflict:  # another replica made it meanwhile
        pass


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
