"""The Kubernetes URL library (library/urls.go): url(), isURL() and the URL getters."""

from __future__ import annotations

import urllib.parse
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import MEMBERS, RESULT_TYPES, function, member, want


class URLValue:
    cel_type = "kubernetes.URL"
    __slots__ = ("parts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.parts = urllib.parse.urlsplit(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLValue) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _parse_url(s: str) -> URLValue:
    try:
        u = URLValue(s)
    except ValueError:
        raise CELError(f"URL parse error during conversion from string: {s!r}") from None
    if not (u.parts.scheme or s.startswith("/")):
        raise CELError(f"URL parse error during conversion from string: {s!r}")
    return u


@function("url", "kubernetes.URL")
def _url(s: Any) -> URLValue:
    want("url", type(s) is str, s)
    return _parse_url(s)


@function("isURL", "bool")
def is_url(s: Any) -> bool:
    want("isURL", type(s) is str, s)
    try:
        _parse_url(s)
    except CELError:
        return False
    return True


def _urlv(fn: str, u: Any) -> URLValue:
    want(fn, type(u) is URLValue, u)
    return u


MEMBERS["getScheme"] = lambda u: _urlv("getScheme", u).parts.scheme
MEMBERS["getHost"] = lambda u: _urlv("getHost", u).parts.netloc.rpartition("@")[2]
MEMBERS["getHostname"] = lambda u: (_urlv("getHostname", u).parts.hostname or "")
MEMBERS["getPort"] = lambda u: (str(_urlv("getPort", u).parts.port) if _urlv("getPort", u).parts.port else "")
MEMBERS["getEscapedPath"] = lambda u: _urlv("getEscapedPath", u).parts.path
for _n in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
    RESULT_TYPES[_n] = "string"


@member("getQuery", "map")
def _get_query(u: Any) -> dict[str, list[str]]:
    return {k: v for k, v in urllib.parse.parse_qs(_urlv("getQuery", u).parts.query, keep_blank_values=True).items()}
