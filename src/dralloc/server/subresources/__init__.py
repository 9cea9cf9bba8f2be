"""Subresources that are not a stored object: pods' binding, eviction, log and exec/attach/portforward, and
serviceaccounts' token, and the workloads' scale. ``SUBRESOURCES`` says, per name, how a request reaches its handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.auth import token_request
from dralloc.server.context import ApiContext
from dralloc.server.http.routing import Target
from dralloc.server.subresources import binding, eviction, log, scale, streams

SubresourceHandler = Callable[[ApiContext, Request, Target], Awaitable[Response]]


@dataclass(frozen=True)
class Subresource:
    """How kube-apiserver serves one subresource.

    ``rbac_verb``: the verb RBAC checks on ``<resource>/<sub>`` (None: the request's own verb).
    ``creates``: the request is a create, refused in a terminating namespace.
    ``parent_authorized``: the user must also be allowed the verb on the parent resource; a TokenRequest is
    not (RBAC grants ``create serviceaccounts/token`` alone).
    """

    handler: SubresourceHandler
    rbac_verb: str | None = None
    creates: bool = False
    parent_authorized: bool = True


SUBRESOURCES: dict[str, Subresource] = {
    "token": Subresource(token_request.create_token, creates=True, parent_authorized=False),
    "log": Subresource(log.get_log, rbac_verb="get"),
    "binding": Subresource(binding.create_binding, creates=True),
    "eviction": Subresource(eviction.create_eviction),
    "scale": Subresource(scale.scale),
    **{name: Subresource(streams.connect) for name in streams.STREAMS},
}
