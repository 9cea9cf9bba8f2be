"""The resources the server serves: names, kinds, scope, versions and printed columns."""

from __future__ import annotations

from dataclasses import dataclass, field

GROUP = "resource.k8s.io"
GROUP_VERSIONS = ("v1", "v1beta2", "v1beta1")  # preferred first
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Resource:
    name: str  # plural, as in URLs
    kind: str
    namespaced: bool
    group: str = GROUP
    versions: tuple[str, ...] = GROUP_VERSIONS
    status: bool = False
    short_names: tuple[str, ...] = ()
    # (header, dotted JSON path or a table.COMPUTED name) besides NAME and AGE
    columns: tuple[tuple[str, str], ...] = field(default=())

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def group_resource(self) -> str:
        return f"{self.name}.{self.group}" if self.group else self.name


RESOURCES = {r.name: r for r in (
    Resource("resourceslices", "ResourceSlice", False,
             columns=(("NODE", "spec.nodeName"), ("DRIVER", "spec.driver"), ("POOL", "spec.pool.name"))),
    Resource("deviceclasses", "DeviceClass", False),
    Resource("resourceclaims", "ResourceClaim", True, status=True, columns=(("STATE", "=claimState"),)),
    Resource("resourceclaimtemplates", "ResourceClaimTemplate", True),
    Resource("devicetaintrules", "DeviceTaintRule", False, versions=("v1", "v1beta2"), status=True),
)}

CORE = {r.name: r for r in (
    Resource("namespaces", "Namespace", False, group="", versions=("v1",), short_names=("ns",)),
    Resource("nodes", "Node", False, group="", versions=("v1",), short_names=("no",)),
)}

# Field selectors kube-apiserver accepts, besides metadata.name / metadata.namespace.
FIELD_SELECTORS = {"resourceslices": ("spec.driver", "spec.nodeName", "spec.pool.name")}
