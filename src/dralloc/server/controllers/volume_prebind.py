"""VolumeBinding's PreBind in ``dralloc serve`` (kube-scheduler's ``BindPodVolumes``): the bindings the
scheduling cycle chose for the pod's WaitForFirstConsumer claims written to the store, then a wait until the
PV controller (and, for claims to provision, the provisioner) has bound every claim of the pod.

- A claim matched to a volume: the volume's ``claimRef`` names the claim (with its uid) and it is annotated
  ``pv.kubernetes.io/bound-by-controller``; the PV controller completes the binding.
- A claim to provision: annotated ``volume.kubernetes.io/selected-node`` with the chosen node; the provisioner
  makes its volume there.

The pod is bound once each of its claims is fully bound (``volumeName`` and
``pv.kubernetes.io/bind-completed``); a volume whose ``claimRef`` went, a claim whose selected node was taken
away (the provisioner gave up) or 10 minutes (``bindTimeout``) fail the binding cycle with upstream's texts.
"""

from __future__ import annotations

from dataclasses import dataclass

from dralloc.api.core_v1_storage import ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE
from dralloc.scheduler.volumes import VolumeState
from dralloc.server.controllers.snapshot import Mirror, Obj
from dralloc.server.controllers.volumes import PVCS, PVS, fully_bound
from dralloc.server.controllers.writes import Writer

BIND_TIMEOUT_SECONDS = 600  # VolumeBindingArgs' bindTimeoutSeconds default
PREBIND = 'running PreBind plugin "VolumeBinding": '


@dataclass(frozen=True)
class VolumeWait:
    """One claim the pod waits for: its namespace and name, the volume the cycle pre-bound it to (None: it
    is to be provisioned on the node)."""

    namespace: str
    name: str
    volume: str | None


def write_bindings(writer: Writer, volumes: VolumeState, pod_key: str, node: str) -> list[VolumeWait] | str:
    """``bindAPIUpdate`` for the pod's bindings of this run: the claims to wait for, or why a write failed."""
    waits: list[VolumeWait] = []
    for binding in volumes.bindings:
        if binding.pod != pod_key:
            continue
        namespace, _, name = binding.claim.partition("/")
        pvc = volumes.claim(namespace, name)
        uid = pvc.metadata.uid if pvc is not None else None
        if binding.volume is not None:
            ref = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name, "uid": uid,
                   "apiVersion": "v1"}

            def pre_bind(current: Obj, ref: Obj = ref) -> Obj | None:
                spec = current.setdefault("spec", {})
                old = spec.get("claimRef") or {}
                if old.get("uid") == ref["uid"]:
                    return None
                if old.get("uid"):
                    raise _Taken()
                spec["claimRef"] = ref
                current["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
                return current

            try:
                if writer.update(PVS, "", binding.volume, pre_bind) is None:
                    return f'persistentvolume "{binding.volume}" not found'
            except _Taken:
                return f'persistentvolume "{binding.volume}" is bound to another claim'
        else:
            def select(current: Obj, node: str = node) -> Obj | None:
                annotations = current["metadata"].setdefault("annotations", {})
                if annotations.get(ANN_SELECTED_NODE) == node:
                    return None
                annotations[ANN_SELECTED_NODE] = node
                return current

            if writer.update(PVCS, namespace, name, select, uid=uid) is None:
                return f'persistentvolumeclaim "{name}" not found'
        waits.append(VolumeWait(namespace, name, binding.volume))
    return waits


def check_bindings(mirror: Mirror, waits: list[VolumeWait], node: str) -> bool | str:
    """``checkBindings``: True when every claim is fully bound, False while not yet, or the failure."""
    for wait in waits:
        pvc = mirror.get(PVCS, (wait.namespace, wait.name))
        if pvc is None:
            return f'binding volumes: failed to check binding: persistentvolumeclaim "{wait.name}" not found'
        if wait.volume is not None:
            pv = mirror.get(PVS, ("", wait.volume))
            ref = ((pv or {}).get("spec") or {}).get("claimRef") or {}
            if pv is None:
                return f'binding volumes: failed to check binding: persistentvolume "{wait.volume}" not found'
            if not ref.get("uid"):
                return f'binding volumes: ClaimRef got reset for pv "{wait.volume}"'
        elif ((pvc.get("metadata") or {}).get("annotations") or {}).get(ANN_SELECTED_NODE) != node:
            return f'binding volumes: provisioning failed for PVC "{wait.name}"'
        if not fully_bound(pvc):
            return False
    return True


class _Taken(Exception):
    pass
