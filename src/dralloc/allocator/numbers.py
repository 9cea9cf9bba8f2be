"""Exact numbers for quantities: ints where possible, Fractions otherwise (fast to add and compare).

The allocator does its arithmetic on these and keeps the original :class:`Quantity` objects only for
output, so canonical formatting stays the Quantity module's job.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any


def to_num(q: Any) -> int | Fraction:
    """A Quantity (or int/str fallback) as an exact number."""
    if q is None:
        return 0
    if isinstance(q, int):
        return q
    if isinstance(q, Fraction):
        return q.numerator if q.denominator == 1 else q
    f: Fraction = q.as_fraction()
    return f.numerator if f.denominator == 1 else f


def ceil_value(q: Any) -> int:
    """Go's ``Quantity.Value()``: the value rounded up to a whole number."""
    return math.ceil(to_num(q))


def binary_si(value: int) -> Any:
    """A Quantity of ``value`` in BinarySI format (what upstream's step rounding returns)."""
    from dralloc.api.quantity import Quantity

    maker = getattr(Quantity, "from_int", None)
    if maker is not None:
        try:
            return maker(value, "BinarySI")
        except TypeError:
            pass
    for kwargs in ({"format": "BinarySI"}, {"fmt": "BinarySI"}):
        try:
            return Quantity(value, **kwargs)
        except TypeError:
            continue
    return Quantity(value)
