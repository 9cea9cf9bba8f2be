"""``meta.k8s.io`` PartialObjectMetadata responses: the metadata alone, which metadata-only clients (client-go's
metadata informers, kube-controller-manager's garbage collector, controller-runtime's metadata watches) ask
for with ``Accept: application/json;as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1``."""

from __future__ import annotations

from typing import Any

from dralloc.server.http.errors import ApiError
from dralloc.server.http.routing import Target

OBJECT = "PartialObjectMetadata"
LIST = "PartialObjectMetadataList"


def partial_object(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"kind": OBJECT, "apiVersion": f"meta.k8s.io/{version}", "metadata": obj.get("metadata") or {}}


def partial_list(items: list[dict[str, Any]], meta: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"kind": LIST, "apiVersion": f"meta.k8s.io/{version}", "metadata": meta,
            "items": [partial_object(item, version) for item in items]}


def _go_type(t: Target, list_: bool) -> str:
    """The Go type kube-apiserver names in its message: the internal type of the resource's group."""
    group = t.resource.group
    package = "core" if group in ("", "events.k8s.io") else group.split(".")[0]
    return f"*{package}.{t.resource.kind}{'List' if list_ else ''}"


def not_a_list(t: Target) -> ApiError:
    return ApiError(406, f"you requested {LIST}, but the requested object is not a list ({_go_type(t, False)})")


def a_list(t: Target) -> ApiError:
    return ApiError(406, f"you requested {OBJECT}, but the requested object is a list ({_go_type(t, True)})")
