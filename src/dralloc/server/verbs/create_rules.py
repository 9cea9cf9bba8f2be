"""kube-apiserver's create rules that are not validation: a create may not carry a resourceVersion (etcd3's store
refuses it), a generated name that is taken is drawn again, and repeated owner references are dropped with a
warning (the create, update and patch handlers)."""

from __future__ import annotations

from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.server.registry.kinds import Resource

# etcd3's store refuses a create that carries a resourceVersion; kube-apiserver passes the plain error on, which
# makes a 500 without a reason. The client's mistake gets the same message here with a 400 (BadRequest): bad
# input never gives a server error.
RESOURCE_VERSION_ON_CREATE = "resourceVersion should not be set on objects to be created"
NAME_GENERATION_ATTEMPTS = 8  # kube-apiserver's tries at a free generated name before giving up


def resource_version_set(data: dict[str, Any]) -> bool:
    """A resourceVersion etcd3 would read as a version (an unsigned integer other than 0; anything else is
    ignored and overwritten)."""
    rv = (data.get("metadata") or {}).get("resourceVersion")
    return isinstance(rv, str) and rv.isascii() and rv.isdigit() and 0 < int(rv) < 1 << 64


def generate_name_conflict(resource: Resource, name: str) -> ApiError:
    """The answer once NAME_GENERATION_ATTEMPTS generated names were all taken (the client may retry)."""
    return ApiError(409, f'{resource.group_resource} "{name}" already exists, the server was not able to generate '
                         f'a unique name for the object', "AlreadyExists",
                    details={"name": name, "group": resource.group, "kind": resource.name, "retryAfterSeconds": 1})


# kube-apiserver's warning when it drops repeated owner references (create and update: before admission;
# patch: after it)
DUPLICATE_OWNERS = (".metadata.ownerReferences contains duplicate entries{}; API server dedups owner references "
                    "in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate "
                    "UID(s) observed: {}")


def without_duplicate_owners(data: Any, after_admission: bool = False) -> tuple[Any, list[str]]:
    """``data`` without repeated owner references (equal to an earlier one of the same uid), and the warning
    kube-apiserver gives when it drops some."""
    meta = data.get("metadata") if isinstance(data, dict) else None
    if not isinstance(meta, dict):
        return data, []
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list) or len(refs) < 2 or \
            not all(isinstance(r, dict) and isinstance(r.get("uid"), str) for r in refs):
        return data, []  # nothing to drop (malformed references are refused when the object is decoded)
    kept: list[dict[str, Any]] = []
    seen: set[str] = set()
    duplicates: list[str] = []
    for ref in refs:
        if ref["uid"] in seen and ref in kept:
            duplicates.append(ref["uid"])
            continue
        seen.add(ref["uid"])
        kept.append(ref)
    if not duplicates:
        return data, []
    where = " after mutating admission happens" if after_admission else ""
    return ({**data, "metadata": {**meta, "ownerReferences": kept}},
            [DUPLICATE_OWNERS.format(where, ", ".join(duplicates))])
