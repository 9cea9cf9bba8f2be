"""The protobuf schema table (notation: server/protobuf/schema.py) of rbac.authorization.k8s.io/v1: Roles,
ClusterRoles and their bindings, which ``kubectl create role|clusterrole|rolebinding|clusterrolebinding`` and
operators' typed clients send as protobuf. Written from the generated ``.proto`` of rbac/v1 (field numbers)
and the Go types' JSON tags."""

from __future__ import annotations

from dralloc.server.protobuf.schema import META, messages, schema

RBAC_V1 = schema(META, messages({
    "Role": {1: "metadata ObjectMeta", 2: "rules []PolicyRule"},
    "ClusterRole": {1: "metadata ObjectMeta", 2: "rules []PolicyRule", 3: "aggregationRule *AggregationRule"},
    "PolicyRule": {1: "verbs []string", 2: "apiGroups []string", 3: "resources []string", 4: "resourceNames []string",
                   5: "nonResourceURLs []string"},
    "AggregationRule": {1: "clusterRoleSelectors []LabelSelector"},
    "LabelSelector": {1: "matchLabels map[string]string", 2: "matchExpressions []LabelSelectorRequirement"},
    "LabelSelectorRequirement": {1: "key string always", 2: "operator string always", 3: "values []string"},
    "RoleBinding": {1: "metadata ObjectMeta", 2: "subjects []Subject", 3: "roleRef RoleRef"},
    "ClusterRoleBinding": {1: "metadata ObjectMeta", 2: "subjects []Subject", 3: "roleRef RoleRef"},
    "Subject": {1: "kind string always", 2: "apiGroup string", 3: "name string always", 4: "namespace string"},
    "RoleRef": {1: "apiGroup string always", 2: "kind string always", 3: "name string always"},
}))

KINDS = {("rbac.authorization.k8s.io/v1", kind): (RBAC_V1, kind)
         for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")}
