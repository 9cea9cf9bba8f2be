"""ObjectMeta, NodeSelector and Condition rules of kube-apiserver (core and meta/v1 validation)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from dralloc.api.meta import LabelSelector, LabelSelectorRequirement
from dralloc.validation import field as f
from dralloc.validation.formats import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    regex_error,
)

NameCheck = Callable[[str, bool], list[str]]
TOTAL_ANNOTATION_SIZE = 256 * 1024
IMMUTABLE = "field is immutable"
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
FIELD_MANAGER_MAX = 128
MANAGED_SUBRESOURCE_MAX = 256


def _mask_trailing_dash(name: str) -> str:
    # A generateName prefix may end in '-'; upstream masks it before the format check.
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def validate_labels(labels: dict[str, str] | None, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for k, v in (labels or {}).items():
        # (the errors made only for a problem found: a create's labels are checked on every write)
        problems = is_qualified_name(k)
        if problems:
            errs += [f.invalid(path, k, m) for m in problems]
        problems = is_label_value(v)
        if problems:
            errs += [f.invalid(path, v, m) for m in problems]
    return errs


def validate_label_name(name: str, path: str) -> list[f.FieldError]:
    return [f.invalid(path, name, m) for m in is_qualified_name(name)]


def validate_annotations(annotations: dict[str, str] | None, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    total = 0
    for k, v in (annotations or {}).items():
        errs.extend(f.invalid(path, k, m) for m in is_qualified_name(k.lower()))
        total += len(k) + len(v.encode("utf-8"))
    if total > TOTAL_ANNOTATION_SIZE:
        errs.append(f.too_long(path, TOTAL_ANNOTATION_SIZE))
    return errs


def validate_object_meta(meta: Any, namespaced: bool, name_fn: NameCheck, path: str = "metadata",
                         require_namespace: bool = False) -> list[f.FieldError]:
    """ValidateObjectMeta. ``require_namespace`` is off for files: kubectl fills the namespace in."""
    errs: list[f.FieldError] = []
    gen = meta.generate_name or ""
    if gen:
        errs.extend(f.invalid(f.child(path, "generateName"), gen, m) for m in name_fn(gen, True))
    name = meta.name or ""
    if not name:
        if not gen:
            errs.append(f.required(f.child(path, "name"), "name or generateName is required"))
    elif problems := name_fn(name, False):  # (the paths made only for a problem found)
        errs.extend(f.invalid(f.child(path, "name"), name, m) for m in problems)
    ns = meta.namespace or ""
    if namespaced:
        if not ns:
            if require_namespace:
                errs.append(f.required(f.child(path, "namespace")))
        elif problems := is_dns1123_label(ns):
            errs.extend(f.invalid(f.child(path, "namespace"), ns, m) for m in problems)
    elif ns:
        errs.append(f.forbidden(f.child(path, "namespace"), "not allowed on this type"))
    if meta.generation is not None and meta.generation < 0:
        errs.append(f.invalid(f.child(path, "generation"), meta.generation, "must be greater than or equal to 0"))
    # (the paths made only for the parts an object has: most have no annotations and no managedFields)
    if meta.labels:
        errs.extend(validate_labels(meta.labels, f.child(path, "labels")))
    if meta.annotations:
        errs.extend(validate_annotations(meta.annotations, f.child(path, "annotations")))
    for i, fin in enumerate(meta.finalizers or ()):
        fp = f.index(f.child(path, "finalizers"), i)
        problems = is_qualified_name(fin)
        errs.extend(f.invalid(fp, fin, m) for m in problems)
        if not problems and "/" not in fin and fin not in _STANDARD_FINALIZERS:
            errs.append(f.invalid(fp, fin, "name is neither a standard finalizer name nor is it fully qualified"))
    if meta.managed_fields:
        errs.extend(validate_managed_fields(meta.managed_fields, f.child(path, "managedFields")))
    return errs


def validate_managed_fields(entries: list[Any] | None, path: str) -> list[f.FieldError]:
    """ValidateManagedFields: every entry an Apply or an Update, in FieldsV1, by a manager a field manager
    may be called. Without it a write could store entries that every client's decoder and the server's own
    field manager misread."""
    errs: list[f.FieldError] = []
    for i, entry in enumerate(entries or ()):
        if not isinstance(entry, dict):
            continue  # not an entry at all: the write's field manager drops it
        ep = f.index(path, i)
        operation = entry.get("operation") or ""
        if operation not in ("Apply", "Update"):
            errs.append(f.invalid(f.child(ep, "operation"), operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errs.append(f.invalid(f.child(ep, "fieldsType"), fields_type, "must be `FieldsV1`"))
        manager = entry.get("manager") or ""
        if isinstance(manager, str):
            errs.extend(_field_manager_errors(manager, f.child(ep, "manager")))
        subresource = entry.get("subresource") or ""
        if isinstance(subresource, str) and len(subresource) > MANAGED_SUBRESOURCE_MAX:
            errs.append(f.too_long(f.child(ep, "subresource"), MANAGED_SUBRESOURCE_MAX))
    return errs


def finalizers_added_while_deleting(new_meta: dict[str, Any], old_meta: dict[str, Any]) -> list[f.FieldError]:
    """kube-apiserver's rule for an object being deleted (its update's ObjectMeta check): finalizers may go,
    but none may be added."""
    if not old_meta.get("deletionTimestamp"):
        return []
    added = [fin for fin in new_meta.get("finalizers") or [] if fin not in (old_meta.get("finalizers") or [])]
    if not added:
        return []
    shown = ", ".join(json.dumps(fin) for fin in added)
    return [f.forbidden("metadata.finalizers", f"no new finalizers can be added if the object is being deleted, "
                                               f"found new finalizers []string{{{shown}}}")]


def _field_manager_errors(manager: str, path: str) -> list[f.FieldError]:
    """ValidateFieldManager: at most 128 bytes, every character printable (indexed in bytes, as Go ranges over
    a string)."""
    errs: list[f.FieldError] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX:
        errs.append(f.too_long(path, FIELD_MANAGER_MAX))
    if manager.isprintable():  # (every write's own entry: no character to look at one by one)
        return errs
    at = 0
    for ch in manager:
        if not ch.isprintable() and ch != " ":
            errs.append(f.invalid(path, manager, f"invalid characters at index {at}, only printable characters "
                                                 f"are accepted"))
        at += len(ch.encode())
    return errs


def validate_object_meta_update(new: Any, old: Any, path: str = "metadata") -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for attr, json_name in (("name", "name"), ("namespace", "namespace"), ("uid", "uid"),
                            ("creation_timestamp", "creationTimestamp")):
        nv, ov = getattr(new, attr) or "", getattr(old, attr) or ""
        if attr in ("uid", "creation_timestamp") and not nv:
            continue  # unset on input means "keep"; the store fills it in
        if nv != ov:
            errs.append(f.invalid(f.child(path, json_name), nv, IMMUTABLE))
    return errs


_OPERATORS_WITH_VALUES = ("In", "NotIn")


def validate_node_selector(selector: Any, path: str) -> list[f.FieldError]:
    terms_path = f.child(path, "nodeSelectorTerms")
    terms = selector.node_selector_terms or []
    if not terms:
        return [f.required(terms_path, "must have at least one node selector term")]
    errs: list[f.FieldError] = []
    for i, term in enumerate(terms):
        errs.extend(validate_node_selector_term(term, f.index(terms_path, i)))
    return errs


def validate_node_selector_term(term: Any, path: str, *, check_values: bool = True) -> list[f.FieldError]:
    """ValidateNodeSelectorTerm. ``check_values=False`` lets label values through, as for a preferred node
    affinity term (it can still match where a cluster's nodes carry such values)."""
    errs: list[f.FieldError] = []
    for j, req in enumerate(term.match_expressions or ()):
        errs.extend(_node_selector_requirement(req, f.index(f.child(path, "matchExpressions"), j), check_values))
    for j, req in enumerate(term.match_fields or ()):
        errs.extend(_node_field_selector_requirement(req, f.index(f.child(path, "matchFields"), j)))
    return errs


def _node_selector_requirement(req: Any, path: str, check_values: bool = True) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    values = req.values or []
    op = req.operator
    if op in _OPERATORS_WITH_VALUES:
        if not values:
            errs.append(f.required(f.child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(f.forbidden(f.child(path, "values"),
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(f.required(f.child(path, "values"),
                                   "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(f.invalid(f.child(path, "operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(req.key, f.child(path, "key")))
    for i, v in enumerate(values if check_values else ()):
        errs.extend(f.invalid(f.index(f.child(path, "values"), i), v, m) for m in is_label_value(v))
    return errs


def _node_field_selector_requirement(req: Any, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    values = req.values or []
    if req.operator in _OPERATORS_WITH_VALUES:
        if len(values) != 1:
            errs.append(f.required(f.child(path, "values"),
                                   "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    else:
        errs.append(f.invalid(f.child(path, "operator"), req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":
        errs.append(f.invalid(f.child(path, "key"), req.key, "not a valid field selector key"))
    else:
        for i, v in enumerate(values):
            errs.extend(f.invalid(f.index(f.child(path, "values"), i), v, m) for m in name_is_dns_subdomain(v, False))
    return errs


def _label_selector_requirement_errors(req: LabelSelectorRequirement, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if not values:
            errs.append(f.required(f.child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(f.forbidden(f.child(path, "values"),
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        errs.append(f.invalid(f.child(path, "operator"), req.operator, "not a valid selector operator"))
    errs += validate_label_name(req.key, f.child(path, "key"))
    for i, value in enumerate(values):
        errs += [f.invalid(f.index(f.child(path, "values"), i), value, m) for m in is_label_value(value)]
    return errs


def label_selector_errors(selector: LabelSelector, path: str) -> list[f.FieldError]:
    """ValidateLabelSelector (label values checked strictly, as for every workload's spec.selector)."""
    errs = validate_labels(selector.match_labels, f.child(path, "matchLabels"))
    for i, req in enumerate(selector.match_expressions or ()):
        errs += _label_selector_requirement_errors(req, f.index(f.child(path, "matchExpressions"), i))
    return errs


_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_reason_re = re.compile(_REASON_FMT)
_REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string of "
               "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'")


def validate_conditions(conditions: list[Any] | None, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions or ()):
        cp = f.index(path, i)
        if c.type in seen:
            errs.append(f.duplicate(f.child(cp, "type"), c.type))
        seen.add(c.type)
        errs.extend(validate_label_name(c.type, f.child(cp, "type")))
        if c.status not in ("False", "True", "Unknown"):
            errs.append(f.not_supported(f.child(cp, "status"), c.status, ["False", "True", "Unknown"]))
        if c.observed_generation is not None and c.observed_generation < 0:
            errs.append(f.invalid(f.child(cp, "observedGeneration"), c.observed_generation,
                                  "must be greater than or equal to zero"))
        if not c.last_transition_time:
            errs.append(f.required(f.child(cp, "lastTransitionTime"), "must be set"))
        reason = c.reason or ""
        if not reason:
            errs.append(f.required(f.child(cp, "reason"), "must be set"))
        else:
            if not _reason_re.fullmatch(reason):
                errs.append(f.invalid(f.child(cp, "reason"), reason, regex_error(
                    _REASON_MSG, _REASON_FMT, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")))
            if len(reason) > 1024:
                errs.append(f.too_long(f.child(cp, "reason"), 1024))
        if c.message and len(c.message) > 32768:
            errs.append(f.too_long(f.child(cp, "message"), 32768))
    return errs
