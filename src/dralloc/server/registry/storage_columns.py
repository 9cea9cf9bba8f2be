"""The columns ``kubectl get`` prints for the storage kinds, as kube-apiserver's printers compute them:
``kubectl get pvc`` (STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, and
VOLUMEMODE with ``-o wide``), ``kubectl get pv``, ``kubectl get sc`` (the default class's name followed by
`` (default)``), CSI drivers, nodes and capacities, and volume attachments."""

from __future__ import annotations

from typing import Any

from dralloc.api.core_v1_storage import ACCESS_MODES, ANN_BETA_STORAGE_CLASS
from dralloc.api.quantity import Quantity
from dralloc.server.registry.storage import is_default_class
from dralloc.server.types import Obj

UNSET = "<unset>"
# GetAccessModesAsString's abbreviations, in its order
_MODE_NAMES = dict(zip(ACCESS_MODES, ("RWO", "ROX", "RWX", "RWOP"), strict=True))


def _part(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def access_modes(modes: Any) -> str:
    """``GetAccessModesAsString``: the modes present, abbreviated, in a fixed order."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _MODE_NAMES.items() if mode in present)


def _quantity(value: Any) -> str:
    if value is None:
        return ""
    try:
        return str(Quantity(value))
    except (ValueError, TypeError):
        return str(value)


def _storage_class(obj: Obj) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation wins over ``spec.storageClassName``."""
    annotations = _part(_part(obj, "metadata"), "annotations")
    if ANN_BETA_STORAGE_CLASS in annotations:
        return str(annotations[ANN_BETA_STORAGE_CLASS])
    return str(_part(obj, "spec").get("storageClassName") or "")


def _phase(obj: Obj) -> str:
    if _part(obj, "metadata").get("deletionTimestamp"):
        return "Terminating"
    return str(_part(obj, "status").get("phase") or "")


def _attributes_class(obj: Obj) -> str:
    name = _part(obj, "spec").get("volumeAttributesClassName")
    return UNSET if name is None else str(name)


def _volume_mode(obj: Obj) -> str:
    mode = _part(obj, "spec").get("volumeMode")
    return UNSET if mode is None else str(mode)


def claim_capacity(claim: Obj) -> str:
    """A claim's CAPACITY, once it names a volume: what its status says it got."""
    if not _part(claim, "spec").get("volumeName"):
        return ""
    return _quantity(_part(_part(claim, "status"), "capacity").get("storage"))


def claim_access_modes(claim: Obj) -> str:
    if not _part(claim, "spec").get("volumeName"):
        return ""
    return access_modes(_part(claim, "status").get("accessModes"))


def volume_claim(volume: Obj) -> str:
    ref = _part(_part(volume, "spec"), "claimRef")
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}" if ref else ""


def class_name(sc: Obj) -> str:
    name = str(_part(sc, "metadata").get("name") or "")
    return f"{name} (default)" if is_default_class(sc) else name


def _joined(values: Any, empty: str) -> str:
    return ",".join(str(v) for v in values) if isinstance(values, list) and values else empty


COLUMNS = {
    "=pvcStatus": _phase, "=pvcCapacity": claim_capacity, "=pvcAccessModes": claim_access_modes,
    "=storageClass": _storage_class, "=volumeAttributesClass": _attributes_class, "=volumeMode": _volume_mode,
    "=pvCapacity": lambda pv: _quantity(_part(_part(pv, "spec"), "capacity").get("storage")),
    "=pvAccessModes": lambda pv: access_modes(_part(pv, "spec").get("accessModes")),
    "=pvStatus": _phase, "=pvClaim": volume_claim,
    "=storageClassName": class_name,
    "=scAllowVolumeExpansion": lambda sc: bool(sc.get("allowVolumeExpansion")),
    "=csiTokenRequests": lambda d: _joined([r.get("audience") for r in _part(d, "spec").get("tokenRequests") or []
                                            if isinstance(r, dict)], UNSET),
    "=csiModes": lambda d: _joined(_part(d, "spec").get("volumeLifecycleModes"), "<none>"),
    "=csiNodeDrivers": lambda n: len(_part(n, "spec").get("drivers") or []),
    "=capacity": lambda c: _quantity(c.get("capacity")) or UNSET,
    "=attached": lambda va: bool(_part(va, "status").get("attached")),
}
COLUMN_TYPES = {"=scAllowVolumeExpansion": "boolean", "=csiNodeDrivers": "integer", "=attached": "boolean",
                "spec.attachRequired": "boolean", "spec.podInfoOnMount": "boolean",
                "spec.storageCapacity": "boolean", "spec.requiresRepublish": "boolean"}

CLAIM_TABLE = (("Name", "metadata.name", 0), ("Status", "=pvcStatus", 0), ("Volume", "spec.volumeName", 0),
               ("Capacity", "=pvcCapacity", 0), ("Access Modes", "=pvcAccessModes", 0),
               ("StorageClass", "=storageClass", 0), ("VolumeAttributesClass", "=volumeAttributesClass", 0),
               ("Age", "=age", 0), ("VolumeMode", "=volumeMode", 1))
VOLUME_TABLE = (("Name", "metadata.name", 0), ("Capacity", "=pvCapacity", 0), ("Access Modes", "=pvAccessModes", 0),
                ("Reclaim Policy", "spec.persistentVolumeReclaimPolicy", 0), ("Status", "=pvStatus", 0),
                ("Claim", "=pvClaim", 0), ("StorageClass", "=storageClass", 0),
                ("VolumeAttributesClass", "=volumeAttributesClass", 0), ("Reason", "status.reason", 0),
                ("Age", "=age", 0), ("VolumeMode", "=volumeMode", 1))
STORAGE_CLASS_TABLE = (("Name", "=storageClassName", 0), ("Provisioner", "provisioner", 0),
                       ("ReclaimPolicy", "reclaimPolicy", 0), ("VolumeBindingMode", "volumeBindingMode", 0),
                       ("AllowVolumeExpansion", "=scAllowVolumeExpansion", 0), ("Age", "=age", 0))
CSI_DRIVER_TABLE = (("Name", "metadata.name", 0), ("AttachRequired", "spec.attachRequired", 0),
                    ("PodInfoOnMount", "spec.podInfoOnMount", 0), ("StorageCapacity", "spec.storageCapacity", 0),
                    ("TokenRequests", "=csiTokenRequests", 0), ("RequiresRepublish", "spec.requiresRepublish", 0),
                    ("Modes", "=csiModes", 0), ("Age", "=age", 0))
CSI_NODE_TABLE = (("Name", "metadata.name", 0), ("Drivers", "=csiNodeDrivers", 0), ("Age", "=age", 0))
CAPACITY_TABLE = (("Name", "metadata.name", 0), ("StorageClassName", "storageClassName", 0),
                  ("Capacity", "=capacity", 0), ("Age", "=age", 0))
ATTACHMENT_TABLE = (("Name", "metadata.name", 0), ("Attacher", "spec.attacher", 0),
                    ("PV", "spec.source.persistentVolumeName", 0), ("Node", "spec.nodeName", 0),
                    ("Attached", "=attached", 0), ("Age", "=age", 0))
