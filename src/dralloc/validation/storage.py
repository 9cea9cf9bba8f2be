"""kube-apiserver's rules for the storage objects the simulator reads: PersistentVolume and
PersistentVolumeClaim (pkg/apis/core/validation), StorageClass and CSINode (pkg/apis/storage/validation).

Only the fields the scheduler's volume plugins read are checked; each error carries its field path.
"""

from __future__ import annotations

from dralloc.api.core_v1 import PersistentVolumeClaimSpec
from dralloc.api.core_v1_storage import (
    ACCESS_MODES,
    READ_WRITE_ONCE_POD,
    RECLAIM_POLICIES,
    VOLUME_MODES,
    PersistentVolume,
    PersistentVolumeClaim,
)
from dralloc.api.storage_v1 import BINDING_MODES, CSINode, StorageClass
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name
from dralloc.validation.meta import name_is_dns_subdomain, validate_label_name, validate_node_selector

STORAGE = "storage"
CLASS_RECLAIM_POLICIES = ["Delete", "Retain"]


def _access_modes(modes: list[str] | None, path: str, required_detail: str) -> list[f.FieldError]:
    if not modes:
        return [f.required(path, required_detail)]
    errs = [f.not_supported(path, m, sorted(ACCESS_MODES)) for m in modes if m not in ACCESS_MODES]
    if READ_WRITE_ONCE_POD in modes and len(modes) > 1:
        errs.append(f.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _class_name(name: str | None, path: str) -> list[f.FieldError]:
    if not name:
        return []
    return [f.invalid(path, name, m) for m in name_is_dns_subdomain(name, False)]


def _volume_mode(mode: str | None, path: str) -> list[f.FieldError]:
    if mode is not None and mode not in VOLUME_MODES:
        return [f.not_supported(path, mode, list(VOLUME_MODES))]
    return []


def validate_persistent_volume(pv: PersistentVolume) -> list[f.FieldError]:
    """The spec's rules (the model keeps only some volume sources, so their count is not checked)."""
    spec = pv.spec
    errs = _access_modes(spec.access_modes, "spec.accessModes", "")
    if not spec.capacity:
        errs.append(f.required("spec.capacity"))
    elif STORAGE not in spec.capacity or len(spec.capacity) > 1:
        errs.append(f.not_supported("spec.capacity", dict(sorted((k, str(v)) for k, v in spec.capacity.items())),
                                    [STORAGE]))
    policy = spec.persistent_volume_reclaim_policy
    if policy is not None and policy not in RECLAIM_POLICIES:
        errs.append(f.not_supported("spec.persistentVolumeReclaimPolicy", policy, sorted(RECLAIM_POLICIES)))
    errs += _class_name(spec.storage_class_name, "spec.storageClassName")
    errs += _volume_mode(spec.volume_mode, "spec.volumeMode")
    affinity = spec.node_affinity
    if affinity is not None:
        if affinity.required is None:
            errs.append(f.required("spec.nodeAffinity.required", "must specify required node constraints"))
        else:
            errs += validate_node_selector(affinity.required, "spec.nodeAffinity.required")
    elif spec.local is not None:
        errs.append(f.required("spec.nodeAffinity", "Local volumes require node affinity"))
    return errs


def validate_claim_spec(spec: PersistentVolumeClaimSpec, path: str) -> list[f.FieldError]:
    errs = _access_modes(spec.access_modes, f.child(path, "accessModes"), "at least 1 access mode is required")
    requests = spec.resources.requests if spec.resources is not None else None
    storage_path = f.key(f.child(path, "resources"), STORAGE)
    if not requests or STORAGE not in requests:
        errs.append(f.required(storage_path))
    elif requests[STORAGE].sign() <= 0:
        errs.append(f.invalid(storage_path, str(requests[STORAGE]), "must be greater than zero"))
    errs += _class_name(spec.storage_class_name, f.child(path, "storageClassName"))
    errs += _volume_mode(spec.volume_mode, f.child(path, "volumeMode"))
    return errs


def validate_persistent_volume_claim(pvc: PersistentVolumeClaim) -> list[f.FieldError]:
    return validate_claim_spec(pvc.spec, "spec")


def validate_storage_class(sc: StorageClass) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if not sc.provisioner:
        errs.append(f.required("provisioner"))
    else:
        errs += [f.invalid("provisioner", sc.provisioner, m) for m in is_qualified_name(sc.provisioner.lower())]
    if sc.reclaim_policy is not None and sc.reclaim_policy not in CLASS_RECLAIM_POLICIES:
        errs.append(f.not_supported("reclaimPolicy", sc.reclaim_policy, CLASS_RECLAIM_POLICIES))
    if sc.volume_binding_mode is not None and sc.volume_binding_mode not in BINDING_MODES:
        errs.append(f.not_supported("volumeBindingMode", sc.volume_binding_mode, list(BINDING_MODES)))
    for i, term in enumerate(sc.allowed_topologies or ()):
        term_path = f.index("allowedTopologies", i)
        exprs = term.match_label_expressions or []
        if not exprs:
            errs.append(f.required(f.child(term_path, "matchLabelExpressions"),
                                   "must contain at least one requirement"))
        seen: set[str] = set()
        for j, req in enumerate(exprs):
            req_path = f.index(f.child(term_path, "matchLabelExpressions"), j)
            errs += validate_label_name(req.key, f.child(req_path, "key"))
            if req.key in seen:
                errs.append(f.duplicate(f.child(req_path, "key"), req.key))
            seen.add(req.key)
            if not req.values:
                errs.append(f.required(f.child(req_path, "values"), "must specify as least one value"))
    return errs


def validate_csi_node(node: CSINode) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    names: set[str] = set()
    for i, driver in enumerate(node.spec.drivers):
        path = f.index("spec.drivers", i)
        if not driver.name:
            errs.append(f.required(f.child(path, "name")))
        elif driver.name in names:
            errs.append(f.duplicate(f.child(path, "name"), driver.name))
        names.add(driver.name)
        if not driver.node_id:
            errs.append(f.required(f.child(path, "nodeID")))
        count = driver.allocatable.count if driver.allocatable is not None else None
        if count is not None and count < 0:
            errs.append(f.invalid(f.child(f.child(path, "allocatable"), "count"), count,
                                  "must be greater than or equal to 0"))
    return errs
