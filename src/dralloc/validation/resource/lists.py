"""Upstream's generic list and map checks (validateSlice, validateSet, validateMap): size limits first, then
each item at its index or key, then duplicates."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any, TypeVar

from dralloc.validation import field as f

E = list[f.FieldError]
T = TypeVar("T")


def validate_slice(items: list[T] | None, max_size: int, item_fn: Callable[[T, str], E], path: str) -> E:
    items = items or []
    if 0 <= max_size < len(items):
        return [f.too_many(path, len(items), max_size)]  # short-circuits: no per-item errors
    errs: E = []
    for i, item in enumerate(items):
        errs.extend(item_fn(item, f.index(path, i)))
    return errs


def validate_set(items: list[T] | None, max_size: int, item_fn: Callable[[T, str], E],
                 key_fn: Callable[[T], Hashable], path: str, item_ok: Callable[[T], bool] | None = None,
                 all_ok: bool = False) -> E:
    """``item_ok``: True only for an item ``item_fn`` finds nothing wrong with; such an item is not given to
    ``item_fn`` (nor is its path made). ``all_ok``: the caller found that of every item already."""
    items = items or []
    if 0 <= max_size < len(items):
        return [f.too_many(path, len(items), max_size)]
    errs: E = []
    if not all_ok and (item_ok is None or not all(map(item_ok, items))):  # (all passing: no loop of ours)
        for i, item in enumerate(items):
            if item_ok is None or not item_ok(item):
                errs.extend(item_fn(item, f.index(path, i)))
    keys = list(map(key_fn, items))
    if len(set(keys)) == len(keys):
        return errs  # no key repeats (the common case: one set made at C speed)
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        k = key_fn(item)
        if k in seen:
            errs.append(f.duplicate(f.index(path, i), k))
        else:
            seen.add(k)
    return errs


def _truncate(text: str, limit: int) -> str:
    limit = max(limit, 16)
    if len(text) <= limit:
        return text
    remaining = limit - 3
    return text[: (remaining + 1) // 2] + "..." + text[len(text) - remaining // 2:]


_PLACEHOLDER = "\0"


@lru_cache(maxsize=16384)
def _key_problems(key_fn: Callable[[str, str], E], key: str) -> tuple[f.FieldError, ...]:
    """Key checks depend only on the key (a driver's slices repeat the same attribute names): worked out once
    per distinct key at a placeholder path."""
    return tuple(key_fn(key, _PLACEHOLDER))


def errors_at(check: Callable[[str, str], E], value: str, path: str) -> E:
    """``check(value, path)`` for a check whose errors depend on the value alone and name no other path than
    ``path``: worked out once per distinct value (a map's keys, a driver's name)."""
    found = _key_problems(check, value)
    return [f.FieldError(e.type, path, e.bad_value, e.detail) for e in found] if found else []


# Keys each key check found nothing wrong with: a map whose keys are all known good is checked with one set
# comparison. Bounded: past the limit a key is still checked (through ``_key_problems``), only not kept here.
_GOOD_KEYS: dict[Callable[[str, str], E], set[str]] = {}
_GOOD_KEYS_MAX = 16384


def keys_known_good(key_fn: Callable[[str, str], E], m: dict[str, Any]) -> bool:
    """Whether ``key_fn`` finds nothing wrong with any key of ``m`` (one set comparison once they are known)."""
    return names_known_good(key_fn, m.keys())


def names_known_good(key_fn: Callable[[str, str], E], names: AbstractSet[str]) -> bool:
    """Whether ``key_fn`` finds nothing wrong with any of ``names`` (one set comparison once they are known)."""
    good = _GOOD_KEYS.get(key_fn)
    return (good is not None and names <= good) or _keys_good(key_fn, names)


def _keys_good(key_fn: Callable[[str, str], E], keys: Iterable[str]) -> bool:
    good = _GOOD_KEYS.get(key_fn)
    if good is None:
        good = _GOOD_KEYS[key_fn] = set()
    for k in keys:
        if k not in good:
            if _key_problems(key_fn, k):
                return False
            if len(good) < _GOOD_KEYS_MAX:
                good.add(k)
    return True


def validate_map(m: dict[str, T] | None, max_size: int, key_len: int, key_fn: Callable[[str, str], E],
                 item_fn: Callable[[T, str], E], path: str, item_ok: Callable[[T], bool] | None = None) -> E:
    """``item_ok``: True only for an item ``item_fn`` finds nothing wrong with (its fast path). A map whose keys
    and items all pass is done without sorting it or making a path for each entry (a device's attributes and
    capacities: the common case, on every ResourceSlice write)."""
    if not m:
        return []
    if 0 <= max_size < len(m):
        return [f.too_many(path, len(m), max_size)]
    if item_ok is not None and all(map(item_ok, m.values())) and keys_known_good(key_fn, m):
        return []
    errs: E = []
    for k in sorted(m):
        key_errs = errors_at(key_fn, k, path)  # upstream reports key errors at the map's own path
        if key_errs:
            errs.extend(key_errs)
        item_errs = item_fn(m[k], f"{path}[{k if len(k) <= key_len else _truncate(k, key_len)}]")
        if item_errs:
            errs.extend(item_errs)
    return errs


def no_errors(_: object, __: str) -> E:
    return []


def identity(x: T) -> T:
    return x
