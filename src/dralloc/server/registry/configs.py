"""The ConfigMap and Secret strategies: stored as sent, after kube-apiserver's decoding of a Secret (its
write-only ``stringData`` folded into ``data``, the type defaulted); their rules are in
``dralloc.validation.config``. Nothing here reads them (no kubelet mounts them)."""

from __future__ import annotations

import base64
from typing import Any

import msgspec

from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.validation.config import config_errors, config_update_errors
from dralloc.validation.field import FieldError


def prepare_secret(secret: Obj) -> None:
    """As decoding a Secret does: ``stringData`` goes into ``data`` (base64, winning over the same key) and is
    never stored; the type defaults to Opaque."""
    string_data = secret.pop("stringData", None)
    if string_data:
        data = dict(secret.get("data") or {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
        secret["data"] = data
    if not secret.get("type"):
        secret["type"] = "Opaque"


class ConfigStrategy(CoreStrategy):
    """ConfigMaps and Secrets (a Secret's ``stringData`` folded into ``data`` before it is validated)."""

    def decode_defaults(self, obj: Obj, sub: str) -> None:
        if obj.get("kind") == "Secret":
            prepare_secret(obj)  # (the writer owns ``data`` and ``type``; an update's type is then compared)

    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return config_errors(stored or {}, typed.metadata)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        # ValidateConfigMapUpdate / ValidateSecretUpdate: what may not change, then the object itself
        typed_meta = msgspec.structs.replace(typed_meta, namespace=merged["metadata"].get("namespace"))
        return (super().update_errors(merged, old, sub, typed_meta) + config_update_errors(merged, old)
                + config_errors(merged, typed_meta))


STRATEGY = ConfigStrategy()
