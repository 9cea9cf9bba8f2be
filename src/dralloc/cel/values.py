"""CEL runtime values and the operations every value supports: type names, equality, ordering, arithmetic.

Python types carry CEL values directly: int (CEL int), :class:`UInt` (uint), float (double), str, bytes,
bool, None (null), list, dict (map), :class:`CelType`, :class:`Optional`, and the Kubernetes object types
(:class:`~dralloc.api.quantity.Quantity`, :class:`~dralloc.api.semver.Semver`, IP, CIDR, URL).
Errors during evaluation are raised as :class:`~dralloc.cel.errors.CELError`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from dralloc.api.quantity import Quantity
from dralloc.api.semver import Semver
from dralloc.cel import kquantity
from dralloc.cel.errors import CELError
from dralloc.cel.kquantity import KubeQuantity
from dralloc.cel.syntax import UInt

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class CelType:
    """A CEL type value (what ``type(x)`` returns)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CelType) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


class Optional:
    """CEL optional value: ``optional.of(x)`` or ``optional.none()``."""

    __slots__ = ("value", "present")

    def __init__(self, value: Any = None, present: bool = False) -> None:
        self.value = value
        self.present = present

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE = Optional()

TYPES = {name: CelType(name) for name in (
    "bool", "int", "uint", "double", "string", "bytes", "null_type", "list", "map", "type", "optional_type",
    "kubernetes.Quantity", "kubernetes.Semver", "net.IP", "net.CIDR", "kubernetes.URL",
)}


def type_name(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "bool"
    if t is int:
        return "int"
    if t is UInt:
        return "uint"
    if t is float:
        return "double"
    if t is str:
        return "string"
    if t is bytes:
        return "bytes"
    if v is None:
        return "null_type"
    if t is list or t is tuple:
        return "list"
    if isinstance(v, dict):  # plain maps and the device's domain maps
        return "map"
    if t is CelType:
        return "type"
    if t is Optional:
        return "optional_type"
    if isinstance(v, Quantity):
        return "kubernetes.Quantity"
    if t is Semver:
        return "kubernetes.Semver"
    name = getattr(v, "cel_type", None)
    if name:
        return name
    return t.__name__


def type_of(v: Any) -> CelType:
    name = type_name(v)
    return TYPES.get(name) or CelType(name)


def no_overload(fn: str, *args: Any) -> CELError:
    return CELError(f"no such overload: {fn}({', '.join(type_name(a) for a in args)})" if args
                    else f"no such overload: {fn}")


def check_int(v: int) -> int:
    if INT64_MIN <= v <= INT64_MAX:
        return v
    raise CELError("integer overflow")


def check_uint(v: int) -> UInt:
    if 0 <= v <= UINT64_MAX:
        return UInt(v)
    raise CELError("unsigned integer overflow")


def _is_num(v: Any) -> bool:
    t = type(v)
    return t is int or t is UInt or t is float


def _num_eq(a: Any, b: Any) -> bool:
    if type(a) is float or type(b) is float:
        return float(a) == float(b) if not (isinstance(a, int) and isinstance(b, float) and math.isfinite(b)
                                             and b.is_integer()) else int(a) == int(b)
    return int(a) == int(b)


# Values whose Equal answers "no such overload" for a value of another type (k8s Semver, IP, CIDR and URL);
# cel-go's own types and k8s Quantity answer false.
_REFUSE_OTHER_TYPES = frozenset(("kubernetes.Semver", "net.IP", "net.CIDR", "kubernetes.URL"))


def _refuses(a: Any, b: Any) -> bool:
    """Whether ``a.Equal(b)`` is an error in cel-go (never for null, which types.Equal answers first)."""
    return type(a) is not type(b) and b is not None and a is not None and type_name(a) in _REFUSE_OTHER_TYPES


def equal_op(a: Any, b: Any) -> bool:
    """The ``==`` operator (cel-go's types.Equal): null first, then the left value's Equal, which for a
    Semver, IP, CIDR or URL compared with another type is the error ``no such overload``."""
    if _refuses(a, b):
        raise CELError("no such overload")
    return equals(a, b)


def _element_equal(a: Any, b: Any) -> bool:
    """Equality of two elements inside list or map equality: cel-go stops only at an element that is
    *false*, so an element comparison that errs counts as equal ([semver] == ["x"] is true)."""
    return _refuses(a, b) or equals(a, b)


def equals(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality: different types are unequal, numbers compare by value. An erring
    comparison is unequal here (``in``, indexOf, includes); :func:`equal_op` is the operator."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        if isinstance(a, dict) and isinstance(b, dict):
            ta = tb = dict  # a device domain map equals a map literal with the same entries
        elif isinstance(a, Quantity) and isinstance(b, Quantity):
            return kquantity.equal(a, b)  # a capacity and a quantity the library made
    if ta is tb:
        if ta is list or ta is tuple:
            return len(a) == len(b) and all(_element_equal(x, y) for x, y in zip(a, b))
        if ta is dict:
            if len(a) != len(b):
                return False
            for k, v in a.items():
                found, w = map_get(b, k)
                if not found or not _element_equal(v, w):
                    return False
            return True
        if ta is Optional:
            return a.present == b.present and (not a.present or equals(a.value, b.value))
        if ta is float:
            return a == b
        if ta is KubeQuantity:
            return kquantity.equal(a, b)
        return bool(a == b)
    if _is_num(a) and _is_num(b):
        if ta is float or tb is float:
            # cel-go compares an int with a double as doubles (lossy beyond 2^53)
            return float(a) == float(b)
        return int(a) == int(b)
    if (ta is list and tb is tuple) or (ta is tuple and tb is list):
        return len(a) == len(b) and all(_element_equal(x, y) for x, y in zip(a, b))
    return False


def compare(a: Any, b: Any, fn: str) -> int:
    """Ordering for <, <=, >, >= (with cross-type numeric comparison). Raises CELError if unordered."""
    ta, tb = type(a), type(b)
    if _is_num(a) and _is_num(b):
        if ta is float or tb is float:
            x, y = float(a), float(b)
            if math.isnan(x) or math.isnan(y):
                return 2  # unordered: every comparison is false
            return (x > y) - (x < y)  # as cel-go: the int is converted to double
        return (int(a) > int(b)) - (int(a) < int(b))
    if ta is tb and (ta in (str, bytes, bool) or getattr(ta, "cel_type", "").startswith("google.protobuf.")):
        return (a > b) - (a < b)  # strings, bytes, bools, durations and timestamps
    raise no_overload(fn, a, b)


def map_key_ok(k: Any) -> bool:
    t = type(k)
    return t in (str, int, UInt, bool)


def map_get(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """Look a key up with CEL's numeric key equivalence (1 == 1u == 1.0)."""
    t = type(key)
    if t is str or t is bool:
        if key in m:
            # bool keys must not match int keys 1/0 (Python hashes True == 1)
            for k in (key,):
                v = m[k]
                if t is bool:
                    for kk in m:
                        if type(kk) is bool and kk == key:
                            return True, m[kk]
                    return False, None
                return True, v
        return False, None
    if t is int or t is UInt:
        for kk, v in m.items():
            tk = type(kk)
            if (tk is int or tk is UInt) and int(kk) == int(key):
                return True, v
        return False, None
    if t is float:
        if math.isfinite(key) and key.is_integer():
            return map_get(m, int(key))
        return False, None
    return False, None


def format_double(d: float) -> str:
    """Go's strconv.FormatFloat(d, 'g', -1, 64), which cel-go's string(double) uses."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "+Inf" if d > 0 else "-Inf"
    if d == 0:
        return "-0" if math.copysign(1, d) < 0 else "0"
    r = repr(d)
    sign = "-" if r.startswith("-") else ""
    dec = Decimal(r.lstrip("-"))
    digits = "".join(str(x) for x in dec.as_tuple().digits).rstrip("0") or "0"
    exp = dec.adjusted()
    if exp < -4 or exp >= 6:  # Go uses precision 6 for this decision in shortest mode
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if len(digits) <= exp + 1:
        return f"{sign}{digits}{'0' * (exp + 1 - len(digits))}"
    return f"{sign}{digits[:exp + 1]}.{digits[exp + 1:]}"
