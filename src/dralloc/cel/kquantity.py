"""How k8s.io/apimachinery holds a ``resource.Quantity`` in memory, for the quantity library's
``isInteger()`` and ``asInteger()``.

A Go quantity is either an ``int64Amount`` (an int64 ``value`` times ``10**scale``) or an arbitrary-precision
``inf.Dec``. ``AsInt64`` (what both functions ask) succeeds only for an int64Amount whose scale is not
negative and whose value times ``10**scale`` fits in an int64; an inf.Dec never converts. Which form a
quantity takes depends on how it was written, not only on its value:

* ParseQuantity's fast path yields an int64Amount only for short inputs: at most 18 digits (numerator and
  fraction) for a decimal suffix, and ``15 - digits - exponent*3/10 - 1 >= 0`` for a binary one, so "1Ti" is
  an int64Amount while "1Pi", "100Ei" (capped at 2^63-1) and 19-digit numbers are inf.Dec. The fraction's
  digits stay in the scale: "1.0" is ``{10, -1}`` and "1000m" ``{1000, -3}``, neither an integer to AsInt64.
* ``Add``/``Sub`` keep an int64Amount when both sides are one and the exact result fits, else give inf.Dec.

A capacity reaches kube-scheduler as its canonical string (the API server serialises it), so its form is the
one that string parses to. A value the quantity library makes (``quantity("…")``, ``add``, ``sub``) is a
:class:`KubeQuantity`, which carries the form its own text or operands give.
"""

from __future__ import annotations

from functools import lru_cache

from dralloc.api.quantity import Quantity

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

# The form of a quantity: (value, scale) for an int64Amount, None for an inf.Dec.
Form = tuple[int, int] | None

_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_MAX_INT64_FACTORS = 18  # decimal digits an int64 always holds
_NANO = -9


class KubeQuantity(Quantity):
    """A quantity the CEL quantity library made, with the in-memory form upstream gives it. ``pointer``: the
    library returns add()'s and sub()'s results as a *pointer* to its Quantity wrapper, whose Equal accepts
    only a wrapper *value*: so ``quantity("2") == quantity("1").add(1)`` is false upstream (the other way
    round is true)."""

    __slots__ = ("form", "pointer")
    form: Form
    pointer: bool


def with_form(q: Quantity, form: Form, pointer: bool = False) -> KubeQuantity:
    kq = object.__new__(KubeQuantity)
    for slot in ("_m", "_e", "format", "_s"):
        object.__setattr__(kq, slot, object.__getattribute__(q, slot))
    object.__setattr__(kq, "form", form)
    object.__setattr__(kq, "pointer", pointer)
    return kq


def equal(a: Quantity, b: Quantity) -> bool:
    """The Quantity wrapper's Equal: false for a pointer on the right, else the values compared."""
    return not (type(b) is KubeQuantity and b.pointer) and a == b


def parse(text: str) -> KubeQuantity:
    """``quantity(text)``; ValueError as Quantity() raises it."""
    return with_form(Quantity(text), parsed_form(text))


def form_of(q: Quantity) -> Form:
    if type(q) is KubeQuantity:
        return q.form
    return parsed_form(str(q))


def as_int64(q: Quantity) -> int | None:
    """Upstream's ``AsInt64``: the value if the quantity is an int64Amount that converts exactly."""
    form = form_of(q)
    if form is None:
        return None
    value, scale = form
    if scale < 0:
        return None
    return _scaled(value, scale)


def add(a: Quantity, b: Quantity, negate_b: bool = False) -> KubeQuantity:
    """``a.add(b)`` (or ``a.sub(b)``), keeping the form ``Quantity.Add``/``Sub`` give the result."""
    result = a - b if negate_b else a + b
    fa, fb = form_of(a), form_of(b)
    form: Form = None
    if fa is not None and fb is not None:
        form = _int64_add(fa, (-fb[0], fb[1]) if negate_b else fb)
    return with_form(result, form, pointer=True)


def from_int(n: int) -> KubeQuantity:
    """``NewQuantity(n, DecimalExponent)``, the operand of ``add(int)``/``sub(int)``."""
    return with_form(Quantity(n, "DecimalExponent"), (n, 0))


def _scaled(value: int, scale: int) -> int | None:
    """``positiveScaleInt64``: value × 10**scale if it fits in an int64."""
    v = value * 10**scale
    return v if INT64_MIN <= v <= INT64_MAX else None


def _fits(v: int) -> int | None:
    return v if INT64_MIN <= v <= INT64_MAX else None


def _int64_add(a: tuple[int, int], b: tuple[int, int]) -> Form:
    """``int64Amount.Add``: the sum at the smaller scale, or None where it would overflow."""
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return a
    if av == 0:
        return b
    if ascale == bscale:
        s = _fits(av + bv)
        return None if s is None else (s, ascale)
    if ascale > bscale:
        shifted = _scaled(av, ascale - bscale)
        s = None if shifted is None else _fits(shifted + bv)
        return None if s is None else (s, bscale)
    shifted = _scaled(bv, bscale - ascale)
    s = None if shifted is None else _fits(av + shifted)
    return None if s is None else (s, ascale)


@lru_cache(maxsize=4096)
def parsed_form(text: str) -> Form:
    """The form ParseQuantity gives a valid quantity string: its fast path, or inf.Dec."""
    if text == "0":
        return (0, 0)
    i, n = 0, len(text)
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    while i < n and text[i] == "0":  # leading zeros do not count as digits
        i += 1
    start = i
    while i < n and text[i].isdigit():
        i += 1
    num = text[start:i] or "0"
    denom = ""
    if i < n and text[i] == ".":
        i += 1
        start = i
        while i < n and text[i].isdigit():
            i += 1
        denom = text[start:i]
    suffix = text[i:]
    if suffix in _DECIMAL_EXPONENTS:
        binary, exponent = False, _DECIMAL_EXPONENTS[suffix]
    elif suffix in _BINARY_EXPONENTS:
        binary, exponent = True, _BINARY_EXPONENTS[suffix]
    else:  # e/E with a signed exponent
        binary, exponent = False, int(suffix[1:])
    mantissa = 1
    if binary:
        if denom:
            return None
        mantissa = 1 << exponent
        scale = 0
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    if precision < 0:
        return None
    scale -= len(denom)
    if scale < _NANO:
        return None
    result = _fits(int(num + denom) * mantissa)
    if result is None:
        return None
    return (-result if negative else result, scale)
