"""What a URL names: discovery documents, or a resource (type, version, namespace, name, subresource) and the
verb a method means on it."""

from __future__ import annotations

import urllib.parse
from typing import Any

from starlette.requests import Request

from dralloc.api import conversion
from dralloc.server.crds import openapi as crd_openapi
from dralloc.server.http import discovery, openapi_gated
from dralloc.server.http.errors import method_not_allowed, no_such_path
from dralloc.server.http.options import query_flag
from dralloc.server.registry.events import EVENTS_GROUP
from dralloc.server.registry.kinds import CORE, GROUP, GROUP_RESOURCES, REVIEW_GROUPS, Resource

SERVED_GROUPS = (*GROUP_RESOURCES, *REVIEW_GROUPS)
Groups = discovery.Groups


class Target:
    """What a URL names."""

    def __init__(self, resource: Resource, version: str, namespace: str, name: str, sub: str) -> None:
        self.resource = resource
        self.version = version
        self.namespace = namespace
        self.name = name
        self.sub = sub
        # The body this request sent and the model object it decodes into, once decoded (see
        # verbs/typed_json.py): typed() of that same dict answers with it instead of decoding it again.
        self.decoded: tuple[Any, Any] | None = None
        # A core object's body whose JSON text names no time field (gotime.may_name_core_time): typed() of that
        # same dict looks for no bad time in it.
        self.timeless: Any = None

    @property
    def api_version(self) -> str:
        return f"{self.resource.group}/{self.version}" if self.resource.group else self.version

    @property
    def list_namespace(self) -> str | None:
        """The namespace a list or watch is limited to (None: all)."""
        return self.namespace if self.resource.namespaced and self.namespace else None

    @property
    def shows_stored(self) -> bool:
        """Whether :meth:`present` gives the stored object itself (its stored text is its JSON)."""
        if self.resource.strategy.present({}, self.api_version) is not None:  # converts its own versions
            return False
        return self.resource.stored_as is None and (not self.resource.group or self.version == self.resource.versions[0])

    def present(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored (v1) object in the version the URL asks for."""
        if self.resource.stored_as is not None:  # a view of another resource's objects
            return self.resource.strategy.to_view(obj)
        own = self.resource.strategy.present(obj, self.api_version)  # (a custom resource: its CRD's versions)
        if own is not None:
            return own
        if self.resource.group and self.version != self.resource.versions[0]:  # stored in its first version
            return conversion.from_v1(obj, self.api_version)
        return obj


def discovery_document(parts: list[str], groups: Groups = GROUP_RESOURCES) -> Any:
    if parts == ["api"]:
        return discovery.api_versions()
    if parts == ["api", "v1"]:
        return discovery.core_resource_list()
    if parts == ["apis"]:
        return discovery.api_group_list(groups)
    if len(parts) == 2 and parts[0] == "apis" and (parts[1] in SERVED_GROUPS or parts[1] in groups):
        return discovery.api_group(parts[1], groups)
    if len(parts) == 3 and parts[0] == "apis" and (parts[1] in SERVED_GROUPS or parts[1] in groups):
        doc = discovery.resource_list(parts[2], parts[1], groups)
        if doc is None:
            raise no_such_path()
        return doc
    if parts[:1] == ["openapi"]:
        gated = openapi_gated.served(groups)  # (the versions served behind feature gates, when theirs are on)
        if parts == ["openapi", "v3"]:
            root = openapi_gated.root(gated) if gated else discovery.openapi_v3_root()
            return {"paths": {**root["paths"], **crd_openapi.root_paths(groups)}}  # (and the CRDs' groups)
        if len(parts) == 5 and parts[2] == "apis" and (custom := crd_openapi.document(parts[3], parts[4], groups)):
            return custom
        if len(parts) == 5 and parts[2] == "apis" and (parts[3], parts[4]) in gated:
            return openapi_gated.document(parts[3], parts[4])
        if parts == ["openapi", "v3", "api", "v1"]:
            return discovery.openapi_v3_gv("v1", core=True)
        if parts == ["openapi", "v3", "apis", EVENTS_GROUP, "v1"]:
            return discovery.openapi_v3_events()
        if len(parts) == 5 and parts[2] == "apis" and parts[4] == "v1" and parts[3] in discovery.MODELLED_V1_GROUPS:
            return discovery.openapi_v3_group(parts[3])
        if len(parts) == 5 and parts[2] == "apis" and (parts[3], parts[4]) in discovery.MODELLED_OTHER_VERSIONS:
            return discovery.openapi_v3_group(parts[3], parts[4])
        if len(parts) == 5 and parts[2:4] == ["apis", GROUP]:
            doc = discovery.openapi_v3_gv(parts[4])
            if doc is not None:
                return doc
        raise no_such_path()
    return None


def deprecated_watch(parts: list[str], query: str) -> tuple[list[str], str] | None:
    """A request to the deprecated watch paths (``/api/v1/watch/pods``, ``/apis/<group>/<version>/watch/
    namespaces/<ns>/<resource>/<name>``), which kube-apiserver still serves, as the watch it stands for: the
    path without ``watch`` and the query with ``watch=true`` (and, for a named object, a field selector on its
    name). None for any other path."""
    at = 2 if parts[:1] == ["api"] else 3
    if parts[:1] not in (["api"], ["apis"]) or len(parts) <= at or parts[at] != "watch":
        return None
    rest = parts[at + 1:]
    scoped = 2 if rest[:1] == ["namespaces"] and len(rest) >= 3 else 0
    if len(rest) - scoped == 2:  # one object: a watch of its name
        name = rest.pop()
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        selector = next((v for k, v in pairs if k == "fieldSelector"), "")
        pairs = [(k, v) for k, v in pairs if k != "fieldSelector"]
        pairs.append(("fieldSelector", f"metadata.name={name}" + (f",{selector}" if selector else "")))
        query = urllib.parse.urlencode(pairs)
    return parts[:at] + rest, "&".join(q for q in (query, "watch=true") if q)


def target(parts: list[str], groups: Groups = GROUP_RESOURCES) -> Target:
    if parts[:2] == ["api", "v1"]:
        table, version, rest = CORE, "v1", parts[2:]
        if rest[:1] == ["namespaces"] and (len(rest) <= 2 or (len(rest) == 3 and rest[2] not in CORE)):
            if len(rest) == 3 and rest[2] not in ("status", "finalize"):
                raise no_such_path()
            return Target(CORE["namespaces"], "v1", "", rest[1] if len(rest) > 1 else "",
                           rest[2] if len(rest) > 2 else "")
    elif len(parts) >= 3 and parts[0] == "apis" and parts[1] in groups:
        table, version, rest = groups[parts[1]], parts[2], parts[3:]
    else:
        raise no_such_path()
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise no_such_path()
    resource = table.get(rest[0])
    if resource is None or version not in resource.versions:
        raise no_such_path()
    if namespace and not resource.namespaced:
        raise no_such_path()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and not ((sub == "status" and resource.status) or sub in resource.subresources):
        raise no_such_path()
    return Target(resource, version, namespace, name, sub)


def verb(request: Request, t: Target) -> str:
    """The verb a request means on ``t``; 405 for a verb the resource does not serve (a write to a read-only
    resource), as kube-apiserver answers a method a storage does not implement."""
    name = _verb(request, t)
    if t.resource.verbs and name not in t.resource.verbs:
        raise method_not_allowed()
    return name


def _verb(request: Request, t: Target) -> str:
    method = request.method
    if t.sub == "finalize" and method != "PUT":  # namespaces/finalize takes updates only
        raise method_not_allowed()
    if t.sub in ("binding", "eviction", "token"):  # create-only subresources
        if method != "POST":
            raise method_not_allowed()
        return "create"
    if t.sub in ("exec", "attach", "portforward"):  # connect: a WebSocket GET or a SPDY POST
        if method not in ("GET", "POST"):
            raise method_not_allowed()
        return "get" if method == "GET" else "create"
    if method == "GET":
        if t.name:
            return "get"
        return "watch" if query_flag(request.query_params, "watch") else "list"
    if method == "POST" and not t.name:
        if t.resource.namespaced and not t.namespace:
            raise method_not_allowed()
        return "create"
    if method == "PUT" and t.name:
        return "update"
    if method == "PATCH" and t.name:
        return "patch"
    # no deletecollection of namespaces; no delete of a subresource (status, finalize): its storage has none
    if method == "DELETE" and not t.sub and (t.name or t.resource.name != "namespaces"):
        return "delete" if t.name else "deletecollection"
    raise method_not_allowed()
