"""The resource.k8s.io strategies: every DRA kind keeps ``metadata.generation``; a ResourceClaim and a
ResourceClaimTemplate asking for admin access are admitted only in a namespace labelled for it
(``registry/admin_access.py``), on create and, for a claim, on the status write that grants it."""

from __future__ import annotations

from dralloc.server.registry import admin_access
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj
from dralloc.store import SQLStore
from dralloc.validation.field import FieldError


class DraStrategy(Strategy):
    """ResourceSlices, DeviceClasses, DeviceTaintRules: the typed strategy, with the generation kept."""

    tracks_generation = True


class ResourceClaimStrategy(DraStrategy):
    def create_admission_errors(self, store: SQLStore, namespace: str, name: str,
                                stored: Obj) -> list[FieldError]:
        return admin_access.spec_errors(store, namespace, stored, template=False)

    def update_admission_errors(self, store: SQLStore, namespace: str, merged: Obj, old: Obj,
                                sub: str) -> list[FieldError]:
        return admin_access.status_errors(store, namespace, merged, old) if sub == "status" else []


class ResourceClaimTemplateStrategy(DraStrategy):
    def create_admission_errors(self, store: SQLStore, namespace: str, name: str,
                                stored: Obj) -> list[FieldError]:
        return admin_access.spec_errors(store, namespace, stored, template=True)


DRA = DraStrategy()
RESOURCE_CLAIMS = ResourceClaimStrategy()
RESOURCE_CLAIM_TEMPLATES = ResourceClaimTemplateStrategy()
