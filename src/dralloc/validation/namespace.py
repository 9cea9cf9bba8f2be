"""A Namespace's own rule of kube-apiserver (core validation ValidateNamespace), past its metadata (a DNS label
name): the finalizers of its spec; and the phase a status write leaves."""

from __future__ import annotations

from typing import Any

from dralloc.validation import field as f
from dralloc.validation.formats import is_qualified_name

STANDARD_FINALIZERS = frozenset(("kubernetes", "orphan", "foregroundDeletion"))


def spec_finalizer_errors(spec: Any, indexed: bool) -> list[f.FieldError]:
    """``spec.finalizers`` must be qualified names, and those without a prefix standard ones (``kubernetes``...).
    A create reports them at ``spec.finalizers``, ``/finalize`` at ``spec.finalizers[i]``, as upstream does."""
    errors: list[f.FieldError] = []
    finalizers = (spec.get("finalizers") if isinstance(spec, dict) else None) or []
    for i, name in enumerate(finalizers if isinstance(finalizers, list) else []):
        value = str(name)
        where = f.index("spec.finalizers", i) if indexed else "spec.finalizers"
        errors.extend(f.invalid(where, value, m) for m in is_qualified_name(value))
        if "/" not in value and value not in STANDARD_FINALIZERS:
            errors.append(f.invalid(where, value, "name is neither a standard finalizer name nor is it fully "
                                                  "qualified"))
    return errors


def status_errors(ns: Any) -> list[f.FieldError]:
    """ValidateNamespaceStatusUpdate: the phase a status write leaves must be Active, or Terminating once the
    namespace is being deleted (upstream's path is ``status.Phase``, capital P)."""
    status = ns.get("status") if isinstance(ns.get("status"), dict) else {}
    meta = ns.get("metadata") if isinstance(ns.get("metadata"), dict) else {}
    phase = status.get("phase") or ""
    if not meta.get("deletionTimestamp"):
        if phase != "Active":
            return [f.invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty")]
    elif phase != "Terminating":
        return [f.invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")]
    return []
