"""``--fake-kubelet``: every node reports Ready and holds its node Lease, as its kubelet would, and bound
pods are marked Running and Ready, as a kubelet would once their containers started. Nothing is run and no
DRA driver is called (claims are not prepared)."""

from __future__ import annotations

import functools
import ipaddress
from datetime import UTC, datetime
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.store import Conflict, NotFound
from dralloc.validation import ips

Obj = dict[str, Any]


def run_bound_pods(writer: Writer, snap: Snapshot) -> None:
    in_use: dict[str, set[str]] | None = None  # node → the pod IPs its running pods have
    for pod in snap.pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or meta.get("deletionTimestamp") \
                or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
            continue
        node = snap.mirror.get("nodes", ("", spec["nodeName"]))
        if in_use is None:
            in_use = _pod_ips_in_use(snap)
        host_network = spec.get("hostNetwork") is True  # (such a pod has its node's address)
        pool = spec["nodeName"] if _pod_cidrs(node) else CLUSTER_POOL
        pod_ips = [] if host_network else _free_pod_ips(node, in_use.setdefault(pool, set()))
        writer.update("pods", meta.get("namespace") or "default", meta.get("name") or "",
                      functools.partial(_running, host_ip=node_host_ip(node), pod_ips=pod_ips), uid=meta.get("uid"))


# Nodes without a pod CIDR share this network, as a cluster-wide IPAM plugin gives addresses: a pod still gets
# an IP (Services' endpoints list pods by it).
CLUSTER_POD_CIDR = "10.88.0.0/16"  # (apart from the 10.244.x.0/24 pod CIDRs most clusters give nodes)
CLUSTER_POOL = ""  # the key of its addresses in use


def _pod_ips_in_use(snap: Snapshot) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for pod in snap.pods:
        status = pod.get("status") or {}
        node = (pod.get("spec") or {}).get("nodeName")
        if node and status.get("phase") not in ("Succeeded", "Failed"):
            ips = [str(ip.get("ip")) for ip in status.get("podIPs") or [] if isinstance(ip, dict)]
            used.setdefault(node, set()).update(ips)
            used.setdefault(CLUSTER_POOL, set()).update(ips)
    return used


def _pod_cidrs(node: Obj | None) -> list[str]:
    spec = (node or {}).get("spec") or {}
    return list(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []))


def _free_pod_ips(node: Obj | None, used: set[str]) -> list[str]:
    """An address from each of the node's pod CIDRs, as a host-local IPAM plugin gives them: the lowest one
    not in use, skipping the network's own address and its gateway (from :data:`CLUSTER_POD_CIDR` when the
    node has no pod CIDR, ``used`` then being every pod's)."""
    cidrs = _pod_cidrs(node) or [CLUSTER_POD_CIDR]
    chosen: list[str] = []
    for cidr in cidrs[:2]:
        try:
            network = ipaddress.ip_network(str(cidr), strict=False)
        except ValueError:
            continue
        for offset in range(2, min(network.num_addresses - 1, 1 << 16)):
            address = str(network.network_address + offset)
            if address not in used:
                used.add(address)
                chosen.append(address)
                break
    return chosen


# A kubelet's node conditions when all is well, in its order: (type, status, reason, message)
_HEALTHY = (("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"))


def ready_nodes(writer: Writer, snap: Snapshot) -> None:
    """Each node without its kubelet's conditions gets them: Ready, no pressure (``kubectl get nodes`` shows
    Ready). A condition a client set stays as it set it; nothing heartbeats."""
    for node in snap.mirror.listed("nodes"):
        meta = node.get("metadata") or {}
        name = str(meta.get("name") or "")
        if _missing_conditions(node):
            writer.update("nodes", "", name, _reporting, uid=meta.get("uid"))
        _hold_lease(writer, name, str(meta.get("uid") or ""))


NODE_LEASES = "kube-node-lease"
LEASE_SECONDS = 40  # the kubelet's default node lease duration


def _hold_lease(writer: Writer, node: str, uid: str) -> None:
    """The node's Lease in kube-node-lease, as its kubelet holds it (kubectl describe node shows it; the
    garbage collector removes it with its node). Taken once: nothing renews it."""
    try:
        writer.store.get("leases", NODE_LEASES, node)
        return
    except NotFound:
        pass
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # a MicroTime
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": node, "namespace": NODE_LEASES, "ownerReferences": [
                 {"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid}]},
             "spec": {"holderIdentity": node, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": stamp}}
    try:
        writer.create("leases", NODE_LEASES, lease)
    except Conflict:
        pass  # taken meanwhile


def _missing_conditions(node: Obj) -> list[str]:
    present = {c.get("type") for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict)}
    return [kind for kind, *_ in _HEALTHY if kind not in present]


def _reporting(node: Obj) -> Obj | None:
    missing = _missing_conditions(node)
    if not missing:
        return None
    stamp = now()
    status = node.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    for kind, value, reason, message in _HEALTHY:
        if kind in missing:
            conditions.append({"type": kind, "status": value, "lastHeartbeatTime": stamp,
                               "lastTransitionTime": stamp, "reason": reason, "message": message})
    status["conditions"] = conditions
    return node


def node_host_ip(node: Obj | None) -> str:
    """The address a kubelet reports as its pods' hostIP: the node's first InternalIP, else its first
    ExternalIP ("" when it lists neither), in canonical form (as kubelets write IPs since 1.33). An address
    that is no IP kube-apiserver would take in a pod's status is passed over: a real kubelet's node has
    none, and kube-apiserver would refuse the pod status that reported it."""
    addresses = [a for a in ((node or {}).get("status") or {}).get("addresses") or [] if isinstance(a, dict)]
    for kind in ("InternalIP", "ExternalIP"):
        for address in addresses:
            parsed = ips.parse(address["address"]) if isinstance(address.get("address"), str) else None
            if address.get("type") == kind and parsed is not None and parsed.strict and not parsed.mapped:
                return ips.canonical(parsed)
    return ""


def _running(pod: Obj, host_ip: str = "", pod_ips: list[str] | None = None) -> Obj | None:
    spec = pod.get("spec") or {}
    status = pod.setdefault("status", {})
    if not spec.get("nodeName") or status.get("phase") not in (None, "Pending"):
        return None
    stamp = now()
    kept = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "PodScheduled"]
    status["phase"] = "Running"
    if host_ip:  # as a kubelet: its node's address (kubectl describe pod's Node: name/address), which a pod
        # on the host network also has as its own IP; others would get one from the network plugin
        status["hostIP"], status["hostIPs"] = host_ip, [{"ip": host_ip}]
        if spec.get("hostNetwork") is True:
            status["podIP"], status["podIPs"] = host_ip, [{"ip": host_ip}]
    if pod_ips:  # what the network plugin would give: an address of each of the node's pod CIDRs
        status["podIP"], status["podIPs"] = pod_ips[0], [{"ip": ip} for ip in pod_ips]
    status["startTime"] = stamp
    status["conditions"] = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
                            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")] + kept
    status["containerStatuses"] = [
        {"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": True, "started": True,
         "restartCount": 0, "state": {"running": {"startedAt": stamp}}}
        for c in spec.get("containers") or [] if isinstance(c, dict)]
    return pod
