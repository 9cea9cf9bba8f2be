"""The strategy of a custom resource, made from its CustomResourceDefinition: stored as sent (in the version it
was written in: with conversion ``None`` only the apiVersion differs between versions, and every read shows the
version asked for), pruned of the fields its version's schema does not declare, defaulted from the schema's
``default`` on every write and read, validated against the schema; with a status subresource a main write keeps
the stored status and a status write changes nothing else, and ``metadata.generation`` moves only on a change
outside metadata and status."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from dralloc.api.meta import ObjectMeta
from dralloc.errors import InputError
from dralloc.server.apply import schema_types
from dralloc.server.apply.fieldtypes import KindSchema
from dralloc.server.crds import columns as printer
from dralloc.server.crds.columns import find
from dralloc.server.json_copy import json_copy
from dralloc.server.registry.strategy import Strategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.validation import crd_rules
from dralloc.validation import field as f
from dralloc.validation.crd import generic_object_meta
from dralloc.validation.meta import (
    finalizers_added_while_deleting,
    name_is_dns_subdomain,
    validate_object_meta_update,
)
from dralloc.validation.openapi_decoding import Decoding
from dralloc.validation.openapi_validator import Validator
from dralloc.validation.ratcheting import ratchet


class CustomObject(msgspec.Struct, kw_only=True):
    """What the generic verbs read of a custom resource's body: its metadata."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class CrdVersion:
    """One served version of a CRD: its schema, subresources and printer columns."""

    def __init__(self, version: dict[str, Any]) -> None:
        self.name = str(version.get("name", ""))
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else {"type": "object"}
        subresources = version.get("subresources") or {}
        self.status = isinstance(subresources, dict) and subresources.get("status") is not None
        scale = subresources.get("scale") if isinstance(subresources, dict) else None
        self.scale: dict[str, Any] | None = scale if isinstance(scale, dict) else None
        self.columns: list[dict[str, Any]] = list(version.get("additionalPrinterColumns") or ()) \
            or printer.DEFAULT_COLUMNS
        encoded = msgspec.json.encode(self.schema).decode()
        self.has_defaults = '"default"' in encoded
        self.has_rules = '"x-kubernetes-validations"' in encoded  # (kube-apiserver's CEL validator exists)
        # the rules, compiled, and the way to them (what the rules walk)
        self.rules = crd_rules.RuleSet((crd_rules.rules_schema(self.schema) or {}) if self.has_rules else {})
        # the schema read once for pruning, defaulting and validation
        self.decoding = Decoding(self.schema)
        self.validator = Validator(self.schema)
        # what server-side apply and managedFields follow: the schema's list and map types
        self.apply_schema = KindSchema(schema_types.kind_type(self.schema), self.status)
        self.deprecated = bool(version.get("deprecated"))
        self.deprecation_warning = version.get("deprecationWarning")


class CustomResourceStrategy(Strategy):
    stored_as_sent = True
    tracks_generation = True

    def __init__(self, group: str, kind: str, versions: list[dict[str, Any]]) -> None:
        self.group = group
        self.kind = kind
        self.versions = {v.name: v for v in (CrdVersion(d) for d in versions)}
        self.first = next(iter(self.versions.values()))
        self._by_api_version = {f"{group}/{name}": v for name, v in self.versions.items()}
        # the field selectors it takes: metadata.name and metadata.namespace, and its versions' selectableFields
        selectable = [str(field.get("jsonPath", "")).lstrip(".") for v in versions
                      for field in v.get("selectableFields") or () if isinstance(field, dict)]
        self.field_labels = {k: k for k in ("metadata.name", "metadata.namespace", *selectable) if k}

    def version_of(self, obj: Obj) -> CrdVersion:
        """The CRD version an object names in its apiVersion (the first served one when it names none)."""
        api_version = obj.get("apiVersion")
        if isinstance(api_version, str):  # (every write reads it several times: one look-up)
            return self._by_api_version.get(api_version, self.first)
        return self.first

    # --- decoding ---------------------------------------------------------------------------------------

    def decode(self, data: Obj) -> Any:
        meta = data.get("metadata")
        try:
            return CustomObject(metadata=msgspec.convert(meta or {}, ObjectMeta, str_keys=True))
        except msgspec.ValidationError as exc:
            raise InputError(f"json: cannot unmarshal metadata: {exc}") from None

    def unknown_fields(self, data: Obj) -> list[str] | None:
        # (a null is left out: in a merge patch it removes the field, and what is checked is the patched object)
        return self.version_of(data).decoding.unknown_fields(data)

    def apply_schema(self, obj: Obj) -> KindSchema | None:
        return self.version_of(obj).apply_schema

    def present(self, obj: Obj, api_version: str) -> Obj | None:
        if not obj:
            return obj
        version = self.versions.get(api_version.rpartition("/")[2], self.first)
        shown = obj if obj.get("apiVersion") == api_version else {**obj, "apiVersion": api_version}
        if version.has_defaults:  # defaulting on read, as from storage (what it does not change is shared)
            shown = version.decoding.with_defaults(shown)
        return shown

    # --- writes -----------------------------------------------------------------------------------------

    def _normalise(self, obj: Obj) -> None:
        version = self.version_of(obj)
        version.decoding.prune(obj)
        version.decoding.apply_defaults(obj)

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        self._normalise(obj)  # (pruning and defaulting are decoding's: the writer owns the defaults)

    def prepare_for_create(self, stored: Obj) -> None:
        if self.version_of(stored).status:
            stored.pop("status", None)  # written through /status only

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        obj = stored or {}
        meta = msgspec.convert(obj.get("metadata") or {}, ObjectMeta, str_keys=True)
        errors = generic_object_meta(meta, namespaced, name_is_dns_subdomain, require_namespace=namespaced)
        version = self.version_of(obj)
        found = version.validator.validate(obj)
        if not version.has_rules:
            return errors + found
        return errors + found + _rules_unless_blocked(found, lambda: version.rules.validate(obj))

    def prepare_for_update(self, merged: Obj, old: Obj, sub: str) -> None:
        meta = merged["metadata"]
        generation = (old.get("metadata") or {}).get("generation", 1)
        ignored = ("metadata", "status") if self.version_of(merged).status else ("metadata",)
        changed = {k: v for k, v in merged.items() if k not in ignored and k != "apiVersion"} != \
            {k: v for k, v in old.items() if k not in ignored and k != "apiVersion"}
        meta["generation"] = generation + 1 if changed else generation

    def merge_status(self, sent: Obj, meta: Obj, old: Obj) -> Obj:
        merged = super().merge_status(sent, meta, old)
        merged["apiVersion"] = sent.get("apiVersion", old.get("apiVersion"))
        return merged

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        new_meta = msgspec.convert(merged.get("metadata") or {}, ObjectMeta, str_keys=True)
        old_meta = msgspec.convert(old.get("metadata") or {}, ObjectMeta, str_keys=True)
        errors = finalizers_added_while_deleting(merged["metadata"], old["metadata"])
        errors += validate_object_meta_update(new_meta, old_meta) + managed_field_errors(merged)
        version = self.version_of(merged)
        found = ratchet(version.validator.validate(merged), merged, old)
        if not version.has_rules:
            return errors + found
        return errors + found + _rules_unless_blocked(
            found, lambda: ratchet(version.rules.validate(merged, old), merged, old))

    def deprecation(self, api_version: str) -> str:
        """The Warning every request of a deprecated version gets (its deprecationWarning, else upstream's)."""
        version = self.versions.get(api_version.rpartition("/")[2])
        if version is None or not version.deprecated:
            return ""
        if isinstance(version.deprecation_warning, str):
            return version.deprecation_warning
        return f"{api_version} {self.kind} is deprecated"

    # --- the scale subresource ---------------------------------------------------------------------------

    def scale_of(self, obj: Obj) -> Obj | None:
        scale = self.version_of(obj).scale
        if scale is None:
            return None
        meta = obj.get("metadata") or {}
        kept = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta}
        spec_found = find(obj, str(scale.get("specReplicasPath", "")))
        status_found = find(obj, str(scale.get("statusReplicasPath", "")))
        status: dict[str, Any] = {"replicas": status_found[0] if status_found and isinstance(status_found[0], int)
                                  else 0}
        selector_path = scale.get("labelSelectorPath")
        if selector_path:
            selector = find(obj, str(selector_path))
            if selector and isinstance(selector[0], str):
                status["selector"] = selector[0]
        replicas = spec_found[0] if spec_found and isinstance(spec_found[0], int) else 0
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": kept, "spec": {"replicas": replicas},
                "status": status}

    def scaled(self, obj: Obj, replicas: int) -> tuple[Obj, list[f.FieldError]] | None:
        scale = self.version_of(obj).scale
        if scale is None:
            return None
        new = json_copy(obj)
        parts = [p for p in str(scale.get("specReplicasPath", "")).split(".") if p]
        at = new
        for part in parts[:-1]:
            nxt = at.get(part)
            if not isinstance(nxt, dict):
                nxt = at[part] = {}
            at = nxt
        at[parts[-1]] = replicas
        self.decode_defaults(new, "scale")
        self.prepare_for_update(new, obj, "scale")
        return new, self.update_errors(new, obj, "scale", None)

    # --- kubectl get ------------------------------------------------------------------------------------

    def printer_columns(self, api_version: str) -> list[dict[str, Any]] | None:
        version = self.versions.get(api_version.rpartition("/")[2], self.first)
        return printer.column_definitions(version.columns)

    def printer_cells(self, obj: Obj) -> list[Any]:
        return printer.cells(obj, self.version_of(obj).columns)


# Schema errors after which kube-apiserver runs no CEL rule (their values may not have the types the rules
# expect); its note has no field path, which Go prints as <nil>
_BLOCKING = (f.NOT_SUPPORTED, f.REQUIRED, f.TOO_LONG, f.TOO_MANY, f.TYPE_INVALID)
RULES_NOT_CHECKED = f.invalid("<nil>", "null", "some validation rules were not checked because the object was invalid; "
                                          "correct the existing errors to complete validation")


def _rules_unless_blocked(found: list[f.FieldError],
                          rules: Callable[[], list[f.FieldError]]) -> list[f.FieldError]:
    """The CEL rules' errors, or, after a schema error that blocks them, upstream's note that they were not
    checked."""
    if any(e.type in _BLOCKING for e in found):
        return [RULES_NOT_CHECKED]
    return rules()
