"""A typed view over a stored object's JSON form, so that a rule reads ``pod.deletion_timestamp`` rather than
walking ``(obj.get("metadata") or {}).get(...)``. The view holds the dict itself: writes go to the object.

A field whose JSON type is wrong reads as absent (the object was checked when it was written; a rule never
fails on a malformed object it did not write)."""

from __future__ import annotations

from typing import Any

from dralloc.server.types import Obj, ObjectKey, object_key


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


class ObjectView:
    __slots__ = ("body",)

    def __init__(self, body: Obj) -> None:
        self.body = body

    @property
    def metadata(self) -> Obj:
        return _dict(self.body.get("metadata"))

    @property
    def spec(self) -> Obj:
        return _dict(self.body.get("spec"))

    @property
    def status(self) -> Obj:
        return _dict(self.body.get("status"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    @property
    def key(self) -> ObjectKey:
        return object_key(self.namespace, self.name)

    @property
    def uid(self) -> str:
        return str(self.metadata.get("uid") or "")

    @property
    def resource_version(self) -> str:
        return str(self.metadata.get("resourceVersion") or "")

    @property
    def deletion_timestamp(self) -> str | None:
        return self.metadata.get("deletionTimestamp") or None

    @property
    def finalizers(self) -> list[str]:
        value = self.metadata.get("finalizers")
        return value if isinstance(value, list) else []

    @property
    def labels(self) -> dict[str, str]:
        return _dict(self.metadata.get("labels"))

    @property
    def annotations(self) -> dict[str, str]:
        return _dict(self.metadata.get("annotations"))
