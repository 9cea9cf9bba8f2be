"""The ControllerRevision strategy (apps/v1), as kube-apiserver's: stored as sent (``data`` is any JSON, a
patch that puts a StatefulSet's or DaemonSet's template back), validated as ValidateControllerRevision does
(``data`` is mandatory, ``revision`` is not negative) and, on update, its ``data`` never changes (the revision
number may: a controller rolling back renumbers the revision it reuses). No generation, no status."""

from __future__ import annotations

from typing import Any

from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.validation import field as f
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta
from dralloc.validation.quantities import NEGATIVE

IMMUTABLE = "field is immutable"


def revision_errors(obj: Obj) -> list[f.FieldError]:
    errors: list[f.FieldError] = []
    if obj.get("data") is None:
        errors.append(f.required("data", "data is mandatory"))
    revision = obj.get("revision", 0)
    if isinstance(revision, int) and revision < 0:
        errors.append(f.invalid("revision", revision, NEGATIVE))
    return errors


class ControllerRevisionStrategy(CoreStrategy):
    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[f.FieldError]:
        return (validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=namespaced)
                + revision_errors(stored or {}))

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[f.FieldError]:
        errors = super().update_errors(merged, old, sub, typed_meta) + revision_errors(merged)
        if merged.get("data") != old.get("data"):
            errors.append(f.invalid("data", merged.get("data"), IMMUTABLE))
        return errors


STRATEGY = ControllerRevisionStrategy()
