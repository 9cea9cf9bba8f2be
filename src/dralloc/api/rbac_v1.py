"""rbac.authorization.k8s.io/v1: Roles, ClusterRoles and their bindings, as a DRA driver's install manifests
carry them. ``dralloc serve`` stores and validates them; its own authorizer decides who may do what."""

from __future__ import annotations

import msgspec

from dralloc.api.meta import Base, LabelSelector, ListMeta, ObjectMeta

GROUP = "rbac.authorization.k8s.io"
GROUP_VERSION = f"{GROUP}/v1"


class PolicyRule(Base):
    verbs: list[str] = msgspec.field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_urls: list[str] | None = msgspec.field(default=None, name="nonResourceURLs")


class AggregationRule(Base):
    cluster_role_selectors: list[LabelSelector] | None = None


class Role(Base):
    api_version: str = GROUP_VERSION
    kind: str = "Role"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None


class ClusterRole(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ClusterRole"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class Subject(Base):
    kind: str = ""
    api_group: str | None = None  # "" for a ServiceAccount, rbac.authorization.k8s.io for a User or Group
    name: str = ""
    namespace: str | None = None


class RoleRef(Base):
    api_group: str = ""
    kind: str = ""
    name: str = ""


class RoleBinding(Base):
    api_version: str = GROUP_VERSION
    kind: str = "RoleBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef = msgspec.field(default_factory=RoleRef)


class ClusterRoleBinding(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ClusterRoleBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef = msgspec.field(default_factory=RoleRef)


class RoleList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "RoleList"
    metadata: ListMeta | None = None
    items: list[Role] = msgspec.field(default_factory=list)


class ClusterRoleList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ClusterRoleList"
    metadata: ListMeta | None = None
    items: list[ClusterRole] = msgspec.field(default_factory=list)


class RoleBindingList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "RoleBindingList"
    metadata: ListMeta | None = None
    items: list[RoleBinding] = msgspec.field(default_factory=list)


class ClusterRoleBindingList(Base):
    api_version: str = GROUP_VERSION
    kind: str = "ClusterRoleBindingList"
    metadata: ListMeta | None = None
    items: list[ClusterRoleBinding] = msgspec.field(default_factory=list)
