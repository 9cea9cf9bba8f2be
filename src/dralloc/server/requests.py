"""The request object handlers see: Starlette's, with headers and query parameters that are cheap to ask for
again and again (a write asks for a header or a parameter a dozen times, and every asking of Starlette's own
scans the header list or builds the parameters anew)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request


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
            params = self._query_params = QueryParams(self.scope["query_string"])
        return params
