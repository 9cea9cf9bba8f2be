"""The request object handlers see: Starlette's, with headers and query parameters that are cheap to ask for
again and again (a write asks for a header or a parameter a dozen times, and every asking of Starlette's own
scans the header list or builds the parameters anew)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.requests import ClientDisconnect, Request


class _Headers(Headers):
    """Starlette's Headers, with ``get`` and ``[]`` answered from a dict made on first use."""

    _first: dict[str, str] | None = None

    def _lookup(self) -> dict[str, str]:
        if self._first is None:
            first: dict[str, str] = {}
            for name, value in self.raw:
                first.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
            self._first = first
        return self._first

    def get(self, key: str, default: Any = None) -> Any:
        return self._lookup().get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return self._lookup()[key.lower()]

    def __contains__(self, key: Any) -> bool:
        return isinstance(key, str) and key.lower() in self._lookup()


class ApiRequest(Request):
    @property
    def headers(self) -> Headers:
        if not hasattr(self, "_headers"):
            self._headers = _Headers(scope=self.scope)
        return self._headers

    @property
    def query_params(self) -> QueryParams:
        params = self.__dict__.get("_query_params")
        if params is None:
            query = self.scope["query_string"]
            params = self._query_params = _Params(query) if query else _NO_PARAMS
        return params

    async def read_all(self, limit: int) -> bytes | None:
        """The whole body, or None once it is longer than ``limit`` bytes. Reads the ASGI messages directly (a
        body is mostly one message; Starlette's stream is an async generator per request)."""
        if hasattr(self, "_body"):
            return self._body if len(self._body) <= limit else None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._is_disconnected = True
                raise ClientDisconnect()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        self._stream_consumed = True
        self._body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        return self._body


class _Params(QueryParams):
    """Starlette's query parameters with a ``get`` that answers from the dict (the inherited one goes through
    ``__getitem__`` and a KeyError for every parameter not sent, which is most of them). A parameter sent twice
    is its first value, as kube-apiserver decodes options from Go's url.Values (Starlette keeps the last)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        first: dict[str, str] = {}
        for key, value in self._list:
            first.setdefault(key, value)
        self._dict = first

    def get(self, key: Any, default: Any = None) -> Any:
        return self._dict.get(key, default)


_NO_PARAMS = _Params()  # immutable: shared by every request without a query string
