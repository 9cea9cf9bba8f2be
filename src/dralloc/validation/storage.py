"""kube-apiserver's rules for the storage objects: PersistentVolume and PersistentVolumeClaim
(pkg/apis/core/validation), StorageClass, CSINode and CSIDriver (pkg/apis/storage/validation), on create and
on update.

Only the fields the scheduler's volume plugins read are checked, and which volume source a PV has; each error
carries its field path and upstream's text. The update rules' "spec is immutable" errors leave out the
struct diff kube-apiserver appends to them (Go's ``cmp.Diff`` of its internal types).
"""

from __future__ import annotations

from collections.abc import Collection

from msgspec.structs import replace

from dralloc.api.core_v1 import PersistentVolumeClaimSpec, VolumeResourceRequirements
from dralloc.api.core_v1_storage import (
    ACCESS_MODES,
    ANN_BETA_STORAGE_CLASS,
    READ_WRITE_ONCE_POD,
    RECLAIM_POLICIES,
    VOLUME_MODES,
    PersistentVolume,
    PersistentVolumeClaim,
)
from dralloc.api.quantity import Quantity
from dralloc.api.storage_v1 import BINDING_MODES, CSIDriver, CSINode, StorageClass
from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name
from dralloc.validation.meta import (
    IMMUTABLE,
    name_is_dns_subdomain,
    validate_label_name,
    validate_node_selector,
)

STORAGE = "storage"
CLASS_RECLAIM_POLICIES = ["Delete", "Retain"]
# A PersistentVolumeSource's members in the order ValidatePersistentVolumeSpec counts them: the second one
# found is the one reported.
VOLUME_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
                  "quobyte", "cinder", "cephfs", "iscsi", "fc", "flexVolume", "azureFile", "vsphereVolume",
                  "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]


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


def volume_source_errors(present: Collection[str]) -> list[f.FieldError]:
    """Exactly one volume source: ``present`` is the set of keys of a PV's spec."""
    found = [name for name in VOLUME_SOURCES if name in present]
    if not found:
        return [f.required("spec", "must specify a volume type")]
    return [f.forbidden(f.child("spec", name), "may not specify more than 1 volume type") for name in found[1:]]


def validate_persistent_volume_update(new: PersistentVolume, old: PersistentVolume, new_sources: object,
                                      old_sources: object) -> list[f.FieldError]:
    """``ValidatePersistentVolumeUpdate`` beyond the create rules: the volume source (``*_sources``: the
    spec's source members as stored) never changes, nor the volume mode, nor a node affinity once set."""
    errs: list[f.FieldError] = []
    if new_sources != old_sources:
        errs.append(f.forbidden("spec.persistentvolumesource",
                                "spec.persistentvolumesource is immutable after creation"))
    if new.spec.volume_mode != old.spec.volume_mode:
        errs.append(f.invalid("volumeMode", new.spec.volume_mode, IMMUTABLE))
    if old.spec.node_affinity is not None and new.spec.node_affinity != old.spec.node_affinity:
        errs.append(f.FieldError(f.INVALID, "nodeAffinity", f.OMIT, IMMUTABLE))  # (Go prints the struct)
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


def validate_persistent_volume_claim_update(new: PersistentVolumeClaim, old: PersistentVolumeClaim
                                            ) -> list[f.FieldError]:
    """``ValidatePersistentVolumeClaimUpdate`` beyond the create rules. The spec is immutable except: the
    volume name may be set once (the binding), the storage request may change once the claim is Bound
    (expansion; not below the capacity its status records, RecoverVolumeExpansionFailure being on), the
    VolumeAttributesClass may change, and a class named only by the beta annotation may move to
    ``storageClassName``."""
    errs: list[f.FieldError] = []
    new_spec, old_spec = new.spec, old.spec
    if not old_spec.volume_name:
        old_spec = replace(old_spec, volume_name=new_spec.volume_name)
    new_ann, old_ann = new.metadata.annotations or {}, old.metadata.annotations or {}
    old_beta = old_ann.get(ANN_BETA_STORAGE_CLASS)
    if old_beta is not None and old_spec.storage_class_name is None and new_spec.storage_class_name == old_beta \
            and new_ann.get(ANN_BETA_STORAGE_CLASS, old_beta) == old_beta:
        new_spec = replace(new_spec, storage_class_name=None)  # the upgrade from the beta annotation
    elif new_ann.get(ANN_BETA_STORAGE_CLASS) != old_beta:
        errs.append(f.invalid(f.child("metadata.annotations", ANN_BETA_STORAGE_CLASS),
                              new_ann.get(ANN_BETA_STORAGE_CLASS, ""), IMMUTABLE))
    bound = new.status is not None and new.status.phase == "Bound"
    new_requests = dict(new_spec.resources.requests or {}) if new_spec.resources is not None else None
    old_requests = (old_spec.resources.requests or {}) if old_spec.resources is not None else {}
    if bound and new_requests is not None and new_spec.resources is not None:
        if STORAGE in old_requests:
            new_requests[STORAGE] = old_requests[STORAGE]
        else:
            new_requests.pop(STORAGE, None)
        new_spec = replace(new_spec, resources=replace(new_spec.resources, requests=new_requests))
    new_spec = replace(new_spec, volume_attributes_class_name=old_spec.volume_attributes_class_name)
    if _normal(new_spec) != _normal(old_spec):
        errs.append(f.forbidden("spec", "spec is immutable after creation except resources.requests and "
                                        "volumeAttributesClassName for bound claims"))
    new_size = _request(new.spec)
    old_size = _request(old.spec)
    if new_size is not None and old_size is not None and new_size.cmp(old_size) < 0:
        capacity = (new.status.capacity or {}).get(STORAGE) if new.status is not None else None
        if capacity is None or new_size.cmp(capacity) <= 0:
            errs.append(f.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    if new.spec.volume_mode != old.spec.volume_mode:
        errs.append(f.invalid("volumeMode", new.spec.volume_mode, IMMUTABLE))
    return errs


def _request(spec: PersistentVolumeClaimSpec) -> Quantity | None:
    return (spec.resources.requests or {}).get(STORAGE) if spec.resources is not None else None


def _normal(spec: PersistentVolumeClaimSpec) -> PersistentVolumeClaimSpec:
    """Empty requests and limits are no requests nor limits (Go's nil and empty maps are semantically equal)."""
    res = spec.resources
    if res is None or (not res.requests and not res.limits):
        return replace(spec, resources=VolumeResourceRequirements())
    return replace(spec, resources=replace(res, requests=res.requests or None, limits=res.limits or None))


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


def validate_storage_class_update(new: StorageClass, old: StorageClass) -> list[f.FieldError]:
    """``ValidateStorageClassUpdate``: what a class provisions with never changes (both defaulted)."""
    errs: list[f.FieldError] = []
    if (new.parameters or {}) != (old.parameters or {}):
        errs.append(f.forbidden("parameters", "updates to parameters are forbidden."))
    if new.provisioner != old.provisioner:
        errs.append(f.forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.reclaim_policy != old.reclaim_policy:
        errs.append(f.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if new.volume_binding_mode != old.volume_binding_mode:
        errs.append(f.invalid("volumeBindingMode", new.volume_binding_mode or "", IMMUTABLE))
    return errs


def validate_csi_driver(driver: CSIDriver) -> list[f.FieldError]:
    """The spec's enumerations (the booleans are defaulted before validation, so never missing)."""
    spec = driver.spec
    errs: list[f.FieldError] = []
    if spec.fs_group_policy is not None and spec.fs_group_policy not in FS_GROUP_POLICIES:
        errs.append(f.not_supported("spec.fsGroupPolicy", spec.fs_group_policy, FS_GROUP_POLICIES))
    for i, mode in enumerate(spec.volume_lifecycle_modes or ()):
        if mode not in LIFECYCLE_MODES:
            errs.append(f.not_supported(f.index("spec.volumeLifecycleModes", i), mode, LIFECYCLE_MODES))
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
