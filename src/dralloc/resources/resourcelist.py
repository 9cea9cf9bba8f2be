"""Multi-dimensional resource lists and the nine comparisons of Volcano's "Resource Comparison" design.

A :class:`ResourceList` maps resource names (``cpu``, ``memory``, ``ephemeral-storage``, ``hugepages-2Mi``,
``pods``, extended names like ``nvidia.com/gpu``) to exact quantities. Internally each value is an integer
count of nano-units (the finest precision of a Kubernetes Quantity), so arithmetic and comparison are exact
and cheap.

The comparisons take ``missing="zero"`` or ``missing="infinity"``: they compare over the union of both
sides' dimensions, and a dimension absent on one side takes that value. The plain forms need the relation
in every dimension of the union; the ``_partly`` forms in at least one. Over an empty union the plain forms
are (vacuously) true and the partly forms false, which keeps the design's identities exact:
``greater == not less_equal_partly``, ``greater_equal == not less_partly``,
``greater_partly == not less_equal``, ``greater_equal_partly == not less``.

Deviations of Volcano's implementation (volcano-sh/volcano ``pkg/scheduler/api/resource_info.go``) from the
design, which dralloc does **not** copy:

* **Epsilon.** Volcano compares float64 values and treats ``|l - r| < 0.1`` (``minResource``) as equal in
  ``LessEqual``, ``LessEqualPartly`` and ``Equal`` (but not in ``Less``/``LessPartly``); dralloc compares
  exactly, so ``1m`` cpu is less than ``2m`` and ``memory: 1`` is not equal to ``memory: 0``.
* **Equal ignores the default and is asymmetric.** Volcano's ``Equal`` ignores its ``defaultValue`` and only
  checks scalar names present on the left; dralloc's ``equal`` uses the union and honours ``missing``.
* **Missing Greater functions.** Volcano implements only ``GreaterPartly`` (as ``!LessEqualWithResourcesName``,
  which lacks the infinity pre-check for right-only names); dralloc provides all four as the design defines.
* **Empty lists.** Volcano's ``Less({}, {})`` is false because it always compares cpu and memory (0 < 0);
  dralloc treats absent cpu/memory like any other absent dimension.
* **Ignored scalars.** Volcano skips ``pods`` in some helpers (``IsEmpty``, ``Intersection``); dralloc never
  skips a dimension.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from dralloc.api.quantity import BINARY_SI, DECIMAL_SI, Quantity
from dralloc.errors import InputError

NANO = 10**9
INF = float("inf")
MISSING_VALUES = ("zero", "infinity")

# Resources whose quantities print in binary units by convention (as kubelet reports them).
_BINARY = ("memory", "ephemeral-storage")


def _format_for(name: str) -> str:
    return BINARY_SI if name in _BINARY or name.startswith("hugepages-") else DECIMAL_SI


def _quantity(value: Any, name: str = "") -> Quantity:
    if isinstance(value, Quantity):
        q = value
    elif isinstance(value, bool):
        raise InputError(f"{name}: not a quantity: {value!r}")
    elif isinstance(value, (int, str)):
        try:
            q = Quantity(value)
        except ValueError as exc:
            raise InputError(f"{name}: {exc}") from None
    else:
        raise InputError(f"{name}: not a quantity: {value!r}")
    return q


def _default(missing: str) -> float:
    if missing == "zero":
        return 0
    if missing == "infinity":
        return INF
    raise InputError(f'missing must be "zero" or "infinity", not {missing!r}')


class ResourceList(Mapping[str, Quantity]):
    """An immutable resource name → Quantity mapping with exact arithmetic and comparisons."""

    __slots__ = ("_v", "_f")

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        v: dict[str, int] = {}
        formats: dict[str, str] = {}
        for name, value in (values or {}).items():
            if not isinstance(name, str) or not name:
                raise InputError(f"resource name must be a non-empty string, not {name!r}")
            q = _quantity(value, name)
            v[name] = q.scaled_value(-9)
            formats[name] = q.format
        self._v = v
        self._f = formats  # printing format per dimension (the first operand's, as Quantity.Add keeps it)

    @classmethod
    def _of(cls, nanos: dict[str, int], formats: dict[str, str]) -> ResourceList:
        rl = cls.__new__(cls)
        rl._v = nanos
        rl._f = formats
        return rl

    def _merged_formats(self, other: ResourceList) -> dict[str, str]:
        return {**other._f, **self._f} if other._f else self._f

    @classmethod
    def parse(cls, text: str) -> ResourceList:
        """``"cpu=1,memory=1G,nvidia.com/gpu=2"`` (blanks around items allowed; ``{}`` or ``""`` is empty)."""
        text = text.strip()
        if text in ("", "{}"):
            return cls()
        values: dict[str, str] = {}
        for item in text.split(","):
            name, sep, value = item.partition("=")
            name, value = name.strip(), value.strip()
            if not sep or not name or not value:
                raise InputError(f'invalid resource list item {item.strip()!r}: expected NAME=QUANTITY '
                                 f'(e.g. "cpu=1,memory=1Gi")')
            if name in values:
                raise InputError(f"resource {name!r} given twice")
            values[name] = value
        return cls(values)

    # --- mapping -----------------------------------------------------------------------------------

    def __getitem__(self, name: str) -> Quantity:
        return Quantity.from_scaled(self._v[name], -9, self._f.get(name) or _format_for(name))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._v))

    def __len__(self) -> int:
        return len(self._v)

    def __contains__(self, name: object) -> bool:
        return name in self._v

    def nanos(self, name: str) -> int:
        """The exact value of a dimension in nano-units (0 if absent)."""
        return self._v.get(name, 0)

    def as_dict(self) -> dict[str, str]:
        return {name: str(self[name]) for name in self}

    def __repr__(self) -> str:
        return f"ResourceList({self.as_dict()!r})"

    def __str__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.as_dict().items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResourceList):
            return self._v == other._v
        if isinstance(other, Mapping):
            try:
                return self._v == ResourceList(other)._v
            except InputError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._v.items()))

    # --- arithmetic --------------------------------------------------------------------------------

    def __add__(self, other: Mapping[str, Any]) -> ResourceList:
        o = _as_list(other)._v
        out = dict(self._v)
        for k, n in o.items():
            out[k] = out.get(k, 0) + n
        return ResourceList._of(out, self._merged_formats(_as_list(other)))

    def __sub__(self, other: Mapping[str, Any]) -> ResourceList:
        o = _as_list(other)._v
        out = dict(self._v)
        for k, n in o.items():
            out[k] = out.get(k, 0) - n
        return ResourceList._of(out, self._merged_formats(_as_list(other)))

    def scale(self, factor: int | Fraction | str | Quantity) -> ResourceList:
        """Every dimension multiplied by ``factor`` (results rounded away from zero to nano-units)."""
        f = Quantity(factor).as_fraction() if isinstance(factor, (str, Quantity)) else Fraction(factor)
        out = {}
        for k, n in self._v.items():
            x = n * f
            whole, rest = divmod(abs(x.numerator), x.denominator)
            out[k] = (whole + (1 if rest else 0)) * (1 if x >= 0 else -1)
        return ResourceList._of(out, self._f)

    def max(self, other: Mapping[str, Any]) -> ResourceList:
        """Per-dimension maximum over the union (an absent dimension counts as zero)."""
        ol = _as_list(other)
        o = ol._v
        return ResourceList._of({k: max(self._v.get(k, 0), o.get(k, 0)) for k in self._v.keys() | o.keys()},
                                self._merged_formats(ol))

    def min(self, other: Mapping[str, Any]) -> ResourceList:
        """Per-dimension minimum over the union (an absent dimension counts as zero)."""
        ol = _as_list(other)
        o = ol._v
        return ResourceList._of({k: min(self._v.get(k, 0), o.get(k, 0)) for k in self._v.keys() | o.keys()},
                                self._merged_formats(ol))

    def is_zero(self) -> bool:
        return all(n == 0 for n in self._v.values())

    # --- the nine comparisons ----------------------------------------------------------------------

    def _pairs(self, other: Mapping[str, Any], missing: str) -> Iterator[tuple[float, float]]:
        d = _default(missing)
        o = _as_list(other)._v
        s = self._v
        for k in s.keys() | o.keys():
            yield s.get(k, d), o.get(k, d)

    def less(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Every dimension of self is less than other's."""
        return all(a < b for a, b in self._pairs(other, missing))

    def less_equal(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Every dimension of self is less than or equal to other's."""
        return all(a <= b for a, b in self._pairs(other, missing))

    def less_partly(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Some dimension of self is less than other's."""
        return any(a < b for a, b in self._pairs(other, missing))

    def less_equal_partly(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Some dimension of self is less than or equal to other's."""
        return any(a <= b for a, b in self._pairs(other, missing))

    def equal(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Every dimension of self equals other's (over the union, so the relation is symmetric)."""
        return all(a == b for a, b in self._pairs(other, missing))

    def greater(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Every dimension of self is greater than other's (= not less_equal_partly)."""
        return all(a > b for a, b in self._pairs(other, missing))

    def greater_equal(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Every dimension of self is greater than or equal to other's (= not less_partly)."""
        return all(a >= b for a, b in self._pairs(other, missing))

    def greater_partly(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Some dimension of self is greater than other's (= not less_equal)."""
        return any(a > b for a, b in self._pairs(other, missing))

    def greater_equal_partly(self, other: Mapping[str, Any], missing: str = "zero") -> bool:
        """Some dimension of self is greater than or equal to other's (= not less)."""
        return any(a >= b for a, b in self._pairs(other, missing))


COMPARISONS = ("less", "less_equal", "less_partly", "less_equal_partly", "equal",
               "greater", "greater_equal", "greater_partly", "greater_equal_partly")


def compare_all(left: Mapping[str, Any], right: Mapping[str, Any], missing: str = "zero") -> dict[str, bool]:
    """All nine comparisons of ``left`` against ``right``, in the design note's order."""
    lhs = _as_list(left)
    _default(missing)
    return {name: getattr(lhs, name)(right, missing) for name in COMPARISONS}


def _as_list(value: Mapping[str, Any]) -> ResourceList:
    return value if isinstance(value, ResourceList) else ResourceList(value)
