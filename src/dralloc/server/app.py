"""The HTTP layer: kube-apiserver's REST semantics for resource.k8s.io (and the bits of core/v1 clients need).

One catch-all route parses the URL into (resource, version, namespace, name, subresource) and dispatches on
the method. Objects are stored in their v1 JSON form and converted to the version asked for. Every failure is
a ``Status`` object with kube-apiserver's code, reason and message; bad input never gives a 500.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import msgspec
import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from dralloc.api import conversion
from dralloc.errors import InputError
from dralloc.server import discovery, protobuf
from dralloc.server.auth import Authorizer, User
from dralloc.server.errors import ApiError, already_exists, bad_request, conflict, invalid, not_found
from dralloc.server.apply import apply
from dralloc.server.patch import json_patch, merge_patch
from dralloc.server.registry import CORE, FIELD_SELECTORS, GROUP, RESOURCES, Resource
from dralloc.server.selectors import field_selector, label_selector
from dralloc.server.table import to_table
from dralloc.store import Conflict, Gone, NotFound, Outcome, SQLiteStore, SQLStore

MAX_BODY = 3 * 1024 * 1024
PUBLIC_PATHS = {"/healthz", "/readyz", "/livez", "/version"}
JSON = "application/json"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Target:
    """What a URL names."""

    def __init__(self, resource: Resource, version: str, namespace: str, name: str, sub: str) -> None:
        self.resource = resource
        self.version = version
        self.namespace = namespace
        self.name = name
        self.sub = sub

    @property
    def api_version(self) -> str:
        return f"{self.resource.group}/{self.version}" if self.resource.group else self.version


class ApiServer:
    def __init__(self, store: SQLStore, tokens: dict[str, User] | None = None,
                 authorizer: Authorizer | None = None, anonymous: bool = False) -> None:
        self.store = store
        self.tokens = tokens
        self.authorizer = authorizer or Authorizer()
        self.anonymous = anonymous or tokens is None
        self.requests: Counter[tuple[str, int]] = Counter()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self.closing = False  # shutting down: watches end, new requests still get answers until the socket closes
        self.open_connections: Any = lambda: 0  # set by the server that runs the app (serving.serve)
        self.max_connections = 0
        store.subscribe(self._notify)

    def begin_shutdown(self) -> None:
        """End every open watch (called on SIGTERM/SIGINT before waiting for in-flight requests)."""
        self.closing = True
        self._notify()

    def _notify(self) -> None:
        for loop, event in list(self._waiters):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # loop closed
                self._waiters.discard((loop, event))

    # --- entry point --------------------------------------------------------------------------------

    async def __call__(self, request: Request) -> Response:
        try:
            response = await self._handle(request)
        except ApiError as exc:
            response = self._status(request, exc)
        except InputError as exc:
            response = self._status(request, bad_request(str(exc)))
        except Exception as exc:  # noqa: BLE001 - a bug must still answer with a Status, never a traceback page
            response = self._status(request, ApiError(500, f"internal error: {type(exc).__name__}: {exc}"))
        self.requests[(request.method, response.status_code)] += 1
        return response

    def _status(self, request: Request, exc: ApiError) -> Response:
        return self._json(request, exc.status(), exc.code, exc.headers)

    def _json(self, request: Request, body: Any, code: int = 200, headers: dict[str, str] | None = None,
              warnings: list[str] | None = None) -> Response:
        pretty = request.query_params.get("pretty") in ("true", "1")
        data = (json.dumps(body, indent=2, ensure_ascii=False).encode() if pretty
                else msgspec.json.encode(body))
        response = Response(data, code, headers=headers, media_type=JSON)
        for w in warnings or ():
            response.headers.append("Warning", '299 - ' + json.dumps(w))
        return response

    def _authenticate(self, request: Request) -> User:
        header = request.headers.get("authorization", "")
        if self.tokens is not None and header.lower().startswith("bearer "):
            user = self.tokens.get(header[7:].strip())
            if user is not None:
                return user
        if self.anonymous:
            return User("system:anonymous", "", ("system:unauthenticated",))
        raise ApiError(401, "Unauthorized")

    async def _handle(self, request: Request) -> Response:
        path = request.url.path.rstrip("/") or "/"
        if path in ("/healthz", "/readyz", "/livez"):
            return PlainTextResponse("ok")
        if self.max_connections and self.open_connections() > self.max_connections:
            raise ApiError(429, "Too many requests, please try again later.", "TooManyRequests",
                           details={"retryAfterSeconds": 1}, headers={"Retry-After": "1", "Connection": "close"})
        if path == "/version":
            return self._json(request, discovery.version_info())
        user = self._authenticate(request)
        if path == "/metrics":
            return PlainTextResponse(self._metrics(), media_type="text/plain; version=0.0.4")
        parts = [p for p in path.split("/") if p]
        doc = self._discovery(parts)
        if doc is not None:
            if request.method != "GET":
                raise ApiError(405, f"the server does not allow this method on the requested resource")
            return self._json(request, doc)
        target = self._target(parts)
        verb = self._verb(request, target)
        if not self.authorizer.allowed(user, verb, target.resource.name):
            scope = f' in the namespace "{target.namespace}"' if target.namespace else " at the cluster scope"
            raise ApiError(403, f'{target.resource.group_resource} is forbidden: User "{user.name}" cannot {verb} '
                                f'resource "{target.resource.name}" in API group "{target.resource.group}"{scope}',
                           details={"group": target.resource.group, "kind": target.resource.name})
        handler = getattr(self, f"_{verb}")
        return await handler(request, target)

    # --- routing ------------------------------------------------------------------------------------

    def _discovery(self, parts: list[str]) -> Any:
        if parts == ["api"]:
            return discovery.api_versions()
        if parts == ["api", "v1"]:
            return discovery.core_resource_list()
        if parts == ["apis"]:
            return discovery.api_group_list()
        if parts == ["apis", GROUP]:
            return discovery.api_group()
        if len(parts) == 3 and parts[:2] == ["apis", GROUP]:
            doc = discovery.resource_list(parts[2])
            if doc is None:
                raise ApiError(404, "the server could not find the requested resource")
            return doc
        if parts[:1] == ["openapi"]:
            if parts == ["openapi", "v3"]:
                return discovery.openapi_v3_root()
            if parts == ["openapi", "v3", "api", "v1"]:
                return discovery.openapi_v3_gv("v1", core=True)
            if len(parts) == 5 and parts[2:4] == ["apis", GROUP]:
                doc = discovery.openapi_v3_gv(parts[4])
                if doc is not None:
                    return doc
            raise ApiError(404, "the server could not find the requested resource")
        return None

    def _target(self, parts: list[str]) -> _Target:
        missing = ApiError(404, "the server could not find the requested resource")
        if parts[:2] == ["api", "v1"]:
            table, version, rest = CORE, "v1", parts[2:]
            if rest[:1] == ["namespaces"] and len(rest) <= 3:
                return _Target(CORE["namespaces"], "v1", "", rest[1] if len(rest) > 1 else "",
                               rest[2] if len(rest) > 2 else "")
        elif len(parts) >= 3 and parts[:2] == ["apis", GROUP]:
            table, version, rest = RESOURCES, parts[2], parts[3:]
        else:
            raise missing
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise missing
        resource = table.get(rest[0])
        if resource is None or version not in resource.versions:
            raise missing
        if namespace and not resource.namespaced:
            raise missing
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and (sub != "status" or not resource.status):
            raise missing
        return _Target(resource, version, namespace, name, sub)

    def _verb(self, request: Request, t: _Target) -> str:
        method = request.method
        if method == "GET":
            if t.name:
                return "get"
            return "watch" if request.query_params.get("watch") in ("true", "1") else "list"
        if method == "POST" and not t.name:
            if t.resource.namespaced and not t.namespace:
                raise ApiError(405, "the server does not allow this method on the requested resource")
            return "create"
        if method == "PUT" and t.name:
            return "update"
        if method == "PATCH" and t.name:
            return "patch"
        if method == "DELETE":
            return "delete" if t.name else "deletecollection"
        raise ApiError(405, "the server does not allow this method on the requested resource")

    # --- helpers ------------------------------------------------------------------------------------

    def _present(self, obj: dict[str, Any], t: _Target) -> dict[str, Any]:
        if t.resource.group and t.version != "v1":
            return conversion.from_v1(obj, t.api_version)
        return obj

    async def _read_body(self, request: Request) -> tuple[bytes, str]:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY:
            raise ApiError(413, "the request body is too large (limit 3145728 bytes)")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ApiError(413, "the request body is too large (limit 3145728 bytes)")
        ctype = request.headers.get("content-type", JSON).split(";")[0].strip().lower()
        return raw, ctype

    @staticmethod
    def _parse(raw: bytes, ctype: str, t: _Target) -> Any:
        if not raw.strip():
            raise bad_request("the request body is empty")
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml", "application/x-yaml"):
                data = yaml.safe_load(raw)
            else:
                data = msgspec.json.decode(raw)
        except (msgspec.DecodeError, yaml.YAMLError, UnicodeDecodeError) as exc:
            raise bad_request(f"couldn't decode the request body as {'YAML' if 'yaml' in ctype else 'JSON'}: "
                              f"{exc}") from None
        return data

    def _field_validation(self, request: Request) -> str:
        value = request.query_params.get("fieldValidation", "Warn") or "Warn"
        if value not in ("Ignore", "Warn", "Strict"):
            raise bad_request(f'fieldValidation must be one of "Ignore", "Warn" or "Strict", not "{value}"')
        return value

    @staticmethod
    def _dry_run(request: Request, options: dict[str, Any] | None = None) -> bool:
        values = request.query_params.getlist("dryRun") + list((options or {}).get("dryRun") or [])
        for v in values:
            if v != "All":
                raise bad_request(f'invalid dry run option "{v}": only "All" is supported')
        return bool(values)

    def _field_problems(self, raw: bytes | None, ctype: str, data: dict[str, Any], mode: str, t: _Target) -> list[str]:
        if mode == "Ignore":
            return []
        from dralloc.api.strict import field_problems, unknown_fields

        if t.resource.group and data is not None and raw is not None:
            # The body as sent: duplicate keys (found while parsing) and unknown fields.
            problems = field_problems(raw, yaml_input="yaml" in ctype)
            if not problems and ctype != JSON and "yaml" not in ctype:
                problems = unknown_fields(data)
        elif t.resource.group:
            problems = unknown_fields(data)
        else:
            problems = []
        if mode == "Strict" and problems:
            kind = t.resource.kind
            raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: strict decoding '
                              f"error: {', '.join(problems)}")
        return problems

    def _typed(self, data: Any, t: _Target) -> Any:
        """Check kind and apiVersion against the URL and decode into the v1 model."""
        from dralloc.api.codec import decode

        if not isinstance(data, dict):
            raise bad_request("the request body must be a JSON object")
        kind = data.get("kind") or t.resource.kind
        api_version = data.get("apiVersion") or t.api_version
        if kind != t.resource.kind:
            raise bad_request(f'the kind "{kind}" does not match the resource "{t.resource.name}" '
                              f'(expected "{t.resource.kind}")')
        if api_version != t.api_version:
            raise bad_request(f'the API version in the data ({api_version}) does not match the expected API '
                              f'version ({t.api_version})')
        data = {**data, "kind": kind, "apiVersion": api_version}
        try:
            return decode(data)
        except InputError as exc:
            raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: {exc}') from None

    def _stored_form(self, obj: Any) -> dict[str, Any]:
        from dralloc.api.codec import to_dict
        from dralloc.api.defaults import apply_defaults

        return to_dict(apply_defaults(obj))

    def _check(self, t: _Target, name: str, errors: list[Any]) -> None:
        if errors:
            raise invalid(t.resource, name, errors)

    # --- reads --------------------------------------------------------------------------------------

    async def _get(self, request: Request, t: _Target) -> Response:
        try:
            obj = self.store.get(t.resource.name, t.namespace, t.name)
        except NotFound:
            raise not_found(t.resource, t.name) from None
        obj = self._present(obj, t)
        if _wants_table(request):
            return self._json(request, to_table(t.resource, [obj], str(self.store.current_rv())))
        return self._json(request, obj)

    def _matchers(self, request: Request, t: _Target) -> tuple[Any, Any]:
        q = request.query_params
        return (label_selector(q.get("labelSelector")),
                field_selector(q.get("fieldSelector"), FIELD_SELECTORS.get(t.resource.name, ()), t.resource.name,
                               t.version))

    def _list_fast(self, request: Request, t: _Target) -> Response | None:
        """An unfiltered v1 list, answered from the stored JSON text without parsing each object."""
        q = request.query_params
        if (t.version != "v1" or q.get("labelSelector") or q.get("fieldSelector") or q.get("limit")
                or q.get("continue") or q.get("pretty") or _wants_table(request)
                or q.get("resourceVersion") not in (None, "", "0") or q.get("resourceVersionMatch")):
            return None
        ns = t.namespace if t.resource.namespaced and t.namespace else None
        rows, rv = self.store.list_raw(t.resource.name, ns)
        prefix = json.dumps({"apiVersion": t.api_version, "kind": t.resource.kind}, separators=(",", ":"))[:-1] + ","
        items = []
        for row in rows:
            if not row.startswith(prefix):
                return None  # not in the canonical stored form: take the general path
            items.append("{" + row[len(prefix):])
        head = json.dumps({"kind": f"{t.resource.kind}List", "apiVersion": t.api_version,
                           "metadata": {"resourceVersion": str(rv)}}, separators=(",", ":"))[:-1]
        return Response(f'{head},"items":[{",".join(items)}]}}'.encode(), 200, media_type=JSON)

    def _check_list_version(self, rv: str, match: str) -> None:
        """Lists are served from the latest state, which satisfies every request but an old exact version."""
        if match not in ("", "NotOlderThan", "Exact"):
            raise bad_request(f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
                              f'"Exact", "NotOlderThan"')
        if match and not rv:
            raise ApiError(422, "resourceVersionMatch is forbidden unless resourceVersion is provided")
        if not rv or rv == "0":
            return
        try:
            wanted = int(rv)
        except ValueError:
            raise bad_request(f"invalid resourceVersion {rv!r}") from None
        current = self.store.current_rv()
        if wanted > current:
            raise ApiError(504, f"Too large resource version: {wanted}, current: {current}", "Timeout",
                           details={"causes": [{"reason": "ResourceVersionTooLarge",
                                                "message": "Too large resource version"}], "retryAfterSeconds": 1})
        if match == "Exact" and wanted != current:
            raise ApiError(410, f"too old resource version: {wanted} ({current})", "Expired")

    async def _list(self, request: Request, t: _Target) -> Response:
        fast = self._list_fast(request, t)
        if fast is not None:
            return fast
        labels, fields = self._matchers(request, t)
        q = request.query_params
        try:
            limit = min(max(int(q.get("limit") or 0), 0), 1 << 31)  # as upstream, a negative limit means none
        except ValueError:
            raise bad_request(f"invalid limit {q.get('limit')!r}") from None
        after, list_rv = _decode_continue(q.get("continue"))
        self._check_list_version(q.get("resourceVersion") or "", q.get("resourceVersionMatch") or "")
        ns = t.namespace if t.resource.namespaced and t.namespace else None
        items: list[dict[str, Any]] = []
        cursor = after
        rv = 0
        while True:  # page through the store until ``limit`` matching items (selectors filter after reading)
            batch, rv = self.store.list(t.resource.name, ns, after=cursor, limit=max(limit, 500) if limit else 0)
            for obj in batch:
                cursor = ((obj["metadata"].get("namespace") or ""), obj["metadata"]["name"])
                if labels(obj) and fields(obj):
                    items.append(self._present(obj, t))
                    if limit and len(items) == limit:
                        break
            if not limit or len(items) == limit or len(batch) < max(limit, 500):
                break
        meta: dict[str, Any] = {"resourceVersion": str(list_rv or rv)}
        if limit and len(items) == limit:
            more, _ = self.store.list(t.resource.name, ns, after=cursor, limit=1)
            if more:
                meta["continue"] = _encode_continue(cursor, list_rv or rv)
        if _wants_table(request):
            table = to_table(t.resource, items, meta["resourceVersion"])
            if "continue" in meta:
                table["metadata"]["continue"] = meta["continue"]
            return self._json(request, table)
        for item in items:  # lists carry kind/apiVersion once, on the list
            item.pop("kind", None)
            item.pop("apiVersion", None)
        return self._json(request, {"kind": f"{t.resource.kind}List", "apiVersion": t.api_version,
                                    "metadata": meta, "items": items})

    async def _watch(self, request: Request, t: _Target) -> Response:
        labels, fields = self._matchers(request, t)
        q = request.query_params
        try:
            timeout = float(q.get("timeoutSeconds") or 1800)
        except ValueError:
            raise bad_request("invalid timeoutSeconds") from None
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        rv_param = q.get("resourceVersion") or ""
        ns = t.namespace if t.resource.namespaced and t.namespace else None
        table = _wants_table(request)
        initial: list[dict[str, Any]] = []
        selective = bool(q.get("labelSelector") or q.get("fieldSelector"))

        def match(obj: dict[str, Any]) -> bool:
            return labels(obj) and fields(obj)

        # sendInitialEvents (WatchList) asks for the current state first whatever resourceVersion says;
        # without it, only an unset or "0" resourceVersion starts with the current state (as ADDED events).
        initial_param = q.get("sendInitialEvents")
        send_initial = initial_param in ("true", "1")
        if send_initial or (initial_param is None and rv_param in ("", "0")):
            objs, start = self.store.list(t.resource.name, ns)
            initial = [o for o in objs if match(o)]
        elif rv_param in ("", "0"):
            start = self.store.current_rv()
        else:
            try:
                start = int(rv_param)
            except ValueError:
                raise bad_request(f"invalid resourceVersion {rv_param!r}") from None
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        waiter = (loop, wake)

        def line(kind: str, obj: dict[str, Any]) -> bytes:
            shown = self._present(obj, t)
            if table:
                shown = to_table(t.resource, [shown], shown["metadata"].get("resourceVersion", ""))
            return msgspec.json.encode({"type": kind, "object": shown}) + b"\n"

        async def stream() -> Any:
            self._waiters.add(waiter)
            last = start
            deadline = time.monotonic() + timeout
            next_bookmark = time.monotonic() + 10
            try:
                for obj in initial:
                    if self.closing:
                        return
                    yield line("ADDED", obj)
                if send_initial and bookmarks:  # WatchList: tell the client the initial state is complete
                    mark = {"kind": t.resource.kind, "apiVersion": t.api_version,
                            "metadata": {"resourceVersion": str(start),
                                         "annotations": {"k8s.io/initial-events-end": "true"}}}
                    yield json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n"
                while time.monotonic() < deadline and not self.closing:
                    wake.clear()
                    try:
                        events = self.store.events_since(last)
                    except Gone as exc:
                        err = ApiError(410, str(exc), "Expired").status()
                        yield json.dumps({"type": "ERROR", "object": err}).encode() + b"\n"
                        return
                    for ev in events:
                        last = ev.rv
                        if ev.resource != t.resource.name or (ns is not None and ev.namespace != ns):
                            continue
                        shown = _filtered_event(ev, match, selective)
                        if shown is not None:
                            yield line(*shown)
                    if len(events) >= 1000:
                        continue
                    if bookmarks and time.monotonic() >= next_bookmark:
                        next_bookmark = time.monotonic() + 10
                        mark = {"kind": t.resource.kind, "apiVersion": t.api_version,
                                "metadata": {"resourceVersion": str(last)}}
                        yield json.dumps({"type": "BOOKMARK", "object": mark}).encode() + b"\n"
                    wait = min(1.0, max(0.0, deadline - time.monotonic()))
                    try:
                        await asyncio.wait_for(wake.wait(), wait)
                    except asyncio.TimeoutError:
                        pass  # poll again: other processes may share the database
            finally:
                self._waiters.discard(waiter)

        return StreamingResponse(stream(), media_type=JSON)

    # --- writes -------------------------------------------------------------------------------------

    def _new_metadata(self, meta: dict[str, Any], t: _Target, rv: str) -> dict[str, Any]:
        meta = dict(meta)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta["resourceVersion"] = rv
        if t.resource.group:
            meta["generation"] = 1
        if t.resource.namespaced:
            meta["namespace"] = t.namespace
        for k in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(k, None)
        return meta

    def _prepare_create(self, data: Any, t: _Target) -> tuple[dict[str, Any], str]:
        obj = self._typed(data, t)
        meta = obj.metadata
        if t.resource.namespaced:
            if meta.namespace and meta.namespace != t.namespace:
                raise bad_request("the namespace of the provided object does not match the namespace sent on "
                                  "the request")
            meta = msgspec.structs.replace(meta, namespace=t.namespace)
        if not meta.name and meta.generate_name:
            meta = msgspec.structs.replace(meta, name=meta.generate_name + secrets.token_hex(3)[:5])
        obj = msgspec.structs.replace(obj, metadata=meta)
        if hasattr(obj, "status") and t.resource.status:
            obj = msgspec.structs.replace(obj, status=None)  # status is written through /status only
        from dralloc.validation import validate

        self._check(t, meta.name or "", validate(obj, require_namespace=t.resource.namespaced))
        return self._stored_form(obj), meta.name or ""

    def _object_body(self, raw: bytes, ctype: str, request: Request, t: _Target) -> tuple[Any, list[str]]:
        """The object a create or update sends (JSON, YAML, or protobuf for core kinds) and its field warnings."""
        if ctype == protobuf.CONTENT_TYPE and not t.resource.group:
            try:
                data = protobuf.decode(raw)
            except protobuf.ProtobufError as exc:
                raise bad_request(f"couldn't decode the request body as protobuf: {exc}") from None
            self._field_validation(request)
            return data, []
        if ctype not in (JSON, "application/yaml", "application/x-yaml"):
            accepted = "application/json, application/yaml" + (
                "" if t.resource.group else f", {protobuf.CONTENT_TYPE}")
            raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                                f"include: {accepted}")
        data = _type_meta_checked(self._parse(raw, ctype, t), t)
        return data, self._field_problems(raw, ctype, data, self._field_validation(request), t)

    async def _create(self, request: Request, t: _Target) -> Response:
        raw, ctype = await self._read_body(request)
        data, warnings = self._object_body(raw, ctype, request, t)
        stored, name = self._prepare_create(data, t)
        dry = self._dry_run(request)
        # The write (and its fsync) runs in a worker thread so the loop can parse the next request meanwhile.
        result = await asyncio.to_thread(self._insert, t, name, stored, dry)
        return self._json(request, self._present(result, t), 201, warnings=warnings)

    def _insert(self, t: _Target, name: str, stored: dict[str, Any], dry: bool) -> dict[str, Any]:
        if dry:
            try:
                self.store.get(t.resource.name, t.namespace, name)
            except NotFound:
                return {**stored, "metadata": self._new_metadata(stored["metadata"], t, "")}
            raise already_exists(t.resource, name)
        try:
            return self.store.create(t.resource.name, t.namespace, name,
                                     lambda _old, rv: {**stored, "metadata": self._new_metadata(stored["metadata"], t, rv)})
        except Conflict:
            raise already_exists(t.resource, name) from None

    def _merge_update(self, t: _Target, old: dict[str, Any], new_obj: Any) -> tuple[dict[str, Any], list[Any]]:
        """The stored form of an update of ``old`` by typed ``new_obj``, and its validation errors."""
        from dralloc.api.codec import decode
        from dralloc.validation import validate_status_update, validate_update

        new = self._stored_form(new_obj)
        old_meta = old["metadata"]
        meta = dict(new.get("metadata") or {})
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):  # set by DELETE only
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if "managedFields" not in meta and "managedFields" in old_meta:
            meta["managedFields"] = old_meta["managedFields"]
        meta["uid"] = old_meta.get("uid")
        meta["creationTimestamp"] = old_meta.get("creationTimestamp")
        if t.resource.namespaced:
            meta["namespace"] = t.namespace
        if t.sub == "status":
            # As kube-apiserver's status strategies: spec and metadata (labels, annotations and finalizers
            # included) come from the stored object; only status is taken from the request.
            merged = {**old, "status": new.get("status")}
            if merged["status"] is None:
                merged.pop("status")
            merged["metadata"] = dict(old_meta)
        else:
            merged = {**new, "metadata": meta}
            if t.resource.status:
                if "status" in old:
                    merged["status"] = old["status"]
                else:
                    merged.pop("status", None)
        if t.resource.group:
            gen = old_meta.get("generation", 1)
            merged["metadata"]["generation"] = gen + 1 if merged.get("spec") != old.get("spec") else gen
        finalizer_errors = _finalizer_errors(merged["metadata"], old_meta)
        if not t.resource.group:
            return merged, finalizer_errors
        new_typed, old_typed = decode(merged), decode(old)
        if t.sub == "status":
            return merged, validate_status_update(new_typed, old_typed)
        return merged, validate_update(new_typed, old_typed) + finalizer_errors

    async def _update(self, request: Request, t: _Target) -> Response:
        raw, ctype = await self._read_body(request)
        data, warnings = self._object_body(raw, ctype, request, t)
        obj = self._typed(data, t)
        if obj.metadata.name != t.name:
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                              % (obj.metadata.name, t.name))
        result = await asyncio.to_thread(self._apply_update, request, t, obj, obj.metadata.resource_version)
        return self._json(request, self._present(result, t), warnings=warnings)

    def _apply_update(self, request: Request, t: _Target, obj: Any, expect_rv: str | None) -> dict[str, Any]:
        dry = self._dry_run(request)
        errors_box: list[Any] = []

        def build(old: dict[str, Any], rv: str) -> dict[str, Any]:
            merged, errors = self._merge_update(t, old, obj)
            if errors:
                errors_box.extend(errors)
                raise _Invalid()
            merged["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
            if merged == old:
                return old
            merged["metadata"]["resourceVersion"] = rv
            if merged["metadata"].get("deletionTimestamp") and not merged["metadata"].get("finalizers"):
                return Outcome(merged, "DELETED")  # the last finalizer went: the deletion completes
            return merged

        try:
            if dry:
                old = self.store.get(t.resource.name, t.namespace, t.name)
                if expect_rv and old["metadata"].get("resourceVersion") != expect_rv:
                    raise Conflict("modified")
                result = build(old, old["metadata"].get("resourceVersion", ""))
                return result.object if isinstance(result, Outcome) else result
            return self.store.update(t.resource.name, t.namespace, t.name, build, expect_rv or None)
        except NotFound:
            raise not_found(t.resource, t.name) from None
        except Conflict:
            raise conflict(t.resource, t.name) from None
        except _Invalid:
            raise invalid(t.resource, t.name, errors_box) from None

    async def _patch(self, request: Request, t: _Target) -> Response:
        raw, ctype = await self._read_body(request)
        kinds = ("application/merge-patch+json", "application/strategic-merge-patch+json",
                 "application/json-patch+json", "application/apply-patch+yaml")
        if ctype not in kinds:
            raise ApiError(415, f"the body of the request was in an unknown format - accepted media types "
                                f"include: {', '.join(kinds)}")
        patch = self._parse(raw, ctype, t)
        mode = self._field_validation(request)
        try:
            current = self._present(self.store.get(t.resource.name, t.namespace, t.name), t)
        except NotFound:
            if ctype != "application/apply-patch+yaml":
                raise not_found(t.resource, t.name) from None
            current = None
        if ctype == "application/apply-patch+yaml":
            if not request.query_params.get("fieldManager"):
                raise bad_request("PATCH requests with the apply content type require a fieldManager")
            if not isinstance(patch, dict):
                raise bad_request("an applied configuration must be an object")
            _type_meta_checked(patch, t)
            warnings = self._field_problems(raw, ctype, patch, mode, t)
            if (patch.get("metadata") or {}).get("name") not in (None, t.name):
                raise bad_request("the name of the object does not match the name on the URL")
            patch = {**patch, "metadata": {**(patch.get("metadata") or {}), "name": t.name}}
            force = request.query_params.get("force") in ("true", "1")
            merged = apply(current, patch, request.query_params["fieldManager"], force, t.api_version)
            if current is None:  # server-side apply of a new object creates it
                stored, name = self._prepare_create(merged, t)
                result = await asyncio.to_thread(self._insert, t, name, stored, self._dry_run(request))
                return self._json(request, self._present(result, t), 201, warnings=warnings)
        elif ctype == "application/json-patch+json":
            merged = _type_meta_checked(json_patch(current, patch), t)
            warnings = self._field_problems(None, JSON, merged, mode, t)
        else:
            if not isinstance(patch, dict):
                raise bad_request("a merge patch must be a JSON object")
            merged = _type_meta_checked(merge_patch(current, patch), t)
            warnings = self._field_problems(raw, JSON, patch, mode, t)  # duplicates in the patch itself
            warnings += [w for w in self._field_problems(None, JSON, merged, mode, t) if w not in warnings]
        expect = ((patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch, dict) else None)
        obj = self._typed(merged, t)
        if obj.metadata.name != t.name:
            raise bad_request("the name of the object cannot be changed by a patch")
        result = await asyncio.to_thread(self._apply_update, request, t, obj, expect)
        return self._json(request, self._present(result, t), warnings=warnings)

    async def _delete(self, request: Request, t: _Target) -> Response:
        raw, ctype = await self._read_body(request)
        options = self._parse(raw, JSON, t) if raw.strip() else {}
        if not isinstance(options, dict):
            raise bad_request("DeleteOptions must be a JSON object")
        pre = options.get("preconditions") or {}
        if not isinstance(pre, dict) or any(not isinstance(v, (str, type(None))) for v in pre.values()):
            raise bad_request("DeleteOptions.preconditions must be an object of strings (uid, resourceVersion)")
        dry = self._dry_run(request, options)

        def check(old: dict[str, Any]) -> Outcome | None:
            meta = old.get("metadata") or {}
            if pre.get("uid") and pre["uid"] != meta.get("uid"):
                raise _Precondition(f'Precondition failed: UID in precondition: {pre["uid"]}, UID in object meta: '
                                    f'{meta.get("uid")}')
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
                raise _Precondition(f'Precondition failed: ResourceVersion in precondition: '
                                    f'{pre["resourceVersion"]}, ResourceVersion in object meta: '
                                    f'{meta.get("resourceVersion")}')
            return _mark_deleting(old)

        try:
            if dry:
                old = self.store.get(t.resource.name, t.namespace, t.name)
                marked = check(old)
                result = marked.object if marked is not None else old
            else:
                result = await asyncio.to_thread(self.store.delete, t.resource.name, t.namespace, t.name,
                                                 check=check)
        except NotFound:
            raise not_found(t.resource, t.name) from None
        except _Precondition as exc:
            raise conflict(t.resource, t.name, str(exc)) from None
        # 202 Accepted: finalizers keep the object until their controllers remove them.
        pending = bool((result.get("metadata") or {}).get("finalizers"))
        return self._json(request, self._present(result, t), 202 if pending else 200)

    async def _deletecollection(self, request: Request, t: _Target) -> Response:
        labels, fields = self._matchers(request, t)
        dry = self._dry_run(request)
        ns = t.namespace if t.resource.namespaced and t.namespace else None
        objs, rv = self.store.list(t.resource.name, ns)
        deleted = []
        for obj in objs:
            if not (labels(obj) and fields(obj)):
                continue
            meta = obj["metadata"]
            if dry:
                marked = _mark_deleting(obj)
                obj = marked.object if marked is not None else obj
            else:
                try:
                    obj = self.store.delete(t.resource.name, meta.get("namespace") or "", meta["name"],
                                            check=_mark_deleting)
                except NotFound:
                    continue
            item = self._present(obj, t)
            item.pop("kind", None)
            item.pop("apiVersion", None)
            deleted.append(item)
        return self._json(request, {"kind": f"{t.resource.kind}List", "apiVersion": t.api_version,
                                    "metadata": {"resourceVersion": str(self.store.current_rv())},
                                    "items": deleted})

    # --- metrics ------------------------------------------------------------------------------------

    def _metrics(self) -> str:
        lines = ["# HELP apiserver_request_total Requests by method and HTTP code.",
                 "# TYPE apiserver_request_total counter"]
        for (method, code), n in sorted(self.requests.items()):
            lines.append(f'apiserver_request_total{{verb="{method}",code="{code}"}} {n}')
        lines += ["# HELP dralloc_store_writes_total Writes committed to the store.",
                  "# TYPE dralloc_store_writes_total counter", f"dralloc_store_writes_total {self.store.writes}",
                  "# HELP dralloc_resource_version The store's current resourceVersion.",
                  "# TYPE dralloc_resource_version gauge", f"dralloc_resource_version {self.store.current_rv()}",
                  "# HELP dralloc_watchers Open watch streams.", "# TYPE dralloc_watchers gauge",
                  f"dralloc_watchers {len(self._waiters)}"]
        return "\n".join(lines) + "\n"


class _Invalid(Exception):
    pass


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


def _type_meta_checked(data: Any, t: _Target) -> Any:
    """A body must be an object whose kind, apiVersion and metadata (when present) have the right JSON types."""
    if not isinstance(data, dict):
        raise bad_request("the request body must be a JSON object")
    kind = t.resource.kind
    for key, want, name in (("kind", str, "string"), ("apiVersion", str, "string"), ("metadata", dict, "object")):
        value = data.get(key)
        if value is not None and not isinstance(value, want):
            raise bad_request(f'{kind} in version "{t.version}" cannot be handled as a {kind}: json: cannot '
                              f'unmarshal {_json_type(value)} into Go struct field {kind}.{key} of type {name}')
    return data


def _mark_deleting(old: dict[str, Any]) -> Outcome | None:
    """A delete of an object with finalizers only marks it (deletionTimestamp, grace period 0, generation
    bumped, as kube-apiserver does); None: remove it now."""
    meta = old.get("metadata") or {}
    if not meta.get("finalizers"):
        return None
    if meta.get("deletionTimestamp"):
        return Outcome(old, "MODIFIED")  # already being deleted: nothing to write
    meta = {**meta, "deletionTimestamp": _now(), "deletionGracePeriodSeconds": 0}
    if meta.get("generation"):
        meta["generation"] += 1
    return Outcome({**old, "metadata": meta}, "MODIFIED")


def _finalizer_errors(new_meta: dict[str, Any], old_meta: dict[str, Any]) -> list[Any]:
    """kube-apiserver's rule for objects being deleted: finalizers may go, but none may be added."""
    if not old_meta.get("deletionTimestamp"):
        return []
    added = [f for f in new_meta.get("finalizers") or [] if f not in (old_meta.get("finalizers") or [])]
    if not added:
        return []
    from dralloc.validation.field import forbidden

    shown = ", ".join(json.dumps(f) for f in added)
    return [forbidden("metadata.finalizers", f"no new finalizers can be added if the object is being deleted, "
                                             f"found new finalizers []string{{{shown}}}")]


class _Precondition(Exception):
    pass


def _filtered_event(ev: Any, match: Any, selective: bool) -> tuple[str, dict[str, Any]] | None:
    """The event a watcher with selectors sees: as kube-apiserver's watch cache, an object that starts
    matching is ADDED, one that stops matching is DELETED (its previous state at the new version)."""
    if not selective:
        return ev.type, ev.object
    now = match(ev.object)
    if ev.type == "MODIFIED" and ev.prev_json is not None:
        before = ev.prev
        was = match(before)
        if now:
            return ("MODIFIED" if was else "ADDED"), ev.object
        if was:
            meta = {**(before.get("metadata") or {}), "resourceVersion": str(ev.rv)}
            return "DELETED", {**before, "metadata": meta}
        return None
    return (ev.type, ev.object) if now else None


def _wants_table(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "as=Table" in accept and "g=meta.k8s.io" in accept


def _encode_continue(key: tuple[str, str], rv: int) -> str:
    import base64

    return base64.urlsafe_b64encode(json.dumps([key[0], key[1], rv]).encode()).decode()


def _decode_continue(token: str | None) -> tuple[tuple[str, str] | None, int]:
    if not token:
        return None, 0
    import base64

    try:
        ns, name, rv = json.loads(base64.urlsafe_b64decode(token.encode()))
        return (str(ns), str(name)), int(rv)
    except (ValueError, TypeError):
        raise bad_request("invalid continue token") from None


class App:
    """The ASGI application: every request of every method goes to the :class:`ApiServer` (so that TRACE or
    any other method gets a Kubernetes Status too)."""

    def __init__(self, api: ApiServer) -> None:
        self.api = api
        self.state = SimpleNamespace(api=api)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        response = await self.api(Request(scope, receive))
        await response(scope, receive, send)


def create_app(store: SQLStore | None = None, *, tokens: dict[str, User] | None = None,
               authorizer: Authorizer | None = None, anonymous: bool = False) -> App:
    return App(ApiServer(store or SQLiteStore(":memory:"), tokens, authorizer, anonymous))
