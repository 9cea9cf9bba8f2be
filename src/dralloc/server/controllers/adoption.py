"""Adoption and release, as kube-controller-manager's ControllerRefManager (``controller_ref_manager.go``)
claims objects for a controller: a ReplicaSet, StatefulSet, DaemonSet or Job its pods, a Deployment its
ReplicaSets.

* An object it controls whose labels its selector no longer matches (``kubectl label pod x app-``) is
  released: its controller reference removed (and a Job's tracking finalizer with it), unless the controller
  is being deleted.
* An orphan (no controller reference) in its namespace that its selector matches is adopted: the controller
  reference added (and a Job's tracking finalizer), unless the orphan or the controller is being deleted.
* An object another controller controls is never touched.

Adoption and release write the object's ``ownerReferences`` only (no events, as upstream), with the object's
uid as precondition."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from dralloc.api.meta import LabelSelector
from dralloc.server.controllers.workload_pods import Obj, controller_ref, controller_uid, meta
from dralloc.server.controllers.writes import Writer
from dralloc.store import NotFound
from dralloc.validation.workloads import selector_matches

Match = Callable[[Obj], bool]


def selector_of(resource: str, owner: Obj) -> LabelSelector | None:
    """The controller's selector, decoded as the typed decode of the whole object decodes it (the same model
    and rules); None: it selects nothing, or does not decode. Only ``spec.selector`` is read: a stored
    controller passed validation, so the rest of it decodes too, and a pass need not decode every version of
    it (each status write makes one) to read the one field it wants."""
    spec = owner.get("spec")
    raw = spec.get("selector") if isinstance(spec, dict) else None
    if raw is None:
        return None
    if resource == "replicationcontrollers":  # a label map
        labels = _convert(raw, dict[str, str])
        return LabelSelector(match_labels=labels) if labels else None
    selector = _convert(raw, LabelSelector)
    return selector if isinstance(selector, LabelSelector) else None


def _convert(raw: Any, model: Any) -> Any:
    try:
        return msgspec.convert(raw, model, str_keys=True)
    except (msgspec.ValidationError, ValueError, TypeError):
        return None


def matcher(resource: str, owner: Obj) -> Match | None:
    """Whether the owner's selector matches an object's labels (None: the owner could not be read; it claims
    nothing and releases nothing)."""
    selector = selector_of(resource, owner)
    if selector is None:
        return None

    def match(obj: Obj) -> bool:
        labels = meta(obj).get("labels")
        return selector_matches(selector, labels if isinstance(labels, dict) else {})
    return match


def _being_deleted(writer: Writer, resource: str, owner: Obj) -> bool:
    """RecheckDeletionTimestamp: the controller as stored now (it may have just been deleted)."""
    try:
        fresh = writer.store.get(resource, str(meta(owner).get("namespace") or ""), str(meta(owner).get("name")))
    except NotFound:
        return True
    return bool(meta(fresh).get("deletionTimestamp")) or meta(fresh).get("uid") != meta(owner).get("uid")


def claim(writer: Writer, resource: str, owner_resource: str, owner: Obj, owned: list[Obj], orphans: list[Obj],
          match: Match, finalizer: str | None = None) -> list[Obj]:
    """ClaimObjects: the objects ``owner`` controls after adopting the matching ``orphans`` (of its
    namespace) and releasing the ``owned`` ones that no longer match; as written where it wrote."""
    uid = str(meta(owner).get("uid"))
    deleting = bool(meta(owner).get("deletionTimestamp"))
    claimed: list[Obj] = []
    for obj in owned:
        if match(obj):
            claimed.append(obj)
        elif not deleting:
            _release(writer, resource, obj, uid, finalizer)
    if deleting:
        return claimed
    wanted = [o for o in orphans if match(o) and not meta(o).get("deletionTimestamp")]
    if wanted and not _being_deleted(writer, owner_resource, owner):
        ref = controller_ref(owner)
        for obj in wanted:
            adopted = _adopt(writer, resource, obj, ref, finalizer)
            if adopted is not None:
                claimed.append(adopted)
    return claimed


def _adopt(writer: Writer, resource: str, obj: Obj, ref: Obj, finalizer: str | None) -> Obj | None:
    """AdoptPod / AdoptReplicaSet: the controller reference added, and a Job's tracking finalizer (None: the
    object went, or another controller took it meanwhile)."""
    done: list[Obj] = []

    def mutate(current: Obj) -> Obj | None:
        if controller_uid(current) is not None or meta(current).get("deletionTimestamp"):
            return None
        refs = [r for r in meta(current).get("ownerReferences") or [] if not (isinstance(r, dict)
                                                                              and r.get("uid") == ref["uid"])]
        current["metadata"]["ownerReferences"] = [*refs, dict(ref)]
        finalizers = current["metadata"].get("finalizers") or []
        if finalizer is not None and finalizer not in finalizers:
            current["metadata"]["finalizers"] = [*finalizers, finalizer]
        done.append(current)
        return current

    written = writer.update(resource, str(meta(obj).get("namespace") or ""), str(meta(obj).get("name")), mutate,
                            uid=str(meta(obj).get("uid")))
    return written if done and written is not None else None


def _release(writer: Writer, resource: str, obj: Obj, owner_uid: str, finalizer: str | None) -> None:
    """ReleasePod / ReleaseReplicaSet: the owner's reference removed (a Job's pod loses its tracking finalizer
    too)."""
    def mutate(current: Obj) -> Obj | None:
        refs = meta(current).get("ownerReferences") or []
        kept = [r for r in refs if not (isinstance(r, dict) and r.get("uid") == owner_uid)]
        if len(kept) == len(refs):
            return None
        if kept:
            current["metadata"]["ownerReferences"] = kept
        else:
            current["metadata"].pop("ownerReferences", None)
        finalizers = current["metadata"].get("finalizers")
        if finalizer is not None and isinstance(finalizers, list) and finalizer in finalizers:
            rest = [f for f in finalizers if f != finalizer]
            if rest:
                current["metadata"]["finalizers"] = rest
            else:
                current["metadata"].pop("finalizers")
        return current

    writer.update(resource, str(meta(obj).get("namespace") or ""), str(meta(obj).get("name")), mutate,
                  uid=str(meta(obj).get("uid")))
