"""The core/v1 Endpoints strategy: a client's Endpoints (a Service without a selector, whose endpoints no
controller writes) stored as sent with decoding's default (a port's protocol TCP) and validated as
kube-apiserver validates them; and the deprecation every Endpoints request is warned of since 1.33."""

from __future__ import annotations

from typing import Any

import msgspec

from dralloc.api.core_v1_network import Endpoints
from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.validation.endpoints import endpoints_errors
from dralloc.validation.field import FieldError
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

DEPRECATION = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"


def default_endpoints(obj: Obj) -> None:
    """SetDefaults_EndpointPort of every subset's ports, in place."""
    subsets = obj.get("subsets")
    if not isinstance(subsets, list):
        return
    obj["subsets"] = subsets = [dict(s) if isinstance(s, dict) else s for s in subsets]
    for subset in subsets:
        if isinstance(subset, dict) and isinstance(subset.get("ports"), list):
            subset["ports"] = [{**p, "protocol": p.get("protocol") or "TCP"} if isinstance(p, dict) else p
                               for p in subset["ports"]]


class EndpointsStrategy(CoreStrategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        default_endpoints(obj)  # (decoding's: the writer owns them)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        errors = validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=True)
        return errors + _subset_errors(stored or {})

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        return super().update_errors(merged, old, sub, typed_meta) + _subset_errors(merged)


def _subset_errors(stored: Obj) -> list[FieldError]:
    """The subsets' rules, on the object as stored (defaulted; its JSON types checked when it was decoded)."""
    try:
        typed = msgspec.convert(stored, Endpoints)
    except msgspec.ValidationError:
        return []
    return endpoints_errors(typed)


STRATEGY = EndpointsStrategy()
