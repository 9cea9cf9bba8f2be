"""``--fake-kubelet``: bound pods are marked Running and Ready, as a kubelet would once their containers
started. Nothing is run and no DRA driver is called (claims are not prepared)."""

from __future__ import annotations

from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.writes import Writer

Obj = dict[str, Any]


def run_bound_pods(writer: Writer, snap: Snapshot) -> None:
    for pod in snap.pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or meta.get("deletionTimestamp") \
                or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
            continue
        writer.update("pods", meta.get("namespace") or "default", meta.get("name") or "", _running, uid=meta.get("uid"))


def _running(pod: Obj) -> Obj | None:
    spec = pod.get("spec") or {}
    status = pod.setdefault("status", {})
    if not spec.get("nodeName") or status.get("phase") not in (None, "Pending"):
        return None
    stamp = now()
    kept = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "PodScheduled"]
    status["phase"] = "Running"
    status["startTime"] = stamp
    status["conditions"] = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
                            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")] + kept
    status["containerStatuses"] = [
        {"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": True, "started": True,
         "restartCount": 0, "state": {"running": {"startedAt": stamp}}}
        for c in spec.get("containers") or [] if isinstance(c, dict)]
    return pod
