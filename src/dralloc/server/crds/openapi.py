"""The OpenAPI of CustomResourceDefinitions and of custom resources, as kube-apiserver publishes them: a v3
document per served group version of the custom resources (their paths, each kind's schema from its CRD's
``openAPIV3Schema`` with apiVersion, kind and metadata, and its group-version-kind), the same schemas among the
v2 definitions (kubectl validates a List's items against them), and an open schema for the CRDs themselves.
``kubectl explain <plural>`` walks a custom resource's schema; nothing is published for a CRD that is gone."""

from __future__ import annotations

import copy
from typing import Any

from dralloc import __version__
from dralloc.server.crds.custom_resources import CustomResourceStrategy
from dralloc.server.http.discovery import PATCH_SCHEMA, Groups, _hash, _ops, custom_groups
from dralloc.server.registry.kinds import APIEXTENSIONS, APIEXTENSIONS_GROUP, Resource

GroupVersion = tuple[str, str]
_METADATA = {"type": "object", "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                                              "contributors/devel/sig-architecture/api-conventions.md#metadata"}
_API_VERSION = {"type": "string", "description": "APIVersion defines the versioned schema of this representation of "
                                                 "an object."}
_KIND = {"type": "string", "description": "Kind is a string value representing the REST resource this object "
                                          "represents."}


def schema_name(group: str, version: str, kind: str) -> str:
    """A custom resource's definition name: its group reversed (``com.example.stable.v1.CronTab``)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def kind_schema(r: Resource, version: str) -> dict[str, Any]:
    """The schema of ``r`` in ``version``: its CRD's, with the type fields and metadata of every object."""
    strategy = r.strategy
    schema: dict[str, Any] = {"type": "object"}
    if isinstance(strategy, CustomResourceStrategy) and version in strategy.versions:
        schema = copy.deepcopy(strategy.versions[version].schema)
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = {**_API_VERSION, **(properties.get("apiVersion") or {})}
    properties["kind"] = {**_KIND, **(properties.get("kind") or {})}
    properties["metadata"] = {**_METADATA, **{k: v for k, v in (properties.get("metadata") or {}).items()
                                              if k != "properties"}}
    schema["properties"] = properties
    schema["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": version, "kind": r.kind}]
    return schema


def versions(groups: Groups) -> list[GroupVersion]:
    """The group versions of the custom resources served, in discovery's order."""
    out: list[GroupVersion] = []
    for group in custom_groups(groups):
        for r in groups[group].values():
            out += [(group, v) for v in r.versions if (group, v) not in out]
    return out


def document(group: str, version: str, groups: Groups) -> dict[str, Any] | None:
    """The OpenAPI v3 document of a custom resources' group version (None: not served)."""
    if group == APIEXTENSIONS_GROUP and version == "v1":
        return _definitions_document()
    if group not in custom_groups(groups):
        return None
    resources = [r for r in groups[group].values() if version in r.versions]
    if not resources:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {PATCH_SCHEMA: {"type": "object"}}
    for r in resources:
        prefix = f"/apis/{group}/{version}"
        base = f"{prefix}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{prefix}/{r.name}"
        paths[base] = _named(_ops(r, version, False), r, version)
        paths[base + "/{name}"] = _named(_ops(r, version, True), r, version)
        for sub in (("status",) if r.status else ()) + r.subresources:
            paths[base + "/{name}/" + sub] = _named(_ops(r, version, True), r, version)
        schemas[schema_name(group, version, r.kind)] = kind_schema(r, version)
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__}, "paths": paths,
            "components": {"schemas": schemas}}


def _named(ops: dict[str, Any], r: Resource, version: str) -> Any:
    """The operations of ``_ops`` referring to the custom resource's own definition name."""
    ref = f"#/components/schemas/{schema_name(r.group, version, r.kind)}"
    for op in ops.values():
        for part in (op.get("responses", {}).get("200", {}), op.get("requestBody", {})):
            for media in (part.get("content") or {}).values():
                if "$ref" in media.get("schema", {}) and not media["schema"]["$ref"].endswith(PATCH_SCHEMA):
                    media["schema"] = {"$ref": ref}
    return ops


def _definitions_document() -> dict[str, Any]:
    """apiextensions.k8s.io/v1: the CRDs' paths and an open schema (kubectl then validates on the server)."""
    r = APIEXTENSIONS["customresourcedefinitions"]
    base = f"/apis/{APIEXTENSIONS_GROUP}/v1/{r.name}"
    name = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "x-kubernetes-group-version-kind": [{"group": APIEXTENSIONS_GROUP, "version": "v1", "kind": r.kind}]}
    ops = {base: _ops(r, "v1", False), base + "/{name}": _ops(r, "v1", True), base + "/{name}/status": _ops(r, "v1", True)}
    for path_ops in ops.values():
        for op in path_ops.values():
            for part in (op.get("responses", {}).get("200", {}), op.get("requestBody", {})):
                for media in (part.get("content") or {}).values():
                    media["schema"] = {"$ref": f"#/components/schemas/{name}"}
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__}, "paths": ops,
            "components": {"schemas": {name: schema}}}


def root_paths(groups: Groups) -> dict[str, Any]:
    """The entries of /openapi/v3 for apiextensions.k8s.io and the custom resources' group versions."""
    out = {f"apis/{APIEXTENSIONS_GROUP}/v1": {
        "serverRelativeURL": f"/openapi/v3/apis/{APIEXTENSIONS_GROUP}/v1?hash={_hash(_definitions_document())}"}}
    for group, version in versions(groups):
        doc = document(group, version, groups)
        out[f"apis/{group}/{version}"] = {"serverRelativeURL": f"/openapi/v3/apis/{group}/{version}?hash={_hash(doc)}"}
    return out


def v2_definitions(groups: Groups) -> dict[str, Any]:
    """The custom resources' schemas as /openapi/v2 definitions."""
    out: dict[str, Any] = {}
    for group, version in versions(groups):
        for r in groups[group].values():
            if version in r.versions:
                out[schema_name(group, version, r.kind)] = kind_schema(r, version)
    return out
