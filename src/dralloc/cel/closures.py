"""The closures a compiled CEL program is made of: constants, variables, field selection and indexing
(the DRA device's maps among them), function calls, and ``&&`` / ``||`` with CEL's commutative error handling.
Each takes the activation (a dict of variable values) and returns a value or raises :class:`CELError`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dralloc.cel.errors import CELError
from dralloc.cel.syntax import UInt
from dralloc.cel.values import NONE, Optional, map_get, map_key_ok, no_overload, type_name

Fn = Callable[[dict[str, Any]], Any]

COST_LIMIT = 1_000_000
COST_KEY = "@cost"  # the activation's [spent, limit] of runtime cost, when a limit is set
MISSING = object()


class DomainMap(dict[str, Any]):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map, as upstream does."""

    __slots__ = ()


EMPTY_DOMAIN: dict[str, Any] = {}


def key_text(k: Any) -> str:
    return str(k).lower() if type(k) is bool else str(k)


def const(value: Any) -> Fn:
    def const(act: dict[str, Any]) -> Any:
        return value

    const.const = value  # type: ignore[attr-defined]
    return const


def is_const(f: Fn) -> bool:
    return hasattr(f, "const")


ROOT_KEY = "@root"  # the activation as given, for root-scope references (".y") under a shadowing variable


def root_var(name: str) -> Fn:
    def root_var(act: dict[str, Any]) -> Any:
        try:
            return act.get(ROOT_KEY, act)[name]
        except KeyError:
            raise CELError(f"no such attribute: {name}") from None

    return root_var


def var(name: str) -> Fn:
    def var(act: dict[str, Any]) -> Any:
        try:
            return act[name]
        except KeyError:
            raise CELError(f"no such attribute: {name}") from None

    return var


def device_field(target: Fn, name: str) -> Fn:
    def field_(act: dict[str, Any]) -> Any:
        return target(act)[name]

    return field_


def select(target: Fn, name: str) -> Fn:
    def select(act: dict[str, Any]) -> Any:
        m = target(act)
        if isinstance(m, dict):
            try:
                return m[name]
            except KeyError:
                raise CELError(f"no such key: {name}") from None
        if type(m) is Optional:  # optional chaining: opt.f is opt.?f
            if not m.present:
                return NONE
            inner = m.value
            if isinstance(inner, dict):
                return Optional(inner[name], True) if name in inner else NONE
            raise CELError(f"type '{type_name(inner)}' does not support field selection")
        raise CELError(f"type '{type_name(m)}' does not support field selection")

    return select


def domain_select(target: Fn, name: str) -> Fn:
    def select(act: dict[str, Any]) -> Any:
        return target(act).get(name, EMPTY_DOMAIN)

    return select


def has(target: Fn, name: str) -> Fn:
    def has(act: dict[str, Any]) -> bool:
        m = target(act)
        if type(m) is DomainMap:
            # upstream's domain maps find every domain (an unknown one is an empty map), and has() asks Find
            return True
        if isinstance(m, dict):
            return name in m
        if type(m) is Optional:
            return m.present and isinstance(m.value, dict) and name in m.value
        raise CELError(f"invalid type for field selection: {type_name(m)}")

    return has


def opt_select(target: Fn, name: str) -> Fn:
    def opt_select(act: dict[str, Any]) -> Optional:
        m = target(act)
        if type(m) is Optional:
            if not m.present:
                return NONE
            m = m.value
        if type(m) is DomainMap:  # every domain is found, as has() sees it
            return Optional(m.get(name, EMPTY_DOMAIN), True)
        if isinstance(m, dict):
            if name in m:
                return Optional(m[name], True)
            return NONE
        raise CELError(f"type '{type_name(m)}' does not support field selection")

    return opt_select


def index_value(coll: Any, key: Any) -> Any:
    tc = type(coll)
    if tc is list or tc is tuple:
        tk = type(key)
        if tk is int or tk is UInt:
            i = int(key)
        elif tk is float and key.is_integer():
            i = int(key)
        else:
            raise no_overload("_[_]", coll, key)
        if 0 <= i < len(coll):
            return coll[i]
        raise CELError(f"index out of bounds: {i}")
    if isinstance(coll, dict):
        if not map_key_ok(key) and type(key) is not float:
            raise no_overload("_[_]", coll, key)
        found, v = map_get(coll, key)
        if found:
            return v
        raise CELError(f"no such key: {key_text(key)}")
    raise no_overload("_[_]", coll, key)


def index(a: Fn, b: Fn) -> Fn:
    def index(act: dict[str, Any]) -> Any:
        coll = a(act)
        if type(coll) is Optional:
            if not coll.present:
                return NONE
            try:
                return Optional(index_value(coll.value, b(act)), True)
            except CELError:
                return NONE
        return index_value(coll, b(act))

    return index


def opt_index(a: Fn, b: Fn) -> Fn:
    def opt_index(act: dict[str, Any]) -> Optional:
        coll = a(act)
        if type(coll) is Optional:
            if not coll.present:
                return NONE
            coll = coll.value
        key = b(act)
        if type(coll) is DomainMap and type(key) is str:
            return Optional(coll.get(key, EMPTY_DOMAIN), True)
        if isinstance(coll, dict):
            found, v = map_get(coll, key)
            return Optional(v, True) if found else NONE
        if type(coll) in (list, tuple):
            i = int(key) if type(key) in (int, UInt) else None
            if i is None:
                raise no_overload("_[?_]", coll, key)
            return Optional(coll[i], True) if 0 <= i < len(coll) else NONE
        raise no_overload("_[?_]", coll, key)

    return opt_index


def domain_index(m: dict[str, Any], key: Any) -> Any:
    if type(key) is not str:
        raise no_overload("_[_]", m, key)
    return m.get(key, EMPTY_DOMAIN)


def eq_const(v: Any, c: Any, ct: type, slow: Callable[[Any, Any], bool]) -> bool:
    if type(v) is ct:
        return v == c
    return slow(v, c)


def raise_error(message: str) -> Fn:
    def fail(act: dict[str, Any]) -> Any:
        raise CELError(message)

    return fail


def call1(impl: Callable[..., Any], f: Fn) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        v = f(act)
        try:
            return impl(v)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), v) from None

    return call


def calln(impl: Callable[..., Any], fns: list[Fn]) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        args = [f(act) for f in fns]
        try:
            return impl(*args)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), *args) from None

    return call


def call2(impl: Callable[..., Any], a: Fn, b: Fn) -> Fn:
    def call(act: dict[str, Any]) -> Any:
        x, y = a(act), b(act)
        try:
            return impl(x, y)
        except TypeError:
            raise no_overload(getattr(impl, "__name__", "call").lstrip("_"), x, y) from None

    return call


def _logical(a: Fn, b: Fn, decisive: bool, operator: str) -> Fn:
    """``&&`` (decisive False) and ``||`` (decisive True) with CEL's commutative errors: a decisive value on
    either side wins over an error or a non-boolean on the other; otherwise the first error is raised."""
    settled = not decisive

    def logical(act: dict[str, Any]) -> bool:
        err: CELError | None = None
        try:
            x = a(act)
        except CELError as exc:
            err = exc
        else:
            if x is decisive:
                return decisive
            if x is not settled:
                err = no_overload(operator, x)
        try:
            y = b(act)
        except CELError as exc:
            raise (err or exc) from None
        if y is decisive:
            return decisive
        if y is not settled:
            raise err or no_overload(operator, y)
        if err is not None:
            raise err
        return settled

    return logical


def and_(a: Fn, b: Fn) -> Fn:
    return _logical(a, b, False, "_&&_")


def or_(a: Fn, b: Fn) -> Fn:
    return _logical(a, b, True, "_||_")
