"""Strategic merge patch, with the patch merge keys the served types declare (``patchStrategy:"merge"``).

Every kube-apiserver type has its Go struct's strategies: ObjectMeta's (owner references by ``uid``,
finalizers as a set) for all; the Pod's and Node's lists; ResourceClaim's ``status.reservedFor`` (by ``uid``)
and DeviceTaintRule's ``status.conditions`` (by ``type``). Events (core/v1 and events.k8s.io/v1) declare none
of their own: only ObjectMeta's apply.

Lists with a merge key (containers by ``name``, ports by ``containerPort``, ...) are merged element by element;
other lists are replaced whole, maps are merged and ``null`` deletes a key (as a JSON merge patch). The
directives client-side ``kubectl apply`` and ``kubectl patch`` send are honoured: ``$patch: delete`` (an
element or a map), ``$patch: replace``, ``$retainKeys``, ``$setElementOrder/<list>`` and
``$deleteFromPrimitiveList/<list>``; lists of primitives with the merge strategy (finalizers) are unions.
"""

from __future__ import annotations

import copy
from typing import Any

from dralloc.server.http.errors import ApiError

# (path of a list, as keys from the object's root with "[]" for list elements) → its patch merge key.
_CONTAINER = {"ports": "containerPort", "env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
              "resizePolicy": "resourceName"}
MERGE_KEYS: dict[str, dict[tuple[str, ...], str]] = {"Pod": {
    ("spec", "containers"): "name", ("spec", "initContainers"): "name", ("spec", "ephemeralContainers"): "name",
    ("spec", "volumes"): "name", ("spec", "imagePullSecrets"): "name", ("spec", "hostAliases"): "ip",
    ("spec", "topologySpreadConstraints"): "topologyKey", ("spec", "resourceClaims"): "name",
    ("spec", "schedulingGates"): "name", ("status", "conditions"): "type", ("status", "podIPs"): "ip",
    ("status", "hostIPs"): "ip", ("status", "resourceClaimStatuses"): "name",
    **{("spec", kind, "[]", field): key for kind in ("containers", "initContainers", "ephemeralContainers")
       for field, key in _CONTAINER.items()},
}, "Node": {("status", "conditions"): "type", ("status", "addresses"): "type", ("spec", "podCIDRs"): ""},
    "ResourceClaim": {("status", "reservedFor"): "uid"}, "DeviceTaintRule": {("status", "conditions"): "type"}}
# The workloads: their pod template's spec merges as a pod's does (containers by name, env by name, ...)
_POD_SPEC_KEYS = {path[1:]: key for path, key in MERGE_KEYS["Pod"].items() if path[0] == "spec"}


def _template_keys(*at: str) -> dict[tuple[str, ...], str]:
    return {(*at, "spec", *path): key for path, key in _POD_SPEC_KEYS.items()}


MERGE_KEYS.update({kind: {**_template_keys("spec", "template"), ("status", "conditions"): "type"}
                   for kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job")})
MERGE_KEYS["CronJob"] = _template_keys("spec", "jobTemplate", "spec", "template")
MERGE_KEYS["ReplicationController"] = {**_template_keys("spec", "template"), ("status", "conditions"): "type"}
MERGE_KEYS["HorizontalPodAutoscaler"] = {("status", "conditions"): "type"}
# admissionregistration.k8s.io: webhooks by name, and their (and a policy's) match conditions and variables
MERGE_KEYS.update({kind: {("webhooks",): "name", ("webhooks", "[]", "matchConditions"): "name"}
                   for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")})
MERGE_KEYS["ValidatingAdmissionPolicy"] = {("spec", "matchConditions"): "name", ("spec", "variables"): "name"}
# Every object: owner references by uid; finalizers are a set of strings.
COMMON_KEYS: dict[tuple[str, ...], str] = {("metadata", "ownerReferences"): "uid", ("metadata", "finalizers"): ""}


def strategic_merge_patch(current: dict[str, Any], patch: dict[str, Any], kind: str) -> dict[str, Any]:
    """``current`` patched; ``current`` is left as it is (the maps and lists the patch changes are copied, the
    rest is shared, as a JSON merge patch shares it)."""
    keys = {**COMMON_KEYS, **MERGE_KEYS.get(kind, {})}
    return _merge_map(current, patch, (), keys)


def _bad(message: str) -> ApiError:
    return ApiError(400, f"invalid strategic merge patch: {message}")


def _merge_map(target: Any, patch: dict[str, Any], path: tuple[str, ...],
               keys: dict[tuple[str, ...], str]) -> Any:
    target = dict(target) if isinstance(target, dict) else {}  # copied: the caller's map is not changed
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive is not None:
        raise _bad(f"unknown patch type {directive!r} in map")
    retain = patch.get("$retainKeys")
    if retain is not None:
        if not isinstance(retain, list):
            raise _bad("$retainKeys must be a list")
        target = {k: v for k, v in target.items() if k in retain}
    for key, value in patch.items():
        if not isinstance(key, str):
            raise _bad("keys must be strings")
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            continue  # applied after the list itself is merged, below
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            if isinstance(target.get(name), list) and isinstance(value, list):
                target[name] = [v for v in target[name] if v not in value]
            continue
        if value is None:
            target.pop(key, None)
            continue
        child = path + (key,)
        if isinstance(value, dict):
            merged = _merge_map(target.get(key), value, child, keys)
            if merged is None:
                target.pop(key, None)
            else:
                target[key] = merged
        elif isinstance(value, list) and child in keys:
            target[key] = _merge_list(target.get(key), value, child, keys)
        else:
            target[key] = copy.deepcopy(value)
    for key, order in patch.items():
        if isinstance(key, str) and key.startswith("$setElementOrder/") and isinstance(order, list):
            name = key.split("/", 1)[1]
            if isinstance(target.get(name), list):
                target[name] = _ordered(target[name], order, keys.get(path + (name,), ""))
    return target


def _merge_list(target: Any, patch: list[Any], path: tuple[str, ...], keys: dict[tuple[str, ...], str]) -> list[Any]:
    current = list(target) if isinstance(target, list) else []
    key = keys[path]
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [copy.deepcopy(p) for p in patch if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    if not key:  # a set of primitives: union, in order
        return current + [copy.deepcopy(p) for p in patch if p not in current]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise _bad(f"an element of {'.'.join(path)} has no merge key {key!r}")
        index = next((i for i, c in enumerate(current) if isinstance(c, dict) and c.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                current.pop(index)
            continue
        if index is None:
            current.append(_merge_map({}, item, path + ("[]",), keys))
        else:
            current[index] = _merge_map(current[index], item, path + ("[]",), keys)
    return current


def _ordered(items: list[Any], order: list[Any], key: str) -> list[Any]:
    """``items`` in the order ``$setElementOrder`` gives; elements it does not name keep their place after."""
    def ident(item: Any) -> Any:
        value = item.get(key) if key and isinstance(item, dict) else item
        return value if isinstance(value, (str, int, float, bool)) else None

    wanted = [o.get(key) if key and isinstance(o, dict) else o for o in order]
    rank = {w: i for i, w in enumerate(wanted) if isinstance(w, (str, int, float, bool))}
    placed = sorted((i for i in items if ident(i) in rank), key=lambda i: rank[ident(i)])
    return placed + [i for i in items if ident(i) not in rank]
