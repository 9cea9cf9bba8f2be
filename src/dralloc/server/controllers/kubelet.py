"""``--fake-kubelet``: bound pods are marked Running and Ready, as a kubelet would once their containers
started. Nothing is run and no DRA driver is called (claims are not prepared)."""

from __future__ import annotations

import functools
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer
from dralloc.validation import ips

Obj = dict[str, Any]


def run_bound_pods(writer: Writer, snap: Snapshot) -> None:
    for pod in snap.pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or meta.get("deletionTimestamp") \
                or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
            continue
        host_ip = node_host_ip(snap.mirror.get("nodes", ("", spec["nodeName"])))
        writer.update("pods", meta.get("namespace") or "default", meta.get("name") or "",
                      functools.partial(_running, host_ip=host_ip), uid=meta.get("uid"))


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


def _running(pod: Obj, host_ip: str = "") -> Obj | None:
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
    status["startTime"] = stamp
    status["conditions"] = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
                            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")] + kept
    status["containerStatuses"] = [
        {"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": True, "started": True,
         "restartCount": 0, "state": {"running": {"startedAt": stamp}}}
        for c in spec.get("containers") or [] if isinstance(c, dict)]
    return pod
