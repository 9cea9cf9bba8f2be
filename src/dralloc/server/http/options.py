"""Query parameters and option bodies checked as kube-apiserver checks them (metav1 validation): the field
manager, delete options, and resourceVersion values."""

from __future__ import annotations

import json
import re
from typing import Any

from dralloc.server.http.errors import ApiError, bad_request
from dralloc.validation.field import FieldError, aggregate_message, forbidden, invalid, required, too_long

FIELD_MANAGER_MAX = 128
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
UINT64_MAX = (1 << 64) - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


def query_flag(query: Any, name: str) -> bool | None:
    """A boolean query parameter (watch, allowWatchBookmarks, sendInitialEvents, force, orphanDependents) as
    kube-apiserver decodes one: absent is None; "0" and any casing of "false" are false; every other value,
    the empty one and Python clients' "True" included, is true."""
    value = query.get(name)
    if value is None:
        return None
    return not (value == "0" or value.lower() == "false")


def options_invalid(kind: str, errors: list[FieldError]) -> ApiError:
    """422 for invalid CreateOptions, UpdateOptions, PatchOptions or DeleteOptions (group meta.k8s.io)."""
    causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in errors]
    return ApiError(422, f'{kind}.meta.k8s.io "" is invalid: {aggregate_message(errors)}',
                    details={"group": "meta.k8s.io", "kind": kind, "causes": causes})


def field_manager_errors(manager: str) -> list[FieldError]:
    errors: list[FieldError] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX:
        errors.append(too_long("fieldManager", FIELD_MANAGER_MAX))
    for i, ch in enumerate(manager):
        if not ch.isprintable():
            errors.append(invalid("fieldManager", manager, f"invalid characters at index {i}, only printable "
                                                           f"characters are accepted"))
            break
    return errors


def field_manager(query: Any, user_agent: str) -> str:
    """The manager a write is recorded under: fieldManager, else the client's User-Agent up to its first
    "/" (as kube-apiserver names managers of clients that send none)."""
    manager = query.get("fieldManager") or user_agent.split("/", 1)[0][:FIELD_MANAGER_MAX]
    return manager or "unknown"


def check_write_options(verb: str, query: Any, apply_patch: bool = False) -> None:
    """CreateOptions / UpdateOptions / PatchOptions: fieldManager (and force, for patches)."""
    kind = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions"}[verb]
    manager = query.get("fieldManager") or ""
    errors = []
    if verb == "patch":
        if not apply_patch and query.get("force") is not None:
            errors.append(forbidden("force", "may not be specified for non-apply patch"))
        if apply_patch and not manager:
            errors.append(required("fieldManager", "is required for apply patch"))
    errors += field_manager_errors(manager)
    if errors:
        raise options_invalid(kind, errors)


def check_delete_options(options: dict[str, Any], query: Any) -> None:
    """DeleteOptions from the body and the query: a known propagationPolicy, not together with
    orphanDependents, and a non-negative integer gracePeriodSeconds."""
    policy = options.get("propagationPolicy", query.get("propagationPolicy"))
    orphan = options.get("orphanDependents", query.get("orphanDependents"))
    grace = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if policy is not None and not isinstance(policy, str):
        raise bad_request("DeleteOptions.propagationPolicy must be a string")
    if grace is not None:
        try:
            grace = int(grace) if not isinstance(grace, bool) else None
        except (TypeError, ValueError):
            grace = None
        if grace is None:
            raise bad_request("DeleteOptions.gracePeriodSeconds must be an integer")
    errors = []
    if orphan is not None and policy is not None:
        errors.append(invalid("", policy, "OrphanDependents and DeletionPropagation cannot be both set"))
    if policy is not None and policy not in PROPAGATION_POLICIES:
        errors.append(invalid("", policy, 'DeletionPropagation need to be one of "Foreground", "Background", '
                                          '"Orphan" or nil'))
    if errors:
        raise options_invalid("DeleteOptions", errors)


def int64_param(query: Any, name: str) -> int | None:
    """A query parameter kube-apiserver decodes with Go's strconv.ParseInt (ListOptions' limit and
    timeoutSeconds): absent or empty is None; anything but a decimal int64 is a 400 with ParseInt's text
    (Python's int() would take "1_0", " 1" or other scripts' digits)."""
    value = query.get(name)
    if not value:
        return None
    if not _DECIMAL.fullmatch(value):
        raise bad_request(f"strconv.ParseInt: parsing {json.dumps(value)}: invalid syntax")
    number = int(value)
    if not -(1 << 63) <= number < (1 << 63):
        raise bad_request(f"strconv.ParseInt: parsing {json.dumps(value)}: value out of range")
    return number


def parse_resource_version(value: str) -> int:
    """A resourceVersion as kube-apiserver parses it (an unsigned 64-bit integer); 400 otherwise."""
    if not value.isdigit() or int(value) > UINT64_MAX:
        raise bad_request(f"invalid resource version {value!r}: must be an unsigned integer (a resourceVersion "
                          f"the server returned)")
    return int(value)
