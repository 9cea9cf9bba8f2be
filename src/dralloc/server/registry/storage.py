"""The strategies of the storage kinds: core/v1 PersistentVolumeClaims and PersistentVolumes (stored as sent,
with kube-apiserver's defaults), and storage.k8s.io/v1 StorageClasses, CSIDrivers, CSINodes,
CSIStorageCapacities and VolumeAttachments (stored in their defaulted v1 form).

Besides each kind's defaults and validation (``dralloc.validation.storage``), the admission plugins that act
on them at create:

- DefaultStorageClass: a claim that names no class (no ``storageClassName``, no beta annotation) gets the
  default class, the newest class annotated ``storageclass.kubernetes.io/is-default-class: "true"`` (ties: by
  name), if there is one.
- StorageObjectInUseProtection: a claim gets the ``kubernetes.io/pvc-protection`` finalizer, a volume the
  ``kubernetes.io/pv-protection`` one; the protection controllers (``server/controllers/volumes.py``) remove
  them once the claim is used by no pod, the volume bound to no claim.
"""

from __future__ import annotations

from typing import Any

from dralloc.api.codec import decode
from dralloc.api.core_v1_storage import (
    ANN_BETA_STORAGE_CLASS,
    PersistentVolume,
    PersistentVolumeClaim,
)
from dralloc.api.storage_v1 import IS_DEFAULT_CLASS, IS_DEFAULT_CLASS_BETA, CSIDriver, StorageClass
from dralloc.server.clock import now
from dralloc.server.registry.strategy import CoreStrategy, Strategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.store.cache import cached
from dralloc.validation import validate
from dralloc.validation.field import FieldError
from dralloc.validation.meta import finalizers_added_while_deleting, validate_object_meta_update
from dralloc.validation.storage import (
    VOLUME_SOURCES,
    validate_csi_driver,
    validate_persistent_volume_claim_update,
    validate_persistent_volume_update,
    validate_storage_class_update,
    volume_source_errors,
)

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
STORAGE_CLASSES = "storageclasses"
FILESYSTEM = "Filesystem"


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def is_default_class(sc: Obj) -> bool:
    """``IsDefaultAnnotation``: the GA or the beta annotation is "true"."""
    ann = _dict((_dict(sc.get("metadata")) or {}).get("annotations")) or {}
    return ann.get(IS_DEFAULT_CLASS) == "true" or ann.get(IS_DEFAULT_CLASS_BETA) == "true"


def default_class_name(classes: list[Obj]) -> str | None:
    """``GetDefaultClass``: of the default classes, the newest (ties: the name first in order)."""
    defaults = [sc for sc in classes if is_default_class(sc)]
    if not defaults:
        return None
    # newest first, then by name (the creation timestamps are RFC 3339 in UTC: ordered as text)
    defaults.sort(key=lambda sc: str(sc["metadata"].get("name") or ""))
    newest = max(defaults, key=lambda sc: str(sc["metadata"].get("creationTimestamp") or ""))
    return str(newest["metadata"].get("name") or "")


def with_finalizer(obj: Obj, finalizer: str) -> Obj:
    """``obj`` (a new dict) with ``finalizer`` among its finalizers."""
    meta = _dict(obj.get("metadata"))
    if meta is None:
        return obj
    finalizers = meta.get("finalizers")
    if finalizers is not None and not isinstance(finalizers, list):
        return obj  # the decoder's 400 comes next
    if finalizer in (finalizers or []):
        return obj
    return {**obj, "metadata": {**meta, "finalizers": [*(finalizers or []), finalizer]}}


class ClaimStrategy(CoreStrategy):
    """PersistentVolumeClaims: DefaultStorageClass and the protection finalizer at create, phase Pending and
    ``volumeMode: Filesystem`` by default, a spec that changes only as ``validate_persistent_volume_claim_update``
    allows; its status written through ``/status`` (the PV controller's)."""

    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        spec = _dict(sent.get("spec"))
        meta = _dict(sent.get("metadata")) or {}
        annotations = _dict(meta.get("annotations")) or {}
        if spec is not None and spec.get("storageClassName") is None and ANN_BETA_STORAGE_CLASS not in annotations:
            default = default_class_name(list(cached(store, STORAGE_CLASSES).objects().values()))
            if default is not None:
                sent = {**sent, "spec": {**spec, "storageClassName": default}}
        return with_finalizer(sent, PVC_PROTECTION)

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        _default_volume_mode(obj)  # (decoding's: the writer owns it)

    def prepare_for_create(self, stored: Obj) -> None:
        stored["status"] = {"phase": "Pending"}

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta)
        new, previous = decode(merged), decode(old)
        if not isinstance(new, PersistentVolumeClaim) or not isinstance(previous, PersistentVolumeClaim):
            return errors
        errors = validate_object_meta_update(new.metadata, previous.metadata) + errors
        if sub == "status":
            return errors
        return validate(new) + errors + validate_persistent_volume_claim_update(new, previous)


class VolumeStrategy(CoreStrategy):
    """PersistentVolumes: the protection finalizer at create, phase Pending (with the time it was set),
    reclaim policy Retain and ``volumeMode: Filesystem`` by default, exactly one volume source that never
    changes; its status written through ``/status`` (the PV controller's), the phase's transition time
    stamped when it changes."""

    def admit(self, store: SQLStore, sent: Obj, namespace: str) -> Obj:
        return with_finalizer(sent, PV_PROTECTION)

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        _default_volume(obj)  # (decoding's: the writer owns them)

    def prepare_for_create(self, stored: Obj) -> None:
        stored["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now()}

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        spec = _dict((stored or {}).get("spec")) or {}
        return validate(typed) + volume_source_errors(spec)

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        if sub != "status":
            return
        phase = (_dict(merged.get("status")) or {}).get("phase")
        if phase != (_dict(old.get("status")) or {}).get("phase"):
            merged["status"] = {**(_dict(merged.get("status")) or {}), "lastPhaseTransitionTime": now()}

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta)
        new, previous = decode(merged), decode(old)
        if not isinstance(new, PersistentVolume) or not isinstance(previous, PersistentVolume):
            return errors
        errors = validate_object_meta_update(new.metadata, previous.metadata) + errors
        if sub == "status":
            return errors
        spec, old_spec = _dict(merged.get("spec")) or {}, _dict(old.get("spec")) or {}
        return (validate(new) + volume_source_errors(spec) + errors
                + validate_persistent_volume_update(new, previous, _sources(spec), _sources(old_spec)))


def _sources(spec: Obj) -> Obj:
    return {k: spec[k] for k in VOLUME_SOURCES if k in spec}


def _default_volume_mode(obj: Obj) -> None:
    spec = _dict(obj.get("spec"))
    if spec is not None and spec.get("volumeMode") is None:
        spec["volumeMode"] = FILESYSTEM


def _default_volume(obj: Obj) -> None:
    """``SetDefaults_PersistentVolume``: reclaim policy Retain, volume mode Filesystem."""
    _default_volume_mode(obj)
    spec = _dict(obj.get("spec"))
    if spec is not None and not spec.get("persistentVolumeReclaimPolicy"):
        spec["persistentVolumeReclaimPolicy"] = "Retain"


class DefaultedStrategy(Strategy):
    """A storage.k8s.io kind stored in its v1 form with the defaults kube-apiserver's decoding sets (fields
    left unset are filled in, on create and on every update)."""

    def __init__(self, defaults: dict[str, Any] | None = None, spec_defaults: dict[str, Any] | None = None) -> None:
        self.defaults = defaults or {}
        self.spec_defaults = spec_defaults or {}

    def _fill(self, obj: Obj) -> Obj:
        for key, value in self.defaults.items():
            if obj.get(key) is None:
                obj[key] = value
        if self.spec_defaults:
            spec = obj.setdefault("spec", {})
            for key, value in self.spec_defaults.items():
                if spec.get(key) is None:
                    spec[key] = list(value) if isinstance(value, list) else value
        return obj

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        self._fill(obj)  # (decoding's: the writer owns them)

    def with_system_fields(self, created: Obj) -> Obj:
        return self._fill(created)


class StorageClassStrategy(DefaultedStrategy):
    """StorageClasses: reclaim policy Delete and binding mode Immediate by default; what they provision with
    (provisioner, parameters, reclaim policy, binding mode) never changes."""

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"]) + managed_field_errors(merged)
        new, previous = decode(merged), decode(old)
        if not isinstance(new, StorageClass) or not isinstance(previous, StorageClass):
            return errors
        return (validate(new) + validate_object_meta_update(new.metadata, previous.metadata) + errors
                + validate_storage_class_update(new, previous))


class CSIDriverStrategy(DefaultedStrategy):
    """CSIDrivers: ``SetDefaults_CSIDriver``'s defaults, then the spec's enumerations."""

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        errors = validate(typed)
        return errors + validate_csi_driver(typed) if isinstance(typed, CSIDriver) else errors


STORAGE_CLASSES_STRATEGY = StorageClassStrategy({"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"})
CSI_DRIVERS = CSIDriverStrategy(spec_defaults={
    "attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
    "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"], "requiresRepublish": False,
    "seLinuxMount": False})
CLAIMS = ClaimStrategy()
VOLUMES = VolumeStrategy()
