"""The tables every library module registers its implementations in, read by the checker, the planner and
the generator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.cel.values import no_overload

GLOBALS: dict[str, Callable[..., Any]] = {}
MEMBERS: dict[str, Callable[..., Any]] = {}
RESULT_TYPES: dict[str, str] = {}

def function(name: str, result: str = "dyn") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        GLOBALS[name] = fn
        RESULT_TYPES.setdefault(name, result)
        return fn

    return deco


def member(name: str, result: str = "dyn") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        MEMBERS[name] = fn
        RESULT_TYPES.setdefault(name, result)
        return fn

    return deco


def want(fn: str, cond: bool, *args: Any) -> None:
    if not cond:
        raise no_overload(fn, *args)
