"""The rbac.authorization.k8s.io/v1 strategies: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings are
stored (in their models' form) with their defaults and validation (``dralloc.validation.rbac``), as
kube-apiserver stores them; ``dralloc serve`` does not enforce them (its own authorizer decides). And the
columns ``kubectl get`` prints."""

from __future__ import annotations

from collections.abc import Callable

from dralloc.api.rbac_v1 import GROUP
from dralloc.server.registry.strategy import Strategy
from dralloc.server.types import Obj


def apply_rbac_defaults(obj: Obj) -> Obj:
    """SetDefaults_RoleBinding / _ClusterRoleBinding (roleRef in the RBAC group) and SetDefaults_Subject (a
    User's or Group's apiGroup the RBAC group; a ServiceAccount's stays empty). A new dict when it changes."""
    changed = dict(obj)
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        changed["roleRef"] = {**ref, "apiGroup": GROUP}
    subjects = obj.get("subjects")
    if isinstance(subjects, list):
        changed["subjects"] = [
            {**s, "apiGroup": GROUP} if isinstance(s, dict) and not s.get("apiGroup")
            and s.get("kind") in ("User", "Group") else s for s in subjects]
    return changed if changed != obj else obj


class RbacStrategy(Strategy):
    def decode_defaults(self, obj: Obj, sub: str) -> None:
        obj.update(apply_rbac_defaults(obj))  # (decoding's: before validation, owned by the writer)


STRATEGY = RbacStrategy()


def role_of(binding: Obj) -> str:
    ref = binding.get("roleRef") or {}
    return f"{ref.get('kind')}/{ref.get('name')}"


def _subjects(kind: str) -> Callable[[Obj], str]:
    def names(binding: Obj) -> str:
        found = [(f"{s.get('namespace')}/{s.get('name')}" if kind == "ServiceAccount" else str(s.get("name")))
                 for s in binding.get("subjects") or [] if isinstance(s, dict) and s.get("kind") == kind]
        return ", ".join(found)
    return names


COLUMNS = {"=roleRef": role_of, "=bindingUsers": _subjects("User"), "=bindingGroups": _subjects("Group"),
           "=bindingServiceAccounts": _subjects("ServiceAccount")}
ROLE_TABLE = (("Name", "metadata.name", 0), ("Created At", "metadata.creationTimestamp", 0))
BINDING_TABLE = (("Name", "metadata.name", 0), ("Role", "=roleRef", 0), ("Age", "=age", 0),
                 ("Users", "=bindingUsers", 1), ("Groups", "=bindingGroups", 1),
                 ("ServiceAccounts", "=bindingServiceAccounts", 1))
