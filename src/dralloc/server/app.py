"""The HTTP layer: kube-apiserver's REST semantics for resource.k8s.io (and the bits of core/v1 clients need).

A request goes: health checks (no authentication) → authentication → discovery documents or a resource URL
(routing) → authorization → the verb's handler (reads, watch, writes, deletes). Objects are stored in their v1
JSON form and converted to the version asked for. Every failure is a ``Status`` object with kube-apiserver's
code, reason and message; bad input never gives a 500.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Collection
from types import SimpleNamespace
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from dralloc.errors import InputError
from dralloc.server.admission.policies import USER_SCOPE_KEY, PolicyAdmission
from dralloc.server.auth import issuer, reviews
from dralloc.server.auth import tokens as tokens_module  # (``tokens``: the static token file's)
from dralloc.server.auth.impersonation import impersonated
from dralloc.server.auth.users import AUTHENTICATED, Authorizer, User
from dralloc.server.crds import definitions as crd_definitions
from dralloc.server.crds import openapi as crd_openapi
from dralloc.server.crds import patches as crd_patches
from dralloc.server.crds import versions as crd_versions
from dralloc.server.crds.served import CustomResources
from dralloc.server.http import discovery, health, negotiation, openapi_gated, openapi_v2, routing, upgrades
from dralloc.server.http.errors import ApiError, bad_request, method_not_allowed, no_such_path
from dralloc.server.http.requests import ApiRequest
from dralloc.server.http.responses import JsonResponse, respond
from dralloc.server.registry import namespaces, pods, priorities, services
from dralloc.server.registry import service_network as service_network_module
from dralloc.server.registry.kinds import served_groups
from dralloc.server.registry.namespace_lifecycle import NamespaceCache
from dralloc.server.registry.quota_charges import QuotaCharges
from dralloc.server.registry.service_network import ServiceNetwork
from dralloc.server.subresources import SUBRESOURCES, Subresource
from dralloc.server.verbs import deletes, reads, writes
from dralloc.server.watch import stream as watch_stream
from dralloc.server.watch.hub import WatchHub
from dralloc.store import SQLiteStore, SQLStore

Handler = Callable[["ApiServer", Request, routing.Target], Awaitable[Response]]
HANDLERS: dict[str, Handler] = {
    "get": reads.get, "list": reads.list_, "watch": watch_stream.watch, "create": writes.create,
    "update": writes.update,
    "patch": writes.patch, "delete": deletes.delete, "deletecollection": deletes.deletecollection,
}
ANONYMOUS_USER = User("system:anonymous", "", ("system:unauthenticated",))  # frozen: shared by every request


log = logging.getLogger(__name__)


class ApiServer:
    def __init__(self, store: SQLStore, tokens: dict[str, User] | None = None,
                 authorizer: Authorizer | None = None, anonymous: bool = False, secure_port: int = 6443,
                 endpoint_address: str = "127.0.0.1",
                 service_account_key: tokens_module.ServiceAccountKey | None = None,
                 feature_gates: Collection[str] = (),
                 service_network: ServiceNetwork | None = None) -> None:
        self.store = store
        # the resources served, the gated ones (scheduling.k8s.io/v1alpha2) with the gates named in feature_gates,
        # and the custom resources of the CRDs stored (the ``groups`` property)
        self.custom_resources = CustomResources(store, served_groups(feature_gates))
        self.tokens = tokens
        # signs the TokenRequest API's tokens and verifies them (one in memory when the server has no data dir)
        self.service_account_key = service_account_key or tokens_module.ServiceAccountKey.generate()
        self.jwks_uri = issuer.jwks_uri(endpoint_address, secure_port)
        self.authorizer = authorizer or Authorizer()
        self.anonymous = anonymous or tokens is None
        self.requests: Counter[tuple[str, int]] = Counter()
        self.watchers: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self.closing = False  # shutting down: watches end, new requests still get answers until the socket closes
        self.open_connections: Callable[[], int] = lambda: 0  # set by the server that runs the app (serving.serve)
        self.max_connections = 0
        self._tasks: set[asyncio.Future[Any]] = set()
        self.hub = WatchHub(store)
        self.controllers: Any = None  # a ControllerManager (dralloc serve sets one), started with the server
        store.subscribe(self._notify)
        namespaces.ensure_system_namespaces(store)  # as kube-apiserver makes them when it starts
        priorities.ensure_system_classes(store)
        service_network_module.configure(store, service_network or ServiceNetwork())  # cluster IPs, node ports
        services.ensure_kubernetes_service(store, secure_port)  # default/kubernetes -> this server's port
        services.ensure_kubernetes_endpoints(store, endpoint_address, secure_port)
        self.namespaces = NamespaceCache(store)
        self.policies = PolicyAdmission(store)  # ValidatingAdmissionPolicies (server/admission/)
        self.quota_charges = QuotaCharges()

    @property
    def groups(self) -> discovery.Groups:
        """The stored resources of each served group, custom resources included."""
        return self.custom_resources.groups()

    def background(self, work: Awaitable[Any]) -> None:
        """Run ``work`` on the event loop, keeping a reference until it is done."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def started(self) -> None:
        """On startup: resume the removal of pods that were terminating when the server stopped; start the
        controllers."""
        objs, _ = self.store.list("pods")
        for pod in objs:
            if (pod.get("metadata") or {}).get("deletionTimestamp"):
                pods.schedule_removal(self, pod)
        self.store.attach_loop(asyncio.get_running_loop())  # the controllers' writes commit with the requests'
        crd_definitions.resume_cleanups(self, self.custom_resources.static)  # CRDs being deleted, or not named
        if self.controllers is not None:
            self.controllers.start()
        asyncio.get_running_loop().call_later(namespaces.SYSTEM_NAMESPACES_EVERY, self._keep_system_namespaces)

    def _keep_system_namespaces(self) -> None:
        """As kube-apiserver's system namespaces controller, every minute: make the system namespaces that are
        missing (kube-node-lease may be deleted; it comes back)."""
        if self.closing:
            return
        self.background(asyncio.to_thread(namespaces.ensure_system_namespaces, self.store))
        asyncio.get_running_loop().call_later(namespaces.SYSTEM_NAMESPACES_EVERY, self._keep_system_namespaces)

    def begin_shutdown(self) -> None:
        """End every open watch (called on SIGTERM/SIGINT before waiting for in-flight requests)."""
        self.closing = True
        self.store.attach_loop(None)  # the controllers' last writes must not wait for this (blocked) loop
        if self.controllers is not None:
            self.controllers.stop()
        self.hub.close()
        self._notify()

    def _notify(self) -> None:
        """After a commit (from the store's committer thread): wake the watch hub and fresh-version waiters."""
        self.hub.notify()
        for loop, event in list(self.watchers):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # loop closed
                self.watchers.discard((loop, event))

    # --- entry point --------------------------------------------------------------------------------

    async def __call__(self, request: Request) -> Response:
        try:
            response = await self._handle(request)
        except ApiError as exc:
            response = respond(request, exc.status(), exc.code, exc.headers)
        except InputError as exc:
            response = respond(request, bad_request(str(exc)).status(), 400)
        except Exception as exc:  # noqa: BLE001 - a bug must still answer with a Status, never a traceback page
            # (the traceback goes to the server's log, as kube-apiserver logs a handler's panic)
            log.exception("internal error serving %s %s", request.method, request.url.path)
            error = ApiError(500, f"internal error: {type(exc).__name__}: {exc}")
            response = respond(request, error.status(), 500)
        self.requests[(request.method, response.status_code)] += 1
        return response

    def token_user(self, token: str) -> User | None:
        """The user a bearer token authenticates (None: no such token); as kube-apiserver, every
        authenticated user is in system:authenticated."""
        user = self.tokens.get(token) if self.tokens is not None else None
        if user is None or AUTHENTICATED in user.groups:
            return user
        return User(user.name, user.uid, (*user.groups, AUTHENTICATED))

    def _authenticate(self, request: Request) -> User:
        """The request's user: a static token's, a service account token's, or anonymous when allowed. A
        service account token of this server that does not authenticate is refused, anonymous or not, as
        kube-apiserver refuses a bad token."""
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer ":
            token = header[7:].strip()
            user = self.token_user(token)
            if user is not None:
                return user
            if tokens_module.is_ours(token):
                try:
                    return tokens_module.authenticate(self.service_account_key, self.store, token)[0]
                except tokens_module.TokenRefused:
                    raise ApiError(401, "Unauthorized") from None
        if self.anonymous:
            return ANONYMOUS_USER
        raise ApiError(401, "Unauthorized")

    async def _handle(self, request: Request) -> Response:
        path = request.scope["path"].rstrip("/") or "/"
        if not path.startswith("/"):  # the asterisk form ("OPTIONS * HTTP/1.1"): a request of no resource
            if request.method == "OPTIONS":  # Go's server answers this itself, before any handler
                return Response(status_code=200, headers={"Content-Length": "0"})
            raise no_such_path()
        if path.split("/", 2)[1] in health.ROOTS:
            return health.answer(self, path.split("/")[1:], request.query_params)
        if self.max_connections and self.open_connections() > self.max_connections:
            raise ApiError(429, "Too many requests, please try again later.", "TooManyRequests",
                           details={"retryAfterSeconds": 1}, headers={"Retry-After": "1", "Connection": "close"})
        if path == "/version":  # (kube-apiserver writes it with WriteRawJSON: indented JSON, whoever asks)
            return Response(json.dumps(discovery.version_info(), indent=2).encode(), media_type="application/json")
        user = impersonated(self._authenticate(request), request.headers, self.authorizer)
        if path == "/metrics":
            return PlainTextResponse(self._metrics(), media_type="text/plain; version=0.0.4")
        if path in issuer.PATHS:
            if request.method != "GET":
                raise method_not_allowed()
            return issuer.answer(path, self.service_account_key, self.jwks_uri)
        parts = [p for p in path.split("/") if p]
        watch = routing.deprecated_watch(parts, request.scope.get("query_string", b"").decode("latin-1")) \
            if request.method == "GET" else None
        if watch is not None:
            parts, query = watch
            request = Request({**request.scope, "query_string": query.encode("latin-1")}, request.receive)
        if parts in (["api"], ["apis"]) and request.method == "GET":
            version = discovery.aggregated_version(request.headers.get("accept", ""))
            if version is not None:
                response = respond(request, discovery.aggregated(parts == ["api"], version, self.groups))
                response.headers["content-type"] = discovery.aggregated_content_type(version)
                response.headers["vary"] = "Accept"
                return response
        if parts == ["openapi", "v2"] and request.method == "GET":
            gated = openapi_gated.served(self.groups)
            custom = crd_openapi.v2_definitions(self.groups)  # (the custom resources' schemas)
            if openapi_v2.wants_protobuf(request.headers.get("accept", "")):
                body = openapi_v2.document_protobuf(gated) + openapi_v2.definitions_protobuf(custom)
                return Response(body, media_type=openapi_v2.PROTOBUF_RETURNED)
            doc = openapi_v2.document(gated)
            if custom:
                doc = {**doc, "definitions": dict(sorted({**doc["definitions"], **custom}.items()))}
            return respond(request, doc)
        doc = routing.discovery_document(parts, self.groups)
        if doc is not None:
            if request.method != "GET":
                raise method_not_allowed()
            return respond(request, doc)
        review = reviews.review_resource(parts)
        if review is not None:
            return await reviews.create(self, request, review, user)
        target = routing.target(parts, self.groups)
        verb = routing.verb(request, target)
        subresource = SUBRESOURCES.get(target.sub) if target.sub else None
        if subresource is not None and not subresource.parent_authorized:
            return await self._subresource(subresource, user, verb, request, target)
        if not self.authorizer.allowed(user, verb, target.resource.name):
            scope = f' in the namespace "{target.namespace}"' if target.namespace else " at the cluster scope"
            named = f' "{target.name}"' if target.name else ""  # (apimachinery's NewForbidden)
            details = {"name": target.name} if target.name else {}
            raise ApiError(403, f'{target.resource.group_resource}{named} is forbidden: User "{user.name}" cannot '
                                f'{verb} resource "{target.resource.name}" in API group "{target.resource.group}"{scope}',
                           details={**details, "group": target.resource.group, "kind": target.resource.name})
        if subresource is not None:
            return await self._subresource(subresource, user, verb, request, target)
        if verb == "patch" and target.resource.group in self.custom_resources.custom():
            crd_patches.check_patch_type(request.headers.get("content-type", ""))
        request.scope[USER_SCOPE_KEY] = user  # (request.userInfo of ValidatingAdmissionPolicies)
        # before the body is read or the store asked, as kube-apiserver's handlers negotiate first
        request.scope[negotiation.SCOPE_KEY] = negotiation.negotiate(request.headers.get("accept", ""),
                                                                     watch=verb == "watch")
        response = await HANDLERS[verb](self, request, target)
        deprecation = target.resource.deprecation or crd_versions.deprecation(target.resource, target.api_version)
        if deprecation:  # as kube-apiserver warns of a deprecated resource (or CRD version) on every request
            response.headers.append("Warning", "299 - " + json.dumps(deprecation))
        return response

    async def _subresource(self, subresource: Subresource, user: User, verb: str, request: Request,
                           target: routing.Target) -> Response:
        self._authorize_subresource(user, subresource.rbac_verb or verb, target)
        if subresource.creates:
            self.namespaces.admit_create(target, {})
        return await subresource.handler(self, request, target)

    def _authorize_subresource(self, user: User, verb: str, target: routing.Target) -> None:
        """kube-apiserver's 403 for a subresource (``pods/log``, ``pods/binding``, ``pods/exec``, ...,
        ``serviceaccounts/token``) the user may not use."""
        resource = f"{target.resource.name}/{target.sub}"
        if not self.authorizer.allowed(user, verb, resource):
            raise ApiError(403, f'{target.resource.name} "{target.name}" is forbidden: User "{user.name}" cannot '
                                f'{verb} resource "{resource}" in API group "" in the namespace '
                                f'"{target.namespace}"')

    # --- metrics ------------------------------------------------------------------------------------

    def _metrics(self) -> str:
        lines = ["# HELP apiserver_request_total Requests by method and HTTP code.",
                 "# TYPE apiserver_request_total counter"]
        for (method, code), n in sorted(self.requests.items()):
            lines.append(f'apiserver_request_total{{verb="{method}",code="{code}"}} {n}')
        lines += ["# HELP dralloc_store_writes_total Writes committed to the store.",
                  "# TYPE dralloc_store_writes_total counter", f"dralloc_store_writes_total {self.store.writes}",
                  "# HELP dralloc_store_commits_total Transactions committed (group commit: several writes each).",
                  "# TYPE dralloc_store_commits_total counter", f"dralloc_store_commits_total {self.store.commits}",
                  "# HELP dralloc_resource_version The store's current resourceVersion.",
                  "# TYPE dralloc_resource_version gauge", f"dralloc_resource_version {self.store.current_rv()}",
                  "# HELP dralloc_watchers Open watch streams.", "# TYPE dralloc_watchers gauge",
                  f"dralloc_watchers {len(self.hub.subscriptions)}"]
        return "\n".join(lines) + "\n"


# the responses whose body is in hand (a watch streams its own)
_WHOLE = (Response, PlainTextResponse, JsonResponse)


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
                    self.api.started()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "websocket":  # nothing is streamed over an upgrade: the GET's answer, as HTTP
            await upgrades.refuse(scope, send, self.api)
            return
        if scope["type"] != "http":
            return
        response = await self.api(ApiRequest(scope, receive))
        if type(response) in _WHOLE and response.background is None:  # a body in hand: one direct write
            direct = scope.get("extensions", {}).get("dralloc.direct")
            if direct is not None and direct.respond(response.status_code, response.raw_headers, response.body):
                return
        await response(scope, receive, send)


def create_app(store: SQLStore | None = None, *, tokens: dict[str, User] | None = None,
               authorizer: Authorizer | None = None, anonymous: bool = False, secure_port: int = 6443,
               endpoint_address: str = "127.0.0.1",
               service_account_key: tokens_module.ServiceAccountKey | None = None,
               feature_gates: Collection[str] = (), service_network: ServiceNetwork | None = None) -> App:
    """The application; ``secure_port`` and ``endpoint_address`` are where it is served (the
    ``default/kubernetes`` Service's targetPort and EndpointSlice); ``service_account_key`` signs service
    account tokens (default: a key made in memory); ``feature_gates``: the names of the gates that are on
    (GenericWorkload serves scheduling.k8s.io/v1alpha2); ``service_network``: the Services' cluster IP and node
    port ranges (default: 10.96.0.0/12, 30000-32767)."""
    return App(ApiServer(store or SQLiteStore(":memory:"), tokens, authorizer, anonymous, secure_port,
                         endpoint_address, service_account_key, feature_gates, service_network))

