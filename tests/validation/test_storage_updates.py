"""kube-apiserver's update rules of the storage kinds: a claim's spec, a volume's source and mode, a class's
provisioning fields (pkg/apis/core/validation, pkg/apis/storage/validation)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from dralloc.api.codec import decode
from dralloc.api.core_v1_storage import PersistentVolume, PersistentVolumeClaim
from dralloc.api.storage_v1 import StorageClass
from dralloc.validation.storage import (
    validate_persistent_volume_claim_update,
    validate_persistent_volume_update,
    validate_storage_class_update,
    volume_source_errors,
)

IMMUTABLE_SPEC = ("spec: Forbidden: spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims")


def claim(phase: str = "Pending", size: str = "1Gi", capacity: str | None = None, **spec: Any
          ) -> PersistentVolumeClaim:
    status: dict[str, Any] = {"phase": phase}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    obj = decode({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                  "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                           "storageClassName": "fast", "volumeMode": "Filesystem", **spec},
                  "status": status})
    assert isinstance(obj, PersistentVolumeClaim)
    return obj


def texts(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors]


# a change of each field the spec may not change, by field
CHANGES: dict[str, dict[str, Any]] = {
    "accessModes": {"accessModes": ["ReadWriteMany"]},
    "storageClassName": {"storageClassName": "slow"},
    "selector": {"selector": {"matchLabels": {"tier": "gold"}}},
    "dataSource": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "other"}},
}


@given(st.sampled_from(sorted(CHANGES)), st.sampled_from(["Pending", "Bound"]))
def test_a_claim_spec_field_never_changes(name: str, phase: str) -> None:
    old = claim(phase)
    new = claim(phase, **CHANGES[name])
    assert IMMUTABLE_SPEC in texts(validate_persistent_volume_claim_update(new, old))


@given(st.integers(min_value=1, max_value=64), st.integers(min_value=1, max_value=64))
def test_the_storage_request_changes_only_on_a_bound_claim_and_not_below_its_capacity(old_gi: int,
                                                                                       new_gi: int) -> None:
    pending = validate_persistent_volume_claim_update(claim(size=f"{new_gi}Gi"), claim(size=f"{old_gi}Gi"))
    assert (IMMUTABLE_SPEC in texts(pending)) == (old_gi != new_gi)
    bound = texts(validate_persistent_volume_claim_update(
        claim("Bound", f"{new_gi}Gi", f"{old_gi}Gi"), claim("Bound", f"{old_gi}Gi", f"{old_gi}Gi")))
    assert IMMUTABLE_SPEC not in bound
    shrunk = ("spec.resources.requests.storage: Forbidden: field can not be less than status.capacity" in bound)
    assert shrunk == (new_gi < old_gi)


def test_the_volume_name_is_set_once_and_the_attributes_class_may_change() -> None:
    old = claim()
    assert validate_persistent_volume_claim_update(claim(volumeName="pv-1"), old) == []
    assert IMMUTABLE_SPEC in texts(validate_persistent_volume_claim_update(claim(volumeName="pv-2"),
                                                                           claim(volumeName="pv-1")))
    assert validate_persistent_volume_claim_update(claim(volumeAttributesClassName="gold"), old) == []


def test_a_class_named_by_the_beta_annotation_may_move_to_the_field() -> None:
    old = replace(claim(), spec=replace(claim().spec, storage_class_name=None))
    old = replace(old, metadata=replace(old.metadata, annotations={"volume.beta.kubernetes.io/storage-class": "fast"}))
    assert validate_persistent_volume_claim_update(claim(), old) == []
    assert IMMUTABLE_SPEC in texts(validate_persistent_volume_claim_update(claim(storageClassName="slow"), old))


@given(st.lists(st.sampled_from(["hostPath", "nfs", "csi", "local", "iscsi"]), unique=True, max_size=4))
def test_a_volume_has_exactly_one_source_and_the_later_ones_are_named(sources: list[str]) -> None:
    errors = texts(volume_source_errors(set(sources)))
    if not sources:
        assert errors == ["spec: Required value: must specify a volume type"]
    else:
        order = ["hostPath", "nfs", "iscsi", "local", "csi"]  # upstream's counting order
        extra = sorted(sources, key=order.index)[1:]
        assert errors == [f"spec.{s}: Forbidden: may not specify more than 1 volume type" for s in extra]


def test_a_volume_mode_and_a_set_node_affinity_never_change() -> None:
    def volume(**spec: Any) -> PersistentVolume:
        obj = decode({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                               "volumeMode": "Filesystem", **spec}})
        assert isinstance(obj, PersistentVolume)
        return obj

    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]}}
    assert texts(validate_persistent_volume_update(volume(volumeMode="Block"), volume(), {}, {})) == [
        'volumeMode: Invalid value: "Block": field is immutable']
    assert validate_persistent_volume_update(volume(nodeAffinity=affinity), volume(), {}, {}) == []  # set once
    moved = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["b"]}]}]}}
    assert texts(validate_persistent_volume_update(volume(nodeAffinity=moved), volume(nodeAffinity=affinity), {},
                                                   {})) == ["nodeAffinity: Invalid value: field is immutable"]


def test_a_storage_class_keeps_what_it_provisions_with() -> None:
    def sc(**fields: Any) -> StorageClass:
        obj = decode({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
                      "provisioner": "example.com", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
                      **fields})
        assert isinstance(obj, StorageClass)
        return obj

    assert validate_storage_class_update(sc(allowVolumeExpansion=True, mountOptions=["ro"]), sc()) == []
    assert texts(validate_storage_class_update(sc(parameters={"a": "b"}), sc())) == [
        "parameters: Forbidden: updates to parameters are forbidden."]
    assert texts(validate_storage_class_update(sc(volumeBindingMode="WaitForFirstConsumer"), sc())) == [
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']
