"""kube-apiserver's validation of an apiextensions.k8s.io/v1 CustomResourceDefinition (ValidateCustomResource-
Definition and its update), with upstream's field paths and texts: the name ``<plural>.<group>``, the group, the
scope, exactly one storage version, version names, a structural schema per version, the names, printer columns,
subresources, conversion, and on update what may not change."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import msgspec

from dralloc.api.apiextensions_v1 import (
    CustomResourceDefinition,
    Names,
    PrinterColumn,
    Spec,
    Subresources,
    Version,
)
from dralloc.validation import field as f
from dralloc.validation.crd_rule_cost import cost_errors
from dralloc.validation.crd_rules import rule_errors
from dralloc.validation.formats import is_dns1123_subdomain, is_qualified_name, max_len_error, regex_error
from dralloc.validation.meta import (
    IMMUTABLE,
    NameCheck,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from dralloc.validation.structural import default_errors, schema_errors

SCOPES = ["Cluster", "Namespaced"]
CONVERSIONS = ["None", "Webhook"]
COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_dns1035_re = re.compile(_DNS1035_FMT)


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _dns1035_re.fullmatch(value):
        errs.append(regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def generic_object_meta(meta: Any, namespaced: bool, name_rule: NameCheck,
                        require_namespace: bool = False) -> list[f.FieldError]:
    """apimachinery's ValidateObjectMeta, which CRDs and custom resources get: a finalizer need only be a
    qualified name (the rule that it be a standard one or contain a "/" is core/v1's)."""
    errors = validate_object_meta(msgspec.structs.replace(meta, finalizers=None), namespaced, name_rule,
                                  require_namespace=require_namespace)
    for i, name in enumerate(meta.finalizers or ()):
        errors += [f.invalid(f"metadata.finalizers[{i}]", name, m) for m in is_qualified_name(name)]
    return errors


APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
_APPROVAL_PATH = f"metadata.annotations[{APPROVAL_ANNOTATION}]"


def is_protected_group(group: str) -> bool:
    """The groups of the Kubernetes project (``k8s.io``, ``kubernetes.io`` and their subdomains)."""
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


def _approval(annotations: dict[str, str] | None) -> tuple[str, str]:
    """The API approval state of a CRD's annotations and why it is not approved."""
    value = (annotations or {}).get(APPROVAL_ANNOTATION, "")
    if not value:
        return "missing", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", see '
                           "https://github.com/kubernetes/enhancements/pull/1111")
    if value.startswith("unapproved"):
        return "bypassed", ""
    if not _REQUEST_URI.match(value):
        return "invalid", (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}" with either a '
                           'URL or a reason starting with "unapproved", see '
                           "https://github.com/kubernetes/enhancements/pull/1111")
    return "approved", ""


# what Go's url.ParseRequestURI takes: an absolute URL with a scheme, or an absolute path
_REQUEST_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:\S*|/\S*)$")


def approval_errors(new: CustomResourceDefinition, old: CustomResourceDefinition | None) -> list[f.FieldError]:
    """A CRD of a Kubernetes project group needs the api-approved.kubernetes.io annotation (a URL, or a reason
    starting with "unapproved"); an update that keeps the approval state as it was is not checked."""
    if not is_protected_group(new.spec.group):
        return []
    state, reason = _approval(new.metadata.annotations)
    if old is not None and _approval(old.metadata.annotations)[0] == state:
        return []
    if state == "missing":
        return [f.required(_APPROVAL_PATH, reason)]
    if state == "invalid":
        return [f.invalid(_APPROVAL_PATH, (new.metadata.annotations or {})[APPROVAL_ANNOTATION], reason)]
    return []


def validate_crd(crd: CustomResourceDefinition) -> list[f.FieldError]:
    """The errors of a CRD being created (defaulted: singular and listKind filled in)."""
    spec = crd.spec

    def name_rule(name: str, prefix: bool) -> list[str]:
        problems = name_is_dns_subdomain(name, prefix)
        if name != f"{spec.names.plural}.{spec.group}":
            problems.append('must be spec.names.plural+"."+spec.group')
        return problems

    errors = generic_object_meta(crd.metadata, False, name_rule)
    errors += validate_spec(spec, "spec")
    errors += approval_errors(crd, None)
    if crd.status is not None and crd.status.accepted_names is not None:
        errors += validate_names(crd.status.accepted_names, "status.acceptedNames")
    return errors


def validate_crd_update(new: CustomResourceDefinition, old: CustomResourceDefinition,
                        established: bool) -> list[f.FieldError]:
    """The errors of an update; ``established``: the stored CRD's Established condition is True."""
    errors = validate_object_meta_update(new.metadata, old.metadata)
    old_schemas = {v.name: v.schema for v in old.spec.versions or ()}
    errors += validate_spec(new.spec, "spec", [v.name for v in new.spec.versions or ()
                                               if v.name in old_schemas and old_schemas[v.name] == v.schema])
    errors += approval_errors(new, old)
    if established:  # (they decide how objects are stored)
        errors += _immutable(new.spec.scope, old.spec.scope, "spec.scope")
        errors += _immutable(new.spec.names.kind, old.spec.names.kind, "spec.names.kind")
    errors += _immutable(new.spec.group, old.spec.group, "spec.group")
    errors += _immutable(new.spec.names.plural, old.spec.names.plural, "spec.names.plural")
    stored = (new.status.stored_versions if new.status is not None else None) or []
    errors += validate_stored_versions(stored, new.spec.versions or [], "status.storedVersions")
    return errors


def _immutable(new: str, old: str, path: str) -> list[f.FieldError]:
    return [f.invalid(path, new, IMMUTABLE)] if new != old else []


def validate_stored_versions(stored: list[str], versions: list[Version], path: str) -> list[f.FieldError]:
    if not stored:
        return [f.invalid(path, stored, "must have at least one stored version")]
    errors: list[f.FieldError] = []
    names = {v.name for v in versions}
    for version in versions:
        if version.storage and version.name not in stored:
            errors.append(f.invalid(path, version.name, f"must have the storage version {version.name}"))
    for i, name in enumerate(stored):
        if name not in names:
            errors.append(f.invalid(f.index(path, i), name, "must appear in spec.versions"))
    return errors


def validate_spec(spec: Spec, path: str, unchanged: Collection[str] = ()) -> list[f.FieldError]:
    errors: list[f.FieldError] = []
    group_path = f.child(path, "group")
    if not spec.group:
        errors.append(f.required(group_path))
    elif problems := is_dns1123_subdomain(spec.group):
        errors.append(f.invalid(group_path, spec.group, ",".join(problems)))
    elif len(spec.group.split(".")) < 2:
        errors.append(f.invalid(group_path, spec.group, "should be a domain with at least one dot"))
    errors += _enum(spec.scope, SCOPES, f.child(path, "scope"))
    versions = spec.versions or []
    versions_path = f.child(path, "versions")
    if not versions:
        errors.append(f.invalid(versions_path, [], "must have exactly one version marked as storage version"))
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        at = f.index(versions_path, i)
        if version.name in seen:
            unique = False
        seen.add(version.name)
        if problems := is_dns1035_label(version.name):
            errors.append(f.invalid(f.child(at, "name"), version.name, ",".join(problems)))
        errors += _version_errors(version, at, unchanged)
    if versions and not unique:
        errors.append(f.invalid(versions_path, [v.name for v in versions], "must contain unique version names"))
    storage = sum(1 for v in versions if v.storage)
    if versions and storage != 1:
        errors.append(f.invalid(versions_path, [v.name for v in versions],
                                "must have exactly one version marked as storage version"))
    names_path = f.child(path, "names")
    for attr, json_name in (("plural", "plural"), ("singular", "singular"), ("kind", "kind"), ("list_kind", "listKind")):
        if not getattr(spec.names, attr):
            errors.append(f.required(f.child(names_path, json_name)))
    errors += validate_names(spec.names, names_path)
    if spec.conversion is not None:
        conversion_path = f.child(path, "conversion")
        errors += _enum(spec.conversion.strategy, CONVERSIONS, f.child(conversion_path, "strategy"))
        if spec.conversion.strategy == "Webhook" and spec.conversion.webhook is None:
            errors.append(f.required(f.child(conversion_path, "webhook"), "required when strategy is set to Webhook"))
        elif spec.conversion.strategy != "Webhook" and spec.conversion.webhook is not None:
            errors.append(f.forbidden(f.child(conversion_path, "webhook"),
                                      "should not be set when strategy is not set to Webhook"))
    if spec.preserve_unknown_fields:
        errors.append(f.invalid(f.child(path, "preserveUnknownFields"), True,
                                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                                "spec.versions[*].schema instead"))
    return errors


def _enum(value: str, accepted: list[str], path: str) -> list[f.FieldError]:
    if not value:
        return [f.required(path)]
    if value not in accepted:
        return [f.not_supported(path, value, accepted)]
    return []


def _version_errors(version: Version, path: str, unchanged: Collection[str] = ()) -> list[f.FieldError]:
    """The errors of a version (``unchanged``: the versions whose schema an update leaves as it was, whose rules'
    own cost is not checked again)."""
    errors: list[f.FieldError] = []
    schema_path = f.child(f.child(path, "schema"), "openAPIV3Schema")
    schema = version.schema.open_apiv3_schema if version.schema is not None else None
    if schema is None:
        errors.append(f.required(schema_path, "schemas are required"))
    else:
        structural = schema_errors(schema, schema_path)
        errors += structural + rule_errors(schema, schema_path)
        if not structural:  # (defaults and rule costs are checked against a structural schema only)
            errors += default_errors(schema, schema_path)
            errors += cost_errors(schema, schema_path, per_expression=version.name not in unchanged)
        if version.subresources is not None and version.subresources.status is not None:
            if schema.get("type") not in (None, "object"):
                errors.append(f.invalid(f.child(schema_path, "type"), schema.get("type"),
                                        'only "object" is allowed as the type at the root of the schema if the '
                                        'status subresource is enabled'))
    if version.subresources is not None:
        errors += _subresource_errors(version.subresources, f.child(path, "subresources"))
    for i, column in enumerate(version.additional_printer_columns or ()):
        errors += _column_errors(column, f.index(f.child(path, "additionalPrinterColumns"), i))
    return errors


def _subresource_errors(sub: Subresources, path: str) -> list[f.FieldError]:
    errors: list[f.FieldError] = []
    scale = sub.scale
    if scale is None:
        return errors
    scale_path = f.child(path, "scale")
    spec_path = f.child(scale_path, "specReplicasPath")
    if not scale.spec_replicas_path:
        errors.append(f.required(spec_path, ""))
    elif not scale.spec_replicas_path.startswith(".spec."):
        errors.append(f.invalid(spec_path, scale.spec_replicas_path, "should start with .spec"))
    elif problems := _simple_json_path(scale.spec_replicas_path):
        errors.append(f.invalid(spec_path, scale.spec_replicas_path, problems))
    status_path = f.child(scale_path, "statusReplicasPath")
    if not scale.status_replicas_path:
        errors.append(f.required(status_path, ""))
    elif not scale.status_replicas_path.startswith(".status."):
        errors.append(f.invalid(status_path, scale.status_replicas_path, "should start with .status"))
    elif problems := _simple_json_path(scale.status_replicas_path):
        errors.append(f.invalid(status_path, scale.status_replicas_path, problems))
    selector = scale.label_selector_path
    if selector:
        selector_path = f.child(scale_path, "labelSelectorPath")
        if not (selector.startswith(".spec.") or selector.startswith(".status.")):
            errors.append(f.invalid(selector_path, selector, "should start with .spec or .status"))
        elif problems := _simple_json_path(selector):
            errors.append(f.invalid(selector_path, selector, problems))
    return errors


_SIMPLE_PATH = re.compile(r"^(\.[^.\[\]]+|\[[^\[\]]+\])+$")


def _simple_json_path(path: str) -> str:
    """Upstream's check that a path is a simple JSON path (dots and bracketed names, no wildcards)."""
    if not _SIMPLE_PATH.fullmatch(path) or "*" in path or ".." in path:
        return "must be a simple json path starting with ."
    return ""


def _column_errors(column: PrinterColumn, path: str) -> list[f.FieldError]:
    errors: list[f.FieldError] = []
    if not column.name:
        errors.append(f.required(f.child(path, "name")))
    types = "must be one of " + ",".join(COLUMN_TYPES)
    if not column.type:
        errors.append(f.required(f.child(path, "type"), types))
    elif column.type not in COLUMN_TYPES:
        errors.append(f.invalid(f.child(path, "type"), column.type, types))
    if column.format and column.format not in COLUMN_FORMATS:
        errors.append(f.invalid(f.child(path, "format"), column.format, "must be one of " + ",".join(COLUMN_FORMATS)))
    if not column.json_path:
        errors.append(f.required(f.child(path, "jsonPath")))
    elif not column.json_path.startswith("."):
        errors.append(f.invalid(f.child(path, "jsonPath"), column.json_path,
                                "must be a simple json path starting with ."))
    return errors


def validate_names(names: Names, path: str) -> list[f.FieldError]:
    """ValidateCustomResourceDefinitionNames."""
    errors: list[f.FieldError] = []
    if names.plural and (problems := is_dns1035_label(names.plural)):
        errors.append(f.invalid(f.child(path, "plural"), names.plural, ",".join(problems)))
    if names.singular and (problems := is_dns1035_label(names.singular)):
        errors.append(f.invalid(f.child(path, "singular"), names.singular, ",".join(problems)))
    for attr, json_name in (("kind", "kind"), ("list_kind", "listKind")):
        value = getattr(names, attr)
        if value and (problems := is_dns1035_label(value.lower())):
            errors.append(f.invalid(f.child(path, json_name), value,
                                    "may have mixed case, but should otherwise match: " + ",".join(problems)))
    for i, short in enumerate(names.short_names or ()):
        if problems := is_dns1035_label(short):
            errors.append(f.invalid(f.index(f.child(path, "shortNames"), i), short, ",".join(problems)))
    if names.kind and names.kind == names.list_kind:
        errors.append(f.invalid(f.child(path, "listKind"), names.list_kind, "kind and listKind may not be the same"))
    for i, category in enumerate(names.categories or ()):
        if problems := is_dns1035_label(category):
            errors.append(f.invalid(f.index(f.child(path, "categories"), i), category, ",".join(problems)))
    return errors
