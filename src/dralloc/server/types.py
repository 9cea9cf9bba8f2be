"""The shapes the server passes around: a stored object in its JSON form, and the keys that name one."""

from __future__ import annotations

from typing import Any, NewType

Obj = dict[str, Any]  # an object as stored: its v1 JSON form, decoded

ObjectKey = NewType("ObjectKey", str)  # "<namespace>/<name>", or "<name>" for a cluster-scoped object
PodKey = NewType("PodKey", str)  # a pod's ObjectKey: "<namespace>/<name>"


def object_key(namespace: str, name: str) -> ObjectKey:
    """The key of an object, as client-go's MetaNamespaceKeyFunc writes it."""
    return ObjectKey(f"{namespace}/{name}" if namespace else name)


def pod_key(namespace: str, name: str) -> PodKey:
    return PodKey(f"{namespace}/{name}")
