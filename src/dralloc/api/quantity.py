"""Exact ``resource.Quantity`` semantics of k8s.io/apimachinery.

A quantity is ``mantissa × 10**exponent`` (Python ints, never floats) plus the *format* it was written in
(``DecimalSI`` "1k", ``BinarySI`` "1Ki", ``DecimalExponent`` "1e3"). The rules reproduced from upstream:

* Parsing is upstream's scanner: optional sign, digits, optional ``.digits``, then a suffix (n u m "" k M G T
  P E, Ki Mi Gi Ti Pi Ei, or e/E followed by a signed int32). ``"1 Gi"``, ``"1.2.3"`` and ``"1KiB"`` break the
  scanner (``quantities must match the regular expression ...``); ``"1Gb"``-style unknown suffixes give
  ``unable to parse quantity's suffix``. A number with no digits at all (``"Gi"``, ``"-"``) scans as zero,
  exactly as upstream does.
* Values finer than a nano unit are rounded away from zero to 1n ("0.9n" → "1n"); a BinarySI value is capped
  at 2^63-1 ("8Ei" → 9223372036854775807); a BinarySI value strictly between 0 and 1 becomes DecimalSI.
* ``str()`` is upstream's canonical form: no fractional digits, the largest exact suffix of the format family
  ("1.5Gi" → "1536Mi", "0.5" → "500m", "1000m" → "1"); BinarySI values below 1024 in magnitude or not whole
  are written as DecimalSI; DecimalSI beyond "E" falls back to e-notation. Like upstream, a parsed string that
  is already canonical is kept verbatim (so "1E3" stays "1E3" and "+1" stays "+1").
* ``value()``/``milli_value()`` round away from zero to whole units / milli-units (upstream's ScaledValue).
* Arithmetic keeps the left operand's format unless it is zero, then takes the right one's (upstream Add/Sub).

Exponents are kept symbolic, so a hostile ``"1e999999999"`` is cheap to parse, compare and print; only
operations that must expand such a value (exact sum with a tiny number, ``value()``) refuse with
OverflowError instead of computing a gigantic integer.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_INT64_MAX = (1 << 63) - 1
_NANO = -9
# Past this many decimal digits of difference between exponents we refuse to expand a value exactly.
_MAX_EXPANSION = 100_000

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXP = {v // 10: k for k, v in _BINARY_SUFFIXES.items()}
_BINARY_BY_EXP[0] = ""

# Upstream's scanner, as a regular expression: sign, leading zeros, numerator, optional ".denominator",
# then a suffix of suffix letters, an optional sign and digits that must reach the end of the string.
_SCAN = re.compile(r"([+-]?)(0*)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_PLAIN_INT = re.compile(r"[1-9][0-9]{0,17}")


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """(base, exponent, format) of a suffix, or None if it is not one."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if not body.isdigit() or not body.isascii():
            return None
        value = int(digits)
        if not -(1 << 31) <= value < (1 << 31):  # strconv.ParseInt(.., 10, 32)
            return None
        return 10, value, DECIMAL_EXPONENT
    return None


def _strip_tens(m: int, e: int) -> tuple[int, int]:
    """Remove trailing decimal zeros of the mantissa into the exponent."""
    if m == 0:
        return 0, 0
    while m % 10 == 0:
        m //= 10
        e += 1
    return m, e


def _ceil_div_away(n: int, d: int) -> int:
    """n / d rounded away from zero (d > 0)."""
    q, r = divmod(abs(n), d)
    if r:
        q += 1
    return q if n >= 0 else -q


class Quantity:
    """An exact Kubernetes quantity. Immutable; ``Quantity("1.5Gi") == Quantity("1536Mi")``."""

    __slots__ = ("_m", "_e", "format", "_s")

    _cache: dict[str, Quantity] = {}

    _m: int
    _e: int
    format: str
    _s: str | None

    def __new__(cls, value: Any = 0, format: str | None = None) -> Quantity:
        if isinstance(value, str):
            if format is None:
                cached = cls._cache.get(value)
                if cached is not None:
                    return cached
            q = _parse(value)
            if format is not None and format != q.format:
                q = q._with(format=format)
            elif len(cls._cache) < 65536:
                cls._cache[value] = q
            return q
        if isinstance(value, Quantity):
            return value if format is None or format == value.format else value._with(format=format)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"cannot make a Quantity from {type(value).__name__}")
        return _make(value, 0, format or DECIMAL_SI)

    # --- constructors -------------------------------------------------------------------------------

    @classmethod
    def from_milli(cls, milli: int, format: str = DECIMAL_SI) -> Quantity:
        return _make(milli, -3, format)

    @classmethod
    def from_scaled(cls, mantissa: int, exponent: int, format: str = DECIMAL_SI) -> Quantity:
        """``mantissa × 10**exponent``, rounded away from zero to nano units as parsing would."""
        return _make(*_round_nano(mantissa, exponent), format)

    @classmethod
    def from_fraction(cls, value: Fraction | int, format: str = DECIMAL_SI) -> Quantity:
        """An exact rational, rounded away from zero to nano units."""
        value = Fraction(value)
        if value.denominator == 1:
            return _make(value.numerator, 0, format)
        nanos = _ceil_div_away(value.numerator * 10**9, value.denominator)
        return _make(nanos, _NANO, format)

    def _with(self, *, format: str) -> Quantity:
        return _make(self._m, self._e, format)

    # --- accessors ----------------------------------------------------------------------------------

    def sign(self) -> int:
        return (self._m > 0) - (self._m < 0)

    def is_zero(self) -> bool:
        return self._m == 0

    def as_fraction(self) -> Fraction:
        if self._e >= 0:
            _guard(self._e)
            return Fraction(self._m * 10**self._e)
        return Fraction(self._m, 10 ** (-self._e))

    def scaled_value(self, scale: int) -> int:
        """The value in units of 10**scale, rounded away from zero (upstream ScaledValue)."""
        shift = self._e - scale
        if shift >= 0:
            _guard(shift)
            return int(self._m * 10**shift)
        return _ceil_div_away(self._m, 10 ** (-shift))

    def value(self) -> int:
        """Whole units, rounded away from zero ("1500m" → 2)."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """Milli-units, rounded away from zero ("1.0001m" → 2)."""
        return self.scaled_value(-3)

    def as_int64(self) -> int | None:
        """The value as an int64 if it is whole and fits, else None (upstream AsInt64)."""
        m, e = _strip_tens(self._m, self._e)
        if e < 0 or e > 18:
            return None if m else 0
        v = m * 10**e
        return v if -(1 << 63) <= v <= _INT64_MAX else None

    def as_approximate_float(self) -> float:
        try:
            return float(self._m) * 10.0**self._e if self._e else float(self._m)
        except OverflowError:
            return math.copysign(math.inf, self._m)

    # --- comparison ---------------------------------------------------------------------------------

    def cmp(self, other: Quantity | int | str) -> int:
        o = _coerce(other)
        a, b = self._m, o._m
        if (a > 0) != (b > 0) or a == 0 or b == 0:
            return (a > b) - (a < b)
        ea, eb = self._e, o._e
        # Same sign, both non-zero: compare orders of magnitude before aligning exponents.
        oa = len(str(abs(a))) + ea
        ob = len(str(abs(b))) + eb
        if oa != ob:
            bigger = oa > ob
            res = 1 if bigger else -1
            return res if a > 0 else -res
        if ea > eb:
            a *= 10 ** (ea - eb)
        elif eb > ea:
            b *= 10 ** (eb - ea)
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (Quantity, int)) or isinstance(other, bool):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: Quantity | int) -> bool:
        return self.cmp(other) < 0

    def __le__(self, other: Quantity | int) -> bool:
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity | int) -> bool:
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity | int) -> bool:
        return self.cmp(other) >= 0

    def __hash__(self) -> int:
        return hash(_strip_tens(self._m, self._e))

    # --- arithmetic ---------------------------------------------------------------------------------

    def __add__(self, other: Quantity | int) -> Quantity:
        if not isinstance(other, (Quantity, int)) or isinstance(other, bool):
            return NotImplemented
        o = _coerce(other)
        m, e = _add(self._m, self._e, o._m, o._e)
        return _make(m, e, o.format if self._m == 0 else self.format)

    def __radd__(self, other: int) -> Quantity:
        return _coerce(other).__add__(self)

    def __sub__(self, other: Quantity | int) -> Quantity:
        if not isinstance(other, (Quantity, int)) or isinstance(other, bool):
            return NotImplemented
        o = _coerce(other)
        m, e = _add(self._m, self._e, -o._m, o._e)
        return _make(m, e, o.format if self._m == 0 else self.format)

    def __rsub__(self, other: int) -> Quantity:
        return _coerce(other).__sub__(self)

    def __neg__(self) -> Quantity:
        return _make(-self._m, self._e, self.format)

    def __abs__(self) -> Quantity:
        return self if self._m >= 0 else -self

    def __mul__(self, factor: int) -> Quantity:
        if isinstance(factor, bool) or not isinstance(factor, int):
            return NotImplemented
        return _make(self._m * factor, self._e, self.format)

    __rmul__ = __mul__

    def __bool__(self) -> bool:
        return self._m != 0

    # --- text ---------------------------------------------------------------------------------------

    def __str__(self) -> str:
        s = self._s
        if s is None:
            s = _canonical(self._m, self._e, self.format)
            object.__setattr__(self, "_s", s)
        return s

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Quantity, (str(self),))

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: Any) -> Quantity:
        return self


def _make(m: int, e: int, format: str, s: str | None = None) -> Quantity:
    q = object.__new__(Quantity)
    object.__setattr__(q, "_m", m)
    object.__setattr__(q, "_e", e if m else 0)
    object.__setattr__(q, "format", format)
    object.__setattr__(q, "_s", s)
    return q


def _coerce(value: Quantity | int | str) -> Quantity:
    if isinstance(value, Quantity):
        return value
    return Quantity(value)


def _guard(digits: int) -> None:
    if digits > _MAX_EXPANSION:
        raise OverflowError("quantity is too large to be expanded exactly")


def _add(ma: int, ea: int, mb: int, eb: int) -> tuple[int, int]:
    if ma == 0:
        return mb, eb
    if mb == 0:
        return ma, ea
    if ea > eb:
        _guard(ea - eb)
        return ma * 10 ** (ea - eb) + mb, eb
    if eb > ea:
        _guard(eb - ea)
        return ma + mb * 10 ** (eb - ea), ea
    return ma + mb, ea


def _round_nano(m: int, e: int) -> tuple[int, int]:
    if e >= _NANO:
        return m, e
    return _ceil_div_away(m, 10 ** (_NANO - e)), _NANO


def _parse(text: str) -> Quantity:
    if _PLAIN_INT.fullmatch(text):  # fast path: "1", "108", "4096"
        keep = text if not text.endswith("000") else None
        return _make(int(text), 0, DECIMAL_SI, keep)
    if not text:
        raise ValueError(ERR_FORMAT_WRONG)
    if text == "0":
        return _make(0, 0, DECIMAL_SI, "0")
    match = _SCAN.fullmatch(text)
    if match is None:
        raise ValueError(ERR_FORMAT_WRONG)
    sign, _zeros, num, denom, suffix = match.groups()
    denom = denom or ""
    num = num or "0"
    if not (num.isascii() and denom.isascii()):
        raise ValueError(ERR_FORMAT_WRONG)
    interpreted = _interpret(suffix)
    if interpreted is None:
        raise ValueError(ERR_SUFFIX)
    base, exponent, format = interpreted
    negative = sign == "-"
    mantissa = int(num + denom) if (num + denom) else 0
    if negative:
        mantissa = -mantissa
    if base == 10:
        m, e = mantissa, exponent - len(denom)
    else:
        m, e = mantissa << exponent if not denom else mantissa * (1 << exponent), -len(denom)
    m, e = _round_nano(m, e)
    if format == BINARY_SI:
        if _cmp_abs_int(m, e, _INT64_MAX) > 0:
            m, e = (-_INT64_MAX if m < 0 else _INT64_MAX), 0
        if m and _cmp_abs_int(m, e, 1) < 0:
            format = DECIMAL_SI
    return _make(m, e, format, _kept_string(text, num, denom, exponent, format, base))


def _cmp_abs_int(m: int, e: int, n: int) -> int:
    """Compare |m × 10**e| with a non-negative int n."""
    a = abs(m)
    if e >= 0:
        _guard(e)
        v = a * 10**e
        return int((v > n) - (v < n))
    scaled = n * 10 ** (-e)
    return int((a > scaled) - (a < scaled))


def _kept_string(text: str, num: str, denom: str, exponent: int, format: str, base: int) -> str | None:
    """The input string if upstream's fast path would keep it as the quantity's string form."""
    if base == 10:
        if 18 - (len(num) + len(denom)) < 0 or exponent - len(denom) < _NANO:
            return None
        shifted = num + denom
        if int(shifted) > _INT64_MAX:
            return None
        scale = exponent - len(denom)
        if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
            return text
        return None
    if denom or exponent < 0:
        return None
    precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    if precision < 0:
        return None
    value = int(num)
    if value > _INT64_MAX or value * (1 << exponent) > _INT64_MAX:
        return None
    if exponent % 10 == 0 and value & 0x07:
        return text
    return None


def _canonical(m: int, e: int, format: str) -> str:
    if m == 0:
        return "0"
    if format == BINARY_SI:
        if _cmp_abs_int(m, e, 1024) < 0:
            format = DECIMAL_SI
        else:
            whole = _whole_rounded(m, e)
            if whole is None:
                format = DECIMAL_SI
            else:
                n, k = whole, 0
                while n % 1024 == 0 and k < 6:
                    n //= 1024
                    k += 1
                return f"{n}{_BINARY_BY_EXP[k]}"
    if format not in (DECIMAL_SI, DECIMAL_EXPONENT):
        format = DECIMAL_EXPONENT
    m, e = _strip_tens(m, e)
    r = e % 3
    if r:
        m *= 10**r
        e -= r
    if format == DECIMAL_SI:
        suffix = _DECIMAL_BY_EXP.get(e)
        if suffix is not None:
            return f"{m}{suffix}"
    return f"{m}e{e}" if e else str(m)


def _whole_rounded(m: int, e: int) -> int | None:
    """The value as a whole number if it is one (BinarySI only prints whole numbers)."""
    if e >= 0:
        _guard(e)
        return int(m * 10**e)
    q, r = divmod(abs(m), 10 ** (-e))
    if r:
        return None
    return int(q if m > 0 else -q)


def quantity_dec_hook(typ: type, obj: Any) -> Any:
    """msgspec dec_hook: a Quantity from a JSON/YAML string or number (whitespace trimmed, as upstream)."""
    if typ is Quantity:
        if type(obj) is str:  # most manifests repeat a few quantities: answer those from the parse cache
            cached = Quantity._cache.get(obj)
            if cached is not None:
                return cached
        if isinstance(obj, bool) or not isinstance(obj, (str, int, float)):
            raise TypeError(f"Expected a quantity (string or number), got `{type(obj).__name__}`")
        if isinstance(obj, float):
            obj = repr(obj)
        elif isinstance(obj, str):
            obj = obj.strip()
        return Quantity(obj)
    raise NotImplementedError(f"cannot decode {typ!r}")


def quantity_enc_hook(obj: Any) -> Any:
    """msgspec enc_hook: the canonical string."""
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")
