"""The OpenAPI of the API versions served behind feature gates: scheduling.k8s.io/v1alpha2 Workloads and
PodGroups, with ``GenericWorkload`` on. Like kube-apiserver, a server that does not serve a version does not
describe it: ``/openapi/v3`` lists it (and ``/openapi/v2`` holds its definitions) only with its gate on, so
``kubectl explain podgroups`` finds the kind exactly when the server serves it.

The schemas are the models' (as for the modelled v1 groups), so ``kubectl explain
workloads.spec.podGroupTemplates`` walks every field.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from dralloc import __version__
from dralloc.server.http.discovery import (
    PATCH_SCHEMA,
    Groups,
    _hash,
    _model_schemas,
    _ops,
    _schema_name,
    openapi_v3_root,
)
from dralloc.server.registry.kinds import GATED_RESOURCES, Resource

GroupVersion = tuple[str, str]


def _gated_versions() -> dict[GroupVersion, list[Resource]]:
    out: dict[GroupVersion, list[Resource]] = {}
    for r in GATED_RESOURCES.values():
        for version in r.versions:
            out.setdefault((r.group, version), []).append(r)
    return out


GATED_VERSIONS = _gated_versions()


def served(groups: Groups) -> tuple[GroupVersion, ...]:
    """The gated group versions a server with these served groups serves (their resources among them)."""
    return tuple(gv for gv, resources in GATED_VERSIONS.items()
                 if all(r.name in groups.get(gv[0], {}) for r in resources))


@cache
def document(group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of a gated group version: its paths and the models' schemas."""
    resources = GATED_VERSIONS.get((group, version))
    if resources is None:
        return None
    paths: dict[str, Any] = {}
    for r in resources:
        prefix = f"/apis/{group}/{version}"
        base = f"{prefix}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{prefix}/{r.name}"
        paths[base] = _ops(r, version, False)
        paths[base + "/{name}"] = _ops(r, version, True)
        if r.status:
            paths[base + "/{name}/status"] = _ops(r, version, True)
    prefix = _schema_name(resources[0], version).rsplit(".", 1)[0]
    schemas = {**(_model_schemas(resources, version, prefix, model_version=version) or {}),
               PATCH_SCHEMA: {"type": "object"}}
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__}, "paths": paths,
            "components": {"schemas": schemas}}


@cache
def root(gated: tuple[GroupVersion, ...]) -> dict[str, Any]:
    """/openapi/v3: every always-served group version, and the ``gated`` ones."""
    paths = dict(openapi_v3_root()["paths"])
    for group, version in gated:
        paths[f"apis/{group}/{version}"] = {
            "serverRelativeURL": f"/openapi/v3/apis/{group}/{version}?hash={_hash(document(group, version))}"}
    return {"paths": paths}
