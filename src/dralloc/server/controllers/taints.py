"""The device taint eviction controller: pods using an allocated device with a ``NoExecute`` taint (from its
ResourceSlice or a DeviceTaintRule) that their claim does not tolerate are deleted, after the condition
DisruptionTarget=True (reason DeletionByDeviceTaintManager) and a ``DeviceTaintManagerEviction`` event, as
upstream's controller does (a graceful delete: the pod terminates for its grace period, see
``termination``). A toleration with ``tolerationSeconds`` delays the eviction to ``timeAdded`` plus
those seconds. Each DeviceTaintRule gets upstream's ``EvictionInProgress`` condition."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dralloc.server.clock import now
from dralloc.server.controllers.claims import pod_needs_claims
from dralloc.server.controllers.events import EventRecorder
from dralloc.server.controllers.snapshot import Snapshot
from dralloc.server.controllers.termination import TerminatingPods
from dralloc.server.controllers.writes import Writer

COMPONENT = "device-taint-eviction"
Obj = dict[str, Any]
DeviceId = tuple[str, str, str]  # driver, pool, device


@dataclass
class Taint:
    key: str
    value: str
    effect: str
    added: float  # seconds since the epoch
    rule_uid: str | None = None


@dataclass
class TaintEviction:
    writer: Writer
    recorder: EventRecorder
    terminating: TerminatingPods  # deletes the pods (graceful) and removes them when their time is over
    evicted: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # rule uid -> pods since start
    next_due: float | None = None  # the earliest delayed eviction (seconds since the epoch)

    def due(self) -> bool:
        """A delayed eviction's time has come."""
        return self.next_due is not None and self.next_due <= datetime.now(UTC).timestamp()

    def cycle(self, snap: Snapshot) -> bool:
        if not snap.allocated_claims and not snap.objects["devicetaintrules"]:
            self.next_due = None
            return False  # nothing to evict, no rule to report on: the slices need not be read
        taints = self._taints(snap)
        pending: dict[str, set[tuple[str, str]]] = defaultdict(set)  # rule uid -> {(namespace, pod uid)}
        self.next_due = None
        evicted_any = False
        by_uid = snap.pods_by_uid()
        clock = datetime.now(UTC).timestamp()
        for claim in snap.allocated_claims:
            status = claim.get("status") or {}
            results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
            due: float | None = None
            rules: set[str] = set()
            for result in results:
                for taint in taints.get((result.get("driver"), result.get("pool"), result.get("device")), ()):
                    when = _eviction_time(taint, result.get("tolerations") or [])
                    if when is None:
                        continue
                    due = when if due is None else min(due, when)
                    if taint.rule_uid:
                        rules.add(taint.rule_uid)
            if due is None:
                continue
            for ref in status.get("reservedFor") or []:
                pod = by_uid.get(str(ref.get("uid"))) if isinstance(ref, dict) else None
                if pod is None or not pod_needs_claims(pod) or (pod.get("metadata") or {}).get("deletionTimestamp"):
                    continue
                if due > clock:
                    self.next_due = due if self.next_due is None else min(self.next_due, due)
                    for r in rules:
                        pending[r].add(((pod["metadata"].get("namespace") or ""), str(pod["metadata"].get("uid"))))
                    continue
                if self._evict(pod):
                    evicted_any = True
                    for r in rules:
                        self.evicted[r] += 1
        for rule in snap.objects["devicetaintrules"]:
            self._rule_status(rule, pending.get(str(rule["metadata"].get("uid")), set()), snap, taints)
        return evicted_any

    def _taints(self, snap: Snapshot) -> dict[DeviceId, list[Taint]]:
        out: dict[DeviceId, list[Taint]] = defaultdict(list)
        newest: dict[tuple[str, str], int] = {}
        for s in snap.objects["resourceslices"]:
            spec = s.get("spec") or {}
            pool = spec.get("pool") or {}
            k = (spec.get("driver") or "", pool.get("name") or "")
            newest[k] = max(newest.get(k, 0), int(pool.get("generation") or 0))
        devices: list[DeviceId] = []
        for s in snap.objects["resourceslices"]:
            spec = s.get("spec") or {}
            pool = spec.get("pool") or {}
            k = (spec.get("driver") or "", pool.get("name") or "")
            if int(pool.get("generation") or 0) != newest[k]:
                continue  # an outdated slice of the pool
            for d in spec.get("devices") or []:
                dev = (k[0], k[1], d.get("name") or "")
                devices.append(dev)
                for t in d.get("taints") or []:
                    if t.get("effect") == "NoExecute":
                        out[dev].append(Taint(t.get("key") or "", t.get("value") or "", "NoExecute",
                                              _seconds(t.get("timeAdded") or s["metadata"].get("creationTimestamp"))))
        for rule in snap.objects["devicetaintrules"]:
            spec = rule.get("spec") or {}
            t = spec.get("taint") or {}
            if t.get("effect") != "NoExecute":
                continue
            sel = snap.cache.typed("devicetaintrules", rule)
            selector = sel.spec.device_selector if sel is not None else None
            taint = Taint(t.get("key") or "", t.get("value") or "", "NoExecute",
                          _seconds(t.get("timeAdded") or rule["metadata"].get("creationTimestamp")),
                          str(rule["metadata"].get("uid")))
            for dev in devices:
                if _selects(selector, *dev):
                    out[dev].append(taint)
        return out

    def _evict(self, pod: Obj) -> bool:
        meta = pod["metadata"]
        namespace, name, uid = meta.get("namespace") or "default", meta.get("name") or "", meta.get("uid")

        def disrupt(current: Obj) -> Obj | None:
            status = current.setdefault("status", {})
            conds = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
            if any(c.get("type") == "DisruptionTarget" and c.get("status") == "True" for c in conds):
                return None
            status["conditions"] = [c for c in conds if c.get("type") != "DisruptionTarget"] + [
                {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": now(),
                 "reason": "DeletionByDeviceTaintManager",
                 "message": "Device Taint manager: deleting due to NoExecute taint"}]
            return current

        self.recorder.record(pod, "Normal", "DeviceTaintManagerEviction", "Marking for deletion", COMPONENT)
        if self.writer.update("pods", namespace, name, disrupt, uid=uid) is None:
            return False
        self.terminating.delete(namespace, name, uid)
        return True

    def _rule_status(self, rule: Obj, pending: set[tuple[str, str]], snap: Snapshot,
                     taints: dict[DeviceId, list[Taint]]) -> None:
        meta = rule["metadata"]
        uid = str(meta.get("uid"))
        effect = ((rule.get("spec") or {}).get("taint") or {}).get("effect") or ""
        message = ""
        status = "False"
        evicted = self.evicted.get(uid, 0)
        if effect == "NoExecute":
            if pending:
                status, reason = "True", "PodsPendingEviction"
                namespaces = len({ns for ns, _ in pending})
                message = ("1 pod needs to be evicted in " if len(pending) == 1
                           else f"{len(pending)} pods need to be evicted in ")
                message += "1 namespace." if namespaces == 1 else f"{namespaces} different namespaces."
            else:
                reason = "Completed" if evicted else "NotStarted"
        elif effect == "None":
            reason = "NoEffect"
            message = self._simulated(rule, snap)
        else:
            reason, message = "OtherEffect", "Eviction only happens for the NoExecute effect."
        if evicted:
            message += (" " if message else "") + ("1 pod " if evicted == 1 else f"{evicted} pods ")
            message += "evicted since starting the controller."
        condition = {"type": "EvictionInProgress", "status": status, "reason": reason, "message": message,
                     "observedGeneration": meta.get("generation") or 1}

        def write(current: Obj) -> Obj | None:
            st = current.setdefault("status", {})
            conds = [c for c in st.get("conditions") or [] if isinstance(c, dict)]
            old = next((c for c in conds if c.get("type") == "EvictionInProgress"), None)
            if old is not None and all(old.get(k) == v for k, v in condition.items()):
                return None
            if effect == "None" and old is not None and old.get("observedGeneration") == condition["observedGeneration"]:
                return None  # upstream computes the None preview once per change of the spec
            st["conditions"] = [c for c in conds if c.get("type") != "EvictionInProgress"] + [
                {**condition, "lastTransitionTime": now()}]
            return current

        self.writer.update("devicetaintrules", "", meta.get("name") or "", write, uid=meta.get("uid"))

    def _simulated(self, rule: Obj, snap: Snapshot) -> str:
        """The None effect's preview: what NoExecute would select and evict."""
        typed = snap.cache.typed("devicetaintrules", rule)
        selector = typed.spec.device_selector if typed is not None else None
        published = 0
        for s in snap.objects["resourceslices"]:
            spec = s.get("spec") or {}
            for d in spec.get("devices") or []:
                if _selects(selector, spec.get("driver") or "", (spec.get("pool") or {}).get("name") or "",
                            d.get("name") or ""):
                    published += 1
        allocated, pods, namespaces = 0, set(), set()
        by_uid = snap.pods_by_uid()
        for claim in snap.allocated_claims:
            status = claim.get("status") or {}
            hit = False
            for r in ((status.get("allocation") or {}).get("devices") or {}).get("results") or []:
                if _selects(selector, r.get("driver") or "", r.get("pool") or "", r.get("device") or ""):
                    allocated += 1
                    taint = (rule.get("spec") or {}).get("taint") or {}
                    probe = Taint(taint.get("key") or "", taint.get("value") or "", "NoExecute", 0.0)
                    hit |= _eviction_time(probe, r.get("tolerations") or []) is not None
            if hit:
                for ref in status.get("reservedFor") or []:
                    pod = by_uid.get(str(ref.get("uid")))
                    if pod is not None and pod_needs_claims(pod):
                        pods.add(str(ref.get("uid")))
                        namespaces.add(pod["metadata"].get("namespace"))

        def n(count: int, one: str, many: str) -> str:
            return one if count == 1 else f"{count} {many}"

        return (f"{n(published, '1 published device', 'published devices')} selected. "
                f"{n(allocated, '1 allocated device', 'allocated devices')} selected. "
                f"{n(len(pods), '1 pod would', 'pods would')} be evicted in "
                f"{n(len(namespaces), '1 namespace', 'different namespaces')} if the effect was NoExecute. "
                "This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.")


def _selects(selector: Any, driver: str, pool: str, device: str) -> bool:
    """A DeviceTaintRule's deviceSelector: each field set must match (none set: every device)."""
    if selector is None:
        return True
    return all(not want or want == have for want, have in
               ((selector.driver, driver), (selector.pool, pool), (selector.device, device)))


def _seconds(stamp: str | None) -> float:
    if not stamp:
        return 0.0
    try:
        return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0


def _tolerates(tol: Obj, taint: Taint) -> bool:
    if tol.get("effect") and tol["effect"] != taint.effect:
        return False
    if tol.get("key") and tol["key"] != taint.key:
        return False
    op = tol.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (tol.get("value") or "") == taint.value


def _eviction_time(taint: Taint, tolerations: list[Obj]) -> float | None:
    """When a pod using the device must go: None if a toleration tolerates the taint for good, else the
    taint's time plus the smallest tolerationSeconds of the tolerations that match (0 without)."""
    matching = [t for t in tolerations if isinstance(t, dict) and _tolerates(t, taint)]
    if not matching:
        return taint.added
    if any(t.get("tolerationSeconds") is None for t in matching):
        return None
    return taint.added + max(0, min(int(t["tolerationSeconds"]) for t in matching))
