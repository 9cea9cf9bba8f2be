"""A minimal Quantity used by these tests only while dralloc.api.quantity does not exist yet."""

from __future__ import annotations

import sys
import types
from fractions import Fraction

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


class Quantity:
    def __init__(self, value=0, format=None):
        if isinstance(value, int):
            self._f = Fraction(value)
            self._s = str(value)
            if format == "BinarySI":
                for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
                    if value and value % _SUFFIX[suffix] == 0:
                        self._s = f"{value // _SUFFIX[suffix]}{suffix}"
                        break
            return
        text = str(value).strip()
        self._s = text
        for suffix in sorted(_SUFFIX, key=len, reverse=True):
            if text.endswith(suffix):
                self._f = Fraction(text[: -len(suffix)]) * _SUFFIX[suffix]
                return
        self._f = Fraction(text)

    def as_fraction(self):
        return self._f

    def __str__(self):
        return self._s

    def __repr__(self):
        return f"Quantity({self._s!r})"

    def __eq__(self, other):
        return isinstance(other, Quantity) and self._f == other._f

    def __hash__(self):
        return hash(self._f)


_module = types.ModuleType("dralloc.api.quantity")
_module.Quantity = Quantity
sys.modules["dralloc.api.quantity"] = _module
