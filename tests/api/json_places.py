"""The places of a decoded JSON document, for tests that put another value at each of them."""

from __future__ import annotations

from typing import Any


def places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value below ``value`` (dict keys and list indexes), ``()`` (the value itself) first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += places(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += places(item, (*path, i))
    return found
