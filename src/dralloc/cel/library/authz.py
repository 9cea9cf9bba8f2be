"""The Kubernetes authorization library (library/authz.go): its functions need an authorizer, which the
DRA environment does not provide, so every call matches no overload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.cel.library.registry import MEMBERS
from dralloc.cel.values import no_overload


def _no_authorizer(name: str) -> Callable[..., Any]:
    # the authorization library's functions need an authorizer, which the DRA environment does not provide
    def call(*args: Any) -> Any:
        raise no_overload(name, *args)

    call.__name__ = name
    return call


for _authz in ("path", "group", "serviceAccount", "resource", "subresource", "namespace", "name", "check",
               "errored", "error", "allowed", "reason", "fieldSelector", "labelSelector"):
    MEMBERS.setdefault(_authz, _no_authorizer(_authz))
