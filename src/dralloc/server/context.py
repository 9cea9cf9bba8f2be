"""What the verbs and subresource handlers use of the server (``app.ApiServer`` is one): a Protocol, so that
they need not import the app that imports them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol

from dralloc.server.admission.policies import PolicyAdmission
from dralloc.server.auth.tokens import ServiceAccountKey
from dralloc.server.auth.users import Authorizer, User
from dralloc.server.registry.namespace_lifecycle import NamespaceCache
from dralloc.server.registry.quota_charges import QuotaCharges
from dralloc.server.watch.hub import WatchHub
from dralloc.store import SQLStore


class ApiContext(Protocol):
    @property
    def store(self) -> SQLStore: ...

    @property
    def namespaces(self) -> NamespaceCache: ...

    @property
    def policies(self) -> PolicyAdmission: ...

    @property
    def hub(self) -> WatchHub: ...

    @property
    def quota_charges(self) -> QuotaCharges:
        """The ResourceQuota admission's charges of the creates of one turn, written together."""

    @property
    def watchers(self) -> set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]:
        """The requests waiting for a fresher resourceVersion, woken after every commit."""

    @property
    def closing(self) -> bool:
        """Shutting down: watches end."""

    @property
    def authorizer(self) -> Authorizer: ...

    @property
    def service_account_key(self) -> ServiceAccountKey: ...

    def token_user(self, token: str) -> User | None: ...

    def background(self, work: Awaitable[Any]) -> None: ...
