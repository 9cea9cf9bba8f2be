"""Writes of ``pods/{name}/status`` as kube-apiserver's pod status strategy makes them: what the request may
change, what is kept from the stored pod, the v1 decoding of the pod IPs, and the warnings of the response.
The rules themselves are in ``dralloc.validation.pod_status``."""

from __future__ import annotations

from typing import Any

from dralloc.validation.field import FieldError
from dralloc.validation.ips import warnings_for_ip
from dralloc.validation.pod_status import status_update_errors


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def decode_pod_ips(status: dict[str, Any]) -> None:
    """As decoding a v1 PodStatus into kube-apiserver's internal one and back: ``podIP``, when set, wins
    over a ``podIPs`` that does not start with it (older clients set only ``podIP``); then ``podIP`` is
    ``podIPs[0]``. Empty fields are left out, as Go's encoder leaves them out."""
    entries = status.get("podIPs")
    ips = [_obj(e).get("ip") or "" for e in entries] if isinstance(entries, list) else []
    pod_ip = status.get("podIP") or ""
    if pod_ip and (not ips or ips[0] != pod_ip):
        ips = [pod_ip]
    status.pop("podIP", None)
    status.pop("podIPs", None)
    if ips:
        if ips[0]:
            status["podIP"] = ips[0]
        status["podIPs"] = [{"ip": ip} for ip in ips]


def _keep_observed_generations(status: dict[str, Any], old: dict[str, Any]) -> None:
    """A write that clears ``observedGeneration`` (of the status, or of a condition) keeps the stored one
    (for conditions: the old ones of the same type, in order)."""
    if not status.get("observedGeneration") and old.get("observedGeneration"):
        status["observedGeneration"] = old["observedGeneration"]
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return
    previous: dict[Any, list[Any]] = {}
    for c in old.get("conditions") or []:
        if isinstance(c, dict):
            previous.setdefault(c.get("type"), []).append(c.get("observedGeneration"))
    kept = []
    for c in conditions:
        if isinstance(c, dict):
            before = previous.get(c.get("type")) or [None]
            generation = before.pop(0)
            if not c.get("observedGeneration") and generation:
                c = {**c, "observedGeneration": generation}
        kept.append(c)
    status["conditions"] = kept


def prepare(sent: dict[str, Any], meta: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The pod a status write would store: ``sent``'s status and metadata (``meta``: as the update path
    resolved it, with the stored uid, creation time and deletion timestamp), the stored spec and owner
    references, the stored QOS class when the write left it out, and the deletion grace period the request
    sent (an attempt to change it is refused by validation)."""
    old_meta, old_status = _obj(old.get("metadata")), _obj(old.get("status"))
    metadata = dict(meta)
    sent_grace = _obj(sent.get("metadata")).get("deletionGracePeriodSeconds")
    if sent_grace is not None:
        metadata["deletionGracePeriodSeconds"] = sent_grace
    if "ownerReferences" in old_meta:
        metadata["ownerReferences"] = old_meta["ownerReferences"]
    else:
        metadata.pop("ownerReferences", None)
    status = dict(_obj(sent.get("status")))
    decode_pod_ips(status)
    if not status.get("qosClass") and old_status.get("qosClass"):
        status["qosClass"] = old_status["qosClass"]
    _keep_observed_generations(status, old_status)
    merged = {**old, "metadata": metadata, "status": status}
    if not status and "status" not in old:
        merged.pop("status")
    return merged


def errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    return status_update_errors(new, old)


def warnings(pod: dict[str, Any]) -> list[str]:
    """The pod status strategy's warnings: IP addresses in a form other than their standard one."""
    status = _obj(pod.get("status"))
    found = []
    for kind in ("podIPs", "hostIPs"):
        entries = status.get(kind)
        for i, entry in enumerate(entries if isinstance(entries, list) else []):
            ip = _obj(entry).get("ip")
            if isinstance(ip, str):
                found += warnings_for_ip(f"status.{kind}[{i}].ip", ip)
    return found
