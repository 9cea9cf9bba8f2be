"""The Kubernetes quantity library (library/quantity.go): quantity(), isQuantity(), sign(), isInteger(),
asInteger(), asApproximateFloat(), add(), sub() and the comparisons."""

from __future__ import annotations

from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.api.semver import Semver
from dralloc.cel import kquantity
from dralloc.cel.errors import CELError
from dralloc.cel.library.registry import function, member, want
from dralloc.cel.values import no_overload


@function("quantity", "kubernetes.Quantity")
def _quantity(s: Any) -> Quantity:
    want("quantity", type(s) is str, s)
    try:
        return kquantity.parse(s)
    except ValueError as exc:
        raise CELError(str(exc)) from None


@function("isQuantity", "bool")
def _is_quantity(s: Any) -> bool:
    want("isQuantity", type(s) is str, s)
    try:
        Quantity(s)
    except ValueError:
        return False
    return True


def _q(fn: str, q: Any, *args: Any) -> None:
    want(fn, isinstance(q, Quantity), q, *args)


@function("sign", "int")
def _sign(q: Any) -> int:
    _q("sign", q)
    return q.sign()


@member("isInteger", "bool")
def _is_integer(q: Any) -> bool:
    _q("isInteger", q)
    return kquantity.as_int64(q) is not None


@member("asInteger", "int")
def _as_integer(q: Any) -> int:
    _q("asInteger", q)
    v = kquantity.as_int64(q)
    if v is None:
        raise CELError("cannot convert value to integer")
    return v


@member("asApproximateFloat", "double")
def _as_approximate_float(q: Any) -> float:
    _q("asApproximateFloat", q)
    return q.as_approximate_float()


def _quantity_operand(fn: str, q: Any, other: Any) -> Quantity:
    if isinstance(other, Quantity):
        return other
    if type(other) is int:
        return kquantity.from_int(other)
    raise no_overload(fn, q, other)


@member("add", "kubernetes.Quantity")
def _add(q: Any, other: Any) -> Quantity:
    _q("add", q, other)
    return kquantity.add(q, _quantity_operand("add", q, other))


@member("sub", "kubernetes.Quantity")
def _sub(q: Any, other: Any) -> Quantity:
    _q("sub", q, other)
    return kquantity.add(q, _quantity_operand("sub", q, other), negate_b=True)


@member("isGreaterThan", "bool")
def _is_greater_than(a: Any, b: Any) -> bool:
    return _cmp("isGreaterThan", a, b) > 0


@member("isLessThan", "bool")
def _is_less_than(a: Any, b: Any) -> bool:
    return _cmp("isLessThan", a, b) < 0


@member("compareTo", "int")
def _compare_to(a: Any, b: Any) -> int:
    return _cmp("compareTo", a, b)


def _cmp(fn: str, a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.cmp(b)
    if type(a) is Semver and type(b) is Semver:
        return a.compare(b)
    raise no_overload(fn, a, b)
