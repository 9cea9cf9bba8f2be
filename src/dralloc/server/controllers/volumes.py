"""kube-controller-manager's volume controllers inside ``dralloc serve``, over the mirror's PersistentVolumes,
PersistentVolumeClaims, StorageClasses and pods (pkg/controller/volume/...):

- The PV controller (persistentvolume): a new volume becomes Available; a claim of an Immediate class is
  bound to the smallest Available volume that fits it (class, size, access modes, volume mode, selector,
  VolumeAttributesClass; a volume pre-bound to it first), both sides written as upstream writes them (the
  volume's ``claimRef`` and phase Bound, ``pv.kubernetes.io/bound-by-controller``; the claim's
  ``volumeName``, ``pv.kubernetes.io/bind-completed``, phase, access modes and capacity). A claim of a
  WaitForFirstConsumer class waits (event ``WaitForFirstConsumer``) until the scheduler picks a node: it then
  either pre-binds a volume (the controller completes the binding) or annotates the claim with
  ``volume.kubernetes.io/selected-node`` for provisioning. A claim to provision is annotated with its
  provisioner (``volume.kubernetes.io/storage-provisioner``, event ``ExternalProvisioning``). A claim that
  names no class gets the default class once there is one (retroactive assignment); one whose volume is gone
  is Lost. A volume whose claim is gone is Released, then deleted (reclaim policy Delete) or kept (Retain).
- An external provisioner, simulated (``provision``: ``--fake-kubelet`` or ``--provision-volumes``): for a
  claim annotated with its class's provisioner it creates the volume ``pvc-<claim uid>`` of the requested
  size, with the class's reclaim policy and mount options, a CSI source of the provisioner's name, pre-bound
  to the claim, and for a WaitForFirstConsumer class pinned to the selected node's topology (the node's
  values of the topology keys its CSINode lists for the driver, else its hostname); events
  ``Provisioning`` and ``ProvisioningSucceeded``. Nothing is created outside the store.
- The ephemeral volume controller: a pod's generic ephemeral volume gets its claim ``<pod>-<volume>``,
  owned by the pod.
- The protection controllers: a claim keeps ``kubernetes.io/pvc-protection`` while a scheduled pod that has
  not finished uses it, a volume ``kubernetes.io/pv-protection`` while it is Bound; each is added to an
  object that lacks it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, ClassVar

from dralloc.api.codec import to_dict
from dralloc.api.core_v1 import Pod
from dralloc.api.core_v1_storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
)
from dralloc.api.storage_v1 import WAIT_FOR_FIRST_CONSUMER
from dralloc.controllers.ephemeral_volumes import ephemeral_claims
from dralloc.scheduler.volumes import HOSTNAME, VolumeState, matching_candidates, pod_claims
from dralloc.server.clock import now
from dralloc.server.controllers.events import EventRecorder
from dralloc.server.controllers.snapshot import VOLUME_FIELDS, Mirror, Obj, Snapshot
from dralloc.server.controllers.writes import Mutation, Writer
from dralloc.server.registry.storage import PV_PROTECTION, PVC_PROTECTION, default_class_name
from dralloc.store import Change, Outcome

PVCS, PVS, CLASSES, CSI_NODES = "persistentvolumeclaims", "persistentvolumes", "storageclasses", "csinodes"
INPUTS = (PVCS, PVS, CLASSES, CSI_NODES, "pods", "nodes")
COMPONENT = "persistentvolume-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
TERMINAL = ("Succeeded", "Failed")
# kube-controller-manager's --pvclaimbinder-sync-period: every claim and volume is synced again this often
# (besides on its own events), as the PV controller's resync enqueues them all.
RESYNC_SECONDS = 15.0
Key = tuple[str, str]


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _phase(obj: Obj) -> str:
    return str((obj.get("status") or {}).get("phase") or "")


def _annotations(obj: Obj) -> dict[str, str]:
    return _meta(obj).get("annotations") or {}


def _key(obj: Obj) -> tuple[str, str]:
    return _meta(obj).get("namespace") or "", _meta(obj).get("name") or ""


def claim_class(claim: Obj) -> str | None:
    """``GetPersistentVolumeClaimClass``; None when the claim names none (not even "")."""
    annotations = _annotations(claim)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    name = _spec(claim).get("storageClassName")
    return None if name is None else str(name)


def fully_bound(claim: Obj) -> bool:
    return bool(_spec(claim).get("volumeName")) and ANN_BIND_COMPLETED in _annotations(claim)


class Objects:
    """One mirrored resource by key, each object parsed when first read (a pass looks at few of them)."""

    def __init__(self, mirror: Mirror, resource: str) -> None:
        self.mirror = mirror
        self.resource = resource

    def get(self, key: Key) -> Obj | None:
        return self.mirror.get(self.resource, key) if self.mirror.has(self.resource, key) else None

    def __contains__(self, key: Key) -> bool:
        return self.mirror.has(self.resource, key)

    def keys(self) -> list[Key]:
        return sorted(self.mirror.items(self.resource))

    def values(self) -> list[Obj]:
        return self.mirror.listed(self.resource)


class VolumeControllers:
    """The controllers, incremental as informers' work queues: a pass looks at the claims, volumes and pods
    that changed since the last one began (another client's writes, or its own: see :meth:`note`), the volumes
    and claims they name, and the claims still waiting (unbound, or being deleted); after a relist, and every
    ``RESYNC_SECONDS``, at everything."""

    def __init__(self, writer: Writer, recorder: EventRecorder, provision: bool = False) -> None:
        self.writer = writer
        self.recorder = recorder
        self.provision = provision
        self._told: set[tuple[str, str]] = set()  # (claim uid, reason): events recorded once per claim
        self._waiting: set[Key] = set()  # claims not bound yet, or being deleted: looked at in every pass
        self._volume_of: dict[Key, str] = {}  # claim -> the volume it names (its release when it goes)
        self._written: dict[str, set[Key]] = {}  # what this controller wrote: looked at again in the next pass
        self.everything = True  # the next pass looks at every object (the first one)
        self._taken: set[str] = set()  # the volumes this pass bound (its snapshot does not show them bound yet)
        # The claims, volumes and claim-using pods changed (by anyone) since the last pass began: the next
        # pass looks at them, those that come in while a pass runs included.
        self._noted: dict[str, set[Key]] = {}
        self.next_due: float | None = None  # the next resync (seconds since the epoch), once there is work

    @property
    def again(self) -> bool:
        """Whether the next pass has something to look at even if no other client changes anything."""
        return self.everything or bool(self._written) or bool(self._noted) or self.due()

    def due(self) -> bool:
        """Whether the periodic resync is due."""
        return self.next_due is not None and self.next_due <= time.time()

    def has_work(self, mirror: Mirror) -> bool:
        """Whether there is anything to look at: a claim, a volume, or a pod with a PVC-backed volume."""
        work = bool(mirror.volume_users or mirror.size(PVCS) or mirror.size(PVS))
        if not work:
            self.next_due = None  # nothing to resync until something comes (its pass sets the resync again)
        return work

    # the changes note() takes (the manager hands it only these; own writes too)
    NOTED: ClassVar[frozenset[str] | None] = frozenset((PVCS, PVS, "pods"))

    def notes(self, changes: Sequence[Change]) -> None:
        """Take in changes of one resource from the store's feed, in the log's order."""
        for change in changes:
            self.note(change)

    def note(self, change: Change) -> None:
        """Take in one change of the store's feed (own writes too). The manager reads the feed again right
        after a pass writes, and what other clients wrote meanwhile comes with it: noted here, it is looked at
        in the next pass (the changes the manager hands on, taken after this pass, would not show it)."""
        if change.resource in (PVCS, PVS):
            self._noted.setdefault(change.resource, set()).add((change.namespace, change.name))
        elif change.resource == "pods" and change.data is not None and change.type != "DELETED" \
                and any(f in change.data for f in VOLUME_FIELDS):  # (a pod that names no claim: nothing to do)
            self._noted.setdefault("pods", set()).add((change.namespace, change.name))

    def cycle(self, snap: Snapshot, everything: bool = False) -> bool:
        """One pass of every volume controller over what was noted since the last one began (``everything``:
        at every object, as after a relist); True when it wrote something."""
        mirror = snap.mirror
        claims, volumes, classes = Objects(mirror, PVCS), Objects(mirror, PVS), Objects(mirror, CLASSES)
        noted, self._noted = self._noted, {}
        if everything or self.everything or self.due():
            claim_keys, volume_keys = set(claims.keys()), set(volumes.keys())
            pods = mirror.volume_user_pods()
            volumes_changed = True
            self.next_due = time.time() + RESYNC_SECONDS
        else:
            claim_keys, volume_keys, pods = self._scope(mirror, noted, claims, volumes)
            volumes_changed = bool(noted.get(PVS) or self._written.get(PVS))
            if self.next_due is None:
                self.next_due = time.time() + RESYNC_SECONDS
        self.everything, self._written, self._taken = False, {}, set()
        wrote = self._ephemeral(snap, pods, claims)
        used = _claims_in_use(mirror.volume_user_pods()) if any(
            _meta(c).get("deletionTimestamp") for c in map(claims.get, claim_keys) if c is not None) else set()
        for key in sorted(volume_keys):
            volume = volumes.get(key)
            if volume is not None:
                wrote |= self._finalize(PVS, volume, PV_PROTECTION, _phase(volume) == "Bound")
                wrote |= self._sync_volume(volume, claims)
        default = default_class_name(classes.values()) if claim_keys else None
        for key in sorted(claim_keys):
            claim = claims.get(key)
            if claim is None:
                self._waiting.discard(key)
                self._volume_of.pop(key, None)
                continue
            wrote |= self._finalize(PVCS, claim, PVC_PROTECTION, key in used)
            wrote |= self._sync_claim(snap, claim, classes, volumes, default,
                                      volumes_changed or key in noted.get(PVCS, set()))
            claim = claims.get(key) or claim
            if _meta(claim).get("deletionTimestamp") or not fully_bound(claim) or _phase(claim) != "Bound":
                self._waiting.add(key)
            else:
                self._waiting.discard(key)
            if _spec(claim).get("volumeName"):
                self._volume_of[key] = str(_spec(claim)["volumeName"])
        return wrote

    def _scope(self, mirror: Mirror, changed: dict[str, set[Key]], claims: Objects, volumes: Objects
               ) -> tuple[set[Key], set[Key], list[Obj]]:
        """The claims, volumes and pods a pass looks at: those changed (by others or by this controller),
        the waiting claims, the volumes the claims name and the claims the volumes and pods name."""
        claim_keys = changed.get(PVCS, set()) | self._written.get(PVCS, set()) | self._waiting
        volume_keys = changed.get(PVS, set()) | self._written.get(PVS, set())
        pods = [p for p in map(partial(mirror.get, "pods"), sorted(changed.get("pods", set()) & mirror.volume_users))
                if p is not None]
        claim_keys |= _claims_in_use(pods, scheduled_only=False)
        for key in list(claim_keys):
            claim = claims.get(key)
            name = _spec(claim).get("volumeName") if claim is not None else self._volume_of.get(key)
            if name:
                volume_keys.add(("", str(name)))
        for key in volume_keys:
            ref = _spec(volumes.get(key) or {}).get("claimRef") or {}
            if ref.get("name"):
                claim_keys.add((str(ref.get("namespace") or ""), str(ref["name"])))
        return claim_keys, volume_keys, pods

    def _note(self, resource: str, obj: Obj | None) -> Obj | None:
        if obj is not None:
            self._written.setdefault(resource, set()).add(_key(obj))
        return obj

    def _update(self, resource: str, obj: Obj, mutate: Mutation) -> Obj | None:
        """The writer's update of ``obj`` (by its uid); a change is looked at again in the next pass."""
        meta = _meta(obj)
        wrote: list[bool] = []

        def noting(current: Obj) -> Any:
            out = mutate(current)
            wrote.append(out is not None)
            return out

        result = self.writer.update(resource, meta.get("namespace") or "", meta.get("name") or "", noting,
                                    uid=meta.get("uid"))
        if wrote and wrote[-1]:
            self._written.setdefault(resource, set()).add(_key(obj))
        return result

    # --- claims -------------------------------------------------------------------------------------

    def _sync_claim(self, snap: Snapshot, claim: Obj, classes: Objects, volumes: Objects, default: str | None,
                    may_match: bool = True) -> bool:
        """``syncClaim``. ``may_match``: a volume may have come or changed, or the claim itself did (else
        a waiting claim has nothing new to match)."""
        meta, spec = _meta(claim), _spec(claim)
        if meta.get("deletionTimestamp"):
            return False
        volume_name = spec.get("volumeName")
        if volume_name:
            return self._sync_bound_claim(claim, volumes.get(("", volume_name)))
        class_name = claim_class(claim)
        if class_name is None:
            if default is not None:
                return self._set_class(claim, default)  # retroactive default StorageClass assignment
            class_name = ""  # (then it binds volumes of no class, as a claim of class "")
        sc = classes.get(("", class_name)) if class_name else None
        delayed = sc is not None and sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
        volume = self._best_match(snap, claim, volumes, delayed) if may_match else None
        if volume is not None:
            return self._bind(claim, volume)
        written = self._pending(claim)
        if delayed and ANN_SELECTED_NODE not in _annotations(claim):
            self._tell(claim, "Normal", "WaitForFirstConsumer",
                       "waiting for first consumer to be created before binding")
            return written
        if not class_name:
            self._tell(claim, "Normal", "FailedBinding",
                       "no persistent volumes available for this claim and no storage class is set")
            return written
        # provisionClaim
        if sc is None:
            self._tell(claim, "Warning", "ProvisioningFailed",
                       f'storageclass.storage.k8s.io "{class_name}" not found')
            return written
        provisioner = str(sc.get("provisioner") or "")
        if provisioner.startswith("kubernetes.io/"):  # an in-tree plugin's name: none is here (nor upstream now)
            self._tell(claim, "Warning", "ProvisioningFailed", f"no volume plugin matched name: {provisioner}")
            return written
        written |= self._ask_provisioner(claim, provisioner)
        if self.provision:
            written |= self._provision(snap, claim, sc, provisioner, volumes)
        return written

    def _best_match(self, snap: Snapshot, claim: Obj, volumes: Objects, delayed: bool) -> Obj | None:
        """``findBestMatchForClaim`` without a node: a volume pre-bound to the claim, else (Immediate only:
        the scheduler chooses for a WaitForFirstConsumer claim) the smallest Available volume that fits."""
        typed = snap.cache.typed(PVCS, claim)
        if not isinstance(typed, PersistentVolumeClaim):
            return None
        if not typed.metadata.namespace:
            return None
        candidates = [v for v in snap.typed(PVS, volumes.values())
                      if isinstance(v, PersistentVolume) and v.metadata.name not in self._taken]
        found = matching_candidates(typed, candidates)
        if found.prebound:
            return volumes.get(("", found.prebound[0].metadata.name or ""))
        if delayed:
            return None
        ranked = sorted([*found.general, *(r for rs in found.by_host.values() for r in rs)], key=lambda r: r[:2])
        return volumes.get(("", ranked[0][2].metadata.name or "")) if ranked else None

    def _bind(self, claim: Obj, volume: Obj) -> bool:
        """``bind``: the volume to the claim, then the claim to the volume (both Bound)."""
        cmeta = _meta(claim)
        ref = {"kind": "PersistentVolumeClaim", "namespace": cmeta.get("namespace"), "name": cmeta.get("name"),
               "uid": cmeta.get("uid"), "apiVersion": "v1", "resourceVersion": cmeta.get("resourceVersion")}

        def bind_volume(current: Obj) -> Obj | None:
            spec = current.setdefault("spec", {})
            old_ref = spec.get("claimRef") or {}
            if old_ref.get("uid") and old_ref.get("uid") != ref["uid"]:
                return None  # bound to another claim meanwhile
            if old_ref.get("uid") != ref["uid"]:
                if not old_ref:
                    current["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
                spec["claimRef"] = ref
            if spec.get("claimRef") == old_ref and _phase(current) == "Bound":
                return None
            current["status"] = {**(current.get("status") or {}), "phase": "Bound"}
            return current

        vmeta = _meta(volume)
        bound = self._update(PVS, volume, bind_volume)
        if bound is None or (_spec(bound).get("claimRef") or {}).get("uid") != cmeta.get("uid"):
            return False
        self._taken.add(str(vmeta.get("name")))
        vspec = _spec(bound)

        def bind_claim(current: Obj) -> Obj | None:
            spec = current.setdefault("spec", {})
            annotations = current["metadata"].setdefault("annotations", {})
            if spec.get("volumeName") and spec["volumeName"] != vmeta.get("name"):
                return None
            if not spec.get("volumeName"):
                spec["volumeName"] = vmeta.get("name")
                annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            annotations[ANN_BIND_COMPLETED] = "yes"
            current["status"] = {**(current.get("status") or {}), "phase": "Bound",
                                 "accessModes": vspec.get("accessModes"), "capacity": vspec.get("capacity")}
            return current

        self._update(PVCS, claim, bind_claim)
        return True

    def _sync_bound_claim(self, claim: Obj, volume: Obj | None) -> bool:
        """A claim that names its volume: Lost when the volume is gone; the binding completed when the volume
        is free or already names the claim."""
        if volume is None:
            if _phase(claim) == "Lost":
                return False
            self._tell(claim, "Warning", "ClaimLost", "Bound claim has lost reference to PersistentVolume. "
                                                      "Data on the volume is lost!")
            return self._set_phase(PVCS, claim, "Lost")
        ref = _spec(volume).get("claimRef") or {}
        mine = ref.get("name") == _meta(claim).get("name") and ref.get("namespace") == _meta(claim).get("namespace")
        if ref and not mine:
            return False  # the volume is another claim's: the claim stays as it is
        if ref.get("uid") and ref.get("uid") != _meta(claim).get("uid"):
            return False
        if fully_bound(claim) and _phase(claim) == "Bound" and _phase(volume) == "Bound" and ref.get("uid"):
            return False
        return self._bind(claim, volume)

    def _pending(self, claim: Obj) -> bool:
        """A claim written without its status (a controller's create) is Pending, as it would be defaulted."""
        return False if _phase(claim) else self._set_phase(PVCS, claim, "Pending")

    def _set_class(self, claim: Obj, class_name: str) -> bool:
        def assign(current: Obj) -> Obj | None:
            spec = current.setdefault("spec", {})
            if spec.get("storageClassName") is not None or spec.get("volumeName"):
                return None
            spec["storageClassName"] = class_name
            return current

        return self._update(PVCS, claim, assign) is not None

    def _ask_provisioner(self, claim: Obj, provisioner: str) -> bool:
        """``setClaimProvisioner``: the claim names who provisions it (GA and beta annotations)."""
        if _annotations(claim).get(ANN_STORAGE_PROVISIONER) == provisioner:
            return False

        def annotate(current: Obj) -> Obj:
            annotations = current["metadata"].setdefault("annotations", {})
            annotations[ANN_STORAGE_PROVISIONER] = annotations[ANN_BETA_STORAGE_PROVISIONER] = provisioner
            return current

        self._tell(claim, "Normal", "ExternalProvisioning",
                   f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                   f"manually by the system administrator. If volume creation is delayed, please verify that the "
                   f"provisioner is running and correctly registered.")
        return self._update(PVCS, claim, annotate) is not None

    def _tell(self, claim: Obj, type_: str, reason: str, message: str) -> None:
        """An event about the claim, once per claim and reason (upstream repeats it at every resync)."""
        told = (str(_meta(claim).get("uid")), reason)
        if told not in self._told:
            self._told.add(told)
            self.recorder.record(claim, type_, reason, message, COMPONENT)

    # --- the simulated external provisioner ---------------------------------------------------------

    def _provision(self, snap: Snapshot, claim: Obj, sc: Obj, provisioner: str, volumes: Objects) -> bool:
        meta, spec = _meta(claim), _spec(claim)
        name = f"pvc-{meta.get('uid')}"
        if ("", name) in volumes:
            return False
        node_name = _annotations(claim).get(ANN_SELECTED_NODE)
        if sc.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER and not node_name:
            return False
        request = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        volume_spec: Obj = {
            "capacity": {"storage": request}, "accessModes": spec.get("accessModes"),
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"), "name": meta.get("name"),
                         "uid": meta.get("uid"), "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion")},
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": claim_class(claim), "volumeMode": spec.get("volumeMode") or "Filesystem",
            "csi": {"driver": provisioner, "volumeHandle": name}}
        if sc.get("mountOptions"):
            volume_spec["mountOptions"] = list(sc["mountOptions"])
        if node_name:
            affinity = self._topology(snap, node_name, provisioner)
            if affinity is not None:
                volume_spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": affinity}]}}
        volume: Obj = {"apiVersion": "v1", "kind": "PersistentVolume",
                       "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: provisioner},
                                    "finalizers": [PV_PROTECTION]},
                       "spec": volume_spec, "status": {"phase": "Pending"}}
        self.recorder.record(claim, "Normal", "Provisioning",
                             f'External provisioner is provisioning volume for claim "{meta.get("namespace")}/'
                             f'{meta.get("name")}"', provisioner)
        self._note(PVS, self.writer.create(PVS, "", volume))
        self.recorder.record(claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}",
                             provisioner)
        return True

    @staticmethod
    def _topology(snap: Snapshot, node_name: str, driver: str) -> list[Obj] | None:
        """The selected node's place: its values of the topology keys its CSINode lists for the driver, else
        its hostname label."""
        node = snap.mirror.get("nodes", ("", node_name))
        labels = _meta(node).get("labels") or {} if node is not None else {}
        csi_node = snap.mirror.get(CSI_NODES, ("", node_name))
        keys: list[str] = []
        for entry in _spec(csi_node).get("drivers") or [] if csi_node is not None else []:
            if isinstance(entry, dict) and entry.get("name") == driver:
                keys = [k for k in entry.get("topologyKeys") or [] if k in labels]
        if not keys:
            keys = [HOSTNAME] if HOSTNAME in labels else []
        if not keys:
            return None
        return [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys]

    # --- volumes ------------------------------------------------------------------------------------

    def _sync_volume(self, volume: Obj, claims: Objects) -> bool:
        meta, spec = _meta(volume), _spec(volume)
        if meta.get("deletionTimestamp"):
            return False
        ref = spec.get("claimRef") or {}
        if not ref:
            return False if _phase(volume) == "Available" else self._set_phase(PVS, volume, "Available")
        claim = claims.get((ref.get("namespace") or "", ref.get("name") or ""))
        if not ref.get("uid"):  # pre-bound by its author: Available until the claim comes
            return False if _phase(volume) in ("Available", "Bound") else self._set_phase(PVS, volume, "Available")
        if claim is None or _meta(claim).get("uid") != ref.get("uid"):
            return self._release(volume)
        if _spec(claim).get("volumeName") == meta.get("name") and _phase(volume) != "Bound":
            return self._set_phase(PVS, volume, "Bound")
        return False

    def _release(self, volume: Obj) -> bool:
        """The claim is gone: Released, then what the reclaim policy says (Delete: the volume goes, as its
        provisioner or an in-tree deleter deletes it; Retain: it stays Released for its administrator)."""
        meta = _meta(volume)
        wrote = False
        if _phase(volume) not in ("Released", "Failed"):
            wrote = self._set_phase(PVS, volume, "Released")
        if _spec(volume).get("persistentVolumeReclaimPolicy") == "Delete":
            self._note(PVS, self.writer.delete(PVS, "", meta.get("name") or "", uid=meta.get("uid")))
            wrote = True
        return wrote

    def _set_phase(self, resource: str, obj: Obj, phase: str) -> bool:
        def change(current: Obj) -> Obj | None:
            if _phase(current) == phase:
                return None
            status = {**(current.get("status") or {}), "phase": phase}
            if resource == PVS:
                status["lastPhaseTransitionTime"] = now()
            current["status"] = status
            return current

        return self._update(resource, obj, change) is not None

    # --- the ephemeral volume and protection controllers --------------------------------------------

    def _ephemeral(self, snap: Snapshot, pods: list[Obj], claims: Objects) -> bool:
        """A claim for each generic ephemeral volume of these pods that has none yet (owned by the pod)."""
        made = False
        for pod_obj in pods:
            if not any(isinstance(v, dict) and "ephemeral" in v for v in _spec(pod_obj).get("volumes") or []):
                continue
            pod = snap.cache.typed("pods", pod_obj)
            if not isinstance(pod, Pod) or pod.metadata.deletion_timestamp:
                continue
            known = VolumeState()
            namespace = pod.metadata.namespace or "default"
            for ref in pod_claims(pod):
                if (namespace, ref.claim) in claims:
                    known.pvcs[(namespace, ref.claim)] = PersistentVolumeClaim()
            for pvc in ephemeral_claims(pod, known):
                obj = to_dict(pvc)
                obj["metadata"]["finalizers"] = [PVC_PROTECTION]
                obj["status"] = {"phase": "Pending"}
                self._note(PVCS, self.writer.create(PVCS, namespace, obj))
                made = True
        return made

    def _finalize(self, resource: str, obj: Obj, finalizer: str, in_use: bool) -> bool:
        """Add the finalizer to an object that lacks it; remove it from one being deleted that is not in use
        (the deletion then completes)."""
        meta = _meta(obj)
        has = finalizer in (meta.get("finalizers") or [])
        deleting = bool(meta.get("deletionTimestamp"))
        if (has and (not deleting or in_use)) or (not has and deleting):
            return False

        def change(current: Obj) -> Obj | Outcome | None:
            cmeta = current["metadata"]
            finalizers = list(cmeta.get("finalizers") or [])
            if not deleting:
                if finalizer in finalizers:
                    return None
                cmeta["finalizers"] = [*finalizers, finalizer]
                return current
            finalizers = [f for f in finalizers if f != finalizer]
            if finalizers:
                cmeta["finalizers"] = finalizers
                return current
            cmeta.pop("finalizers", None)
            return Outcome(current, "DELETED")

        return self._update(resource, obj, change) is not None


def _claims_in_use(pods: Iterable[Obj], scheduled_only: bool = True) -> set[Key]:
    """The claims (namespace, name) these pods name in their volumes (an ephemeral volume's claim is
    ``<pod>-<volume>``); ``scheduled_only``: of the scheduled pods that have not finished, as the PVC
    protection controller counts them."""
    used: set[Key] = set()
    for pod in pods:
        spec = _spec(pod)
        if scheduled_only and (not spec.get("nodeName") or _phase(pod) in TERMINAL):
            continue
        namespace = _meta(pod).get("namespace") or "default"
        for vol in spec.get("volumes") or []:
            if not isinstance(vol, dict):
                continue
            source: Any = vol.get("persistentVolumeClaim")
            if isinstance(source, dict) and source.get("claimName"):
                used.add((namespace, str(source["claimName"])))
            elif isinstance(vol.get("ephemeral"), dict):
                used.add((namespace, f"{_meta(pod).get('name')}-{vol.get('name')}"))
    return used
