"""The pod-specific annotation rules of kube-apiserver (ValidatePodSpecificAnnotations and
ValidatePodSpecificAnnotationUpdates in pkg/apis/core/validation, Kubernetes 1.36), on a pod's annotations and
spec as JSON: a mirror pod's annotation needs a node and is fixed once set, the pod deletion cost is a 32-bit
integer, the deprecated seccomp and AppArmor annotations hold profiles (AppArmor ones for containers of the
pod) and AppArmor annotations are fixed once the pod exists.

Upstream walks the annotations in Go's map order; here they are taken in sorted order so that the same pod
always gets the same message. Not checked: the long-deprecated tolerations annotation
(``scheduler.alpha.kubernetes.io/tolerations``), whose errors are Go's JSON decoder's.
"""

from __future__ import annotations

from typing import Any

from dralloc.validation import field as f

MIRROR = "kubernetes.io/config.mirror"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_PATH = "metadata.annotations"
_DIGITS = frozenset("0123456789")


def _annotations(value: Any) -> dict[str, str]:
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def deletion_cost_valid(value: str) -> bool:
    """helper.GetDeletionCostFromPodAnnotations: a base-10 int32, no "+" and no leading zeros before the
    first digit (a "-" may come first)."""
    if not value or not (value[0] == "-" or value == "0" or value[0] in "123456789"):
        return False
    digits = value[1:] if value[0] == "-" else value
    if not digits or not set(digits) <= _DIGITS:
        return False
    significant = digits.lstrip("0")
    if len(significant) > 10:
        return False
    number = int(significant or "0")
    return number <= (2**31 if value[0] == "-" else 2**31 - 1)


def _descending_path_errors(path: str, local: str) -> list[f.FieldError]:
    """validateLocalDescendingPath: relative, and never up a directory."""
    errs = []
    if local.startswith("/"):
        errs.append(f.invalid(path, local, "must be a relative path"))
    if ".." in local.split("/"):
        errs.append(f.invalid(path, local, "must not contain '..'"))
    return errs


def _seccomp_errors(path: str, profile: str) -> list[f.FieldError]:
    if profile in ("runtime/default", "docker/default", "unconfined"):
        return []
    if profile.startswith("localhost/"):
        return _descending_path_errors(path, profile[len("localhost/"):])  # (the bad value: that path)
    return [f.invalid(path, profile, "must be a valid seccomp profile")]


def _container_names(spec: dict[str, Any]) -> set[str]:
    names = set()
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        containers = spec.get(kind)
        for c in containers if isinstance(containers, list) else []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                names.add(c["name"])
    return names


def pod_annotation_errors(annotations: Any, spec: Any, allow_invalid_deletion_cost: bool = False) -> list[f.FieldError]:
    """ValidatePodSpecificAnnotations. ``allow_invalid_deletion_cost``: the pod being updated already had an
    invalid deletion cost, which an update may keep."""
    values = _annotations(annotations)
    if not values:
        return []  # (most pods: no annotation to look at)
    spec = spec if isinstance(spec, dict) else {}
    errs: list[f.FieldError] = []
    if MIRROR in values and not spec.get("nodeName"):
        errs.append(f.invalid(f.key(_PATH, MIRROR), values[MIRROR],
                              "must set spec.nodeName if mirror pod annotation is set"))
    if not allow_invalid_deletion_cost and DELETION_COST in values and not deletion_cost_valid(values[DELETION_COST]):
        errs.append(f.invalid(f.key(_PATH, DELETION_COST), values[DELETION_COST], "must be a 32bit integer"))
    if SECCOMP_POD in values:
        errs += _seccomp_errors(f.child(_PATH, SECCOMP_POD), values[SECCOMP_POD])
    for k in sorted(values):
        if k.startswith(SECCOMP_CONTAINER_PREFIX):
            errs += _seccomp_errors(f.child(_PATH, k), values[k])
    names: set[str] | None = None  # (the containers' names, gathered for the first AppArmor annotation)
    for k in sorted(values):
        if not k.startswith(APPARMOR_PREFIX):
            continue
        if names is None:
            names = _container_names(spec)
        container, profile = k[len(APPARMOR_PREFIX):], values[k]
        if container not in names:
            errs.append(f.invalid(f.key(_PATH, k), container, "container not found"))
        if profile not in ("", "runtime/default", "unconfined") and not profile.startswith("localhost/"):
            errs.append(f.invalid(f.key(_PATH, k), profile, f"invalid AppArmor profile name: {f.go_quote(profile)}"))
    return errs


def annotation_change_errors(new: Any, old: Any) -> list[f.FieldError]:
    """AppArmor annotations and the mirror pod annotation may not be added, changed or removed."""
    after, before = _annotations(new), _annotations(old)
    errs: list[f.FieldError] = []
    for k in sorted(before):
        if after.get(k) == before[k]:
            continue
        if k.startswith(APPARMOR_PREFIX):
            errs.append(f.forbidden(f.key(_PATH, k), "may not remove or update AppArmor annotations"))
        if k == MIRROR:
            errs.append(f.forbidden(f.key(_PATH, k), "may not remove or update mirror pod annotation"))
    for k in sorted(after):
        if k in before:
            continue
        if k.startswith(APPARMOR_PREFIX):
            errs.append(f.forbidden(f.key(_PATH, k), "may not add AppArmor annotations"))
        if k == MIRROR:
            errs.append(f.forbidden(f.key(_PATH, k), "may not add mirror pod annotation"))
    return errs


def keeps_invalid_deletion_cost(old: Any) -> bool:
    """Whether an update may keep an invalid deletion cost: the pod it replaces already had one."""
    before = _annotations(old)
    return DELETION_COST in before and not deletion_cost_valid(before[DELETION_COST])


def pod_annotation_update_errors(new: Any, old: Any, spec: Any) -> list[f.FieldError]:
    """ValidatePodSpecificAnnotationUpdates: the changes no update may make, then the new annotations' own
    rules."""
    return annotation_change_errors(new, old) + pod_annotation_errors(new, spec, keeps_invalid_deletion_cost(old))
