"""ControllerRevisions, as kube-controller-manager's history package (``pkg/controller/history``) and the
StatefulSet and DaemonSet controllers keep them: a revision's ``data`` is the patch that puts the owner's pod
template back (``{"spec": {"template": {..., "$patch": "replace"}}}``), what ``kubectl rollout undo`` sends.

Names: a StatefulSet's revision is ``<set>-<hash>``, the hash upstream's HashControllerRevision (FNV-1 32 of
the data's bytes and the collision count, its decimal digits spelled with rand.SafeEncodeString's alphabet);
the data's bytes are Go's json.Marshal of it (keys sorted, compact, ``<``, ``>`` and ``&`` escaped). The name
is kube-controller-manager's when its JSON of the template is the same as dralloc's stored one (the same
defaults and fields), which is not checked here. A DaemonSet's revision is ``<set>-<pod template hash>``, the
hash its pods' ``controller-revision-hash`` label carries (dralloc's own template hash, as for
Deployments)."""

from __future__ import annotations

from collections.abc import Iterable

from dralloc.controllers.names import fnv32, go_json, safe_encode
from dralloc.controllers.workloads import REVISION_HASH
from dralloc.server.controllers.workload_pods import Obj, controller_ref, meta, spec_of
from dralloc.server.controllers.writes import Writer
from dralloc.server.json_copy import json_copy
from dralloc.store import Conflict

MAX_PREFIX = 223  # ControllerRevisionName keeps at most this much of the owner's name


def revision_hash(data: bytes, collision_count: int | None) -> str:
    """HashControllerRevision: the data, then the collision count's digits when there is one."""
    if collision_count is not None:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32(data)))


def revision_name(owner: str, hash_: str) -> str:
    return f"{owner[:MAX_PREFIX]}-{hash_}"


def template_patch(owner: Obj) -> Obj:
    """getPatch: the owner's pod template, to replace the whole template (an unset creationTimestamp, which
    clients send as null, is left out as a zero time is)."""
    template = json_copy(spec_of(owner).get("template") or {})
    template_meta = template.get("metadata")
    if isinstance(template_meta, dict) and template_meta.get("creationTimestamp") is None:
        template_meta.pop("creationTimestamp", None)
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def data_bytes(revision: Obj) -> bytes:
    return go_json(revision.get("data"))


def template_of(revision: Obj) -> Obj:
    """ApplyRevision's result for the template: the one the revision's data puts back."""
    data = revision.get("data")
    template = ((data.get("spec") or {}).get("template") if isinstance(data, dict) else None) or {}
    return {k: v for k, v in template.items() if k != "$patch"} if isinstance(template, dict) else {}


def number(revision: Obj) -> int:
    value = revision.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def sort_revisions(revisions: Iterable[Obj]) -> list[Obj]:
    """SortControllerRevisions: by revision, then creation time, then name."""
    return sorted(revisions, key=lambda r: (number(r), str(meta(r).get("creationTimestamp") or ""),
                                            str(meta(r).get("name"))))


def equal(a: Obj, b: Obj) -> bool:
    """EqualRevision: the same hash label (when both have one) and the same data."""
    hash_a = (meta(a).get("labels") or {}).get(REVISION_HASH)
    hash_b = (meta(b).get("labels") or {}).get(REVISION_HASH)
    if hash_a is not None and hash_b is not None and hash_a != hash_b:
        return False
    return data_bytes(a) == data_bytes(b)


def new_revision(owner: Obj, revision: int, name: str, hash_: str) -> Obj:
    """NewControllerRevision: the template's labels and the hash label, the owner's annotations, a controller
    reference to it."""
    template_meta = (spec_of(owner).get("template") or {}).get("metadata") or {}
    revision_meta: Obj = {"name": name, "namespace": meta(owner).get("namespace"),
                          "labels": {**(template_meta.get("labels") or {}), REVISION_HASH: hash_}}
    if meta(owner).get("annotations"):
        revision_meta["annotations"] = dict(meta(owner)["annotations"])
    revision_meta["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": revision_meta,
            "data": template_patch(owner), "revision": revision}


def create(writer: Writer, owner: Obj, revision: Obj, collision_count: int) -> tuple[Obj, int]:
    """CreateControllerRevision: named by the hash of its data and the collision count; a name taken by a
    revision of other data counts a collision and tries the next name. The revision made (or found) and the
    collision count."""
    data = data_bytes(revision)
    namespace = str(meta(owner).get("namespace") or "default")
    while True:
        name = revision_name(str(meta(owner).get("name")), revision_hash(data, collision_count))
        try:
            made = writer.create("controllerrevisions", namespace,
                                 {**revision, "metadata": {**revision["metadata"], "name": name}})
            return made, collision_count
        except Conflict:
            existing = writer.store.get("controllerrevisions", namespace, name)
            if data_bytes(existing) == data:
                return existing, collision_count
            collision_count += 1


def renumber(writer: Writer, revision: Obj, to: int) -> Obj:
    """UpdateControllerRevision: the revision reused as the newest."""
    def mutate(current: Obj) -> Obj | None:
        if number(current) == to:
            return None
        current["revision"] = to
        return current

    written = writer.update("controllerrevisions", str(meta(revision).get("namespace") or ""),
                            str(meta(revision).get("name")), mutate, uid=str(meta(revision).get("uid")))
    return written if written is not None else {**revision, "revision": to}


def delete(writer: Writer, revision: Obj) -> None:
    writer.delete("controllerrevisions", str(meta(revision).get("namespace") or ""), str(meta(revision).get("name")),
                  uid=str(meta(revision).get("uid")))


def history_limit(owner: Obj) -> int:
    value = spec_of(owner).get("revisionHistoryLimit")
    return value if isinstance(value, int) and value >= 0 else 10
