"""Discovery documents, /version and the minimal OpenAPI v3 that makes kubectl validate on the server.

/api and /apis answer in the aggregated format (APIGroupDiscoveryList, one request for everything) when the
Accept header asks for it, as current kubectl and client-go do, and in the legacy format (APIVersions,
APIGroupList, APIResourceList per group version) otherwise. Given an OpenAPI v3 document whose operations declare the
``fieldValidation`` parameter, kubectl leaves field validation to the server (``fieldValidation=Strict``)
instead of downloading full schemas; so each group-version document lists its paths and verbs, with the
``x-kubernetes-group-version-kind`` and ``x-kubernetes-action`` extensions kubectl reads. The resource.k8s.io
schemas carry the list and map types server-side apply follows (``x-kubernetes-list-type``,
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type``), for ``kubectl explain`` and other clients.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from dralloc import __version__
from dralloc.server.apply.fieldtypes import STRUCT, FieldType, kind_type
from dralloc.server.apply.strategic_merge import COMMON_KEYS, MERGE_KEYS
from dralloc.server.registry.kinds import (
    ADMISSION,
    ADMISSION_GROUP,
    APIEXTENSIONS_GROUP,
    APPS,
    APPS_GROUP,
    AUTOSCALING,
    AUTOSCALING_GROUP,
    BATCH,
    BATCH_GROUP,
    COORDINATION_GROUP,
    CORE,
    DISCOVERY_GROUP,
    EVENTS,
    EVENTS_GROUP,
    GROUP,
    GROUP_RESOURCES,
    GROUP_VERSIONS,
    LEASES,
    NETWORKING,
    NETWORKING_GROUP,
    POLICY_GROUP,
    RBAC,
    RBAC_GROUP,
    RESOURCES,
    REVIEW_GROUPS,
    REVIEWS,
    SCHEDULING,
    SCHEDULING_GROUP,
    STORAGE,
    STORAGE_GROUP,
    VERBS,
    Resource,
)


def version_info() -> dict[str, Any]:
    """/version: apimachinery's version.Info, every field present as upstream (none is omitempty). The
    emulation version is the binary's own, and the minimum compatibility version one minor below it, as
    kube-apiserver's defaults are; the build fields say what this server is."""
    return {"major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
            "minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
            "gitVersion": f"v1.36.0-dralloc.{__version__}", "gitCommit": "", "gitTreeState": "clean",
            "buildDate": "", "goVersion": "", "compiler": "python", "platform": "linux/amd64"}


def api_versions() -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}


# the stored resources of each group a server serves (kinds.served_groups: the gated ones with their gates on)
Groups = Mapping[str, dict[str, Resource]]


def group_versions(name: str, groups: Groups = GROUP_RESOURCES) -> tuple[str, ...]:
    """The versions a group serves, preferred first: every version of its resources, in the order the resource
    table first names them (a new kind's version needs no entry here)."""
    if name == GROUP:
        return GROUP_VERSIONS
    table = groups.get(name) or {n: r for n, r in REVIEWS.items() if r.group == name}
    return tuple(dict.fromkeys(v for r in table.values() for v in r.versions))


def _group(name: str = GROUP, groups: Groups = GROUP_RESOURCES) -> dict[str, Any]:
    versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in group_versions(name, groups)]
    return {"name": name, "versions": versions, "preferredVersion": versions[0]}


# kube-apiserver's order of the groups served here
GROUPS = (APPS_GROUP, EVENTS_GROUP, *REVIEW_GROUPS, AUTOSCALING_GROUP, BATCH_GROUP, NETWORKING_GROUP, POLICY_GROUP,
          RBAC_GROUP, STORAGE_GROUP, ADMISSION_GROUP, APIEXTENSIONS_GROUP, SCHEDULING_GROUP, COORDINATION_GROUP,
          DISCOVERY_GROUP, GROUP)


def custom_groups(groups: Groups) -> list[str]:
    """The groups of custom resources (CRDs) among ``groups``, after the built-in ones, by name, as
    kube-apiserver lists the groups it serves for CRDs."""
    return sorted(g for g in groups if g not in GROUPS)


def api_group_list(groups: Groups = GROUP_RESOURCES) -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group(g, groups) for g in (*GROUPS, *custom_groups(groups))]}


def api_group(name: str = GROUP, groups: Groups = GROUP_RESOURCES) -> dict[str, Any] | None:
    if name not in GROUPS and name not in groups:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, groups)}


def _verbs(r: Resource) -> list[str]:
    if r.verbs:
        return list(r.verbs)
    return VERBS if r.name != "namespaces" else ["create", "delete", "get", "list", "patch", "update", "watch"]


# The subresources kube-apiserver serves besides status: (kind, verbs), kind None for the resource's own kind.
_SUBRESOURCES: dict[str, tuple[tuple[str, str, str] | None, list[str]]] = {
    "attach": (("", "v1", "PodAttachOptions"), ["create", "get"]),
    "binding": (("", "v1", "Binding"), ["create"]),
    "eviction": (("policy", "v1", "Eviction"), ["create"]),  # kubectl drain looks for it with its group
    "exec": (("", "v1", "PodExecOptions"), ["create", "get"]),
    "finalize": (None, ["update"]),
    "log": (None, ["get"]),
    "portforward": (("", "v1", "PodPortForwardOptions"), ["create", "get"]),
    "scale": (("autoscaling", "v1", "Scale"), ["get", "patch", "update"]),  # the workloads' replicas
    "status": (None, ["get", "patch", "update"]),
    "token": (("authentication.k8s.io", "v1", "TokenRequest"), ["create"]),  # serviceaccounts/token
}


def _subresources(r: Resource) -> list[str]:
    """The resource's subresources in kube-apiserver's order (its paths sorted)."""
    return sorted([*r.subresources, *(("status",) if r.status else ())])


def _entries(r: Resource) -> list[dict[str, Any]]:
    main = {"name": r.name, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
            "verbs": _verbs(r)}
    if r.short_names:
        main["shortNames"] = list(r.short_names)
    if r.categories:
        main["categories"] = list(r.categories)
    out = [main]
    for sub in _subresources(r):
        kind, verbs = _SUBRESOURCES[sub]
        entry: dict[str, Any] = {"name": f"{r.name}/{sub}", "singularName": "", "namespaced": r.namespaced}
        if kind is not None and kind[0]:  # another group's kind: named with its group and version
            entry["group"], entry["version"] = kind[0], kind[1]
        entry["kind"] = kind[2] if kind is not None else r.kind
        entry["verbs"] = verbs
        out.append(entry)
    return out


def resource_list(version: str, group: str = GROUP, groups: Groups = GROUP_RESOURCES) -> dict[str, Any] | None:
    table = groups.get(group) or {n: r for n, r in REVIEWS.items() if r.group == group}
    if not any(version in r.versions for r in table.values()):
        return None
    resources = [e for r in table.values() if version in r.versions for e in _entries(r)]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}",
            "resources": resources}


def core_resource_list() -> dict[str, Any]:
    return {"kind": "APIResourceList", "groupVersion": "v1",
            "resources": [e for r in CORE.values() for e in _entries(r)]}


# --- aggregated discovery (apidiscovery.k8s.io/v2) ---------------------------------------------------

AGGREGATED_VERSIONS = ("v2", "v2beta1")


def aggregated_version(accept: str) -> str | None:
    """The apidiscovery version a client's Accept header asks for (kubectl and client-go list v2 first)."""
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[1].strip() for p in part.split(";")[1:] if "=" in p}
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("v") in AGGREGATED_VERSIONS:
            return params["v"]
    return None


def aggregated_content_type(version: str) -> str:
    return f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"


def _discovered(r: Resource, version: str) -> dict[str, Any]:
    kind = {"group": r.group, "version": version, "kind": r.kind}
    entry: dict[str, Any] = {"resource": r.name, "responseKind": kind,
                             "scope": "Namespaced" if r.namespaced else "Cluster", "singularResource": r.singular,
                             "verbs": _verbs(r)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    subresources = []
    for sub in _subresources(r):
        sub_kind, verbs = _SUBRESOURCES[sub]
        response = kind if sub_kind is None else {"group": sub_kind[0], "version": sub_kind[1], "kind": sub_kind[2]}
        subresources.append({"subresource": sub, "responseKind": response, "verbs": verbs})
    if subresources:
        entry["subresources"] = subresources
    return entry


def _discovered_group(name: str, table: dict[str, Resource], groups: Groups) -> dict[str, Any]:
    """An aggregated discovery item of a group: each of its versions with the resources served in it."""
    return {"metadata": {"name": name, "creationTimestamp": None},
            "versions": [{"version": v, "freshness": "Current",
                          "resources": [_discovered(r, v) for r in table.values() if v in r.versions]}
                         for v in group_versions(name, groups)]}


def aggregated(core: bool, version: str, groups: Groups = GROUP_RESOURCES) -> dict[str, Any]:
    """/api or /apis as one APIGroupDiscoveryList: every group, version and resource in one document."""
    if core:
        items = [{"metadata": {"creationTimestamp": None},
                  "versions": [{"version": "v1", "resources": [_discovered(r, "v1") for r in CORE.values()],
                                "freshness": "Current"}]}]
    else:
        versions = [{"version": v, "resources": [_discovered(r, v) for r in RESOURCES.values() if v in r.versions],
                     "freshness": "Current"} for v in GROUP_VERSIONS]
        items = []
        for group in GROUPS:  # in kube-apiserver's order
            if group == GROUP:
                items.append({"metadata": {"name": GROUP, "creationTimestamp": None}, "versions": versions})
            elif group in REVIEW_GROUPS:
                items.append({"metadata": {"name": group, "creationTimestamp": None},
                              "versions": [{"version": "v1", "freshness": "Current", "resources": [
                                  _discovered(r, "v1") for r in REVIEWS.values() if r.group == group]}]})
            else:
                items.append(_discovered_group(group, groups[group], groups))
        items += [_discovered_group(group, groups[group], groups) for group in custom_groups(groups)]
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}", "metadata": {},
            "items": items}


# --- OpenAPI v3 -------------------------------------------------------------------------------------

_FIELD_VALIDATION = {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True},
                     "description": "Ignore, Warn or Strict"}
_DRY_RUN = {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}}
_FIELD_MANAGER = {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}}


PATCH_SCHEMA = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json")


def _ops(r: Resource, version: str, item: bool, patch_types: bool = False) -> dict[str, Any]:
    """The operations of one path. ``patch_types``: the patch operation lists the patch content types (a
    strategic merge patch among them) as kube-apiserver's do, so client-side ``kubectl apply``, ``diff`` and
    ``edit`` compute a strategic merge patch from the kind's schema rather than a JSON merge patch; only for
    kinds whose schema describes every field (the computation fails on a field the schema lacks)."""
    gvk = {"group": r.group, "version": version, "kind": r.kind}
    ref = {"$ref": f"#/components/schemas/{_schema_name(r, version)}"}
    body = {"content": {t: {"schema": ref} for t in ("application/json", "application/yaml")}, "required": True}

    def op(action: str, params: list[dict[str, Any]], with_body: bool) -> dict[str, Any]:
        o: dict[str, Any] = {"operationId": f"{action}{r.kind}", "parameters": params,
                             "responses": {"200": {"content": {"application/json": {"schema": ref}}}},
                             "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}
        if with_body:
            o["requestBody"] = body
        return o

    writes = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    if r.verbs and "create" not in r.verbs:  # a read-only resource: its reads only
        return {"get": op("get" if item else "list", [], False)}
    if item:
        patch = op("patch", writes, True)
        if patch_types:
            patch["requestBody"] = {"content": {t: {"schema": {"$ref": f"#/components/schemas/{PATCH_SCHEMA}"}}
                                                for t in PATCH_TYPES}, "required": True}
        return {"get": op("get", [], False), "put": op("put", writes, True), "patch": patch,
                "delete": op("delete", [_DRY_RUN], False)}
    return {"get": op("list", [], False), "post": op("post", writes, True),
            "delete": op("deletecollection", [_DRY_RUN], False)}


def _schema_name(r: Resource, version: str) -> str:
    group = {GROUP: "io.k8s.api.resource", EVENTS_GROUP: "io.k8s.api.events",
             SCHEDULING_GROUP: "io.k8s.api.scheduling", COORDINATION_GROUP: "io.k8s.api.coordination",
             APPS_GROUP: "io.k8s.api.apps", BATCH_GROUP: "io.k8s.api.batch", RBAC_GROUP: "io.k8s.api.rbac",
             NETWORKING_GROUP: "io.k8s.api.networking", AUTOSCALING_GROUP: "io.k8s.api.autoscaling",
             ADMISSION_GROUP: "io.k8s.api.admissionregistration",
             STORAGE_GROUP: "io.k8s.api.storage"}.get(r.group, "io.k8s.api.core")
    return f"{group}.{version}.{r.kind}"


def _model_schemas(resources: list[Resource], version: str, prefix: str,
                   model_version: str = "v1", open_models: bool = False) -> dict[str, Any] | None:
    """Schemas generated from dralloc's models (by default their v1 shape, which v1beta2 shares), for
    ``kubectl explain``."""
    import msgspec

    from dralloc.api.quantity import Quantity

    def hook(tp: Any) -> dict[str, Any]:
        if tp is Quantity:
            return {"type": "string", "x-kubernetes-int-or-string": True,
                    "description": "A Kubernetes quantity such as 1, 500m, 1.5Gi."}
        raise NotImplementedError

    api_version = f"{resources[0].group}/{model_version}" if resources[0].group else model_version
    models = [_model(api_version, r.kind) for r in resources]
    if any(m is None for m in models):
        return None
    _, components = msgspec.json.schema_components(models, schema_hook=hook,
                                                   ref_template=prefix + ".{name}")
    out = {}
    for name, schema in components.items():
        text = json.dumps(schema).replace('"$ref": "' + prefix, '"$ref": "#/components/schemas/' + prefix)
        out[f"{prefix}.{name}"] = shaped = _upstream_shape(json.loads(text))
        # msgspec describes a type by its docstring: notes for dralloc's readers (versions, which member is
        # set), not API documentation, so kubectl explain shows no description rather than them
        shaped.pop("description", None)
        if (open_models or not resources[0].group) and "properties" in shaped:
            # core objects are stored as sent and their models describe only some of upstream's fields (a
            # Pod's spec): the others are not unknown, merely not described
            shaped["x-kubernetes-preserve-unknown-fields"] = True
    for r in resources:
        top = out.get(f"{prefix}.{r.kind}")
        if top is not None:
            top["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": version, "kind": r.kind}]
            _mark_list_types(out, top, kind_type(r.kind))
            _mark_patch_strategies(out, top, {**COMMON_KEYS, **MERGE_KEYS.get(r.kind, {})})
    return out


_NULL = {"type": "null"}


def _upstream_shape(schema: Any) -> Any:
    """A JSON schema from msgspec in the shape kube-apiserver's OpenAPI has, which kubectl explain walks: an
    optional field is its type (msgspec says ``anyOf: [type, null]`` with ``default: null``, and kubectl
    explain does not descend into anyOf), a nested object is ``allOf: [{$ref}]``, and no titles or empty
    ``required`` lists."""
    if isinstance(schema, list):
        return [_upstream_shape(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _upstream_shape(field) for name, field in value.items()}
        elif key == "title" and isinstance(value, str) or key == "required" and value == []:
            continue
        else:
            out[key] = _upstream_shape(value)
    options = out.get("anyOf")
    if isinstance(options, list) and _NULL in options:
        del out["anyOf"]
        if "default" in out and out["default"] is None:
            del out["default"]
        kept = [o for o in options if o != _NULL]
        if len(kept) > 1:
            out["anyOf"] = kept
        elif kept and set(kept[0]) == {"$ref"}:
            out = {"allOf": kept, **out}
        elif kept:
            out = {**kept[0], **out}
    return out


def _mark_patch_strategies(schemas: dict[str, Any], top: dict[str, Any], keys: dict[tuple[str, ...], str]) -> None:
    """Mark the lists strategic merge patch merges (``server/apply/strategic_merge.py``'s table: owner references by uid,
    finalizers as a set, ...) with ``x-kubernetes-patch-strategy`` and ``-patch-merge-key``, as kube-apiserver's
    schemas carry them: client-side kubectl apply reads them to merge such lists rather than replace them."""
    def resolve(schema: dict[str, Any]) -> dict[str, Any]:
        while True:
            if "$ref" in schema:
                schema = schemas.get(schema["$ref"].rsplit("/", 1)[1]) or {}
            elif len(schema.get("allOf", ())) == 1:
                schema = schema["allOf"][0]
            else:
                return schema

    for path, key in keys.items():
        schema: dict[str, Any] | None = top
        for part in path:
            target = resolve(schema or {})
            schema = target.get("items") if part == "[]" else (target.get("properties") or {}).get(part)
        if isinstance(schema, dict) and schema.get("type") == "array":
            schema["x-kubernetes-patch-strategy"] = "merge"
            if key:
                schema["x-kubernetes-patch-merge-key"] = key


def _mark_list_types(schemas: dict[str, Any], top: dict[str, Any], kind: FieldType) -> None:
    """Give every list its ``x-kubernetes-list-type`` (and ``-list-map-keys``), and atomic structs their
    ``x-kubernetes-map-type``, from the table server-side apply follows (``fieldtypes``)."""
    seen: set[tuple[int, int]] = set()

    def resolve(schema: dict[str, Any]) -> dict[str, Any] | None:
        if "$ref" in schema:
            return schemas.get(schema["$ref"].rsplit("/", 1)[1])
        for option in (*schema.get("allOf", ()), *schema.get("anyOf", ())):  # a nested or optional type
            if option.get("type") != "null":
                return resolve(option)
        return schema

    def walk(schema: dict[str, Any], node: FieldType) -> None:
        target = resolve(schema)
        if target is None or (id(target), id(node)) in seen:
            return
        seen.add((id(target), id(node)))
        if target.get("type") == "array":
            target["x-kubernetes-list-type"] = {"list-map": "map", "set": "set"}.get(node.kind, "atomic")
            if node.kind == "list-map":
                target["x-kubernetes-list-map-keys"] = list(node.keys)
            walk(target.get("items") or {}, node.item or STRUCT)
        elif target.get("type") == "object":
            if node.kind == "atomic" and "properties" in target:
                target["x-kubernetes-map-type"] = "atomic"
            for name, prop in (target.get("properties") or {}).items():
                walk(prop, node.child(name))

    walk(top, kind)


def _model(api_version: str, kind: str) -> type | None:
    """The model of a kind: those the codec reads, and the core kinds only the server stores (whose models
    are whole: ConfigMap, Secret, ServiceAccount)."""
    from dralloc.api import core_v1
    from dralloc.api.codec import model_for

    stored_only: dict[str, type] = {"ConfigMap": core_v1.ConfigMap, "Secret": core_v1.Secret,
                                    "ServiceAccount": core_v1.ServiceAccount}
    return model_for(api_version, kind) or (stored_only.get(kind) if api_version == "v1" else None)


@cache
def openapi_v3_gv(version: str, core: bool = False, *, core_models: bool = True) -> dict[str, Any] | None:
    """One group version's OpenAPI v3 document. The core kinds dralloc models (Namespace, Node, Pod, ConfigMap,
    Secret, ServiceAccount) get the
    schemas of their models, so ``kubectl explain pod.spec.resourceClaims`` finds its field; with
    ``core_models`` off they keep open schemas (what /openapi/v2 serves, since kubectl validates a List's
    items against those on the client and the models describe only part of a Pod)."""
    if core:
        resources, prefix, version = list(CORE.values()), "/api/v1", "v1"
    else:
        if version not in GROUP_VERSIONS:
            return None
        resources, prefix = [r for r in RESOURCES.values() if version in r.versions], f"/apis/{GROUP}/{version}"
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    full = not core and version != "v1beta1"  # schemas with every field (v1beta1's and core's are open)
    for r in resources:
        base = f"{prefix}/namespaces/{{namespace}}/{r.name}" if r.namespaced else f"{prefix}/{r.name}"
        paths[base] = _ops(r, version, False)
        paths[base + "/{name}"] = _ops(r, version, True, full)
        if r.status:
            paths[base + "/{name}/status"] = _ops(r, version, True, full)
        schemas[_schema_name(r, version)] = {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [{"group": r.group, "version": version, "kind": r.kind}]}
    if core and core_models:
        modelled = [r for r in resources if _model("v1", r.kind) is not None]
        schemas.update(_model_schemas(modelled, version, "io.k8s.api.core.v1") or {})
    elif full:  # v1beta1's shape differs from the models: open schemas
        prefix = _schema_name(resources[0], version).rsplit(".", 1)[0]
        schemas.update(_model_schemas(resources, version, prefix) or {})
        schemas[PATCH_SCHEMA] = {"type": "object"}
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__}, "paths": paths,
            "components": {"schemas": schemas}}


# The groups served in v1 only whose kinds have models: their OpenAPI documents carry the models' schemas
MODELLED_V1_GROUPS = {SCHEDULING_GROUP: SCHEDULING, COORDINATION_GROUP: LEASES, RBAC_GROUP: RBAC,
                      APPS_GROUP: APPS, BATCH_GROUP: BATCH, STORAGE_GROUP: STORAGE, NETWORKING_GROUP: NETWORKING,
                      ADMISSION_GROUP: ADMISSION}
# Of those, the groups whose models describe their kinds in part (the workloads, stored as sent, as core kinds):
# their schemas keep unknown fields, and no patch types are offered from them
PARTLY_MODELLED_GROUPS = (APPS_GROUP, BATCH_GROUP)
# The modelled group versions besides those v1 ones: autoscaling/v2 (its model) and autoscaling/v1 (an open schema)
MODELLED_OTHER_VERSIONS = {(AUTOSCALING_GROUP, "v2"): AUTOSCALING, (AUTOSCALING_GROUP, "v1"): AUTOSCALING}


@cache
def openapi_v3_group(group: str, version: str = "v1") -> dict[str, Any] | None:
    """The OpenAPI v3 document of one of :data:`MODELLED_V1_GROUPS` (scheduling.k8s.io/v1 PriorityClasses,
    coordination.k8s.io/v1 Leases): its paths and the models' schemas (kubectl explain, and kubectl apply
    then validates on the server)."""
    table = MODELLED_V1_GROUPS.get(group) if version == "v1" else None
    table = table or MODELLED_OTHER_VERSIONS.get((group, version))
    if table is None:
        return None
    partly = group in PARTLY_MODELLED_GROUPS
    paths: dict[str, Any] = {}
    for r in table.values():
        base = (f"/apis/{group}/{version}/namespaces/{{namespace}}/{r.name}" if r.namespaced
                else f"/apis/{group}/{version}/{r.name}")
        paths[base] = _ops(r, version, False)
        paths[base + "/{name}"] = _ops(r, version, True, patch_types=not partly)
        if r.status:
            paths[base + "/{name}/status"] = _ops(r, version, True, patch_types=not partly)
    prefix = _schema_name(next(iter(table.values())), version).rsplit(".", 1)[0]
    schemas = {**(_model_schemas(list(table.values()), version, prefix, version, open_models=partly) or {}),
               PATCH_SCHEMA: {"type": "object"}}
    for r in table.values():  # (a kind whose model is named otherwise, autoscaling/v1's: an open schema)
        schemas.setdefault(_schema_name(r, version), {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": r.kind}]})
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__}, "paths": paths,
            "components": {"schemas": schemas}}


def open_schemas(group: str) -> dict[str, Any]:
    """An open schema (any field) of each kind of a v1 group, in a document's shape."""
    schemas = {_schema_name(r, "v1"): {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                       "x-kubernetes-group-version-kind": [{"group": group, "version": "v1",
                                                                            "kind": r.kind}]}
               for r in MODELLED_V1_GROUPS[group].values()}
    return {"components": {"schemas": schemas}}


@cache
def openapi_v3_events() -> dict[str, Any]:
    """events.k8s.io/v1: its paths and an open schema (kubectl then leaves field validation to the server)."""
    r = EVENTS["events"]
    base = f"/apis/{EVENTS_GROUP}/v1/namespaces/{{namespace}}/{r.name}"
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "x-kubernetes-group-version-kind": [{"group": EVENTS_GROUP, "version": "v1", "kind": r.kind}]}
    return {"openapi": "3.0.0", "info": {"title": "dralloc", "version": __version__},
            "paths": {base: _ops(r, "v1", False), base + "/{name}": _ops(r, "v1", True)},
            "components": {"schemas": {_schema_name(r, "v1"): schema}}}


def _hash(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32].upper()


@cache
def openapi_v3_root() -> dict[str, Any]:
    paths = {}
    for v in GROUP_VERSIONS:
        paths[f"apis/{GROUP}/{v}"] = {"serverRelativeURL": f"/openapi/v3/apis/{GROUP}/{v}?hash={_hash(openapi_v3_gv(v))}"}
    paths["api/v1"] = {"serverRelativeURL": f"/openapi/v3/api/v1?hash={_hash(openapi_v3_gv('v1', True))}"}
    paths[f"apis/{EVENTS_GROUP}/v1"] = {
        "serverRelativeURL": f"/openapi/v3/apis/{EVENTS_GROUP}/v1?hash={_hash(openapi_v3_events())}"}
    for group in MODELLED_V1_GROUPS:
        paths[f"apis/{group}/v1"] = {
            "serverRelativeURL": f"/openapi/v3/apis/{group}/v1?hash={_hash(openapi_v3_group(group))}"}
    for group, version in MODELLED_OTHER_VERSIONS:
        doc = openapi_v3_group(group, version)
        paths[f"apis/{group}/{version}"] = {
            "serverRelativeURL": f"/openapi/v3/apis/{group}/{version}?hash={_hash(doc)}"}
    return {"paths": paths}
