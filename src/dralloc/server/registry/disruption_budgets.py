"""The policy/v1 PodDisruptionBudget strategy, as kube-apiserver's (pkg/registry/policy/poddisruptionbudget): a
budget is created with an empty status (the disruption controller, server/controllers/disruption.py, fills it
in) and generation 1, which goes up when its spec changes; the spec and the status are validated with
upstream's rules (dralloc.validation.policy), on every write. And its ``kubectl get pdb`` columns: MIN
AVAILABLE and MAX UNAVAILABLE (``N/A`` when unset), ALLOWED DISRUPTIONS."""

from __future__ import annotations

from typing import Any

from dralloc.api.codec import decode
from dralloc.api.policy_v1 import PodDisruptionBudget
from dralloc.server.clock import now
from dralloc.server.registry.strategy import Strategy, managed_field_errors
from dralloc.server.types import Obj
from dralloc.validation.field import FieldError
from dralloc.validation.meta import finalizers_added_while_deleting, validate_object_meta_update
from dralloc.validation.policy import validate_pdb

CONDITION = "DisruptionAllowed"
SUFFICIENT, INSUFFICIENT = "SufficientPods", "InsufficientPods"
EMPTY_STATUS = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


class DisruptionBudgetStrategy(Strategy):
    tracks_generation = True

    def with_system_fields(self, created: Obj) -> Obj:
        return {**created, "status": dict(EMPTY_STATUS)}  # (a create's status is the controller's to write)

    def update_errors(self, merged: Obj, old: Obj, sub: str, typed_meta: Any) -> list[FieldError]:
        new_typed, old_typed = decode(merged), decode(old)
        errors = validate_object_meta_update(new_typed.metadata, old_typed.metadata)
        errors += finalizers_added_while_deleting(merged["metadata"], old["metadata"])
        if sub == "status":
            errors += managed_field_errors(merged)
        assert isinstance(new_typed, PodDisruptionBudget)
        return errors + validate_pdb(new_typed)


STRATEGY = DisruptionBudgetStrategy()


def set_condition(conditions: list[Obj], status: str, reason: str, message: str, generation: int) -> list[Obj]:
    """apimeta.SetStatusCondition of DisruptionAllowed (its transition time kept while its status stays)."""
    old = next((c for c in conditions if c.get("type") == CONDITION), None)
    stamp = old.get("lastTransitionTime") if old is not None and old.get("status") == status else now()
    updated = {"type": CONDITION, "status": status, "observedGeneration": generation, "lastTransitionTime": stamp,
               "reason": reason, "message": message}
    return [updated if c.get("type") == CONDITION else c for c in conditions] if old is not None \
        else [*conditions, updated]


def allowed_condition(status: Obj) -> None:
    """UpdateDisruptionAllowedCondition, in place: True (SufficientPods) while disruptions are allowed, else
    False (InsufficientPods)."""
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    status["conditions"] = set_condition(list(status.get("conditions") or []), "True" if allowed else "False",
                                         SUFFICIENT if allowed else INSUFFICIENT, "",
                                         int(status.get("observedGeneration") or 0))


def _bound(pdb: Obj, name: str) -> str:
    value = (pdb.get("spec") or {}).get(name)
    return "N/A" if value is None else str(value)


COLUMNS = {"=pdbMinAvailable": lambda pdb: _bound(pdb, "minAvailable"),
           "=pdbMaxUnavailable": lambda pdb: _bound(pdb, "maxUnavailable"),
           "=pdbAllowedDisruptions": lambda pdb: int((pdb.get("status") or {}).get("disruptionsAllowed") or 0)}
COLUMN_TYPES = {"=pdbAllowedDisruptions": "integer"}
TABLE = (("Name", "metadata.name", 0), ("Min Available", "=pdbMinAvailable", 0),
         ("Max Unavailable", "=pdbMaxUnavailable", 0), ("Allowed Disruptions", "=pdbAllowedDisruptions", 0),
         ("Age", "=age", 0))
